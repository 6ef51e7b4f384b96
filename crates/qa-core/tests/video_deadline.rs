//! A video whose encoder is still behind when the run's cleanup deadline
//! nears keeps what was encoded: the encoder is asked to stop (SIGTERM:
//! ffmpeg stops reading and finishes its file) before the deadline, and the
//! file is published with a note, instead of being thrown away.
//!
//! The encoder here is a stand-in that never reads its input — the worst
//! case of a busy machine or a flooded encoder: the recorder's writes block
//! — and, asked to stop, writes its file and exits as ffmpeg does.
//!
//! The other tests here drive the recorder with stand-ins too: when a frame
//! reaches the encoder, what size a video takes, and when a deferred
//! encoder starts.

#![cfg(unix)]

use qa_core::process::{CleanupReport, ProcessOwner, DEFAULT_GRACE};
use qa_core::recording::{RecordMode, VideoBounds};
use qa_core::video::{FrameFormat, FrameSize, VideoRecorder, VideoSpec};
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

/// A recording of a 64x64 video named `page` whose encoder is the shell
/// script `encoder`, in a fresh run directory.
struct Setup {
    _dir: tempfile::TempDir,
    evidence: Arc<Evidence>,
    owner: Arc<ProcessOwner>,
    rec: VideoRecorder,
}

/// When a recording starts its encoder.
#[derive(Clone, Copy)]
enum Start {
    /// With the recorder ([`VideoRecorder::start_with`]).
    Now,
    /// When asked or at its first frame
    /// ([`VideoRecorder::start_deferred_with`]).
    Deferred,
}

/// The frame size of most recordings here.
const SQUARE: FrameSize = FrameSize::Known {
    width: 64,
    height: 64,
};

fn setup(encoder: &str, format: FrameFormat) -> Setup {
    setup_sized(encoder, format, SQUARE)
}

/// [`setup`] with frames of `size`.
fn setup_sized(encoder: &str, format: FrameFormat, size: FrameSize) -> Setup {
    recording(encoder, format, size, Start::Now, false)
}

/// A recording named `page` whose encoder is the shell script `encoder`,
/// started as `start` says (`wait_for_begin`: its timeline starts at
/// [`VideoRecorder::begin`], else with its first frame).
fn recording(
    encoder: &str,
    format: FrameFormat,
    size: FrameSize,
    start: Start,
    wait_for_begin: bool,
) -> Setup {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let bin = d.path().join("encoder");
    std::fs::write(&bin, encoder).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let evidence =
        Arc::new(Evidence::create(&d.path().join("ws"), "r1", Arc::new(Secrets::new())).unwrap());
    let owner = Arc::new(ProcessOwner::new());
    let spec = VideoSpec {
        name: "page".into(),
        format,
        size,
        bounds: VideoBounds::default(),
        mode: RecordMode::On,
        step: None,
        wait_for_begin,
    };
    let rec = match start {
        Start::Now => VideoRecorder::start_with(evidence.clone(), &owner, spec, Some(&bin)),
        Start::Deferred => {
            VideoRecorder::start_deferred_with(evidence.clone(), owner.clone(), spec, Some(bin))
        }
    };
    Setup {
        _dir: d,
        evidence,
        owner,
        rec,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_encoder_still_behind_at_the_deadline_keeps_what_it_encoded() {
    let Setup {
        _dir, owner, rec, ..
    } = setup(STALLED_ENCODER, FrameFormat::Png);
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
    assert_nothing_left(&owner).await;
}

const COPYING_ENCODER: &str = r#"#!/bin/sh
# A stand-in for ffmpeg that writes what it reads to its output file (its
# last argument). Once it has the IVF header and the first frame (32 + 12
# + 1000 bytes, read exactly), it also hands them to the test through the
# FIFO `$last.first`.
for last; do :; done
dd bs=1044 count=1 iflag=fullblock of="$last" 2>/dev/null
cat "$last" > "$last.first"
exec cat >> "$last"
"#;

/// Waits, without polling, for what the copying stand-in received up to
/// the end of the first frame: a FIFO made before any frame is pushed,
/// read when the stand-in writes it.
fn first_frame(evidence: &Evidence) -> tokio::sync::oneshot::Receiver<Vec<u8>> {
    let fifo = evidence.run_dir().join("work/video-page/page.webm.first");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    // A thread of its own: one left blocked when the test fails does not
    // hold the runtime open.
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let _ = tx.send(std::fs::read(fifo).unwrap());
    });
    rx
}

/// Every process the test's recorder started has ended.
async fn assert_nothing_left(owner: &ProcessOwner) {
    let report = owner
        .end_all(DEFAULT_GRACE, Deadline::after(Duration::from_secs(10)))
        .await;
    assert!(report.left.is_empty(), "{report:?}");
}

/// The first frame, within a wide "must not hang" bound.
async fn received(h: tokio::sync::oneshot::Receiver<Vec<u8>>, what: &str) -> Vec<u8> {
    tokio::time::timeout(Duration::from_secs(60), h)
        .await
        .expect(what)
        .unwrap()
}

/// A frame is handed to the encoder once its slot is over, while the run
/// goes on — not when the video ends: the work left at the end of a run is
/// at most the last frame.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frame_reaches_the_encoder_once_its_slot_is_over() {
    let Setup {
        _dir,
        evidence,
        owner,
        rec,
    } = setup(COPYING_ENCODER, FrameFormat::Jpeg);
    let first = first_frame(&evidence);
    // Two frames in one slot, then nothing: the newer one is the slot's.
    let t0 = Instant::now();
    rec.push(vec![1; 1000], t0);
    rec.push(vec![2; 1000], t0 + Duration::from_millis(5));
    // The IVF header, then the frame with its 12-byte header, once the
    // slot is over.
    let seen = received(
        first,
        "the slot's frame reaches the encoder before the video ends",
    )
    .await;
    assert_eq!(&seen[32 + 12..32 + 12 + 1000], &[2u8; 1000][..]);
    let out = rec.finish(Deadline::after(Duration::from_secs(10))).await;
    assert_eq!(out.artifacts.len(), 1, "{:?}", out.notes);
    assert_nothing_left(&owner).await;
}

/// A frame that comes after its slot was encoded (a window capture that
/// took long is placed where it began) is still shown, from the next slot:
/// the newest picture is never dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frame_placed_in_a_slot_already_encoded_is_shown_next() {
    let Setup {
        _dir,
        evidence,
        owner,
        rec,
    } = setup(COPYING_ENCODER, FrameFormat::Jpeg);
    let first = first_frame(&evidence);
    let t0 = Instant::now();
    rec.push(vec![1; 1000], t0);
    received(first, "the first slot is encoded once it is over").await;
    // Taken in the first slot, handed over after it was encoded.
    rec.push(vec![2; 1000], t0 + Duration::from_millis(1));
    let out = rec.finish(Deadline::after(Duration::from_secs(10))).await;
    assert_eq!(out.artifacts.len(), 1, "{:?}", out.notes);
    let ivf = std::fs::read(&out.artifacts[0].path).unwrap();
    let second = &ivf[32 + 12 + 1000..];
    assert!(
        second.len() >= 12 + 1000 && second[12..12 + 1000] == [2u8; 1000][..],
        "the later frame is in the video: {} bytes after the first",
        second.len()
    );
    assert_nothing_left(&owner).await;
}

/// A stand-in for ffmpeg that writes all it reads to its output file.
const CAT_ENCODER: &str = r#"#!/bin/sh
for last; do :; done
exec cat > "$last"
"#;

/// The start of a PNG of `w`×`h` (what the recorder reads of it), padded
/// to `len` bytes with `fill`.
fn png_of(w: u32, h: u32, fill: u8, len: usize) -> Vec<u8> {
    let mut p = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    p.extend_from_slice(&w.to_be_bytes());
    p.extend_from_slice(&h.to_be_bytes());
    p.resize(len, fill);
    p
}

/// A video whose encoder started before its size was known takes the size
/// from its first frame (the stream's header is written with it) and
/// leaves out, with a note, a frame of another size, which the encoder
/// could not take.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_video_sized_by_its_first_frame_keeps_that_size() {
    let Setup {
        _dir, owner, rec, ..
    } = setup_sized(CAT_ENCODER, FrameFormat::Png, FrameSize::First);
    let t0 = Instant::now();
    let slot = |k: u64| t0 + Duration::from_millis(100 * k);
    rec.push(png_of(40, 30, 1, 100), slot(0));
    rec.push(png_of(40, 30, 2, 100), slot(1));
    rec.push(png_of(50, 30, 3, 100), slot(2));
    let out = rec.finish(Deadline::after(Duration::from_secs(10))).await;
    assert_eq!(out.artifacts.len(), 1, "{:?}", out.notes);
    let ivf = std::fs::read(&out.artifacts[0].path).unwrap();
    assert_eq!(&ivf[0..4], b"DKIF");
    assert_eq!(&ivf[12..16], &[40, 0, 30, 0], "the first frame's size");
    // Its frames: the first two, never the third.
    let mut fills = Vec::new();
    let mut at = 32;
    while at + 12 <= ivf.len() {
        let len = u32::from_le_bytes(ivf[at..at + 4].try_into().unwrap()) as usize;
        fills.push(ivf[at + 12 + len - 1]);
        at += 12 + len;
    }
    assert_eq!(fills, [1, 2], "frames in the stream");
    assert!(
        out.notes
            .iter()
            .any(|n| n.contains("1 frame(s) did not have the first frame's size")),
        "{:?}",
        out.notes
    );
    assert_nothing_left(&owner).await;
}

/// A deferred recording of 64x64 JPEG frames (see [`recording`]).
fn deferred(encoder: &str, wait_for_begin: bool) -> Setup {
    recording(
        encoder,
        FrameFormat::Jpeg,
        SQUARE,
        Start::Deferred,
        wait_for_begin,
    )
}

/// Finishes a recording that got no frame: no video, a note that says so;
/// then ends what it started (nothing must be left) and reports it.
async fn finish_without_video(rec: VideoRecorder, owner: &ProcessOwner) -> CleanupReport {
    let out = rec.finish(Deadline::after(Duration::from_secs(10))).await;
    assert!(out.artifacts.is_empty(), "{:?}", out.artifacts);
    assert!(
        out.notes
            .iter()
            .any(|n| n.contains("no frame was captured")),
        "{:?}",
        out.notes
    );
    let report = owner
        .end_all(DEFAULT_GRACE, Deadline::after(Duration::from_secs(10)))
        .await;
    assert!(report.left.is_empty(), "{report:?}");
    report
}

/// A stand-in for ffmpeg that first writes `started` to the FIFO `fifo`,
/// then writes all it reads to its output file.
fn announcing_encoder(fifo: &std::path::Path) -> String {
    format!(
        "#!/bin/sh\nfor last; do :; done\necho started > '{}'\nexec cat > \"$last\"\n",
        fifo.display()
    )
}

/// A deferred recorder starts its encoder when asked, before any frame.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deferred_encoder_starts_when_asked() {
    let fifo_dir = tempfile::tempdir().unwrap();
    let fifo = fifo_dir.path().join("started");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let Setup {
        _dir, owner, rec, ..
    } = deferred(&announcing_encoder(&fifo), false);
    let (tx, started) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let _ = tx.send(std::fs::read(fifo).unwrap());
    });
    rec.start_encoder();
    rec.start_encoder();
    let said = received(started, "the encoder starts once asked").await;
    assert_eq!(said, b"started\n");
    let report = finish_without_video(rec, &owner).await;
    assert_eq!(report.ended.len(), 1, "one encoder: {report:?}");
}

/// Not asked, a deferred recorder starts its encoder with its first frame,
/// and the video holds that frame.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deferred_encoder_starts_with_the_first_frame() {
    let Setup {
        _dir, owner, rec, ..
    } = deferred(CAT_ENCODER, false);
    rec.push(vec![7; 1000], Instant::now());
    let out = rec.finish(Deadline::after(Duration::from_secs(10))).await;
    assert_eq!(out.artifacts.len(), 1, "{:?}", out.notes);
    let ivf = std::fs::read(&out.artifacts[0].path).unwrap();
    assert_eq!(&ivf[0..4], b"DKIF");
    assert_eq!(&ivf[32 + 12..32 + 12 + 1000], &[7u8; 1000][..]);
    assert_nothing_left(&owner).await;
}

/// A deferred recording that never gets a frame, and is never asked to
/// start its encoder, never starts one — not when its timeline begins, not
/// when it ends: no process, no video, a note.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deferred_recording_without_frames_starts_no_encoder() {
    let Setup {
        _dir, owner, rec, ..
    } = deferred(CAT_ENCODER, true);
    rec.begin(Instant::now());
    let report = finish_without_video(rec, &owner).await;
    assert!(
        report.ended.is_empty(),
        "no encoder was started: {report:?}"
    );
}
