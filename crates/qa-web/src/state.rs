//! What the session knows about its pages, as plain data: targets and
//! sessions, the console and network logs, dialogs, popups adopted by
//! `openPopup`, frames steps run in, and the notes for the result. The
//! event pump writes it, steps read it; it imports nothing of the crate.

use qa_core::flow::{DialogExpectation, Locator};
use qa_core::Note;
use std::collections::{HashMap, HashSet};

/// Entries kept per log before further ones are only counted.
pub(crate) const MAX_LOG_ENTRIES: usize = 5000;

/// The level of a console entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConsoleLevel {
    /// `console.log` and friends.
    Log,
    /// `console.info`, informational browser messages.
    Info,
    /// `console.warn`, browser warnings.
    Warning,
    /// `console.error`, `console.assert`, exceptions, browser errors.
    Error,
    /// `console.debug`, verbose browser messages.
    Debug,
}

impl ConsoleLevel {
    /// The level of a `Runtime.consoleAPICalled` type.
    pub fn of_console_call(kind: &str) -> ConsoleLevel {
        match kind {
            "error" | "assert" => ConsoleLevel::Error,
            "warning" => ConsoleLevel::Warning,
            "info" => ConsoleLevel::Info,
            "debug" => ConsoleLevel::Debug,
            _ => ConsoleLevel::Log,
        }
    }

    /// The level of a `Log.entryAdded` level.
    pub fn of_log_entry(level: &str) -> ConsoleLevel {
        match level {
            "verbose" => ConsoleLevel::Debug,
            "warning" => ConsoleLevel::Warning,
            "error" => ConsoleLevel::Error,
            _ => ConsoleLevel::Info,
        }
    }

    /// `log`, `info`, `warning`, `error` or `debug` (as in the console log
    /// artifact and `assertConsole`'s `level`).
    pub fn as_str(self) -> &'static str {
        match self {
            ConsoleLevel::Log => "log",
            ConsoleLevel::Info => "info",
            ConsoleLevel::Warning => "warning",
            ConsoleLevel::Error => "error",
            ConsoleLevel::Debug => "debug",
        }
    }

    /// Whether a flow's `level` names this level.
    pub fn is(self, level: qa_core::flow::ConsoleLevel) -> bool {
        use qa_core::flow::ConsoleLevel as F;
        matches!(
            (level, self),
            (F::Log, ConsoleLevel::Log)
                | (F::Info, ConsoleLevel::Info)
                | (F::Warning | F::Warn, ConsoleLevel::Warning)
                | (F::Error, ConsoleLevel::Error)
                | (F::Debug, ConsoleLevel::Debug)
        )
    }
}

/// One console message.
#[derive(Debug, Clone)]
pub(crate) struct ConsoleEntry {
    /// ms since the session started.
    pub at_ms: u64,
    /// Its level.
    pub level: ConsoleLevel,
    /// Message text (bounded).
    pub text: String,
    /// `console`, `exception`, `network`, … (origin of the entry).
    pub source: String,
    /// Caused by ui-qa's own containment (not counted as a page error).
    pub containment: bool,
}

impl ConsoleEntry {
    /// Whether the entry counts for `assertNoConsoleErrors`: errors from
    /// the console API and uncaught exceptions; failed resource loads
    /// (source `network`, e.g. the automatic favicon request) and ui-qa's
    /// own blocking are logged but not counted.
    pub fn counts_as_error(&self) -> bool {
        self.level == ConsoleLevel::Error && !self.containment && self.source != "network"
    }
}

/// One network request.
#[derive(Debug, Clone)]
pub(crate) struct NetEntry {
    /// HTTP method.
    pub method: String,
    /// Origin + path (never the query).
    pub url: String,
    /// Path + query, for matching only.
    pub path_query: String,
    /// Resource type.
    pub kind: String,
    /// Response status.
    pub status: Option<u16>,
    /// Start, ms since the session started.
    pub start_ms: u64,
    /// Duration once finished.
    pub duration_ms: Option<u64>,
    /// Failure text once failed.
    pub failed: Option<String>,
    /// Sequence number of the start.
    pub seq: u64,
    /// The browser's own request (the tab's favicon), not the page's: it
    /// is logged, but a step never waits for it and it does not break a
    /// quiet window.
    pub browser_own: bool,
}

/// A dialog that opened.
#[derive(Debug, Clone)]
pub(crate) struct DialogSeen {
    /// `alert`, `confirm`, `prompt`, `beforeunload`.
    pub kind: String,
    /// Message (kept for matching; never echoed).
    pub message: String,
}

/// A popup adopted by `openPopup`, remembered under the step's name.
#[derive(Debug, Clone)]
pub(crate) struct Popup {
    /// Its flat session.
    pub session: String,
}

/// A same-origin frame a step runs in.
#[derive(Debug, Clone)]
pub(crate) struct FrameRef {
    /// Its CDP frame id (stable across its same-origin navigations).
    pub id: String,
    /// The locator of its `<iframe>` element in the page.
    pub locator: Locator,
}

/// The whole mutable state of a session's pages.
#[derive(Debug, Default)]
pub(crate) struct PageState {
    /// Target id → flat session id.
    pub sessions: HashMap<String, String>,
    /// Sessions whose containment setup finished.
    pub ready: HashSet<String>,
    /// Targets of an attached run's own context it asked to attach to.
    pub attaching: HashSet<String>,
    /// Target type per session (`page`, `iframe`, `worker`, …).
    pub session_type: HashMap<String, String>,
    /// The main page session.
    pub main_session: Option<String>,
    /// Console log.
    pub console: Vec<ConsoleEntry>,
    /// Network log.
    pub network: Vec<NetEntry>,
    /// In-flight (session, request id) → index into `network`.
    pub inflight: HashMap<(String, String), usize>,
    /// Bumped on every request start and end.
    pub net_seq: u64,
    /// Dialog expectation armed before an interaction.
    pub armed_dialog: Option<DialogExpectation>,
    /// Dialogs seen.
    pub dialogs: Vec<DialogSeen>,
    /// Notes for the result, in order.
    pub notes: Vec<Note>,
    /// The page crashed (or the connection ended).
    pub crashed: bool,
    /// Dropped log entries (bounds).
    pub dropped: u64,
    /// Blocked document (navigation) requests per session: a popup or page
    /// whose navigation left the allowlist.
    pub blocked_documents: HashMap<String, u32>,
    /// Popups adopted by `openPopup`, by step name.
    pub popups: HashMap<String, Popup>,
    /// Load events per page session.
    pub loads: HashMap<String, u64>,
    /// The default execution context of each frame: (session, frame id) →
    /// context id, from `Runtime.executionContextCreated`.
    pub frame_contexts: HashMap<(String, String), i64>,
    /// The page session believed to be in front (`None`: unknown). A new
    /// window or tab comes to the front when it opens and backgrounds its
    /// opener, whose animation frames and screenshots then stall; steps
    /// bring their page back first.
    pub front: Option<String>,
    /// Popup sessions closed because their document left the allowlist.
    pub closed_popups: HashSet<String>,
}

impl PageState {
    /// The target id of a flat session.
    pub fn target_of(&self, session: &str) -> Option<String> {
        self.sessions
            .iter()
            .find(|(_, s)| s.as_str() == session)
            .map(|(t, _)| t.clone())
    }

    /// Whether `session` is a page other than the main one.
    pub fn is_popup_page(&self, session: &str) -> bool {
        self.session_type.get(session).map(String::as_str) == Some("page")
            && self.main_session.as_deref() != Some(session)
    }

    /// Console entries that count as errors.
    pub fn console_errors(&self) -> usize {
        self.console.iter().filter(|e| e.counts_as_error()).count()
    }
}

/// Appends to a bounded log; `false` (and counted as dropped) when full.
pub(crate) fn push_bounded<T>(v: &mut Vec<T>, item: T, dropped: &mut u64) -> bool {
    if v.len() >= MAX_LOG_ENTRIES {
        *dropped += 1;
        false
    } else {
        v.push(item);
        true
    }
}

/// `s` cut to at most `n` bytes (on a character boundary, `…` appended).
pub(crate) fn bounded(s: &str, n: usize) -> String {
    if s.len() <= n {
        s.to_string()
    } else {
        let mut end = n;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &s[..end])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn console_levels() {
        assert_eq!(ConsoleLevel::of_console_call("assert"), ConsoleLevel::Error);
        assert_eq!(ConsoleLevel::of_log_entry("verbose"), ConsoleLevel::Debug);
        // A flow's `warn` and `warning` are the same level.
        let flow = |s: &str| -> qa_core::flow::ConsoleLevel {
            serde_json::from_value(serde_json::json!(s)).unwrap()
        };
        assert!(
            ConsoleLevel::Warning.is(flow("warn")) && ConsoleLevel::Warning.is(flow("warning"))
        );
        assert!(!ConsoleLevel::Error.is(flow("warning")));
        let e = ConsoleEntry {
            at_ms: 0,
            level: ConsoleLevel::Error,
            text: "x".into(),
            source: "network".into(),
            containment: false,
        };
        assert!(!e.counts_as_error());
    }

    #[test]
    fn bounded_cuts_on_a_character() {
        assert_eq!(bounded("äää", 3), "ä…");
        assert_eq!(bounded("abc", 3), "abc");
    }
}
