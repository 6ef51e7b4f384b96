//! The stable error codes of the terminal driver (`tui.*`), declared once.
//!
//! Every [`qa_core::DriverError`] qa-tui reports carries one of these codes;
//! no code string is written anywhere else in the crate. The CLI collects
//! [`TuiCode::table`] for the error table in `docs/errors.md`.

qa_core::error_codes! {
    /// Stable codes of the terminal driver (`tui.*`).
    pub enum TuiCode {
        /// The flow's target is not a `command`, so the terminal driver cannot run it.
        TargetNotTerminal = "tui.target.not_terminal",
        /// The program in `argv[0]` does not exist or is not on PATH.
        LaunchNotFound = "tui.launch.not_found",
        /// `argv[0]` names a directory, a data file or a script without a `#!` line.
        LaunchNotExecutable = "tui.launch.not_executable",
        /// The command's working directory does not exist.
        LaunchCwdMissing = "tui.launch.cwd_missing",
        /// Starting the program in the PTY failed for another reason.
        LaunchFailed = "tui.launch.failed",
        /// Presentation `native-terminal` cannot run here (no display, no supported terminal emulator, no window host on this OS, or no bridge program); the run is BLOCKED.
        NativeTerminalUnavailable = "tui.presentation.native_terminal_unavailable",
        /// The terminal window of `native-terminal` did not start, show its window or connect its bridge in time.
        NativeTerminalStart = "tui.native_terminal.start",
        /// The terminal window's pixels could not be captured.
        NativeTerminalCapture = "tui.native_terminal.capture",
        /// `resize` in native-terminal presentation: the window's size is the flow's viewport for the whole run.
        NativeTerminalResize = "tui.native_terminal.resize",
        /// The PTY driver does not run on this operating system; the run is BLOCKED.
        PlatformUnsupported = "tui.platform.unsupported",
        /// A pseudo-terminal could not be opened (check /dev/ptmx and /dev/pts).
        PtyOpenFailed = "tui.pty.open_failed",
        /// The new PTY could not be given its initial size.
        PtyResizeFailed = "tui.pty.resize_failed",
        /// Input was sent to a program that had already ended.
        SendExited = "tui.send.exited",
        /// The PTY writer had stopped, so input could not be sent.
        SendClosed = "tui.send.closed",
        /// Writing input to the PTY failed.
        SendFailed = "tui.send.failed",
        /// The program did not read its input before the step deadline.
        SendTimeout = "tui.send.timeout",
        /// A key has no encoding a terminal can send.
        KeysUnsupported = "tui.keys.unsupported",
        /// Resizing the PTY failed.
        ResizeFailed = "tui.resize.failed",
        /// The screen never stayed unchanged for `stableMs` before the step deadline.
        WaitUnstable = "tui.wait.unstable",
        /// A step for another surface was given to the terminal driver.
        StepUnsupported = "tui.step.unsupported",
        /// An assertion or runner step was given to `perform`, which only performs actions.
        StepNotAnAction = "tui.step.not_an_action",
        /// `sendText` was given a control character; named keys go through `sendKeys`.
        TextControlCharacter = "tui.text.control_character",
        /// `sendPaste` was used before the program enabled bracketed paste (mode 2004).
        PasteNotEnabled = "tui.paste.not_enabled",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_documented_and_namespaced() {
        let table = TuiCode::table();
        qa_core::codes::check_table(&table, &["tui."]).unwrap();
        // The wire values, pinned: results, guides and scripts match on them.
        let wire: Vec<&str> = table.iter().map(|r| r.code).collect();
        assert_eq!(
            wire,
            [
                "tui.target.not_terminal",
                "tui.launch.not_found",
                "tui.launch.not_executable",
                "tui.launch.cwd_missing",
                "tui.launch.failed",
                "tui.presentation.native_terminal_unavailable",
                "tui.native_terminal.start",
                "tui.native_terminal.capture",
                "tui.native_terminal.resize",
                "tui.platform.unsupported",
                "tui.pty.open_failed",
                "tui.pty.resize_failed",
                "tui.send.exited",
                "tui.send.closed",
                "tui.send.failed",
                "tui.send.timeout",
                "tui.keys.unsupported",
                "tui.resize.failed",
                "tui.wait.unstable",
                "tui.step.unsupported",
                "tui.step.not_an_action",
                "tui.text.control_character",
                "tui.paste.not_enabled",
            ]
        );
        assert_eq!(TuiCode::SendExited.to_string(), "tui.send.exited");
    }
}
