//! A video whose encoder is still behind when the run's cleanup deadline
//! nears keeps what was encoded: the encoder is asked to stop (SIGTERM:
//! ffmpeg stops reading and finishes its file) before the deadline, and the
//! file is published with a note, instead of being thrown away.
//!
//! The encoder here is a stand-in that never reads its input — the worst
//! case of a busy machine or a flooded encoder: the recorder's writes block
//! — and, asked to stop, writes its file and exits as ffmpeg does.

#![cfg(unix)]

use qa_core::process::{ProcessOwner, DEFAULT_GRACE};
use qa_core::recording::{RecordMode, VideoBounds};
use qa_core::video::{FrameFormat, VideoRecorder, VideoSpec};
use qa_core::{Deadline, Evidence, Secrets};
use std::sync::Arc;
use std::time::{Duration, Instant};

const STALLED_ENCODER: &str = r#"#!/bin/sh
# A stand-in for ffmpeg that never reads its input; on SIGTERM it writes
# its output file (its last argument) and exits, as ffmpeg does.
for last; do :; done
trap 'printf "the frames encoded so far" > "$last"; exit 255' TERM
while :; do sleep 0.02; done
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_encoder_still_behind_at_the_deadline_keeps_what_it_encoded() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let encoder = d.path().join("stalled-ffmpeg");
    std::fs::write(&encoder, STALLED_ENCODER).unwrap();
    std::fs::set_permissions(&encoder, std::fs::Permissions::from_mode(0o755)).unwrap();
    let evidence =
        Arc::new(Evidence::create(&d.path().join("ws"), "r1", Arc::new(Secrets::new())).unwrap());
    let owner = ProcessOwner::new();
    let spec = VideoSpec {
        name: "page".into(),
        format: FrameFormat::Png,
        width: 64,
        height: 64,
        bounds: VideoBounds::default(),
        mode: RecordMode::On,
        step: None,
        wait_for_begin: false,
    };
    let rec = VideoRecorder::start_with(evidence.clone(), &owner, spec, Some(&encoder));
    // Frames larger than a pipe's buffer: the second write blocks for good.
    let t0 = Instant::now();
    for i in 0..4u8 {
        rec.push(
            vec![i; 256 * 1024],
            t0 + Duration::from_millis(66 * u64::from(i)),
        );
    }
    // Wide "must not hang" bound around a 4 s cleanup deadline.
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        rec.finish(Deadline::after(Duration::from_secs(4))),
    )
    .await
    .expect("finishing a video is bounded by its deadline");
    assert_eq!(out.artifacts.len(), 1, "no video: {:?}", out.notes);
    let bytes = std::fs::read(&out.artifacts[0].path).unwrap();
    assert_eq!(bytes, b"the frames encoded so far");
    assert!(
        out.notes.iter().any(|n| n.contains("was stopped")),
        "{:?}",
        out.notes
    );
    let report = owner
        .end_all(DEFAULT_GRACE, Deadline::after(Duration::from_secs(10)))
        .await;
    assert!(report.left.is_empty(), "{report:?}");
}
