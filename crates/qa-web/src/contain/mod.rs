//! Origin containment: the exact-origin allowlist, URL origins, and the
//! count of what was blocked (`allowlist`, pure decisions), and the loopback forward
//! proxy every Chromium connection goes through (`proxy`). The in-browser
//! layer (Fetch interception, the WebSocket guard) applies the same
//! decisions from the event pump.

mod allowlist;
mod proxy;

pub(crate) use allowlist::{
    origin_of, split_url, Allowlist, BlockedRequests, BlockedSink, Decision, WS_BINDING,
};
pub(crate) use proxy::Proxy;
