//! Colour for the human output: only on a terminal, never with `NO_COLOR`
//! (<https://no-color.org>) or `TERM=dumb`.

use anstyle::{AnsiColor, Style};

/// How text is painted: plain, or with ANSI colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paint {
    color: bool,
}

/// What a word says, which picks its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Passed, done.
    Good,
    /// Failed, timed out.
    Bad,
    /// Blocked, skipped, cancelled.
    Warn,
    /// Secondary text (durations, paths).
    Dim,
}

impl Paint {
    /// Plain text.
    pub const PLAIN: Paint = Paint { color: false };

    /// Colour when stderr is a terminal and nothing in the environment
    /// turns it off.
    pub fn for_stderr() -> Paint {
        use std::io::IsTerminal;
        Paint::decide(
            std::io::stderr().is_terminal(),
            std::env::var_os("NO_COLOR").as_deref(),
            std::env::var_os("TERM").as_deref(),
        )
    }

    /// The rule: a terminal, `NO_COLOR` unset or empty, `TERM` not `dumb`.
    pub fn decide(
        tty: bool,
        no_color: Option<&std::ffi::OsStr>,
        term: Option<&std::ffi::OsStr>,
    ) -> Paint {
        let off = no_color.is_some_and(|v| !v.is_empty()) || term.is_some_and(|t| t == "dumb");
        Paint { color: tty && !off }
    }

    /// Whether colours are on.
    #[cfg(test)]
    pub fn is_color(&self) -> bool {
        self.color
    }

    /// `text` in the tone's colour (unchanged when plain).
    pub fn paint(&self, tone: Tone, text: &str) -> String {
        if !self.color {
            return text.to_string();
        }
        let style = match tone {
            Tone::Good => Style::new().fg_color(Some(AnsiColor::Green.into())),
            Tone::Bad => Style::new().fg_color(Some(AnsiColor::Red.into())).bold(),
            Tone::Warn => Style::new().fg_color(Some(AnsiColor::Yellow.into())),
            Tone::Dim => Style::new().dimmed(),
        };
        format!("{}{text}{}", style.render(), style.render_reset())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(Paint::decide(true, None, Some(OsStr::new("xterm"))).is_color());
        assert!(!Paint::decide(false, None, None).is_color());
        assert!(!Paint::decide(true, Some(OsStr::new("1")), None).is_color());
        assert!(Paint::decide(true, Some(OsStr::new("")), None).is_color());
        assert!(!Paint::decide(true, None, Some(OsStr::new("dumb"))).is_color());
    }

    #[test]
    fn plain_text_has_no_escapes() {
        assert_eq!(Paint::PLAIN.paint(Tone::Bad, "FAIL"), "FAIL");
        let c = Paint::decide(true, None, None).paint(Tone::Bad, "FAIL");
        assert!(c.starts_with('\u{1b}') && c.contains("FAIL") && c.ends_with('m'));
    }
}
