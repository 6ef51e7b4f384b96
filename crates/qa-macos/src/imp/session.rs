//! The macOS platform under qa-desktop's session: the Accessibility API
//! for the tree, actions and windows, CGEvent for real input,
//! ScreenCaptureKit for pixels, and cleanup. Every AX call runs on a
//! blocking thread, never on the async executor.

use super::actions;
use super::app::App;
use super::ffi::{self, AxElement};
use super::shot;
use super::tree::{self, Node};
use crate::keycodes::{self, KeyEvent};
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
pub(crate) struct Mac {
    /// What the runner gave the session.
    pub ctx: SessionContext,
    /// The application driven.
    pub app: Arc<App>,
    /// The launched process (`None` when attached).
    pub launched: Option<tokio::process::Child>,
    /// The window video.
    pub video: WindowVideo,
}

/// Runs blocking AX work off the async executor.
async fn blocking<R: Send + 'static>(
    code: DesktopCode,
    f: impl FnOnce() -> Result<R, DriverError> + Send + 'static,
) -> Result<R, DriverError> {
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => r,
        Err(e) => Err(DriverError::new(code, e.to_string())),
    }
}

/// The keyboard events that type `text`: each character as a Unicode
/// string on a key press and release.
fn text_events(text: &str) -> Vec<KeyEvent> {
    text.chars()
        .flat_map(|c| {
            [false, true].map(|up| match c {
                '\n' => KeyEvent::Code {
                    code: keycodes::RETURN,
                    up,
                    flags: 0,
                },
                '\t' => KeyEvent::Code {
                    code: keycodes::TAB,
                    up,
                    flags: 0,
                },
                c => KeyEvent::Char { c, up, flags: 0 },
            })
        })
        .collect()
}

#[async_trait]
impl DesktopPlatform for Mac {
    type Element = AxElement;

    fn root(&self) -> AxElement {
        self.app.ax.clone()
    }

    fn application(&self) -> (String, u32) {
        (self.app.name.clone(), self.app.pid as u32)
    }

    async fn walk(&self, root: &AxElement, fields: Fields, cap: usize) -> (Vec<Node>, bool) {
        let root = root.clone();
        tokio::task::spawn_blocking(move || tree::walk(&root, fields, cap))
            .await
            .unwrap_or_default()
    }

    async fn fetch(&self, element: &AxElement, fields: Fields) -> Option<Node> {
        let el = element.clone();
        tokio::task::spawn_blocking(move || tree::fetch(&el, fields))
            .await
            .ok()
            .flatten()
    }

    async fn windows(&self) -> Vec<TopWindow> {
        let app = self.app.clone();
        tokio::task::spawn_blocking(move || {
            let front = app.frontmost();
            app.windows()
                .into_iter()
                .map(|w| TopWindow {
                    name: w.info.title,
                    showing: !w.info.minimized,
                    active: front && w.info.main,
                })
                .collect()
        })
        .await
        .unwrap_or_default()
    }

    async fn activate_window(&self) -> Result<String, DriverError> {
        let app = self.app.clone();
        blocking(DesktopCode::FocusFailed, move || {
            let w = app.pick()?;
            app.raise(&w)
                .map_err(|e| DriverError::new(DesktopCode::FocusFailed, e))?;
            Ok(format!(
                "raised window {:?} and made the application frontmost",
                w.info.title
            ))
        })
        .await
    }

    async fn activate(&self, node: &Node) -> Result<Activated, DriverError> {
        let n = node.clone();
        blocking(DesktopCode::ActivateFailed, move || actions::activate(&n)).await
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
                "the element reports no frame to click (AXPosition and AXSize are missing or empty)",
            ));
        };
        let (cx, cy) = (
            f64::from(x) + f64::from(w) / 2.0,
            f64::from(y) + f64::from(h) / 2.0,
        );
        self.activate_window().await?;
        blocking(DesktopCode::InputFailed, move || {
            ffi::click_at(cx, cy).map_err(|e| DriverError::new(DesktopCode::InputFailed, e))
        })
        .await?;
        Ok(format!("a pointer click at ({cx}, {cy})"))
    }

    async fn select(&self, node: &Node) -> Result<String, DriverError> {
        let n = node.clone();
        blocking(DesktopCode::SelectUnsupported, move || actions::select(&n)).await
    }

    async fn set_value(
        &self,
        node: &Node,
        value: &str,
        deadline: Deadline,
    ) -> Result<String, DriverError> {
        let (n, v) = (node.clone(), value.to_string());
        match deadline
            .run(blocking(DesktopCode::SetValueFailed, move || {
                actions::set_value(&n, &v)
            }))
            .await
        {
            Some(r) => r,
            None => Err(DriverError::new(
                DesktopCode::SetValueFailed,
                "the value was not confirmed before the step deadline",
            )),
        }
    }

    async fn focus(&self, node: &Node) -> Result<(), DriverError> {
        let n = node.clone();
        blocking(DesktopCode::FocusFailed, move || actions::focus(&n)).await
    }

    async fn type_text(&self, text: &str) -> Result<(), DriverError> {
        let events = text_events(text);
        blocking(DesktopCode::InputFailed, move || {
            ffi::post_keys(&events).map_err(|e| DriverError::new(DesktopCode::InputFailed, e))
        })
        .await
    }

    async fn press(&self, chord: KeyChord) -> Result<(), DriverError> {
        let events = keycodes::chord(&chord);
        blocking(DesktopCode::InputFailed, move || {
            ffi::post_keys(&events).map_err(|e| DriverError::new(DesktopCode::InputFailed, e))
        })
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
        let Mac {
            ctx,
            app,
            launched,
            video,
        } = *self;
        // The video first, while the window is still there.
        let keep = DEFAULT_GRACE + CLOSE_RESERVE;
        let video_deadline = Deadline::after(deadline.remaining().saturating_sub(keep));
        let mut notes = video.finish(video_deadline).await;
        drop(app);
        // Only what the run started (an attached application was never
        // registered, so it is never signalled).
        let cleanup = ctx.processes.end_all(DEFAULT_GRACE, deadline).await;
        drop(launched);
        notes.extend(app_logs::keep(&ctx));
        CloseResult { cleanup, notes }
    }
}
