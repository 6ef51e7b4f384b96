//! Runs a terminal flow with secrets configured through the shared
//! `conformance::drive` (the runner's own step execution and failure
//! capture) and inspects what it published.

#![allow(dead_code)]

use alacritty_terminal::event::VoidListener;
use alacritty_terminal::term::test::TermSize;
use alacritty_terminal::term::{Config, Term};
use alacritty_terminal::vte::ansi::Processor;
use qa_core::evidence::Evidence;
use qa_core::flow::Flow;
use qa_core::CloseResult;
use qa_runner::conformance::{self, DriveOptions, Workspace};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// What a run produced.
pub struct SecretRun {
    /// Per step: Ok(detail) or Err(reason).
    pub steps: Vec<Result<String, String>>,
    /// Observations the steps reported.
    pub step_observations: Vec<String>,
    /// The close result.
    pub close: CloseResult,
    /// The run directory.
    pub run_dir: PathBuf,
    /// Keeps the workspace alive.
    pub workspace: Workspace,
    /// The evidence store: what was published and withheld.
    pub evidence: Arc<Evidence>,
}

impl SecretRun {
    /// Every file under the run directory.
    pub fn files(&self) -> Vec<PathBuf> {
        walk(&self.run_dir)
    }

    /// Published files with this extension (the evidence store is the
    /// single record of what steps, the failure capture and close wrote).
    pub fn published(&self, ext: &str) -> Vec<PathBuf> {
        self.evidence
            .artifacts()
            .iter()
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

/// Runs `jsonc` with `secrets` configured, through the shared
/// `conformance::drive` (the runner's step execution and failure capture).
pub async fn run_with_secrets(jsonc: &str, secrets: &[&str]) -> SecretRun {
    let base = tempfile::tempdir().unwrap();
    let flow = Flow::parse(jsonc, base.path()).unwrap_or_else(|e| panic!("flow: {e:?}"));
    let opts = DriveOptions {
        secrets: secrets.iter().map(|s| s.to_string()).collect(),
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
    drop(base);
    SecretRun {
        steps: d.steps.iter().map(|s| s.result()).collect(),
        step_observations: d
            .steps
            .iter()
            .flat_map(|s| s.run.notes.iter().map(|n| n.message.clone()))
            .collect(),
        run_dir: d.run_dir().to_path_buf(),
        evidence: d.evidence.clone(),
        close: d.close,
        workspace: d.workspace,
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
