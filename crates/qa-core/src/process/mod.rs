//! Process ownership shared by every driver.
//!
//! Every program a run starts is launched into a new session (and so a new
//! process group) and registered with the run's [`ProcessOwner`]. Cleanup
//! ends exactly what was registered — the whole session, job-control groups
//! inside it, and descendants that escaped — with SIGTERM, a grace period,
//! then SIGKILL, bounded by the cleanup deadline, and reports it in a
//! [`CleanupReport`]. Nothing is ever matched by name.
//!
//! (Initial version: group-based termination; the session scan, subreaper and
//! watchdog are added on top of this API.)

use crate::deadline::Deadline;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Mutex;
use std::time::Duration;

/// Default grace between SIGTERM and SIGKILL.
pub const DEFAULT_GRACE: Duration = Duration::from_millis(2000);

/// Whether cleanup ended everything.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CleanupStatus {
    /// Everything the run started is gone.
    #[default]
    Clean,
    /// Something the run started is still running.
    Incomplete,
}

/// One process cleanup ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EndedProcess {
    /// Process id.
    pub pid: u32,
    /// What the run called it (`chromium`, `target`, `xvfb`, …).
    pub label: String,
    /// How it ended: `exited` (already gone), `SIGTERM` or `SIGKILL`.
    pub how: String,
}

/// One process cleanup could not end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LeftProcess {
    /// Process id.
    pub pid: u32,
    /// What the run called it.
    pub label: String,
    /// Why it is left.
    pub reason: String,
}

/// The `cleanup` section of a result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CleanupReport {
    /// `clean` or `incomplete`.
    pub status: CleanupStatus,
    /// What was ended, and how.
    pub ended: Vec<EndedProcess>,
    /// What is left.
    pub left: Vec<LeftProcess>,
}

impl CleanupReport {
    /// Merges another report into this one.
    pub fn merge(&mut self, other: CleanupReport) {
        self.ended.extend(other.ended);
        self.left.extend(other.left);
        if !self.left.is_empty() {
            self.status = CleanupStatus::Incomplete;
        }
    }
}

#[derive(Debug, Clone)]
struct Registered {
    pid: u32,
    label: String,
}

/// Owns the processes one run started.
#[derive(Debug, Default)]
pub struct ProcessOwner {
    registered: Mutex<Vec<Registered>>,
}

impl ProcessOwner {
    /// A new owner for one run.
    pub fn new() -> ProcessOwner {
        ProcessOwner::default()
    }

    /// Makes a command start in a new session (Unix: `setsid` before exec),
    /// so its pid is its session and group id.
    pub fn prepare(cmd: &mut tokio::process::Command) {
        #[cfg(unix)]
        {
            #[allow(unsafe_code)]
            // SAFETY: setsid is async-signal-safe; called between fork and exec.
            unsafe {
                cmd.pre_exec(|| {
                    if libc::setsid() == -1 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        let _ = cmd;
    }

    /// Like [`ProcessOwner::prepare`] for a `std::process::Command`.
    pub fn prepare_std(cmd: &mut std::process::Command) {
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            #[allow(unsafe_code)]
            // SAFETY: setsid is async-signal-safe; called between fork and exec.
            unsafe {
                cmd.pre_exec(|| {
                    if libc::setsid() == -1 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        let _ = cmd;
    }

    /// Prepares, spawns and registers a command.
    pub fn spawn(
        &self,
        mut cmd: tokio::process::Command,
        label: &str,
    ) -> std::io::Result<tokio::process::Child> {
        Self::prepare(&mut cmd);
        let child = cmd.spawn()?;
        if let Some(pid) = child.id() {
            self.register(pid, label);
        }
        Ok(child)
    }

    /// Registers a process that leads its own session (it called `setsid`,
    /// as [`ProcessOwner::prepare`] and PTY spawns do).
    pub fn register(&self, pid: u32, label: &str) {
        self.registered
            .lock()
            .expect("registry lock")
            .push(Registered {
                pid,
                label: label.to_string(),
            });
    }

    /// Ends everything registered: SIGTERM, `grace`, SIGKILL, bounded by `deadline`.
    pub async fn end_all(&self, grace: Duration, deadline: Deadline) -> CleanupReport {
        let regs: Vec<Registered> = std::mem::take(&mut *self.registered.lock().expect("registry lock"));
        let mut report = CleanupReport::default();
        for r in regs {
            let how = end_group(r.pid, grace, deadline).await;
            match how {
                Ok(how) => report.ended.push(EndedProcess {
                    pid: r.pid,
                    label: r.label,
                    how,
                }),
                Err(reason) => report.left.push(LeftProcess {
                    pid: r.pid,
                    label: r.label,
                    reason,
                }),
            }
        }
        if !report.left.is_empty() {
            report.status = CleanupStatus::Incomplete;
        }
        report
    }

    /// Sends SIGKILL to everything registered at once (second Ctrl-C).
    pub fn kill_all_now(&self) {
        #[cfg(unix)]
        for r in self.registered.lock().expect("registry lock").iter() {
            #[allow(unsafe_code)]
            // SAFETY: plain kill(2) on a group this run registered.
            unsafe {
                libc::kill(-(r.pid as i32), libc::SIGKILL);
            }
        }
    }
}

#[cfg(unix)]
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => {
            let state = s.rsplit(')').next().and_then(|r| r.split_whitespace().next());
            !matches!(state, Some("Z") | Some("X"))
        }
        Err(_) => false,
    }
}

#[cfg(unix)]
async fn end_group(pid: u32, grace: Duration, deadline: Deadline) -> Result<String, String> {
    if !alive(pid) {
        return Ok("exited".into());
    }
    #[allow(unsafe_code)]
    // SAFETY: plain kill(2) on a group this run registered.
    unsafe {
        libc::kill(-(pid as i32), libc::SIGTERM);
    }
    let term_deadline = Deadline::after(grace).min(deadline);
    while !term_deadline.expired() {
        if !alive(pid) {
            return Ok("SIGTERM".into());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    #[allow(unsafe_code)]
    // SAFETY: plain kill(2) on a group this run registered.
    unsafe {
        libc::kill(-(pid as i32), libc::SIGKILL);
    }
    for _ in 0..50 {
        if !alive(pid) {
            return Ok("SIGKILL".into());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Err("still running after SIGKILL".into())
}

#[cfg(not(unix))]
async fn end_group(_pid: u32, _grace: Duration, _deadline: Deadline) -> Result<String, String> {
    Err("process cleanup is not implemented on this platform".into())
}
