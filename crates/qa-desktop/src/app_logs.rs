//! The launched application's own output: its stdout and stderr go to
//! files in the run's scratch directory while it runs (what
//! `assertOutput` reads), and their tails are kept as evidence at close.
//! The same on every OS.

use crate::platform::Stream;
use qa_core::{ArtifactGroup, Note, NoteKind, SessionContext};
use std::path::PathBuf;
use std::process::Stdio;

/// The last bytes of the application's stdout/stderr kept as evidence.
const APP_LOG_CAP: usize = 256 * 1024;

/// The scratch directory (under the run's `work/`) the launched
/// application's stdout and stderr are written to.
pub const APP_LOG_DIR: &str = "desktop-app";

fn file(stream: Stream) -> &'static str {
    match stream {
        Stream::Stdout => "stdout.log",
        Stream::Stderr => "stderr.log",
    }
}

fn path(ctx: &SessionContext, stream: Stream) -> PathBuf {
    ctx.evidence
        .run_dir()
        .join("work")
        .join(APP_LOG_DIR)
        .join(file(stream))
}

/// Where a launched application's stdout and stderr go: new files in a
/// fresh scratch directory (nowhere, if they cannot be created). Call it
/// once per run: the directory is created fresh.
pub fn sinks(ctx: &SessionContext) -> (Stdio, Stdio) {
    let dir = ctx.evidence.scratch_dir(APP_LOG_DIR).ok();
    let sink = |stream: Stream| {
        dir.as_ref()
            .and_then(|d| std::fs::File::create(d.join(file(stream))).ok())
            .map(Stdio::from)
            .unwrap_or_else(Stdio::null)
    };
    (sink(Stream::Stdout), sink(Stream::Stderr))
}

/// What the application wrote to `stream` so far.
pub fn read(ctx: &SessionContext, stream: Stream) -> Vec<u8> {
    std::fs::read(path(ctx, stream)).unwrap_or_default()
}

/// Keeps the tail of the application's stdout and stderr as evidence
/// (scanned for secrets like any artifact; the scratch directory they were
/// written to is removed when the run ends). Returns notes for logs that
/// were withheld.
pub fn keep(ctx: &SessionContext) -> Vec<Note> {
    let mut notes = Vec::new();
    for (stream, base) in [
        (Stream::Stdout, "app-stdout"),
        (Stream::Stderr, "app-stderr"),
    ] {
        let bytes = read(ctx, stream);
        if bytes.is_empty() {
            continue;
        }
        let tail = &bytes[bytes.len().saturating_sub(APP_LOG_CAP)..];
        let name = ctx.evidence.unique_name(ArtifactGroup::Logs, base, "log");
        match ctx.evidence.write(ArtifactGroup::Logs, &name, tail, None) {
            Ok(Some(_)) | Err(_) => {}
            Ok(None) => notes.push(Note::new(
                NoteKind::Evidence,
                format!("{name} was withheld: it contained a secret value"),
            )),
        }
    }
    notes
}
