//! The summary of one run: status, why, what the failed step expected and
//! found (with the candidate elements of a locator failure), what a person
//! must do when BLOCKED, the notes worth reading, the evidence and cleanup.

use super::style::{Paint, Tone};
use super::{clean, clean_path};
use qa_core::mismatch::Mismatch;
use qa_core::process::CleanupStatus;
use qa_core::result::{ObservationKind, RunResult, RunStatus, StepRecord, StepStatus};
use qa_core::secrets::Secrets;
use std::fmt::Write;
use std::path::Path;

/// Notes printed at most.
const MAX_NOTES: usize = 20;

/// Artifacts listed at most.
const MAX_ARTIFACTS: usize = 50;

/// `text` redacted and made safe for a terminal.
fn safe(secrets: &Secrets, text: &str) -> String {
    clean(&secrets.redact(text)).into_owned()
}

/// The summary of one run, every line ending in a newline. `report` is the
/// run's `report.html` when it was written; its `file:` link comes first.
pub fn render_summary(
    flow: &Path,
    r: &RunResult,
    report: Option<&Path>,
    secrets: &Secrets,
    paint: Paint,
) -> String {
    let mut out = String::new();
    let unchecked = r
        .observations
        .iter()
        .any(|o| o.kind == ObservationKind::NothingChecked);
    let tone = match r.status {
        RunStatus::Passed if unchecked => Tone::Warn,
        RunStatus::Passed => Tone::Good,
        RunStatus::Failed => Tone::Bad,
        RunStatus::Blocked => Tone::Warn,
    };
    let mut status = r.status.as_str().to_string();
    if r.timed_out {
        status.push_str(" (timed out)");
    }
    if r.cancelled {
        status.push_str(" (cancelled)");
    }
    if unchecked {
        status.push_str(" (nothing checked)");
    }
    let _ = writeln!(
        out,
        "{}: {} in {} ms",
        paint.paint(tone, &status),
        clean_path(flow),
        r.duration_ms
    );
    if let Some(report) = report {
        let _ = writeln!(
            out,
            "  report: {}",
            clean(&qa_core::evidence::file_uri(report))
        );
    }
    if let Some(reason) = &r.reason {
        let _ = writeln!(out, "  reason: {}", safe(secrets, reason));
    }
    for s in &r.steps {
        if matches!(s.status, StepStatus::Failed | StepStatus::TimedOut) {
            failed_step(&mut out, r, s, secrets, paint);
        }
    }
    blocked(&mut out, r, secrets);
    let notes: Vec<_> = r
        .observations
        .iter()
        .filter(|o| o.kind != ObservationKind::Environment)
        .collect();
    for o in notes.iter().take(MAX_NOTES) {
        let _ = writeln!(out, "  note: {}", safe(secrets, &o.message));
    }
    if notes.len() > MAX_NOTES {
        let _ = writeln!(
            out,
            "  … and {} more notes in the result",
            notes.len() - MAX_NOTES
        );
    }
    // The pictures of the step trace and the frames kept without an
    // encoder belong to `trace.json` and the frame index: one line each.
    let all: Vec<_> = r
        .artifacts
        .all()
        .into_iter()
        .filter(|a| !is_part_of_another(&a.path))
        .collect();
    if !all.is_empty() {
        let _ = writeln!(out, "  evidence:");
        for a in all.iter().take(MAX_ARTIFACTS) {
            let _ = writeln!(out, "    {}", clean(&a.uri));
        }
        if all.len() > MAX_ARTIFACTS {
            let _ = writeln!(out, "    … and {} more", all.len() - MAX_ARTIFACTS);
        }
    }
    let _ = writeln!(
        out,
        "  cleanup: {} ({} ended, {} left)",
        match r.cleanup.status {
            CleanupStatus::Clean => paint.paint(Tone::Good, "clean"),
            CleanupStatus::Incomplete => paint.paint(Tone::Bad, "INCOMPLETE"),
        },
        r.cleanup.ended.len(),
        r.cleanup.left.len()
    );
    let _ = writeln!(
        out,
        "  result: {}",
        qa_core::evidence::file_uri(&Path::new(&r.evidence_dir).join("result.json"))
    );
    if r.status == RunStatus::Blocked {
        let _ = writeln!(
            out,
            "  guide: ui-qa guide --backend {} --topic {}",
            r.selection.guide.backend, r.selection.guide.topic
        );
    }
    out
}

/// A failed step: its reason when the run's does not already say it, and
/// Expected / Received.
fn failed_step(out: &mut String, r: &RunResult, s: &StepRecord, secrets: &Secrets, paint: Paint) {
    let repeated = |reason: &str| r.reason.as_deref().is_some_and(|x| x.contains(reason));
    let title = match &s.name {
        Some(n) => format!("step {} {} {:?}", s.index, clean(&s.action), clean(n)),
        None => format!("step {} {}", s.index, clean(&s.action)),
    };
    match s.reason.as_deref().filter(|x| !repeated(x)) {
        Some(reason) => {
            let _ = writeln!(out, "  {title}: {}", safe(secrets, reason));
        }
        None if s.failure.is_some() => {
            let _ = writeln!(out, "  {title}:");
        }
        None => {}
    }
    if let Some(m) = &s.failure {
        mismatch(out, m, secrets, paint);
    }
}

/// The labelled lines of a mismatch.
fn mismatch(out: &mut String, m: &Mismatch, secrets: &Secrets, paint: Paint) {
    if let Some(l) = &m.locator {
        let _ = writeln!(out, "    locator:  {}", safe(secrets, l));
    }
    if let Some(e) = &m.expected {
        let _ = writeln!(
            out,
            "    expected: {}",
            paint.paint(Tone::Good, &safe(secrets, e))
        );
    }
    if let Some(x) = &m.received {
        let _ = writeln!(
            out,
            "    received: {}",
            paint.paint(Tone::Bad, &safe(secrets, x))
        );
    }
    if m.candidates.is_empty() {
        return;
    }
    let of = m.candidates_of();
    let what = if m.candidates_matched() {
        "matched"
    } else {
        "closest"
    };
    let _ = writeln!(out, "    {what}{of}:");
    for c in &m.candidates {
        let mut line = format!("      - {}", safe(secrets, &c.describe()));
        if let Some(l) = &c.locator {
            line.push_str(&paint.paint(Tone::Dim, &format!("  {}", safe(secrets, l))));
        }
        let _ = writeln!(out, "{line}");
    }
}

/// What a person must do, each sentence once.
fn blocked(out: &mut String, r: &RunResult, secrets: &Secrets) {
    let Some(h) = &r.blocked_handoff else {
        return;
    };
    let mut said: Vec<&str> = r.reason.iter().map(String::as_str).collect();
    if !said.contains(&h.reason.as_str()) {
        let _ = writeln!(out, "  blocked: {}", safe(secrets, &h.reason));
        said.push(&h.reason);
    }
    for m in &h.missing_capabilities {
        if said.contains(&m.reason.as_str()) {
            let _ = writeln!(out, "  missing {}", clean(&m.id));
        } else {
            let _ = writeln!(out, "  missing {}: {}", clean(&m.id), clean(&m.reason));
        }
        let _ = writeln!(out, "    fix: {}", clean(&m.remediation));
    }
}

/// A trace picture (`traces/trace-stepN-before.jpg`) or a kept video frame
/// (`videos/page-frame-00001.jpg`): listed by its index file instead.
fn is_part_of_another(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    (path.contains("/artifacts/traces/") && name.starts_with("trace-step"))
        || (path.contains("/artifacts/videos/") && name.contains("-frame-"))
}

#[cfg(test)]
mod parts {
    use super::is_part_of_another;

    #[test]
    fn trace_pictures_and_kept_frames_are_listed_by_their_index() {
        assert!(is_part_of_another(
            "/w/runs/r/artifacts/traces/trace-step2-after.jpg"
        ));
        assert!(is_part_of_another(
            "/w/runs/r/artifacts/videos/page-frame-00003.jpg"
        ));
        assert!(!is_part_of_another("/w/runs/r/artifacts/traces/trace.json"));
        assert!(!is_part_of_another(
            "/w/runs/r/artifacts/videos/page-frames.json"
        ));
        assert!(!is_part_of_another("/w/runs/r/artifacts/videos/page.webm"));
        assert!(!is_part_of_another(
            "/w/runs/r/artifacts/screenshots/trace-step1.png"
        ));
    }
}
