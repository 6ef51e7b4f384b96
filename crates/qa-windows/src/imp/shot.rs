//! The application window's pixels as a PNG.

use super::app::App;
use super::win32;
use qa_core::DriverError;
use qa_desktop::{DesktopCode, WindowShot};
use std::sync::Arc;

/// Encodes top-down RGBA pixels as a PNG.
pub(crate) fn png(width: u32, height: u32, rgba: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, width, height);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    enc.set_compression(png::Compression::Fast);
    let mut w = enc.write_header().map_err(|e| e.to_string())?;
    w.write_image_data(rgba).map_err(|e| e.to_string())?;
    w.finish().map_err(|e| e.to_string())?;
    Ok(out)
}

/// Raises the window a step uses and captures exactly its pixels.
pub(crate) async fn screenshot(app: Arc<App>) -> Result<WindowShot, DriverError> {
    let r = tokio::task::spawn_blocking(move || {
        let w = app.pick()?;
        // Best effort: PrintWindow reads the window's own pixels whether or
        // not it is in front.
        let _ = win32::raise(w.hwnd);
        let (width, height, rgba) =
            win32::capture(w.hwnd).map_err(|e| DriverError::new(DesktopCode::CaptureFailed, e))?;
        let png = png(width, height, &rgba)
            .map_err(|e| DriverError::new(DesktopCode::CaptureFailed, e))?;
        let (x, y, _, _) = win32::window_rect(w.hwnd).unwrap_or(w.rect);
        Ok(WindowShot {
            png,
            window: format!("window 0x{:x}", w.hwnd),
            pid: w.pid,
            x,
            y,
            width,
            height,
        })
    })
    .await;
    match r {
        Ok(r) => r,
        Err(e) => Err(DriverError::new(DesktopCode::CaptureFailed, e.to_string())),
    }
}
