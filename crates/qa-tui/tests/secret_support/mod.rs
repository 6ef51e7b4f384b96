//! Runs a terminal flow with secrets configured (the way the qa-core runner
//! does: actions once, assertions on the shared cadence, the failure capture
//! when an assertion fails) and inspects what it published.

#![allow(dead_code)]

use alacritty_terminal::event::VoidListener;
use alacritty_terminal::term::test::TermSize;
use alacritty_terminal::term::{Config, Term};
use alacritty_terminal::vte::ansi::Processor;
use qa_core::evidence::Evidence;
use qa_core::flow::{Flow, StepClass};
use qa_core::process::ProcessOwner;
use qa_core::{
    Artifact, Cadence, CloseResult, Deadline, RunOptions, Secrets, SessionContext, SurfaceDriver,
    Verdict,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What a run produced.
pub struct SecretRun {
    /// Per step: Ok(detail) or Err(reason).
    pub steps: Vec<Result<String, String>>,
    /// Artifacts the steps (and the failure capture) published.
    pub step_artifacts: Vec<Artifact>,
    /// Observations the steps reported.
    pub step_observations: Vec<String>,
    /// The close result.
    pub close: CloseResult,
    /// The run directory.
    pub run_dir: PathBuf,
    /// Keeps the workspace alive.
    pub workspace: tempfile::TempDir,
    /// The evidence store (withheld list).
    pub evidence: Arc<Evidence>,
}

impl SecretRun {
    /// Every file under the run directory.
    pub fn files(&self) -> Vec<PathBuf> {
        walk(&self.run_dir)
    }

    /// Published files with this extension.
    pub fn published(&self, ext: &str) -> Vec<PathBuf> {
        self.step_artifacts
            .iter()
            .chain(self.close.artifacts.iter())
            .map(|a| PathBuf::from(&a.path))
            .filter(|p| p.extension().is_some_and(|e| e == ext))
            .collect()
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Runs `jsonc` with `secrets` configured.
pub async fn run_with_secrets(jsonc: &str, secrets: &[&str]) -> SecretRun {
    let base = tempfile::tempdir().unwrap();
    let flow = Flow::parse(jsonc, base.path()).unwrap_or_else(|e| panic!("flow: {e:?}"));
    let workspace = tempfile::tempdir().unwrap();
    let s = Arc::new(Secrets::new());
    for v in secrets {
        s.add(v);
    }
    let evidence = Arc::new(Evidence::create(workspace.path(), "run", s.clone()).unwrap());
    let ctx = SessionContext {
        evidence: evidence.clone(),
        processes: Arc::new(ProcessOwner::new()),
        secrets: s,
        flow_deadline: Deadline::after_ms(120_000),
        options: RunOptions::default(),
    };
    let run_dir = evidence.run_dir().to_path_buf();
    let mut session = qa_tui::TuiDriver::new()
        .open(&flow, ctx)
        .await
        .unwrap_or_else(|e| panic!("open: {e}"));
    let mut steps = Vec::new();
    let mut step_artifacts = Vec::new();
    let mut step_observations = Vec::new();
    for step in &flow.steps {
        let deadline = Deadline::after_ms(step.step_timeout_ms());
        let r = match step.class() {
            StepClass::Action => match session.perform(step, deadline).await {
                Ok(o) => {
                    step_artifacts.extend(o.artifacts);
                    step_observations.extend(o.observations);
                    Ok(o.detail.unwrap_or_default())
                }
                Err(e) => Err(e.to_string()),
            },
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
            StepClass::Runner => Ok(String::new()),
        };
        let failed = r.is_err();
        steps.push(r);
        if failed {
            step_artifacts.extend(session.capture_failure(step).await);
            break;
        }
    }
    let close = session.close(Deadline::after_ms(30_000)).await;
    drop(base);
    SecretRun {
        steps,
        step_artifacts,
        step_observations,
        close,
        run_dir,
        workspace,
        evidence,
    }
}

/// A JSON string literal.
pub fn js(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// Base64 (standard alphabet, padded), written here independently of the
/// code under test.
pub fn b64(bytes: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let b = [c[0], *c.get(1).unwrap_or(&0), *c.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= c.len() {
                out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Encodings of `secret` that must appear in no published byte.
pub fn encodings(secret: &str) -> Vec<String> {
    let b = secret.as_bytes();
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    let std = b64(b);
    vec![
        secret.to_string(),
        std.trim_end_matches('=').to_string(),
        std.replace('+', "-")
            .replace('/', "_")
            .trim_end_matches('=')
            .to_string(),
        hex.clone(),
        hex.to_uppercase(),
    ]
}

/// Panics when any byte string of `encodings(secret)` is in `bytes`.
#[track_caller]
pub fn assert_no_encoding(what: &str, bytes: &[u8], secret: &str) {
    for e in encodings(secret) {
        assert!(
            !bytes.windows(e.len()).any(|w| w == e.as_bytes()),
            "{what} contains {e:?} (an encoding of the secret)"
        );
    }
}

/// Replays an asciicast v2 file through a fresh alacritty_terminal model and
/// returns, for every event, the screen and scrollback text after it.
pub fn replay_texts(cast: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(cast).unwrap();
    let mut lines = text.lines();
    let header: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    let cols = header["width"].as_u64().unwrap() as usize;
    let rows = header["height"].as_u64().unwrap() as usize;
    let mut term = Term::new(
        Config {
            scrolling_history: 10_000,
            ..Config::default()
        },
        &TermSize::new(cols, rows),
        VoidListener,
    );
    let mut p: Processor = Processor::new();
    let mut out = Vec::new();
    for l in lines {
        let e: serde_json::Value = serde_json::from_str(l).unwrap();
        match e[1].as_str().unwrap() {
            "o" => p.advance(&mut term, e[2].as_str().unwrap().as_bytes()),
            "r" => {
                let (c, r) = e[2].as_str().unwrap().split_once('x').unwrap();
                term.resize(TermSize::new(c.parse().unwrap(), r.parse().unwrap()));
            }
            _ => {}
        }
        out.push(format!(
            "{}\n{}",
            qa_tui::screen::screen_text(&term),
            qa_tui::screen::full_text(&term)
        ));
    }
    out
}
