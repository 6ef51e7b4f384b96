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

/// The paths of the result's log artifacts.
fn log_paths(r: &Value) -> Vec<&str> {
    r["artifacts"]["logs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["path"].as_str().unwrap())
        .collect()
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
    let logs = log_paths(&r);
    assert!(
        logs.iter().any(|p| p.ends_with("network.jsonl")),
        "{logs:?}"
    );
    // The result and report.html say what each passing step acted on,
    // with what value, and where the step is in the flow file.
    assert_eq!(r["steps"][0]["locator"], "label=\"Name\"", "{r:#}");
    assert_eq!(r["steps"][0]["value"], "\"Ada\"", "{r:#}");
    assert_eq!(r["steps"][0]["line"], 9, "{r:#}");
    let report =
        std::fs::read_to_string(Path::new(r["evidenceDir"].as_str().unwrap()).join("report.html"))
            .unwrap();
    let row = |i: usize| {
        let start = report
            .find(&format!("id=\"step-{i}\""))
            .unwrap_or_else(|| panic!("no row for step {i}"));
        let end = start + report[start..].find("</tr>").unwrap();
        report[start..end].to_string()
    };
    for (i, locator, value) in [
        (1, "label=&quot;Name&quot;", Some("&quot;Ada&quot;")),
        (2, "role=checkbox name=&quot;Subscribe&quot;", None),
        (3, "label=&quot;Color&quot;", Some("&quot;Green&quot;")),
        (4, "role=button name=&quot;Send&quot;", None),
        (
            5,
            "testId=&quot;result&quot;",
            Some("&quot;Hello Ada (Green, subscribed)&quot;"),
        ),
    ] {
        let row = row(i);
        assert!(
            row.contains(&format!("<span class=\"locator\">{locator}</span>")),
            "step {i}: {row}"
        );
        if let Some(v) = value {
            assert!(
                row.contains(&format!("<span class=\"value\">{v}</span>")),
                "step {i}: {row}"
            );
        }
        assert!(
            row.contains(&format!("flow.jsonc:{}", 8 + i)),
            "step {i}: {row}"
        );
    }
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
    // The failure lists what the locator matched, each with a locator.
    let f = &r["steps"][0]["failure"];
    assert_eq!(f["received"], "2 elements match", "{f:#}");
    let c = f["candidates"].as_array().unwrap();
    assert_eq!(c.len(), 2, "{f:#}");
    assert!(
        c.iter()
            .all(|x| x["role"] == "button" && x["name"] == "Save"),
        "{f:#}"
    );
    // Only their place tells them apart: each comes with the locator and
    // its nth (never one that matches both again).
    let locators: Vec<Value> = c
        .iter()
        .map(|x| serde_json::from_str(x["locator"].as_str().unwrap()).unwrap())
        .collect();
    assert_eq!(
        locators,
        [0, 1].map(|n| serde_json::json!({ "role": "button", "name": "Save", "nth": n })),
        "{f:#}"
    );
    assert_browser_gone(&r);
}

/// The candidates' locators as flow JSON, and a flow that checks each finds
/// one element: `assertCount` 1 for each, on `url` of the web fixtures.
fn candidate_locators(failure: &Value, url: &str) -> (Vec<Value>, String) {
    let locators: Vec<Value> = failure["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            let l = x["locator"]
                .as_str()
                .unwrap_or_else(|| panic!("a candidate without a locator: {failure:#}"));
            serde_json::from_str(l).unwrap()
        })
        .collect();
    let steps: Vec<Value> = locators
        .iter()
        .map(|l| serde_json::json!({ "action": "assertCount", "locator": l, "count": 1 }))
        .collect();
    let flow = serde_json::json!({ "target": { "serve": "web", "url": url }, "steps": steps });
    (locators, flow.to_string())
}

/// Three copy buttons drawn zero wide (Swagger UI's, until hover), with one
/// name: the ambiguity lists each with a locator that finds it alone.
#[test]
fn an_ambiguity_hands_over_a_locator_for_each_match() {
    let (code, r) = run_fixture_flow(
        "copy",
        r#"{"target":{"serve":"web","url":"/swagger.html"},"steps":[
            {"action":"click","locator":{"role":"button","name":"Copy path to clipboard"}}]}"#,
    );
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(r["reasonCode"], "web.locator.ambiguous", "{r:#}");
    let f = &r["steps"][0]["failure"];
    let c = f["candidates"].as_array().unwrap();
    assert_eq!(c.len(), 3, "{f:#}");
    for x in c {
        assert_eq!(x["name"], "Copy path to clipboard", "{f:#}");
        assert!(
            x["detail"].as_str().unwrap().contains("not visible"),
            "{f:#}"
        );
    }
    let (locators, check) = candidate_locators(f, "/swagger.html");
    assert_eq!(
        locators,
        [0, 1, 2].map(|n| serde_json::json!({
            "role": "button", "name": "Copy path to clipboard", "nth": n
        })),
        "{f:#}"
    );
    let (code, r) = run_fixture_flow("copy-locators", &check);
    assert_eq!(code, 0, "{r:#}");
    assert_browser_gone(&r);
}

/// A `fill` on a label the page does not have (TodoMVC's text box is named
/// only by its placeholder): the closest elements start with the text box,
/// though nothing about it is close to the label, and its locator fills
/// it. A `click` on missing text lists what can be clicked first.
#[test]
fn a_missing_element_offers_what_can_take_the_action_first() {
    let (code, r) = run_fixture_flow(
        "new-todo",
        r#"{"target":{"serve":"web","url":"/new-todo.html"},"steps":[
            {"action":"fill","locator":{"label":"New todo"},"value":"buy milk","timeoutMs":1500}]}"#,
    );
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(r["reasonCode"], "web.locator.not_found", "{r:#}");
    let f = &r["steps"][0]["failure"];
    let c = f["candidates"].as_array().unwrap();
    assert_eq!(c[0]["role"], "textbox", "{f:#}");
    assert_eq!(c[0]["name"], "What needs to be done?", "{f:#}");
    // The heading, footer and paragraphs that share a word come after it.
    assert!(c.len() > 1, "{f:#}");
    assert!(c[1..].iter().all(|x| x["role"] != "textbox"), "{f:#}");
    let (locators, check) = candidate_locators(f, "/new-todo.html");
    let (code, r) = run_fixture_flow("new-todo-locators", &check);
    assert_eq!(code, 0, "{r:#}");
    let fill = serde_json::json!({ "target": { "serve": "web", "url": "/new-todo.html" }, "steps": [
        { "action": "fill", "locator": locators[0], "value": "buy milk" },
        { "action": "assertValue", "locator": { "placeholder": "What needs to be done?" }, "equals": "buy milk" }
    ] });
    let (code, r) = run_fixture_flow("new-todo-fill", &fill.to_string());
    assert_eq!(code, 0, "{r:#}");

    let (code, r) = run_fixture_flow(
        "add-todo",
        r#"{"target":{"serve":"web","url":"/new-todo.html"},"steps":[
            {"action":"click","locator":{"text":"Add a todo"},"timeoutMs":1500}]}"#,
    );
    assert_eq!(code, 1, "{r:#}");
    let f = &r["steps"][0]["failure"];
    let c = f["candidates"].as_array().unwrap();
    // The link shares a word, as the heading before it does: it comes first.
    assert_eq!(c[0]["role"], "link", "{f:#}");
    assert_eq!(c[0]["name"], "the todo team", "{f:#}");
    assert!(c.iter().any(|x| x["role"] == "heading"), "{f:#}");
    assert_browser_gone(&r);
}

/// A mistyped label: the closest elements start with the form control it
/// meant, each offered with a locator that finds it alone.
#[test]
fn a_mistyped_label_offers_the_control_it_meant_with_a_unique_locator() {
    let (code, r) = run_fixture_flow(
        "typo",
        r#"{"target":{"serve":"web","url":"/form.html"},"steps":[
            {"action":"fill","locator":{"label":"Emial"},"value":"a@example.com","timeoutMs":1500}]}"#,
    );
    assert_eq!(code, 1, "{r:#}");
    let c = r["steps"][0]["failure"]["candidates"].as_array().unwrap();
    assert_eq!(c[0]["role"], "textbox", "{c:#?}");
    assert_eq!(c[0]["name"], "Email", "{c:#?}");
    for x in c {
        if let Some(l) = x["locator"].as_str() {
            let l: Value = serde_json::from_str(l).unwrap();
            assert!(l.as_object().is_some_and(|o| !o.is_empty()), "{x:#}");
            // Never a bare role, which finds every element of that role.
            assert!(
                !(l.as_object().unwrap().len() == 1 && l.get("role").is_some()),
                "{x:#}"
            );
        }
    }
    assert_eq!(
        c[0]["locator"]
            .as_str()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()),
        Some(serde_json::json!({"role": "textbox", "name": "Email"}))
    );
    assert_browser_gone(&r);
}

/// Runs `ui-qa run ARGS… FLOW` and answers (exit code, stdout, stderr).
fn run_text(flow: &Path, ws: &Path, extra: &[&str]) -> (i32, String, String) {
    let o = std::process::Command::new(common::bin())
        .arg("run")
        .args(extra)
        .arg("--workspace")
        .arg(ws)
        .arg(flow)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_failed_check_shows_expected_and_received_and_a_missing_element_the_closest() {
    let ws = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    std::fs::create_dir(&site).unwrap();
    std::fs::copy(
        root().join("examples/site/index.html"),
        site.join("index.html"),
    )
    .unwrap();
    let flow = dir.path().join("order.jsonc");
    std::fs::write(
        &flow,
        format!(
            r#"{{"target":{{"serve":"{}","url":"/index.html"}},"steps":[
                {{"action":"fill","locator":{{"label":"Name"}},"value":"Ada"}},
                {{"action":"click","locator":{{"role":"button","name":"Send"}}}},
                {{"action":"assertText","name":"greeting","locator":{{"testId":"result"}},"equals":"Hello Bob","timeoutMs":1500}}]}}"#,
            "site"
        ),
    )
    .unwrap();
    // --json keeps the progress and the summary on stderr.
    let (code, out, err) = run_text(&flow, ws.path(), &["--json"]);
    assert_eq!(code, 1, "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    let f = &r["steps"][2]["failure"];
    assert_eq!(f["expected"], "text equals \"Hello Bob\"", "{f:#}");
    assert!(
        f["received"].as_str().unwrap().starts_with("\"Hello Ada"),
        "{f:#}"
    );
    assert_eq!(f["locator"], "testId=\"result\"", "{f:#}");
    assert!(err.contains("step 3 assertText \"greeting\""), "{err}");
    assert!(
        err.contains("    expected: text equals \"Hello Bob\""),
        "{err}"
    );
    assert!(err.contains("    received: \"Hello Ada"), "{err}");
    // The accessibility tree is kept beside the failure screenshot.
    let ax = r["artifacts"]["accessibilitySnapshots"].as_array().unwrap();
    assert!(
        ax.iter()
            .any(|a| a["path"].as_str().unwrap().ends_with("failure-step3.json")),
        "{ax:?}"
    );
    // Chromium's own background traffic is one note, not one per host.
    let own = err.matches("Chromium's own background traffic").count();
    assert!(own <= 1, "{err}");
    assert!(!err.contains("note: blocked tunnel"), "{err}");

    // A typo in a name: the closest element is offered.
    std::fs::write(
        &flow,
        format!(
            r#"{{"target":{{"serve":"{}","url":"/index.html"}},"steps":[
                {{"action":"click","locator":{{"role":"button","name":"Sned"}},"timeoutMs":1500}}]}}"#,
            "site"
        ),
    )
    .unwrap();
    let (code, _, err) = run_text(&flow, ws.path(), &["--quiet", "--json"]);
    assert_eq!(code, 1);
    assert!(err.is_empty(), "--quiet prints nothing: {err}");
    let (code, _, err) = run_text(&flow, ws.path(), &[]);
    assert_eq!(code, 1);
    assert!(
        err.contains("    closest:\n      - button \"Send\""),
        "{err}"
    );
}

/// A flow deadline that passes while Chromium starts: the browser is
/// ended while it writes its profile, and its scratch is still removed —
/// no note says otherwise (it did, on about two runs in three).
#[test]
fn a_launch_cut_short_still_removes_its_scratch_without_a_false_note() {
    for _ in 0..3 {
        let (code, r) = run_fixture_flow(
            "cut-short",
            r#"{"timeoutMs":800,"target":{"serve":"web","url":"/form.html"},"steps":[
                {"action":"assertText","locator":{"testId":"result"},"equals":"never"}]}"#,
        );
        assert_eq!(code, 124, "{r:#}");
        let notes: Vec<&str> = r["observations"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|o| o["message"].as_str())
            .collect();
        assert!(
            !notes
                .iter()
                .any(|n| n.contains("scratch files could not be removed")),
            "{notes:#?}"
        );
        let work = Path::new(r["evidenceDir"].as_str().unwrap()).join("work");
        assert!(!work.exists(), "scratch left: {}", work.display());
        // Whatever had started (the deadline may pass before or after the
        // browser starts) is gone.
        assert_clean(&r, &[]);
    }
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

/// A loopback port nothing listens on (bound, then released).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn a_dead_or_missing_server_and_an_error_page_are_named() {
    let ws = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let flow = dir.path().join("server.jsonc");
    let step =
        r#"{"action":"assertText","locator":{"role":"heading"},"includes":"x","timeoutMs":1000}"#;

    // Nothing listening: a launch error that says so.
    let port = free_port();
    std::fs::write(
        &flow,
        format!(r#"{{"target":{{"url":"http://127.0.0.1:{port}/"}},"steps":[{step}]}}"#),
    )
    .unwrap();
    let (code, r) = run(&flow, ws.path());
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(r["reasonCode"], "web.target.unreachable", "{r:#}");
    assert!(
        r["reason"]
            .as_str()
            .unwrap()
            .contains(&format!("nothing is listening at 127.0.0.1:{port}")),
        "{}",
        r["reason"]
    );
    assert_eq!(r["stage"], "launch");

    // A server that answers its readiness probe, then exits 3: the run
    // names the exit and the server's output, and keeps that output.
    let port = free_port();
    let script = format!(
        "import http.server as h, sys\n\
         s = h.HTTPServer(('127.0.0.1', {port}), h.SimpleHTTPRequestHandler)\n\
         s.handle_request()\n\
         print('served one request, bye', flush=True)\n\
         sys.exit(3)\n"
    );
    std::fs::write(dir.path().join("once.py"), script).unwrap();
    std::fs::write(
        &flow,
        format!(
            r#"{{"target":{{"server":{{"command":["python3","once.py"],"readyUrl":"http://127.0.0.1:{port}/"}}}},"steps":[{step}]}}"#
        ),
    )
    .unwrap();
    let (code, r) = run(&flow, ws.path());
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(r["reasonCode"], "web.server.exited", "{r:#}");
    let reason = r["reason"].as_str().unwrap();
    assert!(reason.contains("exit status: 3"), "{reason}");
    assert!(reason.contains("served one request, bye"), "{reason}");
    let logs = log_paths(&r);
    let log = logs
        .iter()
        .find(|p| p.ends_with("server.log"))
        .expect("server.log kept");
    assert!(std::fs::read_to_string(log)
        .unwrap()
        .contains("served one request"));
    assert_browser_gone(&r);

    // A page that answers 404: a note says so beside the failed check.
    let (code, r) = run_fixture_flow(
        "missing",
        &format!(r#"{{"target":{{"serve":"web","url":"/no-such-page.html"}},"steps":[{step}]}}"#),
    );
    assert_eq!(code, 1, "{r:#}");
    assert!(
        r["observations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["message"].as_str().unwrap().contains("answered HTTP 404")),
        "{:#}",
        r["observations"]
    );
}
