//! Reading processes by identity: the one place outside the owner that
//! looks at `/proc`. Drivers use it to find *which* of their own processes
//! is which (the GUI process among a wrapper's descendants, the bus a
//! process uses); they never signal through it — ending and signalling go
//! through [`ProcessOwner`](super::ProcessOwner), which only touches what
//! the run started.
//!
//! A process is identified by `(pid, start time)` so a reused pid is never
//! mistaken for the process it replaced (decision 0004).

/// One process as the kernel reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessInfo {
    /// Process id.
    pub pid: u32,
    /// Parent process id.
    pub ppid: u32,
    /// Session id.
    pub sid: u32,
    /// Start time (clock ticks since boot): with `pid`, the identity.
    pub start: u64,
    /// Whether only its zombie is left (or it is being torn down).
    pub dead: bool,
}

/// The process `pid`, if it exists (Linux; elsewhere `None`).
pub fn info(pid: u32) -> Option<ProcessInfo> {
    #[cfg(target_os = "linux")]
    {
        super::linux::read_stat(pid).map(from_stat)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

/// Every process visible to this one (Linux; elsewhere empty).
pub fn table() -> Vec<ProcessInfo> {
    #[cfg(target_os = "linux")]
    {
        super::linux::scan().into_iter().map(from_stat).collect()
    }
    #[cfg(not(target_os = "linux"))]
    {
        Vec::new()
    }
}

/// Whether `pid` names a live process (not gone, not a zombie).
pub fn alive(pid: u32) -> bool {
    matches!(info(pid), Some(p) if !p.dead)
}

/// Whether the process `(pid, start)` is still running (pid not reused).
pub fn running(pid: u32, start: u64) -> bool {
    matches!(info(pid), Some(p) if p.start == start && !p.dead)
}

/// The live descendants of `root` (children, grandchildren, …) in `table`,
/// plus every live member of `root`'s session when `root` leads one.
pub fn descendants(table: &[ProcessInfo], root: u32) -> Vec<u32> {
    let leads_session = table.iter().any(|p| p.pid == root && p.sid == root);
    let mut out: Vec<u32> = Vec::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for c in table.iter().filter(|c| c.ppid == p && !c.dead) {
            if c.pid != root && !out.contains(&c.pid) {
                out.push(c.pid);
                frontier.push(c.pid);
            }
        }
    }
    if leads_session {
        for p in table.iter().filter(|p| p.sid == root && !p.dead) {
            if p.pid != root && !out.contains(&p.pid) {
                out.push(p.pid);
            }
        }
    }
    out
}

/// The value of `var` in the initial environment of `pid`, when it can be
/// read and is set.
pub fn env_var(pid: u32, var: &str) -> Option<String> {
    #[cfg(target_os = "linux")]
    {
        match super::linux::environ_value(pid, var) {
            super::linux::EnvLookup::Value(v) => Some(v),
            _ => None,
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (pid, var);
        None
    }
}

#[cfg(target_os = "linux")]
fn from_stat(s: super::linux::Stat) -> ProcessInfo {
    ProcessInfo {
        pid: s.pid,
        ppid: s.ppid,
        sid: s.sid,
        start: s.start,
        dead: s.is_dead(),
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn reads_itself() {
        let me = info(std::process::id()).expect("own stat");
        assert!(!me.dead);
        assert!(running(me.pid, me.start));
        assert!(!running(me.pid, me.start + 1));
        assert!(table().iter().any(|p| p.pid == me.pid));
        assert!(env_var(me.pid, "PATH").is_some() || std::env::var_os("PATH").is_none());
    }

    #[test]
    fn descendants_follow_parents_and_sessions() {
        let p = |pid, ppid, sid| ProcessInfo {
            pid,
            ppid,
            sid,
            start: 1,
            dead: false,
        };
        let t = vec![
            p(10, 1, 10),
            p(11, 10, 10),
            p(12, 11, 10),
            p(13, 1, 10),
            p(20, 1, 20),
        ];
        let mut d = descendants(&t, 10);
        d.sort();
        assert_eq!(d, vec![11, 12, 13]);
        assert!(descendants(&t, 20).is_empty());
    }
}
