//! Writing to stdout and stderr without panicking: a closed or failing
//! stdout is remembered and later output skipped (the command then ends
//! with exit 141 after its normal cleanup); a closed stderr is ignored.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

static FAILED: AtomicBool = AtomicBool::new(false);

/// Writes and flushes; after the first failure, writes nothing more.
pub fn write(args: std::fmt::Arguments<'_>) {
    if FAILED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    if out.write_fmt(args).and_then(|()| out.flush()).is_err() {
        failed();
    }
}

/// Records that stdout could not be written (closed pipe or otherwise).
fn failed() {
    FAILED.store(true, Ordering::Relaxed);
}

/// Whether any write to stdout failed.
pub fn has_failed() -> bool {
    FAILED.load(Ordering::Relaxed)
}

/// Writes to stderr; failures are ignored.
pub fn write_stderr(args: std::fmt::Arguments<'_>) {
    let _ = std::io::stderr().lock().write_fmt(args);
}
