//! Real-surface tests of the macOS driver: TextEdit (launched by bundle
//! identifier; typing, a key chord, the text read back through the tree,
//! an exact-window PNG), Calculator (typed arithmetic, the display read
//! back), attaching by pid without signalling, and a bundle identifier
//! that names no running application. They run on macOS only — the
//! `macos-14` job of `.github/workflows/ci.yml`, after it seeds the
//! Accessibility and Screen Recording grants — and are type-checked and
//! linted for both Mac architectures on Linux by `cargo xtask cross-check`.

#![cfg(target_os = "macos")]

use qa_core::flow::Flow;
use qa_core::process::CleanupStatus;
use qa_core::result::RunStatus;
use qa_core::{ArtifactGroup, SurfaceDriver};
use qa_macos::MacDriver;
use qa_runner::conformance::{self, Drive, DriveOptions, Workspace};
use qa_runner::progress::NoProgress;
use qa_runner::runner::{self, RunRequest};
use std::path::Path;
use std::sync::Arc;

/// TextEdit without restored windows or the iCloud open panel: one new
/// untitled document (`NSUserDefaults` from the argument domain).
const TEXTEDIT_ARGS: &str = r#""-ApplePersistenceIgnoreState","YES","-NSShowAppCentricOpenPanelInsteadOfUntitledFile","NO""#;

/// Runs a flow through the runner's own step execution; panics with the
/// first error.
async fn drive(flow_text: &str) -> Drive {
    let flow = Flow::parse(flow_text, Path::new(env!("CARGO_MANIFEST_DIR"))).expect("flow parses");
    let d = conformance::drive(
        &MacDriver::new(),
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

/// Width and height from a PNG's IHDR chunk.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "a PNG");
    let be = |i: usize| u32::from_be_bytes(bytes[i..i + 4].try_into().unwrap());
    (be(16), be(20))
}

#[tokio::test(flavor = "multi_thread")]
async fn textedit_types_a_chord_reads_its_text_back_and_captures_its_window() {
    let flow = format!(
        r#"{{"target":{{"application":{{"launch":{{"argv":["com.apple.TextEdit",{TEXTEDIT_ARGS}]}}}}}},
            "timeoutMs":90000,
            "steps":[
              {{"action":"waitForWindow","title":{{"includes":"Untitled"}}}},
              {{"action":"inputText","locator":{{"role":"textbox"}},"text":"hello from ui-qa"}},
              {{"action":"assertText","locator":{{"role":"textbox"}},"equals":"hello from ui-qa"}},
              {{"action":"pressKey","key":"Meta+a"}},
              {{"action":"inputText","text":"replaced"}},
              {{"action":"assertText","locator":{{"role":"textbox"}},"equals":"replaced"}},
              {{"action":"screenshot","name":"textedit"}},
              {{"action":"snapshotAccessibility"}}
            ]}}"#
    );
    let d = drive(&flow).await;
    let shot = d
        .artifacts()
        .into_iter()
        .find(|a| a.group == Some(ArtifactGroup::Screenshots))
        .expect("a screenshot");
    let bytes = std::fs::read(&shot.path).unwrap();
    let (w, h) = png_size(&bytes);
    assert!(
        w >= 200 && h >= 100,
        "the window's size, not a sliver: {w}x{h}"
    );
    assert_eq!(d.close.cleanup.status, CleanupStatus::Clean);
    assert!(
        d.close.cleanup.ended.iter().any(|e| e.label == "app"),
        "the launched TextEdit was ended by the run: {:?}",
        d.close.cleanup
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn calculator_adds_and_shows_the_sum() {
    // 12 + 30: no button is named 42, so only the display can match.
    let flow = r#"{"target":{"application":{"launch":{"argv":["com.apple.calculator"]}}},
        "timeoutMs":60000,
        "steps":[
          {"action":"waitForWindow"},
          {"action":"pressKey","key":"Escape"},
          {"action":"inputText","text":"12+30="},
          {"action":"waitForText","equals":"42"},
          {"action":"capture"}
        ]}"#;
    let d = drive(flow).await;
    assert_eq!(d.close.cleanup.status, CleanupStatus::Clean);
}

#[tokio::test(flavor = "multi_thread")]
async fn attaching_by_pid_never_signals_the_program() {
    let mut textedit =
        std::process::Command::new("/System/Applications/TextEdit.app/Contents/MacOS/TextEdit")
            .args([
                "-ApplePersistenceIgnoreState",
                "YES",
                "-NSShowAppCentricOpenPanelInsteadOfUntitledFile",
                "NO",
            ])
            .spawn()
            .expect("TextEdit starts");
    let pid = textedit.id();
    let flow = format!(
        r#"{{"target":{{"application":{{"pid":{pid}}}}},
            "timeoutMs":60000,
            "steps":[{{"action":"waitForWindow"}},
                     {{"action":"snapshotAccessibility"}}]}}"#
    );
    let d = drive(&flow).await;
    let alive = textedit.try_wait().expect("readable").is_none();
    let _ = textedit.kill();
    let _ = textedit.wait();
    assert!(alive, "an attached program must outlive the run");
    assert!(
        d.close.cleanup.ended.iter().all(|e| e.pid != pid),
        "the attached pid was reported ended: {:?}",
        d.close.cleanup
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bundle_id_that_is_not_running_is_blocked_with_a_handoff() {
    let text = r#"{"target":{"application":{"bundleId":"com.example.UiQaNoSuchApp"}},
            "steps":[{"action":"waitForWindow"}]}"#;
    let flow = Flow::parse(text, Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap();
    let ws = Workspace::new();
    let driver: Arc<dyn SurfaceDriver> = Arc::new(MacDriver::new());
    let r = runner::run(
        &[driver],
        RunRequest::new(flow, text.into(), ws.path().to_path_buf()),
        &NoProgress,
    )
    .await
    .unwrap();
    assert_eq!(r.status, RunStatus::Blocked, "{:?}", r.reason);
    let h = r.blocked_handoff.as_ref().expect("a handoff");
    assert!(h.reason.contains("com.example.UiQaNoSuchApp"), "{h:?}");
}
