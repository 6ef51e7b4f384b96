//! Expectations armed around an interaction: `expectDialog` (the next
//! dialog is answered as the step says, then checked) and `expectResponse`
//! (a matching request finished by the time the page settled).

use crate::codes::WebCode;
use crate::page::Page;
use qa_core::flow::{DialogExpectation, ExpectResponse};
use qa_core::{Deadline, DriverError};
use std::future::Future;

/// What was seen before the interaction.
pub(super) struct Armed {
    dialogs_before: usize,
}

/// Arms the dialog expectation (none: the next dialog is dismissed).
pub(super) fn arm(page: &Page, dialog: Option<&DialogExpectation>) -> Armed {
    let mut st = page.sh.st();
    st.armed_dialog = dialog.cloned();
    Armed {
        dialogs_before: st.dialogs.len(),
    }
}

/// Arms expectations, dispatches, settles, then checks the expectations.
pub(super) async fn interact<F, Fut>(
    page: &Page,
    resp: Option<&ExpectResponse>,
    dialog: Option<&DialogExpectation>,
    seq0: u64,
    deadline: Deadline,
    dispatch: F,
) -> Result<(), DriverError>
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = Result<(), DriverError>>,
{
    let armed = arm(page, dialog);
    if let Err(e) = dispatch().await {
        page.sh.st().armed_dialog = None;
        return Err(e);
    }
    page.settle(seq0, deadline).await?;
    let r = check_expectations(page, armed, resp, dialog, deadline).await;
    page.sh.st().armed_dialog = None;
    r
}

/// Waits (until `deadline`) for the armed dialog and response.
pub(super) async fn check_expectations(
    page: &Page,
    armed: Armed,
    resp: Option<&ExpectResponse>,
    dialog: Option<&DialogExpectation>,
    deadline: Deadline,
) -> Result<(), DriverError> {
    let mut rx = page.sh.changed.subscribe();
    if let Some(d) = dialog {
        loop {
            let seen = page.sh.st().dialogs.get(armed.dialogs_before).cloned();
            if let Some(seen) = seen {
                if let Some(k) = &d.kind {
                    if k.as_str() != seen.kind {
                        return Err(DriverError::new(
                            WebCode::ExpectDialogMismatch,
                            format!("expected a {k} dialog, a {} dialog opened", seen.kind),
                        ));
                    }
                }
                if let Some(m) = &d.message {
                    if !m.matches(&seen.message) {
                        return Err(DriverError::new(
                            WebCode::ExpectDialogMismatch,
                            format!("the dialog message did not match {}", m.describe()),
                        ));
                    }
                }
                break;
            }
            if deadline.run(rx.changed()).await.is_none() {
                return Err(DriverError::new(
                    WebCode::ExpectDialogMissing,
                    "the expected dialog did not open before the step deadline",
                ));
            }
        }
    }
    if let Some(r) = resp {
        while find_request(page, &r.path, r.method.as_deref(), r.status) != Some(true) {
            if deadline.run(rx.changed()).await.is_none() {
                return Err(DriverError::new(
                    WebCode::ExpectResponseMissing,
                    format!(
                        "no response for {:?} matching the expectation before the step deadline",
                        r.path
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A request in the network log to `path` (path, path and query, or
/// origin and path) with `method` and `status` when given. `Some(true)`: a
/// finished one matches; `Some(false)`: one is still pending; `None`: none.
pub(super) fn find_request(
    page: &Page,
    path: &str,
    method: Option<&str>,
    status: Option<u16>,
) -> Option<bool> {
    let st = page.sh.st();
    let mut pending = false;
    for e in &st.network {
        let p_ok =
            e.path_query == path || e.path_query.split('?').next() == Some(path) || e.url == path;
        let m_ok = method.is_none_or(|m| m.eq_ignore_ascii_case(&e.method));
        if !(p_ok && m_ok) {
            continue;
        }
        match (status, e.status) {
            (None, Some(_)) => return Some(true),
            (Some(w), Some(s)) if w == s => return Some(true),
            (_, None) if e.failed.is_none() => pending = true,
            _ => {}
        }
    }
    pending.then_some(false)
}
