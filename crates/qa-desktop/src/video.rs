//! A desktop window's video, the part that is the same on every OS: it is
//! off, withheld (the run has secret values: window pixels cannot be
//! checked for them, so no frame is ever taken), or a capture task the
//! platform runs — grabbing exactly the application's window and pushing
//! PNG frames to qa-core's [`VideoRecorder`] — that `close` stops and
//! finishes before the application's processes end.
//!
//! A window video is made watchable the way a browser video is: before the
//! first input the session asks for a fresh frame and waits until the
//! video has one ([`WindowVideo::ready`]), so the video starts with the
//! window as it was before anything was typed or clicked; after each
//! performed step it asks for a fresh frame again ([`WindowVideo::hold`]).
//! Each of these frames is held on screen for
//! [`DEFAULT_VIDEO_HOLD_MS`](qa_core::recording::DEFAULT_VIDEO_HOLD_MS)
//! in the video (the pause is in the video's timeline and its `holds`,
//! not in the run), which also keeps it from being replaced by a newer
//! frame taken within the same `1/fps` slot. The capture task gets these
//! asks through its [`Control`].

use qa_core::recording::VideoBounds;
use qa_core::video::{FrameFormat, FrameSize, VideoRecorder, VideoSpec};
use qa_core::{Deadline, Note, NoteKind, SessionContext};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot};

/// The video's base name (`artifacts/videos/window.webm`).
pub const VIDEO_NAME: &str = "window";

/// What a platform's capture task hands back when it stops.
#[derive(Default)]
pub struct Captured {
    /// The recorder, started at the first frame (`None`: no frame was
    /// captured).
    pub recorder: Option<VideoRecorder>,
    /// A recorder started before the first frame ([`FrameSize::First`])
    /// that never got one: finished (its encoder ended) and left out.
    pub unused: Option<VideoRecorder>,
    /// Why the last capture failed, if one did.
    pub last_error: Option<String>,
    /// A secret value was registered during the run: frames stopped.
    pub secret_seen: bool,
    /// What the platform has to say about the frames (left out, and why).
    pub notes: Vec<String>,
}

/// The window video of one session.
pub enum WindowVideo {
    /// `--video off`.
    Off,
    /// Not recorded: the run has secret values.
    Withheld,
    /// The capture task runs.
    Recording(Running),
}

/// A running capture task (aborted if dropped without
/// [`WindowVideo::finish`]).
pub struct Running {
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<Captured>>,
    /// Asks for a fresh frame (and a hold) to the task.
    asks: mpsc::UnboundedSender<Ask>,
    /// [`WindowVideo::ready`] asked already.
    readied: AtomicBool,
}

/// What a session asks of a running capture task: a fresh frame of the
/// window now and, after it, a hold of that frame (see
/// [`VideoRecorder::hold`]). Dropping it answers `false`.
pub struct Ask {
    /// How long to hold the fresh frame (`None`: only take it).
    hold: Option<Duration>,
    /// Answered only once the video has a frame (the first input waits
    /// for it); otherwise answered after the next capture, whatever it got.
    first: bool,
    /// Whether the video has a frame.
    done: Option<oneshot::Sender<bool>>,
}

impl Ask {
    /// Holds what `recorder` shows now, if this ask holds, and answers.
    fn answer(mut self, recorder: &VideoRecorder) {
        if let Some(length) = self.hold {
            // After the frame was pushed: the hold keeps it on screen.
            recorder.hold(Instant::now(), length);
        }
        if let Some(d) = self.done.take() {
            let _ = d.send(true);
        }
    }
}

/// What wakes a capture task (see [`Control::wait`]).
pub enum Wake {
    /// Stop: the session is closing.
    Stop,
    /// The frame rate's next tick.
    Tick,
    /// A session's ask: take a frame now, then give it back with
    /// [`Control::answer`].
    Ask(Ask),
}

/// A capture task's end of its [`WindowVideo`]: when to stop, and the
/// session's asks for a frame.
pub struct Control {
    stop: oneshot::Receiver<()>,
    asks: mpsc::UnboundedReceiver<Ask>,
    /// The ask waiting for the video's first frame.
    waiting: Option<Ask>,
    /// An ask that ended a rest, for the next [`Control::wait`].
    next: Option<Ask>,
}

impl Control {
    /// Waits for the next thing to do: stop (first), an ask, or `tick`.
    pub async fn wait(&mut self, tick: &mut tokio::time::Interval) -> Wake {
        if let Some(a) = self.next.take() {
            return Wake::Ask(a);
        }
        tokio::select! {
            biased;
            _ = &mut self.stop => Wake::Stop,
            Some(a) = self.asks.recv() => Wake::Ask(a),
            _ = tick.tick() => Wake::Tick,
        }
    }

    /// Rests for `d`, or until the session asks for a frame (the next
    /// [`Control::wait`] hands the ask over); `false` when asked to stop
    /// meanwhile.
    pub async fn rest(&mut self, d: Duration) -> bool {
        tokio::select! {
            biased;
            _ = &mut self.stop => false,
            Some(a) = self.asks.recv() => {
                self.next = Some(a);
                true
            }
            _ = tokio::time::sleep(d) => true,
        }
    }

    /// After a capture (the frame it took, if any, pushed to `recorder`):
    /// answers `ask` and the ask that waited for the first frame. Without
    /// a recorder the video has no frame yet: nothing is held, and an ask
    /// for the first frame waits for it (the newest one only).
    pub fn answer(&mut self, ask: Option<Ask>, recorder: Option<&VideoRecorder>) {
        for a in self.waiting.take().into_iter().chain(ask) {
            match recorder {
                Some(r) => a.answer(r),
                // Replacing an older one answers it `false`.
                None if a.first => self.waiting = Some(a),
                None => drop(a),
            }
        }
    }
}

fn note(s: String) -> Note {
    Note::new(NoteKind::Evidence, s)
}

impl WindowVideo {
    /// Starts the window video when the run records video: withheld when
    /// the run has secret values, otherwise `capture` on the runtime. The
    /// task gets its [`Control`]: when it must stop, and the session's asks
    /// for a frame; it takes no frame once the run has a secret value
    /// ([`Captured::secret_seen`]).
    pub fn start<F, Fut>(ctx: &SessionContext, capture: F) -> WindowVideo
    where
        F: FnOnce(Control) -> Fut,
        Fut: Future<Output = Captured> + Send + 'static,
    {
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
        let (asks, asked) = mpsc::unbounded_channel();
        let control = Control {
            stop: stopped,
            asks: asked,
            waiting: None,
            next: None,
        };
        let task = tokio::spawn(capture(control));
        WindowVideo::Recording(Running {
            stop: Some(stop),
            task: Some(task),
            asks,
            readied: AtomicBool::new(false),
        })
    }

    /// Whether frames are being taken (not off, not withheld).
    pub fn records(&self) -> bool {
        matches!(self, WindowVideo::Recording(_))
    }

    /// Before the first input: asks the capture task for a fresh frame of
    /// the window (looking for the window now if it has not found it),
    /// waits, within `deadline`, until the video has a frame, and holds it
    /// on screen for `length`, so the video starts with the window as it
    /// was before the input and that picture stays readable. Whether the
    /// video has a frame. Only the first call asks and waits (later ones
    /// answer `true` at once); an off or withheld video answers `false`.
    pub async fn ready(&self, length: Duration, deadline: Deadline) -> bool {
        let WindowVideo::Recording(run) = self else {
            return false;
        };
        if run.readied.swap(true, Ordering::SeqCst) {
            return true;
        }
        let (done, taken) = oneshot::channel();
        let ask = Ask {
            hold: Some(length),
            first: true,
            done: Some(done),
        };
        run.asks.send(ask).is_ok() && matches!(deadline.run(taken).await, Some(Ok(true)))
    }

    /// After a performed step (or a verified one that holds): asks the
    /// capture task for a fresh frame of the window and to hold it on
    /// screen for `length` in the video, and waits, within `deadline`,
    /// until it was taken. Nothing for an off or withheld video, and
    /// nothing before [`WindowVideo::ready`]: before the first input the
    /// window is what `ready` holds (and a hold asked before the video has
    /// a frame could not be kept, so the holds would depend on timing).
    pub async fn hold(&self, length: Duration, deadline: Deadline) {
        let WindowVideo::Recording(run) = self else {
            return;
        };
        if !run.readied.load(Ordering::SeqCst) {
            return;
        }
        let (done, taken) = oneshot::channel();
        let ask = Ask {
            hold: Some(length),
            first: false,
            done: Some(done),
        };
        if run.asks.send(ask).is_ok() {
            let _ = deadline.run(taken).await;
        }
    }

    /// Stops the capture and finishes the video within `deadline`; the
    /// notes say what the result should (the published video is in the
    /// run's artifacts).
    pub async fn finish(self, deadline: Deadline) -> Vec<Note> {
        let mut run = match self {
            WindowVideo::Off => return Vec::new(),
            WindowVideo::Withheld => {
                return vec![note(format!(
                    "video {VIDEO_NAME} was not recorded: the run has secret values, and a window's pixels cannot be checked or masked for them"
                ))]
            }
            WindowVideo::Recording(r) => r,
        };
        if let Some(s) = run.stop.take() {
            let _ = s.send(());
        }
        let Some(task) = run.task.take() else {
            return Vec::new();
        };
        let abort = task.abort_handle();
        let captured = match deadline.run(task).await {
            Some(Ok(c)) => c,
            Some(Err(e)) => {
                return vec![note(format!(
                    "video {VIDEO_NAME}: the capture task failed ({e}); no video was written"
                ))]
            }
            None => {
                // Dropping its recorder ends the encoder's input (the frames
                // so far may still be written); a stuck encoder is ended
                // with the run's processes.
                abort.abort();
                return vec![note(format!(
                    "video {VIDEO_NAME}: the window capture did not stop within the cleanup deadline; the video may be missing or cut short"
                ))];
            }
        };
        if let Some(rec) = captured.unused {
            // Its encoder got no frame: ended now, nothing to publish.
            let _ = rec.finish(deadline).await;
        }
        let mut notes: Vec<Note> = captured.notes.into_iter().map(note).collect();
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
                    .unwrap_or("no window of the application was found on the display")
            ))),
        }
        notes
    }
}

/// Starts the window's recorder: at `size` (the first frame's, the
/// window's pixel size as its screenshots have it), or before the window
/// is shown with [`FrameSize::First`] (frames are then put at
/// [`video_size`] by [`fit`]). `None` if the starting task failed.
pub async fn start_recorder(ctx: &SessionContext, size: FrameSize) -> Option<VideoRecorder> {
    let spec = VideoSpec {
        name: VIDEO_NAME.into(),
        format: FrameFormat::Png,
        size,
        bounds: ctx.recording.bounds,
        mode: ctx.recording.video,
        step: None,
        wait_for_begin: false,
    };
    let (evidence, processes) = (ctx.evidence.clone(), ctx.processes.clone());
    // Starting the encoder forks: off the async runtime.
    tokio::task::spawn_blocking(move || VideoRecorder::start(evidence, &processes, spec))
        .await
        .ok()
}

/// The recorder of a window video that [`WindowVideo::start`] will
/// record (video on, no secret value), started before the application
/// and its window are, at the first frame's size ([`FrameSize::First`]):
/// its encoder then loads while the application starts, not in the steps
/// after the window is first shown. `None` when there will be no video.
pub async fn start_early(ctx: &SessionContext) -> Option<VideoRecorder> {
    if !ctx.recording.video.records() || !ctx.secrets.is_empty() {
        return None;
    }
    start_recorder(ctx, FrameSize::First).await
}

/// The size a window video started with [`FrameSize::First`] has, for a
/// first frame of `width`×`height`: that size, or, past the video's width
/// bound, that size scaled down to it (keeping the aspect ratio) in even
/// numbers.
pub fn video_size(width: u32, height: u32, bounds: &VideoBounds) -> (u32, u32) {
    if width <= bounds.max_width {
        // The encoder pads an odd size itself.
        (width.max(1), height.max(1))
    } else {
        qa_core::video::ffmpeg::output_size(width, height, bounds.max_width)
    }
}

/// `pixels` (`channels` bytes per pixel, rows top to bottom) of a
/// `from`-sized picture put in a black picture of size `to`: scaled to fit
/// it whole (keeping the aspect ratio; nearest pixel) and placed at the
/// top left, as the encoder would fit a picture of another size. The
/// pictures of a window that was resized after the video began, or wider
/// than the video's bound, or of an odd size.
pub fn fit(pixels: &[u8], channels: usize, from: (u32, u32), to: (u32, u32)) -> Vec<u8> {
    let (fw, fh) = (from.0 as u64, from.1 as u64);
    let (tw, th) = (to.0 as u64, to.1 as u64);
    let mut out = vec![0u8; (tw * th) as usize * channels];
    if fw == 0 || fh == 0 || tw == 0 || th == 0 {
        return out;
    }
    // Scaled size: as large as fits, the aspect ratio kept (the smaller
    // of the two ratios, in integers).
    let (sw, sh) = if tw * fh <= th * fw {
        (tw, (fh * tw / fw).clamp(1, th))
    } else {
        ((fw * th / fh).clamp(1, tw), th)
    };
    let row = fw as usize * channels;
    for y in 0..sh {
        let sy = (y * fh / sh) as usize;
        let src = &pixels.get(sy * row..(sy + 1) * row).unwrap_or(&[]);
        let dst = (y * tw) as usize * channels;
        for x in 0..sw {
            let sx = (x * fw / sw) as usize * channels;
            let d = dst + x as usize * channels;
            if let (Some(s), Some(o)) = (src.get(sx..sx + channels), out.get_mut(d..d + channels)) {
                o.copy_from_slice(s);
            }
        }
    }
    out
}

/// One capture of the application's window.
pub struct WindowFrame {
    /// Its pixel width.
    pub width: u32,
    /// Its pixel height.
    pub height: u32,
    /// Its pixels, RGBA (what the next capture is compared with).
    pub rgba: Vec<u8>,
    /// The PNG, when the pixels changed since the last capture.
    pub png: Option<Vec<u8>>,
}

/// The capture task of a platform whose window pixels are read on demand
/// (Windows, macOS): every `1/fps` seconds, and at once when the session
/// asks ([`Control`]), `grab` (given the last capture's pixels; a blocking
/// call, run off the async runtime) reads the window; a changed picture
/// goes to the recorder, started at the first one. A capture that fails is
/// skipped and remembered; capturing takes at most half the time however
/// slow it is; a secret value registered during the run stops it.
pub async fn capture_periodically<G>(ctx: SessionContext, grab: G, mut control: Control) -> Captured
where
    G: Fn(Option<Vec<u8>>) -> Result<WindowFrame, String> + Clone + Send + 'static,
{
    let fps = ctx.recording.bounds.fps.max(1);
    let period = Duration::from_secs(1) / fps;
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut out = Captured::default();
    let mut prev: Option<Vec<u8>> = None;
    loop {
        let ask = match control.wait(&mut tick).await {
            Wake::Stop => break,
            Wake::Tick => None,
            Wake::Ask(a) => Some(a),
        };
        if !ctx.secrets.is_empty() {
            out.secret_seen = true;
            break;
        }
        let started = Instant::now();
        let (g, last) = (grab.clone(), prev.take());
        match tokio::task::spawn_blocking(move || g(last)).await {
            Ok(Ok(WindowFrame {
                width,
                height,
                rgba,
                png,
            })) => {
                if let Some(png) = png {
                    if out.recorder.is_none() {
                        out.recorder =
                            start_recorder(&ctx, FrameSize::Known { width, height }).await;
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
        control.answer(ask, out.recorder.as_ref());
        let cost = started.elapsed();
        if cost * 2 > period && !control.rest(cost).await {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One-byte "pixels" numbered in reading order.
    fn picture(w: u32, h: u32) -> Vec<u8> {
        (1..=(w * h) as u8).collect()
    }

    #[test]
    fn a_picture_of_the_video_size_is_unchanged() {
        assert_eq!(fit(&picture(3, 2), 1, (3, 2), (3, 2)), picture(3, 2));
    }

    #[test]
    fn a_larger_picture_is_scaled_down_to_fit() {
        // 4×2 into 2×1: every second pixel of the first row.
        assert_eq!(fit(&picture(4, 2), 1, (4, 2), (2, 1)), [1, 3]);
    }

    #[test]
    fn a_narrower_picture_keeps_its_aspect_and_is_padded_right() {
        // 2×2 into 4×2: the picture on the left, black on the right.
        assert_eq!(
            fit(&picture(2, 2), 1, (2, 2), (4, 2)),
            [1, 2, 0, 0, 3, 4, 0, 0]
        );
    }

    #[test]
    fn a_smaller_picture_is_scaled_up_and_channels_stay_together() {
        let rgb = [10, 20, 30];
        assert_eq!(fit(&rgb, 3, (1, 1), (2, 2)), rgb.repeat(4));
    }

    #[test]
    fn the_video_size_is_the_first_frames_within_the_width_bound() {
        let b = VideoBounds {
            max_width: 1280,
            ..Default::default()
        };
        assert_eq!(video_size(801, 599, &b), (801, 599));
        assert_eq!(video_size(2560, 1441, &b), (1280, 720));
    }
}
