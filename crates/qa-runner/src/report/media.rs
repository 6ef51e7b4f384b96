//! Screenshots (inline PNGs) and videos (embedded, with the steps as
//! markers that seek the video).

use super::files::{self, Placed};
use super::html::escape;
use super::{human_ms, MAX_EMBEDDED_VIDEO_BYTES};
use super::{MAX_INLINE_SCREENSHOTS, MAX_INLINE_SCREENSHOTS_TOTAL, MAX_INLINE_SCREENSHOT_BYTES};
use base64::Engine as _;
use qa_core::result::{RunResult, StepRecord, StepStatus};
use qa_core::Artifact;
use std::fmt::Write as _;
use std::path::Path;

/// The PNG signature.
const PNG_MAGIC: &[u8] = b"\x89PNG\r\n\x1a\n";

/// One step placed on a recording's timeline.
pub(crate) struct Marker {
    /// Milliseconds after the recording's first frame.
    pub ms: u64,
    /// `step 2 click "Save" (passed)`.
    pub label: String,
}

/// The steps that ran, placed on `recording`'s timeline (its holds
/// included; a step that started before the recording sits at 0).
pub(crate) fn markers(r: &RunResult, recording: &Artifact) -> Vec<Marker> {
    r.steps
        .iter()
        .filter_map(|s| {
            Some(Marker {
                ms: recording.recording_ms(s.started_ms?)?,
                label: step_label(s),
            })
        })
        .collect()
}

/// `step 2 click "Save" (passed)`.
pub(crate) fn step_label(s: &StepRecord) -> String {
    let mut l = format!("step {} {}", s.index, s.action);
    if let Some(n) = &s.name {
        let _ = write!(l, " \"{n}\"");
    }
    let _ = write!(l, " ({})", step_status(s.status));
    l
}

/// The status word of a step.
pub(crate) fn step_status(s: StepStatus) -> &'static str {
    match s {
        StepStatus::Passed => "passed",
        StepStatus::Failed => "failed",
        StepStatus::Skipped => "skipped",
        StepStatus::TimedOut => "timed out",
    }
}

/// The list of marker buttons; `target` names the player they seek.
pub(crate) fn marker_list(out: &mut String, markers: &[Marker], target: &str, what: &str) {
    if markers.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<ol class=\"markers\" aria-label=\"Steps on the {what}\">"
    );
    for m in markers {
        let _ = writeln!(
            out,
            "<li><button type=\"button\" class=\"seek\" data-seek=\"{}\" data-seek-ms=\"{}\"><span class=\"at\">{:.1} s</span> {}</button></li>",
            escape(target),
            m.ms,
            m.ms as f64 / 1000.0,
            escape(&m.label)
        );
    }
    out.push_str("</ol>\n");
}

/// The step trace's pictures of step `index` (`traces/trace-stepN-before.jpg`,
/// `-after.jpg`), shown beside the step: inline while `budget` lasts (it
/// starts at [`super::MAX_INLINE_TRACE_TOTAL`]), linked after. Nothing when the
/// step has none.
pub(crate) fn step_pictures(
    out: &mut String,
    r: &RunResult,
    run_dir: &Path,
    index: usize,
    budget: &mut u64,
) {
    let prefix = format!("trace-step{index}-");
    let pictures: Vec<_> = r
        .artifacts
        .traces
        .iter()
        .filter_map(|a| files::place(r, a))
        .filter(|p| p.name.starts_with(&prefix) && p.has_ext("jpg"))
        .collect();
    if pictures.is_empty() {
        return;
    }
    out.push_str("<div class=\"step-pictures\">");
    for p in &pictures {
        let label = p
            .name
            .trim_start_matches(&prefix)
            .trim_end_matches(".jpg")
            .to_string();
        let shown = match files::read(run_dir, p, (*budget).min(MAX_INLINE_SCREENSHOT_BYTES)) {
            Ok(b) if b.starts_with(&[0xFF, 0xD8]) && (b.len() as u64) <= *budget => {
                *budget -= b.len() as u64;
                format!(
                    "<a href=\"{}\"><img src=\"data:image/jpeg;base64,{}\" alt=\"step {index} {}\" loading=\"lazy\"></a>",
                    p.href,
                    base64::engine::general_purpose::STANDARD.encode(&b),
                    escape(&label)
                )
            }
            _ => format!("<a href=\"{}\">{}</a>", p.href, escape(&p.name)),
        };
        let _ = write!(
            out,
            "<figure class=\"step-picture\">{shown}<figcaption>{}</figcaption></figure>",
            escape(&label)
        );
    }
    out.push_str("</div>");
}

/// The screenshots section: up to [`MAX_INLINE_SCREENSHOTS`] PNGs inline
/// (each at most [`MAX_INLINE_SCREENSHOT_BYTES`], together at most
/// [`MAX_INLINE_SCREENSHOTS_TOTAL`]), the rest linked.
pub(crate) fn screenshots(out: &mut String, r: &RunResult, run_dir: &Path) {
    let shots = &r.artifacts.screenshots;
    if shots.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<section id=\"screenshots\">\n<h2>Screenshots <span class=\"count\">{}</span></h2>\n<div class=\"shots\">",
        shots.len()
    );
    let mut inlined = 0usize;
    let mut total = 0u64;
    for a in shots {
        let step = a.step.map(|s| format!(" · step {s}")).unwrap_or_default();
        let Some(p) = files::place(r, a) else {
            let _ = writeln!(
                out,
                "<figure class=\"shot\"><figcaption>{}{} (outside the run directory)</figcaption></figure>",
                escape(&files::file_name(a)),
                escape(&step)
            );
            continue;
        };
        let room = inlined < MAX_INLINE_SCREENSHOTS
            && total.saturating_add(a.bytes) <= MAX_INLINE_SCREENSHOTS_TOTAL;
        let bytes = if room {
            files::read(run_dir, &p, MAX_INLINE_SCREENSHOT_BYTES)
        } else {
            Err(files::Unread::TooLarge)
        };
        // The picture of a failure is shown at full width.
        let failure = p.name.starts_with("failure-");
        out.push_str(if failure {
            "<figure class=\"shot failure-shot\">"
        } else {
            "<figure class=\"shot\">"
        });
        match bytes {
            Ok(b) if b.starts_with(PNG_MAGIC) => {
                inlined += 1;
                total += b.len() as u64;
                let _ = write!(
                    out,
                    "<a href=\"{}\"><img src=\"data:image/png;base64,{}\" alt=\"screenshot {}{}\" loading=\"lazy\"></a>",
                    p.href,
                    base64::engine::general_purpose::STANDARD.encode(&b),
                    escape(&p.name),
                    escape(&step)
                );
            }
            Ok(_) => {
                let _ = write!(out, "<p class=\"unshown\">not a PNG; open the file</p>");
            }
            Err(why) => {
                let _ = write!(out, "<p class=\"unshown\">{}</p>", why.says());
            }
        }
        let _ = writeln!(
            out,
            "<figcaption><a href=\"{}\">{}</a>{}</figcaption></figure>",
            p.href,
            escape(&p.name),
            escape(&step)
        );
    }
    out.push_str("</div>\n</section>\n");
}

/// The MIME type of a video file the report can play.
fn video_mime(p: &Placed<'_>) -> Option<&'static str> {
    if p.has_ext("webm") {
        Some("video/webm")
    } else if p.has_ext("mp4") {
        Some("video/mp4")
    } else {
        None
    }
}

/// The video section: each WebM (or MP4) of `artifacts.videos`, embedded
/// as base64 that the report's script turns into a Blob URL (at most
/// [`MAX_EMBEDDED_VIDEO_BYTES`] together; a larger one is linked), with a
/// Play button, the current time (`<output>`) and the steps as markers.
/// The first video's controls have the ids `video-play` and `video-time`.
pub(crate) fn videos(out: &mut String, r: &RunResult, run_dir: &Path) {
    let placed: Vec<(Placed<'_>, &'static str)> = r
        .artifacts
        .videos
        .iter()
        .filter_map(|a| files::place(r, a))
        .filter_map(|p| video_mime(&p).map(|m| (p, m)))
        .collect();
    if placed.is_empty() {
        return;
    }
    out.push_str("<section id=\"video\">\n<h2>Video</h2>\n");
    let mut budget = MAX_EMBEDDED_VIDEO_BYTES;
    for (i, (p, mime)) in placed.iter().enumerate() {
        let n = i + 1;
        let suffix = if n == 1 {
            String::new()
        } else {
            format!("-{n}")
        };
        let id = format!("video-{n}");
        let _ = writeln!(out, "<figure class=\"video\">");
        match files::read(run_dir, p, budget) {
            Ok(bytes) => {
                budget -= bytes.len() as u64;
                let _ = writeln!(
                    out,
                    "<video id=\"{id}\" data-embedded=\"{id}-data\" controls muted playsinline preload=\"auto\" aria-label=\"video {}\"></video>",
                    escape(&p.name)
                );
                let _ = writeln!(
                    out,
                    "<script type=\"text/plain\" id=\"{id}-data\" data-mime=\"{mime}\">{}</script>",
                    base64::engine::general_purpose::STANDARD.encode(&bytes)
                );
                let _ = writeln!(
                    out,
                    "<div class=\"player-controls\" data-video=\"{id}\"><button type=\"button\" id=\"video-play{suffix}\" data-testid=\"video-play{suffix}\" class=\"play\">Play</button> <output id=\"video-time{suffix}\" data-testid=\"video-time{suffix}\" for=\"{id}\" aria-label=\"video time\">0.0 s</output><span class=\"duration\"></span></div>"
                );
                marker_list(out, &markers(r, p.artifact), &id, "video");
            }
            Err(why) => {
                let _ = writeln!(out, "<p class=\"unshown\">{}</p>", why.says());
            }
        }
        let _ = writeln!(
            out,
            "<figcaption><a href=\"{}\">{}</a> · {} bytes{}</figcaption>\n</figure>",
            p.href,
            escape(&p.name),
            p.artifact.bytes,
            p.artifact
                .started_ms
                .map(|ms| format!(" · first frame {} after the run started", human_ms(ms)))
                .unwrap_or_default()
        );
    }
    out.push_str("</section>\n");
}
