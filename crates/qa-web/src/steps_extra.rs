//! The richer interaction steps: `dragTo`, `uploadFiles`, `openPopup`,
//! `download`, and the `authRejectedIf` check. (Diagnostics —
//! `performanceTrace`, `heapSummary`, `lighthouse` — are in
//! [`crate::diagnostics`].)

use crate::actionability::actionable;
use crate::page::{locator_spec, EvalError, Page};
use base64::Engine;
use qa_core::flow::{AuthRejectedIf, BrowserAction, Download, DragTo, OpenPopup, UploadFiles};
use qa_core::{
    ArtifactGroup, Deadline, DriverError, Evidence, MissingCapability, Step, StepOutcome, Verdict,
};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Download size cap when the step sets no `maxBytes`.
pub const DEFAULT_MAX_DOWNLOAD_BYTES: u64 = 50 << 20;
/// Intermediate pointer positions of a drag.
const DRAG_STEPS: u32 = 5;

/// A popup adopted by `openPopup`, remembered under the step's name.
#[derive(Debug, Clone)]
pub struct Popup {
    /// Its target id (for `Target.closeTarget`).
    pub target_id: String,
    /// Its flat session.
    pub session: String,
    /// Its origin when adopted.
    pub origin: String,
}

/// Performs one of the steps of this module; `None` when `action` is not one.
pub async fn perform(
    page: &Page,
    evidence: &Evidence,
    step: &Step,
    action: &BrowserAction,
    deadline: Deadline,
) -> Option<Result<StepOutcome, DriverError>> {
    let seq0 = page.sh.st().net_seq;
    Some(match action {
        BrowserAction::DragTo(d) => drag_to(page, d, seq0, deadline).await,
        BrowserAction::UploadFiles(u) => {
            upload_files(page, evidence, step, u, seq0, deadline).await
        }
        BrowserAction::OpenPopup(o) => open_popup(page, step, o, seq0, deadline).await,
        BrowserAction::Download(d) => download(page, evidence, step, d, seq0, deadline).await,
        _ => return None,
    })
}

fn cdp_err(code: &'static str) -> impl Fn(crate::cdp::CdpError) -> DriverError {
    move |e| DriverError::new(code, e.to_string())
}

fn scratch(evidence: &Evidence, base: &str) -> Result<PathBuf, DriverError> {
    let mut last = None;
    for i in 1..100 {
        let name = if i == 1 {
            base.to_string()
        } else {
            format!("{base}-{i}")
        };
        match evidence.scratch_dir(&name) {
            Ok(d) => return Ok(d),
            Err(e) => last = Some(e),
        }
    }
    Err(DriverError::new(
        "web.evidence.write",
        last.map(|e| e.to_string()).unwrap_or_default(),
    ))
}

// ------------------------------------------------------------------ dragTo

async fn mouse(page: &Page, kind: &str, x: f64, y: f64, buttons: u8) -> Result<(), DriverError> {
    let mut p = json!({ "type": kind, "x": x, "y": y, "buttons": buttons,
        "button": if kind == "mouseMoved" && buttons == 0 { "none" } else { "left" } });
    if kind != "mouseMoved" {
        p["clickCount"] = json!(1);
    }
    page.input("Input.dispatchMouseEvent", p).await
}

fn point(v: &Value, pos: Option<&qa_core::flow::Position>) -> (f64, f64) {
    match pos {
        Some(p) => (
            v["left"].as_f64().unwrap_or(0.0) + p.x,
            v["top"].as_f64().unwrap_or(0.0) + p.y,
        ),
        None => (
            v["x"].as_f64().unwrap_or(0.0),
            v["y"].as_f64().unwrap_or(0.0),
        ),
    }
}

const ARM_DRAG: &str = "(() => { const s = { started: false, ev: null }; \
  const f = (e) => { s.started = true; s.ev = e; }; addEventListener('dragstart', f, true); \
  window.__uiQaDrag = { s, f }; })()";
const CHECK_DRAG: &str = "(() => { const d = window.__uiQaDrag; if (!d) return false; \
  removeEventListener('dragstart', d.f, true); delete window.__uiQaDrag; \
  return d.s.started && !(d.s.ev && d.s.ev.defaultPrevented); })()";

async fn drag_to(
    page: &Page,
    d: &DragTo,
    seq0: u64,
    deadline: Deadline,
) -> Result<StepOutcome, DriverError> {
    let hover = || json!({ "kind": "hover" });
    // Target first, then source, then target again: both end up in view
    // whenever they fit, with current coordinates.
    actionable(page, &d.drop_target, "dragTo", hover(), deadline).await?;
    let src = actionable(page, &d.locator, "dragTo", hover(), deadline).await?;
    let dst = actionable(page, &d.drop_target, "dragTo", hover(), deadline).await?;
    let (sx, sy) = point(&src.value, d.source_position.as_ref());
    let (tx, ty) = point(&dst.value, d.target_position.as_ref());
    let at = |i: u32| {
        let f = f64::from(i) / f64::from(DRAG_STEPS);
        (sx + (tx - sx) * f, sy + (ty - sy) * f)
    };
    page.evaluate(json!({ "expression": ARM_DRAG }))
        .await
        .map_err(cdp_err("web.drag.failed"))?;
    mouse(page, "mouseMoved", sx, sy, 0).await?;
    mouse(page, "mousePressed", sx, sy, 1).await?;
    // An HTML5 drag is intercepted (its data comes back in
    // Input.dragIntercepted) and replayed with Input.dispatchDragEvent; a
    // pointer-driven drag just keeps receiving mouse events.
    let mut tap = page.sh.tap(&["Input.dragIntercepted"]);
    page.call("Input.setInterceptDrags", json!({ "enabled": true }))
        .await
        .map_err(cdp_err("web.drag.failed"))?;
    let first = at(1);
    let moved = mouse(page, "mouseMoved", first.0, first.1, 1).await;
    let started = page
        .evaluate(json!({ "expression": CHECK_DRAG, "returnByValue": true }))
        .await
        .map(|v| v["result"]["value"] == true)
        .unwrap_or(false);
    let mut data = None;
    if moved.is_ok() && started {
        let wait = Deadline::after_ms(2000).min(deadline);
        while let Some(Some(ev)) = wait.run(tap.rx.recv()).await {
            if ev.session.as_deref() == Some(page.session.as_str()) {
                data = Some(ev.params["data"].clone());
                break;
            }
        }
    }
    let _ = page
        .call("Input.setInterceptDrags", json!({ "enabled": false }))
        .await;
    drop(tap);
    if let Err(e) = moved {
        let _ = mouse(page, "mouseReleased", first.0, first.1, 0).await;
        return Err(e);
    }
    let kind = if let Some(data) = data {
        let drag = |t: &str, (x, y): (f64, f64)| json!({ "type": t, "x": x, "y": y, "data": data, "modifiers": 0 });
        page.input("Input.dispatchDragEvent", drag("dragEnter", first))
            .await?;
        for i in 2..=DRAG_STEPS {
            page.input("Input.dispatchDragEvent", drag("dragOver", at(i)))
                .await?;
        }
        page.input("Input.dispatchDragEvent", drag("drop", (tx, ty)))
            .await?;
        "HTML5 drag and drop"
    } else {
        for i in 2..=DRAG_STEPS {
            let (x, y) = at(i);
            mouse(page, "mouseMoved", x, y, 1).await?;
        }
        mouse(page, "mouseReleased", tx, ty, 0).await?;
        "pointer drag"
    };
    page.settle(seq0, deadline).await?;
    Ok(StepOutcome {
        detail: Some(kind.into()),
        ..Default::default()
    })
}

// ------------------------------------------------------------- uploadFiles

/// A file name safe to create inside a scratch directory, as close to the
/// flow's name as possible (it is the name the page sees).
pub fn upload_name(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c == '/' || c == '\\' || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect();
    s = s.trim().to_string();
    while s.len() > 200 {
        s.pop();
    }
    if s.is_empty() || s == "." || s == ".." {
        s = "file".into();
    }
    s
}

async fn upload_files(
    page: &Page,
    evidence: &Evidence,
    step: &Step,
    u: &UploadFiles,
    seq0: u64,
    deadline: Deadline,
) -> Result<StepOutcome, DriverError> {
    let n = u.files.len();
    actionable(
        page,
        &u.locator,
        "uploadFiles",
        json!({ "kind": "file", "count": n }),
        deadline,
    )
    .await?;
    let dir = scratch(evidence, &format!("uploads-step{}", step.index + 1))?;
    let mut paths = Vec::new();
    let mut total = 0usize;
    for (i, f) in u.files.iter().enumerate() {
        let clean: String = f.base64.chars().filter(|c| !c.is_whitespace()).collect();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(clean)
            .map_err(|_| {
                DriverError::new(
                    "web.upload.bad_base64",
                    format!(
                        "uploadFiles: file {} ({:?}) is not valid base64",
                        i + 1,
                        f.name
                    ),
                )
            })?;
        total += bytes.len();
        // One directory per file so equal names do not collide.
        let sub = dir.join(format!("{}", i + 1));
        let w = |e: std::io::Error| DriverError::new("web.evidence.write", e.to_string());
        std::fs::create_dir(&sub).map_err(w)?;
        let p = sub.join(upload_name(&f.name));
        let mut file = qa_core::evidence::create_private_file(&p)
            .map_err(|e| DriverError::new("web.evidence.write", e.to_string()))?;
        std::io::Write::write_all(&mut file, &bytes).map_err(w)?;
        paths.push(p.display().to_string());
    }
    let oid = page.element_object(&u.locator).await?.ok_or_else(|| {
        DriverError::new(
            "web.locator.not_found",
            format!(
                "uploadFiles: {} no longer matches one element",
                u.locator.describe()
            ),
        )
    })?;
    let set = page
        .call(
            "DOM.setFileInputFiles",
            json!({ "files": paths, "objectId": oid }),
        )
        .await
        .map_err(cdp_err("web.upload.failed"));
    let seen = page
        .call(
            "Runtime.callFunctionOn",
            json!({ "objectId": oid, "returnByValue": true,
                "functionDeclaration": "function () { return [...(this.files || [])].map((f) => ({ size: f.size, type: f.type })); }" }),
        )
        .await;
    let _ = page
        .call("Runtime.releaseObject", json!({ "objectId": oid }))
        .await;
    set?;
    let seen = seen
        .map(|v| v["result"]["value"].as_array().cloned().unwrap_or_default())
        .unwrap_or_default();
    if seen.len() != n {
        return Err(DriverError::new(
            "web.upload.failed",
            format!(
                "uploadFiles: the input holds {} file(s), expected {n}",
                seen.len()
            ),
        ));
    }
    let mut out = StepOutcome {
        detail: Some(format!("set {n} file(s), {total} bytes")),
        ..Default::default()
    };
    for (i, (f, s)) in u.files.iter().zip(&seen).enumerate() {
        let ty = s["type"].as_str().unwrap_or("");
        if !f.mime_type.is_empty() && !ty.eq_ignore_ascii_case(&f.mime_type) {
            out.observations.push(format!(
                "uploadFiles: file {} is typed {ty:?} by Chromium (from its name), not the declared {:?}",
                i + 1,
                f.mime_type
            ));
        }
    }
    page.settle(seq0, deadline).await?;
    Ok(out)
}

// --------------------------------------------------------------- openPopup

fn page_sessions(page: &Page) -> std::collections::HashSet<String> {
    page.sh
        .st()
        .session_type
        .iter()
        .filter(|(_, k)| k.as_str() == "page")
        .map(|(s, _)| s.clone())
        .collect()
}

async fn click(
    page: &Page,
    locator: &qa_core::flow::Locator,
    action: &str,
    deadline: Deadline,
) -> Result<(), DriverError> {
    let r = actionable(page, locator, action, json!({ "kind": "click" }), deadline).await?;
    let (x, y) = point(&r.value, None);
    page.click_at(x, y, 1).await
}

async fn open_popup(
    page: &Page,
    step: &Step,
    o: &OpenPopup,
    seq0: u64,
    deadline: Deadline,
) -> Result<StepOutcome, DriverError> {
    let name = step.name.clone().ok_or_else(|| {
        DriverError::new(
            "web.popup.name_required",
            "openPopup needs the step's name: the popup is remembered under it",
        )
    })?;
    let taken = {
        let st = page.sh.st();
        // A closed popup's name may be reused.
        st.popups
            .get(&name)
            .is_some_and(|p| st.ready.contains(&p.session))
    };
    if taken {
        return Err(DriverError::new(
            "web.popup.name_taken",
            format!("a popup named {name:?} is already open"),
        ));
    }
    let before = page_sessions(page);
    let mut rx = page.sh.changed.subscribe();
    click(page, &o.locator, "openPopup", deadline).await?;
    // The popup is auto-attached paused and contained (events::on_attached)
    // before it may run; adopt it once that setup is done.
    let sid = loop {
        let found = {
            let st = page.sh.st();
            st.session_type
                .iter()
                .find(|(s, k)| {
                    k.as_str() == "page"
                        && !before.contains(*s)
                        && (st.ready.contains(*s)
                            || st.closed_popups.contains(*s)
                            || st.blocked_documents.contains_key(*s))
                })
                .map(|(s, _)| s.clone())
        };
        if let Some(s) = found {
            break s;
        }
        if deadline.run(rx.changed()).await.is_none() {
            return Err(DriverError::new(
                "web.popup.none",
                format!(
                    "openPopup: clicking {} opened no popup before the step deadline",
                    o.locator.describe()
                ),
            ));
        }
    };
    let target_id = {
        let st = page.sh.st();
        st.sessions
            .iter()
            .find(|(_, s)| **s == sid)
            .map(|(t, _)| t.clone())
            .unwrap_or_default()
    };
    let popup = Page {
        session: sid.clone(),
        frame: None,
        ..page.clone()
    };
    let close = || async {
        let _ = page
            .sh
            .cdp
            .call(None, "Target.closeTarget", json!({ "targetId": target_id }))
            .await;
    };
    // Wait until it has loaded an allowed document, or its navigation was
    // blocked by containment (then it is closed).
    let blocked = || {
        page.sh
            .st()
            .blocked_documents
            .get(&sid)
            .copied()
            .unwrap_or(0)
            > 0
    };
    let blocked_error = || {
        DriverError::new(
            "web.popup.blocked",
            "openPopup: the popup tried to load a page outside the allowlist; it was blocked and closed",
        )
        .with_remediation("add the popup's origin to target.allowedOrigins if it is part of the app")
    };
    let info = loop {
        if blocked() {
            close().await;
            return Err(blocked_error());
        }
        match popup.eval("page", &json!({}), &json!({}), deadline).await {
            Ok(v) => {
                let url = v["url"].as_str().unwrap_or("");
                if v["ready"] == "complete" && url.starts_with("http") {
                    break v;
                }
            }
            // Containment closes a popup whose document it blocked.
            Err(EvalError::Fatal(e)) if e.target_gone() && blocked() => {
                return Err(blocked_error());
            }
            Err(EvalError::Fatal(e)) if e.target_gone() => {
                return Err(DriverError::new(
                    "web.popup.closed",
                    "openPopup: the popup closed before it loaded a page",
                ));
            }
            Err(_) => {}
        }
        if deadline.expired() {
            close().await;
            return Err(DriverError::new(
                "web.popup.not_loaded",
                "openPopup: the popup did not load a page before the step deadline; it was closed",
            ));
        }
        popup.changed_or(Duration::from_millis(100), deadline).await;
    };
    // Opening a window backgrounds the opener (headless too: its animation
    // frames stop); the next step brings its own page to the front
    // (crate::page::Page::ensure_front).
    let origin = url::Url::parse(info["url"].as_str().unwrap_or(""))
        .map(|u| crate::containment::origin_of(&u))
        .unwrap_or_default();
    popup.settle(seq0, deadline).await?;
    let title: String = info["title"]
        .as_str()
        .unwrap_or("")
        .chars()
        .take(80)
        .collect();
    let line = format!("popup {name:?} opened: origin {origin}, title {title:?}");
    {
        let mut st = page.sh.st();
        st.popups.insert(
            name,
            Popup {
                target_id: target_id.clone(),
                session: sid,
                origin,
            },
        );
    }
    Ok(StepOutcome {
        detail: Some(line.clone()),
        observations: vec![line],
        ..Default::default()
    })
}

// ---------------------------------------------------------------- download

/// `(base, ext)` of a file name made safe for the evidence store.
pub fn download_name(suggested: &str, fallback: &str) -> (String, String) {
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

async fn download(
    page: &Page,
    evidence: &Evidence,
    step: &Step,
    d: &Download,
    seq0: u64,
    deadline: Deadline,
) -> Result<StepOutcome, DriverError> {
    let dir = scratch(evidence, &format!("download-step{}", step.index + 1))?;
    let cdp = page.sh.cdp.clone();
    let tap = page
        .sh
        .tap(&["Browser.downloadWillBegin", "Browser.downloadProgress"]);
    cdp.call(
        None,
        "Browser.setDownloadBehavior",
        json!({ "behavior": "allowAndName", "downloadPath": dir.display().to_string(), "eventsEnabled": true }),
    )
    .await
    .map_err(cdp_err("web.download.failed"))?;
    let r = download_inner(page, evidence, step, d, &dir, tap, deadline).await;
    // Back to the session default: downloads denied.
    let _ = cdp
        .call(
            None,
            "Browser.setDownloadBehavior",
            json!({ "behavior": "deny" }),
        )
        .await;
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
    mut tap: crate::events::TapGuard,
    deadline: Deadline,
) -> Result<StepOutcome, DriverError> {
    let max = d.max_bytes.unwrap_or(DEFAULT_MAX_DOWNLOAD_BYTES);
    click(page, &d.locator, "download", deadline).await?;
    let mut begun: Option<(String, String)> = None;
    loop {
        let Some(Some(ev)) = deadline.run(tap.rx.recv()).await else {
            return Err(match begun {
                None => DriverError::new(
                    "web.download.none",
                    format!(
                        "download: clicking {} started no download before the step deadline",
                        d.locator.describe()
                    ),
                ),
                Some(_) => DriverError::new(
                    "web.download.timeout",
                    "download: the download did not finish before the step deadline",
                ),
            });
        };
        let p = &ev.params;
        match ev.method.as_str() {
            "Browser.downloadWillBegin" if begun.is_none() => {
                begun = Some((
                    p["guid"].as_str().unwrap_or("").to_string(),
                    p["suggestedFilename"].as_str().unwrap_or("").to_string(),
                ));
            }
            "Browser.downloadProgress" => {
                let Some((guid, _)) = &begun else { continue };
                if p["guid"].as_str() != Some(guid.as_str()) {
                    continue;
                }
                let got = p["receivedBytes"].as_f64().unwrap_or(0.0) as u64;
                let total = p["totalBytes"].as_f64().unwrap_or(0.0) as u64;
                if got > max || total > max {
                    let _ = page
                        .sh
                        .cdp
                        .call(None, "Browser.cancelDownload", json!({ "guid": guid }))
                        .await;
                    // Let the browser finish with the file (it would
                    // recreate the directory) before it is deleted.
                    let done = |ev: &crate::cdp::CdpEvent| {
                        ev.params["guid"].as_str() == Some(guid.as_str())
                            && matches!(ev.params["state"].as_str(), Some("canceled" | "completed"))
                    };
                    if !matches!(p["state"].as_str(), Some("canceled" | "completed")) {
                        let wait = Deadline::after_ms(1000).min(deadline);
                        while let Some(Some(ev)) = wait.run(tap.rx.recv()).await {
                            if done(&ev) {
                                break;
                            }
                        }
                    }
                    let _ = std::fs::remove_file(dir.join(guid));
                    return Err(too_large(max));
                }
                match p["state"].as_str() {
                    Some("completed") => break,
                    Some("canceled") => {
                        return Err(DriverError::new(
                            "web.download.canceled",
                            "download: the browser canceled the download",
                        ))
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    let (guid, suggested) = begun.unwrap_or_default();
    let file = dir.join(&guid);
    let size = std::fs::metadata(&file)
        .map_err(|e| DriverError::new("web.download.failed", e.to_string()))?
        .len();
    if size > max {
        let _ = std::fs::remove_file(&file);
        return Err(too_large(max));
    }
    if let Some(m) = &d.filename {
        if !m.matches(&suggested) {
            let _ = std::fs::remove_file(&file);
            return Err(DriverError::new(
                "web.download.filename_mismatch",
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
        let ev = |e: qa_core::evidence::EvidenceError| {
            DriverError::new("web.evidence.write", e.to_string())
        };
        let (p, mut f) = evidence
            .new_file(ArtifactGroup::Downloads, &name)
            .map_err(ev)?;
        let mut src = std::fs::File::open(&file)
            .map_err(|e| DriverError::new("web.evidence.write", e.to_string()))?;
        std::io::copy(&mut src, &mut f)
            .map_err(|e| DriverError::new("web.evidence.write", e.to_string()))?;
        drop(f);
        match evidence
            .publish(ArtifactGroup::Downloads, &p, Some(step.index + 1))
            .map_err(ev)?
        {
            Some(a) => out.artifacts.push(a),
            None => out
                .observations
                .push("download: the file contained a secret value and was not kept".into()),
        }
    }
    let _ = std::fs::remove_file(&file);
    Ok(out)
}

fn too_large(max: u64) -> DriverError {
    DriverError::new(
        "web.download.too_large",
        format!("download: the file is larger than maxBytes ({max}); it was canceled and deleted"),
    )
}

// ----------------------------------------------------------- authRejectedIf

/// `authRejectedIf`: holds while the declared rejection signal is absent;
/// when it is present the signed-in session was rejected and the run is
/// BLOCKED (missing capability `auth-session`), never FAILED.
pub async fn auth_rejected_if(
    page: &Page,
    a: &AuthRejectedIf,
    deadline: Deadline,
) -> Result<Verdict, DriverError> {
    let (present, what) = if let Some(s) = &a.url_includes {
        let v = crate::steps::eval_once(page, "page", &json!({}), &json!({}), deadline).await?;
        (
            v["url"].as_str().unwrap_or("").contains(s.as_str()),
            format!("the URL includes {s:?}"),
        )
    } else if let Some(l) = &a.locator {
        let v =
            crate::steps::eval_once(page, "countVisible", &locator_spec(l), &json!({}), deadline)
                .await?;
        (
            v["visible"].as_u64().unwrap_or(0) > 0,
            format!("{} is visible", l.describe()),
        )
    } else {
        return Ok(Verdict::Fails {
            reason: "authRejectedIf needs urlIncludes or locator".into(),
        });
    };
    if !present {
        return Ok(Verdict::Holds);
    }
    Err(DriverError::blocked(
        "web.auth.rejected",
        MissingCapability {
            id: "auth-session".into(),
            reason: format!(
                "the page shows the declared auth-rejection signal ({what}): the signed-in session was rejected"
            ),
            remediation: "refresh the auth profile (sign in again or re-export the session), then rerun".into(),
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upload_names_stay_close_to_the_flow() {
        assert_eq!(upload_name("report 1.csv"), "report 1.csv");
        assert_eq!(upload_name("../../etc/passwd"), ".._.._etc_passwd");
        assert_eq!(upload_name(".."), "file");
        assert_eq!(upload_name(" "), "file");
    }

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
