//! Process ownership shared by every driver.
//!
//! A run must end exactly the processes it started — all of them, and
//! nothing else. Nothing is ever matched by name.
//!
//! # Launch
//!
//! Every program is launched into a new session ([`ProcessOwner::prepare`]
//! calls `setsid` between fork and exec; PTY spawns do the same), so the
//! registered pid is also its session id and process-group id. Commands
//! spawned through [`ProcessOwner::spawn`] also carry the environment
//! variable [`OWNER_ENV`] with a value unique to the owner; programs you
//! spawn yourself can carry it too ([`ProcessOwner::marker`]). The marker is
//! only used to claim orphans the runner adopted (below), never to find
//! processes anywhere else.
//!
//! # What an owner owns (Linux)
//!
//! Every process is named by `(pid, start time)` — field 22 of
//! `/proc/<pid>/stat` — so a reused pid number is never mistaken for an
//! owned process. An owner owns, at the moment it looks:
//!
//! 1. its registered roots;
//! 2. every process in a registered session — this covers job-control
//!    groups inside the session (`sleep 1000 &` typed into an interactive
//!    shell gets its own process group, but keeps the session);
//! 3. every descendant, by current parent pid, of an owned process, and
//!    every session led by an owned process (a descendant that called
//!    `setsid`);
//! 4. descendants it saw earlier: while anything is registered, a sampler
//!    thread walks `/proc` every 150 ms and remembers every owned process;
//! 5. orphans the runner adopted that carry the owner's marker, and — where
//!    the host opts in with [`claim_unmarked_orphans`] — those that carry
//!    none.
//!
//! On the first [`ProcessOwner::new`] the process becomes a *child
//! subreaper* (`prctl(PR_SET_CHILD_SUBREAPER)`): a descendant that
//! double-forks and calls `setsid` re-parents to the runner instead of
//! init, so rules 4 and 5 can still find it. This is process-wide and
//! permanent: orphans of *any* of the host's children re-parent to the host
//! too. Cleanup collects the zombies of adopted orphans it owns
//! (`waitpid(pid, WNOHANG)` on those pids only; children spawned through
//! tokio are left for tokio to reap).
//!
//! Never owned: the runner itself, pid 1, the watchdog, and the runner's own
//! session as a whole (a root registered without `setsid` is ended with its
//! descendants only).
//!
//! # Cleanup
//!
//! [`ProcessOwner::end_all`] sends SIGTERM to every owned process, re-reads
//! `/proc` every 25 ms for up to `grace` (never past the deadline), sending
//! SIGTERM to processes that appear meanwhile, then sends SIGKILL to
//! survivors and waits for them for the time left before the deadline
//! (at least 0.5 s, at most 3 s). Signals go through `pidfd_send_signal`
//! after checking the start time, so they cannot hit a reused pid. The
//! report lists every root (`exited` if it had already ended) and every
//! other owned process that was still there, with how it ended (`exited`,
//! `SIGTERM`, `SIGKILL`) and the root's label (`<label> descendant` for
//! the others); anything still running is in `left` with the reason, and
//! the status is then `incomplete`. [`ProcessOwner::kill_all_now`] sends
//! SIGKILL to everything owned at once (a second Ctrl-C).
//!
//! # Watchdog
//!
//! A runner killed with SIGKILL cannot clean up. The first owner therefore
//! forks one watchdog process per host process (no re-exec, so it works in
//! any binary). It holds the read end of a socket pair; the runner writes
//! `add`/`del` for every owned session, `track`/`untrack` for every other
//! owned process its sampler or cleanup found (escaped daemons, adopted
//! orphans), and `scratch`/`unscratch` for run scratch directories
//! ([`guard_scratch`]). When the read reaches end-of-file (the runner exited
//! or died) the watchdog ends everything registered and descended from it —
//! SIGSTOP rounds, then SIGKILL, until nothing is left — removes the
//! registered scratch directories and exits. It is in its own session,
//! ignores SIGINT, SIGTERM, SIGHUP and the stop signals, and relies only on
//! end-of-file. [`shutdown`] stops and collects it at a normal exit.
//!
//! # Other platforms
//!
//! Other Unix systems (macOS) have no subreaper and no `/proc`: an owner
//! ends the process groups it registered with `killpg` (SIGTERM, grace,
//! SIGKILL), and the watchdog does the same; job-control groups and
//! `setsid` descendants can escape there. On Windows every registered
//! process goes into the owner's Job Object (`KILL_ON_JOB_CLOSE`, so the
//! job's processes end with the runner, whatever ends it); cleanup ends the
//! job (`TerminateJobObject`, reported as `SIGKILL`) and reports each
//! process it held. On other platforms the module compiles, and cleanup
//! reports every registered process as left, "not implemented on this
//! platform".

use crate::deadline::Deadline;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

pub mod identity;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
mod owned;
#[cfg(target_os = "linux")]
mod tree;
#[cfg(target_os = "linux")]
use owned::Owner as Platform;

#[cfg(all(unix, not(target_os = "linux")))]
mod groups;
#[cfg(all(unix, not(target_os = "linux")))]
use groups::Owner as Platform;

#[cfg(unix)]
mod watchdog;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows::Owner as Platform;
#[cfg(windows)]
pub mod windows_spawn;

pub mod crt_fds;
pub mod win_cmdline;

#[cfg(not(any(unix, windows)))]
mod unsupported;
#[cfg(not(any(unix, windows)))]
use unsupported::Owner as Platform;

/// The environment variable that marks commands an owner spawned (see
/// [`ProcessOwner::marker`]).
pub const OWNER_ENV: &str = "UI_QA_OWNER";
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
    pub how: Ending,
}

/// How an owned process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum Ending {
    /// It was already gone when cleanup looked (it exited on its own).
    #[serde(rename = "exited")]
    Exited,
    /// It ended after SIGTERM.
    #[serde(rename = "SIGTERM")]
    Sigterm,
    /// It was killed with SIGKILL.
    #[serde(rename = "SIGKILL")]
    Sigkill,
}

impl Ending {
    /// The wire name (`exited`, `SIGTERM`, `SIGKILL`).
    pub fn as_str(self) -> &'static str {
        match self {
            Ending::Exited => "exited",
            Ending::Sigterm => "SIGTERM",
            Ending::Sigkill => "SIGKILL",
        }
    }
}

impl std::fmt::Display for Ending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
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

/// Where the host starts every child process through a [`ProcessOwner`]
/// (the `ui-qa` binary does), an orphan the subreaper adopted is one of
/// ours even when its environment was scrubbed and carries no marker (a
/// daemon started under `env -i` that double-forked and called `setsid`):
/// with this on, such an orphan in a session of its own belongs to the only
/// active owner; while several owners are active it is reported under
/// `left` by their cleanups (it cannot be attributed to one run) and ended
/// by [`shutdown`]. Off by default: a library host may start children of
/// its own that no owner knows.
pub fn claim_unmarked_orphans(on: bool) {
    #[cfg(target_os = "linux")]
    owned::set_claim_unmarked(on);
    let _ = on;
}

/// Call once when the host is about to exit, after every run has cleaned
/// up: ends the unmarked orphans [`claim_unmarked_orphans`] could not
/// attribute (Linux), collects every zombie child of the process (so none
/// is handed to an init that never reaps), and stops and collects the
/// watchdog. Returns what it ended.
pub async fn shutdown(grace: Duration, deadline: Deadline) -> CleanupReport {
    #[cfg(target_os = "linux")]
    {
        owned::shutdown(grace, deadline).await
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = grace;
        #[cfg(unix)]
        watchdog::stop(deadline);
        #[cfg(not(unix))]
        let _ = deadline;
        CleanupReport::default()
    }
}

/// Guards a run's scratch directory (`<run>/work`): if the host dies
/// before it removes the directory itself, the watchdog removes it after
/// ending the run's processes (Unix; see the watchdog docs for how the path
/// is walked). Call [`release_scratch`] once the runner removed it.
pub fn guard_scratch(path: &std::path::Path) {
    #[cfg(unix)]
    if let Some(p) = path.to_str() {
        watchdog::scratch(p);
    }
    let _ = path;
}

/// The runner removed a guarded scratch directory itself.
pub fn release_scratch(path: &std::path::Path) {
    #[cfg(unix)]
    if let Some(p) = path.to_str() {
        watchdog::unscratch(p);
    }
    let _ = path;
}

/// This process as `(pid, start time)` (Linux), the identity written next
/// to a run's scratch so a later run can tell whether its owner is gone.
pub fn self_identity() -> Option<(u32, u64)> {
    #[cfg(target_os = "linux")]
    {
        linux::read_stat(std::process::id()).map(|s| (s.pid, s.start))
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// Whether the process named by `(pid, start)` is still running (Linux;
/// elsewhere `true`, so nothing is ever swept on a guess).
pub fn identity_running(pid: u32, start: u64) -> bool {
    #[cfg(target_os = "linux")]
    {
        linux::running(pid, start)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (pid, start);
        true
    }
}

/// Owns the processes one run started.
///
/// Launch every program through [`ProcessOwner::spawn`], or prepare it with
/// [`ProcessOwner::prepare`] and [`ProcessOwner::register`] its pid; end
/// them with [`ProcessOwner::end_all`]. See the [module docs](self) for the
/// exact rules.
#[derive(Debug)]
pub struct ProcessOwner {
    platform: Platform,
    next_root: AtomicU64,
    journal: std::sync::Mutex<CleanupReport>,
}

static NEXT_OWNER: AtomicU64 = AtomicU64::new(1);

/// Processes being started by any owner in this process and not yet
/// registered (see [`SpawnGuard`]).
static SPAWNING: AtomicUsize = AtomicUsize::new(0);

/// Whether some owner is starting a process it has not registered yet.
/// Between fork and exec a child still has the host's environment (no
/// owner marker), and until it is registered no owner knows it: an
/// unmarked direct child seen then is not an orphan to claim.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) fn spawning() -> bool {
    SPAWNING.load(Ordering::SeqCst) > 0
}

/// Held while a process is started and until its owner registered it
/// ([`ProcessOwner::spawning`]). While any is held, no owner claims an
/// unmarked orphan: with several runs side by side, the sampler of one run
/// once claimed the browser another run was starting (seen between fork
/// and exec, before it had its owner's marker) and its cleanup ended it.
#[derive(Debug)]
#[must_use = "the guard covers the start only while it is held"]
pub struct SpawnGuard(());

impl SpawnGuard {
    fn new() -> SpawnGuard {
        SPAWNING.fetch_add(1, Ordering::SeqCst);
        SpawnGuard(())
    }
}

impl Drop for SpawnGuard {
    fn drop(&mut self) {
        SPAWNING.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Default for ProcessOwner {
    fn default() -> ProcessOwner {
        ProcessOwner::new()
    }
}

impl ProcessOwner {
    /// A new owner for one run. The first one in a process makes it a child
    /// subreaper (Linux) and starts the watchdog (Unix).
    pub fn new() -> ProcessOwner {
        ProcessOwner {
            platform: Platform::new(NEXT_OWNER.fetch_add(1, Ordering::Relaxed)),
            next_root: AtomicU64::new(1),
            journal: std::sync::Mutex::new(CleanupReport::default()),
        }
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

    /// Hold the returned guard from just before a process of this owner is
    /// started until it is registered ([`ProcessOwner::register`]): no
    /// owner of this process claims an unmarked orphan meanwhile, so a
    /// child being started is never taken for another run's orphan.
    /// [`ProcessOwner::spawn`] holds one itself.
    pub fn spawning(&self) -> SpawnGuard {
        SpawnGuard::new()
    }

    /// The environment variable and value marking a command as this
    /// owner's. Set it on commands you spawn yourself (for example through
    /// a PTY) before registering them, so orphans they leave behind can be
    /// claimed even if they escaped before the sampler saw them.
    pub fn marker(&self) -> (&'static str, String) {
        (OWNER_ENV, self.platform.marker(None))
    }

    /// Sends SIGHUP to the process group led by `pid` — only if `pid` is a
    /// process this owner registered, it leads its own session, and it is
    /// still the same process (its start time matches). This is how a
    /// terminal driver tells its program the terminal hung up. Returns
    /// whether the signal was sent.
    pub fn hang_up(&self, pid: u32) -> bool {
        self.platform.hang_up(pid)
    }

    /// Prepares, marks, spawns and registers a command (on Windows it starts
    /// suspended and runs once it is in the run's job).
    pub fn spawn(
        &self,
        mut cmd: tokio::process::Command,
        label: &str,
    ) -> std::io::Result<tokio::process::Child> {
        let seq = self.next_root.fetch_add(1, Ordering::Relaxed);
        let _starting = self.spawning();
        cmd.env(OWNER_ENV, self.platform.marker(Some(seq)));
        Self::prepare(&mut cmd);
        // Windows: in the job before it runs (see `windows.rs`).
        #[cfg(windows)]
        cmd.creation_flags(windows::START_SUSPENDED);
        // Windows: never while a `spawn_with_fds` has inheritable handles.
        #[cfg(windows)]
        let guard = windows_spawn::SPAWN_LOCK
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let child = cmd.spawn();
        #[cfg(windows)]
        drop(guard);
        let child = child?;
        if let Some(pid) = child.id() {
            self.platform.register(pid, label, Some(seq));
            #[cfg(windows)]
            windows::resume(pid);
        }
        Ok(child)
    }

    /// Starts `cmd` with its C-runtime descriptors (Windows; see
    /// [`windows_spawn`]): suspended, in the run's job, then running.
    #[cfg(windows)]
    pub fn spawn_with_fds(
        &self,
        cmd: windows_spawn::FdCommand,
        label: &str,
    ) -> std::io::Result<windows_spawn::OwnedChild> {
        let starting = self.spawning();
        let suspended = windows_spawn::start_suspended(cmd)?;
        self.platform.register(suspended.pid, label, None);
        drop(starting);
        let pid = suspended.pid;
        suspended
            .resume()
            .map(|process| windows_spawn::OwnedChild::new(pid, process))
    }

    /// Registers a process that leads its own session (it called `setsid`,
    /// as [`ProcessOwner::prepare`] and PTY spawns do). A process that does
    /// not lead a session is still ended, with its descendants, but its
    /// session is not.
    pub fn register(&self, pid: u32, label: &str) {
        self.platform.register(pid, label, None);
    }

    /// Ends everything owned: SIGTERM, up to `grace`, SIGKILL, bounded by
    /// `deadline` (see the [module docs](self)). Registrations are consumed;
    /// what is left stays owned for a later call.
    pub async fn end_all(&self, grace: Duration, deadline: Deadline) -> CleanupReport {
        let report = self.platform.end_all(grace, deadline).await;
        self.journal
            .lock()
            .expect("journal lock")
            .merge(report.clone());
        report
    }

    /// Everything every `end_all` call ended or left since the last call,
    /// merged — so a driver that cleans up after a failed `open` is still
    /// reported in the run's `cleanup` section.
    pub fn take_journal(&self) -> CleanupReport {
        std::mem::take(&mut *self.journal.lock().expect("journal lock"))
    }

    /// Sends SIGKILL to everything owned at once (a second Ctrl-C). Does
    /// not wait and does not consume registrations: call
    /// [`ProcessOwner::end_all`] afterwards for the report.
    pub fn kill_all_now(&self) {
        self.platform.kill_all_now();
    }
}
