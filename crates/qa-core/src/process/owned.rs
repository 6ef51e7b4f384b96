//! Linux: sessions, descendants, adopted orphans, the sampler and cleanup.

use super::linux::{self, Sent, Stat};
use super::tree::{find_owned, Found, Known, Session, Tracked};
use super::{watchdog, CleanupReport, CleanupStatus, EndedProcess, Ending, LeftProcess, OWNER_ENV};
use crate::deadline::Deadline;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once, Weak};
use std::time::Duration;

/// Whether an orphan the subreaper adopted without this process's owner
/// marker (its environment was scrubbed, e.g. `env -i`) is owned (see
/// [`super::claim_unmarked_orphans`]).
static CLAIM_UNMARKED: AtomicBool = AtomicBool::new(false);
/// Owners with something registered (between their first registration and
/// a cleanup that left nothing).
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

pub(super) fn set_claim_unmarked(on: bool) {
    CLAIM_UNMARKED.store(on, Ordering::SeqCst);
}

fn claim_unmarked() -> bool {
    CLAIM_UNMARKED.load(Ordering::SeqCst)
}

/// How often the sampler walks `/proc` while something is registered.
const SAMPLE_EVERY: Duration = Duration::from_millis(150);
/// How often cleanup re-reads `/proc` while it waits, at most…
const POLL_EVERY: Duration = Duration::from_millis(25);
/// …and first: most processes are gone a few milliseconds after their
/// signal (or the browser's own close), and a run's end waits for them.
const POLL_FIRST: Duration = Duration::from_millis(2);
/// How long cleanup waits for SIGKILL to take effect: at least…
const KILL_WAIT_MIN: Duration = Duration::from_millis(500);
/// …and at most.
const KILL_WAIT_MAX: Duration = Duration::from_secs(3);

/// The waits between `/proc` reads while cleanup waits for processes to
/// go: [`POLL_FIRST`], doubling up to [`POLL_EVERY`]. A process that exits
/// promptly is seen promptly (with a fixed 25 ms, every run's end waited
/// half that on average for nothing), and one that takes long costs a
/// read every 25 ms, as before.
struct Backoff(Duration);

impl Backoff {
    fn new() -> Backoff {
        Backoff(POLL_FIRST)
    }

    /// The next wait, at most `limit`.
    fn next(&mut self, limit: Duration) -> Duration {
        let d = self.0;
        self.0 = (d * 2).min(POLL_EVERY);
        d.min(limit)
    }
}

#[derive(Debug, Clone)]
struct Root {
    pid: u32,
    start: Option<u64>,
    label: String,
    seq: Option<u64>,
}

#[derive(Debug, Default)]
struct State {
    roots: Vec<Root>,
    sessions: HashMap<u32, Session>,
    tracked: HashMap<u32, Tracked>,
    /// Direct children of ours checked and found not to carry our marker.
    not_ours: HashSet<(u32, u64)>,
    sampler: bool,
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    token: String,
    /// Counted in [`ACTIVE`].
    active: AtomicBool,
}

impl Shared {
    fn activate(&self) {
        if !self.active.swap(true, Ordering::SeqCst) {
            ACTIVE.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn deactivate(&self) {
        if self.active.swap(false, Ordering::SeqCst) {
            ACTIVE.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.deactivate();
    }
}

/// The Linux owner.
#[derive(Debug)]
pub(super) struct Owner {
    shared: Arc<Shared>,
}

static SUBREAPER: Once = Once::new();

fn self_stat() -> Stat {
    linux::read_stat(std::process::id()).unwrap_or(Stat {
        pid: std::process::id(),
        ppid: 0,
        sid: 0,
        start: 0,
        state: b'R',
    })
}

impl Owner {
    pub(super) fn new(seq: u64) -> Owner {
        SUBREAPER.call_once(|| {
            linux::become_subreaper();
        });
        watchdog::ensure();
        let me = self_stat();
        Owner {
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                token: format!("{}-{}-{seq}", me.pid, me.start),
                active: AtomicBool::new(false),
            }),
        }
    }

    /// The marker value for a command this owner will register as root `seq`.
    pub(super) fn marker(&self, seq: Option<u64>) -> String {
        match seq {
            Some(n) => format!("{}.{n}", self.shared.token),
            None => self.shared.token.clone(),
        }
    }

    pub(super) fn register(&self, pid: u32, label: &str, seq: Option<u64>) {
        let stat = linux::read_stat(pid);
        self.shared.activate();
        let mut st = self.shared.lock();
        st.roots.push(Root {
            pid,
            start: stat.map(|s| s.start),
            label: label.to_string(),
            seq,
        });
        if let Some(s) = stat {
            if s.leads_session() && s.sid != self_stat().sid {
                st.sessions.insert(
                    pid,
                    Session {
                        leader_start: s.start,
                        root: pid,
                    },
                );
                watchdog::add(pid, s.start);
            }
        }
        if !st.sampler {
            st.sampler = true;
            let weak = Arc::downgrade(&self.shared);
            let started = std::thread::Builder::new()
                .name("ui-qa-process-sampler".into())
                .spawn(move || sample_loop(weak));
            if started.is_err() {
                st.sampler = false;
            }
        }
    }

    pub(super) fn hang_up(&self, pid: u32) -> bool {
        let start = {
            let st = self.shared.lock();
            st.roots.iter().find(|r| r.pid == pid).and_then(|r| r.start)
        };
        let Some(start) = start else { return false };
        match linux::read_stat(pid) {
            Some(s) if s.start == start && !s.is_dead() && s.leads_session() => {
                #[allow(unsafe_code)]
                // SAFETY: kill(2) on the process group led by a process this
                // owner started and registered, whose identity was just
                // verified; the group id equals its pid after setsid.
                unsafe {
                    libc::kill(-(pid as i32), libc::SIGHUP) == 0
                }
            }
            _ => false,
        }
    }

    pub(super) async fn end_all(&self, grace: Duration, deadline: Deadline) -> CleanupReport {
        let (roots, sessions, tracked) = {
            let mut st = self.shared.lock();
            (
                std::mem::take(&mut st.roots),
                std::mem::take(&mut st.sessions),
                std::mem::take(&mut st.tracked),
            )
        };
        Cleanup::new(&self.shared, roots, sessions, tracked)
            .end(grace, deadline)
            .await
    }

    pub(super) fn kill_all_now(&self) {
        let mut run = {
            let st = self.shared.lock();
            Cleanup::new(
                &self.shared,
                st.roots.clone(),
                st.sessions.clone(),
                st.tracked.clone(),
            )
        };
        run.look(Some(libc::SIGKILL));
        // Keep what this pass learned (escaped sessions) for `end_all`.
        let mut st = self.shared.lock();
        for (sid, sess) in run.sessions {
            st.sessions.entry(sid).or_insert(sess);
        }
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a direct child of ours carries this owner's marker; if so,
    /// the root it is attributed to.
    fn vouch(&self, st: &mut State, s: &Stat) -> Option<u32> {
        if st.not_ours.contains(&(s.pid, s.start)) {
            return None;
        }
        let value = match linux::environ_value(s.pid, OWNER_ENV) {
            linux::EnvLookup::Value(v) => Some(v),
            // No marker at all: its environment was scrubbed. Where the host
            // starts every child through an owner, an adopted orphan in a
            // session of its own is still one of ours: it belongs to the only
            // active owner; with several active it is not attributed here
            // (reported as left, ended at host shutdown).
            linux::EnvLookup::Absent if claim_unmarked() && s.sid != self_stat().sid => {
                // A child some owner is starting has no marker until it
                // execs and no owner until it is registered: not an orphan
                // yet; asked again at the next look.
                if super::spawning() {
                    return None;
                }
                if ACTIVE.load(Ordering::SeqCst) == 1 && self.active.load(Ordering::SeqCst) {
                    return st.roots.first().map(|r| r.pid);
                }
                return None;
            }
            linux::EnvLookup::Absent => None,
            // Unreadable for now (mid-exec): ask again next time rather than
            // remember a wrong "not ours".
            linux::EnvLookup::Unknown => return None,
        };
        let ours = value.as_deref().and_then(|v| {
            let rest = v.strip_prefix(self.token.as_str())?;
            if rest.is_empty() {
                return Some(None);
            }
            Some(rest.strip_prefix('.')?.parse::<u64>().ok())
        });
        let Some(seq) = ours else {
            st.not_ours.insert((s.pid, s.start));
            return None;
        };
        let by_seq = seq.and_then(|n| st.roots.iter().find(|r| r.seq == Some(n)));
        by_seq.or(st.roots.first()).map(|r| r.pid)
    }

    /// One sampler pass: remember every descendant and escaped session.
    /// Returns false (and marks the sampler stopped) once nothing is
    /// registered; the next registration starts a new one.
    fn sample(&self) -> bool {
        {
            let mut st = self.lock();
            if st.roots.is_empty() {
                st.sampler = false;
                return false;
            }
        }
        let table = linux::scan();
        let me = self_stat();
        let exclude: Vec<u32> = watchdog::pid().into_iter().collect();
        let mut st = self.lock();
        if st.roots.is_empty() {
            return true; // `end_all` took them while we read /proc.
        }
        let roots: Vec<(u32, u64)> = st
            .roots
            .iter()
            .filter_map(|r| Some((r.pid, r.start?)))
            .collect();
        let (sessions, tracked) = (st.sessions.clone(), st.tracked.clone());
        let known = Known {
            roots: &roots,
            sessions: &sessions,
            tracked: &tracked,
            self_pid: me.pid,
            self_sid: me.sid,
            exclude: &exclude,
        };
        let found = find_owned(&table, &known, |s| self.vouch(&mut st, s));
        let root_pids: HashSet<u32> = roots.iter().map(|r| r.0).collect();
        let mut alive = HashMap::new();
        for o in &found.owned {
            if root_pids.contains(&o.stat.pid) {
                continue;
            }
            if o.stat.is_dead() {
                // An adopted orphan's zombie is ours to collect.
                if o.stat.ppid == me.pid {
                    linux::reap(o.stat.pid);
                }
                continue;
            }
            if !st.tracked.contains_key(&o.stat.pid) {
                watchdog::track(o.stat.pid, o.stat.start);
            }
            alive.insert(
                o.stat.pid,
                Tracked {
                    start: o.stat.start,
                    root: o.root,
                },
            );
        }
        for gone in st.tracked.keys().filter(|p| !alive.contains_key(p)) {
            watchdog::untrack(*gone);
        }
        st.tracked = alive;
        for (sid, sess) in found.new_sessions {
            st.sessions.insert(sid, sess);
            watchdog::add(sid, sess.leader_start);
        }
        let present: HashSet<(u32, u64)> = table.iter().map(|s| (s.pid, s.start)).collect();
        st.not_ours.retain(|k| present.contains(k));
        true
    }
}

fn sample_loop(weak: Weak<Shared>) {
    loop {
        std::thread::sleep(SAMPLE_EVERY);
        let Some(shared) = weak.upgrade() else {
            return;
        };
        if !shared.sample() {
            return;
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Running,
    Termed,
    Killed,
}

impl Phase {
    /// How a process that is now gone ended, given the last signal sent.
    fn ending(self) -> Ending {
        match self {
            Phase::Running => Ending::Exited,
            Phase::Termed => Ending::Sigterm,
            Phase::Killed => Ending::Sigkill,
        }
    }
}

#[derive(Debug)]
struct Entry {
    stat: Stat,
    root: u32,
    phase: Phase,
    how: Option<Ending>,
    error: Option<i32>,
}

/// One cleanup pass over an owner's processes.
struct Cleanup<'a> {
    shared: &'a Shared,
    roots: Vec<Root>,
    sessions: HashMap<u32, Session>,
    tracked: HashMap<u32, Tracked>,
    entries: HashMap<u32, Entry>,
    me: Stat,
    exclude: Vec<u32>,
}

impl<'a> Cleanup<'a> {
    fn new(
        shared: &'a Shared,
        roots: Vec<Root>,
        sessions: HashMap<u32, Session>,
        tracked: HashMap<u32, Tracked>,
    ) -> Cleanup<'a> {
        Cleanup {
            shared,
            roots,
            sessions,
            tracked,
            entries: HashMap::new(),
            me: self_stat(),
            exclude: watchdog::pid().into_iter().collect(),
        }
    }

    /// SIGTERM, re-reading `/proc` for up to `grace` (never past
    /// `deadline`), SIGKILL to survivors and a bounded wait for them; then
    /// the report.
    async fn end(mut self, grace: Duration, deadline: Deadline) -> CleanupReport {
        self.look(Some(libc::SIGTERM));
        let term_until = Deadline::after(grace).min(deadline);
        let mut wait = Backoff::new();
        while !term_until.expired() && self.any_running() {
            tokio::time::sleep(wait.next(term_until.remaining())).await;
            self.look(Some(libc::SIGTERM));
        }
        if self.any_running() {
            self.look(Some(libc::SIGKILL));
            let limit = deadline.remaining().clamp(KILL_WAIT_MIN, KILL_WAIT_MAX);
            let kill_until = Deadline::after(limit);
            let mut wait = Backoff::new();
            while !kill_until.expired() && self.any_running() {
                tokio::time::sleep(wait.next(POLL_EVERY)).await;
                self.look(Some(libc::SIGKILL));
            }
        }
        self.finish()
    }

    /// Reads `/proc`, records newly found owned processes, notes which are
    /// gone, and sends `sig` to every running one not yet sent it (or a
    /// stronger signal).
    fn look(&mut self, sig: Option<libc::c_int>) {
        if self.roots.is_empty() && self.tracked.is_empty() && self.sessions.is_empty() {
            return;
        }
        let table = linux::scan();
        let found = self.find(&table);
        for (sid, sess) in &found.new_sessions {
            self.sessions.insert(*sid, *sess);
            watchdog::add(*sid, sess.leader_start);
        }
        let by_pid: HashMap<u32, &Stat> = table.iter().map(|s| (s.pid, s)).collect();
        for e in self.entries.values_mut() {
            let gone = by_pid
                .get(&e.stat.pid)
                .is_none_or(|s| s.start != e.stat.start || s.is_dead());
            if gone && e.how.is_none() {
                e.how = Some(e.phase.ending());
            }
        }
        for o in found.owned {
            if !self.entries.contains_key(&o.stat.pid) && !o.stat.is_dead() {
                watchdog::track(o.stat.pid, o.stat.start);
            }
            let e = self.entries.entry(o.stat.pid).or_insert(Entry {
                stat: o.stat,
                root: o.root,
                phase: Phase::Running,
                how: None,
                error: None,
            });
            if o.stat.is_dead() && e.how.is_none() {
                e.how = Some(Ending::Exited);
            }
        }
        let Some(sig) = sig else { return };
        let phase = if sig == libc::SIGKILL {
            Phase::Killed
        } else {
            Phase::Termed
        };
        for e in self.entries.values_mut() {
            if e.how.is_some() || e.phase == phase || e.phase == Phase::Killed {
                continue;
            }
            match linux::signal_verified(e.stat.pid, e.stat.start, sig) {
                Sent::Delivered => e.phase = phase,
                Sent::Gone => e.how = Some(e.phase.ending()),
                Sent::Failed(errno) => e.error = Some(errno),
            }
        }
    }

    fn find(&mut self, table: &[Stat]) -> Found {
        let roots: Vec<(u32, u64)> = self
            .roots
            .iter()
            .filter_map(|r| Some((r.pid, r.start?)))
            .collect();
        let known = Known {
            roots: &roots,
            sessions: &self.sessions,
            tracked: &self.tracked,
            self_pid: self.me.pid,
            self_sid: self.me.sid,
            exclude: &self.exclude,
        };
        let shared = self.shared;
        let mut st = shared.lock();
        // Vouch with the roots being ended (they were taken out of `st`).
        let saved = std::mem::replace(&mut st.roots, self.roots.clone());
        let found = find_owned(table, &known, |s| shared.vouch(&mut st, s));
        let restored = std::mem::replace(&mut st.roots, saved);
        drop(restored);
        found
    }

    fn any_running(&self) -> bool {
        self.entries.values().any(|e| e.how.is_none())
    }

    fn label(&self, root: u32) -> String {
        self.roots
            .iter()
            .find(|r| r.pid == root)
            .or(self.roots.first())
            .map(|r| r.label.clone())
            .unwrap_or_else(|| "unregistered".into())
    }

    /// Collects adopted zombies, unregisters ended sessions and builds the
    /// report. Whatever is left stays known to the owner and the watchdog.
    fn finish(mut self) -> CleanupReport {
        self.look(None);
        let root_pids: HashSet<u32> = self.roots.iter().map(|r| r.pid).collect();
        // Ended processes that are now our zombies — adopted when their
        // parent died first, so their parent is read again now — are
        // collected here; roots are the spawner's (tokio's) to reap.
        for e in self.entries.values() {
            if e.how.is_some() && !root_pids.contains(&e.stat.pid) {
                let ours = linux::read_stat(e.stat.pid)
                    .is_some_and(|s| s.start == e.stat.start && s.ppid == self.me.pid);
                if ours {
                    linux::reap(e.stat.pid);
                }
            }
            if e.how.is_some() {
                watchdog::untrack(e.stat.pid);
            }
        }
        let mut report = CleanupReport::default();
        for r in &self.roots {
            if !self.entries.contains_key(&r.pid) {
                report.ended.push(EndedProcess {
                    pid: r.pid,
                    label: r.label.clone(),
                    how: Ending::Exited,
                });
            }
        }
        let mut entries: Vec<&Entry> = self.entries.values().collect();
        entries.sort_by_key(|e| (!root_pids.contains(&e.stat.pid), e.stat.pid));
        let mut left_sids = HashSet::new();
        let mut left_roots = HashSet::new();
        let mut left_tracked = HashMap::new();
        for e in entries {
            let label = if root_pids.contains(&e.stat.pid) {
                self.label(e.stat.pid)
            } else {
                format!("{} descendant", self.label(e.root))
            };
            match e.how {
                Some(how) => report.ended.push(EndedProcess {
                    pid: e.stat.pid,
                    label,
                    how,
                }),
                None => {
                    left_sids.insert(e.stat.sid);
                    left_roots.insert(e.root);
                    left_tracked.insert(
                        e.stat.pid,
                        Tracked {
                            start: e.stat.start,
                            root: e.root,
                        },
                    );
                    let reason = match e.error {
                        Some(errno) => format!(
                            "could not be signalled: {}",
                            std::io::Error::from_raw_os_error(errno)
                        ),
                        None => format!(
                            "still running after {} (state {})",
                            if e.phase == Phase::Killed {
                                "SIGKILL"
                            } else {
                                "SIGTERM"
                            },
                            linux::read_stat(e.stat.pid)
                                .map(|s| s.state as char)
                                .unwrap_or('?')
                        ),
                    };
                    report.left.push(LeftProcess {
                        pid: e.stat.pid,
                        label,
                        reason,
                    });
                }
            }
        }
        // A process the sampler tracked that ended before this pass never
        // became an entry: it is gone, so the watchdog forgets it too (it
        // would otherwise keep it until the host exits, and spend its exit
        // looking for it).
        for pid in self.tracked.keys() {
            if !left_tracked.contains_key(pid) {
                watchdog::untrack(*pid);
            }
        }
        let mut st = self.shared.lock();
        for (sid, sess) in self.sessions {
            if left_sids.contains(&sid) {
                st.sessions.entry(sid).or_insert(sess);
            } else {
                watchdog::del(sid);
            }
        }
        st.tracked.extend(left_tracked);
        if claim_unmarked() && ACTIVE.load(Ordering::SeqCst) > 1 {
            for (pid, reason) in unattributed_orphans(&self.me, &self.exclude) {
                report.left.push(LeftProcess {
                    pid,
                    label: "adopted orphan".into(),
                    reason,
                });
            }
        }
        if !report.left.is_empty() {
            report.status = CleanupStatus::Incomplete;
            // Keep the labels of what is left for a later attempt.
            for r in self.roots {
                if left_roots.contains(&r.pid) && !st.roots.iter().any(|x| x.pid == r.pid) {
                    st.roots.push(r);
                }
            }
        }
        if st.roots.is_empty() && st.tracked.is_empty() {
            drop(st);
            self.shared.deactivate();
        }
        report
    }
}

/// Running direct children of this process in sessions of their own that
/// carry no owner marker: orphans the subreaper adopted whose environment
/// was scrubbed, while several owners were active (so none can claim them).
fn unattributed_orphans(me: &Stat, exclude: &[u32]) -> Vec<(u32, String)> {
    linux::scan()
        .into_iter()
        .filter(|s| {
            s.ppid == me.pid
                && s.sid != me.sid
                && !s.is_dead()
                && !exclude.contains(&s.pid)
                && linux::environ_value(s.pid, OWNER_ENV) == linux::EnvLookup::Absent
        })
        .map(|s| {
            (
                s.pid,
                format!(
                    "adopted by ui-qa with no run marker while {} runs were active: not attributed to one run; ended when the host shuts down",
                    ACTIVE.load(Ordering::SeqCst)
                ),
            )
        })
        .collect()
}

/// At host exit (see [`super::shutdown`]): ends every orphan adopted with no
/// marker (only where unmarked orphans are claimed, and no owner is still
/// active), collects every zombie child, and stops the watchdog.
pub(super) async fn shutdown(grace: Duration, deadline: Deadline) -> CleanupReport {
    let me = self_stat();
    let exclude: Vec<u32> = watchdog::pid().into_iter().collect();
    let mut report = CleanupReport::default();
    if claim_unmarked() && ACTIVE.load(Ordering::SeqCst) == 0 {
        // Every run has cleaned up, and the host starts children only
        // through owners: any child still running (adopted after its run's
        // cleanup, marked or not) is a leftover of ours.
        let leftovers: Vec<(u32, String)> = linux::scan()
            .into_iter()
            .filter(|s| s.ppid == me.pid && !s.is_dead() && !exclude.contains(&s.pid))
            .map(|s| (s.pid, String::new()))
            .collect();
        let roots: Vec<Root> = leftovers
            .into_iter()
            .map(|(pid, _)| Root {
                pid,
                start: linux::read_stat(pid).map(|s| s.start),
                label: "adopted orphan".into(),
                seq: None,
            })
            .collect();
        if !roots.is_empty() {
            let shared = Shared {
                state: Mutex::new(State::default()),
                token: String::new(),
                active: AtomicBool::new(false),
            };
            report = Cleanup::new(&shared, roots, HashMap::new(), HashMap::new())
                .end(grace, deadline)
                .await;
        }
    }
    watchdog::stop(deadline);
    // Collect every zombie child; a child that is still exiting is waited
    // for (bounded), so none is handed to an init that never reaps. A
    // child that became a zombie after the first collection (the browser's
    // processes end just before) is collected after the first short wait.
    let mut wait = Backoff::new();
    loop {
        linux::reap_all();
        let waiting = claim_unmarked()
            && linux::scan()
                .iter()
                .any(|s| s.ppid == me.pid && !exclude.contains(&s.pid));
        if !waiting || deadline.expired() {
            break;
        }
        tokio::time::sleep(wait.next(POLL_EVERY)).await;
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleanup_waits_start_short_and_double_up_to_the_poll_interval() {
        let mut b = Backoff::new();
        let waits: Vec<u128> = (0..6).map(|_| b.next(POLL_EVERY).as_millis()).collect();
        assert_eq!(waits, [2, 4, 8, 16, 25, 25]);
        // Never past what is left.
        let mut b = Backoff::new();
        assert_eq!(b.next(Duration::from_millis(1)), Duration::from_millis(1));
    }

    #[tokio::test]
    async fn a_tracked_process_that_ended_before_cleanup_is_forgotten_by_the_watchdog() {
        // A real process the sampler could have tracked, then gone (ended
        // and collected) before the cleanup pass looked.
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("spawn sleep");
        let pid = child.id();
        let start = linux::read_stat(pid).expect("stat of sleep").start;
        watchdog::track(pid, start);
        assert!(watchdog::tracked().contains(&pid));
        child.kill().expect("kill sleep");
        child.wait().expect("collect sleep");

        let shared = Shared {
            state: Mutex::new(State::default()),
            token: String::new(),
            active: AtomicBool::new(false),
        };
        let tracked = HashMap::from([(pid, Tracked { start, root: pid })]);
        let report = Cleanup::new(&shared, Vec::new(), HashMap::new(), tracked)
            .end(Duration::from_secs(1), Deadline::after_ms(10_000))
            .await;
        assert!(report.left.is_empty(), "{report:?}");
        assert!(
            !watchdog::tracked().contains(&pid),
            "the watchdog still tracks {pid}, which ended before the cleanup"
        );
    }
}
