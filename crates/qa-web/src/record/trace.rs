//! The step trace of a browser run (`artifacts/traces/trace.json`): per
//! step the action, its locator and what it resolved to (role, name, box),
//! when it started and how long it took, a picture before and after it,
//! and the console messages and network requests of that step.
//!
//! Pictures are JPEGs of the viewport taken through the same masking as
//! screenshots (with secrets in the run, a picture that cannot be masked
//! is left out). Network records are those of the log: origin and path
//! only (no query, no headers, no bodies). The trace and its pictures are
//! published like every artifact, so the secret scanner reads them too.

use crate::artifacts::masked_video_frame;
use crate::page::{DomOp, Page, Resolved};
use qa_core::recording::RecordMode;
use qa_core::{ArtifactGroup, Deadline, Evidence, Step};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Instant;

/// Most console messages and requests kept per step.
const PER_STEP: usize = 50;

/// A step being traced.
struct Open {
    index: usize,
    record: Value,
    started: Instant,
    console_from: usize,
    network_from: usize,
}

/// The trace of one session.
pub(crate) struct Trace {
    mode: RecordMode,
    steps: Vec<Value>,
    open: Option<Open>,
}

impl Trace {
    /// A trace kept in `mode` (not `off`).
    pub(crate) fn new(mode: RecordMode) -> Trace {
        Trace {
            mode,
            steps: Vec::new(),
            open: None,
        }
    }

    /// `step` starts on `page` (an assertion's later verdicts are the same
    /// step): the picture before it and what its locator resolves to.
    pub(crate) async fn begin(&mut self, page: &Page, evidence: &Evidence, step: &Step) {
        if self.open.as_ref().is_some_and(|o| o.index == step.index) {
            return;
        }
        self.close_open(page);
        let started = Instant::now();
        let n = step.index + 1;
        let before = picture(page, evidence, &format!("trace-step{n}-before")).await;
        let locator = step.locators().first().map(|l| (*l).clone());
        let resolved = match &locator {
            Some(l) => page
                .dom::<Option<Resolved>>(&DomOp::Resolved(l), Deadline::after_ms(1000))
                .await
                .ok()
                .flatten(),
            None => None,
        };
        let (console_from, network_from) = {
            let st = page.sh.st();
            (st.console.len(), st.network.len())
        };
        let record = json!({
            "step": n,
            "action": step.action_name(),
            "name": step.name,
            "locator": locator.map(|l| serde_json::to_value(l).unwrap_or(Value::Null)),
            "resolved": resolved.map(|r| json!({
                "role": r.role, "name": r.name,
                "box": { "x": r.x, "y": r.y, "width": r.w, "height": r.h },
            })),
            "startedMs": evidence.offset_ms(started),
            "before": before,
        });
        self.open = Some(Open {
            index: step.index,
            record,
            started,
            console_from,
            network_from,
        });
    }

    /// An action ended (`error`: how it failed): the picture after it.
    pub(crate) async fn end_action(
        &mut self,
        page: &Page,
        evidence: &Evidence,
        error: Option<&str>,
    ) {
        let Some(o) = self.open.as_mut() else { return };
        let n = o.index + 1;
        o.record["after"] = json!(picture(page, evidence, &format!("trace-step{n}-after")).await);
        if let Some(e) = error {
            o.record["error"] = json!(evidence.secrets().redact(e));
        }
        self.close_open(page);
    }

    /// Closes the open step: its duration, console and network records.
    fn close_open(&mut self, page: &Page) {
        let Some(mut o) = self.open.take() else {
            return;
        };
        o.record["durationMs"] = json!(o.started.elapsed().as_millis() as u64);
        let st = page.sh.st();
        let console: Vec<Value> = st
            .console
            .iter()
            .skip(o.console_from)
            .take(PER_STEP)
            .map(|e| json!({ "level": e.level.as_str(), "text": e.text }))
            .collect();
        let network: Vec<Value> = st
            .network
            .iter()
            .skip(o.network_from)
            .filter(|e| !e.browser_own)
            .take(PER_STEP)
            .map(|e| {
                json!({ "method": e.method, "url": e.url, "type": e.kind, "status": e.status, "failed": e.failed })
            })
            .collect();
        drop(st);
        o.record["console"] = json!(console);
        o.record["network"] = json!(network);
        self.steps.push(o.record);
    }

    /// Writes `trace.json` (the session is closing).
    pub(crate) fn finish(mut self, page: &Page, evidence: &Evidence) {
        self.close_open(page);
        if self.steps.is_empty() {
            return;
        }
        let doc = json!({ "version": 1, "steps": self.steps });
        let text = format!("{doc:#}\n");
        let name = evidence.unique_name(ArtifactGroup::Traces, "trace", "json");
        if let Ok(Some(a)) = evidence.write(ArtifactGroup::Traces, &name, text.as_bytes(), None) {
            self.retain(evidence, &a.path);
        }
        for p in pictures(evidence) {
            self.retain(evidence, &p);
        }
    }

    fn retain(&self, evidence: &Evidence, path: &str) {
        if self.mode == RecordMode::RetainOnFailure {
            evidence.keep_only_on_failure(Path::new(path));
        }
    }
}

/// A masked JPEG of `page` as a trace artifact; its file name, or `None`
/// when it could not be taken or masked.
async fn picture(page: &Page, evidence: &Evidence, base: &str) -> Option<String> {
    let jpeg = masked_video_frame(page, evidence, Deadline::after_ms(3000)).await?;
    let name = evidence.unique_name(ArtifactGroup::Traces, base, "jpg");
    let a = evidence
        .write(ArtifactGroup::Traces, &name, &jpeg, None)
        .ok()??;
    Path::new(&a.path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
}

/// The trace pictures published so far.
fn pictures(evidence: &Evidence) -> Vec<String> {
    evidence
        .artifacts()
        .into_iter()
        .filter(|a| a.group == Some(ArtifactGroup::Traces) && a.path.ends_with(".jpg"))
        .map(|a| a.path)
        .collect()
}
