//! The runner: selection, launch, bounded steps, assertions on one retry
//! cadence, bounded cleanup that always runs, and the result document.
//!
//! Stages are named (`select`, `launch`, `step 3 click`, `cleanup`) so a
//! timeout reports the last stage that started. Actions are dispatched once;
//! assertions are asked for a fresh [`Verdict`](qa_core::Verdict) on the
//! [`Cadence`](qa_core::Cadence) until they hold or the step deadline passes.
//! Cleanup has its own deadline and runs after a failure, a timeout or a
//! cancel.
//!
//! This module orchestrates (select → launch → steps → close → assemble);
//! [`steps`] executes steps and [`record`] accumulates what happened and
//! assembles the result document.

pub mod interactive;
mod record;
mod steps;

pub use steps::{run_step, StepEnd, StepRun, DRIVER_GRACE};

use crate::progress::{Outcome, Progress, ProgressEvent, ProgressSink};
use crate::select;
use qa_core::codes::CoreCode;
use qa_core::deadline::Deadline;
use qa_core::driver::{Host, RunOptions, SessionContext, SurfaceDriver, SurfaceSession};
use qa_core::evidence::{Evidence, EvidenceError};
use qa_core::flow::Flow;
use qa_core::process::{CleanupReport, ProcessOwner, DEFAULT_GRACE};
use qa_core::result::{BlockedReasonCode, ObservationKind, RunResult};
use qa_core::secrets::Secrets;
use record::Acc;
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
    /// Secrets to redact. The run works on its own copy
    /// ([`Secrets::fork`]): what its auth profile adds stays with this run.
    pub secrets: Arc<Secrets>,
    /// The process owner (shared with the CLI for a hard second Ctrl-C).
    pub processes: Arc<ProcessOwner>,
    /// Cancellation.
    pub cancel: Cancel,
}

impl RunRequest {
    /// A request for a flow written with the typed builder (its text is
    /// kept as the run's `flow.jsonc`), validated like a flow file.
    pub fn from_builder(
        builder: &qa_core::flow::build::FlowBuilder,
        workspace: impl Into<PathBuf>,
    ) -> Result<RunRequest, qa_core::flow::FlowError> {
        Ok(RunRequest::new(
            builder.build()?,
            builder.text(),
            workspace.into(),
        ))
    }

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
    #[error("{code}: no driver handles {0} targets", code = CoreCode::RunNoDriver)]
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

/// Runs a flow with the given drivers (in preference order) and returns the
/// result document, which is also written to `result.json` in the run
/// directory. A failed, timed-out or cancelled run still writes its result
/// and keeps its evidence.
pub async fn run(
    drivers: &[Arc<dyn SurfaceDriver>],
    req: RunRequest,
    sink: &dyn ProgressSink,
) -> Result<RunResult, RunError> {
    let mut req = req;
    // The run's own set: the values its auth profile registers redact and
    // withhold this run's evidence only, never another flow's.
    req.secrets = Arc::new(req.secrets.fork());
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

    progress.emit(ProgressEvent::stage_start("select", None, None));
    let host = Host::current();
    let Some(selected) = select::select(drivers, flow, &host, &req.options).await else {
        return Err(RunError::NoDriver(flow.kind().as_str().into()));
    };
    let selection = selected.selection.clone();
    progress.emit(ProgressEvent::selected(&selection));
    let mut acc = Acc::new(selection);
    acc.run_started = evidence.started();
    if req.options.redact_matchers {
        acc.matcher_view = Some(req.secrets.clone());
    }

    let mut cleanup = CleanupReport::default();
    if !selected.probe.available() {
        acc.block_on_probe(
            &selected.driver.id().to_string(),
            selected.probe.missing.clone(),
        );
        acc.skip_rest(flow, 0);
    } else if let Some(auth) = prepare_auth(flow, &req.workspace, &req.secrets, &mut acc) {
        let ctx = SessionContext::new(
            evidence.clone(),
            req.processes.clone(),
            flow_deadline,
            req.options.clone(),
            flow.evidence.as_ref(),
        )
        .with_auth(auth);
        if let Some(mut session) = launch(
            selected.driver.as_ref(),
            flow,
            ctx,
            flow_ms,
            flow_deadline,
            &req.cancel,
            &progress,
            &mut acc,
        )
        .await
        {
            steps::run_steps(
                session.as_mut(),
                flow,
                flow_deadline,
                flow_ms,
                &req.cancel,
                &progress,
                &mut acc,
            )
            .await;
            cleanup = close(session, req.cleanup_timeout, &progress, &mut acc).await;
        }
    }
    let result = finalize(
        Ending {
            evidence: &evidence,
            processes: &req.processes,
            secrets: &req.secrets,
            cleanup_timeout: req.cleanup_timeout,
            flow,
            flow_text: Some(&req.flow_text),
            run_id,
            started_at,
            started,
        },
        acc,
        cleanup,
    )
    .await;
    progress.emit(ProgressEvent::finished(&result));
    Ok(result)
}

/// The `auth` stage of a flow with `target.profile`: the profile is read
/// and its values registered as secrets before anything launches. `None`
/// when the run is BLOCKED (recorded in `acc`); `Some(None)` for a public
/// flow.
fn prepare_auth(
    flow: &Flow,
    workspace: &std::path::Path,
    secrets: &Secrets,
    acc: &mut Acc,
) -> Option<Option<Arc<qa_core::auth::AuthProfile>>> {
    let qa_core::flow::Target::Browser(t) = &flow.target else {
        return Some(None);
    };
    let Some(id) = t.profile.as_deref() else {
        return Some(None);
    };
    match crate::auth::prepare(workspace, id, secrets) {
        Ok(p) => Some(Some(Arc::new(p))),
        Err(b) => {
            acc.stage = "auth".into();
            acc.block(
                &qa_core::driver::DriverError::from_auth(b),
                BlockedReasonCode::MissingCapability,
            );
            acc.skip_rest(flow, 0);
            None
        }
    }
}

/// What ending a run needs (besides its record and the driver's cleanup).
struct Ending<'a> {
    evidence: &'a Arc<Evidence>,
    processes: &'a Arc<ProcessOwner>,
    secrets: &'a Arc<Secrets>,
    cleanup_timeout: Duration,
    flow: &'a Flow,
    flow_text: Option<&'a str>,
    run_id: String,
    started_at: String,
    started: Instant,
}

/// Ends a run: the safety-net cleanup, scratch removal, conditional
/// recordings, the result document (`result.json`) and `report.html`.
async fn finalize(e: Ending<'_>, mut acc: Acc, cleanup: CleanupReport) -> RunResult {
    acc.settle_fail_stage();
    acc.stage = "cleanup".into();
    // Safety net: end anything the driver registered and did not end.
    let _ = e
        .processes
        .end_all(DEFAULT_GRACE, Deadline::after(e.cleanup_timeout))
        .await;
    // What every end_all of this run did (drivers' and the runner's), plus
    // whatever drivers reported on their own; each process once.
    let mut journal = e.processes.take_journal();
    journal.merge(cleanup);
    let cleanup = record::dedup_cleanup(journal);

    // Scratch (a browser profile, an app's private runtime dir) is not
    // evidence; remove it unless a developer asked to keep it.
    if std::env::var_os(KEEP_SCRATCH_ENV).is_none() {
        if let Err(err) = e.evidence.remove_scratch() {
            acc.note(
                None,
                ObservationKind::Cleanup,
                format!("scratch files could not be removed: {err}"),
            );
        }
    }
    // `retain-on-failure` recordings go when the run passed.
    if acc.status == qa_core::result::RunStatus::Passed {
        e.evidence.discard_conditional();
    }
    // A registered value too common to redact reliably is named (never
    // shown): evidence that shows the word is redacted or withheld.
    for w in e.secrets.weak() {
        acc.note(None, ObservationKind::Evidence, w);
    }
    let mut result = acc.assemble(record::Finish {
        evidence: e.evidence,
        secrets: e.secrets,
        flow: e.flow,
        flow_text: e.flow_text,
        cleanup,
        run_id: e.run_id,
        started_at: e.started_at,
        duration_ms: e.started.elapsed().as_millis() as u64,
    });
    // The page a person opens, rendered from redacted data; fails closed:
    // when it cannot be made clean it is not written, and the result says
    // so (a withheld artifact and a note).
    let html = match crate::report::render_run_redacted(&result, e.evidence.run_dir(), e.secrets) {
        Ok(clean) => {
            if let Some(note) = clean.note {
                result.observations.push(qa_core::result::ObservationNote {
                    step: None,
                    kind: ObservationKind::Evidence,
                    message: note.into(),
                });
            }
            Some(clean.html)
        }
        Err(why) => {
            result
                .artifacts
                .withheld
                .push(qa_core::evidence::WithheldArtifact {
                    name: "report.html".into(),
                    reason: why.into(),
                });
            result.observations.push(qa_core::result::ObservationNote {
                step: None,
                kind: ObservationKind::EvidenceWithheld,
                message: format!("report.html was withheld: {why}"),
            });
            None
        }
    };
    if let Ok((_, mut f)) = e.evidence.root_file("result.json") {
        if let Ok(s) = serde_json::to_string_pretty(&result) {
            let _ = f.write_all(s.as_bytes());
            let _ = f.write_all(b"\n");
        }
    }
    if let Some(html) = html {
        if let Ok((_, mut f)) = e.evidence.root_file("report.html") {
            let _ = f.write_all(html.as_bytes());
        }
    }
    result
}

/// The `launch` stage: opens the session within the flow deadline, or
/// records why it could not (BLOCKED, failed, timed out, cancelled).
#[allow(clippy::too_many_arguments)]
async fn launch(
    driver: &dyn SurfaceDriver,
    flow: &Flow,
    ctx: SessionContext,
    flow_ms: u64,
    flow_deadline: Deadline,
    cancel: &Cancel,
    progress: &Progress<'_>,
    acc: &mut Acc,
) -> Option<Box<dyn SurfaceSession>> {
    acc.stage = "launch".into();
    progress.emit(ProgressEvent::stage_start("launch", None, None));
    let launch_started = Instant::now();
    let opened = tokio::select! {
        r = flow_deadline.run(driver.open(flow, ctx)) => r,
        _ = cancel.cancelled() => { acc.cancelled = true; None }
    };
    let (session, how) = match opened {
        Some(Ok(s)) => (Some(s), Outcome::Passed),
        Some(Err(e)) => {
            let how = if e.is_blocked() {
                Outcome::Blocked
            } else {
                Outcome::Failed
            };
            if e.is_blocked() {
                acc.block(&e, BlockedReasonCode::TargetUnobservable);
            } else {
                let fix = e
                    .remediation
                    .as_deref()
                    .map(|r| format!(" — fix: {r}"))
                    .unwrap_or_default();
                acc.fail(e.code, format!("launch failed: {}{fix}", e.message));
            }
            (None, how)
        }
        None => {
            if acc.cancelled {
                acc.fail(
                    CoreCode::RunCancelled.as_str(),
                    "cancelled during launch".into(),
                );
            } else {
                acc.timed_out = true;
                acc.fail(
                    CoreCode::RunTimeout.as_str(),
                    format!("flow deadline of {flow_ms} ms passed during launch"),
                );
            }
            (None, Outcome::TimedOut)
        }
    };
    progress.emit(ProgressEvent::stage_end(
        "launch",
        None,
        None,
        how,
        launch_started.elapsed(),
    ));
    if session.is_none() {
        acc.skip_rest(flow, 0);
    }
    session
}

/// The `cleanup` stage: closes the session within the cleanup deadline.
async fn close(
    session: Box<dyn SurfaceSession>,
    cleanup_timeout: Duration,
    progress: &Progress<'_>,
    acc: &mut Acc,
) -> CleanupReport {
    acc.stage = "cleanup".into();
    progress.emit(ProgressEvent::stage_start("cleanup", None, None));
    let t = Instant::now();
    let cleanup_deadline = Deadline::after(cleanup_timeout);
    let mut cleanup = CleanupReport::default();
    match cleanup_deadline.run(session.close(cleanup_deadline)).await {
        Some(c) => {
            cleanup = c.cleanup;
            for n in c.notes {
                acc.note(None, record::observation_kind(&n, ObservationKind::Driver), n.message);
            }
        }
        None => acc.note(
            None,
            ObservationKind::Cleanup,
            "the driver did not close within the cleanup deadline; owned processes were ended by the runner".into(),
        ),
    }
    progress.emit(ProgressEvent::stage_end(
        "cleanup",
        None,
        None,
        Outcome::Done,
        t.elapsed(),
    ));
    cleanup
}
