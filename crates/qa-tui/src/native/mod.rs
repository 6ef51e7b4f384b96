//! The `native-terminal` presentation: the program runs in the session's
//! own PTY exactly as in `pty` presentation (input, model and assertions
//! are the same), and its output is mirrored into a real terminal window
//! the run owns, whose pixels are the capture and video evidence.
//!
//! - [`provider`]: which terminal emulator, and its command line (pure).
//! - [`bridge`]: the command the window runs; it copies between the
//!   window and the session's private socket.
//! - `window` (Unix): starting the window, accepting its bridge, the
//!   mirror.
//!
//! The display and the window's pixels come from a
//! [`qa_core::window::WindowHost`] the binary hands the driver
//! ([`NativeSupport`]); the driver never depends on a desktop crate.

pub mod bridge;
pub mod provider;
#[cfg(unix)]
pub(crate) mod window;

use qa_core::window::WindowHost;
use qa_core::{Capability, MissingCapability, RunOptions};
use std::path::PathBuf;
use std::sync::Arc;

/// What `native-terminal` needs from the program that embeds the driver.
#[derive(Clone)]
pub struct NativeSupport {
    /// The display and the window's pixels.
    pub host: Arc<dyn WindowHost>,
    /// The program the window runs as its command: one that calls
    /// [`bridge::main_if_requested`] first thing in `main` (`ui-qa` itself).
    pub bridge: PathBuf,
}

/// The note every native-terminal result carries about its evidence.
pub const NATIVE_EVIDENCE_NOTE: &str = "native-terminal: the screenshots named after their steps and the window video are pixels of a real terminal window that showed the program's PTY output; the asciicast replay and the `-model` PNGs are rendered from the terminal model, diagnostic only, and every assertion read the terminal model";

/// What `ui-qa check` says about a terminal flow's presentation: what it
/// gives, and when the other one suits the program better.
pub fn presentation_advice(p: qa_core::flow::Presentation) -> &'static str {
    use qa_core::flow::Presentation;
    match p {
        Presentation::Pty => "presentation pty: assertions and captures come from the terminal model (fast, no display needed); when the bug is in what a person sees (colours, glyphs, box drawing, wrapping, clipping), add \"presentation\": \"native-terminal\" for pixels of a real terminal window (Linux with X11 or --virtual-display)",
        Presentation::NativeTerminal => "presentation native-terminal: assertions read the terminal model as in pty, and captures and video are pixels of an owned kitty, Alacritty or xterm window (Linux with X11 or --virtual-display, BLOCKED otherwise); use pty when text, cursor and exit codes are what the flow proves",
    }
}

fn missing(id: &str, reason: impl Into<String>, remediation: &str) -> MissingCapability {
    MissingCapability {
        id: id.into(),
        reason: reason.into(),
        remediation: remediation.into(),
    }
}

/// What a native-terminal session would use here (the display and the
/// terminal emulator), or everything that is missing.
pub(crate) fn probe(
    support: Option<&NativeSupport>,
    wanted: Option<qa_core::flow::TerminalApp>,
    options: &RunOptions,
) -> Result<(Vec<Capability>, provider::Provider, PathBuf), Vec<MissingCapability>> {
    if !cfg!(unix) {
        return Err(vec![missing(
            "native-terminal",
            format!(
                "presentation \"native-terminal\" runs on Linux (X11) in this build, not on {}",
                std::env::consts::OS
            ),
            "use presentation \"pty\" here, or run the flow on Linux",
        )]);
    }
    let Some(support) = support else {
        return Err(vec![missing(
            "native-terminal",
            "presentation \"native-terminal\" needs a window host (a display to show the terminal window on), and this program gave the terminal driver none",
            "run the flow with the ui-qa binary on Linux, or give the driver a window host with TuiDriver::with_native_terminal",
        )]);
    };
    let mut missing_all = Vec::new();
    let mut present = Vec::new();
    match support.host.probe(options) {
        Ok(c) => present.push(c),
        Err(m) => missing_all.extend(m),
    }
    let wanted = wanted.map(provider::Provider::of);
    let found = provider::find(wanted, qa_core::host::which);
    match (&found, wanted) {
        (Some((p, path)), w) => present.push(Capability {
            id: "terminal-emulator".into(),
            detail: format!(
                "{} ({}), {}",
                p.name(),
                path.display(),
                match w {
                    Some(_) => "named by the flow's terminal".to_string(),
                    None => format!(
                        "the first installed of {}",
                        provider::PROVIDERS
                            .iter()
                            .map(|p| p.name())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                }
            ),
        }),
        (None, Some(p)) => missing_all.push(missing(
            "terminal-emulator",
            format!("the flow's terminal {} is not on PATH", p.name()),
            &format!(
                "apt-get install -y {}, or name another terminal (or none) in target.command.terminal",
                p.package()
            ),
        )),
        (None, None) => {
            let names: Vec<&str> = provider::PROVIDERS.iter().map(|p| p.name()).collect();
            missing_all.push(missing(
                "terminal-emulator",
                format!(
                    "no terminal emulator ui-qa can own a window of is installed (looked for {} on PATH)",
                    names.join(", ")
                ),
                "apt-get install -y xterm (or kitty, or alacritty)",
            ));
        }
    }
    match found {
        Some((p, path)) if missing_all.is_empty() => Ok((present, p, path)),
        _ => Err(missing_all),
    }
}

/// How long a capture waits for the window to show what was mirrored to it.
#[cfg(unix)]
const SETTLE_MS: u64 = 3_000;
/// Captures in a row that must be equal before the window counts as
/// settled.
#[cfg(unix)]
const SETTLED_AFTER: usize = 3;
/// After a performed step, how long the program's output must stay quiet
/// before the window's frame is taken for the video's hold.
#[cfg(unix)]
const VIDEO_QUIET: std::time::Duration = std::time::Duration::from_millis(50);
/// The longest wait for that quiet (a program that never stops drawing).
#[cfg(unix)]
const VIDEO_SETTLE_MS: u64 = 500;
/// The longest wait for the window video's first frame before the first
/// input.
#[cfg(unix)]
const VIDEO_READY_MS: u64 = 5_000;
/// The longest wait for the window video's fresh frame after a step.
#[cfg(unix)]
const VIDEO_HOLD_MS: u64 = 2_000;

/// A session's terminal window: the window, the mirror to it and its
/// video.
#[cfg(unix)]
pub(crate) struct NativeParts {
    /// The window.
    pub window: window::NativeWindow,
    /// The program's output on its way to it.
    pub mirror: window::Mirror,
    /// Its video, while recording.
    pub video: Option<Box<dyn qa_core::window::WindowRecording>>,
    /// [`NativeParts::video_ready`] ran.
    pub readied: std::sync::atomic::AtomicBool,
}

/// No native terminal off Unix.
#[cfg(not(unix))]
pub(crate) enum NativeParts {}

#[cfg(unix)]
impl NativeParts {
    /// One line for the result: which terminal, which window.
    pub(crate) fn describe(&self) -> String {
        format!(
            "native-terminal: {} (pid {}), {}, {}x{} cells",
            self.window.provider.name(),
            self.window.pid,
            self.window.window,
            self.window.cols,
            self.window.rows
        )
    }

    /// The window's pixels once it shows what was sent to it: the window
    /// has read everything mirrored (a fence), then it is captured until
    /// [`SETTLED_AFTER`] pictures in a row are equal (at most
    /// [`SETTLE_MS`] in all).
    pub(crate) async fn capture(
        &self,
    ) -> Result<qa_core::window::WindowPicture, qa_core::DriverError> {
        let settle = qa_core::Deadline::after_ms(SETTLE_MS);
        self.mirror.fence(settle).await;
        let screen = &self.window.screen;
        let mut last = screen.capture(self.window.pid).await;
        let mut same = 1;
        while same < SETTLED_AFTER && !settle.expired() {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            let next = screen.capture(self.window.pid).await;
            same = match (&last, &next) {
                (Ok(a), Ok(b)) if a.png == b.png => same + 1,
                _ => 1,
            };
            last = next;
        }
        last.map_err(|e| {
            qa_core::DriverError::new(
                crate::codes::TuiCode::NativeTerminalCapture,
                format!("the terminal window could not be captured: {}", e.message),
            )
        })
    }

    /// Before an input: the window video has a fresh frame of the window,
    /// held on screen for [`qa_core::recording::DEFAULT_VIDEO_HOLD_MS`]
    /// (only the first call asks and waits, at most [`VIDEO_READY_MS`]),
    /// so the video starts with the window as it was before anything was
    /// typed.
    pub(crate) async fn video_ready(&self, deadline: qa_core::Deadline) {
        use std::sync::atomic::Ordering;
        if self.readied.swap(true, Ordering::SeqCst) {
            return;
        }
        if let Some(v) = self.video.as_ref().filter(|v| v.records()) {
            // What the program showed so far is in the window first (the
            // model may be ahead of it).
            self.mirror
                .fence(qa_core::Deadline::after_ms(SETTLE_MS).min(deadline))
                .await;
            let hold = std::time::Duration::from_millis(qa_core::recording::DEFAULT_VIDEO_HOLD_MS);
            v.ready(
                hold,
                qa_core::Deadline::after_ms(VIDEO_READY_MS).min(deadline),
            )
            .await;
        }
    }

    /// After a performed step: once the program's output (`changes`,
    /// subscribed before the step's input) has been quiet for
    /// [`VIDEO_QUIET`] (at most [`VIDEO_SETTLE_MS`]) and the window has
    /// read all of it, a fresh frame of the window is held on screen in the
    /// video for [`qa_core::recording::DEFAULT_VIDEO_HOLD_MS`], so the
    /// step's result can be watched. Nothing without a recording video.
    pub(crate) async fn video_hold(
        &self,
        mut changes: tokio::sync::watch::Receiver<u64>,
        deadline: qa_core::Deadline,
    ) {
        let Some(v) = self.video.as_ref().filter(|v| v.records()) else {
            return;
        };
        let settle = qa_core::Deadline::after_ms(VIDEO_SETTLE_MS).min(deadline);
        while let Some(Ok(Ok(()))) = settle
            .run(tokio::time::timeout(VIDEO_QUIET, changes.changed()))
            .await
        {}
        self.mirror
            .fence(qa_core::Deadline::after_ms(SETTLE_MS).min(deadline))
            .await;
        let hold = std::time::Duration::from_millis(qa_core::recording::DEFAULT_VIDEO_HOLD_MS);
        v.hold(
            hold,
            qa_core::Deadline::after_ms(VIDEO_HOLD_MS).min(deadline),
        )
        .await;
    }

    /// Finishes the window's video (before the window ends).
    pub(crate) async fn finish(&mut self, deadline: qa_core::Deadline) -> Vec<qa_core::Note> {
        match self.video.take() {
            Some(v) => v.finish(deadline).await,
            None => Vec::new(),
        }
    }
}

#[cfg(not(unix))]
impl NativeParts {
    pub(crate) fn describe(&self) -> String {
        match *self {}
    }

    pub(crate) async fn capture(
        &self,
    ) -> Result<qa_core::window::WindowPicture, qa_core::DriverError> {
        match *self {}
    }

    pub(crate) async fn video_ready(&self, _deadline: qa_core::Deadline) {
        match *self {}
    }

    pub(crate) async fn video_hold(
        &self,
        _changes: tokio::sync::watch::Receiver<u64>,
        _deadline: qa_core::Deadline,
    ) {
        match *self {}
    }

    pub(crate) async fn finish(&mut self, _deadline: qa_core::Deadline) -> Vec<qa_core::Note> {
        match *self {}
    }
}
