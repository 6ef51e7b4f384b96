//! Progress: sanitized stage events, written to `progress.jsonl` (capped at
//! 1 MiB) and forwarded to a [`ProgressSink`] (the CLI's human output).
//!
//! Events carry stage names, step indexes, action and step names, statuses,
//! durations and the drivers' short details only — never step values, page
//! text or reasons — and pass through the secret redaction anyway.

use qa_core::evidence::Evidence;
use qa_core::result::{RunResult, RunStatus, Selection, StepStatus};
use qa_core::secrets::Secrets;
use serde::{Serialize, Serializer};
use std::fs::File;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Cap of `progress.jsonl`.
pub const MAX_PROGRESS_BYTES: u64 = 1024 * 1024;

/// What an event reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum EventKind {
    /// A stage started (`select`, `launch`, a step, `cleanup`).
    StageStart,
    /// A stage ended, with its outcome and duration.
    StageEnd,
    /// A driver was selected (available or blocked).
    Selected,
    /// The run finished, with its status.
    Finished,
}

/// How a stage ended, whether the selected driver can run, or how the run
/// ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The stage (a step, the launch) passed.
    Passed,
    /// It failed.
    Failed,
    /// Its deadline passed.
    TimedOut,
    /// It did not run (an earlier step did not pass).
    Skipped,
    /// It (the launch) or the selected driver is blocked.
    Blocked,
    /// It (cleanup) is done.
    Done,
    /// The selected driver can run the flow here.
    Available,
    /// The run ended with this status.
    Run(RunStatus),
}

impl Outcome {
    /// The name in `progress.jsonl` (`passed`, `timedOut`, …; a run's
    /// status as the result says it, `PASSED`).
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed => "failed",
            Outcome::TimedOut => "timedOut",
            Outcome::Skipped => "skipped",
            Outcome::Blocked => "blocked",
            Outcome::Done => "done",
            Outcome::Available => "available",
            Outcome::Run(s) => s.as_str(),
        }
    }
}

impl From<StepStatus> for Outcome {
    fn from(s: StepStatus) -> Self {
        match s {
            StepStatus::Passed => Outcome::Passed,
            StepStatus::Failed => Outcome::Failed,
            StepStatus::TimedOut => Outcome::TimedOut,
            StepStatus::Skipped => Outcome::Skipped,
        }
    }
}

impl Serialize for Outcome {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// One progress event.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressEvent {
    /// Milliseconds since the run started (filled in by the journal).
    pub t_ms: u64,
    /// What it reports.
    pub event: EventKind,
    /// Stage name (`launch`, `step 2 click`, `cleanup`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stage: Option<String>,
    /// 1-based step index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<usize>,
    /// Action name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// How a stage or the run ended, or whether the selected driver can
    /// run the flow.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Outcome>,
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
    fn base(event: EventKind) -> ProgressEvent {
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
            ..Self::base(EventKind::StageStart)
        }
    }

    /// A stage ended.
    pub fn stage_end(
        stage: &str,
        step: Option<usize>,
        action: Option<&str>,
        status: Outcome,
        took: Duration,
    ) -> ProgressEvent {
        ProgressEvent {
            stage: Some(stage.into()),
            step,
            action: action.map(Into::into),
            status: Some(status),
            duration_ms: Some(took.as_millis() as u64),
            ..Self::base(EventKind::StageEnd)
        }
    }

    /// A driver was selected.
    pub fn selected(sel: &Selection) -> ProgressEvent {
        ProgressEvent {
            driver: Some(sel.platform_driver.clone()),
            status: Some(if sel.missing_capabilities.is_empty() {
                Outcome::Available
            } else {
                Outcome::Blocked
            }),
            ..Self::base(EventKind::Selected)
        }
    }

    /// The run finished.
    pub fn finished(r: &RunResult) -> ProgressEvent {
        ProgressEvent {
            status: Some(Outcome::Run(r.status)),
            duration_ms: Some(r.duration_ms),
            ..Self::base(EventKind::Finished)
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
    fn events_keep_their_wire_names() {
        let end = ProgressEvent::stage_end(
            "step 1 click",
            Some(1),
            Some("click"),
            StepStatus::TimedOut.into(),
            Duration::from_millis(7),
        );
        let v = serde_json::to_value(&end).unwrap();
        assert_eq!(v["event"], "stageEnd");
        assert_eq!(v["status"], "timedOut");
        let v = serde_json::to_value(ProgressEvent::stage_start("launch", None, None)).unwrap();
        assert_eq!(v["event"], "stageStart");
        assert!(v.get("status").is_none());
        assert_eq!(Outcome::Run(RunStatus::Blocked).as_str(), "BLOCKED");
        assert_eq!(Outcome::Done.as_str(), "done");
    }

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
