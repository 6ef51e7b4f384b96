//! Evidence a session writes through the run's store: window screenshots,
//! accessibility snapshots, and the application's own output at close.

use super::actions::resolve_wait;
use super::app::App;
use super::capture::{CaptureError, XWindow};
use super::display::missing;
use super::tree::{snapshot_json, walk, Fields};
use crate::codes::DesktopCode;
use qa_core::flow::Locator;
use qa_core::{
    Artifact, ArtifactGroup, Deadline, DriverError, Note, NoteKind, SessionContext, Step,
};
use serde_json::json;
use std::time::{Duration, Instant};

/// Node cap of accessibility snapshots.
pub(crate) const SNAPSHOT_CAP: usize = 2_000;

/// The last bytes of the application's stdout/stderr kept as evidence.
const APP_LOG_CAP: usize = 256 * 1024;

/// The scratch directory (under the run's `work/`) the launched
/// application's stdout and stderr are written to.
pub(crate) const APP_LOG_DIR: &str = "desktop-app";

/// Writes one artifact named from the step; a file holding a secret is
/// withheld and reported as an error.
fn write(
    ctx: &SessionContext,
    group: ArtifactGroup,
    step: &Step,
    ext: &str,
    bytes: &[u8],
) -> Result<Artifact, DriverError> {
    let ev = &ctx.evidence;
    let name = ev.unique_name(group, &step.evidence_name(), ext);
    ev.write(group, &name, bytes, Some(step.index + 1))?
        .ok_or_else(|| {
            DriverError::new(
                DesktopCode::EvidenceWithheld,
                format!("{name} contained a secret value and was withheld"),
            )
        })
}

/// Focuses the application's window and captures exactly its pixels as a PNG.
pub(crate) async fn screenshot(
    app: &App,
    ctx: &SessionContext,
    step: &Step,
) -> Result<(Artifact, XWindow), DriverError> {
    let w = app.focus_window().await?;
    tokio::time::sleep(Duration::from_millis(80)).await;
    let (id, pids) = (w.id, app.pids());
    let frame = app
        .with_x11(DesktopCode::CaptureFailed, move |x| {
            x.capture_window(id, &mut || pids.clone())
        })
        .await?
        .map_err(|e| match e {
            CaptureError::Covered => DriverError::new(
                DesktopCode::CaptureCovered,
                format!(
                    "{} after it was raised, and this X server cannot hand the window's own pixels (no Composite extension); no picture was taken",
                    e.message()
                ),
            )
            .with_remediation("close or move the other program's window, or run on an X server with the Composite extension (Xvfb and Xorg have it; --virtual-display uses Xvfb)"),
            CaptureError::Failed(e) => DriverError::blocked(
                DesktopCode::CaptureFailed,
                missing(
                    "window-capture",
                    e,
                    "run on a 24/32-bit TrueColor X display (Xvfb -screen 0 WxHx24)",
                ),
            ),
        })?;
    let png = frame
        .png()
        .map_err(|e| DriverError::new(DesktopCode::CaptureFailed, e))?;
    let a = write(ctx, ArtifactGroup::Screenshots, step, "png", &png)?;
    Ok((a, w))
}

/// A bounded, redacted JSON snapshot of the accessible tree under the
/// application (or under the element `root` names).
pub(crate) async fn snapshot(
    app: &App,
    ctx: &SessionContext,
    step: &Step,
    root: Option<&Locator>,
    deadline: Deadline,
) -> Result<Artifact, DriverError> {
    let root_obj = match root {
        Some(l) => resolve_wait(app.conn(), &app.root, l, deadline).await?.obj,
        None => app.root.clone(),
    };
    let started = Instant::now();
    let walked = deadline
        .run(walk(app.conn(), &root_obj, Fields::ALL, SNAPSHOT_CAP))
        .await;
    let Some((nodes, truncated)) = walked else {
        return Err(DriverError::new(
            DesktopCode::SnapshotTimeout,
            "the accessibility snapshot did not finish before the step deadline",
        ));
    };
    let mut doc = json!({
        "application": { "name": app.name, "pid": app.pid },
        "nodeCount": nodes.len(),
        "nodeCap": SNAPSHOT_CAP,
        "truncated": truncated,
        "elapsedMs": started.elapsed().as_millis() as u64,
        "tree": if nodes.is_empty() { serde_json::Value::Null } else { snapshot_json(&nodes, 0) },
    });
    ctx.secrets
        .redact_json_across(&mut doc, &["name", "value", "text", "description"]);
    ctx.secrets.redact_json(&mut doc);
    let bytes = serde_json::to_vec_pretty(&doc).unwrap_or_default();
    write(
        ctx,
        ArtifactGroup::AccessibilitySnapshots,
        step,
        "json",
        &bytes,
    )
}

/// Keeps the tail of the application's stdout and stderr as evidence
/// (scanned for secrets like any artifact; the scratch directory they were
/// written to is removed when the run ends). Returns notes for logs that
/// were withheld.
pub(crate) fn app_logs(ctx: &SessionContext) -> Vec<Note> {
    let mut notes = Vec::new();
    let dir = ctx.evidence.run_dir().join("work").join(APP_LOG_DIR);
    for (file, base) in [("stdout.log", "app-stdout"), ("stderr.log", "app-stderr")] {
        let Ok(bytes) = std::fs::read(dir.join(file)) else {
            continue;
        };
        if bytes.is_empty() {
            continue;
        }
        let tail = &bytes[bytes.len().saturating_sub(APP_LOG_CAP)..];
        let name = ctx.evidence.unique_name(ArtifactGroup::Logs, base, "log");
        match ctx.evidence.write(ArtifactGroup::Logs, &name, tail, None) {
            Ok(Some(_)) | Err(_) => {}
            Ok(None) => notes.push(Note::new(
                NoteKind::Evidence,
                format!("{name} was withheld: it contained a secret value"),
            )),
        }
    }
    notes
}
