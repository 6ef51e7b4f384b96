//! The runner: selection, launch, bounded steps, assertions on one retry
//! cadence, bounded cleanup that always runs, and the result document.
//!
//! Stages are named (`select`, `launch`, `step 3 click`, `cleanup`) so a
//! timeout reports the last stage that started. Actions are dispatched once;
//! assertions are asked for a fresh [`Verdict`] on the [`Cadence`] until they
//! hold or the step deadline passes. Cleanup has its own deadline and runs
//! after a failure, a timeout or a cancel.

use crate::deadline::{Cadence, Deadline};
use crate::driver::{
    Backend, DriverError, Host, RunOptions, SessionContext, SurfaceDriver, SurfaceSession, Verdict,
};
use crate::evidence::{Artifact, Evidence, EvidenceError};
use crate::flow::{Flow, Step, StepClass};
use crate::process::{CleanupReport, ProcessOwner, DEFAULT_GRACE};
use crate::progress::{Progress, ProgressEvent, ProgressSink};
use crate::result::{
    Artifacts, AssertionRecord, BlockedHandoff, BlockedReasonCode, GuideRef, ObservationNote,
    RunResult, RunStatus, Selection, StepRecord, StepStatus,
};
use crate::secrets::Secrets;
use crate::select;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Set this environment variable to keep the run's `work/` scratch
/// directory (for debugging a driver).
pub const KEEP_SCRATCH_ENV: &str = "UI_QA_KEEP_SCRATCH";

/// Bound on the evidence captured after a failing step.
pub const FAILURE_CAPTURE_TIMEOUT: Duration = Duration::from_secs(5);

/// Default bound on cleanup, separate from the flow deadline.
pub const DEFAULT_CLEANUP_TIMEOUT: Duration = Duration::from_secs(15);

/// A cancellation signal shared between the CLI and the runner.
#[derive(Debug, Clone)]
pub struct Cancel {
    tx: Arc<watch::Sender<bool>>,
    rx: watch::Receiver<bool>,
}

impl Default for Cancel {
    fn default() -> Self {
        Cancel::new()
    }
}

impl Cancel {
    /// A signal that has not fired.
    pub fn new() -> Cancel {
        let (tx, rx) = watch::channel(false);
        Cancel {
            tx: Arc::new(tx),
            rx,
        }
    }

    /// Fires the signal.
    pub fn cancel(&self) {
        let _ = self.tx.send(true);
    }

    /// Whether it has fired.
    pub fn is_cancelled(&self) -> bool {
        *self.rx.borrow()
    }

    /// Resolves once the signal fires.
    pub async fn cancelled(&self) {
        let mut rx = self.rx.clone();
        while !*rx.borrow_and_update() {
            if rx.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }
}

/// Everything one run needs.
pub struct RunRequest {
    /// The validated flow.
    pub flow: Flow,
    /// The flow text as written (copied into the run directory, redacted).
    pub flow_text: String,
    /// Workspace directory (default `.ui-qa`).
    pub workspace: PathBuf,
    /// Run id (default: time stamp + random suffix).
    pub run_id: Option<String>,
    /// Overrides the flow deadline.
    pub timeout_ms: Option<u64>,
    /// Bound on cleanup.
    pub cleanup_timeout: Duration,
    /// Run options passed to drivers.
    pub options: RunOptions,
    /// Secrets to redact.
    pub secrets: Arc<Secrets>,
    /// The process owner (shared with the CLI for a hard second Ctrl-C).
    pub processes: Arc<ProcessOwner>,
    /// Cancellation.
    pub cancel: Cancel,
}

impl RunRequest {
    /// A request with defaults for everything but the flow.
    pub fn new(flow: Flow, flow_text: String, workspace: PathBuf) -> RunRequest {
        RunRequest {
            flow,
            flow_text,
            workspace,
            run_id: None,
            timeout_ms: None,
            cleanup_timeout: DEFAULT_CLEANUP_TIMEOUT,
            options: RunOptions::default(),
            secrets: Arc::new(Secrets::new()),
            processes: Arc::new(ProcessOwner::new()),
            cancel: Cancel::new(),
        }
    }
}

/// Errors that prevent a run from starting at all (no result can be written).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The run directory could not be created.
    #[error("{0}")]
    Evidence(#[from] EvidenceError),
    /// No driver handles this target kind.
    #[error("run.no_driver: no driver handles {0} targets")]
    NoDriver(String),
}

/// A unique run id: UTC time stamp plus a random suffix.
pub fn new_run_id() -> String {
    let now = time::OffsetDateTime::now_utc();
    let fmt = time::macros::format_description!("[year][month][day]-[hour][minute][second]");
    let stamp = now.format(&fmt).unwrap_or_else(|_| "run".into());
    let mut rnd = [0u8; 3];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        use std::io::Read;
        let _ = f.read_exact(&mut rnd);
    } else {
        let n = now.unix_timestamp_nanos() as u32 ^ std::process::id();
        rnd.copy_from_slice(&n.to_le_bytes()[..3]);
    }
    format!("{stamp}-{}", hex::encode(rnd))
}

struct Acc {
    steps: Vec<StepRecord>,
    assertions: Vec<AssertionRecord>,
    observations: Vec<ObservationNote>,
    artifacts: Vec<Artifact>,
    status: RunStatus,
    reason: Option<String>,
    reason_code: Option<String>,
    timed_out: bool,
    cancelled: bool,
    stage: String,
    fail_stage: Option<String>,
    handoff: Option<BlockedHandoff>,
}

impl Acc {
    fn fail(&mut self, code: &str, reason: String) {
        if self.status == RunStatus::Passed {
            self.fail_stage = Some(self.stage.clone());
            self.status = RunStatus::Failed;
            self.reason = Some(reason);
            self.reason_code = Some(code.to_string());
        }
    }
}

/// Runs a flow with the given drivers (in preference order) and returns the
/// result document, which is also written to `result.json` in the run
/// directory. A failed, timed-out or cancelled run still writes its result
/// and keeps its evidence.
pub async fn run(
    drivers: &[Arc<dyn SurfaceDriver>],
    req: RunRequest,
    sink: &dyn ProgressSink,
) -> Result<RunResult, RunError> {
    let started = Instant::now();
    let started_at = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    let run_id = req.run_id.clone().unwrap_or_else(new_run_id);
    let evidence = Arc::new(Evidence::create(
        &req.workspace,
        &run_id,
        req.secrets.clone(),
    )?);
    let progress = Progress::open(&evidence, req.secrets.clone(), sink);
    // A redacted copy of the flow.
    if let Ok((_, mut f)) = evidence.root_file("flow.jsonc") {
        let _ = f.write_all(req.secrets.redact(&req.flow_text).as_bytes());
    }
    // The owner may be shared across runs (one CLI invocation); start this
    // run's journal empty.
    let _ = req.processes.take_journal();
    let flow = &req.flow;
    let flow_ms = req.timeout_ms.unwrap_or_else(|| flow.flow_timeout_ms());
    let flow_deadline = Deadline::after_ms(flow_ms);
    let host = Host::current();

    let mut acc = Acc {
        steps: Vec::new(),
        assertions: Vec::new(),
        observations: Vec::new(),
        artifacts: Vec::new(),
        status: RunStatus::Passed,
        reason: None,
        reason_code: None,
        timed_out: false,
        cancelled: false,
        stage: "select".into(),
        fail_stage: None,
        handoff: None,
    };

    progress.emit(ProgressEvent::stage_start("select", None, None));
    let Some(selected) = select::select(drivers, flow, &host, &req.options).await else {
        return Err(RunError::NoDriver(flow.kind().as_str().into()));
    };
    let selection = selected.selection.clone();
    let driver = selected.driver.clone();
    progress.emit(ProgressEvent::selected(&selection));

    let mut cleanup = CleanupReport::default();
    if !selected.probe.available() {
        let missing = selected.probe.missing.clone();
        let reason = format!(
            "{} cannot run here: {}",
            driver.id(),
            missing
                .iter()
                .map(|m| format!("{} ({})", m.id, m.reason))
                .collect::<Vec<_>>()
                .join("; ")
        );
        acc.status = RunStatus::Blocked;
        acc.reason = Some(reason.clone());
        acc.reason_code = Some("run.blocked.missing_capability".into());
        acc.handoff = Some(handoff(
            &selection,
            BlockedReasonCode::MissingCapability,
            missing,
            reason,
        ));
        skip_rest(&mut acc, flow, 0);
    } else {
        let ctx = SessionContext {
            evidence: evidence.clone(),
            processes: req.processes.clone(),
            secrets: req.secrets.clone(),
            flow_deadline,
            options: req.options.clone(),
        };
        acc.stage = "launch".into();
        progress.emit(ProgressEvent::stage_start("launch", None, None));
        let launch_started = Instant::now();
        let opened = tokio::select! {
            r = flow_deadline.run(driver.open(flow, ctx)) => r,
            _ = req.cancel.cancelled() => { acc.cancelled = true; None }
        };
        let session = match opened {
            Some(Ok(s)) => {
                progress.emit(ProgressEvent::stage_end(
                    "launch",
                    None,
                    None,
                    "passed",
                    launch_started.elapsed(),
                ));
                Some(s)
            }
            Some(Err(e)) => {
                progress.emit(ProgressEvent::stage_end(
                    "launch",
                    None,
                    None,
                    if e.is_blocked() { "blocked" } else { "failed" },
                    launch_started.elapsed(),
                ));
                acc.artifacts.extend(e.artifacts.iter().cloned());
                if e.is_blocked() {
                    acc.status = RunStatus::Blocked;
                    acc.reason = Some(e.message.clone());
                    acc.reason_code = Some(e.code.to_string());
                    acc.handoff = Some(handoff(
                        &selection,
                        BlockedReasonCode::TargetUnobservable,
                        e.missing.clone(),
                        e.message.clone(),
                    ));
                } else {
                    acc.fail(e.code, format!("launch failed: {}", e.message));
                }
                skip_rest(&mut acc, flow, 0);
                None
            }
            None => {
                if acc.cancelled {
                    acc.fail("run.cancelled", "cancelled during launch".into());
                } else {
                    acc.timed_out = true;
                    acc.fail(
                        "run.timeout",
                        format!("flow deadline of {flow_ms} ms passed during launch"),
                    );
                }
                progress.emit(ProgressEvent::stage_end(
                    "launch",
                    None,
                    None,
                    "timedOut",
                    launch_started.elapsed(),
                ));
                skip_rest(&mut acc, flow, 0);
                None
            }
        };

        if let Some(mut session) = session {
            run_steps(
                session.as_mut(),
                flow,
                flow_deadline,
                flow_ms,
                &req.cancel,
                &progress,
                &mut acc,
            )
            .await;
            if let Some(h) = acc.handoff.as_mut() {
                if h.platform_driver.is_empty() {
                    h.platform_driver = selection.platform_driver.clone();
                }
            }
            acc.stage = "cleanup".into();
            progress.emit(ProgressEvent::stage_start("cleanup", None, None));
            let t = Instant::now();
            let cleanup_deadline = Deadline::after(req.cleanup_timeout);
            let closed = cleanup_deadline.run(session.close(cleanup_deadline)).await;
            match closed {
                Some(c) => {
                    cleanup.merge(c.cleanup);
                    acc.artifacts.extend(c.artifacts);
                    acc.observations
                        .extend(c.observations.into_iter().map(|m| ObservationNote {
                            step: None,
                            kind: "driver".into(),
                            message: m,
                        }));
                }
                None => acc.observations.push(ObservationNote {
                    step: None,
                    kind: "cleanup".into(),
                    message: "the driver did not close within the cleanup deadline; owned processes were ended by the runner".into(),
                }),
            }
            progress.emit(ProgressEvent::stage_end(
                "cleanup",
                None,
                None,
                "done",
                t.elapsed(),
            ));
        }
    }
    if acc.status != RunStatus::Passed && acc.fail_stage.is_none() {
        acc.fail_stage = Some(acc.stage.clone());
    }
    acc.stage = "cleanup".into();
    // Safety net: end anything the driver registered and did not end.
    let _ = req
        .processes
        .end_all(DEFAULT_GRACE, Deadline::after(req.cleanup_timeout))
        .await;
    // What every end_all of this run did (drivers' and the runner's), plus
    // whatever drivers reported on their own; each process once.
    let mut journal = req.processes.take_journal();
    journal.merge(cleanup);
    let cleanup = dedup_cleanup(journal);

    // Scratch (a browser profile, an app's private runtime dir) is not
    // evidence; remove it unless a developer asked to keep it.
    if std::env::var_os(KEEP_SCRATCH_ENV).is_none() {
        if let Err(e) = evidence.remove_scratch() {
            acc.observations.push(ObservationNote {
                step: None,
                kind: "cleanup".into(),
                message: format!("scratch files could not be removed: {e}"),
            });
        }
    }
    // Fail closed if the program under test swapped the run directory or an
    // artifact for something else: what no longer verifies is not listed.
    let swapped = evidence.verify();
    if !swapped.is_empty() {
        let what: Vec<String> = swapped.iter().map(|e| e.to_string()).collect();
        let reason = format!("evidence was tampered with: {}", what.join("; "));
        acc.observations.push(ObservationNote {
            step: None,
            kind: "evidence".into(),
            message: reason.clone(),
        });
        acc.status = RunStatus::Failed;
        acc.handoff = None;
        acc.reason = Some(reason);
        acc.reason_code = Some("evidence.swapped".into());
        if acc.fail_stage.is_none() {
            acc.fail_stage = Some("cleanup".into());
        }
    }
    let bad: Vec<String> = swapped
        .iter()
        .filter_map(|e| match e {
            crate::evidence::EvidenceError::Swapped(p) => Some(p.display().to_string()),
            _ => None,
        })
        .collect();
    let mut arts: Vec<Artifact> = if swapped.iter().any(
        |e| matches!(e, crate::evidence::EvidenceError::Swapped(p) if *p == evidence.run_dir()),
    ) {
        Vec::new()
    } else {
        evidence
            .artifacts()
            .into_iter()
            .filter(|a| !bad.contains(&a.path))
            .collect()
    };
    // Keep driver-reported artifacts that the store did not see (should not happen).
    for a in acc.artifacts.drain(..) {
        if swapped.is_empty() && !arts.iter().any(|x| x.path == a.path) {
            arts.push(a);
        }
    }
    let withheld = evidence.withheld();
    for w in &withheld {
        acc.observations.push(ObservationNote {
            step: None,
            kind: "evidenceWithheld".into(),
            message: format!("{} was withheld: {}", w.name, w.reason),
        });
    }
    let stage = acc.last_stage_for_result();
    let mut result = RunResult {
        schema_version: 1,
        status: acc.status,
        reason: acc.reason,
        reason_code: acc.reason_code,
        timed_out: acc.timed_out,
        cancelled: acc.cancelled,
        stage,
        flow_name: flow.name.clone(),
        selection,
        steps: acc.steps,
        assertions: acc.assertions,
        observations: acc.observations,
        artifacts: Artifacts::from_list(arts, withheld),
        blocked_handoff: acc.handoff,
        cleanup,
        evidence_dir: evidence.run_dir().display().to_string(),
        run_id,
        started_at,
        duration_ms: started.elapsed().as_millis() as u64,
    };
    result = redact_result(&req.secrets, result);
    if let Ok((_, mut f)) = evidence.root_file("result.json") {
        if let Ok(s) = serde_json::to_string_pretty(&result) {
            let _ = f.write_all(s.as_bytes());
            let _ = f.write_all(b"\n");
        }
    }
    progress.emit(ProgressEvent::finished(&result));
    Ok(result)
}

impl Acc {
    fn last_stage_for_result(&self) -> String {
        self.fail_stage
            .clone()
            .unwrap_or_else(|| self.stage.clone())
    }
}

fn dedup_cleanup(report: CleanupReport) -> CleanupReport {
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
        out.status = crate::process::CleanupStatus::Incomplete;
    }
    out
}

fn redact_result(secrets: &Secrets, result: RunResult) -> RunResult {
    if secrets.is_empty() {
        return result;
    }
    let Ok(mut v) = serde_json::to_value(&result) else {
        return result;
    };
    secrets.redact_json(&mut v);
    serde_json::from_value(v).unwrap_or(result)
}

fn handoff(
    selection: &Selection,
    code: BlockedReasonCode,
    missing: Vec<crate::driver::MissingCapability>,
    reason: String,
) -> BlockedHandoff {
    let remediation = if missing.is_empty() {
        "see the reason; then run the flow again".to_string()
    } else {
        missing
            .iter()
            .map(|m| format!("{}: {}", m.id, m.remediation))
            .collect::<Vec<_>>()
            .join("\n")
    };
    BlockedHandoff {
        backend: selection.selected_backend.clone(),
        platform_driver: selection.platform_driver.clone(),
        platform: selection.platform.clone(),
        reason_code: code,
        missing_capabilities: missing,
        reason,
        remediation,
        manual_action_required: true,
        automatic_remediation_attempted: false,
    }
}

fn skip_rest(acc: &mut Acc, flow: &Flow, from: usize) {
    for s in &flow.steps[from..] {
        acc.steps.push(StepRecord {
            index: s.index + 1,
            action: s.action_name().into(),
            name: s.name.clone(),
            status: StepStatus::Skipped,
            duration_ms: 0,
            reason: None,
            detail: None,
        });
    }
}

fn stage_name(step: &Step) -> String {
    format!("step {} {}", step.index + 1, step.action_name())
}

enum StepEnd {
    Passed(Option<String>),
    Failed(&'static str, String),
    Blocked(DriverError),
    TimedOut,
    Cancelled,
}

#[allow(clippy::too_many_arguments)]
async fn run_steps(
    session: &mut dyn SurfaceSession,
    flow: &Flow,
    flow_deadline: Deadline,
    flow_ms: u64,
    cancel: &Cancel,
    progress: &Progress<'_>,
    acc: &mut Acc,
) {
    for (i, step) in flow.steps.iter().enumerate() {
        let stage = stage_name(step);
        acc.stage = stage.clone();
        progress.emit(ProgressEvent::stage_start(
            &stage,
            Some(step.index + 1),
            Some(step.action_name()),
        ));
        let t = Instant::now();
        let step_deadline = Deadline::after_ms(step.step_timeout_ms()).min(flow_deadline);
        let end = tokio::select! {
            e = run_one(session, step, step_deadline, acc) => e,
            _ = cancel.cancelled() => StepEnd::Cancelled,
        };
        let dur = t.elapsed();
        let (status, reason, detail) = match end {
            StepEnd::Passed(d) => (StepStatus::Passed, None, d),
            StepEnd::Failed(code, r) => {
                if flow_deadline.expired() {
                    acc.timed_out = true;
                }
                acc.fail(
                    code,
                    format!("step {} {} failed: {r}", step.index + 1, step.action_name()),
                );
                (StepStatus::Failed, Some(r), None)
            }
            StepEnd::Blocked(e) => {
                acc.artifacts.extend(e.artifacts.iter().cloned());
                if acc.status == RunStatus::Passed {
                    acc.status = RunStatus::Blocked;
                    acc.reason = Some(e.message.clone());
                    acc.reason_code = Some(e.code.to_string());
                    acc.handoff = Some(BlockedHandoff {
                        backend: Backend::for_kind(flow.kind()).as_str().into(),
                        platform_driver: String::new(),
                        platform: std::env::consts::OS.into(),
                        reason_code: BlockedReasonCode::TargetUnobservable,
                        missing_capabilities: e.missing.clone(),
                        reason: e.message.clone(),
                        remediation: e.remediation.clone().unwrap_or_default(),
                        manual_action_required: true,
                        automatic_remediation_attempted: false,
                    });
                }
                (StepStatus::Failed, Some(e.message), None)
            }
            StepEnd::TimedOut => {
                let flow_expired = flow_deadline.expired();
                let r = if flow_expired {
                    acc.timed_out = true;
                    format!("flow deadline of {flow_ms} ms passed")
                } else {
                    format!("step deadline of {} ms passed", step.step_timeout_ms())
                };
                if flow_expired {
                    acc.fail("run.timeout", format!("{r} during {stage}"));
                } else {
                    acc.fail(
                        "step.timeout",
                        format!("step {} {} failed: {r}", step.index + 1, step.action_name()),
                    );
                }
                (StepStatus::TimedOut, Some(r), None)
            }
            StepEnd::Cancelled => {
                acc.cancelled = true;
                acc.fail("run.cancelled", format!("cancelled during {stage}"));
                (StepStatus::Failed, Some("cancelled".into()), None)
            }
        };
        progress.emit(ProgressEvent::stage_end(
            &stage,
            Some(step.index + 1),
            Some(step.action_name()),
            match status {
                StepStatus::Passed => "passed",
                StepStatus::Failed => "failed",
                StepStatus::TimedOut => "timedOut",
                StepStatus::Skipped => "skipped",
            },
            dur,
        ));
        acc.steps.push(StepRecord {
            index: step.index + 1,
            action: step.action_name().into(),
            name: step.name.clone(),
            status,
            duration_ms: dur.as_millis() as u64,
            reason,
            detail,
        });
        if status != StepStatus::Passed {
            if !acc.cancelled {
                // Keep what the surface looked like when the step failed.
                let bound = Deadline::after(FAILURE_CAPTURE_TIMEOUT);
                if let Some(arts) = bound.run(session.capture_failure(step)).await {
                    if !arts.is_empty() {
                        acc.observations.push(ObservationNote {
                            step: Some(step.index + 1),
                            kind: "failureEvidence".into(),
                            message: format!(
                                "captured the surface after step {} failed ({} file(s))",
                                step.index + 1,
                                arts.len()
                            ),
                        });
                    }
                    acc.artifacts.extend(arts);
                }
            }
            skip_rest(acc, flow, i + 1);
            return;
        }
    }
}

/// How long past a step's deadline the runner waits for the driver to
/// report how the step ended (a driver finishes the call in flight at the
/// deadline, then fails with what it last saw — `not_enabled`, `covered`,
/// …). Only a driver still busy after this is cut off with `step.timeout`.
const DRIVER_GRACE: Duration = Duration::from_millis(2000);

async fn run_one(
    session: &mut dyn SurfaceSession,
    step: &Step,
    deadline: Deadline,
    acc: &mut Acc,
) -> StepEnd {
    match step.class() {
        StepClass::Runner => {
            let ms = step.action.wait_for_timeout_ms().unwrap_or(0);
            let until = Deadline::after_ms(ms);
            if until > deadline {
                deadline.sleep().await;
                return StepEnd::TimedOut;
            }
            until.sleep().await;
            StepEnd::Passed(None)
        }
        StepClass::Action => match deadline
            .extended(DRIVER_GRACE)
            .run(session.perform(step, deadline))
            .await
        {
            None => StepEnd::TimedOut,
            Some(Ok(outcome)) => {
                acc.artifacts.extend(outcome.artifacts);
                acc.observations
                    .extend(outcome.observations.into_iter().map(|m| ObservationNote {
                        step: Some(step.index + 1),
                        kind: "step".into(),
                        message: m,
                    }));
                StepEnd::Passed(outcome.detail)
            }
            Some(Err(e)) if e.is_blocked() => StepEnd::Blocked(e),
            Some(Err(e)) => {
                acc.artifacts.extend(e.artifacts.iter().cloned());
                StepEnd::Failed(e.code, e.message)
            }
        },
        StepClass::Assertion => {
            let mut cadence = Cadence::new();
            let mut attempts = 0u32;
            let mut observed: Option<String> = None;
            loop {
                if !cadence.wait(deadline).await {
                    break;
                }
                attempts += 1;
                match deadline
                    .extended(DRIVER_GRACE)
                    .run(session.verify(step, deadline))
                    .await
                {
                    None => break,
                    Some(Ok(Verdict::Holds)) => {
                        acc.assertions.push(AssertionRecord {
                            step: step.index + 1,
                            action: step.action_name().into(),
                            passed: true,
                            attempts,
                            observed: None,
                        });
                        return StepEnd::Passed(None);
                    }
                    Some(Ok(Verdict::NotYet { observed: o })) => observed = Some(o),
                    Some(Ok(Verdict::Fails { reason })) => {
                        acc.assertions.push(AssertionRecord {
                            step: step.index + 1,
                            action: step.action_name().into(),
                            passed: false,
                            attempts,
                            observed: Some(reason.clone()),
                        });
                        return StepEnd::Failed("assertion.failed", reason);
                    }
                    Some(Err(e)) if e.is_blocked() => return StepEnd::Blocked(e),
                    Some(Err(e)) => {
                        acc.assertions.push(AssertionRecord {
                            step: step.index + 1,
                            action: step.action_name().into(),
                            passed: false,
                            attempts,
                            observed: Some(e.message.clone()),
                        });
                        return StepEnd::Failed(e.code, e.message);
                    }
                }
            }
            acc.assertions.push(AssertionRecord {
                step: step.index + 1,
                action: step.action_name().into(),
                passed: false,
                attempts,
                observed: observed.clone(),
            });
            match observed {
                Some(o) if attempts > 0 => StepEnd::Failed(
                    "assertion.timeout",
                    format!(
                        "did not hold within {} ms after {attempts} attempts; last observed: {o}",
                        step.step_timeout_ms()
                    ),
                ),
                _ => StepEnd::TimedOut,
            }
        }
    }
}

/// The guide reference for a backend's default topic.
pub fn default_guide(backend: Backend, topic: &str) -> GuideRef {
    GuideRef {
        backend: backend.as_str().into(),
        topic: topic.into(),
    }
}
