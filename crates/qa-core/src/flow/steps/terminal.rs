//! Terminal actions and their arguments.

use super::*;

// ---------------------------------------------------------------- terminal

args!(
    /// Text or regex on the terminal screen.
    TextQuery {
        #[serde(skip_serializing_if = "Option::is_none")] text: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")] regex: Option<Pattern>,
    }
);
impl ActionArgs for TextQuery {
    fn validate(&self) -> Result<(), ArgProblem> {
        check_text_or_regex(&self.text, &self.regex)
    }
}
args!(
    /// Text or regex on the screen, optionally on one row (0-based).
    ScreenTextAssert {
        #[serde(skip_serializing_if = "Option::is_none")] text: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")] regex: Option<Pattern>,
        #[serde(skip_serializing_if = "Option::is_none")] #[schemars(range(max = 499))] row: Option<u16>,
    }
);
impl ActionArgs for ScreenTextAssert {
    fn validate(&self) -> Result<(), ArgProblem> {
        check_text_or_regex(&self.text, &self.regex)
    }
}
args!(
    /// `waitForStable`: no screen change for `stableMs` (default 300).
    WaitForStable { #[serde(skip_serializing_if = "Option::is_none")] #[schemars(range(min = 10, max = 60000))] stable_ms: Option<u64> }
);
impl ActionArgs for WaitForStable {}
args!(
    /// Printable text to type.
    SendText { #[schemars(length(max = 65536))] text: String }
);
impl ActionArgs for SendText {
    fn values(&self) -> Vec<&str> {
        vec![&self.text]
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        check_printable(&self.text, "/text")
    }
}
args!(
    /// Text to paste (bracketed).
    SendPaste { #[schemars(length(max = 1048576))] text: String }
);
impl ActionArgs for SendPaste {
    fn values(&self) -> Vec<&str> {
        vec![&self.text]
    }
}
args!(
    /// Named keys and single characters.
    SendKeys { #[schemars(length(min = 1, max = 1000))] keys: Vec<KeyName> }
);
impl ActionArgs for SendKeys {
    fn validate(&self) -> Result<(), ArgProblem> {
        if self.keys.is_empty() {
            return Err(problem(
                "/keys",
                crate::flow::FlowErrorCode::OutOfRange,
                "keys must not be empty",
            ));
        }
        Ok(())
    }
}
args!(
    /// New terminal size.
    Resize { #[schemars(range(min = 2, max = 1000))] cols: u16, #[schemars(range(min = 2, max = 500))] rows: u16 }
);
impl ActionArgs for Resize {
    fn validate(&self) -> Result<(), ArgProblem> {
        if !(2..=1000).contains(&self.cols) {
            return Err(problem(
                "/cols",
                crate::flow::FlowErrorCode::OutOfRange,
                "cols must be 2..=1000",
            ));
        }
        if !(2..=500).contains(&self.rows) {
            return Err(problem(
                "/rows",
                crate::flow::FlowErrorCode::OutOfRange,
                "rows must be 2..=500",
            ));
        }
        Ok(())
    }
}
args!(
    /// Cursor position (0-based) and visibility.
    CursorAssert { row: u16, col: u16, #[serde(skip_serializing_if = "Option::is_none")] visible: Option<bool> }
);
impl ActionArgs for CursorAssert {}
args!(
    /// The program exited (optionally with this code).
    ExitAssert { #[serde(skip_serializing_if = "Option::is_none")] exit_code: Option<i32> }
);
impl ActionArgs for ExitAssert {}

actions!(
    /// Actions on a terminal program.
    TerminalAction, TargetKind::Terminal, {
        /// Wait until text appears (screen or scrollback).
        WaitForText = "waitForText" (TextQuery): Assertion,
        /// Wait until the screen stops changing.
        WaitForStable = "waitForStable" (WaitForStable): Action,
        /// Sleep.
        WaitForTimeout = "waitForTimeout" (WaitForTimeout): Runner,
        /// Type printable text.
        SendText = "sendText" (SendText): Action,
        /// Paste text (bracketed).
        SendPaste = "sendPaste" (SendPaste): Action,
        /// Send keys.
        SendKeys = "sendKeys" (SendKeys): Action,
        /// Resize the terminal.
        Resize = "resize" (Resize): Action,
        /// Text is on screen.
        AssertText = "assertText" (ScreenTextAssert): Assertion,
        /// Text is not on screen.
        AssertNotText = "assertNotText" (ScreenTextAssert): Assertion,
        /// Cursor position.
        AssertCursor = "assertCursor" (CursorAssert): Assertion,
        /// Program still running.
        AssertProcessRunning = "assertProcessRunning" (NoArgs): Assertion,
        /// Program exited.
        AssertProcessExited = "assertProcessExited" (ExitAssert): Assertion,
        /// Capture the screen (text + PNG).
        Capture = "capture" (NoArgs): Action,
    }
);
