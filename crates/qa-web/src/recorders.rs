//! The run's video recordings, one per page (see [`crate::record`], which
//! feeds them): what the session state holds, without depending on it.

use qa_core::process::ProcessOwner;
use qa_core::recording::{RecordMode, VideoBounds};
use qa_core::video::{FrameFormat, FrameSize, VideoRecorder, VideoSpec};
use qa_core::Evidence;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One page's recording.
pub(crate) struct Live {
    pub recorder: VideoRecorder,
    /// When its page went away (a closed popup): the video ends there.
    pub ended: Option<Instant>,
}

/// The recordings of one browser session.
pub(crate) struct Recorders {
    evidence: Arc<Evidence>,
    processes: Arc<ProcessOwner>,
    mode: RecordMode,
    bounds: VideoBounds,
    width: u32,
    height: u32,
    /// Frames come from masked captures, not the screencast.
    masked: bool,
    /// How long a performed step's result is held in its page's video.
    hold: Duration,
    live: Mutex<HashMap<String, Live>>,
    popups: Mutex<usize>,
}

impl Recorders {
    /// Recordings of `width`×`height` pages in `mode` (not `off`), each
    /// step's result held for `hold`.
    ///
    /// Each recording's encoder is started deferred: loading `ffmpeg` takes
    /// tens of milliseconds of CPU, which would fall on the browser's start
    /// or a page's load; the page's settle starts it in its first quiet
    /// window ([`Recorders::start_encoder`]), when browser and runner are
    /// idle, and its first frame on the timeline at the latest.
    pub(crate) fn new(
        evidence: Arc<Evidence>,
        processes: Arc<ProcessOwner>,
        mode: RecordMode,
        bounds: VideoBounds,
        (width, height): (u32, u32),
        hold: Duration,
    ) -> Recorders {
        let masked = !evidence.secrets().is_empty();
        Recorders {
            evidence,
            processes,
            mode,
            bounds,
            width,
            height,
            masked,
            hold,
            live: Mutex::new(HashMap::new()),
            popups: Mutex::new(0),
        }
    }

    /// A new recording named `name`; `main`: the first page's (see
    /// [`VideoSpec::wait_for_begin`]).
    fn recorder(&self, name: String, main: bool) -> VideoRecorder {
        let spec = VideoSpec {
            name,
            format: FrameFormat::Jpeg,
            size: FrameSize::Known {
                width: self.width,
                height: self.height,
            },
            bounds: self.bounds,
            mode: self.mode,
            step: None,
            // The main page's video starts with the first step (showing
            // the loaded page); a popup's when it opens.
            wait_for_begin: main,
        };
        VideoRecorder::start_deferred(self.evidence.clone(), self.processes.clone(), spec)
    }

    /// The page size (the video's frame size).
    pub(crate) fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// Every recording, taken out (the session is closing).
    pub(crate) fn take_all(&self) -> Vec<(String, Live)> {
        self.live.lock().expect("live lock").drain().collect()
    }

    /// Whether frames are masked captures (the run has secrets).
    pub(crate) fn masked(&self) -> bool {
        self.masked
    }

    /// Starts the recording of `session`'s page (`main`: the first page).
    pub(crate) fn start(&self, session: &str, main: bool) {
        let recorder = if main {
            self.recorder("page".into(), true)
        } else {
            let n = {
                let mut n = self.popups.lock().expect("popups lock");
                *n += 1;
                *n
            };
            self.recorder(format!("popup-{n}"), false)
        };
        self.live.lock().expect("live lock").insert(
            session.to_string(),
            Live {
                recorder,
                ended: None,
            },
        );
    }

    /// Starts the encoder of `session`'s recording now, if it has not
    /// started (see [`Recorders::new`]).
    pub(crate) fn start_encoder(&self, session: &str) {
        if let Some(l) = self.live.lock().expect("live lock").get(session) {
            l.recorder.start_encoder();
        }
    }

    /// Hands one frame of `session`'s page to its recording.
    pub(crate) fn push(&self, session: &str, frame: Vec<u8>, at: Instant) {
        if let Some(l) = self.live.lock().expect("live lock").get(session) {
            if l.ended.is_none() {
                l.recorder.push(frame, at);
            }
        }
    }

    /// A step on `session`'s page was performed at `at`: its video holds
    /// what the page showed then (see [`VideoRecorder::hold`]).
    pub(crate) fn hold(&self, session: &str, at: Instant) {
        if let Some(l) = self.live.lock().expect("live lock").get(session) {
            if l.ended.is_none() {
                l.recorder.hold(at, self.hold);
            }
        }
    }

    /// The steps begin: every waiting timeline starts now.
    pub(crate) fn begin(&self, at: Instant) {
        for l in self.live.lock().expect("live lock").values() {
            l.recorder.begin(at);
        }
    }

    /// The page of `session` went away: its video ends now.
    pub(crate) fn ended(&self, session: &str) {
        if let Some(l) = self.live.lock().expect("live lock").get_mut(session) {
            l.ended.get_or_insert_with(Instant::now);
        }
    }
}
