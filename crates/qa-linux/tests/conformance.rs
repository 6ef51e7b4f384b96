//! The shared driver contract (`qa_core::conformance`) against a real GTK
//! application under the driver's own virtual display.

use qa_core::flow::Flow;
use qa_core::result::RunStatus;
use std::sync::Arc;

fn fixture_flow(steps: &str) -> Flow {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/desktop");
    Flow::parse(
        &format!(
            r#"{{"target":{{"application":{{"launch":{{"argv":["/usr/bin/python3","fixture_app.py"]}},"virtualDisplay":true}}}},
                "steps":[{steps}]}}"#
        ),
        &dir.canonicalize().unwrap(),
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn linux_driver_keeps_the_contract() {
    let flow = fixture_flow(r#"{"action":"waitForWindow"},{"action":"capture"}"#);
    let driver = Arc::new(qa_linux::LinuxDesktopDriver::new());
    qa_core::conformance::run_all(driver.clone(), &flow)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn blocked_app_carries_a_handoff() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let flow = Flow::parse(
        r#"{"target":{"application":{"launch":{"argv":["xterm"]},"virtualDisplay":true}},
            "steps":[{"action":"waitForWindow"}]}"#,
        dir,
    )
    .unwrap();
    let r = qa_core::conformance::run_keeps_contract(
        Arc::new(qa_linux::LinuxDesktopDriver::new()),
        &flow,
    )
    .await
    .unwrap();
    assert_eq!(r.status, RunStatus::Blocked, "{:?}", r.reason);
}
