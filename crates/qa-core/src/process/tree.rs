//! Which processes in a `/proc` snapshot belong to one owner.
//!
//! Plain logic over a table of [`Stat`]s, so the rules can be tested
//! without processes. The rules, applied until nothing changes:
//!
//! 1. a registered root, if its `(pid, start)` still matches;
//! 2. a descendant recorded earlier by the sampler, if `(pid, start)` matches;
//! 3. a direct child of this process (an orphan the subreaper adopted) that
//!    the caller vouches for (it carries the owner's environment marker);
//! 4. a member of an owned session: its sid is owned, it started no earlier
//!    than the session leader did, and the session was not replaced (a live
//!    leader with that pid but another start time means the number was
//!    reused);
//! 5. a child (by current ppid) of an owned process;
//! 6. an owned process that leads its own session makes that session owned.
//!
//! Never owned: this process, pid 0 and 1 and the watchdog. This process's
//! own session is never owned as a session (a root registered without
//! `setsid` is ended with its descendants, not with its session).

use super::linux::Stat;
use std::collections::{HashMap, HashSet};

/// A session an owner ends as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Session {
    /// Start time of the session leader.
    pub leader_start: u64,
    /// The root it is attributed to.
    pub root: u32,
}

/// A descendant the sampler saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Tracked {
    /// Start time.
    pub start: u64,
    /// The root it is attributed to.
    pub root: u32,
}

/// What an owner knows before looking at a snapshot.
#[derive(Debug)]
pub(super) struct Known<'a> {
    /// Registered roots `(pid, start)`.
    pub roots: &'a [(u32, u64)],
    /// Owned sessions by sid.
    pub sessions: &'a HashMap<u32, Session>,
    /// Descendants seen earlier, by pid.
    pub tracked: &'a HashMap<u32, Tracked>,
    /// This process.
    pub self_pid: u32,
    /// This process's session (never owned).
    pub self_sid: u32,
    /// Other pids never to touch (the watchdog).
    pub exclude: &'a [u32],
}

/// One owned process, attributed to a root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Owned {
    /// Its stat line.
    pub stat: Stat,
    /// The root pid it is attributed to.
    pub root: u32,
}

/// The result of [`find_owned`].
#[derive(Debug, Default)]
pub(super) struct Found {
    /// Everything owned, in table order.
    pub owned: Vec<Owned>,
    /// Sessions first seen in this snapshot (escaped `setsid` descendants).
    pub new_sessions: Vec<(u32, Session)>,
}

/// Applies the rules in the module docs to one snapshot. `vouch` is asked
/// about direct children of this process that nothing else claims; it
/// returns the root to attribute them to.
pub(super) fn find_owned(
    table: &[Stat],
    known: &Known<'_>,
    mut vouch: impl FnMut(&Stat) -> Option<u32>,
) -> Found {
    let by_pid: HashMap<u32, &Stat> = table.iter().map(|s| (s.pid, s)).collect();
    let forbidden =
        |s: &Stat| s.pid <= 1 || s.pid == known.self_pid || known.exclude.contains(&s.pid);
    let mut owned: HashMap<u32, u32> = HashMap::new();
    let mut sessions = known.sessions.clone();
    let mut new_sessions = Vec::new();

    for &(pid, start) in known.roots {
        if let Some(s) = by_pid.get(&pid) {
            if s.start == start && !forbidden(s) {
                owned.insert(pid, pid);
            }
        }
    }
    for (&pid, t) in known.tracked {
        if let Some(s) = by_pid.get(&pid) {
            if s.start == t.start && !forbidden(s) {
                owned.entry(pid).or_insert(t.root);
            }
        }
    }
    for s in table {
        if s.ppid == known.self_pid && !owned.contains_key(&s.pid) && !forbidden(s) {
            if let Some(root) = vouch(s) {
                owned.insert(s.pid, root);
            }
        }
    }

    loop {
        let mut changed = false;
        // Sessions whose number now belongs to a different leader are not ours.
        let replaced: HashSet<u32> = sessions
            .iter()
            .filter(|(sid, sess)| {
                by_pid
                    .get(sid)
                    .is_some_and(|l| l.leads_session() && l.start != sess.leader_start)
            })
            .map(|(sid, _)| *sid)
            .collect();
        for s in table {
            if owned.contains_key(&s.pid) || forbidden(s) {
                continue;
            }
            let by_session = (s.sid != known.self_sid)
                .then(|| sessions.get(&s.sid))
                .flatten()
                .filter(|sess| !replaced.contains(&s.sid) && s.start >= sess.leader_start)
                .map(|sess| sess.root);
            if let Some(root) = by_session.or_else(|| owned.get(&s.ppid).copied()) {
                owned.insert(s.pid, root);
                changed = true;
            }
        }
        for (&pid, &root) in &owned {
            let Some(s) = by_pid.get(&pid) else { continue };
            if s.leads_session() && s.sid != known.self_sid && !sessions.contains_key(&s.sid) {
                let sess = Session {
                    leader_start: s.start,
                    root,
                };
                sessions.insert(s.sid, sess);
                new_sessions.push((s.sid, sess));
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }

    let owned = table
        .iter()
        .filter_map(|s| owned.get(&s.pid).map(|&root| Owned { stat: *s, root }))
        .collect();
    Found {
        owned,
        new_sessions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(pid: u32, ppid: u32, sid: u32, start: u64) -> Stat {
        Stat {
            pid,
            ppid,
            sid,
            start,
            state: b'S',
        }
    }

    fn pids(f: &Found) -> Vec<u32> {
        let mut v: Vec<u32> = f.owned.iter().map(|o| o.stat.pid).collect();
        v.sort();
        v
    }

    const ME: u32 = 100;
    const MY_SID: u32 = 50;

    fn known<'a>(
        roots: &'a [(u32, u64)],
        sessions: &'a HashMap<u32, Session>,
        tracked: &'a HashMap<u32, Tracked>,
    ) -> Known<'a> {
        Known {
            roots,
            sessions,
            tracked,
            self_pid: ME,
            self_sid: MY_SID,
            exclude: &[101],
        }
    }

    #[test]
    fn session_members_descendants_and_escaped_sessions() {
        let table = [
            st(50, 1, 50, 1),      // our shell
            st(ME, 50, MY_SID, 5), // us
            st(101, ME, 101, 6),   // watchdog
            st(200, ME, 200, 10),  // root
            st(201, 200, 200, 11),
            st(202, 1, 200, 12),  // job-control group, re-parented
            st(300, ME, 300, 13), // escaped setsid daemon, vouched
            st(301, 300, 300, 14),
            st(400, ME, MY_SID, 15), // unrelated child of ours
            st(500, 1, 500, 3),      // unrelated
        ];
        let mut sessions = HashMap::new();
        sessions.insert(
            200,
            Session {
                leader_start: 10,
                root: 200,
            },
        );
        let tracked = HashMap::new();
        let roots = [(200, 10)];
        let f = find_owned(&table, &known(&roots, &sessions, &tracked), |s| {
            (s.pid == 300).then_some(200)
        });
        assert_eq!(pids(&f), vec![200, 201, 202, 300, 301]);
        assert_eq!(f.new_sessions.len(), 1);
        assert_eq!(f.new_sessions[0].0, 300);
    }

    #[test]
    fn reused_numbers_are_not_ours() {
        // Root 200 died; pid 200 now leads an unrelated session.
        let table = [
            st(200, 1, 200, 99),
            st(201, 200, 200, 100),
            st(202, 1, 200, 20),
        ];
        let mut sessions = HashMap::new();
        sessions.insert(
            200,
            Session {
                leader_start: 10,
                root: 200,
            },
        );
        let mut tracked = HashMap::new();
        tracked.insert(
            202,
            Tracked {
                start: 21,
                root: 200,
            },
        );
        let roots = [(200, 10)];
        let f = find_owned(&table, &known(&roots, &sessions, &tracked), |_| None);
        assert!(f.owned.is_empty(), "{:?}", f.owned);
    }

    #[test]
    fn never_our_own_session() {
        // A root registered without setsid shares our session: it and its
        // descendants are owned, the rest of our session is not.
        let table = [
            st(50, 1, MY_SID, 1),
            st(ME, 50, MY_SID, 5),
            st(200, ME, MY_SID, 10),
            st(201, 200, MY_SID, 11),
            st(400, ME, MY_SID, 12),
        ];
        let mut sessions = HashMap::new();
        sessions.insert(
            MY_SID,
            Session {
                leader_start: 1,
                root: 200,
            },
        );
        let tracked = HashMap::new();
        let roots = [(200, 10)];
        let f = find_owned(&table, &known(&roots, &sessions, &tracked), |_| None);
        assert_eq!(pids(&f), vec![200, 201]);
        assert!(f.new_sessions.is_empty());
    }
}
