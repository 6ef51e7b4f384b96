//! Targets: each attached target (page, popup, frame, worker) is contained
//! before it may run — Fetch interception first, then the other domains,
//! the WebSocket guard, auto-attach to its children, and only then it is
//! resumed; detached targets leave the state; a crashed main page ends
//! what can be driven.

use super::session_of;
use crate::cdp::commands::SetScrollbarsHidden;
use crate::cdp::commands::{
    AddBinding, AddScriptToEvaluateOnNewDocument, AttachToTarget, CloseTarget, Evaluate,
    FetchEnable, GetTargetInfo, LogEnable, NetworkEnable, PageEnable, RunIfWaitingForDebugger,
    RuntimeEnable, SetAutoAttach, SetBlockedUrls, SetBypassServiceWorker,
};
use crate::cdp::events::{AttachedToTarget, DetachedFromTarget, TargetCreated};
use crate::cdp::CdpEvent;
use crate::contain::{Decision, WS_BINDING};
use crate::shared::Shared;
use qa_core::{Note, NoteKind};
use std::sync::Arc;

/// `Target.attachedToTarget`: a new page comes to the front (it opened in
/// front of its opener); then the target is contained and resumed.
pub(super) fn attached(sh: &Arc<Shared>, ev: &CdpEvent) {
    let a: AttachedToTarget = ev.params();
    if a.target_info.kind == "page" {
        let mut st = sh.st();
        if st.main_session.is_some() {
            // A new window or tab opens in front of its opener.
            st.front = Some(a.session_id.clone());
        }
    }
    tokio::spawn(contain_target(sh.clone(), a));
}

/// `Target.targetCreated` (only a run in a browser it did not start
/// discovers targets): a page of the run's own context that no client
/// attached yet is attached, and so contained; every other target is the
/// user's and left alone.
pub(super) fn created(sh: &Arc<Shared>, ev: &CdpEvent) {
    let c: TargetCreated = ev.params();
    let t = c.target_info;
    let ours = match (sh.context.get(), sh.existing.get()) {
        (Some(own), _) => t.browser_context_id == *own,
        // In the browser's own context: only a window the run's pages
        // opened.
        (None, Some(_)) => !t.opener_id.is_empty() && sh.st().sessions.contains_key(&t.opener_id),
        (None, None) => false,
    };
    if !ours || t.kind != "page" || t.attached {
        return;
    }
    if !sh.st().attaching.insert(t.target_id.clone()) {
        return;
    }
    let sh = sh.clone();
    tokio::spawn(async move {
        let attach = AttachToTarget {
            target_id: t.target_id,
            flatten: true,
        };
        let _ = sh.cdp.call_typed(None, &attach).await;
    });
}

/// `Target.detachedFromTarget`: the session is gone.
pub(super) fn detached(sh: &Shared, ev: &CdpEvent) {
    let d: DetachedFromTarget = ev.params();
    if d.session_id.is_empty() {
        return;
    }
    let s = d.session_id.as_str();
    crate::record::detached(sh, s);
    let mut st = sh.st();
    st.sessions.retain(|_, v| v != s);
    st.ready.remove(s);
    if st.front.as_deref() == Some(s) {
        st.front = None;
    }
    drop(st);
    sh.bump();
}

/// `Inspector.targetCrashed`: the main page crashed.
pub(super) fn crashed(sh: &Shared, ev: &CdpEvent) {
    let session = session_of(ev);
    let mut st = sh.st();
    if st.main_session.as_deref() == Some(session.as_str()) {
        st.crashed = true;
        st.notes.push(Note::info("the page crashed"));
    }
    drop(st);
    sh.bump();
}

/// Containment setup of one attached target: Fetch interception first, then
/// the other domains, auto-attach to its children, and only then resume it.
async fn contain_target(sh: Arc<Shared>, a: AttachedToTarget) {
    let sid = a.session_id;
    let tid = a.target_info.target_id;
    let kind = if a.target_info.kind.is_empty() {
        "other".to_string()
    } else {
        a.target_info.kind
    };
    {
        let mut st = sh.st();
        st.sessions.insert(tid.clone(), sid.clone());
        st.session_type.insert(sid.clone(), kind.clone());
    }
    let cdp = &sh.cdp;
    let s = Some(sid.as_str());
    let pageish = matches!(kind.as_str(), "page" | "iframe");
    let guard = sh.allow.websocket_guard_script();
    let attach = SetAutoAttach::paused_flat();
    let ws = sh.allow.websocket_block();
    let page_guard = pageish.then(|| AddScriptToEvaluateOnNewDocument {
        source: guard.clone(),
        run_immediately: true,
        world_name: None,
    });
    let fetch_all = FetchEnable::every_request();
    let guard_now = Evaluate::expression(guard);
    let main = kind == "page" && sh.st().main_session.is_none();
    // Every setup command is sent at once, in this order, and the target
    // is resumed only once all are answered: a target waiting for the
    // debugger runs nothing before that, and the browser takes one
    // session's commands in the order they were sent (Fetch interception
    // first). One round trip instead of one per command.
    let (fetch, _, _, _, _, _, blocked, _, _, _, _) = tokio::join!(
        cdp.call_typed(s, &fetch_all),
        cdp.call_typed(s, &NetworkEnable {}),
        cdp.call_typed(s, &RuntimeEnable {}),
        cdp.call_typed(s, &attach),
        async {
            if pageish {
                let _ = tokio::join!(
                    cdp.call_typed(s, &PageEnable {}),
                    cdp.call_typed(s, &LogEnable {})
                );
            }
            if kind == "page" && sh.attached() {
                // As --hide-scrollbars does for an owned browser: pictures
                // and masks see the same layout.
                let _ = cdp
                    .call_typed(s, &SetScrollbarsHidden { hidden: true })
                    .await;
            }
        },
        cdp.call_typed(s, &SetBypassServiceWorker { bypass: true }),
        cdp.call_typed(s, &ws),
        // Fetch never sees WebSocket handshakes and Network.setBlockedURLs
        // does not stop them on Chromium 156: guard the constructor in
        // every page, frame and worker before its first script runs.
        cdp.call_typed(s, &AddBinding { name: WS_BINDING }),
        async {
            if let Some(script) = &page_guard {
                let _ = cdp.call_typed(s, script).await;
            }
        },
        cdp.call_typed(s, &guard_now),
        async {
            if kind == "page" {
                crate::record::install(&sh, &sid, main).await;
            }
        },
    );
    // Chromium 156 has no Fetch domain in dedicated workers: they run,
    // contained by the network proxy every connection goes through
    // (crate::contain). Any other target we cannot intercept in is closed
    // (fail closed, defence in depth) and never resumed.
    if fetch.is_err() && !matches!(kind.as_str(), "browser" | "worker") {
        sh.note(Note::info(format!(
            "a {kind} target could not be contained and was closed"
        )));
        let _ = cdp.call_typed(None, &CloseTarget { target_id: tid }).await;
        return;
    }
    if blocked.is_err() {
        // Older protocol: block every WebSocket.
        let every = SetBlockedUrls {
            url_patterns: None,
            urls: Some(vec!["ws://*".into(), "wss://*".into()]),
        };
        let _ = cdp.call_typed(s, &every).await;
    }
    if a.waiting_for_debugger {
        let _ = cdp.call_typed(s, &RunIfWaitingForDebugger {}).await;
    }
    let attached_late = !a.waiting_for_debugger && sh.attached();
    {
        let mut st = sh.st();
        if !st.sessions.values().any(|v| *v == sid) {
            // It detached (closed) while it was being set up.
            drop(st);
            sh.bump();
            return;
        }
        st.ready.insert(sid.clone());
        if kind == "page" && st.main_session.is_none() {
            st.main_session = Some(sid.clone());
            st.front = Some(sid.clone());
        } else if kind == "page" {
            st.notes.push(Note::new(
                NoteKind::Popup,
                "a popup window opened (its requests are contained too)",
            ));
        }
    }
    sh.bump();
    let is_main = sh.st().main_session.as_deref() == Some(sid.as_str());
    if attached_late && kind == "page" && !is_main {
        // In a browser the run did not start, a popup is attached after it
        // was created (never paused): a document it was already opening
        // went past the interception (the proxy stops it on this
        // machine). One to a blocked origin is closed as if intercepted.
        let info = cdp
            .call_typed(
                None,
                &GetTargetInfo {
                    target_id: tid.clone(),
                },
            )
            .await
            .map(|i| i.target_info.url)
            .unwrap_or_default();
        if let Ok(u) = url::Url::parse(&info) {
            if matches!(u.scheme(), "http" | "https" | "ws" | "wss") {
                if let Decision::Block(origin) = sh.allow.decide(&info) {
                    sh.record_blocked(&origin);
                    super::containment::close_blocked_popup(&sh, &sid, &tid, &origin);
                }
            }
        }
    }
}
