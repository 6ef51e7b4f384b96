//! Window video: a capture task grabs exactly the application's window
//! (the same capture the PNG screenshots use; never another program's
//! pixels) at the flow's frame rate and hands PNG frames to qa-core's
//! [`qa_core::video::VideoRecorder`]; the lifecycle around it (off,
//! withheld, stopping and finishing at `close`) is
//! [`qa_desktop::video::WindowVideo`]'s.
//!
//! Which window: the one the session last picked for a step (a screenshot,
//! typing, focusing), and until it has picked one, the application's window
//! found on X11 alone (the flow's `window.title`, else the largest) — no
//! accessibility calls, so the steps' AT-SPI traffic is not slowed. A
//! frame that cannot be captured (the window closed, moved off the
//! display) is skipped; a window that is never captured gives no video and
//! a note. A window of another program over the application's window never
//! reaches a frame: the capture reads the window's own pixels then (X
//! Composite), and where it cannot, the frame is left out and a note says
//! how many were ([`X11::capture_window`]).
//!
//! The encoder starts before the first frame (with the application when
//! the session launches it: [`qa_desktop::video::start_early`]), so its
//! loading does not fall on the steps after the window is first shown; it
//! learns the video's size from the first frame ([`FrameSize::First`]).
//! Every later frame is put at that size ([`qa_desktop::video::fit`]).
//!
//! The session asks for a frame at once ([`qa_desktop::video::Control`]):
//! before the first input (the window is looked for then too, so the video
//! starts before anything was typed) and after each performed step, whose
//! fresh frame is then held on screen in the video.
//!
//! Cost: the capture and PNG encoding run on the blocking pool; a missed
//! tick is skipped (a lower effective rate), a capture never takes more
//! than half the time (it waits as long as it worked when slow), and an
//! unchanged window is not encoded again (the recorder holds the last frame).
//!
//! **Secrets, fail-closed.** Nothing can tell whether a window's pixels show
//! a secret (the X server hands pixels, not text), so no frame is pushed
//! while the run has secret values: the video is withheld whole, listed
//! under `artifacts.withheld` with a note, rather than masked by guess.

use super::capture::{encode_png, CaptureError, RgbFrame, XWindow, X11};
use super::procs;
use qa_core::recording::VideoBounds;
use qa_core::video::{FrameSize, VideoRecorder};
use qa_core::SessionContext;
use qa_desktop::video::{
    fit, start_recorder, video_size, Captured, Control, Wake, WindowVideo, VIDEO_NAME,
};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio::time::MissedTickBehavior;
use x11rb::protocol::xproto::Window;

/// How often the application's window is looked for before one is found.
const LOOK_EVERY: Duration = Duration::from_millis(250);

/// Failed captures in a row after which the window is looked for again.
const LOST_AFTER: u32 = 8;

/// What the window video needs to know about the application.
pub(crate) struct Target {
    /// The display.
    pub x11: Arc<X11>,
    /// The process owning the application's accessibility-bus connection.
    pub bus_pid: u32,
    /// The launched process, if any.
    pub launched_pid: Option<u32>,
    /// The window title the flow names (`application.window.title`).
    pub title: Option<String>,
    /// The window the session picked last ([`super::app::App::x_window`]).
    pub picked: watch::Receiver<Option<Window>>,
    /// The recorder, when it was started before the application
    /// ([`qa_desktop::video::start_early`]); otherwise the capture starts
    /// one as it begins.
    pub early: Option<VideoRecorder>,
}

/// Starts the window video of the application `target` names
/// ([`WindowVideo::start`]: off, withheld while the run has secret values,
/// or this capture task).
pub(crate) fn start(ctx: &SessionContext, target: Target) -> WindowVideo {
    let c = ctx.clone();
    WindowVideo::start(ctx, move |control| capture(c, target, control))
}

/// The capture loop: one frame per tick, and one at once for each of the
/// session's asks, until stopped.
async fn capture(ctx: SessionContext, mut t: Target, mut control: Control) -> Captured {
    let fps = ctx.recording.bounds.fps.max(1);
    let period = Duration::from_secs(1) / fps;
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut out = Captured::default();
    let composite = t.x11.has_composite();
    // Frames left out because another program's window covered it.
    let mut covered = 0u64;
    let mut window: Option<Window> = None;
    let mut next_look = Instant::now();
    let mut failed_in_row = 0u32;
    let mut prev: Option<RgbFrame> = None;
    // The encoder starts before the window is shown (with the application
    // when the session launched it): loading it (about 70 ms of CPU) falls
    // on the application's start rather than on the steps that follow the
    // window's first picture. Frames are put at the first one's size
    // (`size`).
    let mut early = match t.early.take() {
        Some(r) => Some(r),
        None => start_recorder(&ctx, FrameSize::First).await,
    };
    let mut size: Option<(u32, u32)> = None;
    let bounds = ctx.recording.bounds;
    loop {
        let ask = match control.wait(&mut tick).await {
            Wake::Stop => break,
            Wake::Tick => None,
            Wake::Ask(a) => {
                // Asked for a frame: look for the window now if need be.
                next_look = Instant::now();
                Some(a)
            }
        };
        if t.picked.has_changed().unwrap_or(false) {
            if let Some(w) = *t.picked.borrow_and_update() {
                window = Some(w);
                failed_in_row = 0;
            }
        }
        if window.is_none() && Instant::now() >= next_look {
            next_look = Instant::now() + LOOK_EVERY;
            let (x, pids, title) = (
                t.x11.clone(),
                procs::window_pids(t.bus_pid, t.launched_pid),
                t.title.clone(),
            );
            window = tokio::task::spawn_blocking(move || {
                choose(&x.windows_of(&pids), title.as_deref()).map(|w| w.id)
            })
            .await
            .ok()
            .flatten();
        }
        let Some(id) = window else {
            control.answer(ask, out.recorder.as_ref());
            continue;
        };
        // Fail-closed: no frame while the run has a secret value.
        if !ctx.secrets.is_empty() {
            out.secret_seen = true;
            break;
        }
        let started = Instant::now();
        let x = t.x11.clone();
        let last = prev.take();
        let app = AppPids {
            bus_pid: t.bus_pid,
            launched_pid: t.launched_pid,
        };
        let grabbed =
            tokio::task::spawn_blocking(move || grab(&x, id, app, last, size, bounds)).await;
        let cost = started.elapsed();
        match grabbed {
            Ok(Ok((frame, png))) => {
                failed_in_row = 0;
                if let Some((png, at)) = png {
                    if out.recorder.is_none() {
                        size = Some(at);
                        out.recorder = match early.take() {
                            Some(r) => Some(r),
                            None => {
                                let (width, height) = at;
                                start_recorder(&ctx, FrameSize::Known { width, height }).await
                            }
                        };
                    }
                    match &out.recorder {
                        Some(r) => r.push(png, started),
                        None => out.last_error = Some("the video recorder could not start".into()),
                    }
                }
                prev = Some(frame);
            }
            Ok(Err(Skip::Covered)) => {
                covered += 1;
                out.last_error = Some(Skip::COVERED.into());
            }
            Ok(Err(Skip::Failed(e))) => {
                out.last_error = Some(e);
                failed_in_row += 1;
                if failed_in_row >= LOST_AFTER {
                    window = None;
                    failed_in_row = 0;
                }
            }
            Err(e) => {
                out.last_error = Some(e.to_string());
            }
        }
        // The frame asked for was pushed (or could not be taken): its hold.
        control.answer(ask, out.recorder.as_ref());
        if let Some(rest) = rest_after(cost, period) {
            if !control.rest(rest).await {
                break;
            }
        }
    }
    out.unused = early;
    if covered > 0 && out.recorder.is_some() {
        let why = if composite {
            "the window was covered before it was first captured, so its own pixels could not be read yet"
        } else {
            "the X server has no Composite extension to read the window's own pixels"
        };
        out.notes.push(format!(
            "video {VIDEO_NAME}: {covered} frame(s) were left out while a window of another program covered the application's window ({why}); the video holds the frame before"
        ));
    }
    out
}

/// Captures window `id`; the PNG, at the video's `size` (the first
/// frame's: `None` before it, see [`video_size`]) and with that size, is
/// `None` when the pixels equal `last`'s (the recorder holds the previous
/// frame). A frame that would show a window of another program is never
/// taken ([`X11::capture_window`]).
fn grab(
    x: &X11,
    id: Window,
    app: AppPids,
    last: Option<RgbFrame>,
    size: Option<(u32, u32)>,
    bounds: VideoBounds,
) -> Result<Grabbed, Skip> {
    let frame = x
        .capture_window(id, &mut || {
            procs::window_pids(app.bus_pid, app.launched_pid)
        })
        .map_err(|e| match e {
            CaptureError::Covered => Skip::Covered,
            CaptureError::Failed(e) => Skip::Failed(e),
        })?;
    if last.as_ref() == Some(&frame) {
        return Ok((frame, None));
    }
    let at = size.unwrap_or_else(|| video_size(frame.width, frame.height, &bounds));
    let png = if at == (frame.width, frame.height) {
        frame.png()
    } else {
        let rgb = fit(&frame.rgb, 3, (frame.width, frame.height), at);
        encode_png(&rgb, at.0, at.1)
    }
    .map_err(Skip::Failed)?;
    Ok((frame, Some((png, at))))
}

/// A capture, and its PNG at the video's size when it changed.
type Grabbed = (RgbFrame, Option<(Vec<u8>, (u32, u32))>);

/// Why a frame was left out.
#[derive(Debug)]
enum Skip {
    /// A window of another program lay over the window, and its own pixels
    /// could not be read.
    Covered,
    /// The window could not be captured.
    Failed(String),
}

impl Skip {
    const COVERED: &'static str = "a window of another program covered it";
}

/// The processes whose windows are the application's (read when needed).
#[derive(Debug, Clone, Copy)]
struct AppPids {
    bus_pid: u32,
    launched_pid: Option<u32>,
}

/// The window to record when the session has not picked one: the one the
/// flow names by title (exactly), else the largest.
fn choose<'a>(windows: &'a [XWindow], title: Option<&str>) -> Option<&'a XWindow> {
    match title {
        Some(t) => windows.iter().find(|w| w.title == t),
        None => windows
            .iter()
            .max_by_key(|w| w.width as u64 * w.height as u64),
    }
}

/// How long to rest after a capture that took `cost`, so that capturing
/// uses at most half the time however slow it is (`None`: the next tick).
fn rest_after(cost: Duration, period: Duration) -> Option<Duration> {
    (cost * 2 > period).then_some(cost)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn win(id: u32, title: &str, width: u32, height: u32) -> XWindow {
        XWindow {
            id,
            pid: 1,
            title: title.into(),
            x: 0,
            y: 0,
            width,
            height,
        }
    }

    #[test]
    fn chooses_the_named_window_or_the_largest() {
        let ws = [win(1, "Main", 400, 300), win(2, "Dialog", 800, 600)];
        assert_eq!(choose(&ws, Some("Main")).map(|w| w.id), Some(1));
        assert_eq!(choose(&ws, None).map(|w| w.id), Some(2));
        // A title the flow names is never replaced by another window.
        assert!(choose(&ws, Some("Other")).is_none());
        assert!(choose(&[], None).is_none());
    }

    #[test]
    fn slow_captures_rest_as_long_as_they_worked() {
        let period = Duration::from_millis(66);
        assert_eq!(rest_after(Duration::from_millis(10), period), None);
        assert_eq!(
            rest_after(Duration::from_millis(50), period),
            Some(Duration::from_millis(50))
        );
    }
}
