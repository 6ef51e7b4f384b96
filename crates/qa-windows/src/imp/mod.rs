//! The Windows implementation (compiled on Windows only): UI Automation on
//! one COM thread for the tree and its patterns, Win32 for windows, real
//! input, pixels and the application's processes; qa-core's Job Object for
//! owning what was launched.
//!
//! It is the [`qa_desktop::DesktopPlatform`] of UI Automation: the step
//! dispatch, verdicts, resolution, inspection and snapshots are
//! `qa_desktop::DesktopSession`'s; this module fetches, acts, types,
//! captures and cleans up.
//!
//! Imports flow one way; each module uses only those listed after it:
//!
//! - `open` (probe, open) → `session`, `video`, `app`, `com`, `win32`
//! - `session` (the `DesktopPlatform`, close) → `actions`, `shot`, `video`, `app`, `tree`, `com`,
//!   `win32`
//! - `video` (the window's video) → `shot`, `app`, `win32`
//! - `shot` (the window's PNG) → `app`, `win32`
//! - `app` (the application's processes and windows) → `win32`
//! - `actions` (patterns) → `tree`, `com`
//! - `tree` (cache requests and the walk) → `com`
//! - leaves: `com` (the COM thread, element keys and the registry), `win32` (every Win32
//!   call, all of the crate's `unsafe`)
//!
//! Every module may also use the crate's platform-neutral modules.

mod actions;
mod app;
mod com;
mod open;
mod session;
mod shot;
mod tree;
mod video;
mod win32;

pub(crate) use open::{open, probe};
