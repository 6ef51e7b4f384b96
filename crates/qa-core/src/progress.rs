//! Progress: sanitized stage events, written to `progress.jsonl` (capped at
//! 1 MiB) and forwarded to a [`ProgressSink`] (the CLI's human output).
//!
//! Events carry stage names, step indexes, action and step names, statuses,
//! durations and the drivers' short details only — never step values, page
//! text or reasons — and pass through the secret redaction anyway.

use crate::evidence::Evidence;
use crate::result::{RunResult, Selection};
use crate::secrets::Secrets;
use serde::Serialize;
use std::fs::File;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Cap of `progress.jsonl`.
pub const MAX_PROGRESS_BYTES: u64 = 1024 * 1024;

/// One progress event.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressEvent {
    /// Milliseconds since the run started (filled in by the journal).
    pub t_ms: u64,
    /// `stageStart`, `stageEnd`, `selected` or `finished`.
    pub event: &'static str,
    /// Stage name (`launch`, `step 2 click`, `cleanup`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stage: Option<String>,
    /// 1-based step index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<usize>,
    /// Action name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// Status at the end of a stage or run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Duration of the stage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Selected driver (for `selected`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// The step's name, as the flow gives it (step stages).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What the step did, in the driver's short words (`ran the action
    /// "click"`), at the end of a step stage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl ProgressEvent {
    fn base(event: &'static str) -> ProgressEvent {
        ProgressEvent {
            t_ms: 0,
            event,
            stage: None,
            step: None,
            action: None,
            status: None,
            duration_ms: None,
            driver: None,
            name: None,
            detail: None,
        }
    }

    /// Adds the step's name and what it did.
    pub fn described(mut self, name: Option<&str>, detail: Option<&str>) -> ProgressEvent {
        self.name = name.map(Into::into);
        self.detail = detail.map(Into::into);
        self
    }

    /// A stage started.
    pub fn stage_start(stage: &str, step: Option<usize>, action: Option<&str>) -> ProgressEvent {
        ProgressEvent {
            stage: Some(stage.into()),
            step,
            action: action.map(Into::into),
            ..Self::base("stageStart")
        }
    }

    /// A stage ended.
    pub fn stage_end(
        stage: &str,
        step: Option<usize>,
        action: Option<&str>,
        status: &str,
        took: Duration,
    ) -> ProgressEvent {
        ProgressEvent {
            stage: Some(stage.into()),
            step,
            action: action.map(Into::into),
            status: Some(status.into()),
            duration_ms: Some(took.as_millis() as u64),
            ..Self::base("stageEnd")
        }
    }

    /// A driver was selected.
    pub fn selected(sel: &Selection) -> ProgressEvent {
        ProgressEvent {
            driver: Some(sel.platform_driver.clone()),
            status: Some(
                if sel.missing_capabilities.is_empty() {
                    "available"
                } else {
                    "blocked"
                }
                .into(),
            ),
            ..Self::base("selected")
        }
    }

    /// The run finished.
    pub fn finished(r: &RunResult) -> ProgressEvent {
        ProgressEvent {
            status: Some(r.status.as_str().into()),
            duration_ms: Some(r.duration_ms),
            ..Self::base("finished")
        }
    }
}

/// Receives progress events (e.g. to print them).
pub trait ProgressSink: Send + Sync {
    /// Called for every event, after sanitizing.
    fn event(&self, ev: &ProgressEvent);
}

/// A sink that ignores everything.
pub struct NoProgress;

impl ProgressSink for NoProgress {
    fn event(&self, _ev: &ProgressEvent) {}
}

/// The run's journal.
pub struct Progress<'a> {
    file: Mutex<Option<(File, u64)>>,
    secrets: Arc<Secrets>,
    sink: &'a dyn ProgressSink,
    started: Instant,
}

impl<'a> Progress<'a> {
    /// Opens `progress.jsonl` in the run directory.
    pub fn open(evidence: &Evidence, secrets: Arc<Secrets>, sink: &'a dyn ProgressSink) -> Self {
        let file = evidence
            .root_file("progress.jsonl")
            .ok()
            .map(|(_, f)| (f, 0));
        Progress {
            file: Mutex::new(file),
            secrets,
            sink,
            started: Instant::now(),
        }
    }

    /// Records and forwards one event.
    pub fn emit(&self, mut ev: ProgressEvent) {
        ev.t_ms = self.started.elapsed().as_millis() as u64;
        for s in [
            &mut ev.stage,
            &mut ev.action,
            &mut ev.status,
            &mut ev.driver,
            &mut ev.name,
            &mut ev.detail,
        ]
        .into_iter()
        .flatten()
        {
            *s = self.secrets.redact(s).into_owned();
        }
        self.sink.event(&ev);
        let Ok(line) = serde_json::to_string(&ev) else {
            return;
        };
        let mut guard = self.file.lock().expect("progress lock");
        if let Some((f, written)) = guard.as_mut() {
            let n = line.len() as u64 + 1;
            if *written + n > MAX_PROGRESS_BYTES {
                if *written < MAX_PROGRESS_BYTES {
                    let marker = b"{\"event\":\"truncated\"}\n";
                    let _ = f.write_all(marker);
                    *written = MAX_PROGRESS_BYTES;
                }
                return;
            }
            if f.write_all(line.as_bytes()).is_ok() && f.write_all(b"\n").is_ok() {
                *written += n;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_is_capped_and_marks_the_cut() {
        let t = tempfile::tempdir().unwrap();
        let secrets = Arc::new(Secrets::new());
        let ev = Evidence::create(t.path(), "r", secrets.clone()).unwrap();
        let p = Progress::open(&ev, secrets, &NoProgress);
        for i in 0..40_000 {
            p.emit(ProgressEvent::stage_start(
                &format!("step {i} click"),
                Some(i),
                Some("click"),
            ));
        }
        let body = std::fs::read_to_string(ev.run_dir().join("progress.jsonl")).unwrap();
        assert!(
            body.len() as u64 <= MAX_PROGRESS_BYTES + 64,
            "{}",
            body.len()
        );
        assert!(body.trim_end().ends_with("{\"event\":\"truncated\"}"));
        for line in body.lines() {
            let _: serde_json::Value = serde_json::from_str(line).unwrap();
        }
    }
}
