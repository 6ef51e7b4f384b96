//! What the browser session runs on the host: Chromium (`launch`: finding
//! it, its flags, starting it and reading its DevTools endpoint) and the
//! target's own server (`user`: who it runs as; `server`: `target.serve`, a static directory, or
//! `target.server`, a command the run owns).

pub(crate) mod endpoint;
pub(crate) mod launch;
pub(crate) mod server;
pub(crate) mod user;
