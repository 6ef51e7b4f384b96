//! The application's processes — the launched one and every descendant of
//! it (a launcher that starts the real program), read from a process
//! snapshot's `(pid, parent pid)` pairs — and which of its windows a step
//! uses. Pure; `imp::app` reads the snapshot and the windows.

/// `root` and every process descending from it in `table` (`(pid, ppid)`
/// pairs), `root` first. Windows reuses pids and never re-parents, so a
/// pair whose parent started after the child is not followed: `started`
/// gives each pid's creation time (a smaller value is earlier), and a
/// child older than its recorded parent is someone else's.
pub fn descendants(
    root: u32,
    table: &[(u32, u32)],
    started: &dyn Fn(u32) -> Option<u64>,
) -> Vec<u32> {
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() {
        let parent = out[i];
        let born = started(parent);
        for &(pid, ppid) in table {
            if ppid != parent || pid == parent || out.contains(&pid) {
                continue;
            }
            let child_older = matches!((born, started(pid)), (Some(p), Some(c)) if c < p);
            if !child_older {
                out.push(pid);
            }
        }
        i += 1;
    }
    out
}

/// One of the application's top-level windows, as window choice sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate<'a> {
    /// Its title.
    pub title: &'a str,
    /// Its area in pixels.
    pub area: u64,
    /// Whether it is the foreground window.
    pub foreground: bool,
}

/// The window a step uses: the one the flow names by title (exactly, and
/// never another), else the foreground one if it is the application's,
/// else the largest. The index into `windows`.
pub fn pick_window(windows: &[Candidate<'_>], title: Option<&str>) -> Option<usize> {
    if let Some(t) = title {
        return windows.iter().position(|w| w.title == t);
    }
    windows.iter().position(|w| w.foreground).or_else(|| {
        windows
            .iter()
            .enumerate()
            .max_by_key(|(i, w)| (w.area, std::cmp::Reverse(*i)))
            .map(|(i, _)| i)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(title: &str, area: u64, foreground: bool) -> Candidate<'_> {
        Candidate {
            title,
            area,
            foreground,
        }
    }

    #[test]
    fn the_named_window_wins_and_is_never_replaced() {
        let ws = [c("Main", 100, false), c("Save As", 50, true)];
        assert_eq!(pick_window(&ws, Some("Main")), Some(0));
        assert_eq!(pick_window(&ws, Some("Other")), None);
        assert_eq!(pick_window(&ws, None), Some(1), "the foreground one");
        let bg = [c("a", 100, false), c("b", 300, false), c("c", 300, false)];
        assert_eq!(
            pick_window(&bg, None),
            Some(1),
            "the largest, first of equals"
        );
        assert_eq!(pick_window(&[], None), None);
    }

    #[test]
    fn descendants_follow_the_tree_and_nothing_else() {
        let table = [(10, 1), (11, 10), (12, 11), (20, 1), (21, 20), (13, 10)];
        let none = |_| None;
        assert_eq!(descendants(10, &table, &none), [10, 11, 13, 12]);
        assert_eq!(descendants(21, &table, &none), [21]);
    }

    #[test]
    fn a_reused_parent_pid_does_not_adopt_an_older_process() {
        // 30 was started (time 5) before the current process 10 (time 9)
        // that reuses its dead parent's pid: it is not 10's child.
        let table = [(30, 10), (31, 10)];
        let started = |pid| match pid {
            10 => Some(9),
            30 => Some(5),
            31 => Some(12),
            _ => None,
        };
        assert_eq!(descendants(10, &table, &started), [10, 31]);
    }

    #[test]
    fn a_cycle_in_a_stale_snapshot_ends() {
        let table = [(1, 2), (2, 1)];
        assert_eq!(descendants(1, &table, &|_| None), [1, 2]);
    }
}
