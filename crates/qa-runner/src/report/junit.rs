//! JUnit XML for CI systems: one `<testsuite>` for the report, one
//! `<testcase>` per flow run (what a CI system should count as a test). A
//! FAILED run is a failure whose message is the failing step's reason with
//! expected and received; a BLOCKED run is skipped with its handoff. Each
//! case lists its steps, one line each, in `<system-out>`.

use qa_core::result::{RunResult, RunStatus, StepStatus};
use std::fmt::Write as _;

/// Text for an XML attribute: markup characters as references; control
/// characters XML 1.0 cannot carry are dropped.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\t' => out.push_str("&#9;"),
            c if (c as u32) < 0x20 || matches!(c as u32, 0xFFFE | 0xFFFF) => {}
            c => out.push(c),
        }
    }
    out
}

fn secs(ms: u64) -> String {
    format!("{:.3}", ms as f64 / 1000.0)
}

fn failed(s: StepStatus) -> bool {
    matches!(s, StepStatus::Failed | StepStatus::TimedOut)
}

/// Text for XML character data: markup characters as references, control
/// characters XML 1.0 cannot carry dropped (newlines and tabs kept).
fn text(s: &str) -> String {
    esc(s).replace("&#10;", "\n").replace("&#9;", "\t")
}

/// One line per step: its index, action, name, status and time, and for a
/// failed step its reason.
fn step_lines(r: &RunResult) -> String {
    let mut out = String::new();
    for s in &r.steps {
        let _ = write!(out, "step {} {}", s.index, s.action);
        if let Some(n) = &s.name {
            let _ = write!(out, " ({n})");
        }
        let status = match s.status {
            StepStatus::Passed => "passed",
            StepStatus::Failed => "failed",
            StepStatus::Skipped => "skipped",
            StepStatus::TimedOut => "timed out",
        };
        let _ = write!(out, ": {status} in {} s", secs(s.duration_ms));
        if failed(s.status) {
            if let Some(why) = &s.reason {
                let _ = write!(out, " — {why}");
            }
        }
        out.push('\n');
    }
    out
}

/// Why a FAILED run failed: the first failed step's reason with what it
/// expected and received, or the run's own reason.
fn failure_message(r: &RunResult) -> String {
    let Some(s) = r.steps.iter().find(|s| failed(s.status)) else {
        return r
            .reason
            .clone()
            .unwrap_or_else(|| "the run failed".to_string());
    };
    let mut msg = match &s.name {
        Some(n) => format!("step {} {} ({n})", s.index, s.action),
        None => format!("step {} {}", s.index, s.action),
    };
    if let Some(why) = &s.reason {
        let _ = write!(msg, ": {why}");
    }
    if let Some(m) = &s.failure {
        if let Some(e) = &m.expected {
            let _ = write!(msg, "\nexpected: {e}");
        }
        if let Some(g) = &m.received {
            let _ = write!(msg, "\nreceived: {g}");
        }
    }
    msg
}

/// Renders runs as JUnit XML. Each run comes with its source (the flow
/// file, or where its result was found): its testcase's `classname`, and
/// its name when the flow has none.
pub fn render(results: &[(&str, &RunResult)]) -> String {
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let count = |status: RunStatus| results.iter().filter(|(_, r)| r.status == status).count();
    let (failures, skipped) = (count(RunStatus::Failed), count(RunStatus::Blocked));
    let total_ms: u64 = results.iter().map(|(_, r)| r.duration_ms).sum();
    let _ = writeln!(
        x,
        "<testsuites name=\"ui-qa\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\" time=\"{}\">",
        results.len(),
        secs(total_ms)
    );
    let _ = writeln!(
        x,
        "  <testsuite name=\"ui-qa\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\" time=\"{}\">",
        results.len(),
        secs(total_ms)
    );
    for (source, r) in results {
        let name = r.flow_name.as_deref().unwrap_or(source);
        let _ = writeln!(
            x,
            "    <testcase classname=\"{}\" name=\"{}\" time=\"{}\">",
            esc(source),
            esc(name),
            secs(r.duration_ms)
        );
        let _ = writeln!(
            x,
            "      <properties><property name=\"status\" value=\"{}\"/><property name=\"driver\" value=\"{}\"/><property name=\"runId\" value=\"{}\"/><property name=\"evidenceDir\" value=\"{}\"/><property name=\"startedAt\" value=\"{}\"/><property name=\"steps\" value=\"{}\"/></properties>",
            r.status.as_str(),
            esc(&r.selection.platform_driver),
            esc(&r.run_id),
            esc(&r.evidence_dir),
            esc(&r.started_at),
            r.steps.len()
        );
        match r.status {
            RunStatus::Passed => {}
            RunStatus::Failed => {
                let _ = writeln!(
                    x,
                    "      <failure message=\"{}\" type=\"{}\"/>",
                    esc(failure_message(r).trim_start()),
                    esc(r.reason_code.as_deref().unwrap_or("failed"))
                );
            }
            RunStatus::Blocked => {
                let h = r.blocked_handoff.as_ref();
                let msg = format!(
                    "BLOCKED: {} (fix: {})",
                    h.map(|h| h.reason.as_str()).unwrap_or(""),
                    h.map(|h| h.remediation.as_str()).unwrap_or("")
                );
                let _ = writeln!(x, "      <skipped message=\"{}\"/>", esc(&msg));
            }
        }
        let _ = writeln!(
            x,
            "      <system-out>{}</system-out>\n    </testcase>",
            text(&step_lines(r))
        );
    }
    x.push_str("  </testsuite>\n</testsuites>\n");
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_control_characters() {
        assert_eq!(
            esc("a<b>&\"'\u{1}c\nd"),
            "a&lt;b&gt;&amp;&quot;&apos;c&#10;d"
        );
    }

    fn result(status: &str, steps: serde_json::Value) -> RunResult {
        let mut v: serde_json::Value = serde_json::from_str(crate::report::MINIMAL_RESULT).unwrap();
        v["status"] = serde_json::json!(status);
        v["steps"] = steps;
        if status == "BLOCKED" {
            v["blockedHandoff"] = serde_json::json!({
                "backend": "browser", "platformDriver": "browser/cdp", "platform": "linux",
                "reasonCode": "missing_capability", "missingCapabilities": [],
                "reason": "Chromium was not found", "remediation": "install chromium",
                "manualActionRequired": true, "automaticRemediationAttempted": false
            });
        }
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn one_case_per_flow_with_its_steps_as_details() {
        let pass = result(
            "PASSED",
            serde_json::json!([
                { "index": 1, "action": "click", "status": "passed", "durationMs": 1500 },
                { "index": 2, "action": "assertText", "status": "passed", "durationMs": 20 }
            ]),
        );
        let fail = result(
            "FAILED",
            serde_json::json!([
                { "index": 1, "action": "click", "status": "passed", "durationMs": 5 },
                { "index": 2, "action": "assertText", "name": "total", "status": "failed", "durationMs": 5003,
                  "reason": "did not hold", "failure": { "expected": "text equals \"3\"", "received": "\"<4>\"" } },
                { "index": 3, "action": "click", "status": "skipped", "durationMs": 0 }
            ]),
        );
        let blocked = result(
            "BLOCKED",
            serde_json::json!([{ "index": 1, "action": "click", "status": "skipped", "durationMs": 0 }]),
        );
        let xml = render(&[
            ("a.jsonc", &pass),
            ("b.jsonc", &fail),
            ("c&.jsonc", &blocked),
        ]);
        assert!(
            xml.contains("<testsuites name=\"ui-qa\" tests=\"3\" failures=\"1\" skipped=\"1\""),
            "{xml}"
        );
        assert_eq!(xml.matches("<testsuite ").count(), 1);
        assert_eq!(
            xml.matches("<testcase ").count(),
            3,
            "one case per flow: {xml}"
        );
        assert_eq!(xml.matches("<failure ").count(), 1);
        assert!(xml.contains("message=\"step 2 assertText (total): did not hold&#10;expected: text equals &quot;3&quot;&#10;received: &quot;&lt;4&gt;&quot;\""), "{xml}");
        assert!(
            xml.contains("step 2 assertText (total): failed in 5.003 s — did not hold\n"),
            "{xml}"
        );
        assert!(xml.contains("step 3 click: skipped in 0.000 s\n"), "{xml}");
        assert!(xml.contains(
            "<skipped message=\"BLOCKED: Chromium was not found (fix: install chromium)\"/>"
        ));
        assert!(xml.contains("classname=\"c&amp;.jsonc\""));
        assert!(xml.contains("step 1 click: passed in 1.500 s\n"), "{xml}");
    }

    #[test]
    fn a_failed_run_without_a_failed_step_says_the_runs_reason() {
        let mut r = result("FAILED", serde_json::json!([]));
        r.reason = Some("the flow timed out before its first step".into());
        let xml = render(&[("t.jsonc", &r)]);
        assert!(
            xml.contains("<failure message=\"the flow timed out before its first step\""),
            "{xml}"
        );
    }
}
