//! Raw Linux process-table access.
//!
//! Nothing here allocates: the watchdog child calls these functions after
//! `fork()` in a multi-threaded process, where only async-signal-safe calls
//! are allowed. Paths are built in stack buffers, files are read with
//! `open`/`read`/`close`, and `/proc` is listed with `getdents64`.

use std::os::raw::{c_int, c_long};

/// The fields of `/proc/<pid>/stat` cleanup needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stat {
    /// Process id.
    pub pid: u32,
    /// Parent process id (after any re-parenting).
    pub ppid: u32,
    /// Session id.
    pub sid: u32,
    /// Start time in clock ticks since boot (field 22): with the pid it
    /// names one process, even after the pid number is reused.
    pub start: u64,
    /// State letter (`R`, `S`, `D`, `Z`, …).
    pub state: u8,
}

impl Stat {
    /// A zombie or dead entry: the program is gone, only the status is left.
    pub fn is_dead(&self) -> bool {
        matches!(self.state, b'Z' | b'X' | b'x')
    }

    /// Leads its own session (it called `setsid`).
    pub fn leads_session(&self) -> bool {
        self.sid == self.pid
    }
}

fn parse_u64(field: &[u8]) -> Option<u64> {
    let mut v: u64 = 0;
    let mut any = false;
    for &b in field {
        if b.is_ascii_digit() {
            v = v.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
            any = true;
        } else if b == b'\n' {
            break;
        } else {
            return None;
        }
    }
    any.then_some(v)
}

/// Parses the text of `/proc/<pid>/stat`.
pub(super) fn parse_stat(pid: u32, text: &[u8]) -> Option<Stat> {
    // `comm` (field 2) may hold spaces and ')': the fields after the last
    // ')' are all numbers or the state letter.
    let close = text.iter().rposition(|&b| b == b')')?;
    let mut fields = text
        .get(close + 1..)?
        .split(|&b| b == b' ')
        .filter(|f| !f.is_empty());
    let state = *fields.next()?.first()?; // 3
    let ppid = parse_u64(fields.next()?)?; // 4
    let _pgrp = fields.next()?; // 5
    let sid = parse_u64(fields.next()?)?; // 6
    let start = parse_u64(fields.nth(15)?)?; // 22
    Some(Stat {
        pid,
        ppid: u32::try_from(ppid).ok()?,
        sid: u32::try_from(sid).ok()?,
        start,
        state,
    })
}

/// Writes `/proc/<pid>/<leaf>\0` into `buf`; returns the used length.
fn proc_path(buf: &mut [u8; 64], pid: u32, leaf: &[u8]) -> Option<usize> {
    let mut digits = [0u8; 10];
    let mut n = pid;
    let mut len = 0;
    loop {
        *digits.get_mut(len)? = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let mut at = 0;
    let mut push = |b: u8| -> Option<()> {
        *buf.get_mut(at)? = b;
        at += 1;
        Some(())
    };
    for &b in b"/proc/" {
        push(b)?;
    }
    for i in (0..len).rev() {
        push(*digits.get(i)?)?;
    }
    push(b'/')?;
    for &b in leaf {
        push(b)?;
    }
    push(0)?;
    Some(at)
}

/// Reads `/proc/<pid>/stat` without allocating (`None` once the process is
/// gone or unreadable).
pub(super) fn read_stat(pid: u32) -> Option<Stat> {
    let mut path = [0u8; 64];
    proc_path(&mut path, pid, b"stat")?;
    let mut buf = [0u8; 1024];
    #[allow(unsafe_code)]
    // SAFETY: `path` is NUL-terminated; `buf` is a valid writable buffer of
    // the given length; the fd is closed before returning.
    let n = unsafe {
        let fd = libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return None;
        }
        let mut total = 0usize;
        loop {
            let r = libc::read(fd, buf.as_mut_ptr().add(total).cast(), buf.len() - total);
            if r > 0 {
                total += r as usize;
                if total == buf.len() {
                    break;
                }
            } else if r == 0 || errno() != libc::EINTR {
                break;
            }
        }
        libc::close(fd);
        total
    };
    parse_stat(pid, buf.get(..n)?)
}

/// The calling thread's `errno` (no allocation).
pub(super) fn errno() -> c_int {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Calls `f` with every process id listed in `/proc`. Returns false if
/// `/proc` cannot be read.
pub(super) fn for_each_pid(mut f: impl FnMut(u32)) -> bool {
    let mut buf = [0u8; 4096];
    #[allow(unsafe_code)]
    // SAFETY: the path is NUL-terminated; getdents64 writes at most
    // `buf.len()` bytes into `buf`; the fd is closed before returning.
    unsafe {
        let fd = libc::open(
            c"/proc".as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return false;
        }
        loop {
            let n = libc::syscall(
                libc::SYS_getdents64,
                fd as c_long,
                buf.as_mut_ptr(),
                buf.len() as c_long,
            );
            if n <= 0 {
                break;
            }
            let n = n as usize;
            let mut off = 0usize;
            // struct linux_dirent64 { u64 ino; i64 off; u16 reclen; u8 type; char name[]; }
            while off + 19 < n {
                let reclen = match buf.get(off + 16..off + 18) {
                    Some(r) => u16::from_ne_bytes([r[0], r[1]]) as usize,
                    None => break,
                };
                if reclen == 0 {
                    break;
                }
                let name = buf.get(off + 19..(off + reclen).min(n)).unwrap_or(&[]);
                let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
                if let Some(pid) = name.get(..end).and_then(parse_u64) {
                    if let Ok(pid) = u32::try_from(pid) {
                        f(pid);
                    }
                }
                off += reclen;
            }
        }
        libc::close(fd);
    }
    true
}

/// Reads every process's stat (allocating; runner side only).
pub(super) fn scan() -> Vec<Stat> {
    let mut out = Vec::with_capacity(512);
    for_each_pid(|pid| {
        if let Some(s) = read_stat(pid) {
            out.push(s);
        }
    });
    out
}

/// Whether the process `(pid, start)` is still running (not gone, not a
/// zombie, pid not reused).
pub(super) fn running(pid: u32, start: u64) -> bool {
    matches!(read_stat(pid), Some(s) if s.start == start && !s.is_dead())
}

/// Outcome of [`signal_verified`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sent {
    /// The signal was delivered to the process named by `(pid, start)`.
    Delivered,
    /// That process is gone (or only its zombie is left).
    Gone,
    /// `kill` failed with this errno.
    Failed(c_int),
}

/// Sends `sig` to the process `(pid, start)` and only to it.
///
/// With `pidfd_open` (Linux 5.3+) this is free of pid-reuse races: the pidfd
/// is opened first, then the start time is checked, so a match proves the
/// pidfd names that very process. Older kernels fall back to check-then-kill.
pub(super) fn signal_verified(pid: u32, start: u64, sig: c_int) -> Sent {
    if pid <= 1 {
        return Sent::Failed(libc::EINVAL);
    }
    #[allow(unsafe_code)]
    // SAFETY: plain syscalls on integers; the pidfd is closed on every path.
    unsafe {
        let fd = libc::syscall(libc::SYS_pidfd_open, pid as c_long, 0 as c_long);
        if fd < 0 {
            let e = errno();
            if e == libc::ESRCH {
                return Sent::Gone;
            }
            if e != libc::ENOSYS {
                return Sent::Failed(e);
            }
            // No pidfd: verify, then kill (tiny reuse window).
            if !running(pid, start) {
                return Sent::Gone;
            }
            return if libc::kill(pid as c_int, sig) == 0 {
                Sent::Delivered
            } else if errno() == libc::ESRCH {
                Sent::Gone
            } else {
                Sent::Failed(errno())
            };
        }
        let fd = fd as c_int;
        let result = if !running(pid, start) {
            Sent::Gone
        } else if libc::syscall(
            libc::SYS_pidfd_send_signal,
            fd as c_long,
            sig as c_long,
            std::ptr::null::<libc::siginfo_t>(),
            0 as c_long,
        ) == 0
        {
            Sent::Delivered
        } else {
            match errno() {
                libc::ESRCH => Sent::Gone,
                e => Sent::Failed(e),
            }
        };
        libc::close(fd);
        result
    }
}

/// Makes this process a child subreaper: orphaned descendants re-parent to
/// it instead of init. Returns false if the kernel refused.
pub(super) fn become_subreaper() -> bool {
    #[allow(unsafe_code)]
    // SAFETY: prctl with integer arguments only.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) == 0
    }
}

/// Collects the zombie of `pid` if it is our child (`WNOHANG`: never waits).
/// Only for adopted orphans: tokio reaps the children it spawned.
pub(super) fn reap(pid: u32) -> bool {
    let mut status: c_int = 0;
    #[allow(unsafe_code)]
    // SAFETY: waitpid on one explicit pid with a valid status pointer.
    unsafe {
        libc::waitpid(pid as c_int, &mut status, libc::WNOHANG) == pid as c_int
    }
}

/// Collects every zombie child of this process (at host exit only: it
/// takes exit statuses other code may still want).
pub(super) fn reap_all() {
    loop {
        let mut status: c_int = 0;
        #[allow(unsafe_code)]
        // SAFETY: waitpid with a valid status pointer; WNOHANG never blocks.
        let r = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if r <= 0 {
            return;
        }
    }
}

/// What `/proc/<pid>/environ` says of one variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum EnvLookup {
    /// The variable and its value.
    Value(String),
    /// The environment was read and has no such variable.
    Absent,
    /// Nothing could be read: gone, not permitted, or empty (a process in
    /// the middle of `execve` shows an empty environment for a moment).
    Unknown,
}

/// The value of `var` in the initial environment of `pid`.
pub(super) fn environ_value(pid: u32, var: &str) -> EnvLookup {
    let Ok(bytes) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return EnvLookup::Unknown;
    };
    if bytes.is_empty() {
        return EnvLookup::Unknown;
    }
    bytes
        .split(|&b| b == 0)
        .find_map(|entry| {
            let rest = entry.strip_prefix(var.as_bytes())?.strip_prefix(b"=")?;
            String::from_utf8(rest.to_vec()).ok()
        })
        .map_or(EnvLookup::Absent, EnvLookup::Value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_odd_comm() {
        let text =
            b"4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 1 2 3\n";
        let s = parse_stat(4242, text).unwrap();
        assert_eq!((s.ppid, s.sid, s.start, s.state), (1, 4242, 987654, b'S'));
        assert!(s.leads_session());
    }

    #[test]
    fn reads_own_stat() {
        let me = std::process::id();
        let s = read_stat(me).unwrap();
        assert_eq!(s.pid, me);
        assert!(running(me, s.start));
        assert!(!running(me, s.start + 1));
        let mut seen = false;
        for_each_pid(|p| seen |= p == me);
        assert!(seen);
    }
}
