//! Window video: a capture task reads exactly the application's window
//! (`PrintWindow`, as the screenshots do; never a screen region, so never
//! another program's pixels) at the flow's frame rate and hands PNG frames
//! to qa-core's [`VideoRecorder`] (the shared ffmpeg encoder); `close`
//! stops it and finishes the video before the application's processes end.
//!
//! Which window: the one the session used last, else the one
//! [`App::pick`] chooses. An unchanged frame is not encoded again (the
//! recorder holds the last one); a capture that fails is skipped.
//!
//! **Secrets, fail-closed**: window pixels cannot be checked for a secret,
//! so while the run has secret values no frame is taken and the video is
//! withheld, with a note.

use super::app::App;
use super::shot::png;
use super::win32;
use qa_core::video::{FrameFormat, VideoRecorder, VideoSpec};
use qa_core::{Deadline, Note, NoteKind, SessionContext};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;
use tokio::time::MissedTickBehavior;

/// The video's base name (`artifacts/videos/window.webm`).
const VIDEO_NAME: &str = "window";

/// The window video of one session.
pub(crate) enum WindowVideo {
    /// `--video off`.
    Off,
    /// Not recorded: the run has secret values.
    Withheld,
    /// The capture task runs (stop it, then await what it captured).
    Recording(oneshot::Sender<()>, tokio::task::JoinHandle<Captured>),
}

/// What the capture task did.
#[derive(Default)]
pub(crate) struct Captured {
    recorder: Option<VideoRecorder>,
    last_error: Option<String>,
    secret_seen: bool,
}

fn note(s: String) -> Note {
    Note::new(NoteKind::Evidence, s)
}

impl WindowVideo {
    /// Starts the window video when the run records video.
    pub(crate) fn start(ctx: &SessionContext, app: Arc<App>) -> WindowVideo {
        if !ctx.recording.video.records() {
            return WindowVideo::Off;
        }
        if !ctx.secrets.is_empty() {
            ctx.evidence.withhold(
                &format!("{VIDEO_NAME}.webm"),
                "the run has secret values and a window's pixels cannot be checked for them; the video was not recorded",
            );
            return WindowVideo::Withheld;
        }
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(capture(ctx.clone(), app, stopped));
        WindowVideo::Recording(stop, task)
    }

    /// Stops the capture and finishes the video within `deadline`.
    pub(crate) async fn finish(self, deadline: Deadline) -> Vec<Note> {
        let (stop, task) = match self {
            WindowVideo::Off => return Vec::new(),
            WindowVideo::Withheld => {
                return vec![note(format!(
                    "video {VIDEO_NAME} was not recorded: the run has secret values, and a window's pixels cannot be checked or masked for them"
                ))]
            }
            WindowVideo::Recording(stop, task) => (stop, task),
        };
        let _ = stop.send(());
        let abort = task.abort_handle();
        let captured = match deadline.run(task).await {
            Some(Ok(c)) => c,
            Some(Err(e)) => {
                return vec![note(format!(
                    "video {VIDEO_NAME}: the capture task failed ({e}); no video was written"
                ))]
            }
            None => {
                abort.abort();
                return vec![note(format!(
                    "video {VIDEO_NAME}: the window capture did not stop within the cleanup deadline; the video may be missing or cut short"
                ))];
            }
        };
        let mut notes = Vec::new();
        if captured.secret_seen {
            notes.push(note(format!(
                "video {VIDEO_NAME}: frames stopped when the run gained secret values"
            )));
        }
        match captured.recorder {
            Some(rec) => notes.extend(rec.finish(deadline).await.into_notes()),
            None => notes.push(note(format!(
                "video {VIDEO_NAME}: no frame of the application's window could be captured ({}), so no video was written",
                captured
                    .last_error
                    .as_deref()
                    .unwrap_or("the application showed no window")
            ))),
        }
        notes
    }
}

/// One captured frame.
struct Frame {
    width: u32,
    height: u32,
    rgba: Vec<u8>,
    /// The PNG, when the pixels changed since the last frame.
    png: Option<Vec<u8>>,
}

/// One frame of the window the session used last (else the one it would
/// pick).
fn grab(app: &App, last: Option<Vec<u8>>) -> Result<Frame, String> {
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
    Ok(Frame {
        width,
        height,
        rgba,
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
        match tokio::task::spawn_blocking(move || grab(&a, last)).await {
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

async fn start_recorder(ctx: &SessionContext, width: u32, height: u32) -> Option<VideoRecorder> {
    let spec = VideoSpec {
        name: VIDEO_NAME.into(),
        format: FrameFormat::Png,
        width,
        height,
        bounds: ctx.recording.bounds,
        mode: ctx.recording.video,
        step: None,
        wait_for_begin: false,
    };
    let (evidence, processes) = (ctx.evidence.clone(), ctx.processes.clone());
    tokio::task::spawn_blocking(move || VideoRecorder::start(evidence, &processes, spec))
        .await
        .ok()
}
