//! What the browser session runs on the host: Chromium (`launch`: finding
//! it, its flags, starting it; `endpoint`: a DevTools endpoint's
//! WebSocket), an app that embeds Chromium (`app`), and the
//! target's own server (`user`: who it runs as; `server`: `target.serve`, a static directory, or
//! `target.server`, a command the run owns).

pub(crate) mod app;
pub(crate) mod endpoint;
pub(crate) mod launch;
pub(crate) mod server;
pub(crate) mod user;
