//! Exit codes (stable) and how a run's result maps to one.

use qa_core::result::{RunResult, RunStatus};

/// Every run passed (or the command succeeded).
pub(crate) const PASSED: u8 = 0;
/// A run failed.
pub(crate) const FAILED: u8 = 1;
/// An invalid invocation or flow; nothing ran.
pub(crate) const INVALID: u8 = 2;
/// A run was blocked: the host lacks what it needs.
pub(crate) const BLOCKED: u8 = 3;
/// A run reached its flow deadline.
pub(crate) const TIMED_OUT: u8 = 124;
/// Cancelled (Ctrl-C).
pub(crate) const CANCELLED: u8 = 130;
/// stdout was closed (e.g. `| head`) or could not be written; like a
/// process ended by SIGPIPE (128 + 13), but after normal cleanup.
pub(crate) const STDOUT_CLOSED: u8 = 141;

/// The exit code of one run.
pub(crate) fn exit_for(r: &RunResult) -> u8 {
    if r.cancelled {
        CANCELLED
    } else if r.timed_out {
        TIMED_OUT
    } else {
        match r.status {
            RunStatus::Passed => PASSED,
            RunStatus::Failed => FAILED,
            RunStatus::Blocked => BLOCKED,
        }
    }
}

/// How bad an exit code is: several runs exit with the worst.
pub(crate) fn severity(code: u8) -> u8 {
    match code {
        CANCELLED => 5,
        TIMED_OUT => 4,
        FAILED => 3,
        BLOCKED => 2,
        _ => 0,
    }
}
