//! The terminal driver on Windows: `cmd.exe` and PowerShell under ConPTY,
//! through the runner's own step execution. They run on Windows only — the
//! `windows-2022` job of `.github/workflows/ci.yml` — and are type-checked
//! and linted for `x86_64-pc-windows-msvc` on Linux by `cargo xtask
//! cross-check`.

#![cfg(windows)]

use qa_core::flow::Flow;
use qa_core::process::CleanupStatus;
use qa_runner::conformance::{self, Drive, DriveOptions, Workspace};
use std::time::Duration;

/// Runs a terminal flow; panics with the first failing step.
async fn run(flow_text: &str) -> Drive {
    let ws = Workspace::new();
    let flow = Flow::parse(flow_text, ws.path()).expect("flow parses");
    let d = conformance::drive(
        &qa_tui::TuiDriver::new(),
        &flow,
        DriveOptions {
            flow_timeout: Some(Duration::from_secs(120)),
            ..Default::default()
        },
        conformance::stop_on_failure,
    )
    .await;
    if let Some(e) = &d.open_error {
        panic!("open: {e}");
    }
    for s in &d.steps {
        if let Err(e) = s.result() {
            panic!("step {} failed: {e}", s.index + 1);
        }
    }
    d
}

#[tokio::test(flavor = "multi_thread")]
async fn cmd_echoes_typed_input_and_exits_with_its_code() {
    let d = run(
        r#"{ "target": { "command": { "argv": ["cmd.exe", "/d", "/q", "/k", "prompt $G"] } },
          "steps": [
            { "action": "waitForText", "text": ">", "timeoutMs": 20000 },
            { "action": "sendText", "text": "echo hello-from-ui-qa" },
            { "action": "sendKeys", "keys": ["Enter"] },
            { "action": "waitForText", "regex": "^hello-from-ui-qa\\s*$" },
            { "action": "capture", "name": "cmd" },
            { "action": "sendText", "text": "exit 3" },
            { "action": "sendKeys", "keys": ["Enter"] },
            { "action": "assertProcessExited", "exitCode": 3, "timeoutMs": 10000 }
          ] }"#,
    )
    .await;
    assert_eq!(d.close.cleanup.status, CleanupStatus::Clean);
}

#[tokio::test(flavor = "multi_thread")]
async fn powershell_output_is_read_to_its_end_after_a_quick_exit() {
    run(
        r#"{ "target": { "command": { "argv": ["powershell.exe", "-NoLogo", "-NoProfile", "-Command", "Write-Output ('sum=' + (6*7)); exit 0"] } },
          "steps": [
            { "action": "waitForText", "text": "sum=42", "timeoutMs": 30000 },
            { "action": "assertProcessExited", "exitCode": 0, "timeoutMs": 10000 }
          ] }"#,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_short_lived_program_keeps_its_last_line() {
    run(
        r#"{ "target": { "command": { "argv": ["cmd.exe", "/d", "/c", "echo last-line-before-exit"] } },
          "steps": [
            { "action": "assertProcessExited", "exitCode": 0, "timeoutMs": 20000 },
            { "action": "assertText", "text": "last-line-before-exit" }
          ] }"#,
    )
    .await;
}
