//! The shared driver contract (`qa_core::conformance`) against real Chromium.

use qa_core::flow::Flow;
use qa_core::result::RunStatus;
use std::sync::Arc;

fn flow(text: &str) -> Flow {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    Flow::parse(text, &dir.canonicalize().unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_driver_keeps_the_contract() {
    let f = flow(
        r#"{"target":{"serve":"web","url":"/form.html"},"steps":[
            {"action":"fill","locator":{"label":"Name"},"value":"Ada"},
            {"action":"screenshot"},{"action":"snapshotAccessibility"}]}"#,
    );
    let driver = Arc::new(qa_web::WebDriver::new());
    qa_core::conformance::run_all(driver.clone(), &f)
        .await
        .unwrap();
    let r = qa_core::conformance::run_keeps_contract(driver, &f)
        .await
        .unwrap();
    assert_eq!(r.status, RunStatus::Passed, "{:?}", r.reason);
    assert!(!r.artifacts.screenshots.is_empty());
    assert!(!r.artifacts.accessibility_snapshots.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_browser_is_blocked_with_a_handoff() {
    let f = flow(r#"{"target":{"serve":"web","url":"/form.html"},"steps":[{"action":"reload"}]}"#);
    let driver = qa_web::WebDriver::new();
    let opts = qa_core::RunOptions {
        browser: Some("/nonexistent/chromium".into()),
        ..Default::default()
    };
    let p = qa_core::SurfaceDriver::probe(&driver, &f, &qa_core::Host::current(), &opts).await;
    assert!(!p.available());
    assert_eq!(p.missing[0].id, "chromium");
    assert!(!p.missing[0].remediation.is_empty());
}
