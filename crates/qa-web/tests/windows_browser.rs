//! The browser driver on Windows against the web fixtures: Chrome,
//! Chromium or Edge found where they install themselves, driven over the
//! private DevTools pipe (the C runtime's descriptors 3 and 4), its whole
//! tree owned through the run's job and ended by cleanup. Run by the
//! `windows-2022` job of `.github/workflows/ci.yml`.
#![cfg(windows)]

mod common;
use common::*;

#[test]
fn a_browser_is_found_where_it_installs_itself() {
    let exe = qa_web::testing::launch::find_chromium(None)
        .expect("Chrome, Chromium or Edge is installed");
    assert!(exe.is_file(), "{} is not a file", exe.display());
    let name = exe
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_ascii_lowercase();
    assert!(
        ["chrome.exe", "chromium.exe", "msedge.exe"].contains(&name.as_str()),
        "found {}",
        exe.display()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_flow_passes_over_the_devtools_pipe_and_cleanup_ends_the_job() {
    let o = run(r#"{ "target": { "serve": "web", "url": "/form.html" }, "steps": [
        { "action": "fill", "locator": { "label": "Name" }, "value": "Ada" },
        { "action": "assertValue", "locator": { "label": "Name" }, "equals": "Ada" },
        { "action": "check", "locator": { "role": "checkbox", "name": "Subscribe" } },
        { "action": "selectOption", "locator": { "label": "Color" }, "label": "Green" },
        { "action": "click", "locator": { "role": "button", "name": "Send" } },
        { "action": "assertText", "locator": { "testId": "result" }, "equals": "Hello Ada (Green, subscribed)" },
        { "action": "press", "locator": { "label": "Name" }, "key": "Escape" },
        { "action": "assertValue", "locator": { "label": "Name" }, "equals": "" },
        { "action": "screenshot", "name": "form" }
    ] }"#)
    .await;
    assert_eq!(o.failure(), None);
    let shot = o
        .steps
        .iter()
        .flatten()
        .flat_map(|s| &s.artifacts)
        .find(|a| a.path.ends_with(".png"))
        .expect("the screenshot step wrote a PNG");
    let png = std::fs::read(&shot.path).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    // The browser was the job's: cleanup ended it (and its helpers), none
    // is left, and no process naming the profile outlived the run.
    let cleanup = &o.close.cleanup;
    assert!(cleanup.left.is_empty(), "left: {:?}", cleanup.left);
    assert!(
        cleanup.ended.iter().any(|p| p.label == "chromium"),
        "the browser is not in the cleanup report: {:?}",
        cleanup.ended
    );
    assert!(processes_mentioning(&o.real_profile_dir).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_assertion_says_what_it_expected_and_what_it_received() {
    let o = run_expecting(
        r#"{ "target": { "serve": "web", "url": "/form.html" }, "steps": [
            { "action": "fill", "locator": { "label": "Name" }, "value": "Ada" },
            { "action": "assertValue", "locator": { "label": "Name" }, "equals": "Grace", "timeoutMs": 1000 }
        ] }"#,
        &[Expect {
            step: 1,
            code: "assertion.failed",
            transient: &[],
        }],
    )
    .await;
    assert_eq!(o.failure(), None);
    let (_, why) = &o.expected_failures[0];
    assert!(why.contains("Ada"), "{why}");
}
