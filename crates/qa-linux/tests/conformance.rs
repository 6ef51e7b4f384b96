//! The shared driver contract (`qa_runner::conformance`) against a real GTK
//! application under the driver's own virtual display.

use qa_core::flow::Flow;
use qa_core::process::CleanupStatus;
use qa_core::result::RunStatus;
use qa_core::{RunOptions, SurfaceDriver};
use qa_runner::conformance::{self, Fixture, FixtureFlow, Workspace};
use qa_runner::progress::NoProgress;
use qa_runner::runner::{self, RunRequest};
use std::path::PathBuf;
use std::sync::Arc;

fn fixtures() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/desktop")
        .canonicalize()
        .unwrap()
}

/// A flow on the GTK fixture window, after it shows.
fn fixture_flow(steps: &str) -> FixtureFlow {
    FixtureFlow::new(
        format!(
            r#"{{"target":{{"application":{{"launch":{{"argv":["/usr/bin/python3","fixture_app.py"]}},"virtualDisplay":true}}}},
                "timeoutMs":60000,
                "steps":[{{"action":"waitForWindow","title":{{"equals":"ui-qa fixture"}}}},{steps}]}}"#
        ),
        fixtures(),
    )
}

const SECRET: &str = "s3cr3t-Linux-Tok3n";

#[tokio::test(flavor = "multi_thread")]
async fn linux_driver_keeps_the_contract() {
    let fixture = Fixture {
        driver: Arc::new(qa_linux::LinuxDesktopDriver::new()),
        options: RunOptions {
            virtual_display: true,
            ..Default::default()
        },
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
            r#"{"target":{"application":{"launch":{"argv":["false"]},"virtualDisplay":true}},
                "steps":[{"action":"waitForWindow"}]}"#,
            fixtures(),
        ),
    };
    let report = conformance::check(&fixture).await.unwrap();
    eprintln!("{report}");
    assert!(report.all_ran(), "{report}");
}

#[tokio::test(flavor = "multi_thread")]
async fn blocked_app_carries_a_handoff() {
    let text = r#"{"target":{"application":{"launch":{"argv":["xterm"]},"virtualDisplay":true}},
            "steps":[{"action":"waitForWindow"}]}"#;
    let flow = Flow::parse(text, std::path::Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap();
    let ws = Workspace::new();
    let driver: Arc<dyn SurfaceDriver> = Arc::new(qa_linux::LinuxDesktopDriver::new());
    let r = runner::run(
        &[driver],
        RunRequest::new(flow, text.into(), ws.path().to_path_buf()),
        &NoProgress,
    )
    .await
    .unwrap();
    assert_eq!(r.status, RunStatus::Blocked, "{:?}", r.reason);
    // BLOCKED for the reason this test is about (xterm draws its text
    // itself and exposes no accessible application), not any other.
    assert_eq!(
        r.reason_code.as_deref(),
        Some("desktop.app.not_accessible"),
        "{:?}",
        r.reason
    );
    let h = r
        .blocked_handoff
        .as_ref()
        .expect("BLOCKED carries a handoff");
    assert!(h.manual_action_required && !h.automatic_remediation_attempted);
    assert!(!h.reason.is_empty() && !h.remediation.is_empty(), "{h:?}");
    assert_eq!(
        r.cleanup.status,
        CleanupStatus::Clean,
        "{:?}",
        r.cleanup.left
    );
    for e in &r.cleanup.ended {
        assert!(
            !qa_core::process::identity::alive(e.pid),
            "pid {} ({}) reported ended but is alive",
            e.pid,
            e.label
        );
    }
}
