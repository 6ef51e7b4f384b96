//! Video of a browser run: one recording per page (the main page and each
//! popup), with the interaction visualizer drawn into it.
//!
//! Without secrets in the run, each page streams `Page.startScreencast`
//! frames (every one acknowledged) into a [`VideoRecorder`] from the event
//! pump. With secrets, the screencast is never started: a frame is a
//! masked capture of the page (the same masking as screenshots, see
//! [`crate::artifacts`]) taken after the page opened and after each
//! action, so nothing the page shows between masks reaches the video.
//!
//! The visualizer (`visualizer.js`) runs in an isolated world of every
//! same-process frame of a recorded page before any page script; it only
//! listens and draws (see the script's header).

pub(crate) mod trace;

use crate::cdp::commands::{
    AddScriptToEvaluateOnNewDocument, CaptureScreenshot, ScreencastFrameAck, StartScreencast,
};
use crate::cdp::events::ScreencastFrame;
use crate::cdp::CdpEvent;
use crate::shared::Shared;
use base64::Engine;
use qa_core::{Deadline, Note};
use std::sync::Arc;
use std::time::Instant;

/// The visualizer's source.
const VISUALIZER: &str = include_str!("visualizer.js");

/// The isolated world the visualizer runs in.
const WORLD: &str = "ui-qa-visualizer";

/// JPEG quality of screencast frames.
const QUALITY: u32 = 80;

/// Sets up recording of a page target that is being contained (before it
/// runs): the visualizer in every frame, and the screencast unless frames
/// are masked captures.
pub(crate) async fn install(sh: &Arc<Shared>, session: &str, main: bool) {
    let Some(rec) = sh.video.get() else { return };
    let cdp = &sh.cdp;
    let s = Some(session);
    let script = AddScriptToEvaluateOnNewDocument {
        source: VISUALIZER.to_string(),
        run_immediately: true,
        world_name: Some(WORLD),
    };
    // The recording first, so the screencast's first frame has somewhere
    // to go; the two commands are independent and both answered before
    // the page runs.
    rec.start(session, main);
    let cast = async {
        if rec.masked() {
            return;
        }
        let cast = StartScreencast {
            format: "jpeg",
            quality: QUALITY,
            max_width: rec.size().0,
            max_height: rec.size().1,
            every_nth_frame: 1,
        };
        if let Err(e) = cdp.call_typed(s, &cast).await {
            sh.note(Note::new(
                qa_core::NoteKind::Evidence,
                format!("video: the page's screencast could not start ({e})"),
            ));
        }
    };
    let _ = tokio::join!(cdp.call_typed(s, &script), cast);
}

/// `Page.screencastFrame`: keep the frame, acknowledge it.
pub(crate) fn frame(sh: &Arc<Shared>, ev: &CdpEvent) {
    let at = Instant::now();
    let f: ScreencastFrame = ev.params();
    let session = ev.session.clone();
    let cdp = sh.cdp.clone();
    let ack = ScreencastFrameAck {
        session_id: f.session_id,
    };
    tokio::spawn(async move {
        let _ = cdp.call_typed(session.as_deref(), &ack).await;
    });
    let (Some(rec), Some(s)) = (sh.video.get(), ev.session.as_deref()) else {
        return;
    };
    if let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(f.data.as_bytes()) {
        rec.push(s, bytes, at);
    }
}

/// A target detached: if it was a recorded page, its video ends now.
pub(crate) fn detached(sh: &Shared, session: &str) {
    if let Some(rec) = sh.video.get() {
        rec.ended(session);
    }
}

/// Every recording of a session, its frames all taken: [`finish`] writes
/// them.
pub(crate) struct Stopped(Vec<(String, crate::recorders::Live)>);

/// Takes each live page's last frame (before the browser closes) and
/// every recording out of the session: frames that still come go nowhere,
/// so the screencasts are left to end with the browser, a round trip
/// sooner. [`finish`] then waits for the videos, which needs no browser.
pub(crate) async fn stop_all(sh: &Arc<Shared>) -> Stopped {
    let Some(rec) = sh.video.get() else {
        return Stopped(Vec::new());
    };
    let live = rec.take_all();
    if !rec.masked() {
        for (s, l) in &live {
            if l.ended.is_none() {
                // The last frame is the page as it is now: a screencast
                // frame may still be on its way, and a still page sends none.
                let shot = sh
                    .cdp
                    .call_typed_with_timeout(
                        Some(s.as_str()),
                        &CaptureScreenshot::jpeg(),
                        std::time::Duration::from_secs(2),
                    )
                    .await;
                if let Ok(shot) = shot {
                    if let Ok(jpeg) =
                        base64::engine::general_purpose::STANDARD.decode(shot.data.as_bytes())
                    {
                        l.recorder.push(jpeg, Instant::now());
                    }
                }
            }
        }
    }
    Stopped(live)
}

/// Finishes every stopped recording within `deadline`; what happened, as
/// notes.
pub(crate) async fn finish(stopped: Stopped, deadline: Deadline) -> Vec<Note> {
    let mut notes = Vec::new();
    let mut missing_said = false;
    for (_, l) in stopped.0 {
        let outcome = match l.ended {
            Some(end) => l.recorder.finish_at(end, deadline).await,
            None => l.recorder.finish(deadline).await,
        };
        for n in outcome.into_notes() {
            // One "ffmpeg is missing" per run, not one per page.
            if n.kind == qa_core::NoteKind::MissingCapability {
                if missing_said {
                    continue;
                }
                missing_said = true;
            }
            notes.push(n);
        }
    }
    notes
}
