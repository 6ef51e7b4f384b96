//! dragTo, uploadFiles, openPopup, download, authRejectedIf,
//! performanceTrace, heapSummary and lighthouse against real Chromium.

mod common;
use common::*;
use qa_core::SurfaceDriver;

fn detail(o: &Outcome, i: usize) -> String {
    o.steps[i]
        .as_ref()
        .ok()
        .and_then(|s| s.detail.clone())
        .unwrap_or_default()
}

fn artifacts(o: &Outcome) -> Vec<qa_core::Artifact> {
    o.steps
        .iter()
        .flatten()
        .flat_map(|s| s.artifacts.clone())
        .collect()
}

fn scratch_left(o: &Outcome, prefix: &str) -> Vec<String> {
    std::fs::read_dir(o.work_dir())
        .unwrap()
        .flatten()
        // A scratch directory made for the browser's own user is a link in
        // `work/` (see `Evidence::scratch_dir_for`): gone when it dangles.
        .filter(|e| e.path().exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(prefix))
        .collect()
}

#[test]
fn every_new_action_is_declared_supported() {
    let d = qa_web::WebDriver::new();
    for a in [
        "dragTo",
        "uploadFiles",
        "openPopup",
        "download",
        "authRejectedIf",
        "performanceTrace",
        "heapSummary",
        "lighthouse",
    ] {
        assert!(d.supports().actions.contains(&a), "{a}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drag_with_pointer_events() {
    let o = run(r#"{ "target": { "serve": "web", "url": "/drag-pointer.html" }, "steps": [
        { "action": "dragTo", "locator": { "testId": "card" }, "dropTarget": { "testId": "done" } },
        { "action": "assertText", "locator": { "testId": "result" }, "equals": "dropped in done after several moves", "timeoutMs": 5000 },
        { "action": "assertCount", "locator": { "css": "[data-testid=done] [data-testid=card]" }, "count": 1 }
    ] }"#).await;
    assert_eq!(o.failure(), None);
    assert_eq!(detail(&o, 0), "pointer drag");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drag_with_html5_drag_and_drop() {
    let o = run(r#"{ "target": { "serve": "web", "url": "/drag-html5.html" }, "steps": [
        { "action": "dragTo", "locator": { "testId": "item" }, "dropTarget": { "testId": "target" },
          "targetPosition": { "x": 20, "y": 20 } },
        { "action": "assertText", "locator": { "testId": "result" }, "equals": "dropped item1", "timeoutMs": 5000 },
        { "action": "assertCount", "locator": { "css": "[data-testid=target] #item1" }, "count": 1 },
        { "action": "assertAttribute", "locator": { "testId": "result" }, "attribute": "data-events",
          "regex": "^dragstart,dragenter,drop,dragend$" }
    ] }"#).await;
    assert_eq!(o.failure(), None);
    assert_eq!(detail(&o, 0), "HTML5 drag and drop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upload_files_to_a_file_input() {
    // "aGVsbG8=" = hello, "eCx5" = x,y
    let o = run(
        r#"{ "target": { "serve": "web", "url": "/upload.html" }, "steps": [
        { "action": "uploadFiles", "locator": { "label": "Documents" }, "files": [
            { "name": "a.txt", "mimeType": "text/plain", "base64": "aGVsbG8=" },
            { "name": "b c.csv", "mimeType": "application/x-custom", "base64": "eCx5" } ] },
        { "action": "assertText", "locator": { "testId": "result" },
          "equals": "docs: a.txt (5 bytes, hello); b c.csv (3 bytes, x,y)", "timeoutMs": 5000 },
        { "action": "uploadFiles", "locator": { "label": "Comment" }, "files": [
            { "name": "a.txt", "mimeType": "text/plain", "base64": "aGVsbG8=" } ] }
    ] }"#,
    )
    .await;
    assert!(
        o.steps[0].is_ok() && o.steps[1].is_ok(),
        "{:?}",
        o.failure()
    );
    assert_eq!(detail(&o, 0), "set 2 file(s), 8 bytes");
    assert!(
        o.observations
            .iter()
            .any(|x| x.contains("file 2 is typed") && x.contains("application/x-custom")),
        "{:?}",
        o.observations
    );
    let f = o.failure().expect("a text input is no file input");
    assert!(f.starts_with("web.upload.not_file_input"), "{f}");

    let o = run(
        r#"{ "target": { "serve": "web", "url": "/upload.html" }, "steps": [
        { "action": "uploadFiles", "locator": { "label": "Avatar" }, "files": [
            { "name": "a.txt", "mimeType": "text/plain", "base64": "aGVsbG8=" },
            { "name": "b.txt", "mimeType": "text/plain", "base64": "aGVsbG8=" } ] }
    ] }"#,
    )
    .await;
    let f = o.failure().expect("two files on a single-file input");
    assert!(f.starts_with("web.upload.not_multiple"), "{f}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_a_same_origin_popup_and_keep_driving_the_page() {
    let o = run(r#"{ "target": { "serve": "web", "url": "/popup.html" }, "steps": [
        { "action": "openPopup", "name": "help", "locator": { "role": "button", "name": "Open help" } },
        { "action": "click", "locator": { "role": "button", "name": "Do nothing" } },
        { "action": "assertText", "locator": { "testId": "result" }, "equals": "nothing opened" }
    ] }"#).await;
    assert_eq!(o.failure(), None, "{:?}", o.observations);
    assert!(
        o.observations.iter().any(|x| x
            .starts_with("popup \"help\" opened: origin http://127.0.0.1:")
            && x.ends_with("title \"Help window\"")),
        "{:?}",
        o.observations
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cross_origin_popup_is_blocked_and_closed() {
    let o = run(r#"{ "target": { "serve": "web", "url": "/popup.html" }, "steps": [
        { "action": "openPopup", "name": "partner", "locator": { "role": "button", "name": "Open partner" } }
    ] }"#).await;
    let f = o.failure().expect("fails");
    assert!(f.starts_with("web.popup.blocked"), "{f}");
    assert_blocked_is_an_observation(&o, f);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn popup_needs_a_name_and_a_popup() {
    let o = run(
        r#"{ "target": { "serve": "web", "url": "/popup.html" }, "steps": [
        { "action": "openPopup", "locator": { "role": "button", "name": "Open help" } }
    ] }"#,
    )
    .await;
    let f = o.failure().expect("fails");
    assert!(f.starts_with("web.popup.name_required"), "{f}");
    let o = run(r#"{ "target": { "serve": "web", "url": "/popup.html" }, "steps": [
        { "action": "openPopup", "name": "x", "locator": { "role": "button", "name": "Do nothing" }, "timeoutMs": 5000 }
    ] }"#).await;
    let f = o.failure().expect("fails");
    assert!(f.starts_with("web.popup.none"), "{f}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn downloads_are_checked_and_kept() {
    let o = run(r#"{ "target": { "serve": "web", "url": "/download.html" }, "steps": [
        { "action": "download", "locator": { "role": "link", "name": "Export CSV" },
          "filename": { "equals": "report.csv" }, "maxBytes": 1000 },
        { "action": "download", "locator": { "role": "button", "name": "Export generated" },
          "filename": { "regex": "^generated rows\\.csv$" } },
        { "action": "download", "locator": { "role": "link", "name": "Export CSV" }, "retain": false },
        { "action": "download", "locator": { "role": "link", "name": "Export CSV" } }
    ] }"#).await;
    assert_eq!(o.failure(), None, "{:?}", o.observations);
    let a = artifacts(&o);
    assert_eq!(a.len(), 3, "{a:?}");
    assert!(a
        .iter()
        .all(|x| x.group == Some(qa_core::ArtifactGroup::Downloads)));
    assert!(
        a[0].path.ends_with("/downloads/report.csv"),
        "{}",
        a[0].path
    );
    assert_eq!(
        std::fs::read_to_string(&a[0].path).unwrap(),
        "id,name\n1,Ada\n2,Grace\n"
    );
    assert!(
        a[1].path.ends_with("/downloads/generated_rows.csv"),
        "{}",
        a[1].path
    );
    assert_eq!(
        std::fs::read_to_string(&a[1].path).unwrap().lines().count(),
        101
    );
    // never overwritten
    assert!(
        a[2].path.ends_with("/downloads/report-2.csv"),
        "{}",
        a[2].path
    );
    assert!(
        scratch_left(&o, "download-").is_empty(),
        "scratch files deleted"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn download_limits_and_containment() {
    let o = run(
        r#"{ "target": { "serve": "web", "url": "/download.html" }, "steps": [
        { "action": "download", "locator": { "role": "link", "name": "Export CSV" }, "maxBytes": 5 }
    ] }"#,
    )
    .await;
    let f = o.failure().expect("too large");
    assert!(f.starts_with("web.download.too_large"), "{f}");
    assert!(artifacts(&o).is_empty());
    // The file is gone (Chromium may recreate the empty download directory
    // after a cancel).
    for d in scratch_left(&o, "download-") {
        let inside: Vec<_> = std::fs::read_dir(o.work_dir().join(&d))
            .unwrap()
            .flatten()
            .collect();
        assert!(inside.is_empty(), "{d}: {inside:?}");
    }

    let o = run(r#"{ "target": { "serve": "web", "url": "/download.html" }, "steps": [
        { "action": "download", "locator": { "role": "link", "name": "Export CSV" }, "filename": { "includes": ".pdf" } }
    ] }"#).await;
    let f = o.failure().expect("wrong name");
    assert!(f.starts_with("web.download.filename_mismatch"), "{f}");

    let o = run(r#"{ "target": { "serve": "web", "url": "/download.html" }, "steps": [
        { "action": "download", "locator": { "role": "link", "name": "Export elsewhere" }, "timeoutMs": 5000 }
    ] }"#).await;
    let f = o.failure().expect("blocked origin");
    assert!(f.starts_with("web.download.none"), "{f}");
    assert_blocked_is_an_observation(&o, f);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_rejection_blocks_the_run() {
    let o = run(
        r#"{ "target": { "serve": "web", "url": "/form.html" }, "steps": [
        { "action": "authRejectedIf", "urlIncludes": "/login" },
        { "action": "goto", "path": "/auth.html" },
        { "action": "authRejectedIf", "urlIncludes": "/login" }
    ] }"#,
    )
    .await;
    assert!(o.steps[0].is_ok() && o.steps[1].is_ok());
    let f = o.failure().expect("rejected");
    assert!(f.starts_with("web.auth.rejected"), "{f}");
    assert!(f.ends_with("[blocked: auth-session]"), "{f}");
    let o = run(
        r#"{ "target": { "serve": "web", "url": "/auth.html" }, "steps": [
        { "action": "authRejectedIf", "locator": { "testId": "session-expired" } }
    ] }"#,
    )
    .await;
    let f = o.failure().expect("rejected");
    assert!(f.contains("testId=\"session-expired\" is visible"), "{f}");
    assert!(f.ends_with("[blocked: auth-session]"), "{f}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn performance_trace_keeps_only_a_summary() {
    let o = run(
        r#"{ "target": { "serve": "web", "url": "/perf.html" }, "steps": [
        { "action": "performanceTrace", "name": "busy" }
    ] }"#,
    )
    .await;
    assert_eq!(o.failure(), None);
    let a = artifacts(&o);
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].group, Some(qa_core::ArtifactGroup::Traces));
    assert!(
        a[0].path.ends_with("/traces/busy-trace-summary.json"),
        "{}",
        a[0].path
    );
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&a[0].path).unwrap()).unwrap();
    assert!(s["eventCount"].as_u64().unwrap() > 10, "{s}");
    assert!(
        s["longTasks"]["count"].as_u64().unwrap() >= 2,
        "an 80 ms task every 200 ms: {s}"
    );
    assert!(
        s["durationsMs"]["scripting"].as_f64().unwrap() > 100.0,
        "{s}"
    );
    assert!(scratch_left(&o, "trace-").is_empty(), "raw trace deleted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heap_summary_keeps_only_a_summary() {
    let o = run(
        r#"{ "target": { "serve": "web", "url": "/perf.html" }, "steps": [
        { "action": "heapSummary" }
    ] }"#,
    )
    .await;
    assert_eq!(o.failure(), None);
    let a = artifacts(&o);
    assert_eq!(a.len(), 1);
    assert!(
        a[0].path
            .ends_with("/traces/heapSummary-step1-heap-summary.json"),
        "{}",
        a[0].path
    );
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&a[0].path).unwrap()).unwrap();
    assert!(s["nodeCount"].as_u64().unwrap() > 20_000, "{s}");
    let w = s["topConstructors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "FixtureWidget")
        .unwrap_or_else(|| panic!("FixtureWidget among the top constructors: {s}"));
    assert_eq!(w["count"], 20_000);
    assert!(s["domCounters"]["nodes"].as_u64().unwrap() > 0, "{s}");
    assert!(s["heapUsage"]["usedSize"].as_f64().unwrap() > 0.0, "{s}");
    assert!(scratch_left(&o, "heap-").is_empty(), "raw snapshot deleted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lighthouse_is_blocked_not_faked() {
    let text = r#"{ "target": { "serve": "web", "url": "/form.html" }, "steps": [ { "action": "lighthouse" } ] }"#;
    let flow = qa_core::Flow::parse(text, &fixtures()).unwrap();
    let probe = qa_web::WebDriver::new()
        .probe(
            &flow,
            &qa_core::Host::current(),
            &qa_core::RunOptions::default(),
        )
        .await;
    assert!(
        probe.missing.iter().any(|m| m.id == "lighthouse"),
        "{:?}",
        probe.missing
    );
    let o = run(text).await;
    let f = o.failure().expect("blocked");
    assert!(f.starts_with("web.lighthouse.unavailable"), "{f}");
    assert!(f.ends_with("[blocked: lighthouse]"), "{f}");
}

/// The request to the blocked origin is an observation of the step, not
/// glued into the failure reason `f`.
fn assert_blocked_is_an_observation(o: &Outcome, f: &str) {
    assert!(!f.contains("blocked request to"), "{f}");
    assert!(
        o.observations
            .iter()
            .any(|x| x.starts_with("blocked request to http://127.0.0.1:9")),
        "{:?}",
        o.observations
    );
}
