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
use qa_desktop::video::{start_recorder, Captured, WindowVideo};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;
use tokio::time::MissedTickBehavior;

/// Starts the window video of `app` ([`WindowVideo::start`]: off, withheld
/// while the run has secret values, or this capture task).
pub(crate) fn start(ctx: &SessionContext, app: Arc<App>) -> WindowVideo {
    let c = ctx.clone();
    WindowVideo::start(ctx, move |stop| capture(c, app, stop))
}

/// One captured frame.
struct Frame {
    width: u32,
    height: u32,
    rgba: Vec<u8>,
    /// The PNG, when the pixels changed since the last frame.
    png: Option<Vec<u8>>,
}

fn grab_frame(app: &App, last: Option<Vec<u8>>) -> Result<Frame, String> {
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
    Ok(Frame {
        width: px.width,
        height: px.height,
        rgba: px.rgba,
        png,
    })
}

async fn capture(ctx: SessionContext, app: Arc<App>, mut stop: oneshot::Receiver<()>) -> Captured {
    let fps = ctx.recording.bounds.fps.max(1);
    let period = Duration::from_secs(1) / fps;
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut out = Captured::default();
    let mut prev: Option<Vec<u8>> = None;
    loop {
        tokio::select! {
            biased;
            _ = &mut stop => break,
            _ = tick.tick() => {}
        }
        if !ctx.secrets.is_empty() {
            out.secret_seen = true;
            break;
        }
        let started = Instant::now();
        let (a, last) = (app.clone(), prev.take());
        match tokio::task::spawn_blocking(move || grab_frame(&a, last)).await {
            Ok(Ok(Frame {
                width,
                height,
                rgba,
                png,
            })) => {
                if let Some(png) = png {
                    if out.recorder.is_none() {
                        out.recorder = start_recorder(&ctx, width, height).await;
                    }
                    match &out.recorder {
                        Some(r) => r.push(png, started),
                        None => out.last_error = Some("the video recorder could not start".into()),
                    }
                }
                prev = Some(rgba);
            }
            Ok(Err(e)) => out.last_error = Some(e),
            Err(e) => out.last_error = Some(e.to_string()),
        }
        // Capturing takes at most half the time, however slow it is.
        let cost = started.elapsed();
        if cost * 2 > period {
            tokio::select! {
                biased;
                _ = &mut stop => break,
                _ = tokio::time::sleep(cost) => {}
            }
        }
    }
    out
}
