//! Video evidence: timestamped frames streamed into `ffmpeg` while the run
//! goes, written as WebM (VP8) with each frame at its own time.
//!
//! A driver starts a [`VideoRecorder`] per surface (a page, a popup, a
//! window), [`pushes`](VideoRecorder::push) each frame with the instant it
//! was taken, and [`finishes`](VideoRecorder::finish) it before its
//! processes end. Pushing never blocks the driver: a worker thread
//! places the frames on the video's timeline ([`timeline`]: at most one
//! per `1/fps` slot, a picture that stays encoded once) and hands each
//! slot's frame to the encoder as soon as the slot is over (so what is
//! left to encode when the run ends is at most its last picture); the
//! encoder writes into the run's scratch directory; the finished file is
//! copied into `artifacts/videos/` and published like every artifact
//! (hashed, scanned for secrets).
//!
//! Without `ffmpeg` the run goes on: every distinct frame is kept as an
//! image in `artifacts/videos/` with a `…-frames.json` index of their
//! times, and the outcome names the missing capability (not a failure).
//! The encoder is a process the run started: it is registered with the
//! run's [`ProcessOwner`] and ended with the rest if it outlives the run.
//! Loading it costs tens of milliseconds of CPU, so a driver that knows
//! when its machine is idle can [start the recorder
//! deferred](VideoRecorder::start_deferred) and [start the
//! encoder](VideoRecorder::start_encoder) then; it starts by itself at
//! the first frame the video needs at the latest.
//!
//! A driver makes a result readable without waiting for it: after an
//! action it [holds](VideoRecorder::hold) the video, which keeps the frame
//! on screen then (the action's result and the visualizer's marks) for the
//! hold's length in the encoded timeline while the run goes on. The holds
//! are published with the video ([`crate::evidence::Artifact::holds`]) so
//! a viewer can still place each step on it.

pub mod ffmpeg;
mod timeline;

use crate::deadline::Deadline;
use crate::driver::MissingCapability;
use crate::evidence::{Artifact, ArtifactGroup, Evidence, VideoHold};
use crate::process::ProcessOwner;
use crate::recording::{RecordMode, VideoBounds};
use std::fs::File;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Frames queued for the worker before new ones are dropped (the driver
/// never waits for the encoder).
const QUEUE: usize = 32;

/// Most images kept when there is no encoder.
pub const MAX_KEPT_FRAMES: usize = 600;

/// Most bytes of the encoder's error output kept for a note.
const STDERR_TAIL: usize = 2048;

/// The image format of the pushed frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameFormat {
    /// JPEG (the browser's screencast).
    Jpeg,
    /// PNG (window captures).
    Png,
}

impl FrameFormat {
    /// File extension.
    pub fn ext(self) -> &'static str {
        match self {
            FrameFormat::Jpeg => "jpg",
            FrameFormat::Png => "png",
        }
    }
}

/// The size of a video's frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameSize {
    /// Known when the recording starts (a page's viewport). Frames of
    /// another size are scaled to fit it and padded.
    Known {
        /// Width in pixels.
        width: u32,
        /// Height in pixels.
        height: u32,
    },
    /// The first frame's (a window that is not shown yet). The encoder
    /// starts with the recording, before the size is known, so loading it
    /// does not fall on the steps that follow the first frame; it learns
    /// the size from the first frame. PNG frames only, each of the first
    /// frame's size, which must be within
    /// [`VideoBounds::max_width`](crate::recording::VideoBounds) (see
    /// [`ffmpeg::output_size`]): a frame of another size is left out and
    /// counted in a note.
    First,
}

/// What one video is.
#[derive(Debug, Clone)]
pub struct VideoSpec {
    /// Base file name (`page`, `popup-1`, `window`).
    pub name: String,
    /// Format of the pushed frames.
    pub format: FrameFormat,
    /// The frames' size, or that the first frame gives it.
    pub size: FrameSize,
    /// Bounds.
    pub bounds: VideoBounds,
    /// `on` or `retain-on-failure` (`off` records nothing: start no recorder).
    pub mode: RecordMode,
    /// The step that opened the surface (popups), if any.
    pub step: Option<usize>,
    /// The video's timeline starts at [`VideoRecorder::begin`] (the first
    /// step), not at the first frame: frames before it only decide what
    /// the video shows first.
    pub wait_for_begin: bool,
}

/// What finishing a video produced.
#[derive(Debug, Default)]
pub struct VideoOutcome {
    /// The published video, or the kept frames and their index.
    pub artifacts: Vec<Artifact>,
    /// What a person should know (caps reached, frames dropped, encoder errors).
    pub notes: Vec<String>,
    /// Set when the encoder was missing: video is a missing capability.
    pub missing: Option<MissingCapability>,
}

impl VideoOutcome {
    /// The outcome's notes as driver notes: the missing encoder as a
    /// [`NoteKind::MissingCapability`], the rest as evidence notes.
    pub fn into_notes(self) -> Vec<crate::driver::Note> {
        use crate::driver::{Note, NoteKind};
        let mut out: Vec<Note> = Vec::new();
        if let Some(m) = &self.missing {
            out.push(Note::new(
                NoteKind::MissingCapability,
                format!("video: {} — fix: {}", m.reason, m.remediation),
            ));
        }
        out.extend(
            self.notes
                .into_iter()
                .map(|n| Note::new(NoteKind::Evidence, n)),
        );
        out
    }
}

/// The capability a missing `ffmpeg` is reported as.
pub fn missing_encoder() -> MissingCapability {
    MissingCapability {
        id: "ffmpeg".into(),
        reason: "ffmpeg was not found on PATH, so no video was encoded; the frames and their times were kept".into(),
        remediation: "install ffmpeg (Debian/Ubuntu: apt-get install ffmpeg) or run with --video off".into(),
    }
}

enum Msg {
    Frame(Vec<u8>, Instant),
    Begin(Instant),
    /// Start the deferred encoder now.
    StartEncoder,
    /// The video ends at this instant; it must be written by the deadline.
    End(Instant, Deadline),
}

/// Records one video. See the [module docs](self).
pub struct VideoRecorder {
    tx: SyncSender<Msg>,
    /// Holds asked for, in order, not yet taken by the worker (never lost:
    /// a hold is a few bytes, unlike a frame).
    holds: Arc<std::sync::Mutex<Vec<(Instant, Duration)>>>,
    done: tokio::sync::oneshot::Receiver<VideoOutcome>,
    dropped: Arc<std::sync::atomic::AtomicU64>,
    stop: Arc<Stop>,
    /// [`VideoRecorder::start_encoder`] handed its request to the worker.
    encoder_asked: std::sync::atomic::AtomicBool,
}

/// Stopping the encoder before it has encoded everything: its pid (0: no
/// encoder, or reaped — the lock is held across reaping, so a pid here is
/// always still the encoder's) and whether it was asked to stop.
#[derive(Default)]
struct Stop {
    pid: std::sync::Mutex<u32>,
    asked: std::sync::atomic::AtomicBool,
}

impl Stop {
    /// Asks the encoder to stop and finish its file (SIGTERM: ffmpeg stops
    /// reading and writes what it has encoded); frames not yet written are
    /// left out from here on.
    fn ask(&self) {
        use std::sync::atomic::Ordering;
        if self.asked.swap(true, Ordering::SeqCst) {
            return;
        }
        let pid = self.pid.lock().unwrap_or_else(|p| p.into_inner());
        #[cfg(unix)]
        if let Ok(pid) = libc::pid_t::try_from(*pid) {
            if pid > 0 {
                // SAFETY: kill(2) on the encoder this recorder spawned and
                // has not reaped (the lock is held across reaping).
                #[allow(unsafe_code)]
                unsafe {
                    libc::kill(pid, libc::SIGTERM);
                }
            }
        }
        #[cfg(not(unix))]
        drop(pid);
    }

    /// `child`'s exit, if it has exited (reaping it under the lock).
    fn try_wait(&self, child: &mut Child) -> std::io::Result<Option<std::process::ExitStatus>> {
        let mut pid = self.pid.lock().unwrap_or_else(|p| p.into_inner());
        let r = child.try_wait();
        if !matches!(r, Ok(None)) {
            *pid = 0;
        }
        r
    }

    /// Kills and reaps `child` (under the lock).
    fn kill(&self, child: &mut Child) {
        let mut pid = self.pid.lock().unwrap_or_else(|p| p.into_inner());
        let _ = child.kill();
        let _ = child.wait();
        *pid = 0;
    }

    fn asked(&self) -> bool {
        self.asked.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl std::fmt::Debug for VideoRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VideoRecorder").finish_non_exhaustive()
    }
}

impl VideoRecorder {
    /// Starts recording: the encoder if `ffmpeg` is found (registered
    /// with `processes`), otherwise image frames. Never fails: an encoder
    /// that cannot start falls back to frames with a note.
    pub fn start(
        evidence: Arc<Evidence>,
        processes: &ProcessOwner,
        spec: VideoSpec,
    ) -> VideoRecorder {
        VideoRecorder::start_with(evidence, processes, spec, ffmpeg::find().as_deref())
    }

    /// Like [`VideoRecorder::start`] with an explicit encoder (`None`: keep
    /// frames, as when `ffmpeg` is missing).
    pub fn start_with(
        evidence: Arc<Evidence>,
        processes: &ProcessOwner,
        spec: VideoSpec,
        encoder: Option<&std::path::Path>,
    ) -> VideoRecorder {
        let stop = Arc::new(Stop::default());
        let (sink, notes) = match encoder {
            Some(bin) => open_encoder(bin, &evidence, processes, &spec, &stop),
            None => (
                Sink::Frames(Vec::new(), Some(missing_encoder())),
                Vec::new(),
            ),
        };
        VideoRecorder::with_sink(evidence, spec, sink, notes, stop)
    }

    /// Like [`VideoRecorder::start`], but the encoder process is started
    /// only by [`VideoRecorder::start_encoder`] or, at the latest, when the
    /// first frame is placed on the video's timeline: loading it (tens of
    /// milliseconds of CPU) can then fall where the machine is idle rather
    /// than where the driver is busy. A video that never gets a frame never
    /// starts one.
    pub fn start_deferred(
        evidence: Arc<Evidence>,
        processes: Arc<ProcessOwner>,
        spec: VideoSpec,
    ) -> VideoRecorder {
        VideoRecorder::start_deferred_with(evidence, processes, spec, ffmpeg::find())
    }

    /// Like [`VideoRecorder::start_deferred`] with an explicit encoder
    /// (`None`: keep frames, as when `ffmpeg` is missing).
    pub fn start_deferred_with(
        evidence: Arc<Evidence>,
        processes: Arc<ProcessOwner>,
        spec: VideoSpec,
        encoder: Option<PathBuf>,
    ) -> VideoRecorder {
        let sink = match encoder {
            Some(bin) => Sink::Deferred(bin, processes),
            None => Sink::Frames(Vec::new(), Some(missing_encoder())),
        };
        VideoRecorder::with_sink(evidence, spec, sink, Vec::new(), Arc::new(Stop::default()))
    }

    /// The recorder around `sink`, its worker started.
    fn with_sink(
        evidence: Arc<Evidence>,
        spec: VideoSpec,
        sink: Sink,
        notes: Vec<String>,
        stop: Arc<Stop>,
    ) -> VideoRecorder {
        let (tx, rx) = sync_channel(QUEUE);
        let (done_tx, done) = tokio::sync::oneshot::channel();
        let dropped = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let holds = Arc::new(std::sync::Mutex::new(Vec::new()));
        let worker = Worker {
            asked: holds.clone(),
            begun: !spec.wait_for_begin,
            seen: None,
            evidence,
            timeline: timeline::Timeline::new(spec.bounds.fps, spec.bounds.max_ms),
            spec,
            sink,
            stop: stop.clone(),
            current: None,
            pending: None,
            holds: Vec::new(),
            notes,
            capped: false,
            dropped: dropped.clone(),
        };
        let spawned = std::thread::Builder::new()
            .name("ui-qa-video".into())
            .spawn(move || {
                let out = worker.run(rx);
                let _ = done_tx.send(out);
            });
        if let Err(e) = spawned {
            // No thread: the receiver is dropped and `finish` reports it.
            let _ = e;
        }
        VideoRecorder {
            tx,
            holds,
            done,
            dropped,
            stop,
            encoder_asked: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Starts a [deferred](VideoRecorder::start_deferred) recorder's
    /// encoder now, without waiting for it; once asked, later calls (and
    /// calls on a recorder whose encoder runs already) do nothing. When the
    /// worker's queue is full the request is not kept, so a later call
    /// asks again.
    pub fn start_encoder(&self) {
        use std::sync::atomic::Ordering;
        if self.encoder_asked.load(Ordering::SeqCst) {
            return;
        }
        if self.tx.try_send(Msg::StartEncoder).is_ok() {
            self.encoder_asked.store(true, Ordering::SeqCst);
        }
    }

    /// Starts the video's timeline at `at` (see [`VideoSpec::wait_for_begin`]);
    /// later calls do nothing.
    pub fn begin(&self, at: Instant) {
        let _ = self.tx.try_send(Msg::Begin(at));
    }

    /// Keeps the frame current at `at` (the newest taken before it) on
    /// screen for `length` more in the video; every later frame is shown
    /// that much later. Nothing is held before the timeline began or once
    /// the video reached its bound. Never blocks, and never left out:
    /// frames taken after `at` are shown later whenever they arrive.
    pub fn hold(&self, at: Instant, length: Duration) {
        self.holds
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((at, length));
    }

    /// Hands one frame, taken at `at`, to the worker. Never blocks: when
    /// the worker is behind, the frame is dropped (and counted).
    pub fn push(&self, frame: Vec<u8>, at: Instant) {
        match self.tx.try_send(Msg::Frame(frame, at)) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                self.dropped
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        }
    }

    /// Ends the video at this instant and waits (within `deadline`) for
    /// it to be written and published.
    pub async fn finish(self, deadline: Deadline) -> VideoOutcome {
        self.finish_at(Instant::now(), deadline).await
    }

    /// Ends the video at `end` (a page that closed earlier) and waits
    /// (within `deadline`) for it to be written and published. An encoder
    /// still behind when the deadline nears (a busy machine, a browser
    /// that flooded it) is stopped there, so what it encoded is kept,
    /// cut short, rather than lost.
    pub async fn finish_at(self, end: Instant, deadline: Deadline) -> VideoOutcome {
        let left = deadline.remaining();
        let stop_at = tokio::time::Instant::now() + left.saturating_sub(STOP_BEFORE.min(left / 2));
        let mut done = self.done;
        let stop = self.stop;
        let tx = self.tx;
        // The queue may be full: hand the end over without blocking the runtime.
        let sent = tokio::task::spawn_blocking(move || tx.send(Msg::End(end, deadline)).is_ok())
            .await
            .unwrap_or(false);
        if !sent {
            return VideoOutcome {
                notes: vec!["video: the recorder stopped early; no video was written".into()],
                ..Default::default()
            };
        }
        let finished = tokio::select! {
            r = &mut done => Some(r),
            _ = tokio::time::sleep_until(stop_at) => None,
        };
        let finished = match finished {
            Some(r) => Some(r),
            None => {
                stop.ask();
                deadline.run(done).await
            }
        };
        match finished {
            Some(Ok(o)) => o,
            _ => VideoOutcome {
                notes: vec![
                    "video: encoding did not finish within the cleanup deadline; no video was written"
                        .into(),
                ],
                ..Default::default()
            },
        }
    }
}

/// Starts the encoder `bin` for `spec` (its pid recorded in `stop`); when
/// it cannot start, frames are kept instead and the note says why.
fn open_encoder(
    bin: &std::path::Path,
    evidence: &Evidence,
    processes: &ProcessOwner,
    spec: &VideoSpec,
    stop: &Arc<Stop>,
) -> (Sink, Vec<String>) {
    match Encoder::spawn(bin, evidence, processes, spec, stop.clone()) {
        Ok(e) => {
            *stop.pid.lock().unwrap_or_else(|p| p.into_inner()) = e.child.id();
            (Sink::Encoder(e), Vec::new())
        }
        Err(e) => (
            Sink::Frames(Vec::new(), None),
            vec![format!(
                "video {}: ffmpeg could not start ({e}); the frames were kept instead",
                spec.name
            )],
        ),
    }
}

/// The running encoder process.
struct Encoder {
    child: Child,
    stdin: Option<ChildStdin>,
    out: PathBuf,
    stderr: Option<std::thread::JoinHandle<Vec<u8>>>,
    broken: Option<String>,
    stop: Arc<Stop>,
    /// [`FrameSize::First`]: the stream's header is written with the first
    /// frame.
    pending: Option<FrameFormat>,
    /// [`FrameSize::First`]: the first frame's size, which every frame has.
    size: Option<(u32, u32)>,
    /// Frames left out for having another size (or none that could be read).
    other_size: u64,
}

impl Encoder {
    fn spawn(
        bin: &std::path::Path,
        evidence: &Evidence,
        processes: &ProcessOwner,
        spec: &VideoSpec,
        stop: Arc<Stop>,
    ) -> Result<Encoder, String> {
        // One scratch directory per video (a fresh one each time).
        let dir = evidence
            .scratch_dir(&format!("video-{}", spec.name))
            .map_err(|e| e.to_string())?;
        let out = dir.join(format!("{}.webm", spec.name));
        if out.exists() {
            return Err(format!("{} exists", out.display()));
        }
        let size = match spec.size {
            FrameSize::Known { width, height } => {
                Some(ffmpeg::output_size(width, height, spec.bounds.max_width))
            }
            FrameSize::First => None,
        };
        let mut cmd = Command::new(bin);
        cmd.args(ffmpeg::args(spec.format, size, &spec.bounds, &out))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let (k, v) = processes.marker();
        cmd.env(k, v);
        ProcessOwner::prepare_std(&mut cmd);
        let starting = processes.spawning();
        let mut child = cmd.spawn().map_err(|e| e.to_string())?;
        processes.register(child.id(), "ffmpeg");
        drop(starting);
        let mut stdin = child.stdin.take();
        // With the size to come, the stream's header waits for the first
        // frame (ffmpeg, loaded, waits for it).
        let (broken, pending) = match spec.size {
            FrameSize::Known { width, height } => {
                let header = ffmpeg::ivf_header(spec.format, width, height);
                let broken = stdin
                    .as_mut()
                    .and_then(|s| s.write_all(&header).err())
                    .map(|e| e.to_string());
                (broken, None)
            }
            FrameSize::First => (None, Some(spec.format)),
        };
        let stderr = child.stderr.take().map(|mut s| {
            std::thread::spawn(move || {
                let mut tail = Vec::new();
                let mut buf = [0u8; 1024];
                while let Ok(n) = s.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    tail.extend_from_slice(&buf[..n]);
                    if tail.len() > STDERR_TAIL {
                        tail.drain(..tail.len() - STDERR_TAIL);
                    }
                }
                tail
            })
        });
        Ok(Encoder {
            child,
            stdin,
            out,
            stderr,
            broken,
            stop,
            pending,
            size: None,
            other_size: 0,
        })
    }

    /// Hands one frame, shown from `ms` after the video's start, to the
    /// encoder.
    fn write(&mut self, frame: &[u8], ms: u64) {
        if self.broken.is_some() || self.stop.asked() {
            return;
        }
        if self.pending.is_none() && !self.fits(frame) {
            self.other_size += 1;
            return;
        }
        let Some(stdin) = self.stdin.as_mut() else {
            return;
        };
        if let Some(format) = self.pending {
            // The first frame of a video sized by it ([`FrameSize::First`]).
            let Some((w, h)) = ffmpeg::png_size(frame) else {
                self.other_size += 1;
                return;
            };
            if let Err(e) = stdin.write_all(&ffmpeg::ivf_header(format, w, h)) {
                self.broken = Some(e.to_string());
                return;
            }
            self.pending = None;
            self.size = Some((w, h));
        }
        let r = stdin
            .write_all(&ffmpeg::ivf_frame_header(frame.len(), ms))
            .and_then(|()| stdin.write_all(frame));
        if let Err(e) = r {
            self.broken = Some(e.to_string());
        }
    }

    /// Whether `frame` can go to this encoder: any frame, unless its
    /// size was set by the first frame ([`FrameSize::First`]).
    fn fits(&self, frame: &[u8]) -> bool {
        self.size.is_none() || ffmpeg::png_size(frame) == self.size
    }

    /// Closes the input and waits for the encoder to write its file (one
    /// that was asked to stop writes what it had encoded).
    fn close(mut self, deadline: Deadline) -> Result<Closed, String> {
        drop(self.stdin.take());
        // It usually exits within tens of milliseconds of its input's end:
        // looked for after 1 ms, then twice as long each time up to 10 ms.
        let mut pause = Duration::from_millis(1);
        let status = loop {
            match self.stop.try_wait(&mut self.child) {
                Ok(Some(s)) => break Some(s),
                Ok(None) if deadline.expired() => break None,
                Ok(None) => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(10));
                }
                Err(_) => break None,
            }
        };
        let stopped = self.stop.asked();
        let Some(status) = status else {
            self.stop.kill(&mut self.child);
            return Err("ffmpeg did not finish in time".into());
        };
        let tail = self
            .stderr
            .take()
            .and_then(|h| h.join().ok())
            .map(|t| String::from_utf8_lossy(&t).trim().to_string())
            .unwrap_or_default();
        let written = std::fs::metadata(&self.out).is_ok_and(|m| m.len() > 0);
        if stopped && written {
            return Ok(Closed {
                file: self.out,
                cut_short: true,
            });
        }
        if !status.success() {
            let last = tail.lines().last().unwrap_or("").to_string();
            return Err(format!("ffmpeg ended with {status}: {last}"));
        }
        if let Some(b) = self.broken {
            return Err(format!("writing frames to ffmpeg failed: {b}"));
        }
        Ok(Closed {
            file: self.out,
            cut_short: false,
        })
    }
}

/// How long before the deadline a still-working encoder is asked to stop
/// (at most half the time left).
const STOP_BEFORE: Duration = Duration::from_secs(3);

/// A closed encoder's file.
struct Closed {
    file: PathBuf,
    /// The encoder was stopped before it encoded every frame.
    cut_short: bool,
}

enum Sink {
    Encoder(Encoder),
    /// The encoder (this `ffmpeg`, registered with these processes) is
    /// started when it is first needed ([`VideoRecorder::start_deferred`]).
    Deferred(PathBuf, Arc<ProcessOwner>),
    /// Kept frames (path, ms after the first) and, when ffmpeg is missing, why.
    Frames(Vec<(PathBuf, u64)>, Option<MissingCapability>),
}

/// The newest frame of the latest slot.
struct Current {
    /// Its slot.
    slot: u64,
    frame: Vec<u8>,
    /// Handed to the encoder already: its slot was over before a newer
    /// frame came, so it was encoded while the run went on rather than at
    /// its end.
    written: bool,
}

impl Current {
    /// Hands the frame to the encoder at its slot's time, unless it was
    /// already.
    fn write_once(&mut self, e: &mut Encoder, timeline: &timeline::Timeline) {
        if !self.written {
            e.write(&self.frame, timeline.slot_ms(self.slot));
            self.written = true;
        }
    }
}

struct Worker {
    /// Whether the timeline started.
    begun: bool,
    /// When the first frame arrived (the timeline's start if no begin came).
    seen: Option<Instant>,
    evidence: Arc<Evidence>,
    spec: VideoSpec,
    timeline: timeline::Timeline,
    sink: Sink,
    /// Stopping the encoder (its pid is recorded here when it starts).
    stop: Arc<Stop>,
    /// The newest frame of the latest slot (a newer frame in the same
    /// slot replaces it until the slot is over).
    current: Option<Current>,
    /// The newest frame before the timeline began.
    pending: Option<Vec<u8>>,
    /// The holds in the timeline so far.
    holds: Vec<VideoHold>,
    /// The holds asked for and not taken yet.
    asked: Arc<std::sync::Mutex<Vec<(Instant, Duration)>>>,
    notes: Vec<String>,
    capped: bool,
    dropped: Arc<std::sync::atomic::AtomicU64>,
}

impl Worker {
    fn run(mut self, rx: Receiver<Msg>) -> VideoOutcome {
        let mut end = None;
        let mut deadline = Deadline::after(Duration::from_secs(10));
        loop {
            // A frame whose slot is over is final: it is encoded now, while
            // the run goes on, not when the video ends.
            let msg = match self.due_in() {
                Some(wait) => match rx.recv_timeout(wait) {
                    Ok(m) => m,
                    Err(RecvTimeoutError::Timeout) => {
                        self.write_if_over();
                        continue;
                    }
                    Err(RecvTimeoutError::Disconnected) => break,
                },
                None => match rx.recv() {
                    Ok(m) => m,
                    Err(_) => break,
                },
            };
            match msg {
                Msg::Frame(f, at) => {
                    if self.begun {
                        self.frame(f, at)
                    } else {
                        // Before the timeline: only the newest frame counts.
                        self.seen.get_or_insert(at);
                        self.pending = Some(f);
                    }
                }
                Msg::Begin(at) => self.begin(at),
                Msg::StartEncoder => self.start_encoder(),
                Msg::End(at, d) => {
                    end = Some(at);
                    deadline = d;
                    break;
                }
            }
        }
        self.finish(end.unwrap_or_else(Instant::now), deadline)
    }

    /// How long until the current frame's slot is over (`None`: no frame
    /// waits for the encoder).
    fn due_in(&self) -> Option<Duration> {
        let c = self.current.as_ref().filter(|c| !c.written)?;
        if !matches!(self.sink, Sink::Encoder(_)) || self.timeline.is_last(c.slot) {
            return None;
        }
        let over = Duration::from_millis(self.timeline.slot_ms(c.slot + 1));
        let now = self.timeline.output_time(Instant::now());
        Some(over.saturating_sub(now) + Duration::from_millis(1))
    }

    /// Hands the current frame to the encoder once its slot is over: every
    /// later frame falls in a later slot (holds only move frames later).
    fn write_if_over(&mut self) {
        let over = self.timeline.end_slot(Instant::now());
        if let (Sink::Encoder(e), Some(c)) = (&mut self.sink, self.current.as_mut()) {
            if over > c.slot {
                c.write_once(e, &self.timeline);
            }
        }
    }

    fn begin(&mut self, at: Instant) {
        if self.begun {
            return;
        }
        self.begun = true;
        if let Some(f) = self.pending.take() {
            self.frame(f, at);
        }
    }

    /// Takes the holds asked for at or before `upto` into the timeline
    /// (the frame current then stays; later ones are shown later). A hold
    /// before anything was shown holds nothing.
    fn take_holds(&mut self, upto: Instant) {
        let due: Vec<(Instant, Duration)> = {
            let mut asked = self.asked.lock().unwrap_or_else(|p| p.into_inner());
            let n = asked.iter().take_while(|(at, _)| *at <= upto).count();
            asked.drain(..n).collect()
        };
        for (at, length) in due {
            if self.begun && self.timeline.hold(length) {
                self.holds.push(VideoHold {
                    at_ms: self.evidence.offset_ms(at),
                    ms: length.as_millis() as u64,
                });
            }
        }
    }

    /// Starts a deferred encoder (see [`VideoRecorder::start_deferred`]).
    fn start_encoder(&mut self) {
        if !matches!(self.sink, Sink::Deferred(..)) {
            return;
        }
        let placeholder = Sink::Frames(Vec::new(), None);
        if let Sink::Deferred(bin, processes) = std::mem::replace(&mut self.sink, placeholder) {
            let (sink, notes) =
                open_encoder(&bin, &self.evidence, &processes, &self.spec, &self.stop);
            self.sink = sink;
            self.notes.extend(notes);
        }
    }

    fn frame(&mut self, frame: Vec<u8>, at: Instant) {
        self.start_encoder();
        self.take_holds(at);
        let Some(k) = self.timeline.place(at) else {
            self.capped = true;
            return;
        };
        match &mut self.sink {
            Sink::Encoder(e) => {
                let fresh = Current {
                    slot: k,
                    frame,
                    written: false,
                };
                // Frames come in the order they were taken, so this one is
                // newer than the current one even when it is placed in an
                // earlier slot (a capture that took long is placed where
                // it began).
                self.current = match self.current.take() {
                    // A later slot: the previous one's frame is final.
                    Some(mut c) if k > c.slot => {
                        c.write_once(e, &self.timeline);
                        Some(fresh)
                    }
                    // The current slot is still open: the newest frame is
                    // its picture.
                    Some(c) if !c.written => Some(Current {
                        slot: c.slot,
                        ..fresh
                    }),
                    // The current slot was encoded already: the newest
                    // frame is shown from the next one.
                    Some(c) => Some(Current {
                        slot: c.slot + 1,
                        ..fresh
                    }),
                    None => Some(fresh),
                };
            }
            // Started just above.
            Sink::Deferred(..) => {}
            Sink::Frames(kept, _) => {
                if kept.len() >= MAX_KEPT_FRAMES {
                    self.capped = true;
                    return;
                }
                let ms = self.timeline.output_time(at).as_millis() as u64;
                let name = format!(
                    "{}-frame-{:05}.{}",
                    self.spec.name,
                    kept.len() + 1,
                    self.spec.format.ext()
                );
                if let Ok((p, mut f)) = self.evidence.new_file(ArtifactGroup::Videos, &name) {
                    if f.write_all(&frame).is_ok() {
                        kept.push((p, ms));
                    }
                }
            }
        }
    }

    fn finish(mut self, end: Instant, deadline: Deadline) -> VideoOutcome {
        if !self.begun {
            // No step ran: the timeline starts with the first frame.
            let at = self.seen.unwrap_or(end);
            self.begin(at);
        }
        self.take_holds(end);
        let mut out = VideoOutcome::default();
        let started_ms = self.timeline.first().map(|f| self.evidence.offset_ms(f));
        let dropped = self.dropped.load(std::sync::atomic::Ordering::Relaxed);
        if dropped > 0 {
            self.notes.push(format!(
                "video {}: {dropped} frame(s) arrived while the encoder was behind and were left out",
                self.spec.name
            ));
        }
        if self.capped {
            self.notes.push(format!(
                "video {}: stopped at its bound (videoMaxMs {} ms)",
                self.spec.name, self.spec.bounds.max_ms
            ));
        }
        let sink = std::mem::replace(&mut self.sink, Sink::Frames(Vec::new(), None));
        match sink {
            Sink::Encoder(mut e) => {
                // The last frame, and again where the video ends, so a
                // page that stayed still keeps its duration.
                if let Some(mut c) = self.current.take() {
                    c.write_once(&mut e, &self.timeline);
                    let last = self.timeline.end_slot(end);
                    if last > c.slot && e.fits(&c.frame) {
                        e.write(&c.frame, self.timeline.slot_ms(last));
                    }
                }
                if e.other_size > 0 {
                    self.notes.push(format!(
                        "video {}: {} frame(s) did not have the first frame's size and were left out",
                        self.spec.name, e.other_size
                    ));
                }
                if started_ms.is_none() {
                    let _ = e.close(deadline);
                    self.notes.push(format!(
                        "video {}: no frame was captured, so no video was written",
                        self.spec.name
                    ));
                } else {
                    match e.close(deadline) {
                        // Too late: the run's result is being assembled.
                        Ok(_) if deadline.expired() => {}
                        Ok(closed) => {
                            if closed.cut_short {
                                self.notes.push(format!(
                                    "video {}: the encoder was still behind near the cleanup deadline and was stopped; the video ends where it had got to",
                                    self.spec.name
                                ));
                            }
                            match self.publish(&closed.file, started_ms.unwrap_or(0)) {
                                Ok(Some(a)) => out.artifacts.push(a),
                                Ok(None) => {}
                                Err(e) => self.notes.push(format!("video {}: {e}", self.spec.name)),
                            }
                        }
                        Err(e) => self.notes.push(format!(
                            "video {} could not be encoded: {e}",
                            self.spec.name
                        )),
                    }
                }
            }
            // No frame was ever placed, so the encoder was never started.
            Sink::Deferred(..) => self.notes.push(format!(
                "video {}: no frame was captured, so no video was written",
                self.spec.name
            )),
            Sink::Frames(kept, missing) => {
                let mut index = Vec::new();
                for (p, ms) in &kept {
                    if let Ok(Some(a)) =
                        self.evidence
                            .publish(ArtifactGroup::Videos, p, self.spec.step)
                    {
                        self.retain(&a);
                        index.push(serde_json::json!({
                            "file": p.file_name().map(|n| n.to_string_lossy().into_owned()),
                            "ms": ms,
                        }));
                        out.artifacts.push(a);
                    }
                }
                let (width, height) = match self.spec.size {
                    FrameSize::Known { width, height } => (width, height),
                    FrameSize::First => kept
                        .first()
                        .and_then(|(p, _)| std::fs::read(p).ok())
                        .and_then(|png| ffmpeg::png_size(&png))
                        .unwrap_or((0, 0)),
                };
                let doc = serde_json::json!({
                    "name": self.spec.name,
                    "format": self.spec.format.ext(),
                    "width": width,
                    "height": height,
                    "startedMs": started_ms,
                    "holds": self.holds,
                    "frames": index,
                });
                let name = format!("{}-frames.json", self.spec.name);
                if let Ok(Some(a)) = self.evidence.write(
                    ArtifactGroup::Videos,
                    &name,
                    format!("{doc:#}\n").as_bytes(),
                    self.spec.step,
                ) {
                    self.retain(&a);
                    out.artifacts.push(a);
                }
                out.missing = missing;
            }
        }
        out.notes = self.notes;
        out
    }

    fn retain(&self, a: &Artifact) {
        if self.spec.mode == RecordMode::RetainOnFailure {
            self.evidence
                .keep_only_on_failure(std::path::Path::new(&a.path));
        }
    }

    /// Copies the encoded file from scratch into `artifacts/videos/` and
    /// publishes it.
    fn publish(&self, file: &std::path::Path, started_ms: u64) -> Result<Option<Artifact>, String> {
        let name = self
            .evidence
            .unique_name(ArtifactGroup::Videos, &self.spec.name, "webm");
        let (p, mut dst) = self
            .evidence
            .new_file(ArtifactGroup::Videos, &name)
            .map_err(|e| e.to_string())?;
        let mut src = File::open(file).map_err(|e| e.to_string())?;
        std::io::copy(&mut src, &mut dst).map_err(|e| e.to_string())?;
        drop(dst);
        let a = self
            .evidence
            .publish_recording(
                ArtifactGroup::Videos,
                &p,
                self.spec.step,
                started_ms,
                self.holds.clone(),
            )
            .map_err(|e| e.to_string())?;
        if let Some(a) = &a {
            self.retain(a);
        }
        Ok(a)
    }
}
