//! Progress lines: one per stage as it ends (`    ok step 2 click "Buy" (65 ms)
//! — ran the default action`), written at once for a single run, or kept
//! and written with the run's summary in one piece when several flows run
//! at the same time (no interleaving).

use super::style::{Paint, Tone};
use super::{clean, clean_path};
use qa_core::result::RunStatus;
use qa_runner::progress::{EventKind, Outcome, ProgressEvent, ProgressSink};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Where the lines go.
enum Mode {
    /// Straight to stderr; on a terminal the running stage is shown until
    /// it ends.
    Live { tty: bool },
    /// Into a buffer the caller prints with the summary.
    Buffered(Mutex<String>),
    /// Nowhere (`--quiet`).
    Off,
}

/// Prints (or keeps) progress lines for one flow.
pub struct HumanProgress {
    flow: PathBuf,
    mode: Mode,
    paint: Paint,
}

impl HumanProgress {
    /// Lines written as the stages end.
    pub fn live(flow: &Path, paint: Paint) -> Self {
        use std::io::IsTerminal;
        HumanProgress {
            flow: flow.to_path_buf(),
            mode: Mode::Live {
                tty: std::io::stderr().is_terminal(),
            },
            paint,
        }
    }

    /// Lines kept until [`HumanProgress::take`].
    pub fn buffered(flow: &Path, paint: Paint) -> Self {
        HumanProgress {
            flow: flow.to_path_buf(),
            mode: Mode::Buffered(Mutex::new(String::new())),
            paint,
        }
    }

    /// No lines at all.
    pub fn off(flow: &Path) -> Self {
        HumanProgress {
            flow: flow.to_path_buf(),
            mode: Mode::Off,
            paint: Paint::PLAIN,
        }
    }

    /// Whether anything is printed.
    pub fn enabled(&self) -> bool {
        !matches!(self.mode, Mode::Off)
    }

    /// The kept lines (empty unless buffered).
    pub fn take(&self) -> String {
        match &self.mode {
            Mode::Buffered(b) => std::mem::take(&mut *b.lock().expect("progress buffer")),
            Mode::Live { .. } | Mode::Off => String::new(),
        }
    }

    fn line(&self, text: &str) {
        match &self.mode {
            Mode::Live { tty } => {
                if *tty {
                    // Overwrite the running-stage line.
                    eprint!("\x1b[2K");
                }
                eprintln!("{text}");
            }
            Mode::Buffered(b) => {
                let mut b = b.lock().expect("progress buffer");
                b.push_str(text);
                b.push('\n');
            }
            Mode::Off => {}
        }
    }
}

/// The line for one event (`None`: nothing to print for it).
pub fn render_event(flow: &Path, ev: &ProgressEvent, paint: Paint) -> Option<String> {
    match ev.event {
        EventKind::Selected => Some(format!(
            "ui-qa: {} -> {} ({})",
            clean_path(flow),
            clean(ev.driver.as_deref().unwrap_or("?")),
            ev.status.map_or("?", Outcome::as_str)
        )),
        EventKind::StageEnd => {
            let (mark, tone) = match ev.status {
                Some(Outcome::Passed | Outcome::Done | Outcome::Available) => ("ok", Tone::Good),
                Some(Outcome::Skipped) => ("--", Tone::Dim),
                Some(Outcome::Blocked) => ("BLOCKED", Tone::Warn),
                Some(Outcome::TimedOut) => ("TIMEOUT", Tone::Bad),
                Some(Outcome::Run(s)) => match s {
                    RunStatus::Passed => ("ok", Tone::Good),
                    RunStatus::Blocked => ("BLOCKED", Tone::Warn),
                    RunStatus::Failed => ("FAIL", Tone::Bad),
                },
                Some(Outcome::Failed) | None => ("FAIL", Tone::Bad),
            };
            let mut line = format!(
                "  {} {}",
                paint.paint(tone, &format!("{mark:>4}")),
                clean(ev.stage.as_deref().unwrap_or("?"))
            );
            if let Some(n) = &ev.name {
                line.push_str(&format!(" {:?}", clean(n)));
            }
            line.push_str(
                &paint.paint(Tone::Dim, &format!(" ({} ms)", ev.duration_ms.unwrap_or(0))),
            );
            if let Some(d) = &ev.detail {
                line.push_str(&paint.paint(Tone::Dim, &format!(" — {}", clean(d))));
            }
            Some(line)
        }
        EventKind::StageStart | EventKind::Finished => None,
    }
}

impl ProgressSink for HumanProgress {
    fn event(&self, ev: &ProgressEvent) {
        if let (Mode::Live { tty: true }, EventKind::StageStart) = (&self.mode, ev.event) {
            // On a terminal, show the running stage until it ends.
            if let Some(s) = ev.stage.as_deref().filter(|s| *s != "select") {
                eprint!("    .. {}\r", clean(s));
            }
            return;
        }
        if let Some(line) = render_event(&self.flow, ev, self.paint) {
            self.line(&line);
        }
    }
}
