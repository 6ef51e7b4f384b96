//! Evidence the Linux platform produces: the window's pixels, and the
//! application's own output at close.

use super::app::App;
use super::capture::CaptureError;
use super::display::missing;
use qa_core::{ArtifactGroup, DriverError, Note, NoteKind, SessionContext};
use qa_desktop::{DesktopCode, WindowShot};
use std::time::Duration;

/// The last bytes of the application's stdout/stderr kept as evidence.
const APP_LOG_CAP: usize = 256 * 1024;

/// The scratch directory (under the run's `work/`) the launched
/// application's stdout and stderr are written to.
pub(crate) const APP_LOG_DIR: &str = "desktop-app";

/// Focuses the application's window and captures exactly its pixels as a PNG.
pub(crate) async fn screenshot(app: &App) -> Result<WindowShot, DriverError> {
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
    Ok(WindowShot {
        png,
        window: format!("window 0x{:x}", w.id),
        pid: w.pid,
        x: w.x,
        y: w.y,
        width: w.width,
        height: w.height,
    })
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
