//! The tally after several flows (or over the runs `ui-qa report`
//! merged): the index report's link, how many passed, failed, were
//! blocked, and which ones did not pass, with their first reason.

use super::clean;
use super::style::{Paint, Tone};
use qa_core::result::{RunResult, RunStatus};
use qa_core::secrets::Secrets;
use std::fmt::Write;
use std::path::Path;
use std::time::Duration;

/// `6 flows in 12.4 s: 4 passed, 1 failed, 1 blocked` (without `took`:
/// `6 runs: …`), the `file:` link of the `index` report when there is one,
/// and one line per run that did not pass, named by its label (the flow
/// file, or the run's name).
pub fn render_tally(
    runs: &[(String, &RunResult)],
    took: Option<Duration>,
    index: Option<&Path>,
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
    let plural = if runs.len() == 1 { "" } else { "s" };
    let head = match took {
        Some(t) => format!("{} flow{plural} in {:.1} s", runs.len(), t.as_secs_f64()),
        None => format!("{} run{plural}", runs.len()),
    };
    let _ = writeln!(
        out,
        "\n{head}: {}",
        if parts.is_empty() {
            "none ran".to_string()
        } else {
            parts.join(", ")
        }
    );
    if let Some(index) = index {
        let _ = writeln!(
            out,
            "  report: {}",
            clean(&qa_core::evidence::file_uri(index))
        );
    }
    for (label, r) in runs.iter().filter(|(_, r)| r.status != RunStatus::Passed) {
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
            clean(label)
        );
    }
    out
}
