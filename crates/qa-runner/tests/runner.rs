//! Runner semantics, isolated with a scripted in-process driver: stages,
//! deadlines, the retry cadence, bounded cleanup after failure, timeout and
//! cancel, BLOCKED handoffs, and redaction. (The real surfaces are tested in
//! each driver crate and end to end through the binary.)

use async_trait::async_trait;
use qa_core::driver::*;
use qa_core::flow::{Action, Flow, LocatorKind, TargetKind, TerminalAction};
use qa_core::result::{RunStatus, StepStatus};
use qa_core::{Deadline, Secrets, Step};
use qa_runner::progress::NoProgress;
use qa_runner::runner::{self, Cancel, RunRequest};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

qa_core::error_codes! {
    /// Codes of the scripted driver.
    enum ScriptCode {
        /// The script asked the step to fail.
        Failed = "script.failed",
    }
}

#[derive(Default)]
struct Flags {
    opened: AtomicBool,
    closed: AtomicBool,
    verifies: AtomicU32,
    /// A `sleep <ms>` step has started.
    sleeping: AtomicBool,
}

struct Scripted {
    missing: bool,
    flags: Arc<Flags>,
    info: DriverInfo,
}

impl Scripted {
    fn driver(missing: bool) -> (Arc<dyn SurfaceDriver>, Arc<Flags>) {
        let flags = Arc::new(Flags::default());
        let d = Scripted {
            missing,
            flags: flags.clone(),
            info: DriverInfo {
                id: DriverId {
                    backend: Backend::Tui,
                    name: "scripted",
                },
                kind: TargetKind::Terminal,
                platform: Platform::current(),
                guide_topic: "pty",
                support: StepSupport {
                    actions: TerminalAction::NAMES.to_vec(),
                    locators: vec![LocatorKind::Text],
                    step_targets: false,
                },
            },
        };
        (Arc::new(d), flags)
    }
}

struct Session {
    flags: Arc<Flags>,
    opened_at: Instant,
    ctx: SessionContext,
}

#[async_trait]
impl SurfaceDriver for Scripted {
    fn info(&self) -> &DriverInfo {
        &self.info
    }
    async fn probe(&self, _f: &Flow, _h: &Host, _o: &RunOptions) -> Probe {
        Probe {
            driver: self.id(),
            present: vec![Capability {
                id: "script".into(),
                detail: "in-process".into(),
            }],
            missing: if self.missing {
                vec![MissingCapability {
                    id: "widget".into(),
                    reason: "no widget here".into(),
                    remediation: "install a widget".into(),
                }]
            } else {
                vec![]
            },
            presentation: Some("script".into()),
        }
    }
    async fn open(
        &self,
        _f: &Flow,
        ctx: SessionContext,
    ) -> Result<Box<dyn SurfaceSession>, DriverError> {
        self.flags.opened.store(true, Ordering::SeqCst);
        Ok(Box::new(Session {
            flags: self.flags.clone(),
            opened_at: Instant::now(),
            ctx,
        }))
    }
}

#[async_trait]
impl SurfaceSession for Session {
    async fn observe(&mut self) -> Result<SurfaceState, DriverError> {
        Ok(SurfaceState::Terminal {
            cols: 80,
            rows: 24,
            cursor_row: 0,
            cursor_col: 0,
            alternate_screen: false,
            bracketed_paste: false,
            program: ProgramState::Running,
        })
    }
    async fn perform(&mut self, step: &Step, _d: Deadline) -> Result<StepOutcome, DriverError> {
        match &step.action {
            Action::Terminal(TerminalAction::SendText(t)) => {
                if let Some(ms) = t.text.strip_prefix("sleep ") {
                    self.flags.sleeping.store(true, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(ms.parse().unwrap())).await;
                    Ok(StepOutcome::default())
                } else if t.text.starts_with("fail") {
                    Err(DriverError::new(
                        ScriptCode::Failed,
                        format!("could not type {}", t.text),
                    ))
                } else {
                    Ok(StepOutcome {
                        detail: Some("typed".into()),
                        ..Default::default()
                    })
                }
            }
            Action::Terminal(TerminalAction::Capture(_)) => {
                let scratch = self
                    .ctx
                    .evidence
                    .scratch_dir(&format!("s{}", step.index))
                    .unwrap();
                std::fs::write(scratch.join("state"), b"scratch").unwrap();
                let name = self.ctx.evidence.unique_name(
                    qa_core::ArtifactGroup::TerminalCaptures,
                    &step.evidence_name(),
                    "txt",
                );
                self.ctx
                    .evidence
                    .write(
                        qa_core::ArtifactGroup::TerminalCaptures,
                        &name,
                        b"screen",
                        Some(step.index + 1),
                    )
                    .unwrap();
                Ok(StepOutcome::default())
            }
            _ => Ok(StepOutcome::default()),
        }
    }
    async fn verify(&mut self, step: &Step, _d: Deadline) -> Result<Verdict, DriverError> {
        self.flags.verifies.fetch_add(1, Ordering::SeqCst);
        match &step.action {
            Action::Terminal(TerminalAction::WaitForText(q)) => {
                let t = q.text.as_deref().unwrap_or("");
                if let Some(ms) = t.strip_prefix("after ") {
                    let ms: u64 = ms.parse().unwrap();
                    if self.opened_at.elapsed() >= Duration::from_millis(ms) {
                        Ok(Verdict::Holds)
                    } else {
                        Ok(Verdict::not_yet("not yet"))
                    }
                } else if t == "impossible" {
                    Ok(Verdict::Fails {
                        reason: "the program exited".into(),
                    })
                } else {
                    Ok(Verdict::differs(qa_core::Mismatch::new(
                        "the text on screen",
                        "screen without it",
                    )))
                }
            }
            _ => Ok(Verdict::Holds),
        }
    }
    async fn close(self: Box<Self>, _d: Deadline) -> CloseResult {
        self.flags.closed.store(true, Ordering::SeqCst);
        CloseResult::default()
    }
}

fn flow(steps: &str, timeout: Option<u64>) -> Flow {
    let t = timeout
        .map(|t| format!(r#""timeoutMs":{t},"#))
        .unwrap_or_default();
    Flow::parse(
        &format!(r#"{{{t}"target":{{"command":{{"argv":["x"]}}}},"steps":[{steps}]}}"#),
        Path::new("/tmp"),
    )
    .unwrap()
}

async fn run(
    driver: Arc<dyn SurfaceDriver>,
    f: Flow,
    tweak: impl FnOnce(&mut RunRequest),
) -> (qa_core::result::RunResult, tempfile::TempDir) {
    let ws = tempfile::tempdir().unwrap();
    let mut req = RunRequest::new(f, "{}".into(), ws.path().to_path_buf());
    req.cleanup_timeout = Duration::from_secs(5);
    tweak(&mut req);
    let r = runner::run(&[driver], req, &NoProgress).await.unwrap();
    (r, ws)
}

#[tokio::test]
async fn passing_flow_writes_result_and_evidence() {
    let (d, flags) = Scripted::driver(false);
    let f = flow(
        r#"{"action":"sendText","text":"hi"},{"action":"waitForText","text":"after 1000"},{"action":"capture"},{"action":"capture"},{"action":"waitForTimeout","ms":10}"#,
        None,
    );
    let (r, _ws) = run(d, f, |_| {}).await;
    assert_eq!(r.status, RunStatus::Passed, "{r:?}");
    assert!(flags.closed.load(Ordering::SeqCst));
    assert_eq!(r.steps.len(), 5);
    assert!(r.steps.iter().all(|s| s.status == StepStatus::Passed));
    // It holds 1 s after open, a first check comes at once: retried.
    assert!(r.assertions[0].passed && r.assertions[0].attempts >= 2);
    // Two unnamed captures get collision-free names from action and step index.
    let names: Vec<&str> = r
        .artifacts
        .terminal_captures
        .iter()
        .map(|a| a.path.rsplit('/').next().unwrap())
        .collect();
    assert_eq!(names, ["capture-step3.txt", "capture-step4.txt"]);
    let dir = Path::new(&r.evidence_dir);
    assert!(dir.join("result.json").is_file());
    assert!(dir.join("progress.jsonl").is_file());
    assert!(dir.join("flow.jsonc").is_file());
    assert!(
        !dir.join("work").exists(),
        "scratch is removed when the run ends"
    );
    let written: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("result.json")).unwrap()).unwrap();
    assert_eq!(written, serde_json::to_value(&r).unwrap());
    assert_eq!(r.selection.guide.backend, Backend::Tui);
    assert_eq!(r.selection.guide.topic, "pty");
}

#[tokio::test]
async fn assertion_that_never_holds_fails_at_the_step_deadline_and_cleans_up() {
    let (d, flags) = Scripted::driver(false);
    let f = flow(
        r#"{"action":"waitForText","text":"never","timeoutMs":1000},{"action":"capture"}"#,
        None,
    );
    let (r, _ws) = run(d, f, |_| {}).await;
    assert_eq!(r.status, RunStatus::Failed);
    assert!(!r.timed_out);
    assert_eq!(r.stage, "step 1 waitForText");
    assert_eq!(r.steps[0].status, StepStatus::Failed);
    assert_eq!(r.steps[1].status, StepStatus::Skipped);
    assert!(r.steps[0].reason.as_deref().unwrap().contains("1000 ms"));
    // The driver's last mismatch is kept on the failed step, expected and
    // received side by side, and its summary is in the reason.
    let m = r.steps[0]
        .failure
        .as_ref()
        .expect("the failed step says why");
    assert_eq!(m.expected.as_deref(), Some("the text on screen"));
    assert_eq!(m.received.as_deref(), Some("screen without it"));
    assert!(r.steps[0]
        .reason
        .as_deref()
        .unwrap()
        .contains("received screen without it"));
    assert!(
        r.steps[1].failure.is_none(),
        "a skipped step has no failure"
    );
    // The cadence (0, 20, 100, 100, 500 ms) has 3 checks by 120 ms, 5 by
    // 720 ms: 1 s leaves room for a slow machine.
    assert!(
        flags.verifies.load(Ordering::SeqCst) >= 3,
        "retried on the cadence"
    );
    assert!(
        flags.closed.load(Ordering::SeqCst),
        "cleanup ran after the failure"
    );
    assert!(Path::new(&r.evidence_dir).join("result.json").is_file());
}

#[tokio::test]
async fn impossible_assertion_stops_retrying() {
    let (d, flags) = Scripted::driver(false);
    let f = flow(
        r#"{"action":"waitForText","text":"impossible","timeoutMs":120000}"#,
        None,
    );
    let t = Instant::now();
    let (r, _ws) = run(d, f, |_| {}).await;
    assert_eq!(r.status, RunStatus::Failed);
    assert_eq!(flags.verifies.load(Ordering::SeqCst), 1);
    assert!(
        t.elapsed() < Duration::from_secs(60),
        "stopped at the first Fails, far below the 120 s deadline"
    );
}

#[tokio::test]
async fn flow_timeout_names_the_stage_and_still_cleans_up() {
    let (d, flags) = Scripted::driver(false);
    let f = flow(
        r#"{"action":"sendText","text":"ok"},{"action":"sendText","text":"sleep 20000"}"#,
        // Far beyond open and step 1 (in-process), far below step 2's 20 s.
        Some(3000),
    );
    let (r, _ws) = run(d, f, |_| {}).await;
    assert_eq!(r.status, RunStatus::Failed);
    assert!(r.timed_out);
    assert_eq!(r.stage, "step 2 sendText");
    assert_eq!(r.steps[1].status, StepStatus::TimedOut);
    assert!(flags.closed.load(Ordering::SeqCst));
    assert!(Path::new(&r.evidence_dir).join("result.json").is_file());
}

#[tokio::test]
async fn a_flow_deadline_that_cuts_an_assertion_is_a_run_timeout() {
    let (d, _flags) = Scripted::driver(false);
    // The step may wait 15 s (the default); the flow allows 1.5 s.
    let f = flow(r#"{"action":"waitForText","text":"never"}"#, Some(1500));
    let (r, _ws) = run(d, f, |_| {}).await;
    assert_eq!(r.status, RunStatus::Failed);
    assert!(r.timed_out);
    assert_eq!(
        r.reason_code.as_deref(),
        Some("run.timeout"),
        "{:?}",
        r.reason
    );
    assert_eq!(r.steps[0].status, StepStatus::TimedOut);
    let reason = r.steps[0].reason.as_deref().unwrap();
    assert!(
        reason.starts_with("flow deadline of 1500 ms passed; did not hold within "),
        "{reason}"
    );
    assert!(
        !reason.contains("15000"),
        "the step had the flow's 1.5 s, not 15 s: {reason}"
    );
    assert!(r.steps[0].failure.is_some(), "what it saw is kept");
}

#[tokio::test]
async fn missing_capability_is_blocked_with_handoff_and_nothing_opened() {
    let (d, flags) = Scripted::driver(true);
    let f = flow(r#"{"action":"capture"}"#, None);
    let (r, _ws) = run(d, f, |_| {}).await;
    assert_eq!(r.status, RunStatus::Blocked);
    let h = r.blocked_handoff.unwrap();
    assert!(h.manual_action_required);
    assert!(!h.automatic_remediation_attempted);
    assert_eq!(h.missing_capabilities[0].id, "widget");
    assert!(h.remediation.contains("install a widget"));
    assert!(!flags.opened.load(Ordering::SeqCst));
    assert_eq!(r.steps[0].status, StepStatus::Skipped);
}

#[tokio::test]
async fn cancel_stops_the_step_and_cleans_up() {
    let (d, flags) = Scripted::driver(false);
    // Neither the step nor the flow would end before 120 s on its own.
    let f = flow(
        r#"{"action":"sendText","text":"sleep 120000","timeoutMs":120000}"#,
        Some(120_000),
    );
    let cancel = Cancel::new();
    let c2 = cancel.clone();
    let f2 = flags.clone();
    // Cancel once the step is running (not on a timer).
    tokio::spawn(async move {
        while !f2.sleeping.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        c2.cancel();
    });
    let t = Instant::now();
    let (r, _ws) = run(d, f, |req| req.cancel = cancel).await;
    assert!(r.cancelled);
    assert_eq!(r.status, RunStatus::Failed);
    assert_eq!(r.stage, "step 1 sendText", "cancelled in the step");
    assert!(
        t.elapsed() < Duration::from_secs(30),
        "the 120 s step was stopped, not waited for"
    );
    assert!(flags.closed.load(Ordering::SeqCst));
}

#[tokio::test]
async fn secrets_never_leave_the_runner() {
    let (d, _flags) = Scripted::driver(false);
    let secret = "pa55-w0rd-XYZ";
    let text = format!(
        r#"{{"target":{{"command":{{"argv":["x"]}}}},"steps":[{{"action":"sendText","text":"fail {secret}"}}]}}"#
    );
    let f = Flow::parse(&text, Path::new("/tmp")).unwrap();
    let secrets = Arc::new(Secrets::new());
    secrets.add(secret);
    let (r, _ws) = run(d, f, |req| {
        req.secrets = secrets.clone();
        req.flow_text = text.clone();
    })
    .await;
    assert_eq!(r.status, RunStatus::Failed);
    let json = serde_json::to_string(&r).unwrap();
    assert!(!json.contains(secret), "secret in result: {json}");
    assert!(
        json.contains("[REDACTED]"),
        "the failure reason was redacted, not dropped"
    );
    let dir = Path::new(&r.evidence_dir);
    for f in ["result.json", "progress.jsonl", "flow.jsonc"] {
        let body = std::fs::read_to_string(dir.join(f)).unwrap();
        assert!(!body.contains(secret), "secret in {f}");
    }
}
