//! Flow errors: the stable codes and the error value every parse and
//! validation step returns (code, JSON pointer, position, message).

use serde::Serialize;
use std::fmt;

crate::error_codes! {
    /// Stable codes of flow errors (`flow.<name>`).
    pub enum FlowErrorCode {
        /// The file could not be read.
        Io = "flow.io",
        /// The path is not a regular file (a directory, FIFO, socket or device); nothing was read from it.
        NotAFile = "flow.not_a_file",
        /// The file is larger than the limit.
        TooLarge = "flow.too_large",
        /// Not valid JSONC.
        Syntax = "flow.syntax",
        /// The same key twice in one object.
        DuplicateKey = "flow.duplicate_key",
        /// A field the format does not define.
        UnknownField = "flow.unknown_field",
        /// An action the target kind does not define.
        UnknownAction = "flow.unknown_action",
        /// A value of the wrong JSON type.
        WrongType = "flow.wrong_type",
        /// A required field is missing (or a required choice is not made).
        MissingField = "flow.missing_field",
        /// A value outside its allowed range.
        OutOfRange = "flow.out_of_range",
        /// No target kind, or more than one, or `kind` contradicts the target.
        TargetKind = "flow.target_kind",
        /// More steps than allowed.
        TooManySteps = "flow.too_many_steps",
        /// No steps.
        NoSteps = "flow.no_steps",
        /// A locator with no kind or several kinds.
        InvalidLocator = "flow.invalid_locator",
        /// A matcher with no or several comparisons.
        InvalidMatcher = "flow.invalid_matcher",
        /// A regex that does not compile.
        InvalidRegex = "flow.invalid_regex",
        /// An unknown key name.
        InvalidKey = "flow.invalid_key",
        /// Raw control characters in typed text.
        ControlCharacter = "flow.control_character",
        /// A path that escapes its directory or is absolute.
        UnsafePath = "flow.unsafe_path",
        /// An origin that is not `scheme://host[:port]`.
        InvalidOrigin = "flow.invalid_origin",
        /// A URL that does not parse.
        InvalidUrl = "flow.invalid_url",
        /// The selected driver cannot perform this action.
        UnsupportedStep = "flow.unsupported_step",
        /// The selected driver cannot resolve this locator kind.
        UnsupportedLocator = "flow.unsupported_locator",
        /// A locator's role is not one the driver knows.
        UnknownRole = "flow.unknown_role",
        /// A key the target surface cannot send (a Meta chord to a terminal).
        UnsupportedKey = "flow.unsupported_key",
        /// A `${var.NAME}` without a value, or a bad variable name.
        InvalidVar = "flow.invalid_var",
        /// Warning: terminal text ending in a space never matches.
        TrailingSpace = "flow.trailing_space",
        /// Warning: no step checks anything (no `assert*` or `waitFor*` step), so a PASSED run only says the steps ran; `run --strict` and MCP `run` refuse such a flow.
        NoAssertion = "flow.no_assertion",
        /// Warning: a terminal flow's `env` sets `TERM` to another terminal than the one ui-qa emulates (`xterm-256color`).
        TermOverride = "flow.term_override",
        /// Warning: a terminal flow names a `terminal` but its presentation is not `native-terminal`, so no terminal window is opened.
        TerminalUnused = "flow.terminal_unused",
        /// A NUL character in a string handed to a process (argv, env, cwd) or used as a path; no process can receive it.
        NulCharacter = "flow.nul_character",
    }
}

/// An invalid flow: stable code, JSON pointer, position and a message that
/// says what to change.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FlowError {
    /// Stable code.
    pub code: &'static str,
    /// JSON pointer (RFC 6901) of the offending value; `""` is the whole document.
    pub pointer: String,
    /// 1-based line, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// 1-based column (in characters), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl FlowError {
    /// A new error without a position.
    pub fn new(
        code: FlowErrorCode,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        FlowError {
            code: code.as_str(),
            pointer: pointer.into(),
            line: None,
            column: None,
            message: message.into(),
        }
    }
}

impl FlowError {
    pub(super) fn at_offset(mut self, bytes: &[u8], offset: usize) -> FlowError {
        let (l, c) = line_col(bytes, offset);
        self.line = Some(l);
        self.column = Some(c);
        self
    }
}

impl fmt::Display for FlowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ptr = if self.pointer.is_empty() {
            "(document)"
        } else {
            &self.pointer
        };
        match (self.line, self.column) {
            (Some(l), Some(c)) => write!(
                f,
                "{} at {} (line {l}, column {c}): {}",
                self.code, ptr, self.message
            ),
            _ => write!(f, "{} at {}: {}", self.code, ptr, self.message),
        }
    }
}

impl std::error::Error for FlowError {}

/// Escapes one reference token of a JSON pointer.
pub fn escape_token(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// 1-based line and column (in characters) of byte `offset`. Works on raw
/// bytes so that it also places offsets in text that is not valid UTF-8 (a
/// column counts the UTF-8 sequences before it on its line).
fn line_col(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset.min(bytes.len())];
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    // Count every byte that does not continue a UTF-8 sequence.
    let col = before[line_start..]
        .iter()
        .filter(|&&b| b & 0xC0 != 0x80)
        .count()
        + 1;
    (line, col)
}
