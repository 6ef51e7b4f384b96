//! Real-surface tests of the Windows driver: a WinForms fixture, Notepad
//! with its menu and Save As dialog, attaching without signalling, and the
//! shared driver contract. They run on Windows only — the `windows-2022`
//! job of `.github/workflows/ci.yml` — and are type-checked and linted for
//! `x86_64-pc-windows-msvc` on Linux by `cargo xtask cross-check`.

#![cfg(windows)]

use qa_core::flow::Flow;
use qa_core::process::CleanupStatus;
use qa_core::result::RunStatus;
use qa_core::{RunOptions, SurfaceDriver};
use qa_runner::conformance::{self, Drive, DriveOptions, Fixture, FixtureFlow, Workspace};
use qa_runner::progress::NoProgress;
use qa_runner::runner::{self, RunRequest};
use qa_windows::WindowsDesktopDriver;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/windows")
        .canonicalize()
        .unwrap()
}

/// A flow on the WinForms fixture window, after it shows.
fn fixture_flow(steps: &str) -> FixtureFlow {
    FixtureFlow::new(
        format!(
            r#"{{"target":{{"application":{{"launch":{{"argv":["powershell.exe","-NoProfile","-ExecutionPolicy","Bypass","-File","fixture_form.ps1"]}}}}}},
                "timeoutMs":60000,
                "steps":[{{"action":"waitForWindow","title":{{"equals":"ui-qa fixture"}}}},{steps}]}}"#
        ),
        fixtures(),
    )
}

const SECRET: &str = "s3cr3t-Windows-Tok3n";

#[tokio::test(flavor = "multi_thread")]
async fn windows_driver_keeps_the_contract() {
    let fixture = Fixture {
        driver: Arc::new(WindowsDesktopDriver::new()),
        options: RunOptions::default(),
        passing: fixture_flow(
            r#"{"action":"setValue","locator":{"automationId":"name-entry"},"value":"hello"},
               {"action":"activate","locator":{"role":"button","name":"Copy"}},
               {"action":"assertText","locator":{"automationId":"echo-label"},"equals":"hello"},
               {"action":"capture"}"#,
        ),
        never_holds: fixture_flow(
            r#"{"action":"assertText","locator":{"automationId":"echo-label"},"equals":"never shown","timeoutMs":2000}"#,
        ),
        secret_flow: fixture_flow(&format!(
            r#"{{"action":"setValue","locator":{{"automationId":"name-entry"}},"value":"{SECRET}"}},
               {{"action":"activate","locator":{{"role":"button","name":"Copy"}}}},
               {{"action":"assertText","locator":{{"automationId":"echo-label"}},"equals":"{SECRET}"}},
               {{"action":"snapshotAccessibility"}}"#
        )),
        secret: SECRET.into(),
        slow_action: fixture_flow(
            r#"{"action":"activate","locator":{"role":"button","name":"No such button"},"timeoutMs":1500},
               {"action":"capture"}"#,
        ),
        failing_open: FixtureFlow::new(
            r#"{"target":{"application":{"launch":{"argv":["ui-qa-no-such-program.exe"]}}},
                "steps":[{"action":"waitForWindow"}]}"#,
            fixtures(),
        ),
    };
    let report = conformance::check(&fixture).await.unwrap();
    eprintln!("{report}");
    assert!(report.all_ran(), "{report}");
}

/// Runs a flow through the runner's own step execution; panics with the
/// first error.
async fn drive(flow_text: &str) -> Drive {
    let flow = Flow::parse(flow_text, &fixtures()).expect("flow parses");
    let d = conformance::drive(
        &WindowsDesktopDriver::new(),
        &flow,
        DriveOptions::default(),
        conformance::stop_on_failure,
    )
    .await;
    if let Some(e) = d.error() {
        panic!("{}: {}", e.code, e.message);
    }
    d
}

#[tokio::test(flavor = "multi_thread")]
async fn fixture_check_box_list_typing_and_pointer_click() {
    let flow = fixture_flow(
        r#"{"action":"activate","locator":{"automationId":"agree"}},
           {"action":"assertState","locator":{"automationId":"agree"},"state":"checked"},
           {"action":"select","locator":{"role":"listitem","name":"Banana"}},
           {"action":"assertState","locator":{"role":"listitem","name":"Banana"},"state":"selected"},
           {"action":"inputText","locator":{"automationId":"name-entry"},"text":"typed"},
           {"action":"click","locator":{"role":"button","name":"Copy"}},
           {"action":"assertText","locator":{"automationId":"echo-label"},"equals":"typed"},
           {"action":"snapshotAccessibility"}"#,
    );
    let d = drive(&flow.text).await;
    assert_eq!(d.close.cleanup.status, CleanupStatus::Clean);
}

#[tokio::test(flavor = "multi_thread")]
async fn notepad_types_opens_its_menu_and_saves_through_the_dialog() {
    let ws = Workspace::new();
    let file = ws.path().join("ui-qa-note.txt");
    let file_json = serde_json::to_string(&file.display().to_string()).unwrap();
    let flow = format!(
        r#"{{"target":{{"application":{{"launch":{{"argv":["notepad.exe"]}}}}}},
            "timeoutMs":90000,
            "steps":[
              {{"action":"waitForWindow","title":{{"includes":"Notepad"}}}},
              {{"action":"inputText","locator":{{"automationId":"15"}},"text":"hello from ui-qa"}},
              {{"action":"activate","locator":{{"role":"menuitem","name":"File"}}}},
              {{"action":"assertState","locator":{{"role":"menuitem","name":"Save As..."}},"state":"visible"}},
              {{"action":"pressKey","key":"Escape"}},
              {{"action":"pressKey","key":"Escape"}},
              {{"action":"pressKey","key":"Ctrl+s"}},
              {{"action":"waitForWindow","title":{{"equals":"Save As"}}}},
              {{"action":"setValue","locator":{{"automationId":"1001"}},"value":{file_json}}},
              {{"action":"activate","locator":{{"role":"button","name":"Save"}}}},
              {{"action":"waitForWindow","title":{{"includes":"ui-qa-note"}}}},
              {{"action":"capture"}}
            ]}}"#
    );
    let d = drive(&flow).await;
    let saved = std::fs::read_to_string(&file).expect("the dialog saved the file");
    assert_eq!(saved, "hello from ui-qa");
    assert_eq!(d.close.cleanup.status, CleanupStatus::Clean);
    assert!(
        d.close.cleanup.ended.iter().any(|e| e.label == "app"),
        "the launched Notepad was ended by the run: {:?}",
        d.close.cleanup
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn attaching_by_pid_never_signals_the_program() {
    let mut notepad = std::process::Command::new("notepad.exe")
        .spawn()
        .expect("notepad starts");
    let pid = notepad.id();
    let flow = format!(
        r#"{{"target":{{"application":{{"pid":{pid}}}}},
            "steps":[{{"action":"waitForWindow","title":{{"includes":"Notepad"}}}},
                     {{"action":"snapshotAccessibility"}}]}}"#
    );
    let d = drive(&flow).await;
    let alive = notepad.try_wait().expect("readable").is_none();
    let _ = notepad.kill();
    assert!(alive, "an attached program must outlive the run");
    assert!(
        d.close.cleanup.ended.iter().all(|e| e.pid != pid),
        "the attached pid was reported ended: {:?}",
        d.close.cleanup
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bundle_id_is_blocked_with_a_handoff() {
    let text = r#"{"target":{"application":{"bundleId":"com.example.App"}},
            "steps":[{"action":"waitForWindow"}]}"#;
    let flow = Flow::parse(text, &fixtures()).unwrap();
    let ws = Workspace::new();
    let driver: Arc<dyn SurfaceDriver> = Arc::new(WindowsDesktopDriver::new());
    let r = runner::run(
        &[driver],
        RunRequest::new(flow, text.into(), ws.path().to_path_buf()),
        &NoProgress,
    )
    .await
    .unwrap();
    assert_eq!(r.status, RunStatus::Blocked, "{:?}", r.reason);
    let h = r.blocked_handoff.as_ref().expect("a handoff");
    assert!(h.reason.contains("bundleId"), "{h:?}");
}
