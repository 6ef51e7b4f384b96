//! The shared driver contract (`qa_runner::conformance`) against a real PTY.

// Unix programs (bash, python3, the fixture's Unix half) through a Unix
// PTY, with Unix process APIs; the Windows backend's pure parts are
// unit-tested in the library.
#![cfg(unix)]

use qa_core::flow::Flow;
use qa_runner::conformance::{self, DriveOptions, Fixture, FixtureFlow};
use std::path::Path;
use std::sync::Arc;

const SECRET: &str = "s3cr3t-Conformance-77";

/// An executable whose interpreter does not exist: it probes as a program
/// but cannot be started, so opening fails after the probe said yes.
fn broken_program(dir: &Path) -> String {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join("broken-interpreter");
    std::fs::write(&p, "#!/nonexistent/interpreter-xyz\necho never\n").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p.display().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn tui_driver_keeps_the_contract() {
    let base = tempfile::tempdir().unwrap();
    let dir = base.path().to_path_buf();
    let broken = serde_json::to_string(&broken_program(&dir)).unwrap();
    let fixture = Fixture {
        driver: Arc::new(qa_tui::TuiDriver::new()),
        options: Default::default(),
        passing: FixtureFlow::new(
            r#"{"target":{"command":{"argv":["bash","--norc","--noprofile"],"env":{"PS1":"$ "}}},
                "steps":[{"action":"sendText","text":"echo conformance-$((40+2))"},
                         {"action":"sendKeys","keys":["Enter"]},
                         {"action":"waitForText","text":"conformance-42"},
                         {"action":"capture"}]}"#,
            &dir,
        ),
        never_holds: FixtureFlow::new(
            r#"{"target":{"command":{"argv":["sh","-c","echo ready; sleep 30"]}},
                "steps":[{"action":"waitForText","text":"ready"},
                         {"action":"assertText","text":"never-on-screen","timeoutMs":1500}]}"#,
            &dir,
        ),
        secret_flow: FixtureFlow::new(
            format!(
                r#"{{"target":{{"command":{{"argv":["sh","-c","printf 'token: %s\\n' \"$TOK\"; echo shown; sleep 30"],
                                      "env":{{"TOK":"{SECRET}"}}}}}},
                    "steps":[{{"action":"waitForText","text":"shown"}},
                             {{"action":"capture"}}]}}"#
            ),
            &dir,
        ),
        secret: SECRET.into(),
        slow_action: FixtureFlow::new(
            r#"{"target":{"command":{"argv":["sh","-c","while :; do date +%s%N; sleep 0.05; done"]}},
                "steps":[{"action":"waitForStable","stableMs":5000,"timeoutMs":1500},
                         {"action":"capture"}]}"#,
            &dir,
        ),
        failing_open: FixtureFlow::new(
            format!(
                r#"{{"target":{{"command":{{"argv":[{broken}]}}}},"steps":[{{"action":"capture"}}]}}"#
            ),
            &dir,
        ),
    };
    let report = conformance::check(&fixture)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(report.all_ran(), "{report}");
}

#[tokio::test(flavor = "multi_thread")]
async fn missing_program_is_a_clear_failure_not_a_hang() {
    let flow = Flow::parse(
        r#"{"target":{"command":{"argv":["/nonexistent/program-xyz"]}},"steps":[{"action":"capture"}]}"#,
        Path::new(env!("CARGO_MANIFEST_DIR")),
    )
    .unwrap();
    let driver = qa_tui::TuiDriver::new();
    let d = conformance::drive(
        &driver,
        &flow,
        DriveOptions::default(),
        conformance::stop_on_failure,
    )
    .await;
    assert!(!d.passed());
    let err = d.open_error.as_ref().expect("the open fails");
    assert_eq!(err.code, "tui.launch.not_found", "{err}");
    assert!(d.steps.is_empty());
}
