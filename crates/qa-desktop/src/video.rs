//! A desktop window's video, the part that is the same on every OS: it is
//! off, withheld (the run has secret values: window pixels cannot be
//! checked for them, so no frame is ever taken), or a capture task the
//! platform runs — grabbing exactly the application's window and pushing
//! PNG frames to qa-core's [`VideoRecorder`] — that `close` stops and
//! finishes before the application's processes end.

use qa_core::recording::VideoBounds;
use qa_core::video::{FrameFormat, FrameSize, VideoRecorder, VideoSpec};
use qa_core::{Deadline, Note, NoteKind, SessionContext};
use std::future::Future;
use tokio::sync::oneshot;

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
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(t) = &self.task {
            t.abort();
        }
    }
}

fn note(s: String) -> Note {
    Note::new(NoteKind::Evidence, s)
}

impl WindowVideo {
    /// Starts the window video when the run records video: withheld when
    /// the run has secret values, otherwise `capture` on the runtime. The
    /// task gets a receiver that fires when it must stop; it takes no frame
    /// once the run has a secret value ([`Captured::secret_seen`]).
    pub fn start<F, Fut>(ctx: &SessionContext, capture: F) -> WindowVideo
    where
        F: FnOnce(oneshot::Receiver<()>) -> Fut,
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
        let task = tokio::spawn(capture(stopped));
        WindowVideo::Recording(Running {
            stop: Some(stop),
            task: Some(task),
        })
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
/// (Windows, macOS): every `1/fps` seconds, `grab` (given the last
/// capture's pixels; a blocking call, run off the async runtime) reads the
/// window; a changed picture goes to the recorder, started at the first
/// one. A capture that fails is skipped and remembered; capturing takes at
/// most half the time however slow it is; a secret value registered during
/// the run stops it.
pub async fn capture_periodically<G>(
    ctx: SessionContext,
    grab: G,
    mut stop: oneshot::Receiver<()>,
) -> Captured
where
    G: Fn(Option<Vec<u8>>) -> Result<WindowFrame, String> + Clone + Send + 'static,
{
    use std::time::{Duration, Instant};
    let fps = ctx.recording.bounds.fps.max(1);
    let period = Duration::from_secs(1) / fps;
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
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
