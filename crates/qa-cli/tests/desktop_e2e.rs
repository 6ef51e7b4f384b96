//! End to end through the `ui-qa` binary with the Linux desktop driver:
//! real GTK applications under an owned Xvfb and private session bus
//! (`--virtual-display`), on a machine without a display of its own.

#![cfg(target_os = "linux")]

mod common;

use common::{assert_clean, bin, root, run_json};
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn run(flow: &Path, ws: &Path, extra_env: &[(&str, &str)]) -> (i32, Value) {
    run_args(flow, ws, &[], extra_env)
}

/// [`run`] with more `ui-qa run` arguments.
fn run_args(flow: &Path, ws: &Path, args: &[&str], extra_env: &[(&str, &str)]) -> (i32, Value) {
    let args: Vec<&str> = ["--virtual-display"].iter().chain(args).copied().collect();
    run_json(flow, ws, &args, |c| {
        // The machine's own display (if any) must not matter.
        c.env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("DBUS_SESSION_BUS_ADDRESS");
        for (k, v) in extra_env {
            c.env(k, v);
        }
    })
}

/// The run ended everything, including its display server and bus.
fn assert_desktop_clean(r: &Value) {
    assert_clean(r, &["xvfb", "dbus"]);
}

#[test]
fn calculator_example_computes_five() {
    let ws = tempfile::tempdir().unwrap();
    // The example's own 30 s flow deadline is meant for a warm desktop; a
    // cold machine starting Xvfb, the buses and GNOME Calculator gets 60 s.
    let (code, r) = run_args(
        &root().join("examples/desktop-calculator.jsonc"),
        ws.path(),
        &["--timeout-ms", "60000"],
        &[],
    );
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["status"], "PASSED");
    assert_eq!(r["selection"]["platformDriver"], "desktop/linux-at-spi");
    assert_eq!(r["selection"]["guide"]["topic"], "linux-at-spi");
    assert_eq!(r["artifacts"]["screenshots"].as_array().unwrap().len(), 1);
    assert_desktop_clean(&r);
}

#[test]
fn zenity_entry_and_fixture_checkbox() {
    let dir = tempfile::tempdir().unwrap();
    let zenity = dir.path().join("zenity.jsonc");
    // The dialog's answer is its output: the flow waits for it to exit and
    // checks what it printed.
    let flow = |want: &str| {
        format!(
            r#"{{"target":{{"application":{{"launch":{{"argv":["zenity","--entry","--title=Ask","--text=Name"]}}}}}},
                "steps":[{{"action":"waitForWindow","title":{{"equals":"Ask"}}}},
                         {{"action":"inputText","locator":{{"role":"textbox"}},"text":"Grace Hopper"}},
                         {{"action":"pressKey","key":"Enter"}},
                         {{"action":"assertProcessExited","exitCode":0,"timeoutMs":15000}},
                         {{"action":"assertOutput","equals":"{want}","timeoutMs":1000}}]}}"#
        )
    };
    std::fs::write(&zenity, flow("Grace Hopper")).unwrap();
    let (code, r) = run(&zenity, &dir.path().join("ws"), &[]);
    assert_eq!(code, 0, "{r:#}");
    assert_desktop_clean(&r);
    // A wrong answer: expected and received side by side.
    std::fs::write(&zenity, flow("Ada Lovelace")).unwrap();
    let (code, r) = run(&zenity, &dir.path().join("ws"), &[]);
    assert_eq!(code, 1, "{r:#}");
    let f = &r["steps"][4]["failure"];
    assert_eq!(f["expected"], "stdout equals \"Ada Lovelace\"", "{f:#}");
    assert_eq!(f["received"], "\"Grace Hopper\"", "{f:#}");
    assert_desktop_clean(&r);

    let fixture = root().join("tests/fixtures/desktop/checkbox.jsonc");
    let (code, r) = run(&fixture, &dir.path().join("ws2"), &[]);
    assert_eq!(code, 0, "{r:#}");
    assert_desktop_clean(&r);
}

#[test]
fn inaccessible_apps_are_blocked_with_a_handoff() {
    let dir = tempfile::tempdir().unwrap();
    let gtk = dir.path().join("no-bridge.jsonc");
    std::fs::write(
        &gtk,
        r#"{"timeoutMs":120000,"target":{"application":{"launch":{"argv":["gtk3-demo"],"env":{"NO_AT_BRIDGE":"1"}}}},
            "steps":[{"action":"waitForWindow"}]}"#,
    )
    .unwrap();
    let t = Instant::now();
    let (code, r) = run(&gtk, &dir.path().join("ws"), &[]);
    assert_eq!(code, 3, "{r:#}");
    assert_eq!(r["status"], "BLOCKED");
    let h = &r["blockedHandoff"];
    assert_eq!(h["manualActionRequired"], true);
    assert_eq!(h["automaticRemediationAttempted"], false);
    assert!(
        h["reason"].as_str().unwrap().contains("NO_AT_BRIDGE"),
        "{h:#}"
    );
    assert_desktop_clean(&r);

    let xterm = dir.path().join("xterm.jsonc");
    std::fs::write(
        &xterm,
        r#"{"timeoutMs":120000,"target":{"application":{"launch":{"argv":["xterm"]}}},"steps":[{"action":"waitForWindow"}]}"#,
    )
    .unwrap();
    let (code, r) = run(&xterm, &dir.path().join("ws2"), &[]);
    assert_eq!(code, 3, "{r:#}");
    assert!(!r["blockedHandoff"]["remediation"]
        .as_str()
        .unwrap()
        .is_empty());
    assert_desktop_clean(&r);
    // Each run is blocked by the driver's bounded registration wait (15 s
    // after start-up), not by its 120 s flow deadline: two runs waiting
    // their deadlines out would take 240 s.
    assert!(
        t.elapsed() < Duration::from_secs(120),
        "blocked runs must not hang"
    );
}

#[test]
fn without_a_display_the_probe_names_the_fix() {
    let mut c = Command::new(bin());
    let o = c
        .args(["probe", "--json"])
        .arg(root().join("examples/desktop-calculator.jsonc"))
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["status"], "BLOCKED");
    let text = v["blockedHandoff"]["remediation"].as_str().unwrap();
    assert!(text.contains("--virtual-display"), "{text}");
}
