//! A small runner for tests: performs actions once and verifies assertions
//! on the shared cadence, the way the qa-core runner does.

#![allow(dead_code)]

use qa_core::evidence::Evidence;
use qa_core::flow::{Flow, StepClass};
use qa_core::process::ProcessOwner;
use qa_core::{
    Cadence, CloseResult, Deadline, RunOptions, Secrets, SessionContext, SurfaceDriver, Verdict,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a flow run produced.
pub struct Run {
    /// Per step: Ok(detail) or Err(reason).
    pub steps: Vec<Result<String, String>>,
    /// The close result.
    pub close: CloseResult,
    /// The run directory.
    pub run_dir: PathBuf,
    /// Keeps the workspace alive.
    pub workspace: tempfile::TempDir,
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
                .close
                .artifacts
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
    SessionContext {
        evidence: Arc::new(Evidence::create(workspace, "run", secrets.clone()).unwrap()),
        processes: Arc::new(ProcessOwner::new()),
        secrets,
        flow_deadline: Deadline::after_ms(120_000),
        options: RunOptions::default(),
    }
}

/// Parses and runs a flow whose relative paths resolve against `base`.
pub async fn run_flow(jsonc: &str, base: &Path) -> Run {
    let flow = Flow::parse(jsonc, base).unwrap_or_else(|e| panic!("flow: {e:?}"));
    let workspace = tempfile::tempdir().unwrap();
    let ctx = context(workspace.path());
    let run_dir = ctx.evidence.run_dir().to_path_buf();
    let driver = qa_tui::TuiDriver::new();
    let mut session = driver
        .open(&flow, ctx)
        .await
        .unwrap_or_else(|e| panic!("open: {e}"));
    let mut steps = Vec::new();
    let mut durations = Vec::new();
    for step in &flow.steps {
        let t0 = Instant::now();
        let deadline = Deadline::after_ms(step.step_timeout_ms());
        let r = match step.class() {
            StepClass::Action => session
                .perform(step, deadline)
                .await
                .map(|o| o.detail.unwrap_or_default())
                .map_err(|e| e.to_string()),
            StepClass::Assertion => {
                let mut cadence = Cadence::new();
                let mut last = String::new();
                loop {
                    if !cadence.wait(deadline).await {
                        break Err(format!("timed out: {last}"));
                    }
                    match session.verify(step, deadline).await {
                        Ok(Verdict::Holds) => break Ok("holds".to_string()),
                        Ok(Verdict::NotYet { observed }) => last = observed,
                        Ok(Verdict::Fails { reason }) => break Err(reason),
                        Err(e) => break Err(e.to_string()),
                    }
                }
            }
            StepClass::Runner => {
                let ms = step.action.wait_for_timeout_ms().unwrap_or(0);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                Ok(String::new())
            }
        };
        durations.push(t0.elapsed());
        let failed = r.is_err();
        steps.push(r);
        if failed {
            break;
        }
    }
    let close = session.close(Deadline::after_ms(30_000)).await;
    Run {
        steps,
        close,
        run_dir,
        workspace,
        durations,
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
