//! The index over several runs (`index.html`): the tally, then one row per
//! run with its status, name, duration, first reason and a link to its
//! report.

use super::html::{escape, status_badge, Page};
use super::{human_ms, run_title};
use qa_core::result::{RunResult, RunStatus, StepStatus};
use std::fmt::Write as _;

/// One run listed in an index.
pub struct IndexEntry<'a> {
    /// The run.
    pub result: &'a RunResult,
    /// What the run is called in the list besides its flow name (the flow
    /// file it came from, or where its result was found); plain text.
    pub source: String,
    /// Relative link to its `report.html`, when it has one (already a URL
    /// path: see [`super::html::relative_href`]).
    pub report_href: Option<String>,
    /// Relative link to its `result.json`.
    pub result_href: Option<String>,
}

/// Renders the index page: `title` (plain text) and one row per entry, in
/// the order given. The row of entry *n* (1-based) has the id `run-n`.
pub fn render_index(title: &str, entries: &[IndexEntry<'_>]) -> String {
    let mut body = String::with_capacity(8192 + entries.len() * 512);
    let count = |s: RunStatus| entries.iter().filter(|e| e.result.status == s).count();
    let overall = if count(RunStatus::Failed) > 0 {
        RunStatus::Failed
    } else if count(RunStatus::Blocked) > 0 {
        RunStatus::Blocked
    } else {
        RunStatus::Passed
    };
    let _ = writeln!(
        body,
        "<header>\n<h1>{} <span class=\"title\">{}</span></h1>",
        if entries.is_empty() {
            String::new()
        } else {
            status_badge(overall)
        },
        escape(title)
    );
    let mut parts = Vec::new();
    for (s, word) in [
        (RunStatus::Passed, "passed"),
        (RunStatus::Failed, "failed"),
        (RunStatus::Blocked, "blocked"),
    ] {
        let n = count(s);
        if n > 0 {
            parts.push(format!("{n} {word}"));
        }
    }
    let total_ms: u64 = entries.iter().map(|e| e.result.duration_ms).sum();
    let _ = writeln!(
        body,
        "<p class=\"tally\" data-testid=\"tally\">{} run{}: {} · {} of run time</p>\n</header>",
        entries.len(),
        if entries.len() == 1 { "" } else { "s" },
        if parts.is_empty() {
            "none".to_string()
        } else {
            parts.join(", ")
        },
        human_ms(total_ms)
    );
    body.push_str("<section id=\"runs\">\n<table class=\"runs\">\n<thead><tr><th>Status</th><th>Flow</th><th>Steps</th><th>Duration</th><th>Started</th><th>Why</th><th>Report</th></tr></thead>\n<tbody>\n");
    for (i, e) in entries.iter().enumerate() {
        row(&mut body, i + 1, e);
    }
    body.push_str("</tbody>\n</table>\n</section>\n<footer>Written by ui-qa. Each report is self-contained; this page reaches no network.</footer>\n");
    Page {
        title: &format!("{title} — ui-qa"),
        wasm: false,
        head: "",
        body: &body,
        script: "",
    }
    .render()
}

/// `2026-12-03 15:18:55` for an RFC 3339 time stamp (to the second, UTC as
/// written); anything else as it is.
fn short_time(t: &str) -> std::borrow::Cow<'_, str> {
    match (t.get(..19), t.as_bytes().get(10)) {
        (Some(head), Some(b'T')) => head.replacen('T', " ", 1).into(),
        _ => t.into(),
    }
}

fn row(out: &mut String, n: usize, e: &IndexEntry<'_>) {
    let r = e.result;
    let passed = r
        .steps
        .iter()
        .filter(|s| s.status == StepStatus::Passed)
        .count();
    let mut why = r.reason.clone().unwrap_or_default();
    if r.timed_out {
        why = format!("timed out; {why}");
    }
    let name = run_title(r);
    let link = |href: &Option<String>, text: &str| {
        href.as_ref()
            .map(|h| format!("<a href=\"{}\">{text}</a>", escape(h)))
    };
    let links: Vec<String> = [
        link(&e.report_href, "report"),
        link(&e.result_href, "result.json"),
    ]
    .into_iter()
    .flatten()
    .collect();
    let _ = writeln!(
        out,
        "<tr id=\"run-{n}\" data-testid=\"run-{n}\" class=\"run run-{}\"><td>{}</td><td><strong>{}</strong><br><span class=\"source\">{}</span></td><td>{passed}/{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        r.status.as_str().to_ascii_lowercase(),
        status_badge(r.status),
        escape(name),
        escape(&e.source),
        r.steps.len(),
        human_ms(r.duration_ms),
        escape(&short_time(&r.started_at)),
        escape(&why),
        if links.is_empty() {
            "—".to_string()
        } else {
            links.join(" · ")
        }
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(status: &str, name: &str, reason: Option<&str>) -> RunResult {
        let mut v: serde_json::Value = serde_json::from_str(crate::report::MINIMAL_RESULT).unwrap();
        v["status"] = serde_json::json!(status);
        v["flowName"] = serde_json::json!(name);
        if let Some(r) = reason {
            v["reason"] = serde_json::json!(r);
        }
        v["steps"] = serde_json::json!([
            { "index": 1, "action": "click", "status": "passed", "durationMs": 5 },
            { "index": 2, "action": "assertText", "status": if status == "PASSED" { "passed" } else { "failed" }, "durationMs": 5 }
        ]);
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn the_index_tallies_and_links_every_run() {
        let a = result("PASSED", "login", None);
        let b = result(
            "FAILED",
            "<checkout>",
            Some("step 2 assertText failed: \"x\""),
        );
        let c = result("BLOCKED", "desktop", Some("no display"));
        let entries = vec![
            IndexEntry {
                result: &a,
                source: "flows/login.jsonc".into(),
                report_href: Some("runs/r1/report.html".into()),
                result_href: Some("runs/r1/result.json".into()),
            },
            IndexEntry {
                result: &b,
                source: "flows/checkout.jsonc".into(),
                report_href: None,
                result_href: Some("runs/r1-2/result.json".into()),
            },
            IndexEntry {
                result: &c,
                source: "flows/desktop.jsonc".into(),
                report_href: Some("runs/r3/report.html".into()),
                result_href: None,
            },
        ];
        let html = render_index("3 flows", &entries);
        assert!(
            html.contains("3 runs: 1 passed, 1 failed, 1 blocked"),
            "{html}"
        );
        assert!(html.contains("<h1><span class=\"status status-failed\">FAILED</span>"));
        assert!(html.contains("<a href=\"runs/r1/report.html\">report</a>"));
        assert!(html.contains("<a href=\"runs/r1-2/result.json\">result.json</a>"));
        assert!(html.contains("&lt;checkout&gt;") && !html.contains("<checkout>"));
        assert!(html.contains("step 2 assertText failed: &quot;x&quot;"));
        assert!(html.contains("<td>2/2</td>") && html.contains("<td>1/2</td>"));
        for n in 1..=3 {
            assert!(html.contains(&format!("id=\"run-{n}\"")));
        }
        assert!(html.contains("connect-src 'none'"));
        assert!(!html.contains("wasm-unsafe-eval"));
    }

    #[test]
    fn times_are_shown_to_the_second() {
        assert_eq!(
            short_time("2026-12-03T15:18:55.683968674Z"),
            "2026-12-03 15:18:55"
        );
        assert_eq!(short_time("yesterday"), "yesterday");
        assert_eq!(short_time("2026-12-03é15:18:55"), "2026-12-03é15:18:55");
    }

    #[test]
    fn an_empty_index_says_so() {
        let html = render_index("nothing", &[]);
        assert!(html.contains("0 runs: none"));
    }
}
