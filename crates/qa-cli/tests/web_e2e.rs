//! End to end through the `ui-qa` binary with the browser driver: real
//! Chromium, fixture pages served by ui-qa itself (`target.serve`).

mod common;

use common::{assert_clean, root, run_json};
use serde_json::Value;
use std::path::Path;

/// Writes a flow next to the web fixtures (so `serve: "."` serves them) and runs it.
fn run_fixture_flow(name: &str, body: &str) -> (i32, Value) {
    let ws = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    // Serve a private copy of the fixtures: flows live next to what they serve.
    let site = dir.path().join("web");
    std::fs::create_dir(&site).unwrap();
    for e in std::fs::read_dir(root().join("tests/fixtures/web"))
        .unwrap()
        .flatten()
    {
        std::fs::copy(e.path(), site.join(e.file_name())).unwrap();
    }
    let flow = dir.path().join(format!("{name}.jsonc"));
    std::fs::write(&flow, body).unwrap();
    run(&flow, ws.path())
}

fn run(flow: &Path, ws: &Path) -> (i32, Value) {
    run_json(flow, ws, &[], |_| {})
}

/// Chromium and everything it started are gone, and no process anywhere
/// still uses this run's directory (the browser profile lives there).
fn assert_browser_gone(r: &Value) {
    assert_clean(r, &["chromium"]);
    let run_dir = r["evidenceDir"].as_str().unwrap();
    for p in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmd) = std::fs::read(p.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd);
            assert!(
                !cmd.contains(run_dir),
                "a process still uses the run dir: {cmd}"
            );
        }
    }
}

#[test]
fn example_web_flow_passes() {
    let ws = tempfile::tempdir().unwrap();
    let (code, r) = run(&root().join("examples/web-form.jsonc"), ws.path());
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["selection"]["platformDriver"], "browser/cdp");
    assert_eq!(r["selection"]["guide"]["topic"], "cdp");
    let shots = r["artifacts"]["screenshots"].as_array().unwrap();
    assert_eq!(shots.len(), 1);
    let png = std::fs::read(shots[0]["path"].as_str().unwrap()).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let logs: Vec<&str> = r["artifacts"]["logs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["path"].as_str().unwrap())
        .collect();
    assert!(
        logs.iter().any(|p| p.ends_with("network.jsonl")),
        "{logs:?}"
    );
    assert_browser_gone(&r);
}

#[test]
fn covered_button_waits_for_the_overlay() {
    let (code, r) = run_fixture_flow(
        "overlay",
        r#"{"target":{"serve":"web","url":"/overlay.html"},"steps":[
            {"action":"click","locator":{"role":"button","name":"Continue"}},
            {"action":"assertText","locator":{"testId":"result"},"equals":"clicked after overlay","timeoutMs":5000}]}"#,
    );
    // The text is decided when the click lands ("clicked under overlay"
    // otherwise) and never changes after: a wide timeout proves the same.
    assert_eq!(code, 0, "{r:#}");
    assert_browser_gone(&r);
}

#[test]
fn never_enabled_button_fails_naming_the_check_and_keeps_evidence() {
    let (code, r) = run_fixture_flow(
        "never",
        r#"{"target":{"serve":"web","url":"/enable-later.html"},"steps":[
            {"action":"click","locator":{"role":"button","name":"Never"},"timeoutMs":5000}]}"#,
    );
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(r["reasonCode"], "web.actionability.not_enabled");
    assert_eq!(r["stage"], "step 1 click");
    assert!(
        !r["artifacts"]["screenshots"].as_array().unwrap().is_empty(),
        "the page at the failure is kept"
    );
    assert_browser_gone(&r);
}

#[test]
fn ambiguous_locator_fails_with_the_count() {
    let (code, r) = run_fixture_flow(
        "ambiguous",
        r#"{"target":{"serve":"web","url":"/ambiguous.html"},"steps":[
            {"action":"click","locator":{"role":"button","name":"Save"}}]}"#,
    );
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(r["reasonCode"], "web.locator.ambiguous");
    assert!(
        r["reason"].as_str().unwrap().contains("2"),
        "{}",
        r["reason"]
    );
    assert_browser_gone(&r);
}

#[test]
fn timed_out_run_still_ends_chromium() {
    let (code, r) = run_fixture_flow(
        "timeout",
        r#"{"timeoutMs":30000,"target":{"serve":"web","url":"/form.html"},"steps":[
            {"action":"waitFor","locator":{"testId":"does-not-exist"},"timeoutMs":60000}]}"#,
    );
    // The flow deadline (30 s) is far beyond a cold Chromium launch and far
    // below the step's own 60 s, so it passes while step 1 is waiting.
    assert_eq!(code, 124, "{r:#}");
    assert_eq!(r["timedOut"], true);
    assert_eq!(r["stage"], "step 1 waitFor");
    assert_browser_gone(&r);
}
