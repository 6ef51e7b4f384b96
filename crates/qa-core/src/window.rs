//! Windows of programs a run owns, for a driver that is not a desktop
//! driver: the terminal driver's `native-terminal` presentation shows the
//! program in a real terminal window and needs a display to put it on,
//! exact pictures of that window and its video.
//!
//! A desktop platform crate implements [`WindowHost`] (on Linux, X11 with
//! an owned Xvfb under `--virtual-display`); the binary hands it to the
//! driver that needs it. The driver never depends on the platform crate:
//! this trait is the whole edge.

use crate::driver::{Capability, MissingCapability, RunOptions, SessionContext};
use crate::{Deadline, DriverError, Note};
use async_trait::async_trait;

/// Exactly one window's pixels.
#[derive(Debug, Clone)]
pub struct WindowPicture {
    /// PNG bytes of the window and nothing else.
    pub png: Vec<u8>,
    /// The window as the platform names it (`window 0x3a00003`).
    pub window: String,
    /// The process that owns it.
    pub pid: u32,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

/// Where owned programs can show windows.
#[async_trait]
pub trait WindowHost: Send + Sync {
    /// What a session with `options` would use (the display), or what is
    /// missing, each with its remediation.
    fn probe(&self, options: &RunOptions) -> Result<Capability, Vec<MissingCapability>>;

    /// Opens a display for one session: the host's own, or with
    /// `options.virtual_display` an owned virtual one started through
    /// `ctx.processes`.
    async fn open(
        &self,
        ctx: &SessionContext,
        deadline: Deadline,
    ) -> Result<Box<dyn WindowScreen>, DriverError>;
}

/// One session's display.
#[async_trait]
pub trait WindowScreen: Send + Sync {
    /// The display's name, as a program's environment needs it
    /// (`("DISPLAY", ":7")`), and anything else a program must be given to
    /// reach it.
    fn env(&self) -> Vec<(String, String)>;

    /// Waits until a process of `root` (it or a descendant) shows a window;
    /// that window's name.
    async fn wait_window(&self, root: u32, deadline: Deadline) -> Result<String, DriverError>;

    /// Exactly the pixels of `root`'s window, never another program's.
    async fn capture(&self, root: u32) -> Result<WindowPicture, DriverError>;

    /// Starts the video of `root`'s window as the run's recording settings
    /// ask (off, withheld while the run has secret values, or recording).
    fn record(&self, ctx: &SessionContext, root: u32) -> Box<dyn WindowRecording>;
}

/// A window video being recorded.
///
/// The driver makes it watchable the way a browser video is: it calls
/// [`ready`](WindowRecording::ready) before the first input, so the video
/// starts with the window as it was before anything was typed, and
/// [`hold`](WindowRecording::hold) after each performed step, so each
/// step's result stays on screen in the video while the run goes on.
#[async_trait]
pub trait WindowRecording: Send + Sync {
    /// Whether frames are being taken (not off, not withheld).
    fn records(&self) -> bool;

    /// Takes a fresh frame of the window now, waits, within `deadline`,
    /// until the video has a frame, and holds it on screen for `length`;
    /// whether the video has a frame. Only the first call waits: later
    /// ones answer at once.
    async fn ready(&self, length: std::time::Duration, deadline: Deadline) -> bool;

    /// Takes a fresh frame of the window now and holds it on screen for
    /// `length` in the video (see [`crate::video::VideoRecorder::hold`]);
    /// waits, within `deadline`, until the frame was taken.
    async fn hold(&self, length: std::time::Duration, deadline: Deadline);

    /// Stops it and finishes the file within `deadline`; what the result
    /// should say about it.
    async fn finish(self: Box<Self>, deadline: Deadline) -> Vec<Note>;
}
