//! The tally after several flows: how many passed, failed, were blocked,
//! and which ones did not pass, with their first reason.

use super::style::{Paint, Tone};
use super::{clean, clean_path};
use qa_core::result::{RunResult, RunStatus};
use qa_core::secrets::Secrets;
use std::fmt::Write;
use std::path::PathBuf;
use std::time::Duration;

/// `6 flows in 12.4 s: 4 passed, 1 failed, 1 blocked` and one line per
/// flow that did not pass.
pub fn render_tally(
    runs: &[(PathBuf, &RunResult)],
    took: Duration,
    secrets: &Secrets,
    paint: Paint,
) -> String {
    let count = |s: RunStatus| runs.iter().filter(|(_, r)| r.status == s).count();
    let mut parts = Vec::new();
    for (status, word, tone) in [
        (RunStatus::Passed, "passed", Tone::Good),
        (RunStatus::Failed, "failed", Tone::Bad),
        (RunStatus::Blocked, "blocked", Tone::Warn),
    ] {
        let n = count(status);
        if n > 0 {
            parts.push(paint.paint(tone, &format!("{n} {word}")));
        }
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n{} flow{} in {:.1} s: {}",
        runs.len(),
        if runs.len() == 1 { "" } else { "s" },
        took.as_secs_f64(),
        if parts.is_empty() {
            "none ran".to_string()
        } else {
            parts.join(", ")
        }
    );
    for (path, r) in runs.iter().filter(|(_, r)| r.status != RunStatus::Passed) {
        let tone = match r.status {
            RunStatus::Blocked => Tone::Warn,
            RunStatus::Passed | RunStatus::Failed => Tone::Bad,
        };
        let reason = r
            .reason
            .as_deref()
            .map(|x| clean(&secrets.redact(x)).into_owned())
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {} {}: {reason}",
            paint.paint(tone, r.status.as_str()),
            clean_path(path)
        );
    }
    out
}
