//! The browser driver against real Chromium and the fixture pages.

mod common;
use common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn form_fill_click_and_assert() {
    let o = run(r#"{ "target": { "serve": "web", "url": "/form.html" }, "steps": [
        { "action": "fill", "locator": { "label": "Name" }, "value": "Ada" },
        { "action": "assertValue", "locator": { "label": "Name" }, "equals": "Ada" },
        { "action": "fill", "locator": { "placeholder": "you@example.com" }, "value": "ada@example.com" },
        { "action": "check", "locator": { "role": "checkbox", "name": "Subscribe" } },
        { "action": "assertChecked", "locator": { "label": "Subscribe" } },
        { "action": "selectOption", "locator": { "label": "Color" }, "label": "Green" },
        { "action": "click", "locator": { "role": "button", "name": "Send" } },
        { "action": "assertText", "locator": { "testId": "result" }, "equals": "Hello Ada (Green, subscribed)" },
        { "action": "press", "locator": { "label": "Name" }, "key": "Escape" },
        { "action": "assertValue", "locator": { "label": "Name" }, "equals": "" },
        { "action": "assertURL", "includes": "/form.html" },
        { "action": "assertCount", "locator": { "css": "option" }, "count": 3 },
        { "action": "screenshot", "name": "form" },
        { "action": "snapshotAccessibility" },
        { "action": "assertNoConsoleErrors" }
    ] }"#).await;
    assert_eq!(o.failure(), None);
    let shots: usize = o.steps.iter().flatten().map(|s| s.artifacts.len()).sum();
    assert_eq!(shots, 2, "a screenshot and an AX snapshot");
    assert!(o
        .observations
        .iter()
        .any(|x| x.starts_with("browser environment: viewport 1280x720")));
    assert!(o
        .close_artifacts
        .iter()
        .any(|a| a.path.ends_with("network.jsonl")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_network_log_holds_only_what_the_page_asked_for() {
    // Chromium's own top-chrome WebUI (the omnibox popup loads ~150
    // `chrome://` modules) is not attached, so none of its requests are
    // intercepted, logged or waited for.
    let o = run(r#"{ "target": { "serve": "web", "url": "/form.html" }, "steps": [
        { "action": "assertText", "locator": { "role": "button", "name": "Send" }, "equals": "Send" }
    ] }"#)
    .await;
    assert_eq!(o.failure(), None);
    let log = o
        .close_artifacts
        .iter()
        .find(|a| a.path.ends_with("network.jsonl"))
        .expect("network log");
    let text = std::fs::read_to_string(&log.path).unwrap();
    let urls: Vec<String> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["url"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert!(
        urls.iter().any(|u| u.ends_with("/form.html")),
        "the page itself is logged: {urls:?}"
    );
    assert!(
        urls.iter().all(|u| u.starts_with("http://127.0.0.1:")),
        "only the page's own requests: {urls:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spinner_settles_before_the_next_step() {
    let o = run(r#"{ "target": { "serve": "web", "url": "/spinner.html" }, "steps": [
        { "action": "click", "locator": { "role": "button", "name": "Load data" } },
        { "action": "assertText", "locator": { "testId": "result" }, "equals": "Loaded 3 items", "timeoutMs": 5000 },
        { "action": "assertNetworkRequest", "path": "/data.json", "status": 200 }
    ] }"#).await;
    assert_eq!(o.failure(), None);
    // The click waited for the spinner and the fetch (600 ms later), so the
    // assertion held at its very first check: counted, not timed, so a slow
    // machine cannot make it pass or fail by chance.
    assert_eq!(
        o.verifies[1], 1,
        "the result was there when the click step returned"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn covered_button_is_clicked_only_after_the_overlay_leaves() {
    let o = run(r#"{ "target": { "serve": "web", "url": "/overlay.html" }, "steps": [
        { "action": "click", "locator": { "role": "button", "name": "Continue" } },
        { "action": "assertText", "locator": { "testId": "result" }, "equals": "clicked after overlay", "timeoutMs": 5000 }
    ] }"#).await;
    // The text is decided when the click lands ("clicked under overlay"
    // otherwise) and never changes after, so a wide timeout proves the same.
    assert_eq!(o.failure(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn covered_button_reports_the_covering_element() {
    let o = run(
        r#"{ "target": { "serve": "web", "url": "/overlay.html?ms=60000" }, "steps": [
        { "action": "click", "locator": { "role": "button", "name": "Continue" }, "timeoutMs": 5000 }
    ] }"#,
    )
    .await;
    let f = o.failure().expect("fails");
    assert!(f.starts_with("web.actionability.covered"), "{f}");
    assert!(f.contains("div#overlay.modal-backdrop"), "{f}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enabled_later_passes_never_enabled_fails_naming_the_check() {
    let o = run(
        r#"{ "target": { "serve": "web", "url": "/enable-later.html" }, "steps": [
        { "action": "click", "locator": { "role": "button", "name": "Submit" } },
        { "action": "assertText", "locator": { "testId": "result" }, "equals": "submitted" },
        { "action": "click", "locator": { "role": "button", "name": "Never" }, "timeoutMs": 5000 }
    ] }"#,
    )
    .await;
    assert!(o.steps[0].is_ok() && o.steps[1].is_ok());
    let f = o.failure().expect("fails");
    assert!(f.starts_with("web.actionability.not_enabled"), "{f}");
    assert!(f.contains("element is not enabled"), "{f}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_matches_are_ambiguous() {
    let o = run(
        r#"{ "target": { "serve": "web", "url": "/ambiguous.html" }, "steps": [
        { "action": "click", "locator": { "role": "button", "name": "Save" } }
    ] }"#,
    )
    .await;
    let f = o.failure().expect("fails");
    assert!(f.starts_with("web.locator.ambiguous"), "{f}");
    assert!(f.contains("matched 2 elements"), "{f}");
    let ok = run(
        r#"{ "target": { "serve": "web", "url": "/ambiguous.html" }, "steps": [
        { "action": "click", "locator": { "role": "button", "name": "Save", "nth": 1 } },
        { "action": "assertCount", "locator": { "role": "button", "name": "Save" }, "count": 2 }
    ] }"#,
    )
    .await;
    assert_eq!(ok.failure(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn console_errors_are_seen() {
    let o = run(
        r#"{ "target": { "serve": "web", "url": "/console-error.html" }, "steps": [
        { "action": "assertConsole", "level": "error", "includes": "boom" },
        { "action": "assertNoConsoleErrors" }
    ] }"#,
    )
    .await;
    assert!(o.steps[0].is_ok());
    let f = o.failure().expect("fails");
    assert!(f.contains("1 console error"), "{f}");
    assert!(
        !f.contains("boom"),
        "failure reasons never echo page text: {f}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dialogs_expected_and_unexpected() {
    let o = run(r#"{ "target": { "serve": "web", "url": "/dialog.html" }, "steps": [
        { "action": "click", "locator": { "role": "button", "name": "Delete" },
          "expectDialog": { "type": "confirm", "message": { "includes": "Delete" }, "accept": true } },
        { "action": "assertText", "locator": { "testId": "result" }, "equals": "deleted" },
        { "action": "click", "locator": { "role": "button", "name": "Delete" } },
        { "action": "assertText", "locator": { "testId": "result" }, "equals": "kept" }
    ] }"#).await;
    assert_eq!(o.failure(), None);
    assert!(
        o.observations
            .iter()
            .any(|x| x == "dismissed an unexpected confirm dialog"),
        "{:?}",
        o.observations
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_needs_a_dedicated_worker_works() {
    let o = run(
        r#"{ "target": { "serve": "web", "url": "/worker.html" }, "steps": [
        { "action": "assertText", "locator": { "testId": "result" }, "equals": "sum 5050, 3 items" },
        { "action": "assertNoConsoleErrors" }
    ] }"#,
    )
    .await;
    assert_eq!(o.failure(), None, "{:?}", o.observations);
    // (Chromium's own start-up requests to Google services are blocked and
    // reported too; nothing the page or its worker asked for was.)
    assert!(
        !o.observations
            .iter()
            .any(|x| x.contains("blocked") && x.contains("127.0.0.1")),
        "nothing of the page was blocked: {:?}",
        o.observations
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocked_navigation_is_an_error() {
    let o = run(
        r#"{ "target": { "serve": "web", "url": "/form.html" }, "steps": [
        { "action": "goto", "url": "http://127.0.0.1:9/elsewhere" }
    ] }"#,
    )
    .await;
    let f = o.failure().expect("fails");
    assert!(f.starts_with("web.navigation.blocked"), "{f}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_flow_passes() {
    let dir = fixtures().join("../../examples");
    let text = std::fs::read_to_string(dir.join("web-form.jsonc")).unwrap();
    let o = run_flow(&text, &dir).await;
    assert_eq!(o.failure(), None);
    assert!(o.close.cleanup.left.is_empty());
}

/// The nodes of a snapshot's tree.
fn ax_count(nodes: &serde_json::Value) -> usize {
    nodes
        .as_array()
        .map(|a| a.iter().map(|n| 1 + ax_count(&n["children"])).sum())
        .unwrap_or(0)
}

/// A page of about 12,000 elements: the snapshot is read node by node and
/// stops at its budget, keeping the top of the page in document order; a
/// snapshot rooted at an element holds just that element's subtree.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snapshot_of_a_big_page_is_bounded_and_keeps_its_top() {
    let o = run(
        r#"{ "target": { "serve": "web", "url": "/big-list.html" }, "steps": [
        { "action": "assertCount", "locator": { "role": "listitem" }, "count": 3000 },
        { "action": "snapshotAccessibility" },
        { "action": "snapshotAccessibility", "locator": { "role": "navigation", "name": "Pages" } }
    ] }"#,
    )
    .await;
    assert_eq!(o.failure(), None);
    let read = |step: usize| -> serde_json::Value {
        let a = &o.steps[step].as_ref().unwrap().artifacts[0];
        serde_json::from_slice(&std::fs::read(&a.path).unwrap()).unwrap()
    };
    let page = read(1);
    assert_eq!(page["truncated"], true);
    assert_eq!(ax_count(&page["nodes"]), 5000);
    let root = &page["nodes"][0];
    assert_eq!(root["role"], "RootWebArea");
    assert_eq!(root["name"], "Big list");
    let top: Vec<&str> = root["children"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["role"].as_str())
        .collect();
    assert_eq!(&top[..3], ["heading", "navigation", "list"], "{top:?}");
    let list = &root["children"][2]["children"];
    assert_eq!(list[0]["children"][1]["name"], "item 0", "{:#}", list[0]);
    let nav = read(2);
    assert_eq!(nav["truncated"], false, "{:.2000}", nav.to_string());
    assert_eq!(nav["nodes"][0]["role"], "navigation");
    assert_eq!(nav["nodes"][0]["children"][0]["role"], "link");
    assert_eq!(nav["nodes"][0]["children"][0]["name"], "Top");
}
