//! `download`: click, and keep the download the click starts — into a
//! scratch directory of the run (never the user's folder), bounded by
//! `maxBytes`, checked against `filename`, then copied into the evidence
//! store (unless `retain` is false) and deleted. Downloads are denied
//! again afterwards.

use super::pointer::click_once;
use super::scratch_for;
use crate::cdp::commands::{CancelDownload, DownloadBehavior, SetDownloadBehavior};
use crate::cdp::events::{DownloadProgress, DownloadWillBegin};
use crate::cdp::Event;
use crate::codes::WebCode;
use crate::page::Page;
use crate::shared::TapGuard;
use qa_core::flow::Download;
use qa_core::{ArtifactGroup, Deadline, DriverError, Evidence, Note, NoteKind, Step, StepOutcome};
use std::path::Path;

/// Download size cap when the step sets no `maxBytes`.
const DEFAULT_MAX_DOWNLOAD_BYTES: u64 = 50 << 20;

/// `(base, ext)` of a file name made safe for the evidence store.
pub(super) fn download_name(suggested: &str, fallback: &str) -> (String, String) {
    let clean: String = suggested
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let clean = clean.trim_start_matches('.');
    let (base, ext) = match clean.rsplit_once('.') {
        Some((b, e)) if !b.is_empty() && !e.is_empty() && e.len() <= 10 => (b, e),
        _ => (clean, "bin"),
    };
    let base: String = base.chars().take(100).collect();
    let base = if base.is_empty() {
        fallback.to_string()
    } else {
        base
    };
    (base, ext.to_string())
}

/// `download`.
pub(super) async fn download(
    page: &Page,
    evidence: &Evidence,
    step: &Step,
    d: &Download,
    seq0: u64,
    deadline: Deadline,
) -> Result<StepOutcome, DriverError> {
    let dir = scratch_for(
        evidence,
        page.sh
            .browser_user
            .map(|u| (u, qa_core::evidence::HelperAccess::Writes)),
        &format!("download-step{}", step.index + 1),
    )?;
    if page.sh.existing.get().is_some() {
        return Err(DriverError::new(
            WebCode::DownloadFailed,
            "a download needs a browser context of the run's own: the browser's download settings are the user's, and this run drives a page the browser already shows",
        )
        .with_remediation("drive a new page (drop \"page\": \"existing\") to test downloads"));
    }
    let cdp = page.sh.cdp.clone();
    let tap = page.sh.tap(&[
        Event::BrowserDownloadWillBegin,
        Event::BrowserDownloadProgress,
    ]);
    let allow = SetDownloadBehavior {
        behavior: DownloadBehavior::AllowAndName,
        download_path: Some(dir.display().to_string()),
        events_enabled: Some(true),
        browser_context_id: page.sh.context.get().cloned(),
    };
    cdp.call_typed(None, &allow)
        .await
        .map_err(|e| DriverError::new(WebCode::DownloadFailed, e.to_string()))?;
    let r = download_inner(page, evidence, step, d, &dir, tap, deadline).await;
    // Back to the session default: downloads denied.
    let deny = SetDownloadBehavior {
        browser_context_id: page.sh.context.get().cloned(),
        ..SetDownloadBehavior::deny()
    };
    let _ = cdp.call_typed(None, &deny).await;
    let _ = std::fs::remove_dir_all(&dir);
    let out = r?;
    page.settle(seq0, deadline).await?;
    Ok(out)
}

async fn download_inner(
    page: &Page,
    evidence: &Evidence,
    step: &Step,
    d: &Download,
    dir: &Path,
    mut tap: TapGuard,
    deadline: Deadline,
) -> Result<StepOutcome, DriverError> {
    let max = d.max_bytes.unwrap_or(DEFAULT_MAX_DOWNLOAD_BYTES);
    click_once(page, &d.locator, "download", deadline).await?;
    let mut begun: Option<DownloadWillBegin> = None;
    loop {
        let Some(Some(ev)) = deadline.run(tap.rx.recv()).await else {
            return Err(match begun {
                None => DriverError::new(
                    WebCode::DownloadNone,
                    format!(
                        "download: clicking {} started no download before the step deadline",
                        d.locator.describe()
                    ),
                ),
                Some(_) => DriverError::new(
                    WebCode::DownloadTimeout,
                    "download: the download did not finish before the step deadline",
                ),
            });
        };
        if ev.event == Some(Event::BrowserDownloadWillBegin) {
            if begun.is_none() {
                begun = Some(ev.params());
            }
            continue;
        }
        let Some(b) = &begun else { continue };
        let p: DownloadProgress = ev.params();
        if p.guid != b.guid {
            continue;
        }
        if p.received_bytes as u64 > max || p.total_bytes as u64 > max {
            let cancel = CancelDownload {
                guid: b.guid.clone(),
            };
            let _ = page.sh.cdp.call_typed(None, &cancel).await;
            // Let the browser finish with the file (it would recreate the
            // directory) before it is deleted.
            if !p.finished() {
                let wait = Deadline::after_ms(1000).min(deadline);
                while let Some(Some(ev)) = wait.run(tap.rx.recv()).await {
                    let q: DownloadProgress = ev.params();
                    if ev.event == Some(Event::BrowserDownloadProgress)
                        && q.guid == b.guid
                        && q.finished()
                    {
                        break;
                    }
                }
            }
            let _ = std::fs::remove_file(dir.join(&b.guid));
            return Err(too_large(max));
        }
        match p.state.as_str() {
            "completed" => break,
            "canceled" => {
                return Err(DriverError::new(
                    WebCode::DownloadCanceled,
                    "download: the browser canceled the download",
                ))
            }
            _ => {}
        }
    }
    let DownloadWillBegin {
        guid,
        suggested_filename: suggested,
    } = begun.unwrap_or_default();
    let file = dir.join(&guid);
    let (mut src, size) = open_download(&file, &guid)?;
    if size > max {
        let _ = std::fs::remove_file(&file);
        return Err(too_large(max));
    }
    if let Some(m) = &d.filename {
        if !m.matches(&suggested) {
            let _ = std::fs::remove_file(&file);
            return Err(DriverError::new(
                WebCode::DownloadFilenameMismatch,
                format!(
                    "download: the suggested file name does not match {}",
                    m.describe()
                ),
            ));
        }
    }
    let mut out = StepOutcome {
        detail: Some(format!("downloaded {size} bytes")),
        ..Default::default()
    };
    if d.retain.unwrap_or(true) {
        let (base, ext) = download_name(&suggested, &step.evidence_name());
        let name = evidence.unique_name(ArtifactGroup::Downloads, &base, &ext);
        let w = |e: std::io::Error| DriverError::new(WebCode::EvidenceWrite, e.to_string());
        let (p, mut f) = evidence.new_file(ArtifactGroup::Downloads, &name)?;
        std::io::copy(&mut std::io::Read::take(&mut src, max), &mut f).map_err(w)?;
        drop(f);
        let kept = evidence.publish(ArtifactGroup::Downloads, &p, Some(step.index + 1))?;
        if kept.is_none() {
            out.notes.push(Note::new(
                NoteKind::Evidence,
                "download: the file contained a secret value and was not kept",
            ));
        }
    }
    let _ = std::fs::remove_file(&file);
    Ok(out)
}

/// The browser's download `guid` in `dir`, opened for reading with its
/// size. The directory is the browser's and the guid comes from it: a name
/// that is not a plain guid, or a file that is not a regular file (a
/// symlink to a file the browser could not read itself), is refused.
fn open_download(file: &Path, guid: &str) -> Result<(std::fs::File, u64), DriverError> {
    let bad = |why: String| DriverError::new(WebCode::DownloadFailed, why);
    if guid.is_empty() || !guid.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        return Err(bad(format!(
            "download: the browser named its file {guid:?}, not a guid"
        )));
    }
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let f = o.open(file).map_err(|e| bad(e.to_string()))?;
    let m = f.metadata().map_err(|e| bad(e.to_string()))?;
    if !m.is_file() {
        return Err(bad(
            "download: the downloaded file is not a regular file".into()
        ));
    }
    Ok((f, m.len()))
}

fn too_large(max: u64) -> DriverError {
    DriverError::new(
        WebCode::DownloadTooLarge,
        format!("download: the file is larger than maxBytes ({max}); it was canceled and deleted"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn download_names_are_safe() {
        assert_eq!(
            download_name("report 2024.csv", "x"),
            ("report_2024".into(), "csv".into())
        );
        assert_eq!(download_name("../x", "f"), ("_x".into(), "bin".into()));
        assert_eq!(download_name("", "step3"), ("step3".into(), "bin".into()));
        assert_eq!(download_name(".env", "s"), ("env".into(), "bin".into()));
    }
}
