//! # qa-desktop — what every desktop driver does that is not the OS
//!
//! A desktop driver (AT-SPI on Linux in `qa-linux`; UI Automation and the
//! macOS Accessibility API in their crates) fetches an application's
//! accessible tree through its platform's API. Everything it then does with
//! that tree is the same on every OS and lives here, as plain functions
//! with unit tests on synthetic trees that run everywhere:
//!
//! - [`roles`]: one role vocabulary — the portable [`Role`]s and one
//!   [`RoleTable`] per platform ([`ATSPI`], [`UIA`], [`AX`]); roles are
//!   parsed into typed values and compared as such, never as text;
//! - [`locate`]: which fetched nodes a flow's locator names, and the
//!   closest ones when none does;
//! - [`node`]: the fetched tree ([`Node`], portable [`State`]s, snapshot JSON);
//! - [`resolve`], [`verdict`], [`inspect`]: one element for a step, the
//!   verdict of an assertion, the elements of an observation;
//! - [`session`]: [`DesktopSession`], the `SurfaceSession` every desktop
//!   driver returns — the step dispatch over a [`DesktopPlatform`], the one
//!   trait an OS implements (fetch the tree, act, type, capture, close);
//! - [`app_logs`]: a launched application's stdout and stderr;
//! - [`video`]: a window video's lifecycle (off, withheld, the platform's
//!   capture task, finishing it);
//! - [`codes`]: the `desktop.*` error codes.
//!
//! This crate depends on `qa-core` only; desktop drivers depend on it, and
//! it never depends on a driver.

#![warn(missing_docs)]

pub mod app_logs;
pub mod codes;
pub mod home;
pub mod inspect;
pub mod locate;
pub mod node;
pub mod platform;
pub mod resolve;
pub mod roles;
#[cfg(test)]
mod scripted;
pub mod session;
pub mod verdict;
pub mod video;

pub use codes::DesktopCode;
pub use node::{Fields, Node, State, States};
pub use platform::{Activated, DesktopPlatform, Exit, Stream, TopWindow, WindowShot};
pub use roles::{NativeRole, Role, RoleQuery, RoleTable, ATSPI, AX, UIA};
pub use session::DesktopSession;
