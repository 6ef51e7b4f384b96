//! PNG screenshots of the viewport, the full page or one element.
//!
//! Secrets in pixels: when the run has secrets, no screenshot is taken
//! until everything on the page that shows one is covered (see [`capture`]):
//! a DOM snapshot of the page (every document of its process, open and
//! closed shadow trees, current input values) is matched against the
//! secrets here, in the runner — the page never receives a secret — and the
//! in-page helper covers each place with an opaque box in the top layer
//! (`maskShow`), the picture is taken, and the boxes are removed
//! (`maskHide`, also on error). A secret on the page that cannot be covered
//! (no box: hidden markup next to a canvas that draws it; a cross-origin
//! frame) withholds the picture, as does any failure of the masking step.

use super::{mask, publish};
use crate::actionability::actionable;
use crate::cdp::commands::{CaptureScreenshot, Clip, GetLayoutMetrics};
use crate::codes::WebCode;
use crate::page::{ActKind, ElementRect, Page};
use base64::Engine;
use qa_core::flow::Locator;
use qa_core::{Artifact, ArtifactGroup, Deadline, DriverError, Evidence, Note, NoteKind, Step};

/// Tallest clip taken (CSS px).
const MAX_SHOT_HEIGHT: f64 = 16384.0;

/// Longest wait for the recording visualizer's marks to clear before a
/// picture (they live at most 650 ms).
const MARKS_WAIT_MS: u64 = 800;

/// Masking rounds before a page that keeps changing under the masks
/// withholds its picture.
const MASK_ATTEMPTS: usize = 3;

/// A PNG of the viewport, the full page or one element. With secrets in
/// the run, secrets on the page are masked first; a picture that cannot be
/// masked is withheld (`None`, a note says why).
pub(crate) async fn screenshot(
    page: &Page,
    evidence: &Evidence,
    step: &Step,
    locator: Option<&Locator>,
    full_page: bool,
    deadline: Deadline,
) -> Result<Option<Artifact>, DriverError> {
    let clip = if let Some(l) = locator {
        let r: ElementRect = actionable(page, l, "screenshot", ActKind::Rect, deadline).await?;
        Some(Clip {
            x: r.x,
            y: r.y,
            width: r.w,
            height: r.h.min(MAX_SHOT_HEIGHT),
            scale: 1,
        })
    } else if full_page {
        let m = page
            .send(&GetLayoutMetrics {})
            .await
            .map_err(|e| DriverError::new(WebCode::ScreenshotFailed, e.to_string()))?;
        let size = m.css_content_size;
        Some(Clip {
            x: 0.0,
            y: 0.0,
            width: size.width,
            height: size.height.min(MAX_SHOT_HEIGHT),
            scale: 1,
        })
    } else {
        None
    };
    let cmd = CaptureScreenshot::png(clip);
    let base = step.evidence_name();
    let Some(png) = capture(page, evidence, &cmd, &base, deadline).await? else {
        return Ok(None);
    };
    publish(
        evidence,
        ArtifactGroup::Screenshots,
        &base,
        "png",
        &png,
        Some(step.index + 1),
    )
}

/// One `Page.captureScreenshot`, decoded.
async fn capture_raw(page: &Page, cmd: &CaptureScreenshot) -> Result<Vec<u8>, DriverError> {
    let failed = |e: String| DriverError::new(WebCode::ScreenshotFailed, e);
    let r = page.send(cmd).await.map_err(|e| failed(e.to_string()))?;
    base64::engine::general_purpose::STANDARD
        .decode(r.data)
        .map_err(|e| failed(e.to_string()))
}

/// `Page.captureScreenshot` of `page` with every secret on it covered.
/// `Ok(None)`: withheld (a note says why). Without secrets in the run, a
/// plain capture.
async fn capture(
    page: &Page,
    evidence: &Evidence,
    cmd: &CaptureScreenshot,
    base: &str,
    deadline: Deadline,
) -> Result<Option<Vec<u8>>, DriverError> {
    let secrets = evidence.secrets();
    page.marks_gone(Deadline::after_ms(MARKS_WAIT_MS).min(deadline))
        .await;
    match capture_masked(page, evidence, cmd, deadline).await? {
        Ok(png) => Ok(Some(png)),
        Err(why) => {
            let note = format!(
                "screenshot {base}.png withheld: a secret is shown on the page and could not be masked ({why})"
            );
            page.sh.note(Note::new(
                NoteKind::Evidence,
                secrets.redact(&note).into_owned(),
            ));
            evidence.withhold(
                &format!("{base}.png"),
                "a secret is shown on the page and could not be masked; no picture was taken",
            );
            Ok(None)
        }
    }
}

/// A video frame (JPEG of the viewport) with every secret on the page
/// covered; `None` when it could not be masked (no frame is kept then).
pub(crate) async fn masked_video_frame(
    page: &Page,
    evidence: &Evidence,
    deadline: Deadline,
) -> Option<Vec<u8>> {
    match capture_masked(page, evidence, &CaptureScreenshot::jpeg(), deadline).await {
        Ok(Ok(jpeg)) => Some(jpeg),
        Ok(Err(_)) | Err(_) => None,
    }
}

/// The capture with every secret covered: `Ok(Err(why))` when it cannot be
/// masked (nothing may be kept).
///
/// One round: find what shows a secret ([`mask::plan`]); if some of it
/// cannot be covered, withhold; cover the rest (`maskShow`), capture,
/// uncover (`maskHide`, always); then look again: the picture is kept only
/// if the same places show secrets and nothing moved while it was taken
/// (otherwise another round). Any error of the masking step withholds.
async fn capture_masked(
    page: &Page,
    evidence: &Evidence,
    cmd: &CaptureScreenshot,
    deadline: Deadline,
) -> Result<Result<Vec<u8>, String>, DriverError> {
    let secrets = evidence.secrets();
    if secrets.is_empty() {
        return capture_raw(page, cmd).await.map(Ok);
    }
    let withhold = |why: &str| Ok(Err(why.to_string()));
    let mut why = String::from("the page kept changing while it was captured");
    for _ in 0..MASK_ATTEMPTS {
        let plan = match mask::plan(page, secrets, deadline).await {
            Ok(p) => p,
            Err(e) => return withhold(&e),
        };
        if let Some(e) = &plan.unmaskable {
            return withhold(e);
        }
        let covered = if plan.units.is_empty() {
            Ok(())
        } else {
            mask::show(page, &plan, deadline).await
        };
        let png = match &covered {
            Ok(()) => Some(capture_raw(page, cmd).await),
            Err(_) => None,
        };
        // The masks go, whatever happened.
        let moved = if plan.units.is_empty() {
            Ok(false)
        } else {
            mask::hide(page, deadline).await
        };
        match covered {
            Err(mask::ShowError::Unmaskable(e)) => return withhold(&e),
            Err(mask::ShowError::Changed(e)) => {
                why = e;
                continue;
            }
            Ok(()) => {}
        }
        let png = match png {
            Some(p) => p?,
            None => continue,
        };
        match moved {
            Err(e) => return withhold(&e),
            Ok(true) => {
                why = "what shows a secret moved, or the masks were disturbed, while the picture was taken".into();
                continue;
            }
            Ok(false) => {}
        }
        let after = match mask::plan(page, secrets, deadline).await {
            Ok(p) => p,
            Err(e) => return withhold(&e),
        };
        if let Some(e) = &after.unmaskable {
            return withhold(e);
        }
        if after.same_places(&plan) {
            return Ok(Ok(png));
        }
        why = "the places showing a secret changed while the picture was taken".into();
    }
    withhold(&why)
}
