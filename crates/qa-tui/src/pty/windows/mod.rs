//! Windows: ConPTY. The program runs attached to a pseudoconsole whose
//! input and output are two anonymous pipes; the console host (conhost)
//! renders the console and sends it as VT sequences, which the pump feeds
//! to the same terminal model as on Unix.
//!
//! A launch, in order:
//!
//! 1. two pipes, then `CreatePseudoConsole` on the host's ends (which we
//!    close, so the output pipe ends when the host does), then the reader
//!    thread, so the host never waits on a full pipe;
//! 2. the program, created suspended with `STARTUPINFOEXW` +
//!    `PROC_THREAD_ATTRIBUTE_PSEUDOCONSOLE` (`process`);
//! 3. registered with the run's process owner, which puts it in the run's
//!    Job Object — before it runs, so nothing it starts escapes the job —
//!    then resumed. Cleanup (`end_all`) ends the job and reports it like
//!    every other process of the run. Should the assignment fail, the
//!    owner reports the process under `left` with why; the pseudoconsole's
//!    close still ends it with the session.
//! 4. an exit thread waits on the process handle, closes the
//!    pseudoconsole once the output went quiet (`drain`) while the reader
//!    keeps reading until the pipe ends, and reports the exit code once the
//!    output ended (bounded), so the model has the last frame first.
//!
//! Known ConPTY behaviour, handled here or above:
//!
//! - The bytes are the host's rendering, not the program's: it repaints
//!   regions, may reorder escape sequences relative to text, and forwards
//!   only the modes it knows. Assertions read the model's screen, never
//!   the byte stream, so a repaint changes nothing they see.
//! - The last output of a short-lived program is lost if the console
//!   closes before the host painted it: see `drain`.
//! - `ClosePseudoConsole` can block until its last frame is read (before
//!   Windows 11 24H2): the reader runs until the pipe ends, and async code
//!   only ever closes from a thread of its own (`conpty`).
//! - A child exiting does not end the output pipe; only closing the
//!   console does. The exit is therefore watched on the process handle.

// Pure parts: compiled and unit-tested on every OS.
mod chunks;
mod drain;
mod envblock;
mod errors;

// System calls: Windows only.
#[cfg(windows)]
mod conpty;
#[cfg(windows)]
mod pipes;
#[cfg(windows)]
mod process;
#[cfg(windows)]
mod terminal;

#[cfg(windows)]
pub(crate) use terminal::{probe, spawn, Child, Input, Line, Output};
