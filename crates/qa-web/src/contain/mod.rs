//! Origin containment: the exact-origin allowlist, URL origins, and the
//! count of what was blocked (`allowlist`, pure decisions), the loopback forward
//! proxy every Chromium connection goes through (`proxy`), and who may
//! connect to the run's listeners (`peer`) or to an owned app's DevTools
//! port (`port_guard`). The in-browser
//! layer (Fetch interception, the WebSocket guard) applies the same
//! decisions from the event pump.

mod allowlist;
mod peer;
// Watched only where an app is launched (Unix).
#[cfg_attr(not(unix), allow(dead_code))]
mod port_guard;
mod proxy;

pub(crate) use allowlist::{
    origin_of, split_url, Allowlist, BlockedRequests, BlockedSink, Decision, WS_BINDING,
};
pub(crate) use peer::{far_end_uid, same_user};
pub(crate) use port_guard::{PortGuard, Tripped};
pub(crate) use proxy::Proxy;
