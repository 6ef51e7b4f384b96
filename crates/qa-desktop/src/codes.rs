//! Every stable error code a desktop driver reports (`desktop.*`), declared
//! once for every platform; the CLI collects [`DesktopCode::table`] for the
//! error table in `docs/errors.md`.

qa_core::error_codes! {
    /// Stable codes of the desktop drivers (`desktop.*`).
    pub enum DesktopCode {
        /// The AT-SPI accessibility bus could not be reached through the run's session bus; the run is BLOCKED.
        A11yBusUnavailable = "desktop.a11y_bus.unavailable",
        /// Calling the element's default AT-SPI action failed.
        ActivateFailed = "desktop.activate.failed",
        /// The element exposes no AT-SPI action and could not be clicked with the pointer either.
        ActivateNoAction = "desktop.activate.no_action",
        /// The element refused its default AT-SPI action.
        ActivateRefused = "desktop.activate.refused",
        /// The application never registered on the accessibility bus (accessibility off, a toolkit without AT-SPI, or another display or bus); the run is BLOCKED.
        AppNotAccessible = "desktop.app.not_accessible",
        /// The attached `application.pid` names no running process.
        AttachNoProcess = "desktop.attach.no_process",
        /// A window of another program lay over the application's window and the X server has no Composite extension to read the window's own pixels; no picture was taken.
        CaptureCovered = "desktop.capture.covered",
        /// The window could not be captured (an unsupported pixel format, or the capture failed).
        CaptureFailed = "desktop.capture.failed",
        /// No viewable X window carries the application's `_NET_WM_PID` on the run's display; the run is BLOCKED.
        CaptureNoWindow = "desktop.capture.no_window",
        /// The element cannot be selected (its container offers no Selection, or it did not take).
        SelectUnsupported = "desktop.select.unsupported",
        /// No window of the application carries the flow's window title.
        WindowTitleNotFound = "desktop.window.title_not_found",
        /// The run's X display could not be opened; the run is BLOCKED.
        DisplayUnavailable = "desktop.display.unavailable",
        /// A screenshot or accessibility snapshot contained a secret value and was withheld.
        EvidenceWithheld = "desktop.evidence.withheld",
        /// Giving the element keyboard focus failed.
        FocusFailed = "desktop.focus.failed",
        /// The element cannot take keyboard focus (it has no Component interface).
        FocusUnsupported = "desktop.focus.unsupported",
        /// The host lacks a display, a session bus or at-spi2-core for this run; the run is BLOCKED.
        HostMissing = "desktop.host.missing",
        /// Raising or focusing the window, or X11 keyboard or pointer input, failed.
        InputFailed = "desktop.input.failed",
        /// The launched application exited before it registered on the accessibility bus.
        LaunchExited = "desktop.launch.exited",
        /// The application could not be started.
        LaunchFailed = "desktop.launch.failed",
        /// `application.launch.argv[0]` is not on PATH or is not executable.
        LaunchNotFound = "desktop.launch.not_found",
        /// A locator matches more than one element and names no occurrence; the message lists the candidates.
        LocatorAmbiguous = "desktop.locator.ambiguous",
        /// No element matched the locator before the step deadline.
        LocatorNotFound = "desktop.locator.not_found",
        /// The application's accessible windows did not answer within the bound of an observation.
        ObserveTimeout = "desktop.observe.timeout",
        /// The Linux desktop driver runs on Linux only; the run is BLOCKED.
        PlatformUnsupported = "desktop.platform.unsupported",
        /// Setting the element's text or value through AT-SPI failed.
        SetValueFailed = "desktop.set_value.failed",
        /// `setValue` on a numeric (Value) element was given something that is not a number.
        SetValueNotANumber = "desktop.set_value.not_a_number",
        /// `setValue` on an element whose text is not editable.
        SetValueReadOnly = "desktop.set_value.read_only",
        /// The element accepted `setValue` but reading it back did not show the requested value.
        SetValueUnchanged = "desktop.set_value.unchanged",
        /// The element has neither an EditableText nor a Value interface.
        SetValueUnsupported = "desktop.set_value.unsupported",
        /// The accessibility snapshot did not finish before the step deadline.
        SnapshotTimeout = "desktop.snapshot.timeout",
        /// The driver was given a step of another backend.
        StepKind = "desktop.step.kind",
        /// An assertion or runner step was passed to `perform`.
        StepNotAnAction = "desktop.step.not_an_action",
        /// An action or runner step was passed to `verify`.
        StepNotAnAssertion = "desktop.step.not_an_assertion",
        /// The flow's target is not an application.
        TargetKind = "desktop.target.kind",
        /// Xvfb or the private dbus-daemon exited before it was ready, or reported nonsense.
        VirtualDisplayFailed = "desktop.virtual_display.failed",
        /// Preparing the virtual display's private directory, bus configuration or pipes failed.
        VirtualDisplayIo = "desktop.virtual_display.io",
        /// `--virtual-display` needs Xvfb, dbus-daemon or at-spi2-core, which the host lacks; the run is BLOCKED.
        VirtualDisplayMissing = "desktop.virtual_display.missing",
        /// Xvfb or the private dbus-daemon could not be started.
        VirtualDisplaySpawn = "desktop.virtual_display.spawn",
        /// Xvfb or the private dbus-daemon was not ready before the deadline.
        VirtualDisplayTimeout = "desktop.virtual_display.timeout",
    }
}

#[cfg(test)]
mod tests {
    use super::DesktopCode;

    #[test]
    fn codes_are_unique_documented_and_desktop() {
        let table = DesktopCode::table();
        qa_core::codes::check_table(&table, &["desktop."]).unwrap();
    }
}
