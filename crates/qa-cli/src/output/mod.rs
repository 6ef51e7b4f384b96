//! Human output on stderr: progress per stage ([`progress`]), the summary
//! of each run with Expected / Received for a failed step ([`summary`]),
//! the tally over several flows ([`tally`]), colour only on a terminal
//! ([`style`]); and the probe and capabilities reports.

mod progress;
mod style;
mod summary;
mod tally;
#[cfg(test)]
mod tests;

pub use progress::HumanProgress;
pub use style::Paint;
pub use summary::render_summary;
pub use tally::render_tally;

use crate::drivers::CapabilityReport;
use qa_core::result::ProbeResult;
use std::borrow::Cow;
use std::path::Path;

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

/// A message of several lines (a regex error: the pattern, then `^` under
/// the offending characters) as [`clean`] lines. A line of only spaces and
/// `^` is widened with the line above it, so the caret stays under its
/// character where the line above shows an escape (`\t`) in place of one.
pub fn clean_lines(s: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut above: Option<&str> = None;
    for line in s.split('\n') {
        let carets = line.contains('^') && line.chars().all(|c| c == ' ' || c == '^');
        match above {
            Some(prev) if carets => {
                let widths: Vec<usize> = prev
                    .chars()
                    .map(|c| clean(c.encode_utf8(&mut [0; 4])).chars().count())
                    .collect();
                let mut wide = String::with_capacity(line.len());
                for (i, c) in line.chars().enumerate() {
                    for _ in 0..widths.get(i).copied().unwrap_or(1) {
                        wide.push(c);
                    }
                }
                out.push(wide);
            }
            _ => out.push(clean(line).into_owned()),
        }
        above = Some(line);
    }
    out
}

/// A path as [`clean`] text.
pub fn clean_path(p: &Path) -> String {
    clean(&p.display().to_string()).into_owned()
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

    #[test]
    fn a_caret_line_stays_under_its_character() {
        // The `(` is the 8th character of the pattern line; shown, the tab
        // before it takes two columns (`\t`).
        let lines = super::clean_lines("invalid regex: x\n    a\tb(\n       ^");
        assert_eq!(lines, ["invalid regex: x", r"    a\tb(", "        ^"]);
        assert_eq!(
            lines[1].find('('),
            lines[2].find('^'),
            "the caret is under the ("
        );
    }
}
