//! `ui-qa inspect URL` against the loopback fixture app in real Chromium:
//! the printed tree and the JSON observation are snapshots, and every
//! locator it suggests finds exactly one element when a flow uses it.

mod common;

use common::{bin, write, App};
use serde_json::Value;
use std::process::Command;

fn app(dir: &std::path::Path) -> App {
    App::start(
        dir,
        serde_json::json!({ "username": "staff", "password": "inspect-only-pw" }),
    )
}

/// The static web fixtures, served by a server ui-qa did not start.
fn static_pages() -> common::Served {
    common::serve_dir(&common::root().join("tests/fixtures/web"))
}

fn inspect(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(bin())
        .arg("inspect")
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8(o.stdout).unwrap(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Writes `flow` as `dir/name`, runs it (`--json`, no video) in
/// `dir/ws` and returns the result.
fn run_flow(dir: &std::path::Path, name: &str, flow: &Value) -> Value {
    let f = write(dir, name, &flow.to_string());
    let o = Command::new(bin())
        .args(["run", "--json", "--video", "off", "--workspace"])
        .arg(dir.join("ws"))
        .arg(&f)
        .output()
        .unwrap();
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn a_page_is_printed_as_a_tree_with_refs_and_locators() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path());
    let (code, out, err) = inspect(&[&format!("{}/login", app.a)]);
    assert_eq!(code, 0, "{err}");
    // The fixture's port changes from run to run.
    insta::assert_snapshot!("inspect_login", out.replace(&app.a, "[origin]"));
    let (code, out, err) = inspect(&["--json", &format!("{}/cross", app.a)]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    // Every element one acts on has its box.
    for e in v["elements"].as_array().unwrap() {
        if e["ref"].is_string() {
            let b = &e["bounds"];
            assert!(b["width"].as_f64().unwrap() > 0.0, "{e}");
        }
    }
    // Boxes and the URL change from run to run (fonts, ports).
    let mut v = v;
    for e in v["elements"].as_array_mut().unwrap() {
        if let Some(b) = e.get_mut("bounds") {
            *b = Value::from("[bounds]");
        }
    }
    if let Some(u) = v.get_mut("url") {
        *u = Value::from("[url]");
    }
    insta::assert_json_snapshot!("inspect_cross", v);
    // Two buttons with one name: told apart by nth.
    let pages = static_pages();
    let (code, out, err) = inspect(&[&format!("{}/ambiguous.html", pages.base)]);
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!("inspect_ambiguous", out.replace(&pages.base, "[origin]"));
}

#[test]
fn every_suggested_locator_finds_exactly_one_element() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path());
    let pages = static_pages();
    let urls = [
        format!("{}/login", app.a),
        format!("{}/cross", app.a),
        format!("{}/ambiguous.html", pages.base),
        format!("{}/form.html", pages.base),
    ];
    for url in urls {
        let path = &url;
        let (code, out, err) = inspect(&["--json", &url]);
        assert_eq!(code, 0, "{err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        let steps: Vec<Value> = v["elements"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| !e["locator"].is_null())
            .map(|e| serde_json::json!({ "action": "assertCount", "locator": e["locator"], "count": 1 }))
            .collect();
        assert!(steps.len() >= 2, "{out}");
        let flow = serde_json::json!({ "target": { "url": &url }, "steps": steps });
        let r = run_flow(dir.path(), "locators.jsonc", &flow);
        assert_eq!(r["status"], "PASSED", "{path}: {r:#}");
    }
}

/// Swagger UI breaks an operation's path at each slash with `<wbr>`:
/// Chromium's accessible name has a space there, the locator engine's none.
/// `inspect` lists the name locators match — and a locator with it — and so
/// does the accessibility snapshot of a failure; a flow using the name as
/// printed finds that one button.
#[test]
fn a_name_as_printed_is_the_one_locators_match() {
    let dir = tempfile::tempdir().unwrap();
    let pages = static_pages();
    let url = format!("{}/swagger.html", pages.base);
    let (code, out, err) = inspect(&["--json", &url]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let buttons: Vec<&Value> = v["elements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["role"] == "button" && e["ref"].is_string())
        .collect();
    let names: Vec<&str> = buttons.iter().filter_map(|e| e["name"].as_str()).collect();
    let want = "GET /orders/{orderId} Find an order";
    assert!(names.contains(&want), "{want:?} not in {names:?}");
    let get = buttons.iter().find(|e| e["name"] == want).unwrap();
    let locator = &get["locator"];
    assert_eq!(
        locator,
        &serde_json::json!({ "role": "button", "name": want }),
        "{get:#}"
    );
    // Every listed name, written as an exact name, finds its element (the
    // three copy buttons share theirs: nth tells them apart).
    let mut steps: Vec<Value> = buttons
        .iter()
        .map(|e| {
            let mut l = serde_json::json!({ "role": "button", "name": e["name"], "exact": true });
            if let Some(n) = e["locator"]["nth"].as_u64() {
                l["nth"] = n.into();
            }
            serde_json::json!({ "action": "assertCount", "locator": l, "count": 1 })
        })
        .collect();
    steps.push(serde_json::json!({ "action": "click", "locator": locator }));
    steps.push(
        serde_json::json!({ "action": "assertAttribute", "locator": locator,
        "attribute": "aria-expanded", "equals": "true" }),
    );
    let flow = serde_json::json!({ "target": { "url": &url }, "steps": steps });
    let r = run_flow(dir.path(), "names.jsonc", &flow);
    assert_eq!(r["status"], "PASSED", "{r:#}");
    // The accessibility snapshot kept at a failure names it the same way.
    let flow = serde_json::json!({ "target": { "url": &url }, "steps": [
        { "action": "click", "locator": { "role": "button", "name": "No such operation" }, "timeoutMs": 500 }
    ] });
    let r = run_flow(dir.path(), "fails.jsonc", &flow);
    assert_eq!(r["status"], "FAILED", "{r:#}");
    let snap = r["artifacts"]["accessibilitySnapshots"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|a| a["path"].as_str())
        .unwrap_or_else(|| panic!("no accessibility snapshot: {r:#}"));
    let snap: Value = serde_json::from_str(&std::fs::read_to_string(snap).unwrap()).unwrap();
    fn named(n: &Value, out: &mut Vec<(String, String)>) {
        for c in n.as_array().into_iter().flatten() {
            out.push((
                c["role"].as_str().unwrap_or("").into(),
                c["name"].as_str().unwrap_or("").into(),
            ));
            named(&c["children"], out);
        }
    }
    let mut all = Vec::new();
    named(&snap["nodes"], &mut all);
    assert!(
        all.contains(&("button".into(), want.into())),
        "{want:?} not in {all:?}"
    );
    assert!(
        all.contains(&("link".into(), "/orders/{orderId}".into())),
        "{all:?}"
    );
}

/// A list of items whose controls have no names (a to-do list): the
/// observation is a tree with the page's text, its URL and title; each
/// item's checkbox carries its item's text, and its locator checks that
/// item — not the "mark all" checkbox before it.
#[test]
fn a_list_of_unnamed_controls_is_told_apart_by_its_text() {
    let dir = tempfile::tempdir().unwrap();
    let pages = static_pages();
    let url = format!("{}/todos.html", pages.base);
    let (code, out, err) = inspect(&["--json", &url]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["url"], url.as_str(), "{v:#}");
    assert_eq!(v["title"], "Todos fixture", "{v:#}");
    let elements = v["elements"].as_array().unwrap();
    let texts: Vec<&str> = elements
        .iter()
        .filter(|e| e["role"] == "text")
        .filter_map(|e| e["name"].as_str())
        .collect();
    for want in ["buy milk", "walk the dog", "2 items left"] {
        assert!(texts.contains(&want), "{want:?} not in {texts:?}");
    }
    assert!(
        elements.iter().any(|e| e["depth"].as_u64() > Some(0)),
        "a tree, not a flat list: {v:#}"
    );
    let item = elements
        .iter()
        .find(|e| e["role"] == "checkbox" && e["context"] == "walk the dog")
        .unwrap_or_else(|| panic!("no checkbox in \"walk the dog\": {v:#}"));
    assert!(item["ref"].is_string(), "{item}");
    // Its locator checks that item: one item is left, and "mark all" is
    // still unchecked.
    let flow = serde_json::json!({ "target": { "url": &url }, "steps": [
        { "action": "check", "locator": item["locator"] },
        { "action": "assertText", "locator": { "css": ".todo-count" }, "equals": "1 item left" },
        { "action": "assertUnchecked", "locator": { "label": "Mark all as complete" } }
    ] });
    let r = run_flow(dir.path(), "todos.jsonc", &flow);
    assert_eq!(r["status"], "PASSED", "{r:#}");
    // The printed tree shows the text and the item each control is in.
    let (code, out, err) = inspect(&[&url]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("(in \"buy milk\")"), "{out}");
    assert!(out.contains("\"2 items left\""), "{out}");

    // A later state, reached with steps before the snapshot.
    let (code, out, err) = inspect(&[
        &url,
        "--step",
        r#"{"action":"fill","locator":{"placeholder":"What needs to be done?"},"value":"feed the cat"}"#,
        "--step",
        r#"{"action":"press","locator":{"placeholder":"What needs to be done?"},"key":"Enter"}"#,
        "--wait-for",
        "3 items left",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("(in \"feed the cat\")"), "{out}");
    assert!(out.contains("\"3 items left\""), "{out}");
    // A step that fails ends it with exit 1 and says which.
    let (code, _, err) = inspect(&[
        &url,
        "--step",
        r#"{"action":"click","locator":{"role":"button","name":"No such button"},"timeoutMs":500}"#,
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("click did not pass"), "{err}");
    let (code, _, err) = inspect(&[&url, "--step", "[1]"]);
    assert_eq!(code, 2, "{err}");
}

/// A page of about 12,000 elements is read node by node up to a bound:
/// its top is listed in document order, and the listing says it is cut.
#[test]
fn a_big_page_is_listed_from_its_top_and_says_it_is_cut() {
    let pages = static_pages();
    let (code, out, err) = inspect(&["--json", &format!("{}/big-list.html", pages.base)]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["truncated"], true);
    let els = v["elements"].as_array().unwrap();
    assert!(
        !els.is_empty() && els.len() <= qa_core::observe::MAX_ELEMENTS,
        "{}",
        els.len()
    );
    let named: Vec<(&str, &str)> = els
        .iter()
        .map(|e| {
            (
                e["role"].as_str().unwrap(),
                e["name"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(named[0], ("heading", "Big list"), "{named:?}");
    let first = named.iter().position(|n| *n == ("link", "item 0"));
    let second = named.iter().position(|n| *n == ("link", "item 1"));
    assert!(first.is_some() && first < second, "{named:?}");
    let (code, out, _) = inspect(&[&format!("{}/big-list.html", pages.base)]);
    assert_eq!(code, 0);
    assert!(out.contains("(left out;"), "{out}");
}

#[test]
fn an_unreachable_page_fails_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // A port nothing listens on: bind one, then close it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let _ = dir;
    let (code, out, err) = inspect(&[&format!("http://127.0.0.1:{port}/")]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("web.target.unreachable"), "{err}");
    let (code, _, err) = inspect(&["not a url"]);
    assert_eq!(code, 2, "{err}");
}

/// A program that draws late: `--wait-for` waits for its text instead of
/// the first quiet half second.
#[test]
fn a_terminal_program_that_draws_late_is_read_once_its_text_is_there() {
    let (code, out, err) = inspect(&[
        "--wait-for",
        "drawn at last",
        "--",
        "sh",
        "-c",
        "sleep 1; echo drawn at last; exec sleep 30",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("drawn at last"), "{out}");
    let (code, _, err) = inspect(&[
        "--wait-for",
        "never shown",
        "--step",
        r#"{"action":"sendKeys","keys":["Enter"]}"#,
        "--",
        "sh",
        "-c",
        "exec sleep 30",
    ]);
    assert_ne!(code, 0, "{err}");
}

#[test]
fn a_terminal_program_is_printed_as_its_screen_with_secrets_masked() {
    // The program gets no environment from ui-qa's: the token is in the script.
    let script = "printf 'menu: [o]pen [q]uit\\ntoken: %s\\n> ' Tk-inspect-4411; read x";
    let o = Command::new(bin())
        .args(["inspect", "--", "sh", "-c", script])
        .env("UI_QA_SECRET_INSPECT", "Tk-inspect-4411")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let out = String::from_utf8(o.stdout).unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!out.contains("Tk-inspect-4411"), "{out}");
    insta::assert_snapshot!("inspect_terminal", out);
    let o = Command::new(bin())
        .args(["inspect", "--json", "--", "sh", "-c", script])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    // Without the secret registered, the same screen shows it.
    assert_eq!(v["screen"]["lines"][1], "token: Tk-inspect-4411");
    assert_eq!(v["screen"]["cursorRow"], 2);
    assert_eq!(v["screen"]["cursorCol"], 2);
}

/// A GTK 4 application whose buttons register after its window shows:
/// `inspect --app` reads until its tree settles and lists them.
#[test]
fn a_gtk4_calculator_is_listed_with_its_buttons() {
    let (code, out, err) = inspect(&[
        "--app",
        "--virtual-display",
        "--json",
        "--",
        "gnome-calculator",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let buttons: Vec<&str> = v["elements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ref"].is_string() && e["role"] == "push button")
        .filter_map(|e| e["name"].as_str())
        .collect();
    for digit in ["0 0", "1 1", "2 2", "9 9", "+ +", "= ="] {
        assert!(buttons.contains(&digit), "{digit:?} not in {buttons:?}");
    }
    // Buttons first: every button's reference (push, toggle or menu
    // button) comes before any other control's, and the text lists them in
    // that order.
    let number = |e: &Value| e["ref"].as_str()?.strip_prefix("@e")?.parse::<u64>().ok();
    let is_button = |e: &Value| {
        matches!(
            e["role"].as_str(),
            Some("push button" | "toggle button" | "push button menu")
        )
    };
    let elements = v["elements"].as_array().unwrap();
    let last_button = elements
        .iter()
        .filter(|e| is_button(e))
        .filter_map(number)
        .max()
        .unwrap();
    let others: Vec<&Value> = elements
        .iter()
        .filter(|e| e["ref"].is_string() && !is_button(e))
        .collect();
    assert!(
        others.iter().all(|e| number(e).unwrap() > last_button),
        "{others:?} numbered before button @e{last_button}"
    );
    let (code, out, err) = inspect(&["--app", "--virtual-display", "--", "gnome-calculator"]);
    assert_eq!(code, 0, "{err}");
    let first = out.lines().nth(1).unwrap_or_default();
    assert!(
        ["push button", "toggle button", "push button menu"]
            .iter()
            .any(|r| first.starts_with(&format!("  @e1 {r} "))),
        "{out}"
    );
}

#[test]
fn a_desktop_app_is_printed_with_refs_and_locators_that_resolve() {
    let app = common::root().join("tests/fixtures/desktop/fixture_app.py");
    let app = app.to_str().unwrap();
    let (code, out, err) = inspect(&["--app", "--virtual-display", "--", "/usr/bin/python3", app]);
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!("inspect_desktop", out);
    let (code, out, err) = inspect(&[
        "--app",
        "--virtual-display",
        "--json",
        "--",
        "/usr/bin/python3",
        app,
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let mut steps = vec![serde_json::json!({ "action": "waitForWindow" })];
    for e in v["elements"].as_array().unwrap() {
        if !e["locator"].is_null() {
            steps.push(
                serde_json::json!({ "action": "snapshotAccessibility", "locator": e["locator"] }),
            );
        }
    }
    assert!(steps.len() >= 8, "{out}");
    let dir = tempfile::tempdir().unwrap();
    let flow = serde_json::json!({
        "timeoutMs": 120000,
        "target": { "application": { "launch": { "argv": ["/usr/bin/python3", app] } } },
        "steps": steps,
    });
    let f = write(dir.path(), "desktop-locators.jsonc", &flow.to_string());
    let o = Command::new(bin())
        .args([
            "run",
            "--json",
            "--video",
            "off",
            "--virtual-display",
            "--workspace",
        ])
        .arg(dir.path().join("ws"))
        .arg(&f)
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["status"], "PASSED", "{r:#}");
}
