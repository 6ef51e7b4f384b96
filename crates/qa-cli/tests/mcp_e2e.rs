//! `ui-qa mcp` driven by a real MCP client (rmcp's, over the server's
//! stdin/stdout): a browser session on the loopback fixture app in real
//! Chromium, a terminal program in a real PTY and a desktop app under a
//! virtual display — start → observe → act by reference → a stale
//! reference refused with its next actions → finish with a result and
//! evidence; the server's limits (origins, programs, `--max-sessions`,
//! the workspace) refused with their codes; the exported flow replayed by
//! `ui-qa run`; and the client's end of input ending every session.
#![cfg(unix)]

mod common;

use common::{alive, bin, pids_with_argv, root, unique_sleep, wait_until, App, KillSleepers};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

type Client = RunningService<RoleClient, ()>;

/// A running `ui-qa mcp` and the client connected to it.
struct Server {
    client: Client,
    child: tokio::process::Child,
}

impl Server {
    /// Starts `ui-qa mcp FLAGS --workspace WS` under umask 022 (a common
    /// one, under which a file created without care is world-readable).
    async fn start(ws: &Path, flags: &[&str]) -> Server {
        Server::start_with_env(ws, flags, &[]).await
    }

    /// [`Server::start`] with more environment variables.
    async fn start_with_env(ws: &Path, flags: &[&str], env: &[(&str, &str)]) -> Server {
        let mut child = tokio::process::Command::new("/bin/sh")
            .args(["-c", "umask 022; exec \"$0\" \"$@\"", bin()])
            .arg("mcp")
            .args(flags)
            .arg("--workspace")
            .arg(ws)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let io = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
        let client = ().serve(io).await.expect("initialize");
        Server { client, child }
    }

    /// Calls `tool` and returns whether it was an error, its structured
    /// content and the whole result.
    async fn call(&self, tool: &'static str, args: Value) -> (bool, Value, CallToolResult) {
        let r = self
            .client
            .call_tool(
                CallToolRequestParams::new(tool)
                    .with_arguments(args.as_object().cloned().unwrap_or_default()),
            )
            .await
            .unwrap_or_else(|e| panic!("{tool}: {e}"));
        let v = r.structured_content.clone().unwrap_or(Value::Null);
        (r.is_error == Some(true), v, r)
    }

    /// Calls `tool` and requires it to succeed.
    async fn ok(&self, tool: &'static str, args: Value) -> Value {
        let (err, v, _) = self.call(tool, args).await;
        assert!(!err, "{tool} failed: {v:#}");
        v
    }

    /// Closes the client's side (end of input) and waits for the server.
    async fn close(self) -> std::process::ExitStatus {
        let Server { client, mut child } = self;
        drop(client.cancel().await);
        tokio::time::timeout(Duration::from_secs(90), child.wait())
            .await
            .expect("the server exits after its client goes away")
            .unwrap()
    }
}

/// The reference of the element called `name` with `role`.
fn reference(observation: &Value, role: &str, name: &str) -> String {
    observation["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["role"] == role && e["name"] == name && e.get("ref").is_some())
        .unwrap_or_else(|| panic!("no {role} {name:?} in {observation:#}"))["ref"]
        .as_str()
        .unwrap()
        .to_string()
}

fn code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("")
}

fn is_png(r: &CallToolResult) -> bool {
    use base64::Engine as _;
    r.content.iter().any(|c| match c.as_image() {
        Some(i) => {
            i.mime_type == "image/png"
                && base64::engine::general_purpose::STANDARD
                    .decode(&i.data)
                    .is_ok_and(|b| b.starts_with(b"\x89PNG"))
        }
        None => false,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_session_by_reference_with_its_limits() {
    let dir = tempfile::tempdir().unwrap();
    let app = App::start(
        dir.path(),
        json!({ "username": "staff", "password": "session-pw-1234" }),
    );
    let ws = dir.path().join("ws");
    let s = Server::start(&ws, &["--allow-origin", &app.a, "--max-sessions", "2"]).await;

    let info = s.client.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("ui-qa")
    );
    let tools: Vec<String> = s
        .client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    for t in [
        "start", "observe", "act", "finish", "abort", "run", "guide", "schema",
    ] {
        assert!(tools.iter().any(|x| x == t), "{t} missing from {tools:?}");
    }

    // A disallowed origin is refused before anything launches.
    let (err, v, _) = s
        .call("start", json!({ "url": format!("{}/", app.b) }))
        .await;
    assert!(err);
    assert_eq!(code(&v), "mcp.not_allowed", "{v:#}");
    assert!(v["error"]["message"].as_str().unwrap().contains(&app.b));
    assert!(!ws.join("runs").exists() || common::walk(&ws.join("runs")).is_empty());

    let started = s
        .ok("start", json!({ "url": format!("{}/login", app.a) }))
        .await;
    let id = started["session"].as_str().unwrap().to_string();
    assert_eq!(started["kind"], "browser");

    let o1 = s.ok("observe", json!({ "session": id })).await["observation"].clone();
    assert_eq!(o1["id"], "o1");
    let user = reference(&o1, "textbox", "Username");
    let pass_o1 = reference(&o1, "textbox", "Password");

    let v = s
        .ok(
            "act",
            json!({ "session": id, "ref": user, "step": { "action": "fill", "value": "staff" } }),
        )
        .await;
    assert_eq!(v["status"], "passed");
    assert_eq!(v["invalidated"], true);
    let o2 = v["observation"].clone();
    assert_eq!(o2["id"], "o2", "an action returns a new observation");

    // The password's reference came from o1: refused, with the candidate
    // of o2 the same locator finds.
    let (err, v, _) = s
        .call(
            "act",
            json!({ "session": id, "ref": pass_o1, "step": { "action": "fill", "value": "session-pw-1234" } }),
        )
        .await;
    assert!(err);
    assert_eq!(code(&v), "mcp.stale_ref", "{v:#}");
    assert!(v["error"]["message"].as_str().unwrap().contains("o1"));
    let next = v["nextActions"].as_array().unwrap();
    assert!(next.iter().any(|n| n["tool"] == "observe"), "{v:#}");
    let retry = next
        .iter()
        .find(|n| n["tool"] == "act")
        .unwrap_or_else(|| panic!("no candidate ref in {v:#}"));
    assert_eq!(
        retry["arguments"]["ref"].as_str().unwrap(),
        reference(&o2, "textbox", "Password")
    );
    let v = s.ok("act", retry["arguments"].clone()).await;
    assert_eq!(v["status"], "passed");

    // A navigation to a disallowed origin is refused too.
    let (err, v, _) = s
        .call(
            "act",
            json!({ "session": id, "step": { "action": "goto", "url": format!("{}/", app.b) } }),
        )
        .await;
    assert!(err);
    assert_eq!(code(&v), "mcp.not_allowed");

    let o = s.ok("observe", json!({ "session": id })).await["observation"].clone();
    let sign_in = reference(&o, "button", "Sign in");
    let v = s
        .ok(
            "act",
            json!({ "session": id, "ref": sign_in, "step": { "action": "click" } }),
        )
        .await;
    assert_eq!(v["status"], "passed", "{v:#}");
    let v = s
        .ok(
            "act",
            json!({ "session": id, "locator": { "role": "heading", "name": "Signed in" }, "step": { "action": "assertVisible" } }),
        )
        .await;
    assert_eq!(v["invalidated"], false);

    // A failed step says so, with what to do next.
    let (err, v, _) = s
        .call(
            "act",
            json!({ "session": id, "locator": { "role": "heading", "name": "Nowhere" }, "step": { "action": "assertVisible", "timeoutMs": 500 } }),
        )
        .await;
    assert!(err);
    assert_eq!(code(&v), "mcp.step_failed", "{v:#}");
    assert_eq!(v["outcome"]["status"], "failed");
    assert!(v["nextActions"][0]["arguments"]["screenshot"] == true);

    let (err, v, r) = s
        .call("observe", json!({ "session": id, "screenshot": true }))
        .await;
    assert!(!err, "{v:#}");
    assert!(is_png(&r), "a screenshot is image content");

    // An unknown session names the open ones.
    let (err, v, _) = s.call("observe", json!({ "session": "s99" })).await;
    assert!(err);
    assert_eq!(code(&v), "mcp.unknown_session");

    let done = s
        .ok("finish", json!({ "session": id, "export": true }))
        .await;
    assert_eq!(
        done["status"], "FAILED",
        "the failed assertion fails the run"
    );
    let result: Value =
        serde_json::from_slice(&std::fs::read(done["result"].as_str().unwrap()).unwrap()).unwrap();
    assert_eq!(result["status"], "FAILED");
    assert!(
        !result["artifacts"]["screenshots"]
            .as_array()
            .unwrap()
            .is_empty(),
        "evidence: {:#}",
        result["artifacts"]
    );
    assert!(Path::new(done["report"].as_str().unwrap()).exists());
    assert_eq!(result["cleanup"]["status"], "clean");

    // The exported flow holds the passed steps and replays; it is private
    // under the server's umask 022.
    let exported = done["exportedFlow"].as_str().unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(exported).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{exported}: {mode:o}");
    }
    let text = std::fs::read_to_string(exported).unwrap();
    assert!(!text.contains("Nowhere"), "only passed steps: {text}");
    let (code_, v) = common::run_json(
        Path::new(exported),
        &dir.path().join("ws2"),
        &["--video", "off"],
        |_| {},
    );
    assert_eq!((code_, v["status"].as_str()), (0, Some("PASSED")), "{v:#}");

    // `run`: a flow file in the workspace runs; a path outside is refused.
    std::fs::copy(exported, ws.join("replay.jsonc")).unwrap();
    let v = s.ok("run", json!({ "flow": "replay.jsonc" })).await;
    assert_eq!(v["status"], "PASSED", "{v:#}");
    // A flow that checks nothing is refused before anything launches,
    // unless the caller says it wants it anyway.
    std::fs::write(
        ws.join("unchecked.jsonc"),
        format!(
            r#"{{"target":{{"url":"{}/"}},"steps":[{{"action":"reload"}}]}}"#,
            app.a
        ),
    )
    .unwrap();
    let (err, v, _) = s.call("run", json!({ "flow": "unchecked.jsonc" })).await;
    assert!(err, "{v:#}");
    assert_eq!(code(&v), "mcp.nothing_checked", "{v:#}");
    assert!(v.to_string().contains("allowUnchecked"), "{v:#}");
    let v = s
        .ok(
            "run",
            json!({ "flow": "unchecked.jsonc", "allowUnchecked": true }),
        )
        .await;
    assert_eq!(v["status"], "PASSED", "{v:#}");
    assert!(
        v["nothingChecked"]
            .as_str()
            .is_some_and(|m| m.starts_with("nothing was checked")),
        "{v:#}"
    );
    let (err, v, _) = s.call("run", json!({ "flow": "../replay.jsonc" })).await;
    assert!(err);
    assert_eq!(code(&v), "mcp.not_allowed");
    std::fs::write(
        ws.join("elsewhere.jsonc"),
        format!(
            r#"{{"target":{{"url":"{}/"}},"steps":[{{"action":"reload"}}]}}"#,
            app.b
        ),
    )
    .unwrap();
    let (err, v, _) = s.call("run", json!({ "flow": "elsewhere.jsonc" })).await;
    assert!(err);
    assert_eq!(code(&v), "mcp.not_allowed", "{v:#}");

    // guide and schema.
    // Each is the document itself: the browser guide's text, the committed
    // flow schema, not just any text or any JSON.
    let (err, _, r) = s.call("guide", json!({ "backend": "browser" })).await;
    assert!(!err);
    let guide = std::fs::read_to_string(common::root().join("guides/browser.md")).unwrap();
    let text = &r.content[0].as_text().expect("the guide is text").text;
    let first = guide.lines().next().unwrap();
    assert!(text.contains(first), "not the browser guide: {text:.200}");
    assert!(text.contains("fill"), "{text:.200}");
    let (err, _, r) = s.call("schema", json!({ "name": "flow" })).await;
    assert!(!err);
    let schema: Value = serde_json::from_str(&r.content[0].as_text().unwrap().text).unwrap();
    let committed: Value = serde_json::from_str(
        &std::fs::read_to_string(common::root().join("schemas/flow.schema.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        schema, committed,
        "the schema tool answered another document"
    );

    assert!(s.close().await.success());
}

/// `run` reaches only the origins of `--allow-origin`, judged after every
/// URL of the flow is resolved: a protocol-relative start URL joined to the
/// served directory's origin, and an auth profile's origins, are refused
/// before anything launches; the other origin receives no request. A FIFO
/// as the flow file is refused without waiting on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_reaches_only_the_allowed_origins_once_resolved() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let app = App::start(
        dir.path(),
        json!({ "username": "staff", "password": "origin-pw-1234" }),
    );
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join("site")).unwrap();
    std::fs::set_permissions(&ws, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::write(ws.join("site/index.html"), "<h1>served</h1>").unwrap();
    let b_authority = app.b.trim_start_matches("http:");
    std::fs::write(
        ws.join("relative.jsonc"),
        format!(
            r#"{{"target":{{"serve":"site","url":"{b_authority}/login"}},"steps":[{{"action":"reload"}},{{"action":"assertURL","includes":"/login"}}]}}"#
        ),
    )
    .unwrap();
    let auth = ws.join("auth.jsonc");
    std::fs::write(
        &auth,
        json!({ "profiles": { "both": {
            "type": "cookie", "description": "a cookie for A and B",
            "allowedOrigins": [app.a, app.b],
            "cookies": [ { "name": "sid", "value": "cookie-value-7781" } ] } } })
        .to_string(),
    )
    .unwrap();
    std::fs::set_permissions(&auth, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::write(
        ws.join("profile.jsonc"),
        format!(
            r#"{{"target":{{"url":"{}/","profile":"both"}},"steps":[{{"action":"reload"}},{{"action":"assertURL","includes":"/"}}]}}"#,
            app.a
        ),
    )
    .unwrap();

    let s = Server::start(&ws, &["--allow-origin", &app.a]).await;
    for flow in ["relative.jsonc", "profile.jsonc"] {
        let (_, v, _) = s.call("run", json!({ "flow": flow })).await;
        assert_ne!(v["status"], "PASSED", "{flow}: {v:#}");
        assert_eq!(v["reasonCode"], "web.origin.not_allowed", "{flow}: {v:#}");
        let reason = v["reason"].as_str().unwrap();
        assert!(reason.contains(&app.b), "{flow}: {reason}");
    }
    assert!(
        app.requests().is_empty(),
        "nothing was requested: {:?}",
        app.requests()
    );
    // A FIFO as the flow file is refused at once (nothing waits on it).
    let made = std::process::Command::new("mkfifo")
        .arg(ws.join("fifo.jsonc"))
        .status()
        .unwrap();
    assert!(made.success());
    let (err, v, _) = s.call("run", json!({ "flow": "fifo.jsonc" })).await;
    assert!(err, "{v:#}");
    assert!(
        v.to_string().contains("not a regular file (a FIFO)"),
        "{v:#}"
    );
    assert!(s.close().await.success());
}

/// Pass or fail tells an agent nothing of a secret: over MCP, matchers see
/// the page's text with secret values redacted. A pattern that guesses at
/// the secret fails and says why; one about the rest of the text passes.
/// (`ui-qa run` keeps matching the raw text: a flow's author may check that
/// a token is shown.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matchers_over_mcp_see_secrets_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join("site")).unwrap();
    std::fs::write(
        ws.join("site/index.html"),
        r#"<!doctype html><p data-testid="key">Your API key: sk-live-7d3f9a</p>"#,
    )
    .unwrap();
    let flow = |name: &str, matcher: &str| {
        std::fs::write(
            ws.join(name),
            format!(
                r#"{{"target":{{"serve":"site","url":"/index.html"}},"steps":[{{"action":"assertText","locator":{{"testId":"key"}},{matcher},"timeoutMs":1000}}]}}"#
            ),
        )
        .unwrap();
    };
    flow("guess.jsonc", r#""regex":"^Your API key: sk-live-7""#);
    flow("prose.jsonc", r#""includes":"Your API key:""#);
    let s = Server::start_with_env(&ws, &[], &[("UI_QA_SECRET_MCP_KEY", "sk-live-7d3f9a")]).await;
    let v = s.ok("run", json!({ "flow": "prose.jsonc" })).await;
    assert_eq!(v["status"], "PASSED", "{v:#}");
    let (_, v, _) = s.call("run", json!({ "flow": "guess.jsonc" })).await;
    assert_eq!(v["status"], "FAILED", "{v:#}");
    let reason = v["steps"][0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("holds only where a secret value is shown"),
        "{reason}"
    );
    assert!(s.close().await.success());
    // The same flow through `ui-qa run`: the raw text.
    let (code, r) = common::run_json(
        &ws.join("guess.jsonc"),
        &dir.path().join("ws2"),
        &["--video", "off"],
        |c| {
            c.env("UI_QA_SECRET_MCP_KEY", "sk-live-7d3f9a");
        },
    );
    assert_eq!((code, r["status"].as_str()), (0, Some("PASSED")), "{r:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_session_and_max_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let marker = unique_sleep(7311);
    let _sweep = KillSleepers(vec![marker.clone()]);
    let s = Server::start(&ws, &["--allow-command", "/bin/sh", "--max-sessions", "1"]).await;
    let script = format!("printf 'ready> '; read x; echo got:$x; exec sleep {marker}");
    let started = s
        .ok("start", json!({ "command": ["/bin/sh", "-c", script] }))
        .await;
    let id = started["session"].as_str().unwrap().to_string();
    assert_eq!(started["kind"], "terminal");

    // One session is the limit: a second is refused, naming the open one.
    let (err, v, _) = s
        .call("start", json!({ "command": ["/bin/sh", "-c", "true"] }))
        .await;
    assert!(err);
    assert_eq!(code(&v), "mcp.max_sessions", "{v:#}");
    assert_eq!(v["nextActions"][0]["arguments"]["session"], id.as_str());
    // A program the server does not allow is refused.
    let (err, v, _) = s
        .call("start", json!({ "command": ["/bin/bash", "-c", "true"] }))
        .await;
    assert!(err);
    assert_eq!(code(&v), "mcp.not_allowed");

    for step in [
        json!({ "action": "waitForText", "text": "ready>" }),
        json!({ "action": "sendText", "text": "abc" }),
        json!({ "action": "sendKeys", "keys": ["Enter"] }),
        json!({ "action": "waitForText", "text": "got:abc" }),
    ] {
        let v = s
            .ok(
                "act",
                json!({ "session": id, "step": step, "observe": false }),
            )
            .await;
        assert_eq!(v["status"], "passed", "{v:#}");
    }
    let (err, v, r) = s
        .call("observe", json!({ "session": id, "screenshot": true }))
        .await;
    assert!(!err, "{v:#}");
    let lines = v["observation"]["screen"]["lines"].as_array().unwrap();
    assert!(
        lines
            .iter()
            .any(|l| l.as_str().unwrap().contains("got:abc")),
        "{v:#}"
    );
    assert!(is_png(&r), "the terminal's picture is image content");
    assert!(
        wait_until(Duration::from_secs(15), || pids_with_argv(&[
            "sleep", &marker
        ])
        .len()
            == 1),
        "the program runs (exec sleep)"
    );

    let done = s.ok("finish", json!({ "session": id })).await;
    assert_eq!(done["status"], "PASSED", "{done:#}");
    assert_eq!(done["cleanup"], "clean");
    assert!(
        wait_until(Duration::from_secs(15), || pids_with_argv(&[
            "sleep", &marker
        ])
        .is_empty()),
        "the program was ended"
    );
    // The place is free again.
    let v = s
        .ok(
            "start",
            json!({ "command": ["/bin/sh", "-c", "echo hi; exec cat"] }),
        )
        .await;
    s.ok("abort", json!({ "session": v["session"] })).await;
    assert!(s.close().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_desktop_session_under_a_virtual_display() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let app = root().join("tests/fixtures/desktop/fixture_app.py");
    let app = app.to_str().unwrap();
    let s = Server::start(
        &ws,
        &["--allow-app", "/usr/bin/python3", "--virtual-display"],
    )
    .await;
    let started = s
        .ok("start", json!({ "app": ["/usr/bin/python3", app] }))
        .await;
    let id = started["session"].as_str().unwrap().to_string();
    assert_eq!(started["kind"], "desktop");
    s.ok(
        "act",
        json!({ "session": id, "step": { "action": "waitForWindow", "title": { "equals": "ui-qa fixture" }, "timeoutMs": 30000 } }),
    )
    .await;
    let o = s.ok("observe", json!({ "session": id })).await["observation"].clone();
    let subscribe = reference(&o, "check box", "Subscribe");
    let v = s
        .ok(
            "act",
            json!({ "session": id, "ref": subscribe, "step": { "action": "activate" } }),
        )
        .await;
    assert_eq!(v["status"], "passed", "{v:#}");
    let (err, v, _) = s
        .call(
            "act",
            json!({ "session": id, "ref": subscribe, "step": { "action": "activate" } }),
        )
        .await;
    assert!(err, "the reference of o1 is stale after the action");
    assert_eq!(code(&v), "mcp.stale_ref");
    let o2 = v["current"]
        .as_str()
        .expect("the current observation is named");
    assert_eq!(o2, "o2");
    s.ok(
        "act",
        json!({ "session": id, "locator": { "automationId": "state-label" }, "step": { "action": "assertText", "equals": "on" } }),
    )
    .await;
    let done = s.ok("finish", json!({ "session": id })).await;
    assert_eq!(done["status"], "PASSED", "{done:#}");
    assert_eq!(done["cleanup"], "clean");
    assert!(s.close().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clients_end_of_input_ends_every_session() {
    let dir = tempfile::tempdir().unwrap();
    let app = App::start(
        dir.path(),
        json!({ "username": "staff", "password": "session-pw-1234" }),
    );
    let ws = dir.path().join("ws");
    let marker = unique_sleep(7312);
    let _sweep = KillSleepers(vec![marker.clone()]);
    let s = Server::start(
        &ws,
        &["--allow-origin", &app.a, "--allow-command", "/bin/sh"],
    )
    .await;
    let web = s
        .ok("start", json!({ "url": format!("{}/login", app.a) }))
        .await;
    let tui = s
        .ok(
            "start",
            json!({ "command": ["/bin/sh", "-c", format!("echo up; exec sleep {marker}")] }),
        )
        .await;
    s.ok(
        "act",
        json!({ "session": tui["session"], "step": { "action": "waitForText", "text": "up" } }),
    )
    .await;
    // A step in progress when the client goes away: it waits for text
    // that never comes, with a deadline far beyond the test's bound.
    let peer = s.client.peer().clone();
    let tui_id = tui["session"].clone();
    let pending = tokio::spawn(async move {
        peer.call_tool(
            CallToolRequestParams::new("act").with_arguments(
                json!({ "session": tui_id, "step": { "action": "waitForText", "text": "never shown", "timeoutMs": 600000 } })
                    .as_object()
                    .cloned()
                    .unwrap(),
            ),
        )
        .await
    });
    let journal = Path::new(tui["runDir"].as_str().unwrap()).join("progress.jsonl");
    assert!(
        wait_until(Duration::from_secs(60), || std::fs::read_to_string(
            &journal
        )
        .is_ok_and(
            |j| j.contains(r#""event":"stageStart","stage":"step 2 waitForText""#)
        )),
        "the second step started"
    );
    let server_pid = s.child.id().unwrap();
    let started = common::descendants(server_pid);
    assert!(
        started.len() >= 3,
        "a browser and a program run: {started:?}"
    );
    assert!(
        wait_until(Duration::from_secs(15), || pids_with_argv(&[
            "sleep", &marker
        ])
        .len()
            == 1),
        "the program runs (exec sleep)"
    );

    let status = s.close().await;
    assert!(status.success(), "{status:?}");
    assert!(
        pending.await.unwrap().is_err(),
        "the pending call got no result"
    );
    let left: Vec<u32> = started
        .iter()
        .copied()
        .filter(|p| alive(u64::from(*p)))
        .collect();
    assert!(
        wait_until(Duration::from_secs(15), || started
            .iter()
            .all(|p| !alive(u64::from(*p)))),
        "still running after the client went away: {left:?}"
    );
    assert!(pids_with_argv(&["sleep", &marker]).is_empty());
    // Both sessions wrote their result, as cancelled.
    for started in [&web, &tui] {
        let dir = Path::new(started["runDir"].as_str().unwrap());
        let r: Value =
            serde_json::from_slice(&std::fs::read(dir.join("result.json")).unwrap()).unwrap();
        assert_eq!(r["cancelled"], true, "{r:#}");
        assert_eq!(r["cleanup"]["status"], "clean", "{:#}", r["cleanup"]);
    }
}

/// Issue 44: a secret split across elements (`Your key: <b>hunter2-TOP</b>
/// SECRET-9876`), whose pieces an observation joins with a space, and one
/// straddling the 200-byte cut of an element's text, leave no piece of
/// themselves in `observe` (structured content and text content).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn observe_redacts_a_split_secret_and_one_cut_by_the_clip() {
    const SPLIT: &str = "hunter2-TOPSECRET-9876";
    const CLIPPED: &str = "Zq8-hunter2-TOPSECRET-9876-abcdef";
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    std::fs::create_dir(&site).unwrap();
    let filler = &"Filler words. ".repeat(20)[..190];
    std::fs::write(
        site.join("index.html"),
        format!(
            r#"<!doctype html><title>{filler}{CLIPPED}</title><main><h1>Account</h1>
<p>Your key: <b>hunter2-TOP</b>SECRET-9876</p>
<ul><li><input type="checkbox"> <span>hunter2-TOP</span><span>SECRET-9876</span></li></ul>
<p>{filler}{CLIPPED} more</p><button>{filler}{CLIPPED} more</button></main>"#
        ),
    )
    .unwrap();
    let http = common::serve_dir(&site);
    let base = http.base.clone();
    let ws = dir.path().join("ws");
    let s = Server::start_with_env(
        &ws,
        &["--allow-origin", &base],
        &[
            ("UI_QA_SECRET_SPLIT", SPLIT),
            ("UI_QA_SECRET_CLIPPED", CLIPPED),
        ],
    )
    .await;
    let started = s
        .ok("start", json!({ "url": format!("{base}/index.html") }))
        .await;
    let id = started["session"].as_str().unwrap().to_string();
    let (err, v, r) = s.call("observe", json!({ "session": id })).await;
    assert!(!err, "{v:#}");
    let mut all = v.to_string();
    for c in &r.content {
        if let Some(t) = c.as_text() {
            all.push_str(&t.text);
        }
    }
    for secret in [SPLIT, CLIPPED] {
        for i in 0..=secret.len() - 6 {
            let piece = &secret[i..i + 6];
            assert!(
                !all.contains(piece),
                "observe shows {piece:?} of {secret:?}: {v:#}"
            );
        }
    }
    assert!(
        all.contains("[REDACTED]") && all.contains("Filler words."),
        "{v:#}"
    );
    s.ok("abort", json!({ "session": id })).await;
    assert!(s.close().await.success());
}

/// An agent attaches to a browser ui-qa did not start only where the
/// server's `--allow-connect` names its endpoint: refused without it (the
/// browser is never contacted), and with it the session drives a page in a
/// context of its own and leaves the browser's tabs as they were.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attaching_to_a_running_browser_needs_allow_connect() {
    let user = common::browsers::UserChromium::start();
    let site = common::serve_dir(&root().join("tests/fixtures/web"));
    let before = user.tabs();
    let url = format!("{}/form.html", site.base);
    let ws = tempfile::tempdir().unwrap();
    let s = Server::start(ws.path(), &["--allow-origin", &site.base]).await;
    let (err, v, _) = s
        .call("start", json!({ "url": url, "connect": user.endpoint() }))
        .await;
    assert!(err, "{v:#}");
    assert_eq!(code(&v), "mcp.not_allowed", "{v:#}");
    assert!(v.to_string().contains("--allow-connect"), "{v:#}");
    s.close().await;
    let s = Server::start(
        ws.path(),
        &[
            "--allow-origin",
            &site.base,
            "--allow-connect",
            &user.endpoint(),
        ],
    )
    .await;
    let started = s
        .ok("start", json!({ "url": url, "connect": user.endpoint() }))
        .await;
    let id = started["session"].as_str().unwrap().to_string();
    let seen = s.ok("observe", json!({ "session": id })).await["observation"].clone();
    reference(&seen, "button", "Send");
    let done = s.ok("finish", json!({ "session": id })).await;
    assert_eq!(done["status"], "PASSED", "{done:#}");
    s.close().await;
    assert!(alive(user.child.id() as u64));
    assert_eq!(
        user.tabs(),
        before,
        "the session left the browser's tabs changed"
    );
}
