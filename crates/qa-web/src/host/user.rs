//! Who the browser runs as.
//!
//! When ui-qa runs as root, Chromium does not: it runs as a user of its own
//! — an id with no account, no files and no other process — with its
//! sandbox on. A page that takes over the browser then holds neither root's
//! files nor another user's processes, and the run's proxy can tell the
//! browser's connections from everyone else's by that id alone. As any
//! other user, ui-qa starts Chromium as itself.

#[cfg(target_os = "linux")]
pub(crate) use linux::pick;

/// Picks a fresh user for the browser when ui-qa is root (`None` as any
/// other user, or where ui-qa cannot start a process as another user).
#[cfg(not(target_os = "linux"))]
pub(crate) fn pick() -> Option<qa_core::evidence::HelperUser> {
    None
}

#[cfg(target_os = "linux")]
mod linux {
    use qa_core::evidence::HelperUser;

    /// The ids tried first: far above any account a system hands out
    /// (accounts, system users and systemd's dynamic users all sit below
    /// 2^31 − 2^30).
    const PREFERRED: (u32, u32) = (0x4000_0000, 0x7fff_0000);

    /// A fresh user for the browser when ui-qa is root: a random id that
    /// this process's user namespace maps, with no account in
    /// `/etc/passwd`, no group in `/etc/group`, and no process running as
    /// it. `None` when ui-qa is not root or no such id is found.
    pub(crate) fn pick() -> Option<HelperUser> {
        if !is_root() {
            return None;
        }
        let mapped = mapped_ranges(&std::fs::read_to_string("/proc/self/uid_map").ok()?);
        let taken_users = ids_in(&std::fs::read_to_string("/etc/passwd").unwrap_or_default());
        let taken_groups = ids_in(&std::fs::read_to_string("/etc/group").unwrap_or_default());
        let running = running_uids();
        for _ in 0..64 {
            let id = candidate(&mapped, getrandom::u32().ok()?)?;
            if !taken_users.contains(&id) && !taken_groups.contains(&id) && !running.contains(&id) {
                return Some(HelperUser { uid: id, gid: id });
            }
        }
        None
    }

    /// Whether ui-qa runs as root here (and so starts Chromium as another
    /// user).
    fn is_root() -> bool {
        qa_core::Host::current().is_root
    }

    /// `[start, end)` ranges of ids this namespace maps, from `uid_map`.
    pub(super) fn mapped_ranges(map: &str) -> Vec<(u32, u32)> {
        map.lines()
            .filter_map(|l| {
                let mut f = l.split_whitespace().map(str::parse::<u64>);
                let (Some(Ok(inside)), Some(Ok(_)), Some(Ok(count))) =
                    (f.next(), f.next(), f.next())
                else {
                    return None;
                };
                let end = (inside + count).min(u64::from(u32::MAX));
                Some((u32::try_from(inside).ok()?, u32::try_from(end).ok()?))
            })
            .collect()
    }

    /// An id from `random`: in the preferred range when the namespace maps
    /// it whole, else in the largest mapped range above the first 65,536
    /// (or, in a namespace that maps no more, above the first 1,000).
    pub(super) fn candidate(mapped: &[(u32, u32)], random: u32) -> Option<u32> {
        let (lo, hi) = PREFERRED;
        if mapped.iter().any(|&(s, e)| s <= lo && hi <= e) {
            return Some(lo + random % (hi - lo));
        }
        let above = |floor: u32| {
            mapped
                .iter()
                .map(|&(s, e)| (s.max(floor), e.saturating_sub(1)))
                .filter(|&(s, e)| s < e)
                .max_by_key(|&(s, e)| e - s)
        };
        let (s, e) = above(65_536).or_else(|| above(1_000))?;
        Some(s + random % (e - s))
    }

    /// The numeric ids (third field) of `/etc/passwd` or `/etc/group`.
    fn ids_in(table: &str) -> Vec<u32> {
        table
            .lines()
            .filter_map(|l| l.split(':').nth(2)?.parse().ok())
            .collect()
    }

    /// The real and effective uids of every running process.
    fn running_uids() -> Vec<u32> {
        let mut out = Vec::new();
        for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            if !e
                .file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
            {
                continue;
            }
            let Ok(status) = std::fs::read_to_string(e.path().join("status")) else {
                continue;
            };
            if let Some(l) = status.lines().find(|l| l.starts_with("Uid:")) {
                out.extend(
                    l.split_whitespace()
                        .skip(1)
                        .filter_map(|u| u.parse::<u32>().ok()),
                );
            }
        }
        out
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn a_whole_namespace_gives_an_id_in_the_preferred_range() {
            let m = mapped_ranges("         0          0 4294967295\n");
            assert_eq!(m, vec![(0, u32::MAX)]);
            for r in [0, 1, u32::MAX, 0x1234_5678] {
                let id = candidate(&m, r).unwrap();
                assert!((PREFERRED.0..PREFERRED.1).contains(&id), "{id:#x}");
            }
        }

        #[test]
        fn a_container_namespace_gives_a_mapped_id_above_the_accounts() {
            // rootless containers: 0 → the user, 1..65537 → subordinate ids
            let m = mapped_ranges("0 1000 1\n1 100000 65536\n");
            for r in [0, 7, u32::MAX] {
                let id = candidate(&m, r).unwrap();
                assert!((1_000..65_537).contains(&id), "{id}");
            }
            // only root mapped: no id to drop to
            assert_eq!(candidate(&mapped_ranges("0 0 1\n"), 5), None);
        }

        #[test]
        fn the_picked_user_has_no_account_and_no_process() {
            let Some(u) = pick() else {
                // Not root here: Chromium runs as this user.
                assert!(!is_root());
                return;
            };
            assert_eq!(u.uid, u.gid);
            assert!(u.uid >= 1_000);
            assert!(!running_uids().contains(&u.uid));
            let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
            assert!(!ids_in(&passwd).contains(&u.uid));
        }
    }
}
