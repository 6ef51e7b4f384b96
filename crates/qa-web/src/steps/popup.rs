//! `openPopup`: click, then adopt the popup window the click opened under
//! the step's name, once it is contained and has loaded an allowed page
//! (a popup whose page leaves the allowlist is blocked and closed).

use super::pointer::click_once;
use crate::cdp::commands::CloseTarget;
use crate::codes::WebCode;
use crate::contain::{origin_of, Decision};
use crate::page::{reply_error, DomOp, EvalError, Page, PageInfo};
use crate::state::Popup;
use qa_core::flow::OpenPopup;
use qa_core::{Deadline, DriverError, Note, NoteKind, Step, StepOutcome};
use std::collections::HashSet;
use std::time::Duration;

/// Page sessions so far.
fn page_sessions(page: &Page) -> HashSet<String> {
    page.sh
        .st()
        .session_type
        .iter()
        .filter(|(_, k)| k.as_str() == "page")
        .map(|(s, _)| s.clone())
        .collect()
}

/// `openPopup`.
pub(super) async fn open_popup(
    page: &Page,
    step: &Step,
    o: &OpenPopup,
    seq0: u64,
    deadline: Deadline,
) -> Result<StepOutcome, DriverError> {
    let name = step.name.clone().ok_or_else(|| {
        DriverError::new(
            WebCode::PopupNameRequired,
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
            WebCode::PopupNameTaken,
            format!("a popup named {name:?} is already open"),
        ));
    }
    let before = page_sessions(page);
    let mut rx = page.sh.changed.subscribe();
    click_once(page, &o.locator, "openPopup", deadline).await?;
    // The popup is auto-attached paused and contained (by the event pump)
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
                WebCode::PopupNone,
                format!(
                    "openPopup: clicking {} opened no popup before the step deadline",
                    o.locator.describe()
                ),
            ));
        }
    };
    let target_id = page.sh.st().target_of(&sid).unwrap_or_default();
    let popup = Page {
        session: sid.clone(),
        frame: None,
        ..page.clone()
    };
    let close = || async {
        let cmd = CloseTarget {
            target_id: target_id.clone(),
        };
        let _ = page.sh.cdp.call_typed(None, &cmd).await;
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
            WebCode::PopupBlocked,
            "openPopup: the popup tried to load a page outside the allowlist; it was blocked and closed",
        )
        .with_remediation("add the popup's origin to target.allowedOrigins if it is part of the app")
    };
    let info = loop {
        if blocked() {
            close().await;
            return Err(blocked_error());
        }
        match popup.dom::<PageInfo>(&DomOp::PageInfo, deadline).await {
            Ok(v) => {
                // A popup whose document is outside the allowlist is
                // blocked, however it got there: in a browser the run did
                // not start it is attached after its navigation began, and
                // a navigation the proxy refused commits an error page
                // under the refused URL.
                if let (true, Decision::Block(origin)) =
                    (v.url.starts_with("http"), page.sh.allow.decide(&v.url))
                {
                    page.sh.record_blocked(&origin);
                    close().await;
                    return Err(blocked_error());
                }
                if v.ready == "complete" && v.url.starts_with("http") {
                    break v;
                }
            }
            // Containment closes a popup whose document it blocked.
            Err(EvalError::Fatal(e)) if e.target_gone() && blocked() => {
                return Err(blocked_error());
            }
            Err(EvalError::Fatal(e)) if e.target_gone() => {
                return Err(DriverError::new(
                    WebCode::PopupClosed,
                    "openPopup: the popup closed before it loaded a page",
                ));
            }
            Err(EvalError::Reply(m)) => {
                close().await;
                return Err(reply_error(m));
            }
            Err(EvalError::Fatal(_) | EvalError::Transient(_)) => {}
        }
        if deadline.expired() {
            close().await;
            return Err(DriverError::new(
                WebCode::PopupNotLoaded,
                "openPopup: the popup did not load a page before the step deadline; it was closed",
            ));
        }
        popup.changed_or(Duration::from_millis(100), deadline).await;
    };
    // Opening a window backgrounds the opener (headless too: its animation
    // frames stop); the next step brings its own page to the front.
    let origin = url::Url::parse(&info.url)
        .map(|u| origin_of(&u))
        .unwrap_or_default();
    popup.settle(seq0, deadline).await?;
    let title: String = info.title.chars().take(80).collect();
    let line = format!("popup {name:?} opened: origin {origin}, title {title:?}");
    page.sh.st().popups.insert(name, Popup { session: sid });
    Ok(StepOutcome {
        detail: Some(line.clone()),
        notes: vec![Note::new(NoteKind::Popup, line)],
    })
}
