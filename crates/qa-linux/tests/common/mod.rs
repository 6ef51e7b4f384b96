//! A tiny runner for the driver's integration tests: perform for actions,
//! verify on the shared cadence for assertions, close, and check /proc.

#![allow(dead_code)]

use qa_core::flow::StepClass;
use qa_core::process::{CleanupReport, ProcessOwner};
use qa_core::{
    Artifact, Cadence, Deadline, DriverError, Evidence, Flow, RunOptions, Secrets, SessionContext,
    SurfaceDriver, Verdict,
};
use qa_linux::LinuxDesktopDriver;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// What one flow run produced.
pub struct Run {
    /// The first error (None when every step passed).
    pub error: Option<DriverError>,
    /// Published artifacts.
    pub artifacts: Vec<Artifact>,
    /// The cleanup report.
    pub cleanup: CleanupReport,
    /// The evidence directory (kept alive by `_dir`).
    pub run_dir: PathBuf,
    /// Wall time of the run.
    pub elapsed: std::time::Duration,
    /// The detail of every performed step, in order.
    pub details: Vec<String>,
    _dir: tempfile::TempDir,
}

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/desktop")
}

/// Panics with the fix when a program the tests need is missing: a missing
/// program is a broken test host, never a silently passing test.
pub fn require(bin: &str) {
    assert!(
        have(bin),
        "{bin} is not installed; run `cargo xtask deps` (Debian packages for the desktop tests)"
    );
}

/// Whether `bin` is on PATH.
pub fn have(bin: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(bin).is_file()))
        .unwrap_or(false)
}

/// Runs a flow under the driver's own virtual display.
pub async fn run(flow_text: &str) -> Run {
    run_with(
        flow_text,
        RunOptions {
            virtual_display: true,
            ..Default::default()
        },
    )
    .await
}

/// Runs a flow with explicit run options (host mode: `virtual_display: false`).
pub async fn run_with(flow_text: &str, options: RunOptions) -> Run {
    run_inner(flow_text, options, None).await
}

/// Runs a flow under the driver's own virtual display; when every step
/// passed, polls `done` (every 50 ms, for up to `limit`) before closing —
/// for an effect of the last step that lands a moment later (a program
/// writing its answer as it exits), instead of a fixed sleep in the flow.
pub async fn run_until(flow_text: &str, done: &dyn Fn() -> bool, limit: Duration) -> Run {
    let options = RunOptions {
        virtual_display: true,
        ..Default::default()
    };
    run_inner(flow_text, options, Some((done, limit))).await
}

async fn run_inner(
    flow_text: &str,
    options: RunOptions,
    before_close: Option<(&dyn Fn() -> bool, Duration)>,
) -> Run {
    let started = std::time::Instant::now();
    let flow = Flow::parse(flow_text, &fixtures()).expect("flow parses");
    let dir = tempfile::tempdir().unwrap();
    let secrets = Arc::new(Secrets::new());
    let evidence = Arc::new(Evidence::create(dir.path(), "run", secrets.clone()).unwrap());
    let run_dir = evidence.run_dir().to_path_buf();
    let ctx = SessionContext {
        evidence: evidence.clone(),
        processes: Arc::new(ProcessOwner::new()),
        secrets,
        flow_deadline: Deadline::after_ms(flow.flow_timeout_ms()),
        options,
    };
    let processes = ctx.processes.clone();
    let flow_deadline = ctx.flow_deadline;
    let driver = LinuxDesktopDriver::new();
    let mut error = None;
    let mut details = Vec::new();
    let cleanup;
    match driver.open(&flow, ctx).await {
        Err(e) => {
            error = Some(e);
            cleanup = processes
                .end_all(qa_core::process::DEFAULT_GRACE, Deadline::after_ms(30_000))
                .await;
        }
        Ok(mut session) => {
            for step in &flow.steps {
                let deadline = Deadline::after_ms(step.step_timeout_ms()).min(flow_deadline);
                let r = match step.class() {
                    StepClass::Action => session.perform(step, deadline).await.map(|o| {
                        details.extend(o.detail);
                    }),
                    StepClass::Runner => {
                        let ms = step.action.wait_for_timeout_ms().unwrap_or(0);
                        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                        Ok(())
                    }
                    StepClass::Assertion => {
                        let mut cadence = Cadence::new();
                        let mut last = String::new();
                        loop {
                            if !cadence.wait(deadline).await {
                                break Err(DriverError::new(
                                    "test.assertion.timeout",
                                    format!(
                                        "step {} ({}) did not hold: {last}",
                                        step.index + 1,
                                        step.action_name()
                                    ),
                                ));
                            }
                            match session.verify(step, deadline).await {
                                Ok(Verdict::Holds) => break Ok(()),
                                Ok(Verdict::NotYet { observed }) => last = observed,
                                Ok(Verdict::Fails { reason }) => {
                                    break Err(DriverError::new("test.assertion.fails", reason))
                                }
                                Err(e) => break Err(e),
                            }
                        }
                    }
                };
                if let Err(e) = r {
                    error = Some(e);
                    break;
                }
            }
            if let (None, Some((done, limit))) = (&error, before_close) {
                let until = std::time::Instant::now() + limit;
                while !done() && std::time::Instant::now() < until {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
            let closed = session.close(Deadline::after_ms(30_000)).await;
            cleanup = closed.cleanup;
        }
    }
    Run {
        error,
        artifacts: evidence.artifacts(),
        cleanup,
        run_dir,
        elapsed: started.elapsed(),
        details,
        _dir: dir,
    }
}

/// Asserts that nothing the run started is still alive (zombies count as gone).
pub fn assert_nothing_left(run: &Run) {
    assert!(
        run.cleanup.left.is_empty(),
        "cleanup left {:?}",
        run.cleanup.left
    );
    let mut alive = Vec::new();
    for e in &run.cleanup.ended {
        if let Ok(s) = std::fs::read_to_string(format!("/proc/{}/stat", e.pid)) {
            let st = s
                .rsplit(')')
                .next()
                .and_then(|r| r.split_whitespace().next())
                .unwrap_or("");
            if st != "Z" && st != "X" {
                alive.push(e.clone());
            }
        }
    }
    // Anything (at-spi, app, bus) whose environment points at this run's private runtime dir.
    for d in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = d.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let st = stat
            .rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().next())
            .unwrap_or("");
        if st == "Z" {
            continue;
        }
        let groups: Vec<u32> = run.cleanup.ended.iter().map(|e| e.pid).collect();
        let pgid: u32 = stat
            .rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().nth(2))
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        assert!(
            !groups.contains(&pgid),
            "process {pid} of an owned group is still alive: {stat}"
        );
    }
    assert!(alive.is_empty(), "still alive: {alive:?}");
}

pub fn read_artifact(a: &Artifact) -> Vec<u8> {
    std::fs::read(&a.path).unwrap()
}
