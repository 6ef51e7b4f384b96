//! The driver against the fixture program (a real PTY, a real program).

// Unix programs (bash, python3, the fixture's Unix half) through a Unix
// PTY, with Unix process APIs; the Windows backend's pure parts are
// unit-tested in the library.
#![cfg(unix)]

mod common;

use common::*;
use qa_core::flow::Flow;
use qa_core::{Host, RunOptions, SurfaceDriver};
use std::time::Instant;

fn fixture_flow(args: &[&str], steps: &str) -> String {
    let mut argv = vec![fixture().display().to_string()];
    argv.extend(args.iter().map(|s| s.to_string()));
    format!(
        r#"{{ "target": {{ "command": {{ "argv": {} }} }},
             "viewport": {{ "cols": 80, "rows": 24 }},
             "steps": [ {steps} ] }}"#,
        serde_json::to_string(&argv).unwrap()
    )
}

#[tokio::test]
async fn fixture_keys_paste_resize_capture_and_exit_code() {
    let base = tempfile::tempdir().unwrap();
    let flow = fixture_flow(
        &["--exit-code", "3"],
        r#"
        { "action": "waitForText", "text": "ready>", "timeoutMs": 15000 },
        { "action": "assertText", "text": "cursor query: answered 1;1", "row": 2 },
        { "action": "sendKeys", "keys": ["ArrowUp", "ArrowLeft", "Shift+Tab", "F5", "Ctrl+C", "Alt+x", "PageDown"] },
        { "action": "waitForText", "text": "key: PageDown" },
        { "action": "assertText", "text": "key: ArrowUp (app)" },
        { "action": "assertNotText", "text": "(normal)" },
        { "action": "sendPaste", "text": "hello\npaste" },
        { "action": "waitForText", "text": "paste: [hello\\rpaste]" },
        { "action": "waitForStable", "stableMs": 200 },
        { "action": "capture", "name": "fixture-screen" },
        { "action": "assertCursor", "row": 16, "col": 7 },
        { "action": "resize", "cols": 100, "rows": 30 },
        { "action": "waitForText", "text": "size: 100x30" },
        { "action": "assertProcessRunning" },
        { "action": "sendKeys", "keys": ["q"] },
        { "action": "assertProcessExited", "exitCode": 3 },
        { "action": "waitForText", "text": "bye (exit 3)" }
        "#,
    );
    let run = run_flow(&flow, base.path()).await;
    run.assert_passed();
    // Evidence landed inside the run directory.
    let txt = run.artifact("terminal", "fixture-screen.txt");
    let png = run.artifact("screenshots", "fixture-screen.png");
    assert!(png.exists() && std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
    let text = std::fs::read_to_string(&txt).unwrap();
    insta::assert_snapshot!("fixture_screen", text);
    let replay = run.replay();
    assert!(replay.starts_with(&run.run_dir));
    let (header, events) = check_replay(&replay);
    assert_eq!(header["width"], 80);
    assert!(events.iter().any(|e| e[1] == "r" && e[2] == "100x30"));
    assert!(run
        .close
        .notes
        .iter()
        .any(|n| n.message.contains("not pixels of a real terminal window")));
    assert_eq!(
        run.close.cleanup.status,
        qa_core::process::CleanupStatus::Clean
    );
}

#[tokio::test]
async fn unterminated_synchronized_update_does_not_hide_the_screen() {
    let base = tempfile::tempdir().unwrap();
    let flow = fixture_flow(
        &["--unterminated-sync"],
        r#"{ "action": "waitForText", "text": "ready>", "timeoutMs": 10000 }"#,
    );
    let run = run_flow(&flow, base.path()).await;
    // The frame is drawn inside a synchronized update that never ends and
    // then nothing more is written: without the terminal's own (150 ms)
    // sync timeout the screen would stay hidden for good, so passing
    // within the step deadline proves the timeout was honoured.
    run.assert_passed();
}

#[tokio::test]
async fn paste_fails_clearly_without_bracketed_paste() {
    let base = tempfile::tempdir().unwrap();
    let flow = r#"{ "target": { "command": { "argv": ["cat"] } },
        "steps": [ { "action": "sendPaste", "text": "x" } ] }"#;
    let run = run_flow(flow, base.path()).await;
    let err = run.steps[0].as_ref().unwrap_err();
    assert!(err.starts_with("tui.paste.not_enabled"), "{err}");
}

#[tokio::test]
async fn a_failing_assertion_names_what_it_saw_and_keeps_evidence() {
    let base = tempfile::tempdir().unwrap();
    let flow = fixture_flow(
        &[],
        r#"
        { "action": "waitForText", "text": "ready>", "timeoutMs": 15000 },
        { "action": "capture" },
        { "action": "assertText", "text": "this never appears", "timeoutMs": 5000 }
        "#,
    );
    let run = run_flow(&flow, base.path()).await;
    assert!(!run.passed());
    let err = run.steps[2].as_ref().unwrap_err();
    assert!(
        err.contains("does not contain text \"this never appears\""),
        "{err}"
    );
    assert!(run.artifact("terminal", "capture-step2.txt").exists());
    check_replay(&run.replay());
}

#[tokio::test]
async fn waiting_for_text_after_exit_fails_fast() {
    let base = tempfile::tempdir().unwrap();
    let flow = r#"{ "target": { "command": { "argv": ["sh", "-c", "echo done; exit 4"] } },
        "steps": [ { "action": "waitForText", "text": "never", "timeoutMs": 120000 } ] }"#;
    let t0 = Instant::now();
    let run = run_flow(flow, base.path()).await;
    let err = run.steps[0].as_ref().unwrap_err();
    assert!(err.contains("exit code 4"), "{err}");
    // Far below the 120 s deadline: it failed as soon as the output was drained.
    assert!(t0.elapsed().as_secs() < 60, "{:?}", t0.elapsed());
}

#[tokio::test]
async fn launch_errors_are_coded_and_native_terminal_is_blocked() {
    let base = tempfile::tempdir().unwrap();
    let driver = qa_tui::TuiDriver::new();
    let cases = [
        (r#"["no-such-program-xyz"]"#, None, "tui.launch.not_found"),
        (r#"["/etc"]"#, None, "tui.launch.not_executable"),
        (r#"["sh"]"#, Some("missing-dir"), "tui.launch.cwd_missing"),
    ];
    for (argv, cwd, code) in cases {
        let cwd = cwd
            .map(|c| format!(r#", "cwd": "{c}""#))
            .unwrap_or_default();
        let text = format!(
            r#"{{ "target": {{ "command": {{ "argv": {argv}{cwd} }} }}, "steps": [ {{ "action": "capture" }} ] }}"#
        );
        let flow = Flow::parse(&text, base.path()).unwrap();
        let probe = driver
            .probe(&flow, &Host::current(), &RunOptions::default())
            .await;
        assert!(!probe.available(), "{code}");
        let ws = tempfile::tempdir().unwrap();
        let err = match driver.open(&flow, context(ws.path())).await {
            Err(e) => e,
            Ok(_) => panic!("{code}: opened"),
        };
        assert_eq!(err.code, code);
        assert!(!err.is_blocked());
    }
    let text = r#"{ "target": { "command": { "argv": ["sh"], "presentation": "native-terminal" } },
        "steps": [ { "action": "capture" } ] }"#;
    let flow = Flow::parse(text, base.path()).unwrap();
    let probe = driver
        .probe(&flow, &Host::current(), &RunOptions::default())
        .await;
    assert_eq!(probe.missing[0].id, "native-terminal");
    assert_eq!(probe.presentation.as_deref(), Some("native-terminal"));
    let ws = tempfile::tempdir().unwrap();
    let err = driver.open(&flow, context(ws.path())).await.err().unwrap();
    assert!(err.is_blocked());
    // The default presentation probes clean.
    let flow = Flow::parse(
        r#"{ "target": { "command": { "argv": ["sh"] } }, "steps": [ { "action": "capture" } ] }"#,
        base.path(),
    )
    .unwrap();
    let probe = driver
        .probe(&flow, &Host::current(), &RunOptions::default())
        .await;
    assert!(probe.available(), "{:?}", probe.missing);
    assert_eq!(driver.info().guide_topic, "pty");
}

#[tokio::test]
async fn observe_reports_size_cursor_modes_and_program_state() {
    use qa_core::{Deadline, ProgramState, SurfaceState};
    let base = tempfile::tempdir().unwrap();
    let script = r#"printf '\033[?1049h\033[?2004h\033[3;5Hready'; read line; exit 4"#;
    let flow = Flow::parse(
        &format!(
            r#"{{ "target": {{ "command": {{ "argv": ["sh", "-c", {}] }} }},
                 "viewport": {{ "cols": 70, "rows": 20 }},
                 "steps": [ {{ "action": "waitForText", "text": "ready" }},
                            {{ "action": "sendKeys", "keys": ["Enter"] }},
                            {{ "action": "assertProcessExited", "exitCode": 4 }} ] }}"#,
            js(script)
        ),
        base.path(),
    )
    .unwrap();
    let ws = tempfile::tempdir().unwrap();
    let mut session = qa_tui::TuiDriver::new()
        .open(&flow, context(ws.path()))
        .await
        .unwrap();
    let deadline = Deadline::after_ms(10_000);
    assert!(matches!(
        session.verify(&flow.steps[0], deadline).await.unwrap(),
        qa_core::Verdict::Holds
    ));
    let state = session.observe().await.unwrap();
    assert_eq!(
        state,
        SurfaceState::Terminal {
            cols: 70,
            rows: 20,
            cursor_row: 2,
            cursor_col: 9,
            alternate_screen: true,
            bracketed_paste: true,
            program: ProgramState::Running,
        }
    );
    session.perform(&flow.steps[1], deadline).await.unwrap();
    let mut verdict = session.verify(&flow.steps[2], deadline).await.unwrap();
    while matches!(verdict, qa_core::Verdict::NotYet { .. }) && !deadline.expired() {
        verdict = session.verify(&flow.steps[2], deadline).await.unwrap();
    }
    assert_eq!(verdict, qa_core::Verdict::Holds);
    match session.observe().await.unwrap() {
        SurfaceState::Terminal { program, .. } => {
            assert_eq!(program, ProgramState::Exited { code: 4 })
        }
        other => panic!("not a terminal state: {other:?}"),
    }
    let closed = session.close(Deadline::after_ms(10_000)).await;
    assert_eq!(
        closed.cleanup.status,
        qa_core::process::CleanupStatus::Clean
    );
}
