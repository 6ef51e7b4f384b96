//! The watchdog: ends registered sessions after the runner dies, even by
//! SIGKILL.
//!
//! One per process, started by the first [`ProcessOwner`](super::ProcessOwner)
//! with `fork()` — no re-exec, so it works inside any host binary. Runner and
//! watchdog share a Unix socket pair (a pipe that cannot raise SIGPIPE). The
//! runner writes `add <sid> <leader start>\n` and `del <sid>\n`; the watchdog
//! only reads. When the read returns end-of-file, every copy of the runner's
//! end is closed — the runner exited or was killed — and the watchdog ends
//! every session still registered: SIGTERM, up to 1 s of grace, then SIGKILL
//! (repeated until nothing is left), and exits.
//!
//! The child runs in a multi-threaded process after `fork()`, so it only
//! makes raw, async-signal-safe system calls on memory allocated before the
//! fork. It calls `setsid` (a terminal Ctrl-C reaches the runner's
//! foreground group, not the watchdog), resets every signal handler, ignores
//! SIGINT, SIGQUIT, SIGHUP, SIGTERM, SIGPIPE and the job-control stop
//! signals, points stdin/stdout/stderr at `/dev/null` and closes every other
//! descriptor, so it never holds a pipe someone is waiting on. Both socket
//! ends are close-on-exec, so launched programs never inherit them.

use std::collections::BTreeMap;
use std::os::raw::c_int;
use std::sync::Mutex;

#[cfg(target_os = "linux")]
use super::linux::{self, Stat};

/// Most sessions the watchdog remembers.
const MAX_SESSIONS: usize = 4096;
/// Most processes one `/proc` snapshot holds in the watchdog.
#[cfg(target_os = "linux")]
const MAX_PROCS: usize = 65536;

struct Watchdog {
    fd: c_int,
    pid: libc::pid_t,
}

struct Registry {
    running: Option<Watchdog>,
    sessions: BTreeMap<u32, u64>,
    failed: bool,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    running: None,
    sessions: BTreeMap::new(),
    failed: false,
});

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts the watchdog if it is not running yet.
pub(super) fn ensure() {
    let mut reg = registry();
    if reg.running.is_none() && !reg.failed {
        match start() {
            Ok(w) => reg.running = Some(w),
            Err(_) => reg.failed = true,
        }
    }
}

/// The watchdog's pid, so ownership scans never include it.
pub(super) fn pid() -> Option<u32> {
    registry().running.as_ref().map(|w| w.pid as u32)
}

/// Registers a session (or, without `/proc`, a process group).
pub(super) fn add(sid: u32, leader_start: u64) {
    let mut reg = registry();
    if reg.sessions.insert(sid, leader_start) != Some(leader_start) {
        send(&mut reg, &format!("add {sid} {leader_start}\n"));
    }
}

/// Unregisters a session that cleanup ended.
pub(super) fn del(sid: u32) {
    let mut reg = registry();
    if reg.sessions.remove(&sid).is_some() {
        send(&mut reg, &format!("del {sid}\n"));
    }
}

fn send(reg: &mut Registry, line: &str) {
    if write_line(reg.running.as_ref(), line) {
        return;
    }
    // The watchdog is gone (someone killed it): collect it, start a new one
    // and replay what is registered.
    if let Some(old) = reg.running.take() {
        #[allow(unsafe_code)]
        // SAFETY: closing our own descriptor; waitpid on our own child's pid.
        unsafe {
            libc::close(old.fd);
            libc::waitpid(old.pid, std::ptr::null_mut(), libc::WNOHANG);
        }
    }
    if let Ok(w) = start() {
        for (sid, start) in &reg.sessions {
            write_line(Some(&w), &format!("add {sid} {start}\n"));
        }
        reg.running = Some(w);
    }
}

fn write_line(w: Option<&Watchdog>, line: &str) -> bool {
    let Some(w) = w else { return false };
    #[cfg(target_os = "linux")]
    let flags = libc::MSG_NOSIGNAL;
    #[cfg(not(target_os = "linux"))]
    let flags = 0; // SO_NOSIGPIPE is set on the socket instead.
    loop {
        #[allow(unsafe_code)]
        // SAFETY: send on our own socket from a valid buffer.
        let n = unsafe { libc::send(w.fd, line.as_ptr().cast(), line.len(), flags) };
        if n == line.len() as isize {
            return true;
        }
        let e = std::io::Error::last_os_error().raw_os_error();
        if n < 0 && e == Some(libc::EINTR) {
            continue;
        }
        // EAGAIN: a stuck watchdog with a full buffer; the line is dropped
        // rather than blocking the runner. Lines are far below the atomic
        // write size, so they are never split.
        return n < 0 && e == Some(libc::EAGAIN);
    }
}

/// Memory the child uses, allocated before `fork()`.
struct Memory {
    sessions: Vec<(u32, u64)>,
    #[cfg(target_os = "linux")]
    table: Vec<Stat>,
    #[cfg(target_os = "linux")]
    marked: Vec<bool>,
}

fn start() -> std::io::Result<Watchdog> {
    let mut fds = [0 as c_int; 2];
    #[cfg(target_os = "linux")]
    let kind = libc::SOCK_STREAM | libc::SOCK_CLOEXEC;
    #[cfg(not(target_os = "linux"))]
    let kind = libc::SOCK_STREAM;
    let mut mem = Memory {
        sessions: Vec::with_capacity(MAX_SESSIONS),
        #[cfg(target_os = "linux")]
        table: Vec::with_capacity(MAX_PROCS),
        #[cfg(target_os = "linux")]
        marked: Vec::with_capacity(MAX_PROCS),
    };
    #[allow(unsafe_code)]
    // SAFETY: socketpair/fcntl/fork on valid arguments. The forked child runs
    // `child_main`, which never returns and only makes async-signal-safe
    // system calls on memory allocated before the fork (`mem`).
    unsafe {
        if libc::socketpair(libc::AF_UNIX, kind, 0, fds.as_mut_ptr()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        #[cfg(not(target_os = "linux"))]
        {
            // Not atomic with creation: a concurrent fork+exec elsewhere
            // may inherit these until it execs.
            libc::fcntl(fds[0], libc::F_SETFD, libc::FD_CLOEXEC);
            libc::fcntl(fds[1], libc::F_SETFD, libc::FD_CLOEXEC);
            let one: c_int = 1;
            libc::setsockopt(
                fds[1],
                libc::SOL_SOCKET,
                libc::SO_NOSIGPIPE,
                (&one as *const c_int).cast(),
                std::mem::size_of::<c_int>() as libc::socklen_t,
            );
        }
        let mut lim: libc::rlimit = std::mem::zeroed();
        let max_fd = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 {
            (lim.rlim_cur as u64).min(65536) as c_int
        } else {
            1024
        };
        let pid = libc::fork();
        if pid < 0 {
            let e = std::io::Error::last_os_error();
            libc::close(fds[0]);
            libc::close(fds[1]);
            return Err(e);
        }
        if pid == 0 {
            child_main(fds[0], max_fd, &mut mem);
        }
        libc::close(fds[0]);
        let fl = libc::fcntl(fds[1], libc::F_GETFL);
        libc::fcntl(fds[1], libc::F_SETFL, fl | libc::O_NONBLOCK);
        Ok(Watchdog { fd: fds[1], pid })
    }
}

#[allow(unsafe_code)]
// SAFETY (whole function): runs in the forked child; every call is a raw
// system call on stack memory or on `mem`, allocated before the fork, and
// `Vec::push` is only called below capacity, which never reallocates.
fn child_main(fd: c_int, max_fd: c_int, mem: &mut Memory) -> ! {
    unsafe {
        libc::setsid();
        libc::chdir(c"/".as_ptr());
        #[cfg(target_os = "linux")]
        libc::prctl(libc::PR_SET_NAME, c"ui-qa-watchdog".as_ptr());
        // Handlers belong to the host program: reset them all, then ignore
        // what a terminal or a tidy-up script might send.
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        let mut ign: libc::sigaction = std::mem::zeroed();
        ign.sa_sigaction = libc::SIG_IGN;
        for sig in 1..32 {
            libc::sigaction(sig, &dfl, std::ptr::null_mut());
        }
        for sig in [
            libc::SIGINT,
            libc::SIGQUIT,
            libc::SIGHUP,
            libc::SIGTERM,
            libc::SIGPIPE,
            libc::SIGTSTP,
            libc::SIGTTIN,
            libc::SIGTTOU,
            libc::SIGUSR1,
            libc::SIGUSR2,
        ] {
            libc::sigaction(sig, &ign, std::ptr::null_mut());
        }
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());

        // Keep only the read end, above stdio.
        let keep = if fd < 3 {
            libc::fcntl(fd, libc::F_DUPFD, 3)
        } else {
            fd
        };
        if keep < 0 {
            libc::_exit(1);
        }
        close_all_except(keep, max_fd);
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            for target in 0..3 {
                if null != target {
                    libc::dup2(null, target);
                }
            }
            if null > 2 {
                libc::close(null);
            }
        }

        let mut buf = [0u8; 512];
        let mut line = [0u8; 128];
        let mut len = 0usize;
        loop {
            let n = libc::read(keep, buf.as_mut_ptr().cast(), buf.len());
            if n < 0 {
                if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                break;
            }
            if n == 0 {
                break;
            }
            for &b in buf.iter().take(n as usize) {
                if b == b'\n' {
                    handle_line(line.get(..len).unwrap_or(&[]), &mut mem.sessions);
                    len = 0;
                } else if let Some(slot) = line.get_mut(len) {
                    *slot = b;
                    len += 1;
                }
            }
        }
        end_sessions(mem);
        libc::_exit(0)
    }
}

#[allow(unsafe_code)]
// SAFETY: close(2)/close_range(2) on descriptor numbers only.
fn close_all_except(keep: c_int, max_fd: c_int) {
    unsafe {
        #[cfg(target_os = "linux")]
        {
            let lo = libc::syscall(libc::SYS_close_range, 0u32, (keep - 1) as u32, 0u32);
            let hi = libc::syscall(libc::SYS_close_range, (keep + 1) as u32, u32::MAX, 0u32);
            if lo == 0 && hi == 0 {
                return;
            }
        }
        for fd in 0..max_fd.max(keep + 1) {
            if fd != keep {
                libc::close(fd);
            }
        }
    }
}

/// Applies one protocol line: `add <sid> <start>` or `del <sid>`.
fn handle_line(line: &[u8], sessions: &mut Vec<(u32, u64)>) {
    let mut words = line.split(|&b| b == b' ').filter(|w| !w.is_empty());
    let verb = words.next().unwrap_or(&[]);
    let Some(sid) = words
        .next()
        .and_then(number)
        .and_then(|n| u32::try_from(n).ok())
    else {
        return;
    };
    if sid <= 1 {
        return;
    }
    let pos = sessions.iter().position(|&(s, _)| s == sid);
    match verb {
        b"add" => {
            let start = words.next().and_then(number).unwrap_or(0);
            match pos {
                Some(i) => {
                    if let Some(slot) = sessions.get_mut(i) {
                        *slot = (sid, start);
                    }
                }
                None if sessions.len() < sessions.capacity() => sessions.push((sid, start)),
                None => {}
            }
        }
        b"del" => {
            if let Some(i) = pos {
                sessions.swap_remove(i);
            }
        }
        _ => {}
    }
}

fn number(word: &[u8]) -> Option<u64> {
    let mut v: u64 = 0;
    if word.is_empty() {
        return None;
    }
    for &b in word {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    Some(v)
}

#[allow(unsafe_code)]
// SAFETY: nanosleep with a valid timespec.
fn sleep_ms(ms: i64) {
    let ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: (ms * 1_000_000) as _,
    };
    unsafe {
        libc::nanosleep(&ts, std::ptr::null_mut());
    }
}

/// Ends every registered session: SIGTERM, up to 1 s, SIGKILL until empty.
#[cfg(target_os = "linux")]
fn end_sessions(mem: &mut Memory) {
    if mem.sessions.is_empty() {
        return;
    }
    let first = snapshot(mem);
    if first == 0 {
        return;
    }
    signal_marked(mem, libc::SIGTERM);
    for _ in 0..20 {
        sleep_ms(50);
        if snapshot(mem) == 0 {
            return;
        }
    }
    for _ in 0..40 {
        if snapshot(mem) == 0 {
            return;
        }
        signal_marked(mem, libc::SIGKILL);
        sleep_ms(50);
    }
}

#[cfg(target_os = "linux")]
fn signal_marked(mem: &Memory, sig: c_int) {
    for (s, &m) in mem.table.iter().zip(mem.marked.iter()) {
        if m && !s.is_dead() {
            linux::signal_verified(s.pid, s.start, sig);
        }
    }
}

/// Reads `/proc` into `mem.table` and marks what belongs to a registered
/// session (the same rules as the runner's scan, without its memory of
/// descendants). Returns how many marked processes are still running.
#[cfg(target_os = "linux")]
fn snapshot(mem: &mut Memory) -> usize {
    let me = std::process::id();
    mem.table.clear();
    mem.marked.clear();
    let table = &mut mem.table;
    linux::for_each_pid(|pid| {
        if table.len() < table.capacity() {
            if let Some(s) = linux::read_stat(pid) {
                table.push(s);
            }
        }
    });
    let sessions = &mem.sessions;
    let table = &mem.table;
    let session_ok = |s: &Stat| {
        sessions.iter().any(|&(sid, start)| {
            sid == s.sid
                && s.start >= start
                && !table
                    .iter()
                    .any(|l| l.pid == sid && l.leads_session() && l.start != start)
        })
    };
    for s in table.iter() {
        let m = s.pid > 1 && s.pid != me && session_ok(s);
        if mem.marked.len() < mem.marked.capacity() {
            mem.marked.push(m);
        }
    }
    loop {
        let mut changed = false;
        for i in 0..table.len() {
            if mem.marked.get(i).copied().unwrap_or(true) {
                continue;
            }
            let Some(s) = table.get(i) else { continue };
            if s.pid <= 1 || s.pid == me {
                continue;
            }
            let claimed = table
                .iter()
                .zip(mem.marked.iter())
                .any(|(o, &m)| m && (o.pid == s.ppid || (o.leads_session() && o.pid == s.sid)));
            if claimed {
                if let Some(slot) = mem.marked.get_mut(i) {
                    *slot = true;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    table
        .iter()
        .zip(mem.marked.iter())
        .filter(|(s, &m)| m && !s.is_dead())
        .count()
}

/// Without `/proc`: the registered ids are process groups.
#[cfg(not(target_os = "linux"))]
#[allow(unsafe_code)]
// SAFETY: kill(2) on registered process-group ids only.
fn end_sessions(mem: &mut Memory) {
    let any_alive = |mem: &Memory| {
        mem.sessions
            .iter()
            .any(|&(g, _)| unsafe { libc::kill(-(g as c_int), 0) } == 0)
    };
    for &(g, _) in mem.sessions.iter() {
        unsafe { libc::kill(-(g as c_int), libc::SIGTERM) };
    }
    for _ in 0..20 {
        if !any_alive(mem) {
            return;
        }
        sleep_ms(50);
    }
    for &(g, _) in mem.sessions.iter() {
        unsafe { libc::kill(-(g as c_int), libc::SIGKILL) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_lines() {
        let mut s = Vec::with_capacity(2);
        handle_line(b"add 4242 77", &mut s);
        handle_line(b"add 4243 78", &mut s);
        handle_line(b"add 4244 79", &mut s); // over capacity: dropped
        handle_line(b"add 1 0", &mut s); // never init
        handle_line(b"bogus 12", &mut s);
        assert_eq!(s, vec![(4242, 77), (4243, 78)]);
        handle_line(b"del 4242", &mut s);
        assert_eq!(s, vec![(4243, 78)]);
    }
}
