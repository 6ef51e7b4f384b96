//! Helpers for the driver's integration tests: flows run through the shared
//! `conformance::drive` (the runner's own step execution), then checks of
//! what was left running.

#![allow(dead_code)]

use qa_core::process::CleanupReport;
use qa_core::{Artifact, DriverError, Flow, RunOptions};
use qa_linux::LinuxDesktopDriver;
use qa_runner::conformance::{self, DriveOptions, Workspace};
use qa_runner::runner::StepEnd;
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
    _dir: Workspace,
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
pub async fn run_until(
    flow_text: &str,
    done: impl Fn() -> bool + Send + Sync + 'static,
    limit: Duration,
) -> Run {
    let options = RunOptions {
        virtual_display: true,
        ..Default::default()
    };
    run_inner(flow_text, options, Some((Arc::new(done), limit))).await
}

async fn run_inner(
    flow_text: &str,
    options: RunOptions,
    before_close: Option<(Arc<dyn Fn() -> bool + Send + Sync>, Duration)>,
) -> Run {
    let started = std::time::Instant::now();
    let flow = Flow::parse(flow_text, &fixtures()).expect("flow parses");
    let opts = DriveOptions {
        run: options,
        before_close,
        ..Default::default()
    };
    let d = conformance::drive(
        &LinuxDesktopDriver::new(),
        &flow,
        opts,
        conformance::stop_on_failure,
    )
    .await;
    Run {
        error: d.error(),
        artifacts: d.artifacts(),
        details: d
            .steps
            .iter()
            .filter_map(|s| match &s.run.end {
                StepEnd::Passed(Some(detail)) => Some(detail.clone()),
                _ => None,
            })
            .collect(),
        run_dir: d.run_dir().to_path_buf(),
        cleanup: d.close.cleanup,
        elapsed: started.elapsed(),
        _dir: d.workspace,
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
