//! Test helpers: flows run through the shared `conformance::drive` (the
//! runner's own step execution), the fixture program, replay checks.

#![allow(dead_code)]

use qa_core::evidence::Evidence;
use qa_core::flow::Flow;
use qa_core::process::ProcessOwner;
use qa_core::{CloseResult, Deadline, RunOptions, Secrets, SessionContext};
use qa_runner::conformance::{self, DriveOptions, Workspace};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// What a flow run produced.
pub struct Run {
    /// Per step: Ok(detail) or Err(reason).
    pub steps: Vec<Result<String, String>>,
    /// The close result.
    pub close: CloseResult,
    /// The run directory.
    pub run_dir: PathBuf,
    /// The evidence store: the single record of published artifacts.
    pub evidence: Arc<Evidence>,
    /// Keeps the workspace alive.
    pub workspace: Workspace,
    /// Time per step.
    pub durations: Vec<Duration>,
}

impl Run {
    pub fn passed(&self) -> bool {
        self.steps.iter().all(|s| s.is_ok())
    }

    pub fn assert_passed(&self) {
        for (i, s) in self.steps.iter().enumerate() {
            if let Err(e) = s {
                panic!("step {} failed: {e}", i + 1);
            }
        }
    }

    /// Artifacts of a group directory, by file name.
    pub fn artifact(&self, group_dir: &str, name: &str) -> PathBuf {
        self.run_dir.join("artifacts").join(group_dir).join(name)
    }

    pub fn replay(&self) -> PathBuf {
        PathBuf::from(
            &self
                .evidence
                .artifacts()
                .iter()
                .find(|a| a.path.ends_with(".cast"))
                .expect("a replay artifact")
                .path,
        )
    }
}

/// The fixture binary, built on demand — at most once per test process
/// (tests run in parallel threads; the others wait for that one build).
pub fn fixture() -> PathBuf {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        let exe = std::env::current_exe().unwrap();
        let dir = exe.parent().unwrap().parent().unwrap().to_path_buf();
        let bin = dir.join("tui-fixture");
        if !bin.exists() {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let st = std::process::Command::new(cargo)
                .args(["build", "-q", "-p", "tui-fixture"])
                .status()
                .unwrap();
            assert!(st.success(), "cargo build -p tui-fixture failed");
        }
        bin
    })
    .clone()
}

pub fn context(workspace: &Path) -> SessionContext {
    let secrets = Arc::new(Secrets::new());
    SessionContext::new(
        Arc::new(Evidence::create(workspace, "run", secrets).unwrap()),
        Arc::new(ProcessOwner::new()),
        Deadline::after_ms(120_000),
        RunOptions::default(),
        None,
    )
    .with_recording(Default::default())
}

/// Parses and runs a flow whose relative paths resolve against `base`,
/// through the shared `conformance::drive` (the runner's own step
/// execution), stopping at the first failure.
pub async fn run_flow(jsonc: &str, base: &Path) -> Run {
    let flow = Flow::parse(jsonc, base).unwrap_or_else(|e| panic!("flow: {e:?}"));
    let opts = DriveOptions {
        flow_timeout: Some(Duration::from_secs(120)),
        ..Default::default()
    };
    let d = conformance::drive(
        &qa_tui::TuiDriver::new(),
        &flow,
        opts,
        conformance::stop_on_failure,
    )
    .await;
    if let Some(e) = &d.open_error {
        panic!("open: {e}");
    }
    Run {
        steps: d.steps.iter().map(|s| s.result()).collect(),
        durations: d.steps.iter().map(|s| s.duration).collect(),
        run_dir: d.run_dir().to_path_buf(),
        evidence: d.evidence.clone(),
        close: d.close,
        workspace: d.workspace,
    }
}

/// Checks a replay file is asciicast v2: every line JSON, header version 2.
pub fn check_replay(path: &Path) -> (serde_json::Value, Vec<serde_json::Value>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(header["version"], 2);
    let events: Vec<serde_json::Value> = lines
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad line {l:?}: {e}")))
        .collect();
    let mut last = 0.0;
    for e in &events {
        let t = e[0].as_f64().unwrap();
        assert!(t >= last, "times are monotonic");
        last = t;
        assert!(matches!(e[1].as_str().unwrap(), "o" | "r" | "m" | "i"));
    }
    (header, events)
}

/// Whether any process's command line is exactly `argv`.
pub fn process_with_cmdline(argv: &[&str]) -> Option<u32> {
    processes_with_cmdline(argv).into_iter().next()
}

/// Every process whose command line is exactly `argv`.
pub fn processes_with_cmdline(argv: &[&str]) -> Vec<u32> {
    let want: Vec<u8> = argv
        .iter()
        .flat_map(|a| a.bytes().chain(std::iter::once(0)))
        .collect();
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if let Ok(c) = std::fs::read(format!("/proc/{pid}/cmdline")) {
            if c == want {
                out.push(pid);
            }
        }
    }
    out
}

/// A `sleep` duration unique to this test process — `<base>.<pid>`, still a
/// valid `sleep` argument — so concurrent test runs never share a marker.
pub fn unique_sleep(base: u32) -> String {
    format!("{base}.{}", std::process::id())
}

/// When dropped (also when a test fails half-way), SIGKILLs by pid every
/// process whose command line is exactly `argv` — a `sleep` with a
/// [`unique_sleep`] marker only this test process starts.
pub struct KillOnDrop(pub Vec<String>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let argv: Vec<&str> = self.0.iter().map(String::as_str).collect();
        for pid in processes_with_cmdline(&argv) {
            #[allow(unsafe_code)]
            // SAFETY: kill(2) on a pid whose command line is this test's
            // unique marker.
            unsafe {
                libc::kill(pid as i32, libc::SIGKILL);
            }
        }
    }
}

/// A JSON string literal.
pub fn js(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}
