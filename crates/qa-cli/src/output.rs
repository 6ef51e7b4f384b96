//! Human output: progress per stage on stderr, and a summary with clickable
//! `file://` links.

use crate::drivers::CapabilityReport;
use qa_core::progress::{ProgressEvent, ProgressSink};
use qa_core::result::{ProbeResult, RunResult, RunStatus, StepStatus};
use qa_core::secrets::Secrets;
use std::path::{Path, PathBuf};

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
                    .map(|n| format!("[{}] ", n.to_string_lossy()))
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
                self.flow.display(),
                ev.driver.as_deref().unwrap_or("?"),
                ev.status.as_deref().unwrap_or("?")
            ),
            "stageStart" => {
                // On a terminal, show the running stage until it ends (the end
                // line overwrites it); in logs, only end lines are printed.
                if let Some(s) = &ev.stage {
                    if self.tty && s != "select" {
                        eprint!("    .. {s}\r");
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
                    ev.stage.as_deref().unwrap_or("?"),
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
    eprintln!("{status}: {} in {} ms", flow.display(), r.duration_ms);
    if let Some(reason) = &r.reason {
        eprintln!("  reason: {}", secrets.redact(reason));
    }
    for s in &r.steps {
        if s.status == StepStatus::Failed || s.status == StepStatus::TimedOut {
            // The run's reason usually already quotes the failing step.
            let repeated = |reason: &str| r.reason.as_deref().is_some_and(|x| x.contains(reason));
            if let Some(reason) = s.reason.as_deref().filter(|x| !repeated(x)) {
                eprintln!(
                    "  step {} {}: {}",
                    s.index,
                    s.action,
                    secrets.redact(reason)
                );
            }
        }
    }
    if let Some(h) = &r.blocked_handoff {
        eprintln!("  blocked: {}", secrets.redact(&h.reason));
        for m in &h.missing_capabilities {
            eprintln!("  missing {}: {}", m.id, m.reason);
            eprintln!("    fix: {}", m.remediation);
        }
    }
    for o in r.observations.iter().take(20) {
        eprintln!("  note: {}", secrets.redact(&o.message));
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
    eprintln!("{}: {}", p.status, p.selection.platform_driver);
    eprintln!("  {}", p.selection.why_selected);
    for c in &p.selection.supported_capabilities {
        eprintln!("  have {}: {}", c.id, c.detail);
    }
    for m in &p.selection.missing_capabilities {
        eprintln!("  missing {}: {}", m.id, m.reason);
        eprintln!("    fix: {}", m.remediation);
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
