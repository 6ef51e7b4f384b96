//! The application window's pixels as a PNG: ScreenCaptureKit on exactly
//! the window a step uses, never a screen region.

use super::app::{App, Win};
use super::ffi;
use super::objc::{self, CaptureError, Pixels};
use crate::pixels;
use qa_core::DriverError;
use qa_desktop::{DesktopCode, WindowShot};
use std::sync::Arc;
use std::time::Duration;

/// Longest one capture may take.
pub(crate) const CAPTURE_BOUND: Duration = Duration::from_secs(5);

/// Captures `w` of `app` (blocking).
pub(crate) fn grab(app: &App, w: &Win) -> Result<Pixels, DriverError> {
    let Some(frame) = w.info.frame else {
        return Err(DriverError::new(
            DesktopCode::CaptureNoWindow,
            format!(
                "the window {:?} reports no frame (AXPosition, AXSize)",
                w.info.title
            ),
        ));
    };
    ffi::touch_window_server();
    objc::capture(app.pid, &frame, &w.info.title, CAPTURE_BOUND).map_err(|e| match e {
        CaptureError::NoWindow(why) => DriverError::new(DesktopCode::CaptureNoWindow, why)
            .with_remediation("the window must be on screen (not minimized, on the current Space); no screen region is captured instead"),
        CaptureError::Failed(why) => DriverError::new(DesktopCode::CaptureFailed, why)
            .with_remediation("check the Screen Recording grant (System Settings → Privacy & Security → Screen Recording) and macOS 14 or later"),
    })
}

/// Raises the window a step uses and captures exactly its pixels.
pub(crate) async fn screenshot(app: Arc<App>) -> Result<WindowShot, DriverError> {
    let r = tokio::task::spawn_blocking(move || {
        let w = app.pick()?;
        // Best effort: ScreenCaptureKit reads the window's own pixels
        // whether or not it is in front.
        let _ = app.raise(&w);
        let px = grab(&app, &w)?;
        let png = pixels::png(px.width, px.height, &px.rgba)
            .map_err(|e| DriverError::new(DesktopCode::CaptureFailed, e))?;
        Ok(WindowShot {
            png,
            window: format!("window {}", px.window_id),
            pid: app.pid as u32,
            x: px.frame.x.round() as i32,
            y: px.frame.y.round() as i32,
            width: px.width,
            height: px.height,
        })
    })
    .await;
    match r {
        Ok(r) => r,
        Err(e) => Err(DriverError::new(DesktopCode::CaptureFailed, e.to_string())),
    }
}
