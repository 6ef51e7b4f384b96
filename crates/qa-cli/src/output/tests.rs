//! Snapshots of the human output for the runs a person meets: a pass, each
//! kind of failure per backend, a BLOCKED run, and several flows with a
//! tally. Results are built as the runner writes them (JSON), so the tests
//! pin the text without launching anything; the end-to-end tests check
//! that real runs fill these fields.

use super::progress::render_event;
use super::{render_summary, render_tally, Paint};
use qa_core::result::RunResult;
use qa_core::secrets::Secrets;
use qa_runner::progress::{Outcome, ProgressEvent};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

/// A result of `backend` with `status`, then `patch`'s fields.
fn result(backend: &str, driver: &str, status: &str, patch: Value) -> RunResult {
    let mut v = json!({
        "schemaVersion": 1,
        "status": status,
        "timedOut": false,
        "cancelled": false,
        "stage": "cleanup",
        "selection": {
            "detectedTargetKind": if backend == "tui" { "terminal" } else { backend },
            "selectedBackend": backend,
            "platformDriver": driver,
            "presentation": "headless",
            "platform": "linux",
            "candidateBackends": [],
            "supportedCapabilities": [],
            "missingCapabilities": [],
            "whySelected": "test",
            "guide": { "backend": backend, "topic": "t" }
        },
        "steps": [],
        "assertions": [],
        "observations": [],
        "artifacts": {
            "screenshots": [], "videos": [], "traces": [], "terminalCaptures": [],
            "accessibilitySnapshots": [], "observations": [], "downloads": [], "logs": []
        },
        "cleanup": { "status": "clean", "ended": [], "left": [] },
        "evidenceDir": "/ws/runs/r1",
        "runId": "r1",
        "startedAt": "2026-12-03T12:00:00Z",
        "durationMs": 1234
    });
    if let (Some(o), Some(p)) = (v.as_object_mut(), patch.as_object()) {
        for (k, x) in p {
            o.insert(k.clone(), x.clone());
        }
    }
    serde_json::from_value(v).expect("a result document")
}

fn artifact(path: &str) -> Value {
    json!({ "path": path, "uri": format!("file://{path}"), "bytes": 10, "sha256": "00" })
}

/// The summary of a run whose `report.html` was written.
fn summary(flow: &str, r: &RunResult) -> String {
    let report = Path::new(&r.evidence_dir).join("report.html");
    render_summary(
        Path::new(flow),
        r,
        Some(&report),
        &Secrets::new(),
        Paint::PLAIN,
    )
}

#[test]
fn progress_lines_name_the_step_and_what_it_did() {
    let flow = Path::new("flows/rows.jsonc");
    let mut lines = Vec::new();
    let evs = [
        ProgressEvent::stage_end(
            "launch",
            None,
            None,
            Outcome::Passed,
            Duration::from_millis(812),
        ),
        ProgressEvent::stage_end(
            "step 1 activate",
            Some(1),
            Some("activate"),
            Outcome::Passed,
            Duration::from_millis(65),
        )
        .described(
            Some("open the first row"),
            Some("ran the action \"expand or contract\""),
        ),
        ProgressEvent::stage_end(
            "step 2 assertState",
            Some(2),
            Some("assertState"),
            Outcome::Failed,
            Duration::from_millis(5003),
        )
        .described(Some("row is selected"), None),
        ProgressEvent::stage_end(
            "step 3 capture",
            Some(3),
            Some("capture"),
            Outcome::Skipped,
            Duration::ZERO,
        ),
    ];
    for ev in &evs {
        lines.extend(render_event(flow, ev, Paint::PLAIN));
    }
    insta::assert_snapshot!("progress_lines", lines.join("\n"));
}

#[test]
fn a_passing_run() {
    let r = result(
        "browser",
        "browser/cdp",
        "PASSED",
        json!({
            "flowName": "web-form",
            "steps": [
                { "index": 1, "action": "fill", "status": "passed", "durationMs": 150 },
                { "index": 2, "action": "click", "status": "passed", "durationMs": 120 }
            ],
            "observations": [
                { "kind": "environment", "message": "browser environment: viewport 1280x720 (left out of the human output)" },
                { "kind": "driver", "message": "blocked at the network proxy: Chromium's own background traffic to its service hosts, not seen in any page: update.googleapis.com, accounts.google.com (3 connection(s))" }
            ],
            "artifacts": {
                "screenshots": [artifact("/ws/runs/r1/artifacts/screenshots/form-sent.png")],
                "videos": [], "traces": [], "terminalCaptures": [], "accessibilitySnapshots": [],
                "observations": [], "downloads": [],
                "logs": [artifact("/ws/runs/r1/artifacts/logs/console.jsonl")]
            },
            "cleanup": { "status": "clean", "ended": [
                { "pid": 10, "label": "chromium", "how": "exited" }
            ], "left": [] }
        }),
    );
    insta::assert_snapshot!("pass", summary("examples/web-form.jsonc", &r));
}

#[test]
fn a_browser_text_mismatch_shows_expected_and_received() {
    let r = result(
        "browser",
        "browser/cdp",
        "FAILED",
        json!({
            "reason": "step 3 assertText failed: did not hold within 5000 ms after 14 attempts; last observed: expected text equals \"Ordered 1 x Medium\", received \"Ordered 1 x Large\"",
            "reasonCode": "assertion.timeout",
            "stage": "step 3 assertText",
            "steps": [
                { "index": 3, "action": "assertText", "name": "order summary", "status": "failed", "durationMs": 5003,
                  "reason": "did not hold within 5000 ms after 14 attempts; last observed: expected text equals \"Ordered 1 x Medium\", received \"Ordered 1 x Large\"",
                  "failure": { "expected": "text equals \"Ordered 1 x Medium\"", "received": "\"Ordered 1 x Large\"", "locator": "testId=\"summary\"" } }
            ]
        }),
    );
    insta::assert_snapshot!("browser_text", summary("flows/order.jsonc", &r));
}

#[test]
fn an_ambiguous_browser_locator_lists_what_it_matched() {
    let r = result(
        "browser",
        "browser/cdp",
        "FAILED",
        json!({
            "reason": "step 2 click failed: click: role=button matched 5 elements; a locator must match exactly one (add exact, nth or a more specific locator)",
            "reasonCode": "web.locator.ambiguous",
            "steps": [
                { "index": 2, "action": "click", "status": "failed", "durationMs": 40,
                  "reason": "click: role=button matched 5 elements; a locator must match exactly one (add exact, nth or a more specific locator)",
                  "failure": {
                    "expected": "one element matching role=button", "received": "5 elements match", "locator": "role=button",
                    "candidates": [
                        { "role": "button", "name": "Small", "locator": "{\"role\":\"button\",\"name\":\"Small\"}", "detail": "button" },
                        { "role": "button", "name": "Medium", "locator": "{\"role\":\"button\",\"name\":\"Medium\"}", "detail": "button" },
                        { "role": "button", "name": "Order", "locator": "{\"testId\":\"order\"}", "detail": "button#order, disabled" }
                    ],
                    "candidatesTotal": 5
                  } }
            ]
        }),
    );
    insta::assert_snapshot!("browser_ambiguous", summary("flows/order.jsonc", &r));
}

#[test]
fn a_missing_browser_element_lists_the_closest() {
    let r = result(
        "browser",
        "browser/cdp",
        "FAILED",
        json!({
            "reason": "step 1 click failed: click: role=button name=\"Sumbit\": the locator matched no element (actionability retried until the step deadline)",
            "reasonCode": "web.locator.not_found",
            "steps": [
                { "index": 1, "action": "click", "status": "failed", "durationMs": 5001,
                  "reason": "click: role=button name=\"Sumbit\": the locator matched no element (actionability retried until the step deadline)",
                  "failure": {
                    "expected": "one element matching role=button name=\"Sumbit\"", "received": "no element matches",
                    "locator": "role=button name=\"Sumbit\"",
                    "candidates": [
                        { "role": "button", "name": "Submit order", "locator": "{\"role\":\"button\",\"name\":\"Submit order\"}", "detail": "button" }
                    ]
                  } }
            ]
        }),
    );
    insta::assert_snapshot!("browser_not_found", summary("flows/order.jsonc", &r));
}

#[test]
fn a_terminal_failure_shows_the_screen() {
    let r = result(
        "tui",
        "tui/pty",
        "FAILED",
        json!({
            "reason": "step 2 waitForText failed: did not hold within 5000 ms after 30 attempts; last observed: not on screen or in scrollback yet; last lines: \"sqlite>\"",
            "reasonCode": "assertion.timeout",
            "steps": [
                { "index": 2, "action": "waitForText", "status": "failed", "durationMs": 5002,
                  "reason": "did not hold within 5000 ms after 30 attempts; last observed: not on screen or in scrollback yet; last lines: \"sqlite>\"",
                  "failure": { "expected": "the screen or scrollback to contain text \"sqlite> \"", "received": "last lines \"sqlite>\"" } }
            ],
            "artifacts": {
                "screenshots": [], "videos": [artifact("/ws/runs/r1/artifacts/videos/terminal.cast")], "traces": [],
                "terminalCaptures": [artifact("/ws/runs/r1/artifacts/terminal-captures/failure-step2.txt")],
                "accessibilitySnapshots": [], "observations": [], "downloads": [], "logs": []
            }
        }),
    );
    insta::assert_snapshot!("terminal", summary("flows/sqlite.jsonc", &r));
}

#[test]
fn a_desktop_failure_shows_the_state_and_closest_elements() {
    let r = result(
        "desktop",
        "desktop/linux-atspi",
        "FAILED",
        json!({
            "reason": "step 4 assertState failed: did not hold within 5000 ms after 12 attempts; last observed: no element matches role=button name=\"Runn\"",
            "reasonCode": "assertion.timeout",
            "steps": [
                { "index": 4, "action": "assertState", "status": "failed", "durationMs": 5010,
                  "reason": "did not hold within 5000 ms after 12 attempts; last observed: no element matches role=button name=\"Runn\"",
                  "failure": {
                    "expected": "one element matching role=button name=\"Runn\"", "received": "no element matches",
                    "locator": "role=button name=\"Runn\"",
                    "candidates": [
                        { "role": "push button", "name": "Run" },
                        { "role": "push button", "name": "Source", "detail": "automationId \"source\"" }
                    ],
                    "candidatesTotal": 14
                  } }
            ]
        }),
    );
    insta::assert_snapshot!("desktop", summary("flows/gtk4.jsonc", &r));
}

#[test]
fn blocked_says_each_thing_once() {
    let why = "Chromium was not found: set --browser or $CHROME, or install chromium";
    let r = result(
        "browser",
        "browser/cdp",
        "BLOCKED",
        json!({
            "reason": why,
            "reasonCode": "missing_capability",
            "stage": "select",
            "blockedHandoff": {
                "backend": "browser", "platformDriver": "browser/cdp", "platform": "linux",
                "reasonCode": "missing_capability",
                "missingCapabilities": [
                    { "id": "chromium", "reason": why, "remediation": "apt-get install chromium, or pass --browser PATH" }
                ],
                "reason": why, "remediation": "chromium: apt-get install chromium, or pass --browser PATH",
                "manualActionRequired": true, "automaticRemediationAttempted": false
            }
        }),
    );
    let text = summary("flows/order.jsonc", &r);
    assert_eq!(text.matches(why).count(), 1, "{text}");
    insta::assert_snapshot!("blocked", text);
}

#[test]
fn several_flows_end_with_a_tally() {
    let pass = result("browser", "browser/cdp", "PASSED", json!({}));
    let fail = result(
        "tui",
        "tui/pty",
        "FAILED",
        json!({
            "reason": "step 2 waitForText failed: did not hold within 5000 ms after 30 attempts"
        }),
    );
    let blocked = result(
        "desktop",
        "desktop/linux-atspi",
        "BLOCKED",
        json!({
            "reason": "no display: run with --virtual-display"
        }),
    );
    let runs: Vec<(String, &RunResult)> = vec![
        ("flows/a.jsonc".into(), &pass),
        ("flows/b.jsonc".into(), &pass),
        ("flows/c.jsonc".into(), &fail),
        ("flows/d.jsonc".into(), &blocked),
    ];
    let text = render_tally(
        &runs,
        Some(Duration::from_millis(12_400)),
        Some(Path::new("/ws/reports/20261203-120000-abcdef/index.html")),
        &Secrets::new(),
        Paint::PLAIN,
    );
    insta::assert_snapshot!("tally", text);
    // `ui-qa report` names runs, not flow files, and has no wall time.
    let merged = render_tally(&runs[2..], None, None, &Secrets::new(), Paint::PLAIN);
    assert!(
        merged.starts_with("\n2 runs: 1 failed, 1 blocked\n"),
        "{merged}"
    );
}

#[test]
fn summaries_redact_secrets_and_escape_control_characters() {
    let secrets = Secrets::new();
    secrets.add("hunter2-secret");
    let r = result(
        "browser",
        "browser/cdp",
        "FAILED",
        json!({
            "reason": "step 1 assertValue failed: value was hunter2-secret\u{1b}[31m",
            "steps": [
                { "index": 1, "action": "assertValue", "status": "failed", "durationMs": 5,
                  "failure": { "expected": "value equals \"x\"", "received": "\"hunter2-secret\"" } }
            ]
        }),
    );
    let text = render_summary(Path::new("f.jsonc"), &r, None, &secrets, Paint::PLAIN);
    assert!(!text.contains("hunter2-secret"), "{text}");
    assert!(!text.contains('\u{1b}'), "{text}");
}
