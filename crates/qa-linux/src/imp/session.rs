//! The Linux platform under qa-desktop's session: AT-SPI for the tree and
//! its actions, X11 for windows, pixels and real input, and cleanup.
//! Opening it lives in `open.rs`; the work of each call in the modules it
//! calls.

use super::actions;
use super::app::App;
use super::artifacts;
use super::capture::X11;
use super::display::{self, DesktopEnv};
use super::keys;
use super::objref::ObjRef;
use super::pointer;
use super::tree::{self, AtElement, Node};
use async_trait::async_trait;
use qa_core::keys::KeyChord;
use qa_core::process::DEFAULT_GRACE;
use qa_core::{CloseResult, Deadline, DriverError, Note, NoteKind, SessionContext};
use qa_desktop::video::WindowVideo;
use qa_desktop::{
    app_logs, Activated, DesktopCode, DesktopPlatform, Exit, Fields, Stream, TopWindow, WindowShot,
};
use std::time::Duration;

/// Time `close` keeps for ending the processes beyond their grace period
/// (finishing the video gets the rest of its deadline).
const CLOSE_RESERVE: Duration = Duration::from_millis(1_000);

/// One application on the run's X display and accessibility bus.
pub(crate) struct Linux {
    /// What the runner gave the session.
    pub ctx: SessionContext,
    /// The display and session bus (owned ones end at close).
    pub env: DesktopEnv,
    /// The application driven.
    pub app: App,
    /// The launched process's handle (`None` when attached).
    pub launched: Option<tokio::process::Child>,
    /// The application window's video.
    pub video: WindowVideo,
}

impl Linux {
    /// Runs X11 input off the async runtime.
    async fn input(
        &self,
        f: impl FnOnce(&X11) -> Result<(), String> + Send + 'static,
    ) -> Result<(), DriverError> {
        self.app
            .with_x11(DesktopCode::InputFailed, f)
            .await?
            .map_err(|e| DriverError::new(DesktopCode::InputFailed, e))
    }

    fn element(&self, obj: ObjRef) -> AtElement {
        AtElement {
            obj,
            interfaces: None,
            children: Vec::new(),
        }
    }
}

#[async_trait]
impl DesktopPlatform for Linux {
    type Element = AtElement;

    fn root(&self) -> AtElement {
        self.element(self.app.root.clone())
    }

    fn application(&self) -> (String, u32) {
        (self.app.name.clone(), self.app.pid)
    }

    async fn walk(&self, root: &AtElement, fields: Fields, cap: usize) -> (Vec<Node>, bool) {
        tree::walk(self.app.conn(), self.app.reads, &root.obj, fields, cap).await
    }

    async fn fetch(&self, element: &AtElement, fields: Fields) -> Option<Node> {
        tree::fetch(self.app.conn(), self.app.reads, element.obj.clone(), fields).await
    }

    async fn windows(&self) -> Vec<TopWindow> {
        self.app.windows().await
    }

    async fn activate_window(&self) -> Result<String, DriverError> {
        let w = self.app.focus_window().await?;
        Ok(format!("raised and focused window 0x{:x}", w.id))
    }

    async fn activate(&self, node: &Node) -> Result<Activated, DriverError> {
        actions::activate(self.app.conn(), node).await
    }

    async fn click(&self, node: &Node) -> Result<String, DriverError> {
        pointer::click(&self.app, node).await
    }

    async fn select(&self, node: &Node) -> Result<String, DriverError> {
        actions::select(self.app.conn(), node).await
    }

    async fn set_value(
        &self,
        node: &Node,
        value: &str,
        deadline: Deadline,
    ) -> Result<String, DriverError> {
        actions::set_value(self.app.conn(), node, value, deadline).await
    }

    async fn focus(&self, node: &Node) -> Result<(), DriverError> {
        actions::focus(self.app.conn(), node).await
    }

    async fn type_text(&self, text: &str) -> Result<(), DriverError> {
        let text = text.to_string();
        self.input(move |x| keys::type_text(x, &text)).await
    }

    async fn press(&self, chord: KeyChord) -> Result<(), DriverError> {
        self.input(move |x| {
            let mut map = keys::Keymap::load(x)?;
            keys::press_chord(x, &mut map, &chord)
        })
        .await
    }

    async fn screenshot(&self) -> Result<WindowShot, DriverError> {
        artifacts::screenshot(&self.app).await
    }

    fn window_video(&self) -> Option<&WindowVideo> {
        Some(&self.video)
    }

    fn exit(&mut self) -> Exit {
        Exit::of(self.launched.as_mut())
    }

    fn output(&self, stream: Stream) -> Option<Vec<u8>> {
        self.launched.as_ref()?;
        Some(app_logs::read(&self.ctx, stream))
    }

    async fn close(self: Box<Self>, deadline: Deadline) -> CloseResult {
        let Linux {
            ctx,
            env,
            app,
            launched,
            video,
        } = *self;
        // The video first, while the window is still there (it may have
        // closed already: the video ends at its last frame); what it leaves
        // of the deadline is kept for ending the processes.
        let keep = DEFAULT_GRACE + CLOSE_RESERVE;
        let video_deadline = Deadline::after(deadline.remaining().saturating_sub(keep));
        let mut notes = video.finish(video_deadline).await;
        // Off the accessibility bus before its processes end.
        drop(app);
        let cleanup = ctx.processes.end_all(DEFAULT_GRACE, deadline).await;
        drop(launched);
        display::remove_runtime_dir(&env);
        notes.extend(app_logs::keep(&ctx));
        if env.owned {
            notes.push(Note::new(
                NoteKind::Environment,
                format!(
                    "virtual display {} and its private session bus were ended",
                    env.display
                ),
            ));
        }
        CloseResult { cleanup, notes }
    }
}
