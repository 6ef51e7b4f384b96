//! The shared driver contract (`qa_runner::conformance`) against real Chromium.

use qa_core::flow::Flow;
use qa_core::result::RunStatus;
use qa_core::SurfaceDriver;
use qa_runner::conformance::{self, Fixture, FixtureFlow, Workspace};
use qa_runner::progress::NoProgress;
use qa_runner::runner::{self, RunRequest};
use std::path::PathBuf;
use std::sync::Arc;

const SECRET: &str = "s3cr3t-Web-Conformance";

fn fixtures() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .canonicalize()
        .unwrap()
}

fn flow(text: &str) -> Flow {
    Flow::parse(text, &fixtures()).unwrap()
}

const PASSING: &str = r#"{"target":{"serve":"web","url":"/form.html"},"steps":[
    {"action":"fill","locator":{"label":"Name"},"value":"Ada"},
    {"action":"assertValue","locator":{"label":"Name"},"equals":"Ada"},
    {"action":"screenshot"},{"action":"snapshotAccessibility"}]}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_driver_keeps_the_contract() {
    let fixture = Fixture {
        driver: Arc::new(qa_web::WebDriver::new()),
        options: Default::default(),
        passing: FixtureFlow::new(PASSING, fixtures()),
        never_holds: FixtureFlow::new(
            r#"{"target":{"serve":"web","url":"/form.html"},"steps":[
                {"action":"fill","locator":{"label":"Name"},"value":"Ada"},
                {"action":"assertText","locator":{"testId":"result"},"equals":"never shown","timeoutMs":1500}]}"#,
            fixtures(),
        ),
        secret_flow: FixtureFlow::new(
            format!(
                r#"{{"target":{{"serve":"web","url":"/form.html"}},"steps":[
                    {{"action":"fill","locator":{{"label":"Name"}},"value":"{SECRET}"}},
                    {{"action":"assertValue","locator":{{"label":"Name"}},"equals":"{SECRET}"}},
                    {{"action":"screenshot"}}]}}"#
            ),
            fixtures(),
        ),
        secret: SECRET.into(),
        slow_action: FixtureFlow::new(
            r#"{"target":{"serve":"web","url":"/form.html"},"steps":[
                {"action":"click","locator":{"role":"button","name":"No such button"},"timeoutMs":1500},
                {"action":"screenshot"}]}"#,
            fixtures(),
        ),
        failing_open: FixtureFlow::new(
            r#"{"target":{"serve":"no-such-directory","url":"/index.html"},"steps":[{"action":"reload"}]}"#,
            fixtures(),
        ),
    };
    let report = conformance::check(&fixture)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(report.all_ran(), "{report}");

    // The passing flow through the runner keeps its evidence.
    let ws = Workspace::new();
    let driver: Arc<dyn SurfaceDriver> = Arc::new(qa_web::WebDriver::new());
    let r = runner::run(
        &[driver],
        RunRequest::new(flow(PASSING), PASSING.into(), ws.path().to_path_buf()),
        &NoProgress,
    )
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
