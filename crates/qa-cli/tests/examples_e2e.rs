//! The Rust embedding examples (`crates/qa-cli/examples/`) run against real
//! surfaces: a shell in a PTY, a page of the loopback fixture app in
//! Chromium, the GTK fixture application under an owned Xvfb.

mod common;

use common::{root, App};
use std::path::PathBuf;
use std::process::Command;

/// An example's binary: `cargo test` builds the examples into
/// `target/<profile>/examples/` beside this test's `deps/`.
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let p = exe
        .parent()
        .and_then(|d| d.parent())
        .unwrap()
        .join("examples")
        .join(name);
    assert!(
        p.exists(),
        "{} was not built: `cargo test -p qa-cli` builds the examples (a `--test` filter alone does not)",
        p.display()
    );
    p
}

fn run(name: &str, args: &[&str]) -> (i32, String, String) {
    let o = Command::new(example(name))
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn drive_a_terminal_program_in_ten_lines() {
    let (code, out, err) = run("terminal", &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("$ echo $((6 * 7))\n42"), "{out}");
    assert!(out.trim_end().ends_with("Passed"), "{out}");
}

#[test]
fn check_a_web_page() {
    let dir = tempfile::tempdir().unwrap();
    let app = App::start(
        dir.path(),
        serde_json::json!({ "username": "staff", "password": "example-pw-99" }),
    );
    let (code, out, err) = run("web_page", &[&format!("{}/login", app.a), "Sign in"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(r#"@e3   button "Sign in"  {"role":"button","name":"Sign in"}"#),
        "{out}"
    );
    assert!(out.contains("Passed"), "{out}");
    let (code, out, _) = run("web_page", &[&format!("{}/login", app.a), "Not there"]);
    assert_eq!(code, 1, "{out}");
}

#[test]
fn read_a_desktop_apps_tree() {
    let app = root().join("tests/fixtures/desktop/fixture_app.py");
    let (code, out, err) = run("desktop_tree", &["/usr/bin/python3", app.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(r#"push button "Copy"  {"automationId":"copy-button"}"#),
        "{out}"
    );
    assert!(out.trim_end().ends_with("Passed"), "{out}");
}

#[test]
fn build_a_flow_in_rust_and_run_it() {
    let (code, out, err) = run("built_flow", &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(r#""action": "sendKeys""#), "{out}");
    assert!(out.contains("Passed: 4 steps"), "{out}");
}
