//! What a run accumulates while it goes ([`Acc`]) and how that becomes the
//! result document ([`Acc::assemble`]): the first failure wins, BLOCKED
//! carries a handoff, tampered evidence fails the run closed, and every
//! string is redacted before it leaves.

use qa_core::codes::CoreCode;
use qa_core::driver::{DriverError, MissingCapability, Note, NoteKind};
use qa_core::evidence::{Artifact, Evidence, EvidenceError};
use qa_core::flow::Flow;
use qa_core::process::{CleanupReport, CleanupStatus};
use qa_core::result::{
    Artifacts, AssertionRecord, BlockedHandoff, BlockedReasonCode, ObservationKind,
    ObservationNote, RunResult, RunStatus, Selection, StepRecord, StepStatus, SCHEMA_VERSION,
};
use qa_core::secrets::Secrets;

/// The record of a run in progress.
pub(super) struct Acc {
    pub selection: Selection,
    pub steps: Vec<StepRecord>,
    pub assertions: Vec<AssertionRecord>,
    pub observations: Vec<ObservationNote>,
    pub status: RunStatus,
    pub reason: Option<String>,
    pub reason_code: Option<String>,
    pub timed_out: bool,
    pub cancelled: bool,
    /// The last stage that started.
    pub stage: String,
    /// The stage during which the run stopped passing.
    pub fail_stage: Option<String>,
    pub handoff: Option<BlockedHandoff>,
    /// When the run started (step start offsets are measured from it).
    pub run_started: std::time::Instant,
    /// Matchers see text with these secrets redacted
    /// ([`qa_core::RunOptions::redact_matchers`]).
    pub matcher_view: Option<std::sync::Arc<qa_core::secrets::Secrets>>,
}

/// What assembling the result needs besides the record.
pub(super) struct Finish<'a> {
    pub evidence: &'a Evidence,
    pub secrets: &'a Secrets,
    pub flow: &'a Flow,
    /// The flow file's text (none for an interactive session's steps).
    pub flow_text: Option<&'a str>,
    pub cleanup: CleanupReport,
    pub run_id: String,
    pub started_at: String,
    pub duration_ms: u64,
}

impl Acc {
    pub fn new(selection: Selection) -> Acc {
        Acc {
            selection,
            steps: Vec::new(),
            assertions: Vec::new(),
            observations: Vec::new(),
            status: RunStatus::Passed,
            reason: None,
            reason_code: None,
            timed_out: false,
            cancelled: false,
            stage: "select".into(),
            fail_stage: None,
            handoff: None,
            run_started: std::time::Instant::now(),
            matcher_view: None,
        }
    }

    /// Records a failure; the first one wins.
    pub fn fail(&mut self, code: &str, reason: String) {
        if self.status == RunStatus::Passed {
            self.fail_stage = Some(self.stage.clone());
            self.status = RunStatus::Failed;
            self.reason = Some(reason);
            self.reason_code = Some(code.to_string());
        }
    }

    /// BLOCKED before launch: the selected driver's probe found something
    /// missing.
    pub fn block_on_probe(&mut self, driver: &str, missing: Vec<MissingCapability>) {
        let reason = format!(
            "{driver} cannot run here: {}",
            missing
                .iter()
                .map(|m| format!("{} ({})", m.id, m.reason))
                .collect::<Vec<_>>()
                .join("; ")
        );
        self.status = RunStatus::Blocked;
        self.reason = Some(reason.clone());
        self.reason_code = Some(CoreCode::RunBlockedMissingCapability.as_str().into());
        self.handoff =
            Some(self.handoff_for(BlockedReasonCode::MissingCapability, missing, reason, None));
    }

    /// BLOCKED by a driver (at launch or during a step); the first problem
    /// wins.
    pub fn block(&mut self, e: &DriverError, code: BlockedReasonCode) {
        if self.status != RunStatus::Passed {
            return;
        }
        self.fail_stage = Some(self.stage.clone());
        self.status = RunStatus::Blocked;
        self.reason = Some(e.message.clone());
        self.reason_code = Some(e.code.to_string());
        let code = BlockedReasonCode::for_error_code(e.code, code);
        if matches!(
            code,
            BlockedReasonCode::AuthProvideCredentials
                | BlockedReasonCode::AuthUpdateRequired
                | BlockedReasonCode::AuthFileRefused
        ) {
            // The guide that says what to do about it.
            self.selection.guide.topic = "auth".into();
        }
        self.handoff = Some(self.handoff_for(
            code,
            e.missing.clone(),
            e.message.clone(),
            e.remediation.clone(),
        ));
    }

    /// Adds a note to the result's observations.
    pub fn note(&mut self, step: Option<usize>, kind: ObservationKind, message: String) {
        self.observations.push(ObservationNote {
            step,
            kind,
            message,
        });
    }

    /// Records every step from `from` on as skipped.
    pub fn skip_rest(&mut self, flow: &Flow, from: usize) {
        for s in &flow.steps[from..] {
            self.steps.push(StepRecord {
                index: s.index + 1,
                action: s.action_name().into(),
                name: s.name.clone(),
                locator: s.locator_text(),
                value: s.value_text(),
                line: None,
                status: StepStatus::Skipped,
                started_ms: None,
                duration_ms: 0,
                reason: None,
                detail: None,
                failure: None,
            });
        }
    }

    /// A run that did not pass stopped in the stage running when it
    /// stopped.
    pub fn settle_fail_stage(&mut self) {
        if self.status != RunStatus::Passed && self.fail_stage.is_none() {
            self.fail_stage = Some(self.stage.clone());
        }
    }

    fn handoff_for(
        &self,
        code: BlockedReasonCode,
        missing: Vec<MissingCapability>,
        reason: String,
        remediation: Option<String>,
    ) -> BlockedHandoff {
        let remediation = match remediation {
            Some(r) if missing.is_empty() => r,
            _ if missing.is_empty() => "see the reason; then run the flow again".to_string(),
            _ => missing
                .iter()
                .map(|m| format!("{}: {}", m.id, m.remediation))
                .collect::<Vec<_>>()
                .join("\n"),
        };
        BlockedHandoff {
            backend: self.selection.selected_backend,
            platform_driver: self.selection.platform_driver.clone(),
            platform: self.selection.platform,
            reason_code: code,
            missing_capabilities: missing,
            reason,
            remediation,
            manual_action_required: true,
            automatic_remediation_attempted: false,
        }
    }

    /// The result document: evidence verified (fail closed when swapped),
    /// withheld artifacts noted, every string redacted.
    pub fn assemble(mut self, f: Finish<'_>) -> RunResult {
        let artifacts = self.verified_artifacts(f.evidence);
        if let Some(text) = f.flow_text {
            let lines = qa_core::flow::step_lines(text, f.flow.steps.len());
            for s in &mut self.steps {
                s.line = lines.get(s.index.wrapping_sub(1)).copied().flatten();
            }
        }
        if self.status == RunStatus::Passed && !f.flow.checks_anything() {
            self.note(
                None,
                ObservationKind::NothingChecked,
                NOTHING_CHECKED.into(),
            );
        }
        let stage = self
            .fail_stage
            .clone()
            .unwrap_or_else(|| self.stage.clone());
        let result = RunResult {
            schema_version: SCHEMA_VERSION,
            status: self.status,
            reason: self.reason,
            reason_code: self.reason_code,
            timed_out: self.timed_out,
            cancelled: self.cancelled,
            stage,
            flow_name: f.flow.name.clone(),
            selection: self.selection,
            steps: self.steps,
            assertions: self.assertions,
            observations: self.observations,
            artifacts,
            blocked_handoff: self.handoff,
            cleanup: f.cleanup,
            evidence_dir: f.evidence.run_dir().display().to_string(),
            run_id: f.run_id,
            started_at: f.started_at,
            duration_ms: f.duration_ms,
        };
        redact_result(f.secrets, result)
    }

    /// The evidence store's artifacts that still verify. If the program
    /// under test swapped the run directory or an artifact for something
    /// else, the run fails closed and what no longer verifies is not listed.
    fn verified_artifacts(&mut self, evidence: &Evidence) -> Artifacts {
        let swapped = evidence.verify();
        if !swapped.is_empty() {
            let what: Vec<String> = swapped.iter().map(|e| e.to_string()).collect();
            let reason = format!("evidence was tampered with: {}", what.join("; "));
            self.note(None, ObservationKind::Evidence, reason.clone());
            self.status = RunStatus::Failed;
            self.handoff = None;
            self.reason = Some(reason);
            self.reason_code = Some(CoreCode::EvidenceSwapped.as_str().into());
            if self.fail_stage.is_none() {
                self.fail_stage = Some("cleanup".into());
            }
        }
        let bad: Vec<String> = swapped
            .iter()
            .filter_map(|e| match e {
                EvidenceError::Swapped(p) => Some(p.display().to_string()),
                _ => None,
            })
            .collect();
        let root_swapped = swapped
            .iter()
            .any(|e| matches!(e, EvidenceError::Swapped(p) if *p == evidence.run_dir()));
        let listed: Vec<Artifact> = if root_swapped {
            Vec::new()
        } else {
            evidence
                .artifacts()
                .into_iter()
                .filter(|a| !bad.contains(&a.path))
                .collect()
        };
        let withheld = evidence.withheld();
        for w in &withheld {
            self.note(
                None,
                ObservationKind::EvidenceWithheld,
                format!("{} was withheld: {}", w.name, w.reason),
            );
        }
        Artifacts::from_list(listed, withheld)
    }
}

/// Each process once; anything left makes the report incomplete.
pub(super) fn dedup_cleanup(report: CleanupReport) -> CleanupReport {
    let mut out = CleanupReport::default();
    let mut seen = std::collections::HashSet::new();
    for e in report.ended {
        if seen.insert(e.pid) {
            out.ended.push(e);
        }
    }
    for l in report.left {
        if !out.ended.iter().any(|e| e.pid == l.pid) && seen.insert(l.pid) {
            out.left.push(l);
        }
    }
    if !out.left.is_empty() {
        out.status = CleanupStatus::Incomplete;
    }
    out
}

/// The result with every secret redacted from its text. The document's
/// keys are its own field names and are left alone. When redaction turns a
/// value the format reads back (an enum word such as `PASSED` or `clean`)
/// into something else, the result cannot be read back: it is
/// [withheld](withheld_result), never handed out unredacted.
fn redact_result(secrets: &Secrets, result: RunResult) -> RunResult {
    if secrets.is_empty() {
        return result;
    }
    let Ok(mut v) = serde_json::to_value(&result) else {
        return withheld_result(secrets, result);
    };
    secrets.redact_json_values(&mut v);
    match serde_json::from_value(v) {
        Ok(r) => r,
        Err(_) => withheld_result(secrets, result),
    }
}

/// The note of a PASSED run whose flow checks nothing.
pub const NOTHING_CHECKED: &str = "nothing was checked: the flow has no assert* or waitFor* step, so PASSED says only that its steps ran";

/// What is kept of a result whose text could not be redacted: its status
/// and flags, its ids and times, the cleanup status and the redacted
/// reason; every list (steps, assertions, observations, artifacts,
/// processes, candidates) is left out, and one observation says why.
fn withheld_result(secrets: &Secrets, r: RunResult) -> RunResult {
    let red = |s: &str| secrets.redact(s).into_owned();
    let mut selection = r.selection;
    selection.candidate_backends.clear();
    selection.supported_capabilities.clear();
    selection.missing_capabilities.clear();
    selection.platform_driver = red(&selection.platform_driver);
    selection.presentation = selection.presentation.as_deref().map(red);
    selection.why_selected = red(&selection.why_selected);
    selection.guide.topic = red(&selection.guide.topic);
    RunResult {
        schema_version: r.schema_version,
        status: r.status,
        reason: r.reason.as_deref().map(red),
        reason_code: r.reason_code.as_deref().map(red),
        timed_out: r.timed_out,
        cancelled: r.cancelled,
        stage: red(&r.stage),
        flow_name: r.flow_name.as_deref().map(red),
        selection,
        steps: Vec::new(),
        assertions: Vec::new(),
        observations: vec![ObservationNote {
            step: None,
            kind: ObservationKind::EvidenceWithheld,
            message: "the result's details were withheld: a registered secret equals a word the result format itself uses, so its text could not be redacted and read back; the run directory keeps the evidence".into(),
        }],
        artifacts: Artifacts::default(),
        blocked_handoff: None,
        cleanup: CleanupReport {
            status: r.cleanup.status,
            ended: Vec::new(),
            left: Vec::new(),
        },
        evidence_dir: red(&r.evidence_dir),
        run_id: red(&r.run_id),
        started_at: r.started_at,
        duration_ms: r.duration_ms,
    }
}

/// The result's kind for a driver note: `environment` for an environment
/// fact, `otherwise` (step or driver) for the rest.
pub(super) fn observation_kind(n: &Note, otherwise: ObservationKind) -> ObservationKind {
    match n.kind {
        NoteKind::Environment => ObservationKind::Environment,
        NoteKind::MissingCapability => ObservationKind::MissingCapability,
        NoteKind::Info
        | NoteKind::BlockedRequest
        | NoteKind::Dialog
        | NoteKind::Popup
        | NoteKind::Evidence => otherwise,
    }
}
