//! Keyboard and form steps: `fill`, `press`, `selectOption` and
//! `uploadFiles` (files written to a private scratch directory of the run,
//! then set on the input).

use super::expect::{arm, check_expectations, interact};
use super::scratch_for;
use crate::actionability::actionable;
use crate::cdp::commands::{CallFunctionOn, InsertText, ReleaseObject, SetFileInputFiles};
use crate::codes::WebCode;
use crate::page::{ActKind, Filled, Nothing, Page};
use base64::Engine;
use qa_core::flow::{Fill, Press, SelectOption, UploadFiles};
use qa_core::{Deadline, DriverError, Evidence, Note, Step, StepOutcome};
use serde::Deserialize;

/// `fill`: select the content, then insert the value over the selection
/// (date, time, color and range inputs are set directly by the helper).
pub(super) async fn fill(
    page: &Page,
    f: &Fill,
    seq0: u64,
    deadline: Deadline,
) -> Result<StepOutcome, DriverError> {
    let kind = ActKind::Fill { value: &f.value };
    let r: Filled = actionable(page, &f.locator, "fill", kind, deadline).await?;
    let direct = r.direct;
    let value = if direct {
        String::new()
    } else {
        f.value.clone()
    };
    interact(
        page,
        f.expect_response.as_ref(),
        f.expect_dialog.as_ref(),
        seq0,
        deadline,
        || async move {
            if direct {
                return Ok(());
            }
            // The helper selected the whole content: `Input.insertText`
            // replaces the selection (an empty value deletes it). No key
            // event: on QtWebEngine 5.15 (Chromium 87) every
            // `Input.dispatchKeyEvent` is rejected by the renderer (a mojo
            // validation error) and is never answered; it also cuts the
            // page's input channel, so nothing after it is answered either.
            page.input(&InsertText { text: value }).await
        },
    )
    .await?;
    Ok(StepOutcome::default())
}

/// `press`: a key chord, on the element when a locator is given.
pub(super) async fn press(
    page: &Page,
    p: &Press,
    seq0: u64,
    deadline: Deadline,
) -> Result<StepOutcome, DriverError> {
    let chord = p.key.chord();
    if let Some(l) = &p.locator {
        actionable::<Nothing>(page, l, "press", ActKind::Focus, deadline).await?;
    }
    interact(
        page,
        p.expect_response.as_ref(),
        p.expect_dialog.as_ref(),
        seq0,
        deadline,
        || async move { page.press(&chord).await },
    )
    .await?;
    Ok(StepOutcome::default())
}

/// `selectOption`: chosen by the helper (value, label or index).
pub(super) async fn select_option(
    page: &Page,
    s: &SelectOption,
    seq0: u64,
    deadline: Deadline,
) -> Result<StepOutcome, DriverError> {
    let kind = ActKind::Select {
        value: s.value.as_deref(),
        label: s.label.as_deref(),
        index: s.index,
    };
    let armed = arm(page, None);
    actionable::<Nothing>(page, &s.locator, "selectOption", kind, deadline).await?;
    page.settle(seq0, deadline).await?;
    check_expectations(page, armed, s.expect_response.as_ref(), None, deadline).await?;
    Ok(StepOutcome::default())
}

/// A file name safe to create inside a scratch directory, as close to the
/// flow's name as possible (it is the name the page sees).
pub(super) fn upload_name(name: &str) -> String {
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

/// A file as the page's input holds it.
#[derive(Debug, Deserialize)]
struct HeldFile {
    /// The MIME type Chromium gave it.
    #[serde(rename = "type")]
    kind: String,
}

/// `uploadFiles`.
pub(super) async fn upload_files(
    page: &Page,
    evidence: &Evidence,
    step: &Step,
    u: &UploadFiles,
    seq0: u64,
    deadline: Deadline,
) -> Result<StepOutcome, DriverError> {
    let n = u.files.len();
    let kind = ActKind::File { count: n };
    actionable::<Nothing>(page, &u.locator, "uploadFiles", kind, deadline).await?;
    let user = page.sh.browser_user;
    let dir = scratch_for(
        evidence,
        user.map(|u| (u, qa_core::evidence::HelperAccess::Reads)),
        &format!("uploads-step{}", step.index + 1),
    )?;
    let mut paths = Vec::new();
    let mut total = 0usize;
    for (i, f) in u.files.iter().enumerate() {
        let clean: String = f.base64.chars().filter(|c| !c.is_whitespace()).collect();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(clean)
            .map_err(|_| {
                DriverError::new(
                    WebCode::UploadBadBase64,
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
        let w = |e: std::io::Error| DriverError::new(WebCode::EvidenceWrite, e.to_string());
        let p = sub.join(upload_name(&f.name));
        let mut file = match user {
            // The browser's own user reads it: root keeps the directory,
            // the file is handed over through its descriptor.
            #[cfg(unix)]
            Some(u) => {
                qa_core::evidence::traversable_dir(&sub)?;
                let file = qa_core::evidence::create_private_file(&p)?;
                std::os::unix::fs::fchown(&file, Some(u.uid), Some(u.gid)).map_err(w)?;
                file
            }
            _ => {
                std::fs::create_dir(&sub).map_err(w)?;
                qa_core::evidence::create_private_file(&p)?
            }
        };
        std::io::Write::write_all(&mut file, &bytes).map_err(w)?;
        paths.push(p.display().to_string());
    }
    let oid = page.element_object(&u.locator).await?.ok_or_else(|| {
        DriverError::new(
            WebCode::LocatorNotFound,
            format!(
                "uploadFiles: {} no longer matches one element",
                u.locator.describe()
            ),
        )
    })?;
    let set = page
        .send(&SetFileInputFiles {
            files: paths,
            object_id: oid.clone(),
        })
        .await
        .map_err(|e| DriverError::new(WebCode::UploadFailed, e.to_string()));
    let held = page
        .send(&CallFunctionOn {
            object_id: oid.clone(),
            function_declaration: "function () { return [...(this.files || [])].map((f) => ({ size: f.size, type: f.type })); }".into(),
            arguments: None,
            await_promise: None,
            return_by_value: Some(true),
        })
        .await;
    let _ = page.send(&ReleaseObject { object_id: oid }).await;
    set?;
    // What the input holds (none when it cannot be read: then the count
    // check below fails the step).
    let held: Vec<HeldFile> = held
        .ok()
        .and_then(|r| r.result.value)
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default();
    if held.len() != n {
        return Err(DriverError::new(
            WebCode::UploadFailed,
            format!(
                "uploadFiles: the input holds {} file(s), expected {n}",
                held.len()
            ),
        ));
    }
    let mut out = StepOutcome {
        detail: Some(format!("set {n} file(s), {total} bytes")),
        ..Default::default()
    };
    for (i, (f, h)) in u.files.iter().zip(&held).enumerate() {
        if !f.mime_type.is_empty() && !h.kind.eq_ignore_ascii_case(&f.mime_type) {
            out.notes.push(Note::info(format!(
                "uploadFiles: file {} is typed {:?} by Chromium (from its name), not the declared {:?}",
                i + 1,
                h.kind,
                f.mime_type
            )));
        }
    }
    page.settle(seq0, deadline).await?;
    Ok(out)
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
}
