//! JUnit XML for CI systems: one `<testsuite>` per run, one `<testcase>`
//! per step. Failed and timed-out steps are failures; BLOCKED runs' steps
//! are skipped with the handoff as the message.

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

/// Renders runs as JUnit XML. Each run comes with its source (the flow
/// file, or where its result was found): the testcases' `classname`, and
/// the suite's name when the flow has none.
pub fn render(results: &[(&str, &RunResult)]) -> String {
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let total: usize = results.iter().map(|(_, r)| r.steps.len()).sum();
    let failures: usize = results
        .iter()
        .map(|(_, r)| r.steps.iter().filter(|s| failed(s.status)).count())
        .sum();
    let skipped_all: usize = results
        .iter()
        .map(|(_, r)| {
            r.steps
                .iter()
                .filter(|s| s.status == StepStatus::Skipped)
                .count()
        })
        .sum();
    let _ = writeln!(
        x,
        "<testsuites name=\"ui-qa\" tests=\"{total}\" failures=\"{failures}\" skipped=\"{skipped_all}\">"
    );
    for (source, r) in results {
        let name = r.flow_name.as_deref().unwrap_or(source);
        let fails = r.steps.iter().filter(|s| failed(s.status)).count();
        let skipped = r
            .steps
            .iter()
            .filter(|s| s.status == StepStatus::Skipped)
            .count();
        let _ = writeln!(
            x,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{fails}\" skipped=\"{skipped}\" time=\"{}\" timestamp=\"{}\">",
            esc(name),
            r.steps.len(),
            secs(r.duration_ms),
            esc(&r.started_at)
        );
        let _ = writeln!(
            x,
            "    <properties><property name=\"status\" value=\"{}\"/><property name=\"driver\" value=\"{}\"/><property name=\"runId\" value=\"{}\"/><property name=\"evidenceDir\" value=\"{}\"/></properties>",
            r.status.as_str(),
            esc(&r.selection.platform_driver),
            esc(&r.run_id),
            esc(&r.evidence_dir)
        );
        for s in &r.steps {
            let case = match &s.name {
                Some(n) => format!("step {} {} ({n})", s.index, s.action),
                None => format!("step {} {}", s.index, s.action),
            };
            let _ = write!(
                x,
                "    <testcase classname=\"{}\" name=\"{}\" time=\"{}\"",
                esc(source),
                esc(&case),
                secs(s.duration_ms)
            );
            match s.status {
                StepStatus::Passed => x.push_str("/>\n"),
                StepStatus::Failed | StepStatus::TimedOut => {
                    let mut msg = s.reason.clone().unwrap_or_default();
                    if let Some(m) = &s.failure {
                        if let Some(e) = &m.expected {
                            let _ = write!(msg, "\nexpected: {e}");
                        }
                        if let Some(g) = &m.received {
                            let _ = write!(msg, "\nreceived: {g}");
                        }
                    }
                    let _ = writeln!(
                        x,
                        ">\n      <failure message=\"{}\" type=\"{}\"/>\n    </testcase>",
                        esc(msg.trim_start()),
                        esc(r.reason_code.as_deref().unwrap_or("failed"))
                    );
                }
                StepStatus::Skipped => {
                    let msg = if r.status == RunStatus::Blocked {
                        let h = r.blocked_handoff.as_ref();
                        format!(
                            "BLOCKED: {} (fix: {})",
                            h.map(|h| h.reason.as_str()).unwrap_or(""),
                            h.map(|h| h.remediation.as_str()).unwrap_or("")
                        )
                    } else {
                        "not reached".to_string()
                    };
                    let _ = writeln!(
                        x,
                        ">\n      <skipped message=\"{}\"/>\n    </testcase>",
                        esc(&msg)
                    );
                }
            }
        }
        x.push_str("  </testsuite>\n");
    }
    x.push_str("</testsuites>\n");
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
    fn one_suite_per_run_one_case_per_step() {
        let pass = result(
            "PASSED",
            serde_json::json!([{ "index": 1, "action": "click", "status": "passed", "durationMs": 1500 }]),
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
            xml.contains("<testsuites name=\"ui-qa\" tests=\"5\" failures=\"1\" skipped=\"2\">"),
            "{xml}"
        );
        assert_eq!(xml.matches("<testsuite ").count(), 3);
        assert_eq!(xml.matches("<testcase ").count(), 5);
        assert!(xml.contains("name=\"step 2 assertText (total)\""));
        assert!(xml.contains("message=\"did not hold&#10;expected: text equals &quot;3&quot;&#10;received: &quot;&lt;4&gt;&quot;\""), "{xml}");
        assert!(xml.contains("<skipped message=\"not reached\"/>"));
        assert!(xml.contains(
            "<skipped message=\"BLOCKED: Chromium was not found (fix: install chromium)\"/>"
        ));
        assert!(xml.contains("classname=\"c&amp;.jsonc\""));
        assert!(xml.contains("time=\"1.500\""));
    }
}
