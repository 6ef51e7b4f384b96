//! JUnit XML for CI systems: one `<testsuite>` per flow, one `<testcase>`
//! per step. BLOCKED flows are reported as skipped with the handoff.

use qa_core::result::{RunResult, RunStatus, StepStatus};
use std::fmt::Write as _;
use std::path::Path;

fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => {}
            c => out.push(c),
        }
    }
    out
}

fn secs(ms: u64) -> String {
    format!("{:.3}", ms as f64 / 1000.0)
}

/// Renders the results of one `ui-qa run` as JUnit XML.
pub fn render(results: &[(&Path, &RunResult)]) -> String {
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let total: usize = results.iter().map(|(_, r)| r.steps.len()).sum();
    let failures: usize = results
        .iter()
        .map(|(_, r)| {
            r.steps
                .iter()
                .filter(|s| matches!(s.status, StepStatus::Failed | StepStatus::TimedOut))
                .count()
        })
        .sum();
    let _ = writeln!(
        x,
        "<testsuites name=\"ui-qa\" tests=\"{total}\" failures=\"{failures}\">"
    );
    for (path, r) in results {
        let name = r
            .flow_name
            .clone()
            .unwrap_or_else(|| path.display().to_string());
        let fails = r
            .steps
            .iter()
            .filter(|s| matches!(s.status, StepStatus::Failed | StepStatus::TimedOut))
            .count();
        let skipped = r
            .steps
            .iter()
            .filter(|s| s.status == StepStatus::Skipped)
            .count();
        let _ = writeln!(
            x,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{fails}\" skipped=\"{skipped}\" time=\"{}\" timestamp=\"{}\">",
            esc(&name),
            r.steps.len(),
            secs(r.duration_ms),
            esc(&r.started_at)
        );
        let _ = writeln!(
            x,
            "    <properties><property name=\"status\" value=\"{}\"/><property name=\"driver\" value=\"{}\"/><property name=\"evidenceDir\" value=\"{}\"/></properties>",
            r.status.as_str(),
            esc(&r.selection.platform_driver),
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
                esc(&path.display().to_string()),
                esc(&case),
                secs(s.duration_ms)
            );
            match s.status {
                StepStatus::Passed => x.push_str("/>\n"),
                StepStatus::Failed | StepStatus::TimedOut => {
                    let msg = s.reason.clone().unwrap_or_default();
                    let _ = writeln!(
                        x,
                        ">\n      <failure message=\"{}\" type=\"{}\"/>\n    </testcase>",
                        esc(&msg),
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

/// Writes the report to `path` readable by its owner only (0600 whatever
/// the umask; an existing file is truncated and made private); a symlink at
/// `path` is refused, never followed.
pub fn write_private(path: &std::path::Path, xml: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    let mut f = o.open(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    f.write_all(xml.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::esc;

    #[test]
    fn escapes_markup_and_control_characters() {
        assert_eq!(esc("a<b>&\"'\u{1}c"), "a&lt;b&gt;&amp;&quot;&apos;c");
    }
}
