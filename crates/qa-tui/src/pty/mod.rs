//! The pseudo-terminal under a session: one implementation per OS behind
//! one set of names, chosen here and nowhere else.
//!
//! [`spawn`] starts the planned program on a new terminal of the planned
//! size, registered with the run's process owner, and hands back its four
//! ends: [`Output`] (what the program writes, read in chunks), [`Input`]
//! (what it reads, and the terminal size), [`Child`] (how it ends) and
//! [`Line`] (hanging the terminal up). [`probe`] says whether this host can
//! open one at all.
//!
//! - Unix (`unix.rs`): `pty-process` — a kernel PTY; the program leads a
//!   new session.
//! - Windows (`windows/`): ConPTY (`CreatePseudoConsole`, Windows 10 1809+)
//!   over two anonymous pipes, with blocking reads and writes on threads of
//!   their own; the program is created suspended, put in the run's Job
//!   Object, then resumed.
//! - Elsewhere (`unsupported.rs`): the driver answers BLOCKED.
//!
//! The pump, the session and the verdicts above this module are the same
//! on every OS: they see bytes, a size and an exit, never a file
//! descriptor or a handle.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as os;

// The Windows backend's pure parts (command line, environment block,
// output chunks, the drain before closing, launch errors) compile into
// every test build, so their unit tests run on Linux too; its system calls
// compile on Windows only. Off Windows, only those tests use them.
#[cfg(any(windows, test))]
#[cfg_attr(not(windows), allow(dead_code))]
mod windows;
#[cfg(windows)]
use windows as os;

#[cfg(not(any(unix, windows)))]
mod unsupported;
#[cfg(not(any(unix, windows)))]
use unsupported as os;

pub(crate) use os::{probe, spawn, Child, Input, Line, Output};

/// The label the program is registered under with the run's process owner.
pub(crate) const LABEL: &str = "terminal target";

/// A program running on a new terminal.
pub(crate) struct Spawned {
    /// The program's process id.
    pub(crate) pid: u32,
    /// What the program writes to the terminal.
    pub(crate) output: Output,
    /// What the program reads from the terminal, and the terminal's size.
    pub(crate) input: Input,
    /// The program itself, to wait for its end.
    pub(crate) child: Child,
    /// The terminal line, to hang it up.
    pub(crate) line: Line,
}

/// How the program ended, as the OS reports it. Both `None`: waiting for
/// it failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ended {
    /// Exit code, when it exited (on Windows, every end is an exit code).
    pub(crate) code: Option<i32>,
    /// Signal number, when a signal ended it (Unix).
    pub(crate) signal: Option<i32>,
}
