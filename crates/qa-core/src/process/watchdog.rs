//! The watchdog: ends registered sessions after the runner dies, even by
//! SIGKILL.
//!
//! One per process, started by the first [`ProcessOwner`](super::ProcessOwner)
//! with `fork()` — no re-exec, so it works inside any host binary. Runner and
//! watchdog share a Unix socket pair (a pipe that cannot raise SIGPIPE). The
//! runner writes `add <sid> <leader start>\n` and `del <sid>\n` for owned
//! sessions, and `track <pid> <start>\n` and `untrack <pid>\n` for every
//! other owned process it found (descendants that escaped their session,
//! adopted orphans); the watchdog only reads. When the read returns
//! end-of-file, every copy of the runner's end is closed — the runner
//! exited or was killed — and the watchdog ends everything registered and
//! everything descended from it, remembering every process it ever matched
//! (so a double fork is followed through its exited middle process): rounds
//! of SIGSTOP until nothing new appears (a process that would respawn is
//! frozen with its children), then SIGKILL, until `/proc` shows nothing
//! matched three times in a row; then it exits. There is no SIGTERM on this
//! path: with the runner gone no subreaper catches what a SIGTERM handler
//! might double-fork. A runner that exits
//! normally stops it with [`stop`] and collects it, so it never becomes a
//! zombie of init.
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
/// Most individually tracked processes the watchdog remembers.
const MAX_TRACKED: usize = 4096;
/// Most processes the watchdog remembers having matched while it ends them.
#[cfg(target_os = "linux")]
const MAX_SEEN: usize = 16384;
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
    tracked: BTreeMap<u32, u64>,
    scratch: Vec<String>,
    failed: bool,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    running: None,
    sessions: BTreeMap::new(),
    tracked: BTreeMap::new(),
    scratch: Vec::new(),
    failed: false,
});

/// Most scratch directories the watchdog removes.
const MAX_SCRATCH: usize = 64;
/// Longest scratch path (and so protocol line) the watchdog takes.
const MAX_LINE: usize = 4096;

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
// Used by the Linux process table (`owned.rs`).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
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

/// Registers one owned process by `(pid, start)`.
// Used by the Linux process table (`owned.rs`).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(super) fn track(pid: u32, start: u64) {
    let mut reg = registry();
    if reg.tracked.len() < MAX_TRACKED && reg.tracked.insert(pid, start) != Some(start) {
        send(&mut reg, &format!("track {pid} {start}\n"));
    }
}

/// Unregisters a process that cleanup ended.
// Used by the Linux process table (`owned.rs`).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(super) fn untrack(pid: u32) {
    let mut reg = registry();
    if reg.tracked.remove(&pid).is_some() {
        send(&mut reg, &format!("untrack {pid}\n"));
    }
}

/// Registers a run's scratch directory (an absolute, canonical path whose
/// last component is `work`): if the runner dies, the watchdog removes it
/// after ending the processes, so no browser profile or other run state is
/// left at rest. A path with a newline, or too long, is not registered.
pub(super) fn scratch(path: &str) {
    if path.contains('\n') || path.len() + 16 > MAX_LINE || !path.starts_with('/') {
        return;
    }
    ensure();
    let mut reg = registry();
    if reg.scratch.len() < MAX_SCRATCH && !reg.scratch.iter().any(|p| p == path) {
        reg.scratch.push(path.to_string());
        send(&mut reg, &format!("scratch {path}\n"));
    }
}

/// Unregisters a scratch directory the runner removed itself.
pub(super) fn unscratch(path: &str) {
    let mut reg = registry();
    if let Some(i) = reg.scratch.iter().position(|p| p == path) {
        reg.scratch.swap_remove(i);
        send(&mut reg, &format!("unscratch {path}\n"));
    }
}

/// Stops the watchdog at a normal exit of the host: closes the runner's end
/// (the watchdog ends whatever is still registered, then exits) and
/// collects it, waiting until `deadline` at most. Registrations after this
/// start a new one.
pub(super) fn stop(deadline: crate::deadline::Deadline) {
    let Some(w) = registry().running.take() else {
        return;
    };
    #[allow(unsafe_code)]
    // SAFETY: closing our own descriptor; waitpid on our own child's pid.
    unsafe {
        libc::close(w.fd);
        // With nothing registered it exits as soon as it reads the end of
        // the socket: look again after 1 ms, then after waits that double
        // up to 10 ms.
        let mut wait = 1;
        loop {
            let r = libc::waitpid(w.pid, std::ptr::null_mut(), libc::WNOHANG);
            if r != 0 || deadline.expired() {
                return;
            }
            sleep_ms(wait);
            wait = (wait * 2).min(10);
        }
    }
}

/// The processes registered with [`track`] and not yet [`untrack`]ed
/// (read by the Linux owner's tests).
#[cfg(all(test, target_os = "linux"))]
pub(super) fn tracked() -> Vec<u32> {
    registry().tracked.keys().copied().collect()
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
        for (pid, start) in &reg.tracked {
            write_line(Some(&w), &format!("track {pid} {start}\n"));
        }
        for path in &reg.scratch {
            write_line(Some(&w), &format!("scratch {path}\n"));
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
    tracked: Vec<(u32, u64)>,
    #[cfg(target_os = "linux")]
    table: Vec<Stat>,
    #[cfg(target_os = "linux")]
    marked: Vec<bool>,
    /// `(pid, start)` of every process ever matched while ending.
    #[cfg(target_os = "linux")]
    seen: Vec<(u32, u64)>,
    /// Scratch directories to remove, as NUL-terminated paths.
    scratch: Vec<[u8; MAX_LINE]>,
}

fn start() -> std::io::Result<Watchdog> {
    let mut fds = [0 as c_int; 2];
    #[cfg(target_os = "linux")]
    let kind = libc::SOCK_STREAM | libc::SOCK_CLOEXEC;
    #[cfg(not(target_os = "linux"))]
    let kind = libc::SOCK_STREAM;
    let mut mem = Memory {
        sessions: Vec::with_capacity(MAX_SESSIONS),
        tracked: Vec::with_capacity(MAX_TRACKED),
        #[cfg(target_os = "linux")]
        table: Vec::with_capacity(MAX_PROCS),
        #[cfg(target_os = "linux")]
        marked: Vec::with_capacity(MAX_PROCS),
        #[cfg(target_os = "linux")]
        seen: Vec::with_capacity(MAX_SEEN),
        scratch: Vec::with_capacity(MAX_SCRATCH),
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
        show_counts(0, 0);
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
        let mut line = [0u8; MAX_LINE];
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
                    let l = line.get(..len).unwrap_or(&[]);
                    if !handle_scratch(l, &mut mem.scratch) {
                        handle_line(l, &mut mem.sessions, &mut mem.tracked);
                    }
                    len = 0;
                    #[cfg(target_os = "linux")]
                    show_counts(mem.sessions.len(), mem.tracked.len());
                } else if let Some(slot) = line.get_mut(len) {
                    *slot = b;
                    len += 1;
                }
            }
        }
        end_sessions(mem);
        #[cfg(target_os = "linux")]
        for path in mem.scratch.iter() {
            remove_scratch(path);
        }
        libc::_exit(0)
    }
}

/// Names the watchdog `ui-qa-wd S/T` (S sessions and T single processes
/// it guards), so `ps` shows what it would end. Stack memory only.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
// SAFETY: prctl(PR_SET_NAME) with a NUL-terminated stack buffer.
fn show_counts(sessions: usize, tracked: usize) {
    let mut name = [0u8; 16];
    let mut n = 0;
    let mut put = |b: u8| {
        if n < 15 {
            name[n] = b;
            n += 1;
        }
    };
    for &b in b"ui-qa-wd " {
        put(b);
    }
    let digits = |mut v: usize, put: &mut dyn FnMut(u8)| {
        let mut d = [0u8; 20];
        let mut k = 0;
        loop {
            d[k] = b'0' + (v % 10) as u8;
            k += 1;
            v /= 10;
            if v == 0 || k == d.len() {
                break;
            }
        }
        while k > 0 {
            k -= 1;
            put(d[k]);
        }
    };
    digits(sessions, &mut put);
    put(b'/');
    digits(tracked, &mut put);
    unsafe {
        libc::prctl(libc::PR_SET_NAME, name.as_ptr());
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

/// Applies `scratch <path>` / `unscratch <path>`; false for other lines.
fn handle_scratch(line: &[u8], list: &mut Vec<[u8; MAX_LINE]>) -> bool {
    let (add, path) = if let Some(p) = line.strip_prefix(b"scratch ") {
        (true, p)
    } else if let Some(p) = line.strip_prefix(b"unscratch ") {
        (false, p)
    } else {
        return false;
    };
    if path.is_empty() || path.len() >= MAX_LINE || path.contains(&0) {
        return true;
    }
    let same =
        |e: &[u8; MAX_LINE]| e.get(..path.len()) == Some(path) && e.get(path.len()) == Some(&0);
    let pos = list.iter().position(same);
    match (add, pos) {
        (true, None) if list.len() < list.capacity() => {
            let mut e = [0u8; MAX_LINE];
            if let Some(d) = e.get_mut(..path.len()) {
                d.copy_from_slice(path);
            }
            list.push(e);
        }
        (false, Some(i)) => {
            list.swap_remove(i);
        }
        _ => {}
    }
    true
}

/// Removes one registered scratch directory after the runner died: the
/// path is walked from `/` one component at a time without following a
/// symlink (the run directory's path is canonical, so a symlink on it was
/// put there by someone else: nothing is removed), its last component must
/// be `work`, and the tree below is removed without following symlinks.
/// When the directory holding `work` is named `ui-qa-…` (a helper user's
/// scratch base), it is removed too if that left it empty.
/// Raw system calls on stack memory only.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
// SAFETY (whole function): openat/unlinkat/close on descriptors this
// function opened, with NUL-terminated stack buffers.
fn remove_scratch(path: &[u8; MAX_LINE]) {
    let len = path.iter().position(|&b| b == 0).unwrap_or(0);
    let p = path.get(..len).unwrap_or(&[]);
    if p.first() != Some(&b'/') || !p.ends_with(b"/work") {
        return;
    }
    unsafe {
        let mut dir = libc::open(
            c"/".as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        );
        if dir < 0 {
            return;
        }
        let comps: usize = p.split(|&b| b == b'/').filter(|c| !c.is_empty()).count();
        let mut i = 0;
        // The directory holding `dir`, and `dir`'s name in it.
        let mut above: c_int = -1;
        let mut here = [0u8; 256];
        for comp in p.split(|&b| b == b'/').filter(|c| !c.is_empty()) {
            i += 1;
            let mut name = [0u8; 256];
            if comp.len() >= name.len() || comp == b"." || comp == b".." {
                break;
            }
            if let Some(d) = name.get_mut(..comp.len()) {
                d.copy_from_slice(comp);
            }
            if i == comps {
                remove_tree(dir, &name, 0);
                // A helper user's scratch (`<tmp>/ui-qa-<random>/work`):
                // its base goes too once empty.
                if above >= 0 && here.starts_with(b"ui-qa-") {
                    libc::unlinkat(above, here.as_ptr().cast(), libc::AT_REMOVEDIR);
                }
                break;
            }
            let next = libc::openat(
                dir,
                name.as_ptr().cast(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            );
            if above >= 0 {
                libc::close(above);
            }
            above = dir;
            here = name;
            if next < 0 {
                dir = -1;
                break;
            }
            dir = next;
        }
        if dir >= 0 {
            libc::close(dir);
        }
        if above >= 0 {
            libc::close(above);
        }
    }
}

/// Removes `name` (NUL-terminated) inside `dir`: a file or symlink is
/// unlinked, a directory emptied then removed; never follows a symlink.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
// SAFETY (whole function): raw system calls on descriptors it opened and on
// stack buffers; getdents64 records are read within the returned length.
fn remove_tree(dir: c_int, name: &[u8; 256], depth: u32) {
    unsafe {
        if libc::unlinkat(dir, name.as_ptr().cast(), 0) == 0 {
            return;
        }
        if depth > 48 {
            return;
        }
        let fd = libc::openat(
            dir,
            name.as_ptr().cast(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return;
        }
        for _ in 0..4 {
            let mut buf = [0u8; 2048];
            loop {
                let n = libc::syscall(libc::SYS_getdents64, fd, buf.as_mut_ptr(), buf.len());
                if n <= 0 {
                    break;
                }
                let n = n as usize;
                let mut off = 0usize;
                while off + 19 < n {
                    // struct linux_dirent64: u64 ino, i64 off, u16 reclen, u8 type, name
                    let reclen = u16::from_ne_bytes([
                        *buf.get(off + 16).unwrap_or(&0),
                        *buf.get(off + 17).unwrap_or(&0),
                    ]) as usize;
                    if reclen == 0 || off + reclen > n {
                        break;
                    }
                    let mut child = [0u8; 256];
                    let mut k = 0;
                    while k < 255 && off + 19 + k < off + reclen {
                        let b = *buf.get(off + 19 + k).unwrap_or(&0);
                        if b == 0 {
                            break;
                        }
                        if let Some(slot) = child.get_mut(k) {
                            *slot = b;
                        }
                        k += 1;
                    }
                    let dot = k == 1 && child[0] == b'.';
                    let dotdot = k == 2 && child[0] == b'.' && child[1] == b'.';
                    if k > 0 && !dot && !dotdot {
                        remove_tree(fd, &child, depth + 1);
                    }
                    off += reclen;
                }
            }
            if libc::unlinkat(dir, name.as_ptr().cast(), libc::AT_REMOVEDIR) == 0 {
                break;
            }
            libc::lseek(fd, 0, libc::SEEK_SET);
        }
        libc::close(fd);
    }
}

/// Applies one protocol line: `add <sid> <start>`, `del <sid>`,
/// `track <pid> <start>` or `untrack <pid>`.
fn handle_line(line: &[u8], sessions: &mut Vec<(u32, u64)>, tracked: &mut Vec<(u32, u64)>) {
    let mut words = line.split(|&b| b == b' ').filter(|w| !w.is_empty());
    let verb = words.next().unwrap_or(&[]);
    let Some(id) = words
        .next()
        .and_then(number)
        .and_then(|n| u32::try_from(n).ok())
    else {
        return;
    };
    if id <= 1 {
        return;
    }
    let list = match verb {
        b"add" | b"del" => sessions,
        b"track" | b"untrack" => tracked,
        _ => return,
    };
    let pos = list.iter().position(|&(s, _)| s == id);
    match verb {
        b"add" | b"track" => {
            let start = words.next().and_then(number).unwrap_or(0);
            match pos {
                Some(i) => {
                    if let Some(slot) = list.get_mut(i) {
                        *slot = (id, start);
                    }
                }
                None if list.len() < list.capacity() => list.push((id, start)),
                None => {}
            }
        }
        _ => {
            if let Some(i) = pos {
                list.swap_remove(i);
            }
        }
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

/// Ends everything registered and descended from it. The runner is gone,
/// so there is no graceful stop (a SIGTERM would only give a process that
/// handles it — a respawner — the chance to double-fork out of sight, with
/// no subreaper left to catch it): rounds of SIGSTOP to everything matched
/// until a snapshot finds nothing new (children forked before the stop took
/// effect are matched through their parent and stopped too), then SIGKILL,
/// until three snapshots in a row match nothing (bounded to about 10 s).
#[cfg(target_os = "linux")]
fn end_sessions(mem: &mut Memory) {
    if mem.sessions.is_empty() && mem.tracked.is_empty() {
        return;
    }
    let mut quiet = 0;
    for _ in 0..200 {
        let mut n = snapshot(mem);
        if n == 0 {
            quiet += 1;
            if quiet >= 3 {
                return;
            }
            sleep_ms(20);
            continue;
        }
        quiet = 0;
        for _ in 0..20 {
            signal_marked(mem, libc::SIGSTOP);
            let again = snapshot(mem);
            if again == n {
                break;
            }
            n = again;
        }
        signal_marked(mem, libc::SIGKILL);
        sleep_ms(20);
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

/// Reads `/proc` into `mem.table` and marks what is registered or descends
/// from something matched now or before (`mem.seen`): a child by parent, a
/// member of a session led by such a process — so a double fork is followed
/// through its middle process after it exited. Returns how many marked
/// processes are still running.
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
    let tracked = &mem.tracked;
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
    let seen = &mem.seen;
    // A process descends from one matched earlier if its parent or its
    // session leader is that process (same number, started no earlier).
    let from_seen = |s: &Stat| {
        seen.iter().any(|&(pid, start)| {
            pid > 1
                && s.start >= start
                && (s.ppid == pid || s.sid == pid)
                && !table.iter().any(|l| l.pid == pid && l.start != start)
        })
    };
    for s in table.iter() {
        let m = s.pid > 1
            && s.pid != me
            && (session_ok(s)
                || tracked.iter().any(|&(p, st)| p == s.pid && st == s.start)
                || seen.iter().any(|&(p, st)| p == s.pid && st == s.start)
                || from_seen(s));
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
    for (s, &m) in mem.table.iter().zip(mem.marked.iter()) {
        if m && mem.seen.len() < mem.seen.capacity()
            && !mem.seen.iter().any(|&(p, st)| p == s.pid && st == s.start)
        {
            mem.seen.push((s.pid, s.start));
        }
    }
    mem.table
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
        let mut t = Vec::with_capacity(2);
        handle_line(b"add 4242 77", &mut s, &mut t);
        handle_line(b"add 4243 78", &mut s, &mut t);
        handle_line(b"add 4244 79", &mut s, &mut t); // over capacity: dropped
        handle_line(b"add 1 0", &mut s, &mut t); // never init
        handle_line(b"bogus 12", &mut s, &mut t);
        assert_eq!(s, vec![(4242, 77), (4243, 78)]);
        handle_line(b"del 4242", &mut s, &mut t);
        assert_eq!(s, vec![(4243, 78)]);
        handle_line(b"track 5000 90", &mut s, &mut t);
        handle_line(b"track 5001 91", &mut s, &mut t);
        handle_line(b"untrack 5000", &mut s, &mut t);
        assert_eq!(t, vec![(5001, 91)]);
        assert_eq!(s, vec![(4243, 78)]);
    }
}
