//! The conformance kit: scenarios every driver crate runs against its real
//! surface, so each driver proves the same contract.
//!
//! Each scenario takes the driver under test and a flow for its surface and
//! returns `Err(description)` when an invariant is broken. A driver that
//! cannot run here answers BLOCKED with a handoff — an accepted, typed
//! outcome the scenarios check, never a panic or a skipped test.
//!
//! ```no_run
//! # async fn demo(driver: std::sync::Arc<dyn qa_core::SurfaceDriver>) {
//! use qa_core::{conformance, flow::Flow};
//! let flow = Flow::parse(r#"{"target":{"command":{"argv":["true"]}},
//!     "steps":[{"action":"assertProcessExited"}]}"#, std::path::Path::new(".")).unwrap();
//! conformance::run_all(driver, &flow).await.unwrap();
//! # }
//! ```

use crate::deadline::Deadline;
use crate::driver::{Host, RunOptions, SessionContext, SurfaceDriver};
use crate::evidence::Evidence;
use crate::flow::Flow;
use crate::process::{CleanupStatus, ProcessOwner};
use crate::progress::NoProgress;
use crate::result::{RunResult, RunStatus};
use crate::runner::{self, RunRequest};
use crate::secrets::Secrets;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Bound within which `close` must return.
pub const CLOSE_BOUND: Duration = Duration::from_secs(20);

fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !matches!(
            s.rsplit(')')
                .next()
                .and_then(|r| r.split_whitespace().next()),
            Some("Z") | Some("X")
        ),
        Err(_) => false,
    }
}

/// Runs a flow through the runner in a temporary workspace.
pub async fn run_flow(
    driver: Arc<dyn SurfaceDriver>,
    flow: &Flow,
    workspace: &Path,
    options: RunOptions,
) -> Result<RunResult, String> {
    let mut req = RunRequest::new(flow.clone(), "{}".into(), workspace.to_path_buf());
    req.options = options;
    runner::run(&[driver], req, &NoProgress)
        .await
        .map_err(|e| e.to_string())
}

/// A BLOCKED probe must name what is missing and how to fix it; an available
/// one must report what it found.
pub async fn probe_is_honest(driver: &dyn SurfaceDriver, flow: &Flow) -> Result<(), String> {
    let p = driver
        .probe(flow, &Host::current(), &RunOptions::default())
        .await;
    if p.driver != driver.id() {
        return Err(format!(
            "probe answered for {} not {}",
            p.driver,
            driver.id()
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
    Ok(())
}

/// Opening then closing is bounded, reports a clean cleanup, and ends every
/// process it reported; ending again finds nothing left (idempotent).
pub async fn close_is_bounded_and_clean(
    driver: Arc<dyn SurfaceDriver>,
    flow: &Flow,
) -> Result<(), String> {
    let ws = std::env::temp_dir().join(format!("ui-qa-conformance-{}", runner::new_run_id()));
    let secrets = Arc::new(Secrets::new());
    let evidence =
        Arc::new(Evidence::create(&ws, "close", secrets.clone()).map_err(|e| e.to_string())?);
    let processes = Arc::new(ProcessOwner::new());
    let ctx = SessionContext {
        evidence,
        processes: processes.clone(),
        secrets,
        flow_deadline: Deadline::after_ms(flow.flow_timeout_ms()),
        options: RunOptions::default(),
    };
    let session = match driver.open(flow, ctx).await {
        Ok(s) => s,
        Err(e) if e.is_blocked() => {
            let _ = std::fs::remove_dir_all(&ws);
            return Ok(());
        }
        Err(e) => return Err(format!("open failed: {e}")),
    };
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
        if alive(e.pid) {
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
    let _ = std::fs::remove_dir_all(&ws);
    Ok(())
}

/// A full run keeps every artifact inside its run directory, with a
/// matching size and digest; BLOCKED carries a complete handoff; cleanup
/// leaves nothing.
pub async fn run_keeps_contract(
    driver: Arc<dyn SurfaceDriver>,
    flow: &Flow,
) -> Result<RunResult, String> {
    let ws = std::env::temp_dir().join(format!("ui-qa-conformance-{}", runner::new_run_id()));
    let r = run_flow(driver, flow, &ws, RunOptions::default()).await?;
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
        if alive(e.pid) {
            return Err(format!(
                "pid {} ({}) reported ended but is alive",
                e.pid, e.label
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&ws);
    Ok(r)
}

/// Runs every scenario.
pub async fn run_all(driver: Arc<dyn SurfaceDriver>, flow: &Flow) -> Result<(), String> {
    probe_is_honest(driver.as_ref(), flow).await?;
    close_is_bounded_and_clean(driver.clone(), flow).await?;
    run_keeps_contract(driver, flow).await?;
    Ok(())
}
