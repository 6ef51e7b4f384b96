//! Human output: progress per stage on stderr, and a summary with clickable
//! `file://` links.

use crate::drivers::CapabilityReport;
use qa_core::progress::{ProgressEvent, ProgressSink};
use qa_core::result::{ProbeResult, RunResult, RunStatus, StepStatus};
use qa_core::secrets::Secrets;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// Text from a flow (keys, values, file names, reasons that quote them) made
/// safe to show on a terminal: control characters (C0, DEL, C1) and the
/// bidirectional formatting characters are written as escapes (`\u{1b}`,
/// `\n`), so a flow can neither drive the reader's terminal nor disguise
/// what is printed.
pub fn clean(s: &str) -> Cow<'_, str> {
    fn unsafe_char(c: char) -> bool {
        // C0, DEL, C1; then the bidi marks, embeddings, overrides, isolates.
        c.is_control()
            || matches!(c as u32, 0x061C | 0x200E | 0x200F | 0x202A..=0x202E | 0x2066..=0x2069)
    }
    if !s.chars().any(unsafe_char) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if unsafe_char(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

fn clean_path(p: &Path) -> String {
    clean(&p.display().to_string()).into_owned()
}

/// Prints progress lines on stderr.
pub struct HumanProgress {
    flow: PathBuf,
    enabled: bool,
    tty: bool,
    prefix: Option<String>,
}

impl HumanProgress {
    /// A sink for one flow; `enabled` false keeps stderr quiet (used with --json).
    pub fn new(flow: &Path, enabled: bool) -> Self {
        use std::io::IsTerminal;
        HumanProgress {
            flow: flow.to_path_buf(),
            enabled,
            tty: std::io::stderr().is_terminal(),
            prefix: None,
        }
    }

    /// Prefixes every line with the flow's file name (several flows run at once).
    pub fn prefixed(mut self, on: bool) -> Self {
        if on {
            self.prefix = Some(
                self.flow
                    .file_name()
                    .map(|n| format!("[{}] ", clean(&n.to_string_lossy())))
                    .unwrap_or_default(),
            );
            // Overwriting a running line makes no sense with interleaved flows.
            self.tty = false;
        }
        self
    }
}

impl ProgressSink for HumanProgress {
    fn event(&self, ev: &ProgressEvent) {
        if !self.enabled {
            return;
        }
        match ev.event {
            "selected" => eprintln!(
                "ui-qa: {} -> {} ({})",
                clean_path(&self.flow),
                clean(ev.driver.as_deref().unwrap_or("?")),
                clean(ev.status.as_deref().unwrap_or("?"))
            ),
            "stageStart" => {
                // On a terminal, show the running stage until it ends (the end
                // line overwrites it); in logs, only end lines are printed.
                if let Some(s) = &ev.stage {
                    if self.tty && s != "select" {
                        eprint!("    .. {}\r", clean(s));
                    }
                }
            }
            "stageEnd" => {
                let status = ev.status.as_deref().unwrap_or("?");
                let mark = match status {
                    "passed" | "done" => "ok",
                    "skipped" => "--",
                    "blocked" => "BLOCKED",
                    "timedOut" => "TIMEOUT",
                    _ => "FAIL",
                };
                if self.tty {
                    eprint!("\x1b[2K");
                }
                eprintln!(
                    "{}  {mark:>4} {} ({} ms)",
                    self.prefix.as_deref().unwrap_or(""),
                    clean(ev.stage.as_deref().unwrap_or("?")),
                    ev.duration_ms.unwrap_or(0)
                );
            }
            _ => {}
        }
    }
}

/// Prints the run summary on stderr.
pub fn print_summary(flow: &Path, r: &RunResult, secrets: &Secrets) {
    let mut status = r.status.as_str().to_string();
    if r.timed_out {
        status.push_str(" (timed out)");
    }
    if r.cancelled {
        status.push_str(" (cancelled)");
    }
    eprintln!("{status}: {} in {} ms", clean_path(flow), r.duration_ms);
    if let Some(reason) = &r.reason {
        eprintln!("  reason: {}", clean(&secrets.redact(reason)));
    }
    for s in &r.steps {
        if s.status == StepStatus::Failed || s.status == StepStatus::TimedOut {
            // The run's reason usually already quotes the failing step.
            let repeated = |reason: &str| r.reason.as_deref().is_some_and(|x| x.contains(reason));
            if let Some(reason) = s.reason.as_deref().filter(|x| !repeated(x)) {
                eprintln!(
                    "  step {} {}: {}",
                    s.index,
                    clean(&s.action),
                    clean(&secrets.redact(reason))
                );
            }
        }
    }
    if let Some(h) = &r.blocked_handoff {
        eprintln!("  blocked: {}", clean(&secrets.redact(&h.reason)));
        for m in &h.missing_capabilities {
            eprintln!("  missing {}: {}", clean(&m.id), clean(&m.reason));
            eprintln!("    fix: {}", clean(&m.remediation));
        }
    }
    for o in r.observations.iter().take(20) {
        eprintln!("  note: {}", clean(&secrets.redact(&o.message)));
    }
    let all = r.artifacts.all();
    if !all.is_empty() {
        eprintln!("  evidence:");
        for a in all.iter().take(50) {
            eprintln!("    {}", a.uri);
        }
        if all.len() > 50 {
            eprintln!("    … and {} more", all.len() - 50);
        }
    }
    let dir = Path::new(&r.evidence_dir);
    eprintln!(
        "  cleanup: {} ({} ended, {} left)",
        match r.cleanup.status {
            qa_core::process::CleanupStatus::Clean => "clean",
            qa_core::process::CleanupStatus::Incomplete => "INCOMPLETE",
        },
        r.cleanup.ended.len(),
        r.cleanup.left.len()
    );
    eprintln!(
        "  result: {}",
        qa_core::evidence::file_uri(&dir.join("result.json"))
    );
    if r.status == RunStatus::Blocked {
        eprintln!(
            "  guide: ui-qa guide --backend {} --topic {}",
            r.selection.guide.backend, r.selection.guide.topic
        );
    }
}

/// Prints a probe result on stderr.
pub fn print_probe(p: &ProbeResult) {
    eprintln!("{}: {}", p.status, clean(&p.selection.platform_driver));
    eprintln!("  {}", clean(&p.selection.why_selected));
    for c in &p.selection.supported_capabilities {
        eprintln!("  have {}: {}", clean(&c.id), clean(&c.detail));
    }
    for m in &p.selection.missing_capabilities {
        eprintln!("  missing {}: {}", clean(&m.id), clean(&m.reason));
        eprintln!("    fix: {}", clean(&m.remediation));
    }
    eprintln!(
        "  guide: ui-qa guide --backend {} --topic {}",
        p.selection.guide.backend, p.selection.guide.topic
    );
}

/// Prints the capabilities report on stdout.
pub fn print_capabilities(r: &CapabilityReport) {
    println!("platform: {}", r.platform);
    for b in &r.backends {
        println!(
            "{}: {}",
            b.backend,
            if b.available { "available" } else { "blocked" }
        );
        for d in &b.drivers {
            println!("  {} {}", if d.available { "[x]" } else { "[ ]" }, d.driver);
            for c in &d.supported_capabilities {
                println!("      have {}: {}", c.id, c.detail);
            }
            for m in &d.missing_capabilities {
                println!(
                    "      missing {}: {} (fix: {})",
                    m.id, m.reason, m.remediation
                );
            }
            if d.available_with_virtual_display == Some(true) {
                println!("      available with --virtual-display");
            }
        }
    }
}

/// What host shutdown ended or could not end (orphans adopted while several
/// runs were active, so no single result could own them).
pub fn print_shutdown(r: &qa_core::process::CleanupReport) {
    for e in &r.ended {
        eprintln!("ui-qa: at exit, ended {} {} ({})", e.label, e.pid, e.how);
    }
    for l in &r.left {
        eprintln!(
            "ui-qa: at exit, could not end {} {}: {}",
            l.label, l.pid, l.reason
        );
    }
}

#[cfg(test)]
mod clean_tests {
    use super::clean;

    #[test]
    fn control_and_bidi_characters_are_escaped() {
        assert_eq!(clean("plain é ✓"), "plain é ✓");
        assert!(matches!(clean("plain"), std::borrow::Cow::Borrowed(_)));
        assert_eq!(
            clean("a\u{1b}[31mb\u{7}\u{0}\u{7f}\u{9b}\n\t\r\u{202e}\u{2066}"),
            r"a\u{1b}[31mb\u{7}\u{0}\u{7f}\u{9b}\n\t\r\u{202e}\u{2066}"
        );
    }
}
