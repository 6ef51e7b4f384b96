//! Reports people open in a browser: `report.html` for one run, an index
//! over several runs, and JUnit XML for CI systems.
//!
//! Everything here is pure rendering: it reads a [`RunResult`] and, for the
//! run report, the artifact files the result names inside its run
//! directory; it writes nothing. The CLI and the runner decide where the
//! text goes.
//!
//! A run report is one self-contained HTML file: no network access and no
//! other file is needed to view it. Its Content-Security-Policy allows only
//! inline script and style, `data:`/`blob:` images and media, and
//! `connect-src 'none'`, so the page can never reach the network. Every
//! string from a result is untrusted page text and is escaped
//! ([`html::escape`]); no markup is ever taken from data.
//!
//! ```
//! use qa_runner::report::html::escape;
//! assert_eq!(escape("<b>\"x\" & 'y'</b>"), "&lt;b&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/b&gt;");
//! ```

pub mod html;
pub mod index;
pub mod junit;
pub mod run;

mod files;
mod media;
mod replay;
mod tree;

pub use index::{render_index, IndexEntry};
pub use run::{
    render_run, render_run_redacted, CleanReport, REPORT_STATIC_REDACTED, REPORT_WITHHELD,
};

use qa_core::result::RunResult;

/// Screenshots inlined into one run report at most; the rest are linked.
pub const MAX_INLINE_SCREENSHOTS: usize = 20;

/// A screenshot larger than this (bytes) is linked, not inlined.
pub const MAX_INLINE_SCREENSHOT_BYTES: u64 = 4 << 20;

/// Bytes of screenshots inlined into one run report at most.
pub const MAX_INLINE_SCREENSHOTS_TOTAL: u64 = 8 << 20;

/// Most bytes of step-trace pictures shown beside their steps, together
/// (the rest are linked).
pub const MAX_INLINE_TRACE_TOTAL: u64 = 8 << 20;

/// Bytes of video embedded into one run report at most; a larger video is
/// linked.
pub const MAX_EMBEDDED_VIDEO_BYTES: u64 = 32 << 20;

/// A terminal replay (asciicast) larger than this (bytes) is linked.
pub const MAX_EMBEDDED_CAST_BYTES: u64 = 8 << 20;

/// An accessibility snapshot larger than this (bytes) is linked, not drawn.
pub const MAX_TREE_FILE_BYTES: u64 = 4 << 20;

/// Tree nodes drawn in one run report at most (all snapshots together).
pub const MAX_TREE_NODES: usize = 5000;

/// Text captures shown inline at most; each is cut at
/// [`MAX_CAPTURE_BYTES`].
pub const MAX_INLINE_CAPTURES: usize = 10;

/// Bytes of one text capture shown inline at most.
pub const MAX_CAPTURE_BYTES: u64 = 64 << 10;

/// How a run is called in reports: its flow name, else its run id.
pub fn run_title(r: &RunResult) -> &str {
    r.flow_name
        .as_deref()
        .filter(|n| !n.trim().is_empty())
        .unwrap_or(&r.run_id)
}

/// `1.234 s` for a duration in milliseconds (`850 ms` under a second).
pub fn human_ms(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}

/// The smallest result document (a passing browser run, no steps), for
/// the tests of every report.
#[cfg(test)]
pub(crate) const MINIMAL_RESULT: &str = r#"{
    "schemaVersion": 1, "status": "PASSED", "timedOut": false, "cancelled": false,
    "stage": "cleanup",
    "selection": {
        "detectedTargetKind": "browser", "selectedBackend": "browser",
        "platformDriver": "browser/cdp", "presentation": "headless", "platform": "linux",
        "candidateBackends": [], "supportedCapabilities": [], "missingCapabilities": [],
        "whySelected": "the target is a URL", "guide": { "backend": "browser", "topic": "cdp" }
    },
    "steps": [], "assertions": [], "observations": [],
    "artifacts": { "screenshots": [], "videos": [], "traces": [], "terminalCaptures": [],
                   "accessibilitySnapshots": [], "observations": [], "downloads": [], "logs": [] },
    "cleanup": { "status": "clean", "ended": [], "left": [] },
    "evidenceDir": "/ws/runs/r1", "runId": "r1",
    "startedAt": "2026-12-03T12:00:00Z", "durationMs": 1234
}"#;

#[cfg(test)]
mod tests {
    use super::human_ms;

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(human_ms(0), "0 ms");
        assert_eq!(human_ms(999), "999 ms");
        assert_eq!(human_ms(1000), "1.0 s");
        assert_eq!(human_ms(12_449), "12.4 s");
    }
}
