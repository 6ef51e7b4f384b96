//! `report.html`: one run as a self-contained page — status, why this
//! driver, the blocked handoff, the steps with their failures, the video
//! with the steps as markers, the terminal replay, screenshots, screen
//! captures, accessibility trees, observations, cleanup and a link to every
//! raw artifact.

use super::files;
use super::html::{escape, status_badge, Page};
use super::media::{self, step_status};
use super::{human_ms, replay, run_title, tree, MAX_CAPTURE_BYTES, MAX_INLINE_CAPTURES};
use qa_core::mismatch::Mismatch;
use qa_core::process::CleanupStatus;
use qa_core::result::{RunResult, RunStatus, StepRecord, StepStatus};
use std::fmt::Write as _;
use std::path::Path;

/// The report's own script: embedded videos, Play buttons and time labels,
/// markers that seek, and the terminal replay players.
const SCRIPT: &str = include_str!("../../assets/report/report.js");

/// Renders the report of one run. `run_dir` is where the run directory is
/// now (the result's `evidenceDir` may name where it was when the run
/// went, e.g. on a CI machine); artifact files are read from there,
/// bounded, never through a symlink, and only when they still have the
/// digest the result names.
pub fn render_run(r: &RunResult, run_dir: &Path) -> String {
    let parts = Parts::of(r, run_dir);
    parts.page(&parts.title, &parts.body)
}

/// Why a report was not written.
pub const REPORT_WITHHELD: &str = "it would show a secret value in a form that cannot be redacted (the run's other evidence and result.json are kept)";

/// The note of a report whose own style or script held a secret's text.
pub const REPORT_STATIC_REDACTED: &str = "report.html: a registered secret is also text of the report's own style or script, which was redacted too; the page may look or behave differently";

/// A report made clean for a run's secrets ([`render_run_redacted`]).
pub struct CleanReport {
    /// The page.
    pub html: String,
    /// Set when the page's own style or script had to be redacted too.
    pub note: Option<&'static str>,
}

/// [`render_run`] made clean for `secrets`: every piece of run data in the
/// page (its title and body: steps, replays, trees, captures) is redacted
/// first, so a secret shown by the run never takes the report away. When a
/// secret is also text of the page's own style or script (`auto` in
/// `margin: auto`), that is redacted too and [`CleanReport::note`] says so:
/// no file holds a secret's bytes. `Err` with the reason when a secret
/// would still be shown (a form redaction cannot rewrite, or a secret that
/// redaction itself writes); nothing may be written then.
pub fn render_run_redacted(
    r: &RunResult,
    run_dir: &Path,
    secrets: &qa_core::secrets::Secrets,
) -> Result<CleanReport, &'static str> {
    let parts = Parts::of(r, run_dir);
    let title = secrets.redact(&parts.title);
    let body = secrets.redact(&parts.body);
    let mut html = parts.page(&title, &body);
    let mut note = None;
    if secrets.found_in(html.as_bytes()) {
        html = secrets.redact(&html).into_owned();
        note = Some(REPORT_STATIC_REDACTED);
    }
    if secrets.found_in(html.as_bytes()) {
        return Err(REPORT_WITHHELD);
    }
    Ok(CleanReport { html, note })
}

/// A run report before it is assembled into a page.
struct Parts {
    title: String,
    body: String,
    head: String,
    script: String,
    wasm: bool,
}

impl Parts {
    fn of(r: &RunResult, run_dir: &Path) -> Parts {
        let mut body = String::with_capacity(64 << 10);
        header(&mut body, r);
        selection(&mut body, r);
        blocked(&mut body, r);
        steps(&mut body, r, run_dir);
        media::videos(&mut body, r, run_dir);
        let replays = replay::replays(&mut body, r, run_dir);
        media::screenshots(&mut body, r, run_dir);
        captures(&mut body, r, run_dir);
        tree::snapshots(&mut body, r, run_dir);
        observations(&mut body, r);
        cleanup(&mut body, r);
        artifacts(&mut body, r);
        body.push_str("<footer>Written by ui-qa from <a href=\"result.json\">result.json</a>. This page is self-contained and reaches no network.</footer>\n");

        let mut head = String::new();
        let mut script = String::new();
        if replays.embedded {
            let _ = writeln!(head, "<style>\n{}</style>", replay::PLAYER_CSS);
            script.push_str(replay::PLAYER_JS);
            script.push('\n');
        }
        script.push_str(SCRIPT);
        Parts {
            title: format!("{} · {} — ui-qa", r.status.as_str(), run_title(r)),
            body,
            head,
            script,
            wasm: replays.embedded,
        }
    }

    fn page(&self, title: &str, body: &str) -> String {
        Page {
            title,
            wasm: self.wasm,
            head: &self.head,
            body,
            script: &self.script,
        }
        .render()
    }
}

fn header(out: &mut String, r: &RunResult) {
    let _ = writeln!(
        out,
        "<header>\n<h1>{} <span class=\"title\">{}</span></h1>",
        status_badge(r.status),
        escape(run_title(r))
    );
    out.push_str("<dl class=\"facts\">\n");
    let mut status = r.status.as_str().to_string();
    if r.timed_out {
        status.push_str(" (timed out)");
    }
    if r.cancelled {
        status.push_str(" (cancelled)");
    }
    fact(out, "Status", &status, Some("run-status"));
    if let Some(reason) = &r.reason {
        fact(out, "Reason", reason, Some("run-reason"));
    }
    if let Some(code) = &r.reason_code {
        fact(out, "Code", code, None);
    }
    if r.status != RunStatus::Passed {
        fact(out, "Stage", &r.stage, None);
    }
    fact(out, "Duration", &human_ms(r.duration_ms), None);
    fact(out, "Started", &r.started_at, None);
    fact(out, "Run", &r.run_id, None);
    out.push_str("</dl>\n</header>\n");
}

/// One `<dt>`/`<dd>` pair, the value escaped.
fn fact(out: &mut String, name: &str, value: &str, testid: Option<&str>) {
    let attr = testid
        .map(|t| format!(" data-testid=\"{t}\""))
        .unwrap_or_default();
    let _ = writeln!(out, "<dt>{name}</dt><dd{attr}>{}</dd>", escape(value));
}

fn selection(out: &mut String, r: &RunResult) {
    let s = &r.selection;
    out.push_str("<section id=\"selection\">\n<h2>Selection</h2>\n<dl class=\"facts\">\n");
    fact(out, "Why", &s.why_selected, Some("why-selected"));
    fact(out, "Driver", &s.platform_driver, None);
    if let Some(p) = &s.presentation {
        fact(out, "Presentation", p, None);
    }
    fact(out, "Backend", s.selected_backend.as_str(), None);
    fact(out, "Platform", s.platform.as_str(), None);
    fact(
        out,
        "Guide",
        &format!(
            "ui-qa guide --backend {} --topic {}",
            s.guide.backend, s.guide.topic
        ),
        None,
    );
    out.push_str("</dl>\n");
    if !s.missing_capabilities.is_empty() {
        out.push_str("<h3>Missing here</h3>\n<ul>\n");
        for m in &s.missing_capabilities {
            let _ = writeln!(
                out,
                "<li><code>{}</code>: {} — fix: {}</li>",
                escape(&m.id),
                escape(&m.reason),
                escape(&m.remediation)
            );
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</section>\n");
}

fn blocked(out: &mut String, r: &RunResult) {
    let Some(h) = &r.blocked_handoff else {
        return;
    };
    out.push_str("<section id=\"blocked\" class=\"handoff\">\n<h2>Blocked: what a person must do</h2>\n<dl class=\"facts\">\n");
    fact(out, "Reason", &h.reason, Some("blocked-reason"));
    fact(
        out,
        "Remediation",
        &h.remediation,
        Some("blocked-remediation"),
    );
    fact(out, "Driver", &h.platform_driver, None);
    fact(
        out,
        "Kind",
        match h.reason_code {
            qa_core::result::BlockedReasonCode::MissingCapability => {
                "missing capability: ui-qa could not look"
            }
            qa_core::result::BlockedReasonCode::TargetUnobservable => {
                "the target never became observable"
            }
            qa_core::result::BlockedReasonCode::NothingToCheck => "nothing to check",
            qa_core::result::BlockedReasonCode::AuthProvideCredentials => {
                "auth: a person must provide credentials"
            }
            qa_core::result::BlockedReasonCode::AuthUpdateRequired => {
                "auth: a person must update the profile"
            }
            qa_core::result::BlockedReasonCode::AuthFileRefused => "auth: the auth file is refused",
        },
        None,
    );
    out.push_str("</dl>\n");
    if !h.missing_capabilities.is_empty() {
        out.push_str("<ul>\n");
        for m in &h.missing_capabilities {
            let _ = writeln!(
                out,
                "<li><code>{}</code>: {}<br>fix: {}</li>",
                escape(&m.id),
                escape(&m.reason),
                escape(&m.remediation)
            );
        }
        out.push_str("</ul>\n");
    }
    out.push_str("<p>Nothing was installed or reconfigured: ui-qa never changes the host itself.</p>\n</section>\n");
}

fn steps(out: &mut String, r: &RunResult, run_dir: &Path) {
    let _ = writeln!(
        out,
        "<section id=\"steps\">\n<h2>Steps <span class=\"count\">{}</span></h2>",
        r.steps.len()
    );
    if r.steps.is_empty() {
        out.push_str("<p>No step ran.</p>\n</section>\n");
        return;
    }
    out.push_str("<table class=\"steps\">\n<thead><tr><th>#</th><th>Action</th><th>Name</th><th>Status</th><th>Started</th><th>Duration</th><th>Detail</th></tr></thead>\n<tbody>\n");
    let mut budget = super::MAX_INLINE_TRACE_TOTAL;
    for s in &r.steps {
        step_row(out, r, s);
        // The step trace's before and after pictures, beside their step.
        let mut pictures = String::new();
        media::step_pictures(&mut pictures, r, run_dir, s.index, &mut budget);
        if !pictures.is_empty() {
            let _ = writeln!(
                out,
                "<tr class=\"pictures-row\" data-testid=\"step-{}-pictures\"><td></td><td colspan=\"6\">{pictures}</td></tr>",
                s.index
            );
        }
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
}

fn step_row(out: &mut String, r: &RunResult, s: &StepRecord) {
    let status = step_status(s.status);
    let class = status.replace(' ', "-");
    let started = s
        .started_ms
        .map(|ms| format!("{:.1} s", ms as f64 / 1000.0))
        .unwrap_or_default();
    let detail = match (s.status, &s.reason, &s.detail) {
        (StepStatus::Failed | StepStatus::TimedOut, Some(reason), _) => reason.as_str(),
        (_, _, Some(d)) => d.as_str(),
        (_, Some(reason), None) => reason.as_str(),
        _ => "",
    };
    // What it acted on and with what, as the flow wrote it, and where.
    let mut what = String::new();
    if let Some(l) = &s.locator {
        let _ = write!(what, " <span class=\"locator\">{}</span>", escape(l));
    }
    if let Some(v) = &s.value {
        let _ = write!(what, " <span class=\"value\">{}</span>", escape(v));
    }
    if let Some(n) = s.line {
        let _ = write!(
            what,
            " <a class=\"line\" href=\"flow.jsonc\" title=\"the step in the flow file\">flow.jsonc:{n}</a>"
        );
    }
    let _ = writeln!(
        out,
        "<tr id=\"step-{i}\" data-testid=\"step-{i}\" class=\"step step-{class}\"><td>{i}</td><td><code>{}</code>{what}</td><td>{}</td><td><span class=\"step-status\">{status}</span></td><td>{started}</td><td>{}</td><td>{}</td></tr>",
        escape(&s.action),
        escape(s.name.as_deref().unwrap_or("")),
        human_ms(s.duration_ms),
        escape(detail),
        i = s.index,
    );
    if let Some(m) = &s.failure {
        let attempts = r
            .assertions
            .iter()
            .find(|a| a.step == s.index && !a.passed)
            .map(|a| a.attempts);
        let _ = write!(
            out,
            "<tr class=\"failure-row\"><td></td><td colspan=\"6\"><div class=\"failure\" id=\"failure-{i}\" data-testid=\"failure-{i}\" role=\"group\" aria-label=\"step {i} failure\">",
            i = s.index
        );
        mismatch(out, m, attempts);
        out.push_str("</div></td></tr>\n");
    }
}

/// Expected / Received / Locator and the candidate elements.
fn mismatch(out: &mut String, m: &Mismatch, attempts: Option<u32>) {
    out.push_str("<dl>");
    if let Some(e) = &m.expected {
        let _ = write!(
            out,
            "<dt>Expected</dt><dd class=\"expected\">{}</dd>",
            escape(e)
        );
    }
    if let Some(x) = &m.received {
        let _ = write!(
            out,
            "<dt>Received</dt><dd class=\"received\">{}</dd>",
            escape(x)
        );
    }
    if let Some(l) = &m.locator {
        let _ = write!(out, "<dt>Locator</dt><dd><code>{}</code></dd>", escape(l));
    }
    if let Some(n) = attempts {
        let _ = write!(out, "<dt>Attempts</dt><dd>{n}</dd>");
    }
    out.push_str("</dl>");
    if m.candidates.is_empty() {
        return;
    }
    let of = m.candidates_of();
    let what = if m.candidates_matched() {
        "Matched"
    } else {
        "Closest elements"
    };
    let _ = write!(
        out,
        "<p class=\"candidates-title\">{what}{of}</p><ul class=\"candidates\">"
    );
    for c in &m.candidates {
        let _ = write!(out, "<li>{}", escape(&c.describe()));
        if let Some(l) = &c.locator {
            let _ = write!(out, " <code>{}</code>", escape(l));
        }
        out.push_str("</li>");
    }
    out.push_str("</ul>");
}

/// Text captures of the terminal screen, shown inline (bounded).
fn captures(out: &mut String, r: &RunResult, run_dir: &Path) {
    let caps = &r.artifacts.terminal_captures;
    if caps.is_empty() {
        return;
    }
    out.push_str("<section id=\"captures\">\n<h2>Screen captures</h2>\n");
    for (i, a) in caps.iter().enumerate() {
        let Some(p) = files::place(r, a) else {
            let _ = writeln!(
                out,
                "<p>{} (outside the run directory)</p>",
                escape(&files::file_name(a))
            );
            continue;
        };
        let step = a.step.map(|s| format!(" · step {s}")).unwrap_or_default();
        let shown = if i < MAX_INLINE_CAPTURES && p.has_ext("txt") {
            Some(files::read(run_dir, &p, MAX_CAPTURE_BYTES))
        } else {
            None
        };
        let _ = writeln!(
            out,
            "<details class=\"capture\"{}><summary><a href=\"{}\">{}</a>{}</summary>",
            if i == 0 { " open" } else { "" },
            p.href,
            escape(&p.name),
            escape(&step)
        );
        match shown {
            Some(Ok(b)) => {
                let _ = writeln!(
                    out,
                    "<pre class=\"screen\">{}</pre>",
                    escape(&String::from_utf8_lossy(&b))
                );
            }
            Some(Err(why)) => {
                let _ = writeln!(out, "<p class=\"unshown\">{}</p>", why.says());
            }
            None => {}
        }
        out.push_str("</details>\n");
    }
    out.push_str("</section>\n");
}

fn observations(out: &mut String, r: &RunResult) {
    if r.observations.is_empty() {
        return;
    }
    out.push_str("<section id=\"observations\">\n<h2>Observations</h2>\n<ul class=\"notes\">\n");
    for o in &r.observations {
        let kind = serde_json::to_value(o.kind)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let step = o.step.map(|s| format!("step {s} · ")).unwrap_or_default();
        let _ = writeln!(
            out,
            "<li><span class=\"kind\">{}{}</span> {}</li>",
            escape(&step),
            escape(&kind),
            escape(&o.message)
        );
    }
    out.push_str("</ul>\n</section>\n");
}

fn cleanup(out: &mut String, r: &RunResult) {
    let c = &r.cleanup;
    let status = match c.status {
        CleanupStatus::Clean => "clean",
        CleanupStatus::Incomplete => "INCOMPLETE",
    };
    let _ = writeln!(
        out,
        "<section id=\"cleanup\">\n<h2>Cleanup</h2>\n<p data-testid=\"cleanup-status\">Cleanup: <strong class=\"cleanup-{status}\">{status}</strong> — {} ended, {} left.</p>",
        c.ended.len(),
        c.left.len()
    );
    if !c.ended.is_empty() {
        out.push_str("<table class=\"plain\">\n<thead><tr><th>Process</th><th>pid</th><th>How it ended</th></tr></thead>\n<tbody>\n");
        for e in &c.ended {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&e.label),
                e.pid,
                e.how
            );
        }
        out.push_str("</tbody>\n</table>\n");
    }
    if !c.left.is_empty() {
        out.push_str("<h3>Left running</h3>\n<ul>\n");
        for l in &c.left {
            let _ = writeln!(
                out,
                "<li>{} {}: {}</li>",
                escape(&l.label),
                l.pid,
                escape(&l.reason)
            );
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</section>\n");
}

fn artifacts(out: &mut String, r: &RunResult) {
    out.push_str("<section id=\"artifacts\">\n<h2>Artifacts</h2>\n<p class=\"run-files\"><a href=\"result.json\">result.json</a> · <a href=\"flow.jsonc\">flow.jsonc</a> · <a href=\"progress.jsonl\">progress.jsonl</a></p>\n");
    let a = &r.artifacts;
    let groups = [
        ("screenshots", &a.screenshots),
        ("videos", &a.videos),
        ("traces", &a.traces),
        ("terminal captures", &a.terminal_captures),
        ("accessibility snapshots", &a.accessibility_snapshots),
        ("observations", &a.observations),
        ("downloads", &a.downloads),
        ("logs", &a.logs),
    ];
    if groups.iter().any(|(_, g)| !g.is_empty()) {
        out.push_str("<table class=\"plain artifacts\">\n<thead><tr><th>Group</th><th>File</th><th>Bytes</th><th>Step</th><th>SHA-256</th></tr></thead>\n<tbody>\n");
        for (group, list) in groups {
            for item in list {
                let file = match files::place(r, item) {
                    Some(p) => format!("<a href=\"{}\">{}</a>", p.href, escape(&p.name)),
                    None => escape(&item.path),
                };
                let _ = writeln!(
                    out,
                    "<tr><td>{group}</td><td>{file}</td><td>{}</td><td>{}</td><td><code title=\"{sha}\">{}</code></td></tr>",
                    item.bytes,
                    item.step.map(|s| s.to_string()).unwrap_or_default(),
                    escape(item.sha256.get(..12).unwrap_or(&item.sha256)),
                    sha = escape(&item.sha256),
                );
            }
        }
        out.push_str("</tbody>\n</table>\n");
    } else {
        out.push_str("<p>No artifacts.</p>\n");
    }
    if !a.withheld.is_empty() {
        out.push_str("<h3>Withheld</h3>\n<ul>\n");
        for w in &a.withheld {
            let _ = writeln!(out, "<li>{}: {}</li>", escape(&w.name), escape(&w.reason));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::Digest;

    fn result(patch: serde_json::Value) -> RunResult {
        let mut v: serde_json::Value = serde_json::from_str(crate::report::MINIMAL_RESULT).unwrap();
        for (k, x) in patch.as_object().unwrap() {
            v[k] = x.clone();
        }
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn the_script_cannot_close_or_confuse_its_element() {
        let s = SCRIPT.to_ascii_lowercase();
        for bad in ["<script", "</script", "<!--"] {
            assert!(!s.contains(bad), "{bad}");
        }
    }

    const HOSTILE: &str = "<img src=x onerror=alert(1)>\"'&";

    #[test]
    fn every_string_from_the_result_is_escaped() {
        let r = result(serde_json::json!({
            "status": "FAILED",
            "flowName": HOSTILE,
            "reason": HOSTILE,
            "steps": [{ "index": 1, "action": "assertText", "name": HOSTILE, "status": "failed",
                        "startedMs": 10, "durationMs": 5003, "reason": HOSTILE,
                        "failure": { "expected": HOSTILE, "received": HOSTILE, "locator": HOSTILE,
                                     "candidates": [{ "role": "button", "name": HOSTILE, "locator": HOSTILE }] } }],
            "observations": [{ "kind": "step", "step": 1, "message": HOSTILE }],
            "cleanup": { "status": "incomplete", "ended": [{ "pid": 1, "label": HOSTILE, "how": "SIGTERM" }],
                         "left": [{ "pid": 2, "label": HOSTILE, "reason": HOSTILE }] }
        }));
        let html = render_run(&r, Path::new("/nonexistent"));
        assert!(!html.contains("<img src=x"), "raw markup from data");
        assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;"));
        assert!(html.contains("<dt>Expected</dt>"));
        assert!(html.contains("<dt>Received</dt>"));
        assert!(html.contains("connect-src 'none'"));
        // No player (and no WebAssembly) without a replay.
        assert!(!html.contains("var AsciinemaPlayer=") && !html.contains("wasm-unsafe-eval"));
    }

    #[test]
    fn a_run_directory_renders_inline_and_links_everything() {
        let t = tempfile::tempdir().unwrap();
        let run = t.path().join("r1");
        let put = |rel: &str, bytes: &[u8]| {
            let p = run.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, bytes).unwrap();
            serde_json::json!({
                "path": p.display().to_string(), "uri": "", "bytes": bytes.len(),
                "sha256": hex::encode(sha2::Sha256::digest(bytes)), "step": 1, "startedMs": 100
            })
        };
        let png = put("artifacts/screenshots/shot.png", b"\x89PNG\r\n\x1a\nrest");
        let webm = put("artifacts/videos/run.webm", b"\x1a\x45\xdf\xa3webm");
        let cast = put(
            "artifacts/videos/terminal.cast",
            b"{\"version\":2,\"width\":80,\"height\":24}\n[0.5,\"o\",\"REPLAY </script>\\r\\n\"]\n",
        );
        let ax = put(
            "artifacts/accessibility/ax.json",
            br#"{"nodes":[{"role":"button","name":"Save"}]}"#,
        );
        let txt = put("artifacts/terminal/screen.txt", b"$ echo <hi>\n<hi>\n");
        let r = result(serde_json::json!({
            "evidenceDir": run.display().to_string(),
            "steps": [{ "index": 1, "action": "click", "name": "save", "status": "passed",
                        "startedMs": 1300, "durationMs": 120 }],
            "artifacts": { "screenshots": [png], "videos": [webm, cast], "traces": [],
                           "terminalCaptures": [txt], "accessibilitySnapshots": [ax],
                           "observations": [], "downloads": [], "logs": [] }
        }));
        let html = render_run(&r, &run);
        assert!(html.contains("src=\"data:image/png;base64,iVBORw0KGgpyZXN0\""));
        assert!(html.contains("href=\"artifacts/screenshots/shot.png\""));
        assert!(html.contains("id=\"video-play\"") && html.contains("id=\"video-time\""));
        assert!(html.contains("data-mime=\"video/webm\">GkXfo3dlYm0=</script>"));
        // The step started 1.2 s after the video's first frame.
        assert!(html.contains("data-seek-ms=\"1200\""), "{html}");
        assert!(html.contains("id=\"replay\""));
        assert!(html.contains("wasm-unsafe-eval"));
        assert!(
            html.contains("REPLAY \\u003c/script\\u003e"),
            "the cast cannot close its script"
        );
        assert!(html.contains("button &quot;Save&quot;"));
        assert!(html.contains("$ echo &lt;hi&gt;"));
        assert!(html.contains("href=\"artifacts/accessibility/ax.json\""));
        assert_eq!(
            html.matches("</script>").count(),
            html.matches("<script").count()
        );
    }

    #[test]
    fn screenshots_beyond_the_bound_are_linked() {
        let t = tempfile::tempdir().unwrap();
        let run = t.path().join("r1");
        std::fs::create_dir_all(run.join("artifacts/screenshots")).unwrap();
        let mut shots = Vec::new();
        for i in 0..25 {
            let bytes = b"\x89PNG\r\n\x1a\nx";
            let p = run.join(format!("artifacts/screenshots/s{i}.png"));
            std::fs::write(&p, bytes).unwrap();
            shots.push(serde_json::json!({
                "path": p.display().to_string(), "uri": "", "bytes": bytes.len(),
                "sha256": hex::encode(sha2::Sha256::digest(bytes))
            }));
        }
        let r = result(serde_json::json!({
            "evidenceDir": run.display().to_string(),
            "artifacts": { "screenshots": shots, "videos": [], "traces": [], "terminalCaptures": [],
                           "accessibilitySnapshots": [], "observations": [], "downloads": [], "logs": [] }
        }));
        let html = render_run(&r, &run);
        assert_eq!(
            html.matches("data:image/png;base64,").count(),
            crate::report::MAX_INLINE_SCREENSHOTS
        );
        assert!(html.contains("href=\"artifacts/screenshots/s24.png\""));
    }
}
