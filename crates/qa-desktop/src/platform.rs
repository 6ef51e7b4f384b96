//! What a desktop driver's OS layer provides: the [`DesktopPlatform`]
//! trait. [`crate::session::DesktopSession`] runs every desktop step over it;
//! a platform only fetches, acts and captures, and never decides whether a
//! step passed.

use crate::node::{Fields, Node};
use async_trait::async_trait;
use qa_core::keys::KeyChord;
use qa_core::{CloseResult, Deadline, DriverError};

/// A top-level window of the application, as its accessibility API says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopWindow {
    /// Its accessible name (the title).
    pub name: String,
    /// Whether it is showing.
    pub showing: bool,
    /// Whether it is the active window.
    pub active: bool,
}

/// How `activate` went through the accessibility API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Activated {
    /// The element's default action ran (the step detail, such as
    /// `action "click"`).
    Action(String),
    /// The element offers no action: the session clicks it with the pointer
    /// instead.
    NoAction,
}

/// The application window's pixels.
#[derive(Debug, Clone)]
pub struct WindowShot {
    /// PNG bytes of exactly the window.
    pub png: Vec<u8>,
    /// The window as the platform names it (`window 0x3a00003`).
    pub window: String,
    /// The process that owns it.
    pub pid: u32,
    /// Its position on the screen and size.
    pub x: i32,
    /// Top.
    pub y: i32,
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
}

/// Whether the launched application has ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    /// The application was attached to: its end is not the session's to see.
    Attached,
    /// It is still running.
    Running,
    /// It ended: its exit code (`None`: ended by a signal) and how, in words.
    Ended(Option<i32>, String),
    /// Its state could not be read (why).
    Unknown(String),
}

impl Exit {
    /// Whether the launched process has ended (`None`: the application was
    /// attached to).
    pub fn of(launched: Option<&mut tokio::process::Child>) -> Exit {
        let Some(child) = launched else {
            return Exit::Attached;
        };
        match child.try_wait() {
            Ok(None) => Exit::Running,
            Ok(Some(st)) => Exit::Ended(st.code(), st.to_string()),
            Err(e) => Exit::Unknown(e.to_string()),
        }
    }
}

/// One of the launched application's output streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// An application on one OS, reached through its accessibility API.
///
/// Every method is bounded by the caller's deadline (the session runs each
/// under the step's); none may signal a process the run did not start.
#[async_trait]
pub trait DesktopPlatform: Send + Sync + 'static {
    /// The platform's reference to one element, with whatever else it read
    /// for it. Two are equal when they are the same element.
    type Element: Clone + PartialEq + Send + Sync + std::fmt::Debug + 'static;

    /// The application's root element (its windows are its children).
    fn root(&self) -> Self::Element;

    /// The application's name and the pid owning its accessibility
    /// connection (0: unknown).
    fn application(&self) -> (String, u32);

    /// The tree under `root`, up to `cap` nodes, breadth-first (root first,
    /// parents before children, siblings in order), with `fields`; and
    /// whether the cap cut it short. Elements that vanish while it is read
    /// are left out.
    async fn walk(
        &self,
        root: &Self::Element,
        fields: Fields,
        cap: usize,
    ) -> (Vec<Node<Self::Element>>, bool);

    /// One element with `fields` (`None`: it is gone).
    async fn fetch(&self, element: &Self::Element, fields: Fields) -> Option<Node<Self::Element>>;

    /// The application's top-level windows.
    async fn windows(&self) -> Vec<TopWindow>;

    /// Raises the application's window and gives it the keyboard focus
    /// (the step detail).
    async fn activate_window(&self) -> Result<String, DriverError>;

    /// Runs the element's default action.
    async fn activate(&self, node: &Node<Self::Element>) -> Result<Activated, DriverError>;

    /// Clicks the centre of the element with the real pointer (the step
    /// detail).
    async fn click(&self, node: &Node<Self::Element>) -> Result<String, DriverError>;

    /// Selects the element in its container, confirmed by reading it back
    /// (the step detail).
    async fn select(&self, node: &Node<Self::Element>) -> Result<String, DriverError>;

    /// Sets the element's text or value, confirmed by reading it back (the
    /// step detail).
    async fn set_value(
        &self,
        node: &Node<Self::Element>,
        value: &str,
        deadline: Deadline,
    ) -> Result<String, DriverError>;

    /// Gives the element the keyboard focus through the accessibility API.
    async fn focus(&self, node: &Node<Self::Element>) -> Result<(), DriverError>;

    /// Types text with real keyboard input into the focused window.
    async fn type_text(&self, text: &str) -> Result<(), DriverError>;

    /// Presses a key chord with real keyboard input.
    async fn press(&self, chord: KeyChord) -> Result<(), DriverError>;

    /// Raises the application's window and captures exactly its pixels.
    async fn screenshot(&self) -> Result<WindowShot, DriverError>;

    /// The application window's video, when the platform records one: the
    /// session waits for its first frame before the first input and holds
    /// each performed step's result in it (see [`crate::video`]).
    fn window_video(&self) -> Option<&crate::video::WindowVideo> {
        None
    }

    /// Whether the launched application has ended.
    fn exit(&mut self) -> Exit;

    /// What the launched application wrote to a stream so far (`None` when
    /// attached: nothing is captured).
    fn output(&self, stream: Stream) -> Option<Vec<u8>>;

    /// Ends what the session started (its recording first, while the window
    /// is there), within `deadline`.
    async fn close(self: Box<Self>, deadline: Deadline) -> CloseResult;
}
