//! The `ui-qa` binary's contract: check/schema/guide behaviour and exit codes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn ui_qa() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ui-qa"))
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Each invalid flow would create `marker` if anything were launched.
#[test]
fn invalid_flows_exit_2_with_pointer_and_code_and_launch_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("LAUNCHED");
    let m = marker.display().to_string();
    let touch = format!(r#"["sh","-c","touch {m}"]"#);
    let many: Vec<String> = (0..101)
        .map(|_| r#"{"action":"capture"}"#.to_string())
        .collect();
    let cases: Vec<(&str, String, &str, &str)> = vec![
        (
            "unknown-field",
            format!(
                r#"{{"target":{{"command":{{"argv":{touch}}}}},"steps":[{{"action":"capture","colour":"red"}}]}}"#
            ),
            "flow.unknown_field",
            "/steps/0/colour",
        ),
        (
            "two-kinds",
            format!(
                r#"{{"target":{{"url":"http://127.0.0.1:9/","command":{{"argv":{touch}}}}},"steps":[{{"action":"capture"}}]}}"#
            ),
            "flow.target_kind",
            "/target",
        ),
        (
            "bad-action",
            format!(
                r#"{{"target":{{"command":{{"argv":{touch}}}}},"steps":[{{"action":"explode"}}]}}"#
            ),
            "flow.unknown_action",
            "/steps/0/action",
        ),
        (
            "css-on-desktop",
            format!(
                r#"{{"target":{{"application":{{"launch":{{"argv":{touch}}}}}}},"steps":[{{"action":"activate","locator":{{"css":"button.ok"}}}}]}}"#
            ),
            "flow.unsupported_locator",
            "/steps/0/locator/css",
        ),
        (
            "101-steps",
            format!(
                r#"{{"target":{{"command":{{"argv":{touch}}}}},"steps":[{}]}}"#,
                many.join(",")
            ),
            "flow.too_many_steps",
            "/steps/100",
        ),
        (
            "malformed",
            format!(
                "{{\"target\":{{\"command\":{{\"argv\":{touch}}}}},\"steps\":[{{\"action\": ]}}"
            ),
            "flow.syntax",
            "(document)",
        ),
        (
            "duplicate-key",
            format!(
                r#"{{"target":{{"command":{{"argv":{touch}}}}},"steps":[{{"action":"capture","action":"capture"}}]}}"#
            ),
            "flow.duplicate_key",
            "/steps/0/action",
        ),
    ];
    for (name, text, code, pointer) in cases {
        let f = write(dir.path(), &format!("{name}.jsonc"), &text);
        for sub in ["check", "run"] {
            let mut cmd = ui_qa();
            cmd.arg(sub).arg(&f);
            if sub == "run" {
                cmd.arg("--workspace").arg(dir.path().join("ws"));
            }
            let o = cmd.output().unwrap();
            assert_eq!(o.status.code(), Some(2), "{sub} {name}: {}", stderr(&o));
            let err = stderr(&o);
            assert!(
                err.contains(code),
                "{sub} {name}: missing code {code} in {err}"
            );
            assert!(
                err.contains(pointer),
                "{sub} {name}: missing pointer {pointer} in {err}"
            );
        }
        assert!(!marker.exists(), "{name}: something was launched");
    }
    assert!(
        !dir.path().join("ws").exists(),
        "run created a workspace for an invalid flow"
    );
}

#[test]
fn check_json_reports_errors_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "f.jsonc",
        "{\"target\":{\"command\":{\"argv\":[\"x\"]}},\n \"steps\":[{\"action\":\"capture\",\"bogus\":1}]}",
    );
    let o = ui_qa().args(["check", "--json"]).arg(&f).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["valid"], false);
    assert_eq!(v["errors"][0]["code"], "flow.unknown_field");
    assert_eq!(v["errors"][0]["pointer"], "/steps/0/bogus");
    assert_eq!(v["errors"][0]["line"], 2);
}

#[test]
fn examples_check_clean() {
    let mut n = 0;
    for e in std::fs::read_dir(root().join("examples")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "jsonc") {
            let o = ui_qa().arg("check").arg(&p).output().unwrap();
            assert_eq!(o.status.code(), Some(0), "{}: {}", p.display(), stderr(&o));
            n += 1;
        }
    }
    assert!(n >= 1, "no example flows found");
}

#[test]
fn schema_prints_the_committed_bytes() {
    for name in ["flow", "result"] {
        let o = ui_qa().args(["schema", name]).output().unwrap();
        assert_eq!(o.status.code(), Some(0));
        let committed = std::fs::read(root().join(format!("schemas/{name}.schema.json"))).unwrap();
        assert!(
            o.stdout == committed,
            "ui-qa schema {name} differs from schemas/{name}.schema.json"
        );
    }
}

#[test]
fn guide_allowlist() {
    let o = ui_qa()
        .args(["guide", "--backend", "tui", "--topic", "pty"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("PTY") || text.contains("pty"));
    assert_eq!(
        text,
        std::fs::read_to_string(root().join("guides/tui/pty.md")).unwrap()
    );
    for bad in [
        vec!["guide", "--backend", "tui", "--topic", "../desktop"],
        vec!["guide", "--backend", "tui", "--topic", "windows-uia"],
        vec!["guide", "--backend", "tui", "--topic", "nope"],
        vec!["guide", "--backend", "web"],
        vec!["guide", "--backend", "tui", "extra"],
        vec!["guide", "--backend", "tui", "--bogus"],
    ] {
        let o = ui_qa().args(&bad).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
        assert!(o.stdout.is_empty(), "{bad:?} printed a document");
    }
    let o = ui_qa()
        .args(["guide", "--backend", "desktop"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn usage_errors_exit_2() {
    for bad in [
        vec!["run"],
        vec!["frobnicate"],
        vec!["schema", "auth2"],
        vec!["run", "--timeout-ms", "0", "x.jsonc"],
    ] {
        let o = ui_qa().args(&bad).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
    }
    let o = ui_qa()
        .args(["run", "/nonexistent/flow.jsonc"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("flow.io"));
}

#[test]
fn capabilities_json_lists_every_backend() {
    let o = ui_qa().args(["capabilities", "--json"]).output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = v["backends"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["backend"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["browser", "tui", "desktop"]);
}
