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
    let kind = p.kind.unwrap_or_else(|| "Other".into());
    let browser_own = is_favicon_fetch(&kind, &p.initiator.kind, &clean);
    if !browser_own {
        st.net_seq += 1;
    }
    let entry = NetEntry {
        method: if p.request.method.is_empty() {
            "GET".into()
        } else {
            p.request.method
        },
        url: clean,
        path_query: pq,
        kind,
        status: None,
        start_ms: now,
        duration_ms: None,
        failed: None,
        seq: st.net_seq,
        browser_own,
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
    let mut browser_own = false;
    if let Some(idx) = st.inflight.remove(&(session_of(ev), p.request_id)) {
        let e = &mut st.network[idx];
        e.duration_ms = Some(now.saturating_sub(e.start_ms));
        if failed {
            e.failed = Some(bounded(p.error_text.as_deref().unwrap_or("failed"), 80));
        }
        browser_own = e.browser_own;
    }
    if !browser_own {
        st.net_seq += 1;
    }
    drop(st);
    sh.bump();
}

/// Whether a request is the browser fetching the tab's icon on its own
/// (after the load event, initiator `other`, resource type `Other`, the
/// conventional `/favicon.ico`). Whatever a page itself asks for has another
/// initiator or type.
fn is_favicon_fetch(kind: &str, initiator: &str, url: &str) -> bool {
    kind == "Other" && initiator == "other" && url.ends_with("/favicon.ico")
}

#[cfg(test)]
mod tests {
    use super::is_favicon_fetch;

    #[test]
    fn only_the_browsers_icon_fetch_is_its_own() {
        assert!(is_favicon_fetch(
            "Other",
            "other",
            "http://127.0.0.1:8000/favicon.ico"
        ));
        assert!(!is_favicon_fetch(
            "Fetch",
            "script",
            "http://127.0.0.1:8000/favicon.ico"
        ));
        assert!(!is_favicon_fetch(
            "Image",
            "parser",
            "http://127.0.0.1:8000/favicon.ico"
        ));
        assert!(!is_favicon_fetch(
            "Other",
            "other",
            "http://127.0.0.1:8000/api"
        ));
    }
}
