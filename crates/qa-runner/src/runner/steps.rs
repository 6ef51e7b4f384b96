//! Step execution: each step within its deadline (and the flow's), actions
//! dispatched once, assertions asked for a fresh verdict on the shared
//! cadence, and what the surface looked like kept when a step fails.

use super::record::Acc;
use super::{Cancel, FAILURE_CAPTURE_TIMEOUT};
use crate::progress::{Progress, ProgressEvent};
use qa_core::codes::CoreCode;
use qa_core::deadline::{Cadence, Deadline};
use qa_core::driver::{DriverError, Note, SurfaceSession, Verdict};
use qa_core::flow::{Flow, Step, StepClass};
use qa_core::mismatch::Mismatch;
use qa_core::result::{
    AssertionRecord, BlockedReasonCode, ObservationKind, StepRecord, StepStatus,
};
use std::time::{Duration, Instant};

fn stage_name(step: &Step) -> String {
    format!("step {} {}", step.index + 1, step.action_name())
}

/// How one step ended, as the runner judges it.
#[derive(Debug)]
pub enum StepEnd {
    /// It held / it was done, with the driver's short detail.
    Passed(Option<String>),
    /// It failed with a stable code and a reason.
    Failed(&'static str, String),
    /// The driver could not look (a missing capability): the run is BLOCKED.
    Blocked(DriverError),
    /// The step deadline passed with the driver still busy.
    TimedOut,
    /// The run was cancelled during the step.
    Cancelled,
}

/// What running one step produced: how it ended, the driver's notes, the
/// assertion record (assertions only) and how many times the driver was
/// called (`perform` once for an action; `verify` once per attempt).
#[derive(Debug)]
pub struct StepRun {
    /// How it ended.
    pub end: StepEnd,
    /// Notes the driver reported.
    pub notes: Vec<Note>,
    /// The assertion's record, for assertion steps.
    pub assertion: Option<AssertionRecord>,
    /// Calls made to the driver for this step.
    pub calls: u32,
    /// What a failed step expected and found, when the driver said.
    pub mismatch: Option<Mismatch>,
}

impl StepRun {
    fn ended(end: StepEnd, calls: u32) -> StepRun {
        StepRun {
            end,
            notes: Vec::new(),
            assertion: None,
            calls,
            mismatch: None,
        }
    }

    fn failed(e: DriverError, calls: u32) -> StepRun {
        let message = with_fix(&e);
        StepRun {
            mismatch: e.mismatch.map(|m| *m),
            notes: e.notes,
            ..StepRun::ended(StepEnd::Failed(e.code, message), calls)
        }
    }
}

/// The error's message, with what a person can do about it when the driver
/// says (`… — fix: …`).
fn with_fix(e: &DriverError) -> String {
    match &e.remediation {
        Some(r) if !r.is_empty() => format!("{} — fix: {r}", e.message),
        _ => e.message.clone(),
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) async fn run_steps(
    session: &mut dyn SurfaceSession,
    flow: &Flow,
    flow_deadline: Deadline,
    flow_ms: u64,
    cancel: &Cancel,
    progress: &Progress<'_>,
    acc: &mut Acc,
) {
    for (i, step) in flow.steps.iter().enumerate() {
        let status =
            run_recorded(session, step, flow_deadline, flow_ms, cancel, progress, acc).await;
        if status != StepStatus::Passed {
            acc.skip_rest(flow, i + 1);
            return;
        }
    }
}

/// Runs one step under its deadline (bounded by the flow's), records it
/// (status, reason, notes, assertion, progress) and, when it did not pass,
/// keeps the failure evidence.
pub(super) async fn run_recorded(
    session: &mut dyn SurfaceSession,
    step: &Step,
    flow_deadline: Deadline,
    flow_ms: u64,
    cancel: &Cancel,
    progress: &Progress<'_>,
    acc: &mut Acc,
) -> StepStatus {
    let stage = stage_name(step);
    acc.stage = stage.clone();
    progress.emit(
        ProgressEvent::stage_start(&stage, Some(step.index + 1), Some(step.action_name()))
            .described(step.name.as_deref(), None),
    );
    let t = Instant::now();
    let own_deadline = Deadline::after_ms(step.step_timeout_ms());
    // The flow's deadline, not the step's, bounds this step: when it
    // passes, the run timed out (run.timeout), whatever the step saw.
    let flow_bound = flow_deadline < own_deadline;
    let step_deadline = own_deadline.min(flow_deadline);
    let mut mismatch = None;
    let view = acc.matcher_view.clone();
    let mut only_in_secret = false;
    let run = async {
        match view {
            Some(s) => {
                qa_core::flow::redacted_view(s, run_step(session, step, step_deadline)).await
            }
            None => (run_step(session, step, step_deadline).await, false),
        }
    };
    let end = tokio::select! {
        (r, hidden) = run => {
            only_in_secret = hidden;
            for n in r.notes {
                acc.note(Some(step.index + 1), super::record::observation_kind(&n, ObservationKind::Step), n.message);
            }
            acc.assertions.extend(r.assertion);
            mismatch = r.mismatch;
            r.end
        }
        _ = cancel.cancelled() => StepEnd::Cancelled,
    };
    let dur = t.elapsed();
    let (status, reason, detail) = match end {
        StepEnd::Passed(d) => (StepStatus::Passed, None, d),
        StepEnd::Failed(_, r) if flow_bound && flow_deadline.expired() => {
            acc.timed_out = true;
            let r = format!("flow deadline of {flow_ms} ms passed; {r}");
            acc.fail(CoreCode::RunTimeout.as_str(), format!("{r} during {stage}"));
            (StepStatus::TimedOut, Some(r), None)
        }
        StepEnd::Failed(code, r) => {
            let r = if only_in_secret {
                format!("{r} (the expectation holds only where a secret value is shown; matchers see secrets as {})", qa_core::secrets::REDACTED)
            } else {
                r
            };
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
            acc.block(&e, BlockedReasonCode::TargetUnobservable);
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
                acc.fail(CoreCode::RunTimeout.as_str(), format!("{r} during {stage}"));
            } else {
                acc.fail(
                    CoreCode::StepTimeout.as_str(),
                    format!("step {} {} failed: {r}", step.index + 1, step.action_name()),
                );
            }
            (StepStatus::TimedOut, Some(r), None)
        }
        StepEnd::Cancelled => {
            acc.cancelled = true;
            acc.fail(
                CoreCode::RunCancelled.as_str(),
                format!("cancelled during {stage}"),
            );
            (StepStatus::Failed, Some("cancelled".into()), None)
        }
    };
    progress.emit(
        ProgressEvent::stage_end(
            &stage,
            Some(step.index + 1),
            Some(step.action_name()),
            status.into(),
            dur,
        )
        .described(step.name.as_deref(), detail.as_deref()),
    );
    acc.steps.push(StepRecord {
        index: step.index + 1,
        action: step.action_name().into(),
        name: step.name.clone(),
        locator: step.locator_text(),
        value: step.value_text(),
        line: None,
        status,
        started_ms: Some(t.saturating_duration_since(acc.run_started).as_millis() as u64),
        duration_ms: dur.as_millis() as u64,
        failure: (status != StepStatus::Passed)
            .then(|| failure_of(step, mismatch))
            .flatten(),
        reason,
        detail,
    });
    if status != StepStatus::Passed && !acc.cancelled {
        keep_failure_evidence(session, step, acc).await;
    }
    status
}

/// Keeps what the surface looked like when `step` failed: the driver's
/// capture (a screenshot, a screen capture) and its typed state, each
/// bounded.
async fn keep_failure_evidence(session: &mut dyn SurfaceSession, step: &Step, acc: &mut Acc) {
    let bound = Deadline::after(FAILURE_CAPTURE_TIMEOUT);
    if let Some(arts) = bound.run(session.capture_failure(step)).await {
        if !arts.is_empty() {
            acc.note(
                Some(step.index + 1),
                ObservationKind::FailureEvidence,
                format!(
                    "captured the surface after step {} failed ({} file(s))",
                    step.index + 1,
                    arts.len()
                ),
            );
        }
    }
    if let Some(Ok(state)) = bound.run(session.observe()).await {
        acc.note(
            Some(step.index + 1),
            ObservationKind::FailureEvidence,
            format!(
                "surface after step {} failed: {}",
                step.index + 1,
                state.summary()
            ),
        );
    }
}

/// How long past a step's deadline the runner waits for the driver to
/// report how the step ended (a driver finishes the call in flight at the
/// deadline, then fails with what it last saw — `not_enabled`, `covered`,
/// …). Only a driver still busy after this is cut off with `step.timeout`.
pub const DRIVER_GRACE: Duration = Duration::from_millis(2000);

/// Runs one step on the shared semantics, without touching the result:
/// a runner step (`waitForTimeout`) sleeps; an action is dispatched once
/// (never retried) and may finish the call in flight for [`DRIVER_GRACE`]
/// past its deadline; an assertion is asked for a fresh verdict on the
/// [`Cadence`] until it holds, can never hold, or the deadline passes.
///
/// The runner and the conformance kit both run steps through this
/// function, so tests exercise exactly what `ui-qa run` does.
pub async fn run_step(
    session: &mut dyn SurfaceSession,
    step: &Step,
    deadline: Deadline,
) -> StepRun {
    match step.class() {
        StepClass::Runner => {
            let ms = step.action.wait_for_timeout_ms().unwrap_or(0);
            let until = Deadline::after_ms(ms);
            if until > deadline {
                deadline.sleep().await;
                return StepRun::ended(StepEnd::TimedOut, 0);
            }
            until.sleep().await;
            StepRun::ended(StepEnd::Passed(None), 0)
        }
        StepClass::Action => match deadline
            .extended(DRIVER_GRACE)
            .run(session.perform(step, deadline))
            .await
        {
            None => StepRun::ended(StepEnd::TimedOut, 1),
            Some(Ok(outcome)) => StepRun {
                end: StepEnd::Passed(outcome.detail),
                notes: outcome.notes,
                assertion: None,
                calls: 1,
                mismatch: None,
            },
            Some(Err(mut e)) if e.is_blocked() => StepRun {
                notes: std::mem::take(&mut e.notes),
                ..StepRun::ended(StepEnd::Blocked(e), 1)
            },
            Some(Err(e)) => StepRun::failed(e, 1),
        },
        StepClass::Assertion => verify_until(session, step, deadline).await,
    }
}

async fn verify_until(
    session: &mut dyn SurfaceSession,
    step: &Step,
    deadline: Deadline,
) -> StepRun {
    let mut cadence = Cadence::new();
    // What this step really had: its own timeout, or less when the flow's
    // deadline comes first.
    let own = step.step_timeout_ms();
    let left = deadline.remaining().as_millis() as u64;
    let budget_ms = if left + 100 >= own { own } else { left };
    let mut attempts = 0u32;
    let mut observed: Option<String> = None;
    let mut last_mismatch: Option<Mismatch> = None;
    let record = |passed: bool, attempts: u32, observed: Option<String>| AssertionRecord {
        step: step.index + 1,
        action: step.action_name().into(),
        passed,
        attempts,
        observed,
    };
    let finish = |end: StepEnd, rec: AssertionRecord, mismatch: Option<Mismatch>| StepRun {
        end,
        notes: Vec::new(),
        calls: rec.attempts,
        assertion: Some(rec),
        mismatch,
    };
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
                return finish(StepEnd::Passed(None), record(true, attempts, None), None);
            }
            Some(Ok(Verdict::NotYet {
                observed: o,
                mismatch,
            })) => {
                observed = Some(o);
                last_mismatch = mismatch.map(|m| *m);
            }
            Some(Ok(Verdict::Fails { reason })) => {
                return finish(
                    StepEnd::Failed(CoreCode::AssertionFailed.as_str(), reason.clone()),
                    record(false, attempts, Some(reason)),
                    last_mismatch,
                );
            }
            Some(Err(mut e)) if e.is_blocked() => {
                let rec = record(false, attempts, Some(e.message.clone()));
                return StepRun {
                    notes: std::mem::take(&mut e.notes),
                    end: StepEnd::Blocked(e),
                    calls: attempts,
                    assertion: Some(rec),
                    mismatch: None,
                };
            }
            Some(Err(e)) => {
                let rec = record(false, attempts, Some(e.message.clone()));
                let message = with_fix(&e);
                let m = e.mismatch.map(|m| *m);
                return StepRun {
                    notes: e.notes,
                    ..finish(StepEnd::Failed(e.code, message), rec, m)
                };
            }
        }
    }
    let rec = record(false, attempts, observed.clone());
    match observed {
        Some(o) if attempts > 0 => finish(
            StepEnd::Failed(
                CoreCode::AssertionTimeout.as_str(),
                format!(
                    "did not hold within {budget_ms} ms after {attempts} attempts; last observed: {o}"
                ),
            ),
            rec,
            last_mismatch,
        ),
        _ => finish(StepEnd::TimedOut, rec, last_mismatch),
    }
}

/// The failed step's [`Mismatch`]: the driver's, with the step's locator
/// filled in when the driver left it out; `None` when nobody said what was
/// expected.
fn failure_of(step: &Step, m: Option<Mismatch>) -> Option<Mismatch> {
    let mut m = m?;
    if m.locator.is_none() {
        m.locator = step.locators().first().map(|l| l.describe());
    }
    Some(m)
}
