//! Flow parsing: valid flows in every vocabulary, and every rejection with
//! its stable code, JSON pointer and position.

use qa_core::flow::{Action, Flow, StepClass, TargetKind, TerminalAction};
use std::path::Path;

fn parse(s: &str) -> Result<Flow, qa_core::FlowError> {
    Flow::parse(s, Path::new("/tmp"))
}

fn err(s: &str) -> qa_core::FlowError {
    parse(s).expect_err("flow must be rejected")
}

#[test]
fn seed_format_flows_parse_unchanged() {
    let f = parse(
        r#"{"version":1,"target":{"url":"http://127.0.0.1:8080/"},"steps":[
            {"action":"goto","path":"/settings"},
            {"action":"click","locator":{"role":"button","name":"Save"}},
            {"action":"assertText","locator":{"testId":"toast"},"includes":"Saved"},
            {"action":"fill","locator":{"label":"Email"},"value":"a@b.c"},
            {"action":"assertURL","includes":"/settings"},
            {"action":"screenshot","name":"after-save","fullPage":true}
        ]}"#,
    )
    .unwrap();
    assert_eq!(f.kind(), TargetKind::Browser);
    assert_eq!(f.steps.len(), 6);
    assert_eq!(f.steps[1].class(), StepClass::Action);
    assert_eq!(f.steps[2].class(), StepClass::Assertion);
    assert_eq!(f.steps[5].evidence_name(), "after-save");
    assert_eq!(f.steps[0].evidence_name(), "goto-step1");
}

#[test]
fn jsonc_comments_and_trailing_commas() {
    let f = parse(
        "// terminal\n{\n  \"target\": { \"command\": { \"argv\": [\"bash\"], }, },\n  /* block */\n  \"steps\": [ {\"action\": \"sendKeys\", \"keys\": [\"Ctrl+C\", \"F10\"]}, ],\n}",
    )
    .unwrap();
    assert_eq!(f.kind(), TargetKind::Terminal);
    match &f.steps[0].action {
        Action::Terminal(TerminalAction::SendKeys(k)) => assert_eq!(
            k.keys.iter().map(|k| k.as_str()).collect::<Vec<_>>(),
            vec!["Ctrl+C", "F10"]
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn desktop_flow_parses() {
    let f = parse(
        r#"{"target":{"application":{"launch":{"argv":["gnome-calculator"]}}},"steps":[
            {"action":"waitForWindow","title":{"includes":"Calculator"}},
            {"action":"activate","locator":{"role":"button","name":"2"}},
            {"action":"assertState","locator":{"automationId":"x"},"state":"enabled"},
            {"action":"assertText","locator":{"path":[{"role":"frame"},{"role":"label","name":"r"}]},"equals":"5"}
        ]}"#,
    )
    .unwrap();
    assert_eq!(f.kind(), TargetKind::Desktop);
}

#[test]
fn unknown_field_has_pointer_and_position() {
    let e = err("{\"target\":{\"command\":{\"argv\":[\"x\"]}},\n\"steps\":[{\"action\":\"sendText\",\"text\":\"a\",\n  \"bogus\":1}]}");
    assert_eq!(e.code, "flow.unknown_field");
    assert_eq!(e.pointer, "/steps/0/bogus");
    assert_eq!(e.line, Some(3));
    assert_eq!(e.column, Some(3), "points at the unknown key");
}

#[test]
fn unknown_top_level_and_nested_fields() {
    let e = err(r#"{"target":{"url":"http://a.test/"},"steps":[{"action":"reload"}],"extra":1}"#);
    assert_eq!(
        (e.code, e.pointer.as_str()),
        ("flow.unknown_field", "/extra")
    );
    let e = err(
        r#"{"target":{"url":"http://a.test/"},"steps":[{"action":"click","locator":{"css":"a","colour":1}}]}"#,
    );
    assert_eq!(
        (e.code, e.pointer.as_str()),
        ("flow.unknown_field", "/steps/0/locator/colour")
    );
}

#[test]
fn two_target_kinds_rejected() {
    let e = err(
        r#"{"target":{"url":"http://a.test/","command":{"argv":["x"]}},"steps":[{"action":"reload"}]}"#,
    );
    assert_eq!(
        (e.code, e.pointer.as_str()),
        ("flow.target_kind", "/target")
    );
    let e = err(
        r#"{"target":{"kind":"desktop","url":"http://a.test/"},"steps":[{"action":"reload"}]}"#,
    );
    assert_eq!(
        (e.code, e.pointer.as_str()),
        ("flow.target_kind", "/target/kind")
    );
    let e = err(r#"{"target":{},"steps":[{"action":"reload"}]}"#);
    assert_eq!(e.code, "flow.target_kind");
}

#[test]
fn bad_and_cross_kind_actions() {
    let e = err(
        r#"{"target":{"url":"http://a.test/"},"steps":[{"action":"reload"},{"action":"frobnicate"}]}"#,
    );
    assert_eq!(
        (e.code, e.pointer.as_str()),
        ("flow.unknown_action", "/steps/1/action")
    );
    let e =
        err(r#"{"target":{"url":"http://a.test/"},"steps":[{"action":"sendKeys","keys":["a"]}]}"#);
    assert_eq!(e.code, "flow.unknown_action");
    assert!(e.message.contains("terminal"), "{}", e.message);
}

/// Issue 45 item 7: each message names the fix, with the format's own
/// field and action names.
#[test]
fn messages_name_the_fix() {
    // No target at all, and a target that names no kind.
    for flow in [
        r#"{"steps":[{"action":"reload"}]}"#,
        r#"{"target":{},"steps":[{"action":"reload"}]}"#,
    ] {
        let e = err(flow);
        for field in [
            "`url` (browser",
            "`command` (terminal",
            "`application` (desktop",
        ] {
            assert!(e.message.contains(field), "{field}: {}", e.message);
        }
        assert!(e.message.contains(r#""argv""#), "{}", e.message);
    }
    assert!(err(r#"{"steps":[{"action":"reload"}]}"#)
        .message
        .contains("add a target"));
    // A URL without its scheme: the corrected URL, whether it parses as
    // a relative URL or with its host as the scheme.
    for (url, fixed) in [
        ("localhost:8000/admin", "http://localhost:8000/admin"),
        ("localhost:8000", "http://localhost:8000"),
        ("example.com", "http://example.com"),
        ("127.0.0.1:3000/x?y=1", "http://127.0.0.1:3000/x?y=1"),
    ] {
        let e = err(&format!(
            r#"{{"target":{{"url":"{url}"}},"steps":[{{"action":"reload"}}]}}"#
        ));
        assert_eq!(
            (e.code, e.pointer.as_str()),
            ("flow.invalid_url", "/target/url")
        );
        assert!(e.message.contains("http://"), "{}", e.message);
        assert!(e.message.contains(&format!("{fixed:?}")), "{}", e.message);
    }
    let e = err(r#"{"target":{"baseUrl":"example.com:8080"},"steps":[{"action":"reload"}]}"#);
    assert!(
        e.message.contains(r#""http://example.com:8080""#),
        "{}",
        e.message
    );
    // Real schemes stay valid.
    for url in [
        "http://a.test/",
        "https://a.test:8443/x",
        "about:blank",
        "file:///tmp/x.html",
    ] {
        parse(&format!(
            r#"{{"target":{{"url":"{url}"}},"steps":[{{"action":"reload"}}]}}"#
        ))
        .unwrap();
    }
    // A terminal action in a browser flow names the browser's.
    let e =
        err(r#"{"target":{"url":"http://a.test/"},"steps":[{"action":"sendKeys","keys":["a"]}]}"#);
    assert!(e.message.contains(r#"use "press""#), "{}", e.message);
    let e = err(r#"{"target":{"command":{"argv":["x"]}},"steps":[{"action":"press","key":"a"}]}"#);
    assert!(e.message.contains(r#"use "sendKeys""#), "{}", e.message);
    let e = err(
        r#"{"target":{"application":{"launch":{"argv":["x"]}}},"steps":[{"action":"sendKeys","keys":["a"]}]}"#,
    );
    assert!(e.message.contains(r#"use "pressKey""#), "{}", e.message);
    // A regex error: its first line says what is wrong, then the pattern
    // with the caret under the offending character (real line breaks).
    let e = err(
        r#"{"target":{"command":{"argv":["x"]}},"steps":[{"action":"waitForText","regex":"foo(bar"}]}"#,
    );
    assert_eq!(e.code, "flow.invalid_regex");
    let lines: Vec<&str> = e.message.lines().collect();
    assert_eq!(lines[0], "invalid regex: unclosed group", "{}", e.message);
    assert_eq!(lines[1].find('('), lines[2].find('^'), "{}", e.message);
}

#[test]
fn duplicate_key_rejected_with_position() {
    let e = err("{\"target\":{\"url\":\"http://a.test/\"},\n\"steps\":[{\"action\":\"reload\",\"action\":\"goto\"}]}");
    assert_eq!(
        (e.code, e.pointer.as_str()),
        ("flow.duplicate_key", "/steps/0/action")
    );
    assert_eq!(e.line, Some(2));
}

#[test]
fn malformed_jsonc_rejected() {
    let e = err("{\"target\": {\"url\": \"http://a.test/\"}, \"steps\": [ {\"action\": }");
    assert_eq!(e.code, "flow.syntax");
    assert!(e.line.is_some() && e.column.is_some());
}

#[test]
fn step_count_bounds() {
    let steps: Vec<String> = (0..101)
        .map(|_| r#"{"action":"reload"}"#.to_string())
        .collect();
    let e = err(&format!(
        r#"{{"target":{{"url":"http://a.test/"}},"steps":[{}]}}"#,
        steps.join(",")
    ));
    assert_eq!(
        (e.code, e.pointer.as_str()),
        ("flow.too_many_steps", "/steps/100")
    );
    let ok: Vec<String> = (0..100)
        .map(|_| r#"{"action":"reload"}"#.to_string())
        .collect();
    assert!(parse(&format!(
        r#"{{"target":{{"url":"http://a.test/"}},"steps":[{}]}}"#,
        ok.join(",")
    ))
    .is_ok());
    let e = err(r#"{"target":{"url":"http://a.test/"},"steps":[]}"#);
    assert_eq!(e.code, "flow.no_steps");
}

#[test]
fn wrong_types_and_ranges() {
    let e = err(
        r#"{"target":{"command":{"argv":["x"]}},"steps":[{"action":"resize","cols":"wide","rows":3}]}"#,
    );
    assert_eq!(
        (e.code, e.pointer.as_str()),
        ("flow.wrong_type", "/steps/0/cols")
    );
    let e = err(
        r#"{"target":{"command":{"argv":["x"]}},"steps":[{"action":"resize","cols":1,"rows":3}]}"#,
    );
    assert_eq!(
        (e.code, e.pointer.as_str()),
        ("flow.out_of_range", "/steps/0/cols")
    );
    let e = err(
        r#"{"target":{"command":{"argv":["x"]}},"steps":[{"action":"capture","timeoutMs":0}]}"#,
    );
    assert_eq!(
        (e.code, e.pointer.as_str()),
        ("flow.out_of_range", "/steps/0/timeoutMs")
    );
    let e =
        err(r#"{"version":2,"target":{"command":{"argv":["x"]}},"steps":[{"action":"capture"}]}"#);
    assert_eq!(
        (e.code, e.pointer.as_str()),
        ("flow.out_of_range", "/version")
    );
    let e = err(
        r#"{"target":{"command":{"argv":["x"]}},"viewport":{"width":800},"steps":[{"action":"capture"}]}"#,
    );
    assert_eq!(
        (e.code, e.pointer.as_str()),
        ("flow.unknown_field", "/viewport/width")
    );
}

#[test]
fn keys_text_locators_matchers() {
    let e = err(
        r#"{"target":{"command":{"argv":["x"]}},"steps":[{"action":"sendKeys","keys":["Enter","\u0003"]}]}"#,
    );
    assert_eq!(
        (e.code, e.pointer.as_str()),
        ("flow.invalid_key", "/steps/0/keys/1")
    );
    let e = err(
        r#"{"target":{"command":{"argv":["x"]}},"steps":[{"action":"sendText","text":"a\nb"}]}"#,
    );
    assert_eq!(
        (e.code, e.pointer.as_str()),
        ("flow.control_character", "/steps/0/text")
    );
    let e = err(
        r#"{"target":{"url":"http://a.test/"},"steps":[{"action":"click","locator":{"css":"a","testId":"b"}}]}"#,
    );
    assert_eq!(
        (e.code, e.pointer.as_str()),
        ("flow.invalid_locator", "/steps/0/locator")
    );
    let e = err(
        r#"{"target":{"url":"http://a.test/"},"steps":[{"action":"assertURL","includes":"a","equals":"b"}]}"#,
    );
    assert_eq!(e.code, "flow.invalid_matcher");
    let e =
        err(r#"{"target":{"url":"http://a.test/"},"steps":[{"action":"assertURL","regex":"(("}]}"#);
    assert_eq!(
        (e.code, e.pointer.as_str()),
        ("flow.invalid_regex", "/steps/0/regex")
    );
}

#[test]
fn unsafe_paths_and_origins() {
    let e = err(
        r#"{"target":{"command":{"argv":["x"],"cwd":"../up"}},"steps":[{"action":"capture"}]}"#,
    );
    assert_eq!(
        (e.code, e.pointer.as_str()),
        ("flow.unsafe_path", "/target/command/cwd")
    );
    let e = err(r#"{"target":{"serve":"/etc"},"steps":[{"action":"reload"}]}"#);
    assert_eq!(
        (e.code, e.pointer.as_str()),
        ("flow.unsafe_path", "/target/serve")
    );
    let e = err(
        r#"{"target":{"url":"http://a.test/","allowedOrigins":["https://*.x.test"]},"steps":[{"action":"reload"}]}"#,
    );
    assert_eq!(
        (e.code, e.pointer.as_str()),
        ("flow.invalid_origin", "/target/allowedOrigins/0")
    );
    let e = err(
        r#"{"target":{"url":"http://a.test/","allowedOrigins":["https://x.test/path"]},"steps":[{"action":"reload"}]}"#,
    );
    assert_eq!(e.code, "flow.invalid_origin");
    let e = err(
        r#"{"target":{"command":{"argv":["x"]}},"steps":[{"action":"capture","name":"../x"}]}"#,
    );
    assert_eq!(
        (e.code, e.pointer.as_str()),
        ("flow.unsafe_path", "/steps/0/name")
    );
}

#[test]
fn too_large_rejected() {
    let big = format!(
        r#"{{"target":{{"command":{{"argv":["x"]}}}},"name":"{}","steps":[{{"action":"capture"}}]}}"#,
        "a".repeat(16 * 1024 * 1024)
    );
    assert_eq!(err(&big).code, "flow.too_large");
}

#[test]
fn step_targets_popup_and_frame() {
    let f = parse(
        r#"{"target":{"url":"http://a.test/"},"steps":[
            {"action":"openPopup","name":"help","locator":{"text":"Help"}},
            {"action":"assertText","target":{"type":"popup","name":"help"},"locator":{"role":"heading"},"includes":"Help"},
            {"action":"click","target":{"type":"frame","locator":{"css":"iframe#pay"}},"locator":{"role":"button","name":"Pay"}}]}"#,
    )
    .unwrap();
    assert_eq!(
        f.steps[1].target.as_ref().unwrap().name.as_deref(),
        Some("help")
    );
    assert_eq!(
        f.steps[2].locators().len(),
        2,
        "the frame locator is admitted too"
    );
    let e = err(
        r#"{"target":{"url":"http://a.test/"},"steps":[{"action":"reload","target":{"type":"popup"}}]}"#,
    );
    assert_eq!(
        (e.code, e.pointer.as_str()),
        ("flow.missing_field", "/steps/0/target")
    );
    let e = err(
        r#"{"target":{"url":"http://a.test/"},"steps":[{"action":"reload","target":{"type":"window","name":"x"}}]}"#,
    );
    assert_eq!(
        (e.code, e.pointer.as_str()),
        ("flow.out_of_range", "/steps/0/target/type")
    );
    let e = err(
        r#"{"target":{"command":{"argv":["x"]}},"steps":[{"action":"capture","target":{"type":"popup","name":"x"}}]}"#,
    );
    assert_eq!(
        (e.code, e.pointer.as_str()),
        ("flow.unknown_field", "/steps/0/target")
    );
}

#[test]
fn a_relative_url_is_resolved_against_a_server_the_flow_starts() {
    // The guide's own example: server + relative url.
    let f = parse(
        r#"{"target":{"server":{"command":["npm","start"],"readyUrl":"http://127.0.0.1:3000/"},"url":"/login"},
            "steps":[{"action":"assertURL","includes":"login"}]}"#,
    );
    assert!(f.is_ok(), "{:?}", f.err());
    let e =
        err(r#"{"target":{"url":"/login"},"steps":[{"action":"assertURL","includes":"login"}]}"#);
    assert_eq!(e.code, "flow.invalid_url");
    assert!(
        e.message.contains("needs serve, server or baseUrl"),
        "{}",
        e.message
    );
}

#[test]
fn every_step_error_is_reported_not_only_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f.jsonc");
    std::fs::write(
        &f,
        r#"{"target":{"url":"http://127.0.0.1:1/"},"steps":[
            {"action":"clik"},
            {"action":"click","locator":{"role":"button"}},
            {"action":"fill","locator":{"label":"x"}}]}"#,
    )
    .unwrap();
    let errs = Flow::load_checked(&f).unwrap_err();
    let at: Vec<&str> = errs.iter().map(|e| e.pointer.as_str()).collect();
    assert_eq!(at, ["/steps/0/action", "/steps/2"], "{errs:?}");
    assert!(errs[0].message.contains("did you mean \"click\""));
    assert!(
        errs.iter().all(|e| e.line.is_some()),
        "each placed in the text"
    );
}

#[test]
fn serve_and_cwd_may_climb_inside_the_project_never_out() {
    let project = tempfile::tempdir().unwrap();
    let root = project.path();
    std::fs::create_dir(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join("flows")).unwrap();
    std::fs::create_dir_all(root.join("site")).unwrap();
    let flows = root.join("flows");
    let at = |serve: &str| {
        Flow::parse(
            &format!(r#"{{"target":{{"serve":"{serve}"}},"steps":[{{"action":"reload"}}]}}"#),
            &flows,
        )
    };
    assert!(
        at("../site").is_ok(),
        "a sibling of flows/ inside the project"
    );
    let e = at("../../elsewhere").unwrap_err();
    assert_eq!(
        (e.code, e.pointer.as_str()),
        ("flow.unsafe_path", "/target/serve")
    );
    // Through a symlink out of the project: refused too. (Unix only: a
    // Windows symlink needs a privilege the test cannot assume.)
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("/etc", root.join("site").join("out")).unwrap();
        assert_eq!(at("../site/out").unwrap_err().code, "flow.unsafe_path");
    }
    let cwd = Flow::parse(
        r#"{"target":{"command":{"argv":["ls"],"cwd":"../site"}},"steps":[{"action":"capture"}]}"#,
        &flows,
    );
    assert!(cwd.is_ok(), "{:?}", cwd.err());
}

#[test]
fn assertions_fail_fast_by_default_and_flows_can_change_the_defaults() {
    let f = parse(
        r#"{"target":{"command":{"argv":["sh"]}},"steps":[
            {"action":"waitForText","text":"$"},
            {"action":"assertText","text":"x"},
            {"action":"sendText","text":"y"},
            {"action":"assertText","text":"x","timeoutMs":700}]}"#,
    )
    .unwrap();
    let ms: Vec<u64> = f.steps.iter().map(|s| s.step_timeout_ms()).collect();
    assert_eq!(ms, [15_000, 5_000, 15_000, 700]);
    let f = parse(
        r#"{"target":{"command":{"argv":["sh"]}},"assertTimeoutMs":2000,"stepTimeoutMs":30000,"steps":[
            {"action":"waitForText","text":"$"},
            {"action":"assertText","text":"x"}]}"#,
    )
    .unwrap();
    let ms: Vec<u64> = f.steps.iter().map(|s| s.step_timeout_ms()).collect();
    assert_eq!(ms, [30_000, 2_000]);
    let e = err(
        r#"{"target":{"command":{"argv":["sh"]}},"assertTimeoutMs":0,"steps":[{"action":"capture"}]}"#,
    );
    assert_eq!(
        (e.code, e.pointer.as_str()),
        ("flow.out_of_range", "/assertTimeoutMs")
    );
}

#[test]
fn a_profile_id_is_a_plain_name() {
    for bad in ["../staff", "", ".hidden", "a/b", "staff profile"] {
        let e = err(&format!(
            r#"{{ "target": {{ "url": "http://a.test", "profile": {} }}, "steps": [ {{ "action": "reload" }} ] }}"#,
            serde_json::to_string(bad).unwrap()
        ));
        assert_eq!(e.pointer, "/target/profile", "{bad:?}: {e:?}");
        assert_eq!(e.code, "flow.out_of_range");
    }
    assert!(parse(
        r#"{ "target": { "url": "http://a.test", "profile": "staff-1.ro_le" }, "steps": [ { "action": "reload" } ] }"#
    )
    .is_ok());
}

/// `assertDOMMetric`'s metric, `assertConsole`'s level and a dialog's type
/// are checked when the flow is read, not when the step runs.
#[test]
fn metric_level_and_dialog_kind_are_checked_before_anything_runs() {
    let flow = |step: &str| {
        format!(r#"{{ "target": {{ "url": "http://127.0.0.1:1/" }}, "steps": [ {step} ] }}"#)
    };
    // Each name the format knows is read.
    parse(&flow(
        r#"{ "action": "assertDOMMetric", "metric": "elementCount", "lessThan": 5 }"#,
    ))
    .unwrap();
    parse(&flow(
        r#"{ "action": "assertDOMMetric", "metric": "visibleCount", "locator": { "css": "li" }, "equals": 2 }"#,
    ))
    .unwrap();
    for level in ["log", "info", "warning", "warn", "error", "debug"] {
        parse(&flow(&format!(
            r#"{{ "action": "assertConsole", "level": "{level}", "includes": "x" }}"#
        )))
        .unwrap();
    }
    parse(&flow(
        r#"{ "action": "click", "locator": { "text": "Go" }, "expectDialog": { "type": "beforeunload" } }"#,
    ))
    .unwrap();
    // A misspelt one fails with its pointer.
    let e = err(&flow(
        r#"{ "action": "assertDOMMetric", "metric": "elementcount", "lessThan": 5 }"#,
    ));
    assert_eq!(
        (e.code, e.pointer.as_str()),
        ("flow.out_of_range", "/steps/0/metric"),
        "{e:?}"
    );
    assert!(e.message.contains("elementCount"), "{}", e.message);
    let e = err(&flow(
        r#"{ "action": "assertConsole", "level": "warnings", "includes": "x" }"#,
    ));
    assert_eq!(
        (e.code, e.pointer.as_str()),
        ("flow.out_of_range", "/steps/0/level"),
        "{e:?}"
    );
    let e = err(&flow(
        r#"{ "action": "click", "locator": { "text": "Go" }, "expectDialog": { "type": "popup" } }"#,
    ));
    assert_eq!(e.pointer, "/steps/0/expectDialog/type", "{e:?}");
    // A locator's metric without a locator, a document's with one.
    let e = err(&flow(
        r#"{ "action": "assertDOMMetric", "metric": "count", "equals": 1 }"#,
    ));
    assert_eq!(
        (e.code, e.pointer.as_str()),
        ("flow.missing_field", "/steps/0/locator"),
        "{e:?}"
    );
    let e = err(&flow(
        r#"{ "action": "assertDOMMetric", "metric": "linkCount", "locator": { "css": "a" }, "equals": 1 }"#,
    ));
    assert_eq!(
        (e.code, e.pointer.as_str()),
        ("flow.out_of_range", "/steps/0/metric"),
        "{e:?}"
    );
}

#[test]
fn one_step_parses_as_in_a_flow() {
    use qa_core::flow::Step;
    let s = Step::parse(
        TargetKind::Terminal,
        serde_json::json!({"action": "sendText", "text": "hi"}),
    )
    .unwrap();
    assert_eq!(s.action_name(), "sendText");
    assert_eq!(s.step_timeout_ms(), 15_000);
    let a = Step::parse(
        TargetKind::Terminal,
        serde_json::json!({"action": "assertProcessRunning"}),
    )
    .unwrap();
    assert_eq!(a.step_timeout_ms(), 5_000, "assertions default to 5 s");
    let e = Step::parse(
        TargetKind::Terminal,
        serde_json::json!({"action": "click", "locator": {"role": "button"}}),
    )
    .unwrap_err();
    assert!(e.pointer.starts_with("/steps/0"), "{e:?}");
    let e = Step::parse(
        TargetKind::Terminal,
        serde_json::json!({"action": "sendText", "text": "${var.token}"}),
    )
    .unwrap_err();
    assert_eq!(e.pointer, "/steps/0/text", "{e:?}");
}

/// `target.browser`: an endpoint with a host over http, ws or wss; plain
/// off loopback only with allowInsecure; a new page needs target.url; an
/// existing page needs pageUrl, and pageUrl only goes with it.
#[test]
fn browser_connect_is_checked_before_anything_runs() {
    let flow = |browser: &str, url: &str| {
        format!(
            r#"{{ "target": {{ {url} "browser": {browser} }}, "steps": [ {{ "action": "assertURL", "includes": "x" }} ] }}"#
        )
    };
    let ok = parse(&flow(
        r#"{ "connect": "http://127.0.0.1:9222" }"#,
        r#""url": "http://127.0.0.1:8080/","#,
    ))
    .unwrap();
    assert_eq!(ok.kind(), TargetKind::Browser);
    parse(&flow(
        r#"{ "connect": "ws://localhost:3000?token=x" }"#,
        r#""url": "http://127.0.0.1:8080/","#,
    ))
    .unwrap();
    parse(&flow(
        r#"{ "connect": "ws://10.0.0.5:9222/devtools/browser/x", "allowInsecure": true }"#,
        r#""url": "http://10.0.0.6/","#,
    ))
    .unwrap();
    parse(&flow(
        r#"{ "connect": "http://127.0.0.1:9335", "page": "existing", "pageUrl": "form" }"#,
        "",
    ))
    .unwrap();
    for (browser, url, pointer, code) in [
        (
            r#"{ "connect": "ws://10.0.0.5:9222/x" }"#,
            r#""url": "http://10.0.0.6/","#,
            "/target/browser/connect",
            "flow.out_of_range",
        ),
        (
            r#"{ "connect": "file:///tmp/x" }"#,
            r#""url": "http://10.0.0.6/","#,
            "/target/browser/connect",
            "flow.invalid_url",
        ),
        (
            r#"{ "connect": "http://u:p@127.0.0.1:1" }"#,
            r#""url": "http://10.0.0.6/","#,
            "/target/browser/connect",
            "flow.invalid_url",
        ),
        (
            r#"{ "connect": "http://127.0.0.1:9222" }"#,
            "",
            "/target/url",
            "flow.missing_field",
        ),
        (
            r#"{ "connect": "http://127.0.0.1:9222", "page": "existing" }"#,
            "",
            "/target/browser/pageUrl",
            "flow.missing_field",
        ),
        (
            r#"{ "connect": "http://127.0.0.1:9222", "pageUrl": "x" }"#,
            r#""url": "http://10.0.0.6/","#,
            "/target/browser/pageUrl",
            "flow.unknown_field",
        ),
    ] {
        let e = err(&flow(browser, url));
        assert_eq!(
            (e.pointer.as_str(), e.code),
            (pointer, code),
            "{browser}: {}",
            e.message
        );
    }
}

/// `target.app`: a program and a DevTools channel; it is a browser flow
/// (the browser steps drive it); never beside `browser.connect`; ui-qa
/// gives it its DevTools switch, so argv and env may not.
#[test]
fn an_app_that_embeds_chromium_is_checked_before_anything_runs() {
    let flow = |target: &str| {
        format!(
            r#"{{ "target": {target}, "steps": [ {{ "action": "fill", "locator": {{ "label": "Name" }}, "value": "x" }} ] }}"#
        )
    };
    let ok = parse(&flow(
        r#"{ "app": { "launch": { "argv": ["cefsimple", "--url=http://127.0.0.1:8080/"] }, "devtools": "pipe" } }"#,
    ))
    .unwrap();
    assert_eq!(ok.kind(), TargetKind::Browser);
    parse(&flow(
        r#"{ "url": "http://127.0.0.1:8080/", "app": { "launch": { "argv": ["python3", "app.py"], "env": { "QT_SCALE_FACTOR": "1" } }, "devtools": "port", "pageUrl": "8080" } }"#,
    ))
    .unwrap();
    for (target, pointer, code) in [
        (
            r#"{ "app": { "launch": { "argv": ["cefsimple"] }, "devtools": "usb" } }"#,
            "/target/app/devtools",
            "flow.out_of_range",
        ),
        (
            r#"{ "app": { "launch": { "argv": ["cefsimple"] } } }"#,
            "/target/app",
            "flow.missing_field",
        ),
        (
            r#"{ "app": { "launch": { "argv": [] }, "devtools": "pipe" } }"#,
            "/target/app/launch/argv",
            "flow.out_of_range",
        ),
        (
            r#"{ "app": { "launch": { "argv": ["cefsimple", "--remote-debugging-port=9222"] }, "devtools": "port" } }"#,
            "/target/app/launch/argv/1",
            "flow.out_of_range",
        ),
        (
            r#"{ "app": { "launch": { "argv": ["python3"], "env": { "QTWEBENGINE_REMOTE_DEBUGGING": "0.0.0.0:9" } }, "devtools": "port" } }"#,
            "/target/app/launch/env/QTWEBENGINE_REMOTE_DEBUGGING",
            "flow.out_of_range",
        ),
        (
            r#"{ "url": "http://127.0.0.1:1/", "browser": { "connect": "http://127.0.0.1:9222" }, "app": { "launch": { "argv": ["x"] }, "devtools": "pipe" } }"#,
            "/target/app",
            "flow.target_kind",
        ),
        (
            r#"{ "command": { "argv": ["sh"] }, "app": { "launch": { "argv": ["x"] }, "devtools": "pipe" } }"#,
            "/target",
            "flow.target_kind",
        ),
    ] {
        let e = err(&flow(target));
        assert_eq!(
            (e.pointer.as_str(), e.code),
            (pointer, code),
            "{target}: {}",
            e.message
        );
    }
}
