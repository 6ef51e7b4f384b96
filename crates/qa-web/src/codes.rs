//! Every stable error code the browser driver reports (`web.*`), declared
//! once. A code is on the wire (`reasonCode` of a result, `code` of a
//! `DriverError`); its doc comment is its row in `docs/errors.md`.

qa_core::error_codes! {
    /// Stable codes of the browser driver (`web.*`).
    pub enum WebCode {
        /// The element the locator resolved to is not one the action applies to.
        ActionUnsupportedElement = "web.action.unsupported_element",
        /// Another element receives pointer events at the element's click point.
        ActionabilityCovered = "web.actionability.covered",
        /// The element failed an actionability check the driver does not name.
        ActionabilityFailed = "web.actionability.failed",
        /// The element left the document before the action.
        ActionabilityNotAttached = "web.actionability.not_attached",
        /// The element is read-only or not an editable field.
        ActionabilityNotEditable = "web.actionability.not_editable",
        /// The element is disabled.
        ActionabilityNotEnabled = "web.actionability.not_enabled",
        /// The element kept moving (it was not stable for two animation frames).
        ActionabilityNotStable = "web.actionability.not_stable",
        /// The element is not visible.
        ActionabilityNotVisible = "web.actionability.not_visible",
        /// The app of `target.app` ended before its DevTools answered, or could not be started.
        AppExited = "web.app.exited",
        /// A connection other than the run's reached the DevTools port of the app it launched; the app was ended.
        AppForeignConnection = "web.app.foreign_connection",
        /// The app of `target.app` opened no DevTools on the channel the flow named; the run is BLOCKED.
        AppNoDevtools = "web.app.no_devtools",
        /// The program of `target.app` is not installed or not executable; the run is BLOCKED.
        AppNotFound = "web.app.not_found",
        /// The page shows the flow's auth-rejection signal; the run is BLOCKED.
        AuthRejected = "web.auth.rejected",
        /// An auth profile's storage could not be set in the browser, or its login form could not be built.
        AuthSeed = "web.auth.seed",
        /// The accessibility snapshot could not be taken.
        AxFailed = "web.ax.failed",
        /// Attaching to the browser's targets over DevTools failed.
        CdpAttach = "web.cdp.attach",
        /// The DevTools connection to Chromium closed.
        CdpClosed = "web.cdp.closed",
        /// The DevTools connection to Chromium could not be opened.
        CdpConnect = "web.cdp.connect",
        /// A DevTools call the driver relies on failed.
        CdpFailed = "web.cdp.failed",
        /// Chromium answered a DevTools call with a protocol error.
        CdpProtocol = "web.cdp.protocol",
        /// The page or frame a DevTools call was for closed or detached first.
        CdpTargetClosed = "web.cdp.target_closed",
        /// The page or frame a DevTools call was for crashed.
        CdpTargetCrashed = "web.cdp.target_crashed",
        /// Chromium did not answer a DevTools call in time.
        CdpTimeout = "web.cdp.timeout",
        /// The browser named by `target.browser.connect` did not answer at its DevTools endpoint; the run is BLOCKED.
        ConnectUnreachable = "web.connect.unreachable",
        /// The browser at `target.browser.connect` refused a browser context of the run's own.
        ConnectNoContext = "web.connect.no_context",
        /// No page (or more than one) of the browser at `target.browser.connect` has a URL that includes `pageUrl`.
        ConnectNoPage = "web.connect.no_page",
        /// The connection to a browser ui-qa did not start was lost mid-run.
        ConnectLost = "web.connect.lost",
        /// After check or uncheck, the element is not in the requested state.
        CheckStateUnchanged = "web.check.state_unchanged",
        /// No Chromium or Chrome executable was found; the run is BLOCKED.
        ChromiumMissing = "web.chromium.missing",
        /// The in-page helper answered in a shape the driver does not expect (a driver bug).
        DomReply = "web.dom.reply",
        /// The browser canceled the download.
        DownloadCanceled = "web.download.canceled",
        /// The download could not be set up or read.
        DownloadFailed = "web.download.failed",
        /// The downloaded file's suggested name does not match the step's filename.
        DownloadFilenameMismatch = "web.download.filename_mismatch",
        /// The click started no download before the step deadline.
        DownloadNone = "web.download.none",
        /// The download did not finish before the step deadline.
        DownloadTimeout = "web.download.timeout",
        /// The download is larger than maxBytes; it was canceled and deleted.
        DownloadTooLarge = "web.download.too_large",
        /// The drag could not be performed.
        DragFailed = "web.drag.failed",
        /// Viewport, locale, timezone or media emulation could not be set.
        EmulationFailed = "web.emulation.failed",
        /// A scratch or evidence file could not be written.
        EvidenceWrite = "web.evidence.write",
        /// A dialog opened, but not the expected one.
        ExpectDialogMismatch = "web.expect.dialog_mismatch",
        /// The expected dialog did not open before the step deadline.
        ExpectDialogMissing = "web.expect.dialog_missing",
        /// No response matched expectResponse before the step deadline.
        ExpectResponseMissing = "web.expect.response_missing",
        /// The heap snapshot could not be taken or summarized.
        HeapFailed = "web.heap.failed",
        /// The heap snapshot exceeded its size cap; it was deleted.
        HeapTooLarge = "web.heap.too_large",
        /// Chromium refused an input event.
        InputFailed = "web.input.failed",
        /// Chromium could not be started or exited during start-up.
        LaunchFailed = "web.launch.failed",
        /// Chromium opened no page to drive.
        LaunchNoPage = "web.launch.no_page",
        /// The browser profile directory could not be created.
        LaunchProfile = "web.launch.profile",
        /// Chromium did not open its DevTools endpoint in time.
        LaunchTimeout = "web.launch.timeout",
        /// The lighthouse step needs the Lighthouse CLI, which this driver does not run; the run is BLOCKED.
        LighthouseUnavailable = "web.lighthouse.unavailable",
        /// The locator matched more than one element; the failure lists them, each with a locator that finds it alone (with `nth` when only its place tells it apart).
        LocatorAmbiguous = "web.locator.ambiguous",
        /// The locator's CSS selector is not valid.
        LocatorInvalid = "web.locator.invalid",
        /// The locator matched no element before the step deadline; the failure lists the closest elements, those that can take the step's action first (text boxes for `fill`, …), each with a locator that finds it alone.
        LocatorNotFound = "web.locator.not_found",
        /// The goto path or URL cannot be resolved against the base URL.
        NavigationBadUrl = "web.navigation.bad_url",
        /// A resolved origin of the flow (start URL, base URL, allowedOrigins, auth profile) is outside the run's origin limit (`ui-qa mcp --allow-origin`); nothing was launched.
        OriginNotAllowed = "web.origin.not_allowed",
        /// The navigation leaves the target origin and allowedOrigins.
        NavigationBlocked = "web.navigation.blocked",
        /// The navigation failed.
        NavigationFailed = "web.navigation.failed",
        /// The page did not finish loading before the step deadline.
        NavigationTimeout = "web.navigation.timeout",
        /// Nothing answers at the target's host and port.
        TargetUnreachable = "web.target.unreachable",
        /// The page's state could not be read.
        ObserveFailed = "web.observe.failed",
        /// The page crashed.
        PageCrashed = "web.page.crashed",
        /// The page could not be brought to the front.
        PageFront = "web.page.front",
        /// The page did not answer before the step deadline.
        PageUnavailable = "web.page.unavailable",
        /// The popup tried to load a page outside the allowlist; it was blocked and closed.
        PopupBlocked = "web.popup.blocked",
        /// The popup closed before it loaded a page.
        PopupClosed = "web.popup.closed",
        /// openPopup needs the step's name to remember the popup under.
        PopupNameRequired = "web.popup.name_required",
        /// A popup of that name is already open.
        PopupNameTaken = "web.popup.name_taken",
        /// The click opened no popup before the step deadline.
        PopupNone = "web.popup.none",
        /// The popup did not load a page before the step deadline; it was closed.
        PopupNotLoaded = "web.popup.not_loaded",
        /// The containment proxy could not be started.
        ProxyStart = "web.proxy.start",
        /// The screenshot could not be taken.
        ScreenshotFailed = "web.screenshot.failed",
        /// The select element has no such option.
        SelectNoOption = "web.select.no_option",
        /// The option to select is disabled.
        SelectOptionDisabled = "web.select.option_disabled",
        /// The static server could not bind 127.0.0.1.
        ServeBind = "web.serve.bind",
        /// The target.serve directory does not exist.
        ServeMissingDir = "web.serve.missing_dir",
        /// target.server exited before its readyUrl answered.
        ServerExited = "web.server.exited",
        /// target.server's readyUrl did not answer before readyTimeoutMs.
        ServerNotReady = "web.server.not_ready",
        /// target.server's readyUrl is not a valid URL.
        ServerReadyUrl = "web.server.ready_url",
        /// target.server could not be started.
        ServerSpawn = "web.server.spawn",
        /// The page stayed busy (loading, requests, busy markers) until the step deadline.
        SettleBusy = "web.settle.busy",
        /// The browser driver does not implement this step.
        StepUnsupported = "web.step.unsupported",
        /// The step's target frame is not same-origin with the page.
        TargetCrossOriginFrame = "web.target.cross_origin_frame",
        /// The step's target frame was not found before the step deadline.
        TargetFrameNotFound = "web.target.frame_not_found",
        /// The flow's target is not a browser target.
        TargetKind = "web.target.kind",
        /// The step's target frame locator matched an element that is not an iframe.
        TargetNotAFrame = "web.target.not_a_frame",
        /// The popup the step targets has closed.
        TargetPopupClosed = "web.target.popup_closed",
        /// No earlier openPopup step adopted a popup of that name.
        TargetUnknownPopup = "web.target.unknown_popup",
        /// The step cannot run in a frame target (it navigates the page).
        TargetUnsupported = "web.target.unsupported",
        /// The target's URL is missing or not valid.
        TargetUrl = "web.target.url",
        /// The performance trace could not be recorded or summarized.
        TraceFailed = "web.trace.failed",
        /// The performance trace was not handed over or read before the step deadline.
        TraceTimeout = "web.trace.timeout",
        /// The raw performance trace exceeded its size cap; it was deleted.
        TraceTooLarge = "web.trace.too_large",
        /// A file of uploadFiles is not valid base64.
        UploadBadBase64 = "web.upload.bad_base64",
        /// The files could not be set on the input.
        UploadFailed = "web.upload.failed",
        /// The uploadFiles locator matched an element that is not a file input.
        UploadNotFileInput = "web.upload.not_file_input",
        /// Several files were given for a file input without the multiple attribute.
        UploadNotMultiple = "web.upload.not_multiple",
    }
}

#[cfg(test)]
mod tests {
    use super::WebCode;

    #[test]
    fn codes_are_unique_documented_and_web() {
        qa_core::codes::check_table(&WebCode::table(), &["web."]).unwrap();
    }
}
