//! Window video: a capture task takes exactly the application's window
//! (ScreenCaptureKit, as the screenshots do; never a screen region, so
//! never another program's pixels) at the flow's frame rate and hands PNG
//! frames to qa-core's recorder (the shared ffmpeg encoder, with the run's
//! configurable length cap); the lifecycle around it (off, withheld,
//! stopping and finishing at `close`) is [`WindowVideo`]'s.
//!
//! Which window: the one the session used last, else the one
//! [`App::pick`] chooses. An unchanged frame is not encoded again (the
//! recorder holds the last one); a capture that fails is skipped.
//!
//! **Secrets, fail-closed**: window pixels cannot be checked for a secret,
//! so while the run has secret values no frame is taken and the video is
//! withheld, with a note ([`WindowVideo`]).

use super::app::App;
use super::shot::grab;
use crate::pixels::png;
use qa_core::SessionContext;
use qa_desktop::video::{capture_periodically, WindowFrame, WindowVideo};
use std::sync::Arc;

/// Starts the window video of `app` ([`WindowVideo::start`]: off, withheld
/// while the run has secret values, or this capture task).
pub(crate) fn start(ctx: &SessionContext, app: Arc<App>) -> WindowVideo {
    let c = ctx.clone();
    WindowVideo::start(ctx, move |stop| {
        capture_periodically(c, move |last| grab_frame(&app, last), stop)
    })
}

fn grab_frame(app: &App, last: Option<Vec<u8>>) -> Result<WindowFrame, String> {
    let w = match app.last_picked() {
        Some(w) => w,
        None => app.pick().map_err(|e| e.message)?,
    };
    let px = grab(app, &w).map_err(|e| e.message)?;
    let png = if last.as_deref() == Some(&px.rgba[..]) {
        None
    } else {
        Some(png(px.width, px.height, &px.rgba)?)
    };
    Ok(WindowFrame {
        width: px.width,
        height: px.height,
        rgba: px.rgba,
        png,
    })
}
