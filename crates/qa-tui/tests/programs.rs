//! Real Debian programs through the driver: vim, less, python3, htop, dialog, bash.

// Unix programs (bash, python3, the fixture's Unix half) through a Unix
// PTY, with Unix process APIs; the Windows backend's pure parts are
// unit-tested in the library.
#![cfg(unix)]

mod common;

use common::*;
use std::time::Instant;

fn have(p: &str) -> bool {
    std::path::Path::new(p).exists()
}

#[tokio::test]
async fn vim_edits_and_saves_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let flow = r#"{ "target": { "command": { "argv": ["vim", "-u", "NONE", "-N", "notes.txt"] } },
      "steps": [
        { "action": "waitForText", "text": "notes.txt", "timeoutMs": 10000 },
        { "action": "sendKeys", "keys": ["i"] },
        { "action": "sendText", "text": "hello from ui-qa" },
        { "action": "sendKeys", "keys": ["Escape"] },
        { "action": "waitForStable", "stableMs": 100 },
        { "action": "sendText", "text": ":wq" },
        { "action": "sendKeys", "keys": ["Enter"] },
        { "action": "assertProcessExited", "exitCode": 0, "timeoutMs": 10000 }
      ] }"#;
    let run = run_flow(flow, dir.path()).await;
    run.assert_passed();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "hello from ui-qa\n"
    );
    check_replay(&run.replay());
}

#[tokio::test]
async fn less_pages_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let body: String = (1..=200).map(|i| format!("line {i:03}\n")).collect();
    std::fs::write(dir.path().join("data.txt"), body).unwrap();
    let flow = r#"{ "target": { "command": { "argv": ["less", "data.txt"] } },
      "steps": [
        { "action": "waitForText", "text": "line 001", "timeoutMs": 10000 },
        { "action": "assertText", "text": "line 001", "row": 0 },
        { "action": "sendKeys", "keys": ["PageDown"] },
        { "action": "assertText", "text": "line 024", "row": 0 },
        { "action": "sendKeys", "keys": ["G"] },
        { "action": "waitForText", "text": "(END)" },
        { "action": "assertText", "text": "line 200" },
        { "action": "sendKeys", "keys": ["q"] },
        { "action": "assertProcessExited", "exitCode": 0 }
      ] }"#;
    let run = run_flow(flow, dir.path()).await;
    run.assert_passed();
}

#[tokio::test]
async fn python_repl_answers() {
    let dir = tempfile::tempdir().unwrap();
    let flow = r#"{ "target": { "command": { "argv": ["/usr/bin/python3", "-q"], "env": { "PYTHON_BASIC_REPL": "1" } } },
      "steps": [
        { "action": "waitForText", "regex": "^>>>", "timeoutMs": 10000 },
        { "action": "sendText", "text": "6*7" },
        { "action": "sendKeys", "keys": ["Enter"] },
        { "action": "waitForText", "regex": "^42$" },
        { "action": "waitForStable", "stableMs": 100 },
        { "action": "capture", "name": "repl" },
        { "action": "sendKeys", "keys": ["Ctrl+D"] },
        { "action": "assertProcessExited", "exitCode": 0 }
      ] }"#;
    let run = run_flow(flow, dir.path()).await;
    run.assert_passed();
    let text = std::fs::read_to_string(run.artifact("terminal", "repl.txt")).unwrap();
    insta::assert_snapshot!("python_repl", text);
}

#[tokio::test]
async fn htop_quits_with_f10() {
    if !have("/usr/bin/htop") {
        panic!("htop is not installed (apt-get install -y htop)");
    }
    let dir = tempfile::tempdir().unwrap();
    let flow = r#"{ "target": { "command": { "argv": ["htop"] } },
      "steps": [
        { "action": "waitForText", "text": "Quit", "timeoutMs": 10000 },
        { "action": "assertProcessRunning" },
        { "action": "sendKeys", "keys": ["F10"] },
        { "action": "assertProcessExited", "exitCode": 0, "timeoutMs": 15000 }
      ] }"#;
    let run = run_flow(flow, dir.path()).await;
    run.assert_passed();
}

#[tokio::test]
async fn dialog_inputbox_and_yesno_are_answered() {
    let dir = tempfile::tempdir().unwrap();
    let flow = r#"{ "target": { "command": { "argv": ["dialog", "--inputbox", "Your name?", "10", "40"] } },
      "steps": [
        { "action": "waitForText", "text": "Your name?", "timeoutMs": 10000 },
        { "action": "waitForStable", "stableMs": 100 },
        { "action": "sendText", "text": "Alice" },
        { "action": "waitForText", "text": "Alice" },
        { "action": "sendKeys", "keys": ["Enter"] },
        { "action": "assertProcessExited", "exitCode": 0 },
        { "action": "waitForText", "text": "Alice" }
      ] }"#;
    run_flow(flow, dir.path()).await.assert_passed();
    // No is chosen with Tab then Enter: dialog exits 1.
    let flow = r#"{ "target": { "command": { "argv": ["dialog", "--yesno", "Continue?", "7", "40"] } },
      "steps": [
        { "action": "waitForText", "text": "Continue?", "timeoutMs": 10000 },
        { "action": "waitForStable", "stableMs": 100 },
        { "action": "sendKeys", "keys": ["Tab", "Enter"] },
        { "action": "assertProcessExited", "exitCode": 1 }
      ] }"#;
    run_flow(flow, dir.path()).await.assert_passed();
    let flow = r#"{ "target": { "command": { "argv": ["dialog", "--yesno", "Continue?", "7", "40"] } },
      "steps": [
        { "action": "waitForText", "text": "Continue?", "timeoutMs": 10000 },
        { "action": "waitForStable", "stableMs": 100 },
        { "action": "sendKeys", "keys": ["Enter"] },
        { "action": "assertProcessExited", "exitCode": 0 }
      ] }"#;
    run_flow(flow, dir.path()).await.assert_passed();
}

#[tokio::test]
async fn twenty_megabytes_then_a_marker() {
    let dir = tempfile::tempdir().unwrap();
    let script = r#"head -c 20000000 /dev/zero | tr "\0" x; echo; echo MARKER-DONE"#;
    let flow = format!(
        r#"{{ "target": {{ "command": {{ "argv": ["sh", "-c", {}] }} }},
          "steps": [ {{ "action": "waitForText", "text": "MARKER-DONE", "timeoutMs": 120000 }} ] }}"#,
        js(script)
    );
    let t0 = Instant::now();
    let run = run_flow(&flow, dir.path()).await;
    let waited = run.durations[0];
    run.assert_passed();
    eprintln!(
        "20 MB: waitForText took {waited:?}, whole run {:?}",
        t0.elapsed()
    );
    let replay = run.replay();
    let size = std::fs::metadata(&replay).unwrap().len();
    assert!(size <= 1024 * 1024, "replay is {size} bytes");
    let (_, events) = check_replay(&replay);
    assert!(events
        .iter()
        .any(|e| e[1] == "m" && e[2].as_str().unwrap().contains("cut")));
    assert!(run
        .close
        .notes
        .iter()
        .any(|n| n.message.contains("1 MiB cap")));
}

#[tokio::test]
async fn a_flood_of_short_lines_leaves_exactly_its_last_lines_on_screen() {
    // Short lines come faster than the model parses them, so the reader
    // gathers big batches and whole stretches are skipped (`skip`); the
    // screen must still be exactly the one full parsing leaves.
    let dir = tempfile::tempdir().unwrap();
    let flow = r#"{ "target": { "command": { "argv": ["sh", "-c",
        "seq 1 400000; echo MARKER-DONE; exec sleep 60"] } },
      "viewport": { "cols": 80, "rows": 24 },
      "steps": [
        { "action": "waitForText", "text": "MARKER-DONE", "timeoutMs": 120000 },
        { "action": "assertText", "text": "399979", "row": 0 },
        { "action": "assertText", "text": "399980", "row": 1 },
        { "action": "assertText", "text": "400000", "row": 21 },
        { "action": "assertText", "text": "MARKER-DONE", "row": 22 },
        { "action": "assertNotText", "text": "399978" }
      ] }"#;
    run_flow(flow, dir.path()).await.assert_passed();
}

#[tokio::test]
async fn a_failed_assert_not_text_shows_the_row_that_holds_the_text() {
    let dir = tempfile::tempdir().unwrap();
    // The forbidden text is on the first row, far above the last lines.
    let flow = r#"{ "target": { "command": { "argv": ["bash", "--norc", "--noprofile", "-c",
        "echo 'status: FORBIDDEN value'; for i in $(seq 1 12); do echo filler $i; done; exec sleep 60"] } },
      "steps": [
        { "action": "waitForText", "text": "filler 12", "timeoutMs": 10000 },
        { "action": "assertNotText", "text": "FORBIDDEN", "timeoutMs": 300 }
      ] }"#;
    let run = run_flow(flow, dir.path()).await;
    assert!(run.steps[0].is_ok(), "{:?}", run.steps[0]);
    let why = run.steps[1].as_ref().expect_err("the text is on screen");
    assert!(
        why.contains(r#"row 0: "status: FORBIDDEN value""#),
        "the failure names the row holding the text: {why}"
    );
}
