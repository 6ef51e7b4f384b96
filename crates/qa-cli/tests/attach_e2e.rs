//! End to end through the `ui-qa` binary against a browser ui-qa did not
//! start (`target.browser.connect`): a real Chromium the test launches with
//! a DevTools port on loopback, as a person debugging by hand would.
#![cfg(unix)]

mod common;

use common::browsers::{leak_site, nothing_reached, FlagSite, TlsFront, UserChromium};
use common::{alive, run_json, write};
use serde_json::{json, Value};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

/// A flow attaches to a running Chromium, drives a page with fill, click,
/// assertText and a screenshot (and a video), passes, and leaves the
/// browser running with exactly the tabs it had — the user's tab
/// included, never closed or navigated.
#[test]
fn a_flow_attaches_to_a_running_chromium_and_leaves_it_as_it_was() {
    let user = UserChromium::start();
    // The site: the form fixture, and a page that tries to reach an origin
    // the flow does not allow (a listener of the test's own).
    let (site, leak, _site_dir) = leak_site();
    // The user's own tab, open before the run.
    user.http("PUT", &format!("/json/new?{}/form.html", site.base));
    let before = user.tabs();
    assert!(before.len() >= 2, "{before:?}");
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let secret = "Ada-Lovelace-9zQ";
    let flow = json!({
        "target": {
            "url": format!("{}/form.html", site.base),
            "browser": { "connect": user.endpoint() }
        },
        "steps": [
            { "action": "fill", "locator": { "label": "Name" }, "value": "${secret.ATTACH_NAME}" },
            { "action": "click", "locator": { "role": "button", "name": "Send" } },
            { "action": "assertText", "locator": { "testId": "result" }, "includes": "Hello" },
            { "action": "screenshot", "name": "sent" },
            { "action": "goto", "url": format!("{}/leak.html", site.base) },
            { "action": "assertText", "locator": { "testId": "leak" }, "includes": "done: stopped" }
        ]
    });
    let f = write(dir.path(), "attach.json", &flow.to_string());
    let (code, r) = run_json(&f, ws.path(), &["--video", "on"], |c| {
        c.env("UI_QA_SECRET_ATTACH_NAME", secret);
    });
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["status"], "PASSED", "{r:#}");
    assert_eq!(
        r["selection"]["presentation"], "attached",
        "{:#}",
        r["selection"]
    );
    let shots = r["artifacts"]["screenshots"].as_array().unwrap();
    assert!(
        shots
            .iter()
            .any(|s| s["path"].as_str().unwrap().contains("sent")),
        "{shots:?}"
    );
    assert_eq!(
        r["artifacts"]["videos"].as_array().unwrap().len(),
        1,
        "{:#}",
        r["artifacts"]
    );
    for a in shots
        .iter()
        .chain(r["artifacts"]["videos"].as_array().unwrap())
    {
        assert!(a["bytes"].as_u64().unwrap() > 0, "{a}");
    }
    // Containment held in the browser ui-qa did not start.
    assert!(
        nothing_reached(&leak),
        "a request reached an origin the flow does not allow"
    );
    assert!(
        r.to_string().contains("127.0.0.2"),
        "no blocked request reported: {r:#}"
    );
    // The secret is in no file of the run, in any encoding.
    let run_dir = Path::new(r["evidenceDir"].as_str().unwrap());
    common::assert_no_file_holds(run_dir, secret);
    // The run ended only what it started (its encoder), never the browser.
    assert_eq!(r["cleanup"]["status"], "clean", "{:#}", r["cleanup"]);
    assert!(
        alive(user.child.id() as u64),
        "the user's browser was ended"
    );
    assert!(user
        .http("GET", "/json/version")
        .contains("webSocketDebuggerUrl"));
    assert_eq!(user.tabs(), before, "the run left the user's tabs changed");
    let ended = r["cleanup"]["ended"].to_string();
    assert!(!ended.contains("chromium"), "{ended}");
}

/// Two flows run side by side against the same browser, in a known order
/// (the second reads storage only after the first wrote its own): neither
/// sees the other's storage or cookies.
#[test]
fn flows_side_by_side_in_one_browser_never_share_storage() {
    let user = UserChromium::start();
    let site = FlagSite::start();
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let flow = |me: &str, q: &str| {
        json!({
            "target": {
                "url": format!("http://127.0.0.1:{}/page?me={me}&{q}", site.port),
                "browser": { "connect": user.endpoint() }
            },
            "steps": [
                { "action": "assertText", "locator": { "testId": "out" },
                  "includes": format!("before=none; after={me}; cookie=who={me}"), "timeoutMs": 90000 }
            ]
        })
        .to_string()
    };
    let a = write(dir.path(), "a.json", &flow("A", "set=a-marked&wait=b-done"));
    let b = write(
        dir.path(),
        "b.json",
        &flow("B", "order=wait-first&wait=a-marked&set=b-done"),
    );
    // Two ui-qa processes at once, as two CI shards or two agents would.
    let (mut ca, ra) = common::start_json(&[], ws.path(), &a, |_| {});
    let (mut cb, rb) = common::start_json(&[], ws.path(), &b, |_| {});
    let (_, _) = (ca.wait().unwrap(), cb.wait().unwrap());
    for out in [ra.join().unwrap(), rb.join().unwrap()] {
        let r: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        assert_eq!(r["status"], "PASSED", "{r:#}");
        assert_eq!(r["cleanup"]["status"], "clean", "{:#}", r["cleanup"]);
    }
    assert!(alive(user.child.id() as u64));
}

/// An endpoint that is not there leaves the run BLOCKED with a handoff
/// that says how to start the browser; nothing else on the machine is
/// contacted.
#[test]
fn an_endpoint_that_does_not_answer_is_blocked_with_a_handoff() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let flow = json!({
        "target": { "url": "http://127.0.0.1:9/", "browser": { "connect": format!("http://127.0.0.1:{port}") } },
        "steps": [ { "action": "assertURL", "includes": "x" } ]
    });
    let f = write(dir.path(), "gone.json", &flow.to_string());
    let (code, r) = run_json(&f, ws.path(), &[], |_| {});
    assert_eq!(r["status"], "BLOCKED", "{r:#}");
    assert_ne!(code, 0);
    assert_eq!(r["reasonCode"], "web.connect.unreachable", "{r:#}");
    let handoff = r["blockedHandoff"].to_string();
    assert!(handoff.contains("--remote-debugging-port"), "{handoff}");
}

/// A DevTools endpoint off this machine without TLS is refused before
/// anything runs (exit 2, the pointer of the field), unless the flow opts in.
#[test]
fn a_plain_endpoint_off_loopback_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let flow = json!({
        "target": { "url": "https://example.com/", "browser": { "connect": "ws://192.0.2.1:9222/devtools/browser/x" } },
        "steps": [ { "action": "assertURL", "includes": "x" } ]
    });
    let f = write(dir.path(), "far.json", &flow.to_string());
    let o = Command::new(common::bin())
        .args(["check", "--json"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("/target/browser/connect"), "{out}");
    assert!(out.contains("allowInsecure"), "{out}");
    let _ = ws;
}

/// `ui-qa inspect URL --connect ENDPOINT` reads the page in a browser ui-qa
/// did not start and leaves that browser's tabs as they were.
#[test]
fn inspect_reads_a_page_in_a_running_browser() {
    let user = UserChromium::start();
    let site = common::serve_dir(&common::root().join("tests/fixtures/web"));
    let before = user.tabs();
    let o = Command::new(common::bin())
        .args(["inspect", "--json", "--connect", &user.endpoint()])
        .arg(format!("{}/form.html", site.base))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v.to_string().contains("\"Send\""), "{v:#}");
    assert!(alive(user.child.id() as u64));
    assert_eq!(user.tabs(), before);
}

/// `"page": "existing"`: the run drives the tab the browser already shows
/// (named by text of its URL) where it is, and leaves it open; a name that
/// matches no page fails with `web.connect.no_page` and lists none of the
/// user's pages.
#[test]
fn an_existing_page_is_driven_where_it_is_and_left_open() {
    let user = UserChromium::start();
    let site = common::serve_dir(&common::root().join("tests/fixtures/web"));
    user.http("PUT", &format!("/json/new?{}/form.html", site.base));
    let before = user.tabs();
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let flow = json!({
        "target": {
            "browser": { "connect": user.endpoint(), "page": "existing", "pageUrl": "/form.html" }
        },
        "steps": [
            { "action": "fill", "locator": { "label": "Name" }, "value": "Grace" },
            { "action": "click", "locator": { "role": "button", "name": "Send" } },
            { "action": "assertText", "locator": { "testId": "result" }, "includes": "Hello Grace" }
        ]
    });
    let f = write(dir.path(), "existing.json", &flow.to_string());
    let (code, r) = run_json(&f, ws.path(), &[], |_| {});
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["status"], "PASSED", "{r:#}");
    assert_eq!(r["cleanup"]["status"], "clean", "{:#}", r["cleanup"]);
    assert!(alive(user.child.id() as u64));
    assert_eq!(
        user.tabs(),
        before,
        "the existing page was closed or another tab changed"
    );

    let missing = json!({
        "target": {
            "browser": { "connect": user.endpoint(), "page": "existing", "pageUrl": "/nowhere.html" }
        },
        "steps": [ { "action": "assertURL", "includes": "x" } ]
    });
    let f = write(dir.path(), "missing.json", &missing.to_string());
    let (_, r) = run_json(&f, ws.path(), &[], |_| {});
    assert_eq!(r["status"], "FAILED", "{r:#}");
    assert_eq!(r["reasonCode"], "web.connect.no_page", "{r:#}");
    assert!(
        !r["reason"].as_str().unwrap().contains("about:blank"),
        "{r:#}"
    );
    assert_eq!(user.tabs(), before);
}

/// The browser ui-qa did not start is stopped (SIGSTOP, every process of
/// it) mid-step: the step still fails at its own bound, the cleanup is
/// bounded and clean, and the result is written; the browser, continued,
/// is still the user's and still running.
#[test]
fn a_stopped_browser_never_holds_the_run() {
    let user = UserChromium::start();
    let site = FlagSite::start();
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let flow = json!({
        "target": {
            "url": format!("http://127.0.0.1:{}/raise?name=clicked", site.port),
            "browser": { "connect": user.endpoint() }
        },
        "steps": [
            { "action": "click", "locator": { "role": "button", "name": "Raise" } },
            { "action": "assertText", "locator": { "testId": "out" }, "includes": "never", "timeoutMs": 8000 }
        ]
    });
    let f = write(dir.path(), "stopped.json", &flow.to_string());
    let (mut child, reader) = common::start_json(&[], ws.path(), &f, |_| {});
    assert!(
        site.wait("clicked", std::time::Duration::from_secs(300)),
        "the flow never clicked"
    );
    let group = -(user.child.id() as i32);
    // SAFETY: kill(2) on the process group this test started.
    #[allow(unsafe_code)]
    unsafe {
        libc::kill(group, libc::SIGSTOP);
    }
    let status = child.wait().unwrap();
    #[allow(unsafe_code)]
    unsafe {
        libc::kill(group, libc::SIGCONT);
    }
    let out = reader.join().unwrap();
    let r: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(status.code(), Some(1), "{r:#}");
    assert_eq!(r["status"], "FAILED", "{r:#}");
    assert_eq!(r["cleanup"]["status"], "clean", "{:#}", r["cleanup"]);
    assert!(alive(user.child.id() as u64));
    assert!(user
        .http("GET", "/json/version")
        .contains("webSocketDebuggerUrl"));
}

/// A browser behind TLS (a front with a certificate of the test's own CA,
/// as a remote service has) is reached over `https://` (its `/json/version`,
/// then `wss://`) and over `wss://` directly when the platform trusts the
/// CA (`SSL_CERT_FILE`); without that trust the run is BLOCKED by the TLS
/// handshake and never falls back to plain text.
#[test]
fn a_browser_behind_tls_is_reached_only_with_a_trusted_certificate() {
    let user = UserChromium::start();
    let front = TlsFront::start(user.port);
    let site = common::serve_dir(&common::root().join("tests/fixtures/web"));
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let version: Value = serde_json::from_str(&user.http("GET", "/json/version")).unwrap();
    let path = url::Url::parse(version["webSocketDebuggerUrl"].as_str().unwrap())
        .unwrap()
        .path()
        .to_string();
    let flow = |connect: String| {
        json!({
            "target": { "url": format!("{}/form.html", site.base), "browser": { "connect": connect } },
            "steps": [
                { "action": "fill", "locator": { "label": "Name" }, "value": "Ada" },
                { "action": "click", "locator": { "role": "button", "name": "Send" } },
                { "action": "assertText", "locator": { "testId": "result" }, "includes": "Hello Ada" }
            ]
        })
        .to_string()
    };
    for (name, connect) in [
        ("https.json", format!("https://localhost:{}", front.port)),
        ("wss.json", format!("wss://localhost:{}{path}", front.port)),
    ] {
        let f = write(dir.path(), name, &flow(connect));
        let (code, r) = run_json(&f, ws.path(), &[], |c| {
            c.env("SSL_CERT_FILE", &front.ca);
        });
        assert_eq!(code, 0, "{name}: {r:#}");
        assert_eq!(r["status"], "PASSED", "{name}: {r:#}");
        assert_eq!(r["cleanup"]["status"], "clean", "{:#}", r["cleanup"]);
        // Without trust in the CA: the handshake fails, nothing else is tried.
        let (_, r) = run_json(&f, ws.path(), &[], |c| {
            c.env("SSL_CERT_FILE", "/nonexistent-ui-qa-ca.pem");
        });
        assert_eq!(r["status"], "BLOCKED", "{name}: {r:#}");
        assert_eq!(r["reasonCode"], "web.connect.unreachable", "{r:#}");
        assert!(r["reason"].as_str().unwrap().contains("TLS"), "{r:#}");
    }
    assert!(alive(user.child.id() as u64));
}
