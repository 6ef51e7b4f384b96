//! The process table (`/proc`): who descends from the launched process, who
//! is in its session, and what environment it runs with.

use std::collections::HashMap;

/// `pid → (ppid, sid)` for every live (non-zombie) process.
pub(crate) fn table() -> HashMap<u32, (u32, u32)> {
    let mut t = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return t;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if let Some((state, ppid, sid)) = stat(pid) {
            if state != 'Z' && state != 'X' {
                t.insert(pid, (ppid, sid));
            }
        }
    }
    t
}

/// `(state, ppid, sid)` from `/proc/<pid>/stat`.
pub(crate) fn stat(pid: u32) -> Option<(char, u32, u32)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = s.rsplit_once(')')?.1;
    let mut f = rest.split_whitespace();
    let state = f.next()?.chars().next()?;
    let ppid = f.next()?.parse().ok()?;
    let _pgrp = f.next()?;
    let sid = f.next()?.parse().ok()?;
    Some((state, ppid, sid))
}

/// Whether `pid` is `root` or descends from it, or shares its session
/// (`root` leads its own session, so reparented descendants still count).
pub(crate) fn belongs_to(t: &HashMap<u32, (u32, u32)>, pid: u32, root: u32) -> bool {
    if pid == root {
        return true;
    }
    if t.get(&pid).is_some_and(|(_, sid)| *sid == root) {
        return true;
    }
    let mut cur = pid;
    for _ in 0..64 {
        match t.get(&cur) {
            Some(&(ppid, _)) if ppid == root => return true,
            Some(&(ppid, _)) if ppid > 1 => cur = ppid,
            _ => return false,
        }
    }
    false
}

/// Every live process that belongs to `root` (see [`belongs_to`]).
pub(crate) fn members(t: &HashMap<u32, (u32, u32)>, root: u32) -> Vec<u32> {
    let mut v: Vec<u32> = t
        .keys()
        .copied()
        .filter(|&p| belongs_to(t, p, root))
        .collect();
    v.sort_unstable();
    v
}

/// The value of one environment variable of a process (if readable).
pub(crate) fn env_var(pid: u32, name: &str) -> Option<String> {
    let raw = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    raw.split(|b| *b == 0).find_map(|kv| {
        let s = std::str::from_utf8(kv).ok()?;
        let (k, v) = s.split_once('=')?;
        (k == name).then(|| v.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descendants_and_session() {
        let mut t = HashMap::new();
        t.insert(10, (1, 10)); // launched, session leader
        t.insert(11, (10, 10)); // child
        t.insert(12, (1, 10)); // reparented, same session
        t.insert(13, (11, 13)); // grandchild that setsid'd
        t.insert(20, (1, 20)); // unrelated
        assert_eq!(members(&t, 10), vec![10, 11, 12, 13]);
        assert!(!belongs_to(&t, 20, 10));
    }

    #[test]
    fn reads_own_stat() {
        let (state, _, _) = stat(std::process::id()).unwrap();
        assert!(state != 'Z');
    }
}
