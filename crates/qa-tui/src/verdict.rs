//! Assertion verdicts: one fresh evaluation of a terminal assertion against
//! the current screen model, and the bounded, redacted description of what
//! was seen. The session calls it on every screen change while it waits.

use crate::pump::Shared;
use crate::screen;
use qa_core::flow::{text_or_regex_matches, Pattern, TerminalAction};
use qa_core::{Mismatch, Secrets, Verdict};
use std::time::{Duration, Instant};

/// Output quiet time after exit that counts as drained when EIO never comes.
const DRAIN_QUIET: Duration = Duration::from_millis(300);
/// How often the scrollback is searched while waiting (the screen is searched on every change).
const SCROLLBACK_SCAN_EVERY: Duration = Duration::from_millis(200);
/// Longest excerpt of screen text put in an observation.
const EXCERPT_CHARS: usize = 160;

/// Bookkeeping of one verify call.
#[derive(Default)]
pub(crate) struct ScanState {
    last_full: Option<Instant>,
}

/// Evaluates assertions against a session's model, redacting with its secrets.
pub(crate) struct Judge<'a> {
    /// The model and the program's exit.
    pub(crate) shared: &'a Shared,
    /// The run's secrets: every observed text is redacted with them.
    pub(crate) secrets: &'a Secrets,
}

impl Judge<'_> {
    fn redact(&self, s: &str) -> String {
        self.secrets.redact(s).into_owned()
    }

    /// The last lines of `text`, redacted *before* they are cut, so a secret
    /// cut in half by the length bound cannot leave its first half behind.
    fn excerpt(&self, text: &str) -> String {
        excerpt(&self.redact(text))
    }

    /// The query in the flow's words (the pattern as written), redacted.
    fn describe_query(&self, text: &Option<String>, regex: &Option<Pattern>) -> String {
        let text = text.as_deref().map(|t| self.redact(t));
        let regex = regex.as_ref().map(|r| self.redact(r.as_str()));
        describe_query(&text, &regex)
    }

    /// One evaluation of an assertion against the current model.
    pub(crate) fn evaluate(&self, action: &TerminalAction, scan: &mut ScanState) -> Verdict {
        let drained = self.shared.drained(DRAIN_QUIET);
        let exit = self.shared.exit();
        match action {
            TerminalAction::WaitForText(q) => {
                let m = self.shared.model();
                let screen = screen::screen_text(&m.term);
                if text_or_regex_matches(&q.text, &q.regex, &screen) {
                    return Verdict::Holds;
                }
                let full_due = scan
                    .last_full
                    .is_none_or(|t| t.elapsed() >= SCROLLBACK_SCAN_EVERY)
                    || drained;
                if full_due {
                    scan.last_full = Some(Instant::now());
                    if text_or_regex_matches(&q.text, &q.regex, &screen::full_text(&m.term)) {
                        return Verdict::Holds;
                    }
                    if drained {
                        return Verdict::Fails {
                            reason: self.redact(&format!(
                                "the program ended ({}) and its output never contained {}; last lines: {}",
                                exit.map(|e| e.describe()).unwrap_or_default(),
                                self.describe_query(&q.text, &q.regex),
                                self.excerpt(&screen)
                            )),
                        };
                    }
                }
                Verdict::NotYet {
                    observed: self.redact(&format!(
                        "not on screen or in scrollback yet; last lines: {}",
                        self.excerpt(&screen)
                    )),
                    mismatch: Some(Box::new(Mismatch::new(
                        format!(
                            "the screen or scrollback to contain {}",
                            self.describe_query(&q.text, &q.regex)
                        ),
                        format!("last lines {}", self.excerpt(&screen)),
                    ))),
                }
            }
            TerminalAction::AssertText(a) | TerminalAction::AssertNotText(a) => {
                let want_present = matches!(action, TerminalAction::AssertText(_));
                let m = self.shared.model();
                let (hay, place) = match a.row {
                    Some(r) => match screen::screen_row(&m.term, usize::from(r)) {
                        Some(t) => (t, format!("row {r}")),
                        None => {
                            return Verdict::Fails {
                                reason: format!(
                                    "row {r} is outside the {}-row screen",
                                    alacritty_terminal::grid::Dimensions::screen_lines(
                                        m.term.grid()
                                    )
                                ),
                            }
                        }
                    },
                    None => (screen::screen_text(&m.term), "the screen".to_string()),
                };
                let found = text_or_regex_matches(&a.text, &a.regex, &hay);
                if found == want_present {
                    return Verdict::Holds;
                }
                let what = format!(
                    "{} {} {}",
                    place,
                    if want_present {
                        "does not contain"
                    } else {
                        "still contains"
                    },
                    self.describe_query(&a.text, &a.regex)
                );
                // Text that must not be there: the row that holds it (a
                // match across rows falls back to the last lines).
                let holding = (!want_present && a.row.is_none())
                    .then_some(())
                    .and_then(|()| {
                        screen::screen_rows(&m.term)
                            .into_iter()
                            .enumerate()
                            .find(|(_, t)| text_or_regex_matches(&a.text, &a.regex, t))
                    })
                    .map(|(r, t)| format!("row {r}: {}", quote(&self.redact(&t))));
                let seen = if a.row.is_some() {
                    quote(&self.redact(&hay))
                } else if let Some(row) = holding {
                    row
                } else {
                    self.excerpt(&hay)
                };
                if drained {
                    Verdict::Fails {
                        reason: self.redact(&format!(
                            "{what} and the program has ended, so it cannot change; saw {seen}"
                        )),
                    }
                } else {
                    let expected = format!(
                        "{place} {} {}",
                        if want_present {
                            "to contain"
                        } else {
                            "not to contain"
                        },
                        self.describe_query(&a.text, &a.regex)
                    );
                    Verdict::NotYet {
                        observed: self.redact(&format!("{what}; saw {seen}")),
                        mismatch: Some(Box::new(Mismatch::new(expected, seen))),
                    }
                }
            }
            TerminalAction::AssertCursor(c) => {
                let (row, col, visible) = screen::cursor(&self.shared.model().term);
                let pos_ok = row == usize::from(c.row) && col == usize::from(c.col);
                let vis_ok = c.visible.is_none_or(|v| v == visible);
                if pos_ok && vis_ok {
                    return Verdict::Holds;
                }
                let observed = format!(
                    "cursor at row {row}, col {col} ({})",
                    if visible { "visible" } else { "hidden" }
                );
                if drained {
                    Verdict::Fails {
                        reason: format!("{observed} and the program has ended"),
                    }
                } else {
                    let expected = format!(
                        "cursor at row {}, col {}{}",
                        c.row,
                        c.col,
                        match c.visible {
                            Some(true) => " (visible)",
                            Some(false) => " (hidden)",
                            None => "",
                        }
                    );
                    Verdict::differs(Mismatch::new(expected, observed))
                }
            }
            TerminalAction::AssertProcessRunning(_) => match exit {
                None => Verdict::Holds,
                Some(e) => Verdict::Fails {
                    reason: format!("the program has ended ({})", e.describe()),
                },
            },
            TerminalAction::AssertProcessExited(x) => match exit {
                None => Verdict::differs(Mismatch::new(
                    match x.exit_code {
                        Some(c) => format!("the program to exit with code {c}"),
                        None => "the program to exit".into(),
                    },
                    "the program is still running",
                )),
                Some(e) => match x.exit_code {
                    None => Verdict::Holds,
                    Some(want) if e.code == Some(want) => Verdict::Holds,
                    Some(want) => Verdict::Fails {
                        reason: format!(
                            "the program ended with {}, expected exit code {want}",
                            e.describe()
                        ),
                    },
                },
            },
            TerminalAction::WaitForStable(_)
            | TerminalAction::WaitForTimeout(_)
            | TerminalAction::SendText(_)
            | TerminalAction::SendPaste(_)
            | TerminalAction::SendKeys(_)
            | TerminalAction::Resize(_)
            | TerminalAction::Capture(_) => Verdict::Fails {
                reason: format!("{} is not an assertion", action.name()),
            },
        }
    }
}

/// `text "…"` or `regex /…/` (both already redacted), bounded.
fn describe_query(text: &Option<String>, regex: &Option<String>) -> String {
    match (text, regex) {
        (Some(t), _) => format!("text {:?}", truncate(t, 80)),
        (_, Some(r)) => format!("regex /{}/", truncate(r, 80)),
        _ => "nothing".into(),
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n).collect();
        t.push('…');
        t
    }
}

fn quote(s: &str) -> String {
    format!("{:?}", truncate(s, EXCERPT_CHARS))
}

/// The last few non-empty lines of `text`, quoted and bounded.
fn excerpt(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return "(empty screen)".into();
    }
    let tail = &lines[lines.len().saturating_sub(3)..];
    truncate(
        &tail
            .iter()
            .map(|l| format!("{:?}", l.trim_end()))
            .collect::<Vec<_>>()
            .join(" / "),
        EXCERPT_CHARS,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn the_query_is_described_as_written_and_redacted() {
        let secrets = Arc::new(Secrets::new());
        secrets.add("hunter22");
        let shared = Shared::new(20, 4, None, secrets.clone());
        let judge = Judge {
            shared: &shared,
            secrets: &secrets,
        };
        let re = Some(Pattern::new(r"^>>> \d+$").unwrap());
        assert_eq!(judge.describe_query(&None, &re), r"regex /^>>> \d+$/");
        let text = Some("pw hunter22".to_string());
        let d = judge.describe_query(&text, &None);
        assert!(d.starts_with("text ") && !d.contains("hunter22"), "{d}");
    }

    #[test]
    fn a_regex_anchors_at_every_screen_line() {
        let screen = "$ echo hi\nhi\n$ ";
        let re = Some(Pattern::new("^hi$").unwrap());
        assert!(text_or_regex_matches(&None, &re, screen));
        let whole = Some(Pattern::new(r"\Ahi").unwrap());
        assert!(!text_or_regex_matches(&None, &whole, screen));
    }
}
