//! Window video: a capture task reads exactly the application's window
//! (`PrintWindow`, as the screenshots do; never a screen region, so never
//! another program's pixels) at the flow's frame rate and hands PNG frames
//! to qa-core's recorder (the shared ffmpeg encoder); the lifecycle around
//! it (off, withheld, stopping and finishing at `close`) is
//! [`WindowVideo`]'s.
//!
//! Which window: the one the session used last, else the one
//! [`App::pick`] chooses. An unchanged frame is not encoded again (the
//! recorder holds the last one); a capture that fails is skipped.
//!
//! **Secrets, fail-closed**: window pixels cannot be checked for a secret,
//! so while the run has secret values no frame is taken and the video is
//! withheld, with a note ([`WindowVideo`]).

use super::app::App;
use super::shot::png;
use super::win32;
use qa_core::SessionContext;
use qa_desktop::video::{capture_periodically, WindowFrame, WindowVideo};
use std::sync::Arc;

/// Starts the window video of `app` ([`WindowVideo::start`]: off, withheld
/// while the run has secret values, or this capture task).
pub(crate) fn start(ctx: &SessionContext, app: Arc<App>) -> WindowVideo {
    let c = ctx.clone();
    WindowVideo::start(ctx, move |stop| {
        capture_periodically(c, move |last| grab(&app, last), stop)
    })
}

/// One frame of the window the session used last (else the one it would
/// pick).
fn grab(app: &App, last: Option<Vec<u8>>) -> Result<WindowFrame, String> {
    let h = match app.last_picked() {
        Some(h) => h,
        None => app.pick().map_err(|e| e.message)?.hwnd,
    };
    let (width, height, rgba) = win32::capture(h)?;
    let png = if last.as_deref() == Some(&rgba[..]) {
        None
    } else {
        Some(png(width, height, &rgba)?)
    };
    Ok(WindowFrame {
        width,
        height,
        rgba,
        png,
    })
}
