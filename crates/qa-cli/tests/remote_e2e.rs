//! End to end through the `ui-qa` binary against a remote browser service:
//! browserless 2.x (npm `@browserless.io/browserless`, installed by `cargo
//! xtask deps`) on loopback with a token, launching the system Chromium for
//! each connection — the way a CI grid or a hosted service is reached.
#![cfg(unix)]

mod common;

use common::browsers::{leak_site, nothing_reached, Browserless, ChromeDriver, FlagSite};
use common::{run_json, write};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

const TOKEN: &str = "bl-Tok3n-7Qx9zR2w";

/// A flow through the service passes with a screenshot and a video; the
/// token (given as `${secret.BL_TOKEN}`) is in no file and no output of the
/// run in any encoding; a request to an origin the flow does not allow is
/// stopped inside the remote browser.
#[test]
fn a_flow_through_a_browser_service_passes_and_keeps_its_token() {
    let service = Browserless::start(TOKEN);
    let (site, leak, _site_dir) = leak_site();
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let flow = json!({
        "target": {
            "url": format!("{}/form.html", site.base),
            "browser": { "connect": format!("ws://127.0.0.1:{}?token=${{secret.BL_TOKEN}}", service.port) }
        },
        "steps": [
            { "action": "fill", "locator": { "label": "Name" }, "value": "Ada" },
            { "action": "click", "locator": { "role": "button", "name": "Send" } },
            { "action": "assertText", "locator": { "testId": "result" }, "includes": "Hello Ada" },
            { "action": "screenshot", "name": "sent" },
            { "action": "goto", "url": format!("{}/leak.html", site.base) },
            { "action": "assertText", "locator": { "testId": "leak" }, "includes": "done: stopped" }
        ]
    });
    let f = write(dir.path(), "remote.json", &flow.to_string());
    let o = std::process::Command::new(common::bin())
        .args(["run", "--json", "--video", "on", "--workspace"])
        .arg(ws.path())
        .arg(&f)
        .env("UI_QA_SECRET_BL_TOKEN", TOKEN)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    let r: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    assert_eq!(r["status"], "PASSED", "{r:#}\n{err}");
    let shots = r["artifacts"]["screenshots"].as_array().unwrap();
    let videos = r["artifacts"]["videos"].as_array().unwrap();
    assert!(
        shots
            .iter()
            .any(|s| s["path"].as_str().unwrap().contains("sent")),
        "{shots:?}"
    );
    assert_eq!(videos.len(), 1, "{:#}", r["artifacts"]);
    for a in shots.iter().chain(videos) {
        assert!(a["bytes"].as_u64().unwrap() > 0, "{a}");
    }
    assert!(
        nothing_reached(&leak),
        "a request reached an origin the flow does not allow"
    );
    let run_dir = Path::new(r["evidenceDir"].as_str().unwrap());
    let encodings = common::encodings_of(TOKEN);
    for enc in &encodings {
        assert!(
            !out.contains(enc.as_str()) && !err.contains(enc.as_str()),
            "the output holds the token as {enc:?}"
        );
    }
    common::assert_no_file_holds(run_dir, TOKEN);
    assert_eq!(r["cleanup"]["status"], "clean", "{:#}", r["cleanup"]);
}

/// The service dies mid-step (killed with everything it started once the
/// click reached the page): the step fails at once — well before its own
/// 60 s bound — with `web.connect.lost`, the result is written and the
/// cleanup is clean.
#[test]
fn a_service_that_dies_mid_run_fails_the_step_with_a_lost_connection() {
    let mut service = Browserless::start(TOKEN);
    let site = FlagSite::start();
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let flow = json!({
        "target": {
            "url": format!("http://127.0.0.1:{}/raise?name=clicked", site.port),
            "browser": { "connect": format!("ws://127.0.0.1:{}?token=${{secret.BL_TOKEN}}", service.port) }
        },
        "steps": [
            { "action": "click", "locator": { "role": "button", "name": "Raise" }, "timeoutMs": 60000 },
            { "action": "assertText", "locator": { "testId": "out" }, "includes": "never", "timeoutMs": 60000 }
        ]
    });
    let f = write(dir.path(), "lost.json", &flow.to_string());
    let (mut child, reader) = common::start_json(&[], ws.path(), &f, |c| {
        c.env("UI_QA_SECRET_BL_TOKEN", TOKEN);
    });
    assert!(
        site.wait("clicked", Duration::from_secs(300)),
        "the flow never clicked"
    );
    service.kill();
    child.wait().unwrap();
    let out = reader.join().unwrap();
    let r: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(r["status"], "FAILED", "{r:#}");
    assert_eq!(r["reasonCode"], "web.connect.lost", "{r:#}");
    // The service died while the click settled or while the assertion
    // waited: that step failed, before its bound.
    let steps = r["steps"].as_array().unwrap();
    let failed: Vec<&Value> = steps.iter().filter(|s| s["status"] == "failed").collect();
    assert_eq!(failed.len(), 1, "{steps:?}");
    assert!(
        failed[0]["durationMs"].as_u64().unwrap() < 60_000,
        "the step waited out its bound instead of failing on the lost connection: {steps:?}"
    );
    assert!(
        failed[0]["reason"].as_str().unwrap().contains("lost"),
        "{steps:?}"
    );
    assert_eq!(r["cleanup"]["status"], "clean", "{:#}", r["cleanup"]);
}

/// A wrong token is refused by the service: the run is BLOCKED with the
/// endpoint named by scheme, host and port only (never the token).
#[test]
fn a_wrong_token_is_blocked_without_showing_it() {
    let service = Browserless::start(TOKEN);
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let wrong = "wrong-Tok3n-55ab";
    let flow = json!({
        "target": {
            "url": "http://127.0.0.1:9/",
            "browser": { "connect": format!("ws://127.0.0.1:{}?token=${{secret.BL_WRONG}}", service.port) }
        },
        "steps": [ { "action": "assertURL", "includes": "x" } ]
    });
    let f = write(dir.path(), "wrong.json", &flow.to_string());
    let (_, r) = run_json(&f, ws.path(), &[], |c| {
        c.env("UI_QA_SECRET_BL_WRONG", wrong);
    });
    assert_eq!(r["status"], "BLOCKED", "{r:#}");
    assert_eq!(r["reasonCode"], "web.connect.unreachable", "{r:#}");
    let text = r.to_string();
    assert!(text.contains("401"), "{text}");
    assert!(!text.contains(wrong), "{text}");
}

/// A second real service: the Chromium a chromedriver session started (as a
/// Selenium grid gives one) is driven through the DevTools address the
/// session reports; the run works in a context of its own, so the session
/// keeps its own page, and chromedriver still controls its browser after.
#[test]
fn a_browser_a_chromedriver_session_started_is_driven_through_its_debugger_address() {
    let driver = ChromeDriver::start();
    let before = driver.url();
    let site = common::serve_dir(&common::root().join("tests/fixtures/web"));
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let flow = json!({
        "target": { "url": format!("{}/form.html", site.base), "browser": { "connect": driver.endpoint } },
        "steps": [
            { "action": "fill", "locator": { "label": "Name" }, "value": "Ada" },
            { "action": "click", "locator": { "role": "button", "name": "Send" } },
            { "action": "assertText", "locator": { "testId": "result" }, "includes": "Hello Ada" },
            { "action": "screenshot", "name": "driver" }
        ]
    });
    let f = write(dir.path(), "driver.json", &flow.to_string());
    let (code, r) = run_json(&f, ws.path(), &[], |_| {});
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["status"], "PASSED", "{r:#}");
    assert_eq!(r["cleanup"]["status"], "clean", "{:#}", r["cleanup"]);
    // The session's own page is where it was, and chromedriver still
    // drives its browser.
    assert_eq!(driver.url(), before);
}
