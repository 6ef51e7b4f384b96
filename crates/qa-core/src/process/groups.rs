//! Unix without `/proc` (macOS): registered process groups, `killpg`.
//!
//! There is no subreaper and no portable process table here, so only the
//! registered groups are ended; job-control groups and `setsid` descendants
//! can escape. Group ids are not verified against reuse.

use super::{watchdog, CleanupReport, CleanupStatus, EndedProcess, Ending, LeftProcess};
use crate::deadline::Deadline;
use std::os::raw::c_int;
use std::sync::Mutex;
use std::time::Duration;

/// The process-group owner.
#[derive(Debug)]
pub(super) struct Owner {
    roots: Mutex<Vec<(u32, String)>>,
    token: String,
}

#[allow(unsafe_code)]
// SAFETY: kill(2) on a registered process-group id only.
fn group_alive(pgid: u32) -> bool {
    unsafe { libc::kill(-(pgid as c_int), 0) == 0 }
}

#[allow(unsafe_code)]
// SAFETY: kill(2) on a registered process-group id only.
fn signal_group(pgid: u32, sig: c_int) {
    if pgid > 1 {
        unsafe {
            libc::kill(-(pgid as c_int), sig);
        }
    }
}

impl Owner {
    pub(super) fn new(seq: u64) -> Owner {
        watchdog::ensure();
        Owner {
            roots: Mutex::new(Vec::new()),
            token: format!("{}-{seq}", std::process::id()),
        }
    }

    pub(super) fn marker(&self, seq: Option<u64>) -> String {
        match seq {
            Some(n) => format!("{}.{n}", self.token),
            None => self.token.clone(),
        }
    }

    pub(super) fn register(&self, pid: u32, label: &str, _seq: Option<u64>) {
        self.roots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((pid, label.to_string()));
        #[allow(unsafe_code)]
        // SAFETY: getpgid on an integer pid.
        let leads = unsafe { libc::getpgid(pid as c_int) } == pid as c_int;
        if leads {
            watchdog::add(pid, 0);
        }
    }

    pub(super) async fn end_all(&self, grace: Duration, deadline: Deadline) -> CleanupReport {
        let roots = std::mem::take(&mut *self.roots.lock().unwrap_or_else(|e| e.into_inner()));
        let mut how: Vec<Option<Ending>> = roots
            .iter()
            .map(|(pid, _)| (!group_alive(*pid)).then_some(Ending::Exited))
            .collect();
        for ((pid, _), h) in roots.iter().zip(&how) {
            if h.is_none() {
                signal_group(*pid, libc::SIGTERM);
            }
        }
        let term_until = Deadline::after(grace).min(deadline);
        let pending = |how: &mut Vec<Option<Ending>>, label: Ending| {
            let mut any = false;
            for ((pid, _), h) in roots.iter().zip(how.iter_mut()) {
                if h.is_none() {
                    if group_alive(*pid) {
                        any = true;
                    } else {
                        *h = Some(label);
                    }
                }
            }
            any
        };
        while pending(&mut how, Ending::Sigterm) && !term_until.expired() {
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        if pending(&mut how, Ending::Sigterm) {
            for ((pid, _), h) in roots.iter().zip(&how) {
                if h.is_none() {
                    signal_group(*pid, libc::SIGKILL);
                }
            }
            let kill_until = Deadline::after(Duration::from_millis(500)).min(deadline);
            while pending(&mut how, Ending::Sigkill) && !kill_until.expired() {
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
        }
        let mut report = CleanupReport::default();
        for ((pid, label), h) in roots.into_iter().zip(how) {
            match h {
                Some(h) => {
                    watchdog::del(pid);
                    report.ended.push(EndedProcess { pid, label, how: h })
                }
                None => report.left.push(LeftProcess {
                    pid,
                    label,
                    reason: "process group still running after SIGKILL".into(),
                }),
            }
        }
        if !report.left.is_empty() {
            report.status = CleanupStatus::Incomplete;
        }
        report
    }

    pub(super) fn hang_up(&self, _pid: u32) -> bool {
        false
    }

    pub(super) fn kill_all_now(&self) {
        for (pid, _) in self.roots.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            signal_group(*pid, libc::SIGKILL);
        }
    }
}
