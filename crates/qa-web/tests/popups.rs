//! Popups and closing targets: a popup to an origin outside the allowlist
//! never wedges its opener, and a protocol call to a target that closes
//! fails at once with its own code instead of waiting out its bound.

mod common;
use common::*;
use qa_web::testing::cdp::{Cdp, CdpError};
use serde_json::json;
use std::time::{Duration, Instant};

/// Far beyond anything a step needs on a slow machine: a step that reaches
/// it has hung.
const HANG: u64 = 120_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocked_popup_leaves_the_opener_fully_usable() {
    let t0 = Instant::now();
    let o = run(&format!(
        r#"{{ "target": {{ "serve": "web", "url": "/popup-blocked.html" }}, "steps": [
        {{ "action": "click", "locator": {{ "role": "button", "name": "Open partner" }}, "timeoutMs": {HANG} }},
        {{ "action": "click", "locator": {{ "role": "button", "name": "Count" }}, "timeoutMs": {HANG} }},
        {{ "action": "screenshot", "name": "opener", "timeoutMs": {HANG} }},
        {{ "action": "assertText", "locator": {{ "testId": "result" }}, "equals": "clicked 1", "timeoutMs": {HANG} }},
        {{ "action": "click", "locator": {{ "role": "button", "name": "Count" }}, "timeoutMs": {HANG} }},
        {{ "action": "assertText", "locator": {{ "testId": "result" }}, "equals": "clicked 2", "timeoutMs": {HANG} }}
    ] }}"#
    ))
    .await;
    assert_eq!(o.failure(), None, "{:?}", o.observations);
    assert_eq!(o.steps.len(), 6);
    // "Promptly": nowhere near the steps' deadlines (a wedged session
    // waits each of them out).
    assert!(
        t0.elapsed() < Duration::from_millis(HANG / 2),
        "took {:?}",
        t0.elapsed()
    );
    let png = &o.steps[2].as_ref().unwrap().artifacts[0];
    assert!(png.bytes > 1000, "a real picture of the opener");
    let closed: Vec<&String> = o
        .observations
        .iter()
        .filter(|l| l.contains("popup window to http://example.invalid was blocked"))
        .collect();
    assert_eq!(closed.len(), 1, "reported once: {:?}", o.observations);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_popup_to_a_blocked_origin_fails_with_its_code_and_the_page_goes_on() {
    let o = run_flow(
        &format!(
            r#"{{ "target": {{ "serve": "web", "url": "/popup-blocked.html" }}, "steps": [
        {{ "action": "openPopup", "name": "partner", "locator": {{ "role": "button", "name": "Open partner" }}, "timeoutMs": {HANG} }}
    ] }}"#
        ),
        &fixtures(),
    )
    .await;
    let f = o.failure().expect("blocked");
    assert!(f.starts_with("web.popup.blocked"), "{f}");
}

/// A raw connection to a fresh Chromium, for protocol-level tests.
struct Browser {
    cdp: std::sync::Arc<Cdp>,
    run: Run,
    _child: qa_web::testing::launch::BrowserChild,
}

async fn browser() -> Browser {
    let run = context();
    let exe = qa_web::testing::launch::find_chromium(None)
        .expect("Chromium is installed (cargo xtask deps)");
    let profile = run.ctx.evidence.scratch_dir("chromium-profile").unwrap();
    let root = qa_core::Host::current().is_root;
    // No page here loads anything: the proxy address is never used.
    let args =
        qa_web::testing::launch::chromium_args(&profile, root, "en-US", "http://127.0.0.1:9");
    let launched = qa_web::testing::launch::launch(
        &exe,
        &args,
        &profile,
        None,
        &run.processes,
        qa_core::Deadline::after_ms(HANG),
        |_| async { Ok(()) },
    )
    .await
    .expect("Chromium starts");
    let (cdp, mut rx) = (launched.cdp, launched.events);
    tokio::spawn(async move { while rx.recv().await.is_some() {} });
    Browser {
        cdp,
        run,
        _child: launched.child,
    }
}

impl Browser {
    async fn page(&self) -> (String, String) {
        let t = self
            .cdp
            .call(None, "Target.createTarget", json!({ "url": "about:blank" }))
            .await
            .unwrap();
        let target = t["targetId"].as_str().unwrap().to_string();
        let a = self
            .cdp
            .call(
                None,
                "Target.attachToTarget",
                json!({ "targetId": target, "flatten": true }),
            )
            .await
            .unwrap();
        (target, a["sessionId"].as_str().unwrap().to_string())
    }

    async fn end(self) {
        self.cdp.close();
        let report = self
            .run
            .processes
            .end_all(Duration::from_secs(2), qa_core::Deadline::after_ms(HANG))
            .await;
        assert!(report.left.is_empty(), "{:?}", report.left);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_to_a_target_that_closes_fails_at_once_with_its_code() {
    let b = browser().await;
    let (target, session) = b.page().await;
    // An evaluation that never answers by itself, bounded far away.
    let cdp = b.cdp.clone();
    let s = session.clone();
    let waiting = tokio::spawn(async move {
        let t0 = Instant::now();
        let r = cdp
            .call_with_timeout(
                Some(&s),
                "Runtime.evaluate",
                json!({ "expression": "new Promise(() => {})", "awaitPromise": true }),
                Duration::from_millis(HANG),
            )
            .await;
        (r, t0.elapsed())
    });
    // The evaluation is on the wire once the page answers a later call.
    b.cdp
        .call(
            Some(&session),
            "Runtime.evaluate",
            json!({ "expression": "1" }),
        )
        .await
        .unwrap();
    b.cdp
        .call(None, "Target.closeTarget", json!({ "targetId": target }))
        .await
        .unwrap();
    let (r, took) = waiting.await.unwrap();
    let e = r.expect_err("the target closed");
    assert!(matches!(e, CdpError::TargetClosed { .. }), "{e:?}");
    assert_eq!(e.code(), "web.cdp.target_closed");
    assert!(
        e.to_string().contains("page target closed") && e.to_string().contains("Runtime.evaluate"),
        "{e}"
    );
    assert!(
        took < Duration::from_millis(HANG / 2),
        "failed only after {took:?}"
    );
    // A later call to the gone target fails at once, without a round trip.
    let t0 = Instant::now();
    let e = b
        .cdp
        .call_with_timeout(
            Some(&session),
            "Page.bringToFront",
            json!({}),
            Duration::from_millis(HANG),
        )
        .await
        .expect_err("gone");
    assert_eq!(e.code(), "web.cdp.target_closed", "{e}");
    assert!(t0.elapsed() < Duration::from_millis(HANG / 2));
    b.end().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_out_call_names_the_method_and_the_target() {
    let b = browser().await;
    let (_target, session) = b.page().await;
    let e = b
        .cdp
        .call_with_timeout(
            Some(&session),
            "Runtime.evaluate",
            json!({ "expression": "new Promise(() => {})", "awaitPromise": true }),
            Duration::from_millis(200),
        )
        .await
        .expect_err("never answers");
    assert_eq!(e.code(), "web.cdp.timeout");
    assert_eq!(
        e.to_string(),
        "no answer to Runtime.evaluate from the page target within 200 ms"
    );
    b.end().await;
}
