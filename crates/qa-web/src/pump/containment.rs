//! The in-browser layer of containment: every request of every attached
//! target is paused (Fetch interception) and continued or failed by the
//! allowlist; a popup whose own document is blocked is closed; WebSockets
//! refused by the in-page guard are counted.

use super::session_of;
use crate::cdp::commands::{
    CloseTarget, ContinueRequest, FailRequest, FulfillRequest, HeaderEntry,
};
use crate::cdp::events::{BindingCalled, RequestPaused};
use crate::cdp::CdpEvent;
use crate::contain::{Decision, WS_BINDING};
use crate::shared::Shared;
use qa_core::{Note, NoteKind};
use std::sync::Arc;

/// `Fetch.requestPaused`: continue an allowed request, fail a blocked one.
pub(super) fn request_paused(sh: &Arc<Shared>, ev: &CdpEvent) {
    let p: RequestPaused = ev.params();
    let session = ev.session.clone();
    let cdp = sh.cdp.clone();
    let seeding = sh
        .seed_url
        .lock()
        .expect("seed lock")
        .as_deref()
        .is_some_and(|u| u == p.request.url);
    if seeding {
        let cmd = seed_document(p.request_id);
        tokio::spawn(async move {
            let _ = cdp.call_typed(session.as_deref(), &cmd).await;
        });
        return;
    }
    match sh.allow.decide(&p.request.url) {
        Decision::Allow => {
            let cmd = ContinueRequest {
                headers: auth_headers(sh, &p),
                request_id: p.request_id,
            };
            tokio::spawn(async move {
                let _ = cdp.call_typed(session.as_deref(), &cmd).await;
            });
        }
        Decision::Block(origin) => {
            if p.resource_type == "Document" {
                let s = session_of(ev);
                *sh.st().blocked_documents.entry(s.clone()).or_insert(0) += 1;
                close_blocked_popup(sh, &s, &p.frame_id, &origin);
            }
            sh.record_blocked(&origin);
            let cmd = FailRequest {
                request_id: p.request_id,
                error_reason: "BlockedByClient",
            };
            tokio::spawn(async move {
                let _ = cdp.call_typed(session.as_deref(), &cmd).await;
            });
        }
    }
}

/// The request's headers plus the auth profile's header, when the request
/// goes to one of the profile's exact origins (`None`: continue unchanged).
/// Every redirect hop is paused and decided again, so the header never
/// follows a redirect to another origin.
fn auth_headers(sh: &Shared, p: &RequestPaused) -> Option<Vec<HeaderEntry>> {
    let profile = sh.auth.get()?;
    let (name, value) = profile.header.as_ref()?;
    let origin = url::Url::parse(&p.request.url)
        .ok()?
        .origin()
        .ascii_serialization();
    if !profile.allows(&origin) {
        return None;
    }
    let mut out: Vec<HeaderEntry> = p
        .request
        .headers
        .iter()
        .filter(|(k, _)| !k.eq_ignore_ascii_case(name))
        .map(|(k, v)| HeaderEntry {
            name: k.clone(),
            value: v.clone(),
        })
        .collect();
    out.push(HeaderEntry {
        name: name.clone(),
        value: value.clone(),
    });
    Some(out)
}

/// The blank document storage is seeded in.
fn seed_document(request_id: String) -> FulfillRequest {
    use base64::Engine as _;
    FulfillRequest {
        request_id,
        response_code: 200,
        response_headers: vec![
            HeaderEntry {
                name: "Content-Type".into(),
                value: "text/html; charset=utf-8".into(),
            },
            HeaderEntry {
                name: "Cache-Control".into(),
                value: "no-store".into(),
            },
        ],
        body: base64::engine::general_purpose::STANDARD
            .encode("<!doctype html><title>ui-qa</title>"),
    }
}

/// `Runtime.bindingCalled` of the WebSocket guard: a refused WebSocket.
pub(super) fn binding_called(sh: &Shared, ev: &CdpEvent) {
    let p: BindingCalled = ev.params();
    if p.name != WS_BINDING {
        return;
    }
    if let Decision::Block(o) = sh.allow.decide(&p.payload) {
        sh.record_blocked(&o);
    }
}

/// A popup window (any page but the main one) whose own document was
/// blocked by containment is closed, so that it cannot hold the front or
/// keep a blank window around; the opener stays fully usable. Reported
/// once per popup.
pub(super) fn close_blocked_popup(sh: &Arc<Shared>, session: &str, frame_id: &str, origin: &str) {
    let target = {
        let mut st = sh.st();
        let is_popup_page = st.is_popup_page(session);
        // Only the popup's own document (its main frame id is its target
        // id); a blocked iframe inside it leaves the popup open.
        match st.target_of(session) {
            Some(t) if is_popup_page && t == frame_id => {
                if !st.closed_popups.insert(session.to_string()) {
                    return;
                }
                st.notes.push(Note::new(
                    NoteKind::Popup,
                    format!("a popup window to {origin} was blocked by containment and closed"),
                ));
                t
            }
            _ => return,
        }
    };
    sh.bump();
    let cdp = sh.cdp.clone();
    tokio::spawn(async move {
        let _ = cdp
            .call_typed(None, &CloseTarget { target_id: target })
            .await;
    });
}
