//! The conformance kit: one shared test runner ([`drive`]) and scenarios
//! every driver runs against its real surface, so each driver proves the
//! same contract — the way object_store's integration suite holds every
//! store to the same behaviour.
//!
//! A driver crate provides a [`Fixture`]: its driver and five flows for its
//! surface (one that passes, an assertion that never holds, one that
//! carries a secret, an action slower than its step deadline, and a target
//! that fails to open). [`check`] runs every scenario through the real
//! runner and reports each as passed or skipped; a scenario that breaks an
//! invariant is an `Err` naming it. A host where the driver is BLOCKED
//! reports the scenarios as skipped — never as passed.
//!
//! ```no_run
//! # async fn demo(fixture: qa_runner::conformance::Fixture) {
//! let report = qa_runner::conformance::check(&fixture).await.unwrap();
//! assert!(report.all_ran(), "{report}");
//! # }
//! ```
//!
//! [`drive`] runs a flow step by step through [`runner::run_step`] — the
//! very function `ui-qa run` uses — for driver tests that need to look at a
//! session between steps or expect a step to fail.

use crate::progress::NoProgress;
use crate::runner::{self, RunRequest, StepEnd, StepRun, DRIVER_GRACE};
use async_trait::async_trait;
use qa_core::codes::CoreCode;
use qa_core::deadline::{Cadence, Deadline};
use qa_core::driver::{
    CloseResult, DriverError, DriverInfo, Host, Probe, RunOptions, SessionContext, StepOutcome,
    SurfaceDriver, SurfaceSession, SurfaceState, Verdict,
};
use qa_core::evidence::{Artifact, Evidence};
use qa_core::flow::{Flow, Step, StepClass};
use qa_core::process::{identity, CleanupStatus, ProcessOwner};
use qa_core::result::{ObservationKind, RunResult, RunStatus, StepStatus};
use qa_core::secrets::Secrets;
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Bound within which `close` must return.
pub const CLOSE_BOUND: Duration = Duration::from_secs(20);

/// Most failure-evidence files one failed step may leave.
pub const MAX_FAILURE_FILES: usize = 8;

// ------------------------------------------------------------------ drive

/// A temporary workspace, removed when dropped.
#[derive(Debug)]
pub struct Workspace(PathBuf);

impl Workspace {
    /// A fresh, empty directory under the system temp dir, created here
    /// (`0700` on Unix), so a test may use it as a program's working
    /// directory at once.
    ///
    /// # Panics
    ///
    /// When the directory cannot be created (a test fixture has nothing
    /// better to do).
    pub fn new() -> Workspace {
        let p = std::env::temp_dir().join(format!("ui-qa-conformance-{}", runner::new_run_id()));
        #[cfg(unix)]
        let made = std::os::unix::fs::DirBuilderExt::mode(&mut std::fs::DirBuilder::new(), 0o700)
            .create(&p);
        #[cfg(not(unix))]
        let made = std::fs::create_dir(&p);
        made.unwrap_or_else(|e| panic!("conformance workspace {}: {e}", p.display()));
        Workspace(p)
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Default for Workspace {
    fn default() -> Self {
        Workspace::new()
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Options of [`drive`].
#[derive(Clone)]
#[allow(clippy::type_complexity)]
pub struct DriveOptions {
    /// Secrets to register before the session opens.
    pub secrets: Vec<String>,
    /// Run options passed to the driver.
    pub run: RunOptions,
    /// The flow deadline (default: the flow's own).
    pub flow_timeout: Option<Duration>,
    /// Bound on `close`.
    pub close_timeout: Duration,
    /// When every step passed: wait (polling every 50 ms, up to the bound)
    /// until this holds before closing — for an effect of the last step
    /// that lands a moment later, such as a program writing its answer as
    /// it exits.
    pub before_close: Option<(Arc<dyn Fn() -> bool + Send + Sync>, Duration)>,
}

impl Default for DriveOptions {
    fn default() -> Self {
        DriveOptions {
            secrets: Vec::new(),
            run: RunOptions::default(),
            flow_timeout: None,
            close_timeout: Duration::from_secs(30),
            before_close: None,
        }
    }
}

/// What [`drive`] does after a step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Go on with the next step.
    Continue,
    /// Run the same step again after the next cadence wait (only for a
    /// step whose failure is the awaited event, such as a popup closing).
    Retry,
    /// Stop here and close the session.
    Stop,
}

/// The default policy: go on while steps pass, stop at the first failure.
pub fn stop_on_failure(_step: &Step, run: &StepRun) -> Next {
    match run.end {
        StepEnd::Passed(_) => Next::Continue,
        _ => Next::Stop,
    }
}

/// One step as [`drive`] ran it.
#[derive(Debug)]
pub struct Driven {
    /// 0-based step index.
    pub index: usize,
    /// What [`runner::run_step`] returned (the last attempt when retried).
    pub run: StepRun,
    /// Wall time of the step, retries included.
    pub duration: Duration,
    /// Attempts (1 unless the policy asked for retries).
    pub attempts: u32,
}

impl Driven {
    /// `Ok(detail)` when the step passed, else `Err("code: reason")`.
    pub fn result(&self) -> Result<String, String> {
        describe_end(&self.run.end)
    }
}

/// `Ok(detail)` for a passed step, else `Err("code: reason")`.
pub fn describe_end(end: &StepEnd) -> Result<String, String> {
    match end {
        StepEnd::Passed(d) => Ok(d.clone().unwrap_or_default()),
        StepEnd::Failed(code, r) => Err(format!("{code}: {r}")),
        StepEnd::Blocked(e) => Err(format!(
            "{}: {} [blocked: {}]",
            e.code,
            e.message,
            e.missing
                .iter()
                .map(|m| m.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
        StepEnd::TimedOut => Err(format!("{}: step deadline passed", CoreCode::StepTimeout)),
        StepEnd::Cancelled => Err(format!("{}: cancelled", CoreCode::RunCancelled)),
    }
}

/// The step's failure as a [`DriverError`] (`None` when it passed): the
/// driver's own error, or the runner's verdict (`assertion.timeout`,
/// `step.timeout`, …) as a coded error.
pub fn end_error(end: &StepEnd) -> Option<DriverError> {
    let coded = |code: &'static str, message: String| DriverError {
        code,
        message,
        remediation: None,
        missing: Vec::new(),
        mismatch: None,
        notes: Vec::new(),
    };
    match end {
        StepEnd::Passed(_) => None,
        StepEnd::Failed(code, r) => Some(coded(code, r.clone())),
        StepEnd::Blocked(e) => Some(e.clone()),
        StepEnd::TimedOut => Some(coded(
            CoreCode::StepTimeout.as_str(),
            "the step deadline passed".into(),
        )),
        StepEnd::Cancelled => Some(coded(CoreCode::RunCancelled.as_str(), "cancelled".into())),
    }
}

/// What [`drive`] produced.
pub struct Drive {
    /// The open error, when the session never opened.
    pub open_error: Option<DriverError>,
    /// The steps run, in order.
    pub steps: Vec<Driven>,
    /// What the driver captured after the step that stopped the run failed
    /// (bounded like the runner's failure capture).
    pub failure_evidence: Vec<Artifact>,
    /// What closing did (after a failed open: what ending the owner's
    /// processes did).
    pub close: CloseResult,
    /// The run's evidence store.
    pub evidence: Arc<Evidence>,
    /// The run's process owner.
    pub processes: Arc<ProcessOwner>,
    /// The run's secrets.
    pub secrets: Arc<Secrets>,
    /// Keeps the workspace until the test is done with it.
    pub workspace: Workspace,
}

impl Drive {
    /// Whether the session opened and every step passed.
    pub fn passed(&self) -> bool {
        self.open_error.is_none() && self.steps.iter().all(|s| s.result().is_ok())
    }

    /// The first error: the open error, or the first failed step's.
    pub fn error(&self) -> Option<DriverError> {
        self.open_error
            .clone()
            .or_else(|| self.steps.iter().find_map(|s| end_error(&s.run.end)))
    }

    /// The first failure as `code: reason` (the open error included).
    pub fn failure(&self) -> Option<String> {
        if let Some(e) = &self.open_error {
            return Some(format!("{}: {}", e.code, e.message));
        }
        self.steps.iter().find_map(|s| s.result().err())
    }

    /// Panics naming the first failure.
    pub fn assert_passed(&self) {
        if let Some(f) = self.failure() {
            panic!("flow failed: {f}");
        }
    }

    /// The run directory.
    pub fn run_dir(&self) -> &Path {
        self.evidence.run_dir()
    }

    /// Every artifact the run published.
    pub fn artifacts(&self) -> Vec<Artifact> {
        self.evidence.artifacts()
    }

    /// Every note: the steps' and the close's.
    pub fn notes(&self) -> Vec<String> {
        self.steps
            .iter()
            .flat_map(|s| s.run.notes.iter().map(|n| n.message.clone()))
            .chain(self.close.notes.iter().map(|n| n.message.clone()))
            .collect()
    }
}

/// Opens `flow` on `driver`, runs its steps through [`runner::run_step`]
/// (actions once, assertions on the shared cadence, the same deadlines and
/// grace as `ui-qa run`), asks `policy` after each step what to do next,
/// keeps the driver's failure capture when a failed step stops the run (as
/// the runner does), then closes the session. `between` is called before each step with the
/// open session (to inspect the surface); pass `|_, _| {}` when not needed.
pub async fn drive(
    driver: &dyn SurfaceDriver,
    flow: &Flow,
    opts: DriveOptions,
    mut policy: impl FnMut(&Step, &StepRun) -> Next,
) -> Drive {
    let workspace = Workspace::new();
    let secrets = Arc::new(Secrets::new());
    for s in &opts.secrets {
        secrets.add(s);
    }
    let evidence = Arc::new(
        Evidence::create(workspace.path(), "run", secrets.clone())
            .expect("a fresh evidence store in the temp dir"),
    );
    let processes = Arc::new(ProcessOwner::new());
    let flow_timeout = opts
        .flow_timeout
        .unwrap_or(Duration::from_millis(flow.flow_timeout_ms()));
    let flow_deadline = Deadline::after(flow_timeout);
    let ctx = SessionContext::new(
        evidence.clone(),
        processes.clone(),
        flow_deadline,
        opts.run.clone(),
        flow.evidence.as_ref(),
    );
    let mut steps: Vec<Driven> = Vec::new();
    let mut failure_evidence = Vec::new();
    let (open_error, close) = match flow_deadline.run(driver.open(flow, ctx)).await {
        Some(Ok(mut session)) => {
            let mut i = 0;
            while i < flow.steps.len() {
                let step = &flow.steps[i];
                let started = Instant::now();
                let deadline = Deadline::after_ms(step.step_timeout_ms()).min(flow_deadline);
                let mut cadence = Cadence::new();
                let mut attempts = 0;
                let (run, next) = loop {
                    attempts += 1;
                    let run = runner::run_step(session.as_mut(), step, deadline).await;
                    match policy(step, &run) {
                        Next::Retry if cadence.wait(deadline).await => continue,
                        Next::Retry => break (run, Next::Stop),
                        next => break (run, next),
                    }
                };
                steps.push(Driven {
                    index: i,
                    run,
                    duration: started.elapsed(),
                    attempts,
                });
                if next == Next::Stop {
                    if describe_end(&steps[steps.len() - 1].run.end).is_err() {
                        // Keep what the surface looked like, as the runner does.
                        let bound = Deadline::after(runner::FAILURE_CAPTURE_TIMEOUT);
                        failure_evidence = bound
                            .run(session.capture_failure(step))
                            .await
                            .unwrap_or_default();
                    }
                    break;
                }
                i += 1;
            }
            let all_passed = steps.len() == flow.steps.len()
                && steps.iter().all(|s| describe_end(&s.run.end).is_ok());
            if let (true, Some((done, limit))) = (all_passed, &opts.before_close) {
                let until = Instant::now() + *limit;
                while !done() && Instant::now() < until {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
            let bound = Deadline::after(opts.close_timeout);
            let close = bound.run(session.close(bound)).await.unwrap_or_default();
            (None, close)
        }
        Some(Err(e)) => (Some(e), CloseResult::default()),
        None => (
            Some(DriverError::new(
                CoreCode::RunTimeout,
                format!("open did not finish within {} ms", flow_timeout.as_millis()),
            )),
            CloseResult::default(),
        ),
    };
    let mut close = close;
    // Whatever the session left (or a failed open started) is ended here,
    // as the runner's safety net does.
    let rest = processes
        .end_all(Duration::from_secs(2), Deadline::after_ms(10_000))
        .await;
    close.cleanup.merge(rest);
    Drive {
        open_error,
        steps,
        failure_evidence,
        close,
        evidence,
        processes,
        secrets,
        workspace,
    }
}

// -------------------------------------------------------------- scenarios

/// A flow of a fixture: its text (as a user would write it) and the
/// directory its relative paths resolve against.
#[derive(Debug, Clone)]
pub struct FixtureFlow {
    /// The JSONC text.
    pub text: String,
    /// Base directory for relative paths.
    pub base: PathBuf,
}

impl FixtureFlow {
    /// A flow from text.
    pub fn new(text: impl Into<String>, base: impl Into<PathBuf>) -> FixtureFlow {
        FixtureFlow {
            text: text.into(),
            base: base.into(),
        }
    }

    fn parse(&self) -> Result<Flow, String> {
        Flow::parse(&self.text, &self.base).map_err(|e| format!("fixture flow: {e:?}"))
    }
}

/// What a driver crate provides to run the scenarios on its surface.
pub struct Fixture {
    /// The driver under test.
    pub driver: Arc<dyn SurfaceDriver>,
    /// Run options (e.g. `virtual_display` for the desktop driver).
    pub options: RunOptions,
    /// A flow that passes: at least one action and one assertion.
    pub passing: FixtureFlow,
    /// A flow whose last step is an assertion that never holds, with a
    /// short step `timeoutMs` (1–3 s).
    pub never_holds: FixtureFlow,
    /// A flow that shows `secret` on the surface (typed, served, printed).
    pub secret_flow: FixtureFlow,
    /// The secret value (registered before the run).
    pub secret: String,
    /// A flow with an action that cannot finish within its short
    /// step `timeoutMs` (1–3 s).
    pub slow_action: FixtureFlow,
    /// A flow whose target cannot be opened (a missing program, nothing
    /// listening).
    pub failing_open: FixtureFlow,
}

/// How a scenario ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScenarioOutcome {
    /// Every invariant held.
    Passed,
    /// The driver is BLOCKED on this host: nothing was checked.
    Skipped(String),
}

/// The outcome of every scenario.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// `(scenario, outcome)` in the order run.
    pub scenarios: Vec<(&'static str, ScenarioOutcome)>,
}

impl Report {
    /// Whether every scenario ran (none skipped).
    pub fn all_ran(&self) -> bool {
        self.scenarios
            .iter()
            .all(|(_, o)| *o == ScenarioOutcome::Passed)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (name, o) in &self.scenarios {
            match o {
                ScenarioOutcome::Passed => writeln!(f, "passed  {name}")?,
                ScenarioOutcome::Skipped(why) => writeln!(f, "skipped {name}: {why}")?,
            }
        }
        Ok(())
    }
}

type Scenario = for<'a> fn(
    &'a Fixture,
) -> std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<ScenarioOutcome, String>> + Send + 'a>,
>;

/// The scenarios, by name.
pub const SCENARIOS: &[(&str, Scenario)] = &[
    ("probe_is_honest", |f| Box::pin(probe_is_honest(f))),
    ("passing_flow_keeps_the_contract", |f| {
        Box::pin(passing_flow_keeps_the_contract(f))
    }),
    ("actions_are_dispatched_once", |f| {
        Box::pin(actions_are_dispatched_once(f))
    }),
    ("assertion_retries_until_its_deadline", |f| {
        Box::pin(assertion_retries_until_its_deadline(f))
    }),
    ("step_deadline_is_honoured", |f| {
        Box::pin(step_deadline_is_honoured(f))
    }),
    ("secrets_never_leave_the_run", |f| {
        Box::pin(secrets_never_leave_the_run(f))
    }),
    ("failed_open_closes_cleanly", |f| {
        Box::pin(failed_open_closes_cleanly(f))
    }),
    ("close_is_bounded_and_clean", |f| {
        Box::pin(close_is_bounded_and_clean(f))
    }),
];

/// Runs every scenario; `Err` lists each scenario that broke an invariant.
pub async fn check(fixture: &Fixture) -> Result<Report, String> {
    let mut report = Report::default();
    let mut failures = Vec::new();
    for (name, scenario) in SCENARIOS {
        match scenario(fixture).await {
            Ok(o) => report.scenarios.push((name, o)),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    if failures.is_empty() {
        Ok(report)
    } else {
        Err(failures.join("\n"))
    }
}

async fn probe(f: &Fixture, flow: &Flow) -> Probe {
    f.driver.probe(flow, &Host::current(), &f.options).await
}

fn skipped(p: &Probe) -> ScenarioOutcome {
    ScenarioOutcome::Skipped(
        p.missing
            .iter()
            .map(|m| format!("{} ({})", m.id, m.reason))
            .collect::<Vec<_>>()
            .join("; "),
    )
}

/// Runs `flow` through the real runner with `secrets` registered.
async fn run(
    driver: Arc<dyn SurfaceDriver>,
    flow: &FixtureFlow,
    options: &RunOptions,
    secrets: &[&str],
) -> Result<(RunResult, Workspace), String> {
    let parsed = flow.parse()?;
    let ws = Workspace::new();
    let mut req = RunRequest::new(parsed, flow.text.clone(), ws.path().to_path_buf());
    req.options = options.clone();
    let s = Secrets::new();
    for v in secrets {
        s.add(v);
    }
    req.secrets = Arc::new(s);
    let r = runner::run(&[driver], req, &NoProgress)
        .await
        .map_err(|e| e.to_string())?;
    Ok((r, ws))
}

/// The invariants of every finished run: a result.json in an absolute run
/// directory, every artifact inside it with its size, a complete handoff
/// when BLOCKED, a clean cleanup, and nothing it reported ended still alive.
fn run_invariants(r: &RunResult) -> Result<(), String> {
    let run_dir = Path::new(&r.evidence_dir);
    if !run_dir.is_absolute() || !run_dir.join("result.json").is_file() {
        return Err("the run directory has no result.json".into());
    }
    for a in r.artifacts.all() {
        let p = Path::new(&a.path);
        if !p.is_absolute() || !p.starts_with(run_dir) {
            return Err(format!("artifact outside the run dir: {}", a.path));
        }
        if !a.uri.starts_with("file://") {
            return Err(format!("artifact uri is not file: {}", a.uri));
        }
        let meta = std::fs::metadata(p).map_err(|e| format!("{}: {e}", a.path))?;
        if meta.len() != a.bytes {
            return Err(format!("artifact size mismatch: {}", a.path));
        }
    }
    if r.status == RunStatus::Blocked {
        let h = r
            .blocked_handoff
            .as_ref()
            .ok_or("BLOCKED without blockedHandoff")?;
        if !h.manual_action_required || h.automatic_remediation_attempted {
            return Err("handoff flags are wrong".into());
        }
        if h.reason.is_empty() || h.remediation.is_empty() {
            return Err("handoff without reason or remediation".into());
        }
    }
    if r.cleanup.status != CleanupStatus::Clean {
        return Err(format!("cleanup incomplete: {:?}", r.cleanup.left));
    }
    for e in &r.cleanup.ended {
        if identity::alive(e.pid) {
            return Err(format!(
                "pid {} ({}) reported ended but is alive",
                e.pid, e.label
            ));
        }
    }
    Ok(())
}

/// A BLOCKED probe names what is missing and how to fix it; an available
/// one reports what it found.
pub async fn probe_is_honest(f: &Fixture) -> Result<ScenarioOutcome, String> {
    let flow = f.passing.parse()?;
    let p = probe(f, &flow).await;
    if p.driver != f.driver.id() {
        return Err(format!(
            "probe answered for {} not {}",
            p.driver,
            f.driver.id()
        ));
    }
    for m in &p.missing {
        if m.id.is_empty() || m.reason.is_empty() || m.remediation.is_empty() {
            return Err(format!(
                "missing capability without id/reason/remediation: {m:?}"
            ));
        }
    }
    if p.available() && p.present.is_empty() {
        return Err("an available driver must report the capabilities it found".into());
    }
    let info: &DriverInfo = f.driver.info();
    if info.guide_topic.is_empty() || info.support.actions.is_empty() {
        return Err("driver info without a guide topic or actions".into());
    }
    Ok(if p.available() {
        ScenarioOutcome::Passed
    } else {
        skipped(&p)
    })
}

/// The passing flow PASSES through the runner and keeps every run
/// invariant.
pub async fn passing_flow_keeps_the_contract(f: &Fixture) -> Result<ScenarioOutcome, String> {
    let flow = f.passing.parse()?;
    let p = probe(f, &flow).await;
    if !p.available() {
        return Ok(skipped(&p));
    }
    let (r, _ws) = run(f.driver.clone(), &f.passing, &f.options, &[]).await?;
    if r.status != RunStatus::Passed {
        return Err(format!("the passing flow did not pass: {:?}", r.reason));
    }
    if r.steps.iter().any(|s| s.status != StepStatus::Passed) {
        return Err("a step of a PASSED run is not passed".into());
    }
    run_invariants(&r)?;
    Ok(ScenarioOutcome::Passed)
}

/// The runner dispatches every action exactly once (counted at the driver
/// boundary), even in a passing run.
pub async fn actions_are_dispatched_once(f: &Fixture) -> Result<ScenarioOutcome, String> {
    let flow = f.passing.parse()?;
    let p = probe(f, &flow).await;
    if !p.available() {
        return Ok(skipped(&p));
    }
    let counting = Arc::new(Counting {
        inner: f.driver.clone(),
        performs: Arc::new(Mutex::new(HashMap::new())),
    });
    let (r, _ws) = run(counting.clone(), &f.passing, &f.options, &[]).await?;
    run_invariants(&r)?;
    let performs = counting.performs.lock().map_err(|e| e.to_string())?.clone();
    for step in &flow.steps {
        let n = performs.get(&step.index).copied().unwrap_or(0);
        let want = u32::from(step.class() == StepClass::Action);
        if n != want {
            return Err(format!(
                "step {} {} was performed {n} time(s), expected {want}",
                step.index + 1,
                step.action_name()
            ));
        }
    }
    Ok(ScenarioOutcome::Passed)
}

/// An assertion that never holds is asked again on the cadence until its
/// step deadline, then fails with `assertion.timeout`, the last observation
/// and bounded failure evidence (including the typed surface state).
pub async fn assertion_retries_until_its_deadline(f: &Fixture) -> Result<ScenarioOutcome, String> {
    let flow = f.never_holds.parse()?;
    let p = probe(f, &flow).await;
    if !p.available() {
        return Ok(skipped(&p));
    }
    let last = flow.steps.last().ok_or("never_holds has no steps")?;
    if last.class() != StepClass::Assertion {
        return Err("never_holds must end with an assertion".into());
    }
    let timeout = Duration::from_millis(last.step_timeout_ms());
    let (r, _ws) = run(f.driver.clone(), &f.never_holds, &f.options, &[]).await?;
    run_invariants(&r)?;
    if r.status != RunStatus::Failed
        || r.reason_code.as_deref() != Some(CoreCode::AssertionTimeout.as_str())
    {
        return Err(format!(
            "expected FAILED with assertion.timeout, got {:?} {:?}: {:?}",
            r.status, r.reason_code, r.reason
        ));
    }
    let rec = r
        .assertions
        .iter()
        .find(|a| a.step == last.index + 1)
        .ok_or("no assertion record for the failing step")?;
    // The cadence is 0, 20, 100, 100, 500 ms…: a deadline of a second or
    // more leaves room for at least three verdicts on any machine.
    if rec.passed || rec.attempts < 3 || rec.observed.is_none() {
        return Err(format!("assertion record is wrong: {rec:?}"));
    }
    let step = r
        .steps
        .iter()
        .find(|s| s.index == last.index + 1)
        .ok_or("no record of the failing step")?;
    let took = Duration::from_millis(step.duration_ms);
    if took + Duration::from_millis(50) < timeout {
        return Err(format!(
            "the assertion gave up after {took:?}, before its {timeout:?} deadline"
        ));
    }
    if took > timeout + DRIVER_GRACE + Duration::from_secs(30) {
        return Err(format!(
            "the assertion ran {took:?} past its {timeout:?} deadline"
        ));
    }
    let evidence_notes = r
        .observations
        .iter()
        .filter(|o| o.kind == ObservationKind::FailureEvidence)
        .count();
    if evidence_notes == 0 {
        return Err("no failure evidence (capture or surface state) was recorded".into());
    }
    let failure_files = r
        .artifacts
        .all()
        .into_iter()
        .filter(|a| a.path.contains("failure-step"))
        .count();
    if failure_files > MAX_FAILURE_FILES {
        return Err(format!(
            "{failure_files} failure files; the bound is {MAX_FAILURE_FILES}"
        ));
    }
    Ok(ScenarioOutcome::Passed)
}

/// An action slower than its step deadline ends within the deadline plus
/// the driver grace (never hangs the run), the rest is skipped, and cleanup
/// is clean.
pub async fn step_deadline_is_honoured(f: &Fixture) -> Result<ScenarioOutcome, String> {
    let flow = f.slow_action.parse()?;
    let p = probe(f, &flow).await;
    if !p.available() {
        return Ok(skipped(&p));
    }
    let (r, _ws) = run(f.driver.clone(), &f.slow_action, &f.options, &[]).await?;
    run_invariants(&r)?;
    if r.status != RunStatus::Failed {
        return Err(format!(
            "expected FAILED, got {:?}: {:?}",
            r.status, r.reason
        ));
    }
    let failed = r
        .steps
        .iter()
        .find(|s| matches!(s.status, StepStatus::Failed | StepStatus::TimedOut))
        .ok_or("no step failed")?;
    let step = &flow.steps[failed.index - 1];
    if step.class() != StepClass::Action {
        return Err(format!(
            "the failing step {} is not an action",
            failed.index
        ));
    }
    let timeout = Duration::from_millis(step.step_timeout_ms());
    let took = Duration::from_millis(failed.duration_ms);
    if took > timeout + DRIVER_GRACE + Duration::from_secs(30) {
        return Err(format!(
            "the action ran {took:?} past its {timeout:?} deadline"
        ));
    }
    if r.steps[failed.index..]
        .iter()
        .any(|s| s.status != StepStatus::Skipped)
    {
        return Err("steps after the failure were not skipped".into());
    }
    Ok(ScenarioOutcome::Passed)
}

/// A secret shown on the surface appears nowhere in the result or in any
/// file of the run directory, in plain text or its common encodings.
pub async fn secrets_never_leave_the_run(f: &Fixture) -> Result<ScenarioOutcome, String> {
    let flow = f.secret_flow.parse()?;
    let p = probe(f, &flow).await;
    if !p.available() {
        return Ok(skipped(&p));
    }
    if f.secret.len() < 8 {
        return Err("the fixture's secret must be at least 8 characters".into());
    }
    let (r, _ws) = run(f.driver.clone(), &f.secret_flow, &f.options, &[&f.secret]).await?;
    run_invariants(&r)?;
    let check = Secrets::new();
    check.add(&f.secret);
    let doc = serde_json::to_string(&r).map_err(|e| e.to_string())?;
    if check.found_in(doc.as_bytes()) {
        return Err("the result document contains the secret".into());
    }
    let mut files = Vec::new();
    walk(Path::new(&r.evidence_dir), &mut files);
    if files.is_empty() {
        return Err("the run directory is empty".into());
    }
    for file in files {
        let bytes = std::fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        if check.found_in(&bytes) {
            return Err(format!("{} contains the secret", file.display()));
        }
    }
    Ok(ScenarioOutcome::Passed)
}

/// A target that cannot be opened fails (never PASSED, never a hang),
/// reports a stable code, and leaves nothing running.
pub async fn failed_open_closes_cleanly(f: &Fixture) -> Result<ScenarioOutcome, String> {
    let flow = f.failing_open.parse()?;
    let p = probe(f, &flow).await;
    if !p.available() {
        return Ok(skipped(&p));
    }
    let (r, _ws) = run(f.driver.clone(), &f.failing_open, &f.options, &[]).await?;
    run_invariants(&r)?;
    if r.status == RunStatus::Passed {
        return Err("a target that cannot open PASSED".into());
    }
    if r.reason_code.as_deref().unwrap_or("").is_empty() {
        return Err("a failed open without a reason code".into());
    }
    Ok(ScenarioOutcome::Passed)
}

/// Opening then closing is bounded, reports a clean cleanup, and ends every
/// process it reported; ending again finds nothing left (idempotent).
pub async fn close_is_bounded_and_clean(f: &Fixture) -> Result<ScenarioOutcome, String> {
    let flow = f.passing.parse()?;
    let p = probe(f, &flow).await;
    if !p.available() {
        return Ok(skipped(&p));
    }
    let ws = Workspace::new();
    let secrets = Arc::new(Secrets::new());
    let evidence =
        Arc::new(Evidence::create(ws.path(), "close", secrets.clone()).map_err(|e| e.to_string())?);
    let processes = Arc::new(ProcessOwner::new());
    let ctx = SessionContext::new(
        evidence,
        processes.clone(),
        Deadline::after_ms(flow.flow_timeout_ms()),
        f.options.clone(),
        flow.evidence.as_ref(),
    );
    let mut session = match f.driver.open(&flow, ctx).await {
        Ok(s) => s,
        Err(e) if e.is_blocked() => return Ok(ScenarioOutcome::Skipped(e.message)),
        Err(e) => return Err(format!("open failed: {e}")),
    };
    // The typed state is available on an open session and bounded.
    let state = Deadline::after_ms(5000)
        .run(session.observe())
        .await
        .ok_or("observe did not return within 5 s")?
        .map_err(|e| format!("observe failed: {e}"))?;
    check_state(&state)?;
    let t = Instant::now();
    let closed = Deadline::after(CLOSE_BOUND)
        .run(session.close(Deadline::after(CLOSE_BOUND)))
        .await
        .ok_or("close did not return within its deadline")?;
    if t.elapsed() > CLOSE_BOUND + Duration::from_secs(1) {
        return Err("close overran its deadline".into());
    }
    if closed.cleanup.status != CleanupStatus::Clean || !closed.cleanup.left.is_empty() {
        return Err(format!("cleanup left processes: {:?}", closed.cleanup.left));
    }
    for e in &closed.cleanup.ended {
        if identity::alive(e.pid) {
            return Err(format!(
                "pid {} ({}) reported ended but is alive",
                e.pid, e.label
            ));
        }
    }
    let again = processes
        .end_all(Duration::from_millis(200), Deadline::after_ms(2000))
        .await;
    if !again.ended.is_empty() || !again.left.is_empty() {
        return Err(format!("second cleanup still found processes: {again:?}"));
    }
    Ok(ScenarioOutcome::Passed)
}

fn check_state(state: &SurfaceState) -> Result<(), String> {
    let bounded = serde_json::to_string(state).map_err(|e| e.to_string())?;
    if bounded.len() > 64 * 1024 {
        return Err(format!(
            "the surface state is {} bytes; keep it bounded",
            bounded.len()
        ));
    }
    if let SurfaceState::Terminal { cols, rows, .. } = state {
        if *cols == 0 || *rows == 0 {
            return Err("a terminal state with no size".into());
        }
    }
    Ok(())
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => walk(&p, out),
            Ok(t) if t.is_file() => out.push(p),
            _ => {}
        }
    }
}

/// A driver wrapper that counts `perform` calls per step index.
struct Counting {
    inner: Arc<dyn SurfaceDriver>,
    performs: Arc<Mutex<HashMap<usize, u32>>>,
}

struct CountingSession {
    inner: Box<dyn SurfaceSession>,
    performs: Arc<Mutex<HashMap<usize, u32>>>,
}

#[async_trait]
impl SurfaceDriver for Counting {
    fn info(&self) -> &DriverInfo {
        self.inner.info()
    }

    async fn probe(&self, flow: &Flow, host: &Host, options: &RunOptions) -> Probe {
        self.inner.probe(flow, host, options).await
    }

    async fn open(
        &self,
        flow: &Flow,
        ctx: SessionContext,
    ) -> Result<Box<dyn SurfaceSession>, DriverError> {
        let inner = self.inner.open(flow, ctx).await?;
        Ok(Box::new(CountingSession {
            inner,
            performs: self.performs.clone(),
        }))
    }
}

#[async_trait]
impl SurfaceSession for CountingSession {
    async fn observe(&mut self) -> Result<SurfaceState, DriverError> {
        self.inner.observe().await
    }

    async fn perform(
        &mut self,
        step: &Step,
        deadline: Deadline,
    ) -> Result<StepOutcome, DriverError> {
        if let Ok(mut m) = self.performs.lock() {
            *m.entry(step.index).or_insert(0) += 1;
        }
        self.inner.perform(step, deadline).await
    }

    async fn verify(&mut self, step: &Step, deadline: Deadline) -> Result<Verdict, DriverError> {
        self.inner.verify(step, deadline).await
    }

    async fn capture_failure(&mut self, step: &Step) -> Vec<Artifact> {
        self.inner.capture_failure(step).await
    }

    async fn close(self: Box<Self>, deadline: Deadline) -> CloseResult {
        self.inner.close(deadline).await
    }
}
