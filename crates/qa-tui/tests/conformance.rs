//! The shared driver contract (`qa_core::conformance`) against a real PTY.

use qa_core::flow::Flow;
use std::sync::Arc;

#[tokio::test(flavor = "multi_thread")]
async fn tui_driver_keeps_the_contract() {
    let flow = Flow::parse(
        r#"{"target":{"command":{"argv":["bash","--norc","--noprofile"],"env":{"PS1":"$ "}}},
            "steps":[{"action":"sendText","text":"echo conformance-$((40+2))"},
                     {"action":"sendKeys","keys":["Enter"]},
                     {"action":"waitForText","text":"conformance-42"},
                     {"action":"capture"}]}"#,
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")),
    )
    .unwrap();
    let driver = Arc::new(qa_tui::TuiDriver::new());
    qa_core::conformance::run_all(driver.clone(), &flow)
        .await
        .unwrap();
    let r = qa_core::conformance::run_keeps_contract(driver, &flow)
        .await
        .unwrap();
    assert_eq!(
        r.status,
        qa_core::result::RunStatus::Passed,
        "{:?}",
        r.reason
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn missing_program_is_a_clear_failure_not_a_hang() {
    let flow = Flow::parse(
        r#"{"target":{"command":{"argv":["/nonexistent/program-xyz"]}},"steps":[{"action":"capture"}]}"#,
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")),
    )
    .unwrap();
    let r = qa_core::conformance::run_keeps_contract(Arc::new(qa_tui::TuiDriver::new()), &flow)
        .await
        .unwrap();
    assert_ne!(r.status, qa_core::result::RunStatus::Passed);
}
