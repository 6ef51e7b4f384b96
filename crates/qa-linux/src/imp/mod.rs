//! The Linux implementation (compiled on Linux only): AT-SPI over D-Bus for
//! the accessible tree, X11 for windows, capture and input, qa-core's
//! process identity for telling the application's processes apart.
//!
//! Imports flow one way; each module uses only those listed after it:
//!
//! - `open` (probe, open) → `register`, `session`, `video`, `app`, `artifacts`, `bus`, `capture`,
//!   `display`
//! - `session` (step dispatch, observe, close) → `checks`, `artifacts`, `pointer`, `keys`,
//!   `video`, `actions`, `app`, `capture`, `display`
//! - `video` (the window's video: capture task and recorder) → `capture`, `procs`
//! - `checks` (assertion verdicts) → `actions`, `app`, `tree`
//! - `artifacts` (screenshots, snapshots, app logs) → `actions`, `app`, `tree`, `capture`, `display`
//! - `pointer` (the click fallback of `activate`) → `app`, `bus`, `tree`, `objref`, `capture`, `display`
//! - `register` (waiting for the app on the bus) → `bus`, `procs`, `capture`, `display`
//! - `app` (the driven application, its windows) → `bus`, `tree`, `procs`, `objref`, `capture`, `display`
//! - `actions` (resolve, activate, set value, focus) → `tree`, `bus`, `objref`
//! - `keys` (XTest keyboard) → `capture`
//! - `tree` (fetching the accessible tree) → `bus`, `objref`
//! - `bus` (the accessibility bus) → `objref`, `display`
//! - leaves: `objref` (the shared `ObjRef`), `display` (display, session bus, missing
//!   capabilities), `capture` (X11), `procs` (the target's processes)
//!
//! Every module may also use the crate's platform-neutral modules
//! (`crate::codes`, `crate::locate`, `crate::roles`), which never use `imp`.

mod actions;
mod app;
mod artifacts;
mod bus;
mod capture;
mod checks;
mod display;
mod inspect;
mod keys;
mod objref;
mod open;
mod pointer;
mod procs;
mod register;
mod session;
mod tree;
mod video;

pub(crate) use open::{open, probe};
