//! Which processes belong to the target: the launched process, its
//! descendants and the members of its session (it leads one, so
//! reparented descendants still count, even after it exits). Built on
//! qa-core's process identity, the only reader of `/proc`.

use qa_core::process::identity::{self, ProcessInfo};

/// Every live process that belongs to `root`: `root` itself, its
/// descendants, and every member of the session `root` started (kept after
/// `root` exits, so a wrapper that forks the GUI and exits still counts).
pub(crate) fn members(table: &[ProcessInfo], root: u32) -> Vec<u32> {
    let mut v = identity::descendants(table, root);
    v.extend(
        table
            .iter()
            .filter(|p| !p.dead && (p.pid == root || p.sid == root))
            .map(|p| p.pid),
    );
    v.sort_unstable();
    v.dedup();
    v
}

/// Whether `pid` is `root` or one of `members` (from [`members`]).
pub(crate) fn belongs_to(members: &[u32], pid: u32, root: u32) -> bool {
    pid == root || members.contains(&pid)
}

/// The live processes that belong to `root`, read now.
pub(crate) fn members_now(root: u32) -> Vec<u32> {
    members(&identity::table(), root)
}

/// The processes whose X windows are the application's: the one owning
/// its accessibility-bus connection (`bus_pid`), plus every process of the
/// launched one (read now).
pub(crate) fn window_pids(bus_pid: u32, launched: Option<u32>) -> Vec<u32> {
    let mut v = vec![bus_pid];
    if let Some(l) = launched {
        v.extend(members_now(l));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pid: u32, ppid: u32, sid: u32) -> ProcessInfo {
        ProcessInfo {
            pid,
            ppid,
            sid,
            start: 1,
            dead: false,
        }
    }

    #[test]
    fn descendants_and_session() {
        let t = vec![
            p(10, 1, 10),  // launched, session leader
            p(11, 10, 10), // child
            p(12, 1, 10),  // reparented, same session
            p(13, 11, 13), // grandchild that setsid'd
            p(20, 1, 20),  // unrelated
        ];
        let m = members(&t, 10);
        assert_eq!(m, vec![10, 11, 12, 13]);
        assert!(!belongs_to(&m, 20, 10));
        assert!(belongs_to(&m, 13, 10));
    }

    #[test]
    fn session_members_outlive_their_leader() {
        // The launched wrapper (10) exited; the GUI it forked was reparented.
        let t = vec![p(12, 1, 10), p(14, 12, 10), p(20, 1, 20)];
        assert_eq!(members(&t, 10), vec![12, 14]);
        // A zombie is gone.
        let mut z = p(15, 1, 10);
        z.dead = true;
        assert_eq!(members(&[z], 10), Vec::<u32>::new());
    }
}
