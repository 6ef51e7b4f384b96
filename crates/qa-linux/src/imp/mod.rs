//! The Linux implementation (compiled on Linux only): AT-SPI over D-Bus for
//! the accessible tree, X11 for windows, capture and input, qa-core's
//! process identity for telling the application's processes apart.
//!
//! It is the [`qa_desktop::DesktopPlatform`] of AT-SPI and X11: the step
//! dispatch, verdicts, resolution, inspection and snapshots are
//! `qa_desktop::DesktopSession`'s; this module fetches, acts, types,
//! captures and cleans up.
//!
//! Imports flow one way; each module uses only those listed after it:
//!
//! - `open` (probe, open) → `register`, `session`, `video`, `app`, `tree`, `bus`,
//!   `capture`, `display`
//! - `session` (the `DesktopPlatform`, close) → `artifacts`, `pointer`, `keys`, `video`,
//!   `actions`, `app`, `tree`, `capture`, `display`, `objref`
//! - `screen` (another driver's windows: qa-core's `WindowHost`) → `video`, `procs`,
//!   `capture`, `display`
//! - `video` (the window's video: capture task and recorder) → `capture`, `procs`
//! - `artifacts` (the window's pixels) → `app`, `capture`, `display`
//! - `pointer` (the click fallback of `activate`) → `app`, `bus`, `tree`, `objref`, `capture`, `display`
//! - `register` (waiting for the app on the bus) → `bus`, `procs`, `capture`, `display`
//! - `app` (the driven application, its windows) → `bus`, `tree`, `procs`, `objref`, `capture`, `display`
//! - `actions` (activate, set value, select, focus) → `tree`, `bus`, `objref`
//! - `keys` (XTest keyboard) → `capture`
//! - `tree` (fetching the accessible tree, AT-SPI states and roles) → `bus`, `objref`
//! - `bus` (the accessibility bus) → `objref`, `display`
//! - `capture` (X11) → `display`
//! - leaves: `objref` (the shared `ObjRef`), `display` (display, its X authority, session
//!   bus, missing capabilities), `procs` (the target's processes)
//!
//! Every module may also use `qa-desktop`, which never uses `imp`.

mod actions;
mod app;
mod artifacts;
mod bus;
mod capture;
mod display;
mod keys;
mod objref;
mod open;
mod pointer;
mod procs;
mod register;
mod screen;
mod session;
mod tree;
mod video;

pub(crate) use open::{open, probe};
pub(crate) use screen::X11Host;
