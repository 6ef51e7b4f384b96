//! The network log: one entry per request (redirect hops close the
//! previous entry), its status, duration and failure. Never headers,
//! bodies or the query (kept apart for matching only).

use super::session_of;
use crate::cdp::events::{LoadingDone, RequestWillBeSent, ResponseReceived};
use crate::cdp::CdpEvent;
use crate::contain::split_url;
use crate::shared::Shared;
use crate::state::{bounded, push_bounded, NetEntry};

/// `Network.requestWillBeSent`: a new entry (and the end of the previous
/// hop of a redirect).
pub(super) fn will_be_sent(sh: &Shared, ev: &CdpEvent) {
    let p: RequestWillBeSent = ev.params();
    let session = session_of(ev);
    let now = sh.now_ms();
    let mut guard = sh.st();
    let st = &mut *guard;
    let key = (session, p.request_id);
    if let Some(idx) = st.inflight.remove(&key) {
        // A redirect hop: close the previous entry.
        let e = &mut st.network[idx];
        e.status = p.redirect_response.and_then(|r| r.status).map(|s| s as u16);
        e.duration_ms = Some(now.saturating_sub(e.start_ms));
    }
    let (clean, pq) = split_url(&p.request.url);
    st.net_seq += 1;
    let entry = NetEntry {
        method: if p.request.method.is_empty() {
            "GET".into()
        } else {
            p.request.method
        },
        url: clean,
        path_query: pq,
        kind: p.kind.unwrap_or_else(|| "Other".into()),
        status: None,
        start_ms: now,
        duration_ms: None,
        failed: None,
        seq: st.net_seq,
    };
    if push_bounded(&mut st.network, entry, &mut st.dropped) {
        let idx = st.network.len() - 1;
        st.inflight.insert(key, idx);
    }
    drop(guard);
    sh.bump();
}

/// `Network.responseReceived`: the entry's status.
pub(super) fn response_received(sh: &Shared, ev: &CdpEvent) {
    let p: ResponseReceived = ev.params();
    let mut st = sh.st();
    if let Some(&idx) = st.inflight.get(&(session_of(ev), p.request_id)) {
        st.network[idx].status = p.response.status.map(|s| s as u16);
    }
}

/// `Network.loadingFinished` / `Network.loadingFailed`: the entry's end.
pub(super) fn finished(sh: &Shared, ev: &CdpEvent, failed: bool) {
    let p: LoadingDone = ev.params();
    let now = sh.now_ms();
    let mut st = sh.st();
    if let Some(idx) = st.inflight.remove(&(session_of(ev), p.request_id)) {
        let e = &mut st.network[idx];
        e.duration_ms = Some(now.saturating_sub(e.start_ms));
        if failed {
            e.failed = Some(bounded(p.error_text.as_deref().unwrap_or("failed"), 80));
        }
    }
    st.net_seq += 1;
    drop(st);
    sh.bump();
}
