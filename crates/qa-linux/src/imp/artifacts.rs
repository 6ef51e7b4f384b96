//! The window's pixels, as evidence.

use super::app::App;
use super::capture::CaptureError;
use super::display::missing;
use qa_core::DriverError;
use qa_desktop::{DesktopCode, WindowShot};
use std::time::Duration;

/// Focuses the application's window and captures exactly its pixels as a PNG.
pub(crate) async fn screenshot(app: &App) -> Result<WindowShot, DriverError> {
    let w = app.focus_window().await?;
    tokio::time::sleep(Duration::from_millis(80)).await;
    let (id, pids) = (w.id, app.pids());
    let frame = app
        .with_x11(DesktopCode::CaptureFailed, move |x| {
            x.capture_window(id, &mut || pids.clone())
        })
        .await?
        .map_err(|e| match e {
            CaptureError::Covered => DriverError::new(
                DesktopCode::CaptureCovered,
                format!(
                    "{} after it was raised, and this X server cannot hand the window's own pixels (no Composite extension); no picture was taken",
                    e.message()
                ),
            )
            .with_remediation("close or move the other program's window, or run on an X server with the Composite extension (Xvfb and Xorg have it; --virtual-display uses Xvfb)"),
            CaptureError::Failed(e) => DriverError::blocked(
                DesktopCode::CaptureFailed,
                missing(
                    "window-capture",
                    e,
                    "run on a 24/32-bit TrueColor X display (Xvfb -screen 0 WxHx24)",
                ),
            ),
        })?;
    let png = frame
        .png()
        .map_err(|e| DriverError::new(DesktopCode::CaptureFailed, e))?;
    Ok(WindowShot {
        png,
        window: format!("window 0x{:x}", w.id),
        pid: w.pid,
        x: w.x,
        y: w.y,
        width: w.width,
        height: w.height,
    })
}
