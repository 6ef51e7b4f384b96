//! The macOS implementation (compiled on macOS only): the Accessibility
//! API (AXUIElement) for the tree, actions and windows, CGEvent for real
//! input, ScreenCaptureKit for exactly the application's window, and
//! qa-core's process layer (process groups plus tracked children) for
//! owning what was launched.
//!
//! It is the [`qa_desktop::DesktopPlatform`] of the Accessibility API: the
//! step dispatch, verdicts, resolution, inspection and snapshots are
//! `qa_desktop::DesktopSession`'s; this module fetches, acts, types,
//! captures and cleans up.
//!
//! Imports flow one way; each module uses only those listed after it:
//!
//! - `open` (probe, open) → `session`, `video`, `app`, `objc`, `ffi`
//! - `session` (the `DesktopPlatform`, close) → `actions`, `shot`, `app`, `tree`, `ffi`
//! - `video` (the window's video) → `shot`, `app`
//! - `shot` (the window's PNG) → `app`, `objc`, `ffi`
//! - `app` (the application and its windows) → `objc`, `ffi`
//! - `actions` (actions and attribute writes) → `tree`, `ffi`
//! - `tree` (batched reads and the walk) → `ffi`
//! - leaves: `objc` (AppKit, NSBundle and ScreenCaptureKit) and `ffi`
//!   (AX, CoreFoundation, CGEvent): all of the crate's `unsafe`
//!
//! Every module may also use the crate's platform-neutral modules.

mod actions;
mod app;
mod ffi;
mod objc;
mod open;
mod session;
mod shot;
mod tree;
mod video;

pub(crate) use open::{open, probe};
