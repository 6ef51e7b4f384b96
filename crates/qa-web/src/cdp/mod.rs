//! The DevTools protocol layer: the WebSocket transport ([`Cdp`], raw JSON
//! calls and one stream of events), typed commands (`commands`: one struct
//! per method, sent with `Cdp::call_typed`) and the events the driver
//! handles (`events`: names as one enum, parameters as typed structs).
//! Nothing here knows about pages, steps or containment.

pub(crate) mod commands;
pub(crate) mod events;
mod transport;

pub use events::Event;
pub use transport::{Cdp, CdpError, CdpEvent};
