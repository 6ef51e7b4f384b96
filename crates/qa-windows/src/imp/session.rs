//! The Windows platform under qa-desktop's session: UI Automation (on the
//! COM thread) for the tree and its patterns, Win32 for windows, real
//! input and pixels, and cleanup.

use super::actions;
use super::app::App;
use super::com::Com;
use super::shot;
use super::tree::{self, Node, UiaElement};
use super::win32;
use crate::vk;
use async_trait::async_trait;
use qa_core::keys::KeyChord;
use qa_core::process::DEFAULT_GRACE;
use qa_core::{CloseResult, Deadline, DriverError, SessionContext};
use qa_desktop::video::WindowVideo;
use qa_desktop::{
    app_logs, Activated, DesktopCode, DesktopPlatform, Exit, Fields, Stream, TopWindow, WindowShot,
};
use std::sync::Arc;
use std::time::Duration;

/// Time `close` keeps for ending the processes beyond their grace period.
const CLOSE_RESERVE: Duration = Duration::from_millis(1_000);

/// One application on the user's desktop.
pub(crate) struct Windows {
    /// What the runner gave the session.
    pub ctx: SessionContext,
    /// The UI Automation thread.
    pub com: Com,
    /// The application driven.
    pub app: Arc<App>,
    /// The launched process (`None` when attached).
    pub launched: Option<tokio::process::Child>,
    /// The window video.
    pub video: WindowVideo,
}

impl Windows {
    /// Runs Win32 work off the async runtime.
    async fn blocking<R: Send + 'static>(
        &self,
        code: DesktopCode,
        f: impl FnOnce(&App) -> Result<R, String> + Send + 'static,
    ) -> Result<R, DriverError> {
        let app = self.app.clone();
        match tokio::task::spawn_blocking(move || f(&app)).await {
            Ok(r) => r.map_err(|e| DriverError::new(code, e)),
            Err(e) => Err(DriverError::new(code, e.to_string())),
        }
    }
}

#[async_trait]
impl DesktopPlatform for Windows {
    type Element = UiaElement;

    fn root(&self) -> UiaElement {
        UiaElement::app()
    }

    fn application(&self) -> (String, u32) {
        (self.app.name.clone(), self.app.pid)
    }

    async fn walk(&self, root: &UiaElement, fields: Fields, cap: usize) -> (Vec<Node>, bool) {
        let app = self.app.clone();
        let Ok(pids) = tokio::task::spawn_blocking(move || app.pids()).await else {
            return (Vec::new(), false);
        };
        let (key, name, fg) = (root.key.clone(), self.app.name.clone(), win32::foreground());
        self.com
            .call(move |u| tree::walk(u, &key, (&name, &pids), fields, cap, fg))
            .await
            .unwrap_or_default()
    }

    async fn fetch(&self, element: &UiaElement, fields: Fields) -> Option<Node> {
        let (key, name, fg) = (
            element.key.clone(),
            self.app.name.clone(),
            win32::foreground(),
        );
        self.com
            .call(move |u| tree::fetch(u, &key, &name, fields, fg))
            .await
            .ok()
            .flatten()
    }

    async fn windows(&self) -> Vec<TopWindow> {
        let app = self.app.clone();
        let ws = tokio::task::spawn_blocking(move || app.windows())
            .await
            .unwrap_or_default();
        let fg = win32::foreground();
        ws.into_iter()
            .map(|w| TopWindow {
                name: w.title,
                showing: true,
                active: w.hwnd == fg,
            })
            .collect()
    }

    async fn activate_window(&self) -> Result<String, DriverError> {
        let w = {
            let app = self.app.clone();
            tokio::task::spawn_blocking(move || app.pick())
                .await
                .map_err(|e| DriverError::new(DesktopCode::FocusFailed, e.to_string()))??
        };
        let h = w.hwnd;
        self.blocking(DesktopCode::FocusFailed, move |_| win32::raise(h))
            .await?;
        Ok(format!("raised and focused window 0x{h:x}"))
    }

    async fn activate(&self, node: &Node) -> Result<Activated, DriverError> {
        let e = node.element.clone();
        self.com.call(move |u| actions::activate(u, &e)).await?
    }

    async fn click(&self, node: &Node) -> Result<String, DriverError> {
        // Where it is now (a step may have resolved it without bounds).
        let bounds = match node.bounds {
            Some(b) => Some(b),
            None => self
                .fetch(&node.element, Fields::ALL)
                .await
                .and_then(|n| n.bounds),
        };
        let Some((x, y, w, h)) = bounds else {
            return Err(DriverError::new(
                DesktopCode::InputFailed,
                "the element reports no bounding rectangle to click (it is off screen or has no size)",
            ));
        };
        let (cx, cy) = (x + w / 2, y + h / 2);
        self.activate_window().await?;
        self.blocking(DesktopCode::InputFailed, move |_| win32::click_at(cx, cy))
            .await?;
        Ok(format!("a pointer click at ({cx}, {cy})"))
    }

    async fn select(&self, node: &Node) -> Result<String, DriverError> {
        let e = node.element.clone();
        self.com.call(move |u| actions::select(u, &e)).await?
    }

    async fn set_value(
        &self,
        node: &Node,
        value: &str,
        deadline: Deadline,
    ) -> Result<String, DriverError> {
        let (e, v) = (node.element.clone(), value.to_string());
        match deadline
            .run(self.com.call(move |u| actions::set_value(u, &e, &v)))
            .await
        {
            Some(r) => r?,
            None => Err(DriverError::new(
                DesktopCode::SetValueFailed,
                "the value was not confirmed before the step deadline",
            )),
        }
    }

    async fn focus(&self, node: &Node) -> Result<(), DriverError> {
        let e = node.element.clone();
        self.com.call(move |u| actions::focus(u, &e)).await?
    }

    async fn type_text(&self, text: &str) -> Result<(), DriverError> {
        let events = vk::text(text);
        self.blocking(DesktopCode::InputFailed, move |_| win32::send_keys(&events))
            .await
    }

    async fn press(&self, chord: KeyChord) -> Result<(), DriverError> {
        let events = vk::chord(&chord);
        self.blocking(DesktopCode::InputFailed, move |_| win32::send_keys(&events))
            .await
    }

    async fn screenshot(&self) -> Result<WindowShot, DriverError> {
        shot::screenshot(self.app.clone()).await
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
        let Windows {
            ctx,
            com,
            app,
            launched,
            video,
        } = *self;
        // The video first, while the window is still there.
        let keep = DEFAULT_GRACE + CLOSE_RESERVE;
        let video_deadline = Deadline::after(deadline.remaining().saturating_sub(keep));
        let mut notes = video.finish(video_deadline).await;
        // Off UI Automation before the processes end; the thread ends when
        // its last handle drops.
        drop(com);
        drop(app);
        let cleanup = ctx.processes.end_all(DEFAULT_GRACE, deadline).await;
        drop(launched);
        notes.extend(app_logs::keep(&ctx));
        CloseResult { cleanup, notes }
    }
}
