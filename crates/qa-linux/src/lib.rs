//! # qa-linux — the ui-qa Linux desktop driver
//!
//! Drives real native applications (GTK 3, GTK 4, Qt with accessibility on,
//! Electron with accessibility on) through the AT-SPI accessibility tree over
//! D-Bus ([`atspi`] / `zbus` 5), with X11 ([`x11rb`]) for window discovery,
//! exact-window PNG capture and XTest keyboard input. No shelling out to
//! xdotool, scrot or Python helpers.
//!
//! - **Virtual display** (`RunOptions::virtual_display`, CLI
//!   `--virtual-display`, or `target.application.virtualDisplay: true`): an
//!   owned `Xvfb` on a free display (`-displayfd`) plus a private
//!   `dbus-daemon` whose only activatable service is `org.a11y.Bus`; the
//!   accessibility bus and registry are activated by it and end with it.
//! - **Targets**: `application.launch` (owned; cleanup ends it and its
//!   descendants) or `application.pid` / `application.name` (attached; never
//!   signalled). The application is the one on the accessibility bus whose
//!   connection PID is the launched process or one of its descendants.
//! - **`activate`** runs the element's default AT-SPI action; an element with
//!   no action (an event box, a label with a click handler) is clicked at
//!   the centre of its extents with XTest, and the step detail says so.
//! - **Video** (`evidence.video` / `--video`, on by default): exactly the
//!   application's window — the same X11 capture as its screenshots, never
//!   the screen — at the flow's frame rate, as `artifacts/videos/window.webm`,
//!   finished before the application's processes end. A run with secret
//!   values records no video (pixels cannot be checked for them): it is
//!   listed as withheld.
//! - **BLOCKED, never a fake tree**: no display / Wayland only / no session
//!   bus / no accessibility bus / an application that never registers
//!   (`NO_AT_BRIDGE=1`, `GTK_A11Y=none`, toolkits without AT-SPI such as
//!   xterm) are reported as missing capabilities with remediation.
//!
//! Off Linux the crate still builds; its probe answers BLOCKED
//! (`unsupported-platform`).
//!
//! Layout: this file and `driver.rs` are the cross-platform face (the
//! driver's static facts, probe and open); everything that talks to D-Bus,
//! X11 or the process table lives in one Linux-only module, `imp`. What is
//! not AT-SPI or X11 (roles, locator matching) is `qa-desktop`'s, with unit
//! tests on every platform; [`DesktopCode`] lists every error code.
//!
//! ```no_run
//! use qa_core::{Deadline, Evidence, RunOptions, Secrets, SessionContext, SurfaceDriver};
//! use qa_core::flow::StepClass;
//! use qa_core::process::ProcessOwner;
//! use std::sync::Arc;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let flow = qa_core::Flow::parse(r#"{
//!   "target": { "application": { "launch": { "argv": ["gnome-calculator"] } } },
//!   "steps": [ { "action": "waitForWindow" },
//!              { "action": "activate", "locator": { "role": "button", "name": "2" } } ]
//! }"#, std::path::Path::new("."))?;
//! let secrets = Arc::new(Secrets::new());
//! let ctx = SessionContext::new(
//!     Arc::new(Evidence::create(std::path::Path::new(".ui-qa"), "run-1", secrets)?),
//!     Arc::new(ProcessOwner::new()),
//!     Deadline::after_ms(30_000),
//!     RunOptions { virtual_display: true, ..Default::default() },
//!     flow.evidence.as_ref(),
//! );
//! let driver = qa_linux::LinuxDesktopDriver::new();
//! let mut session = driver.open(&flow, ctx).await?;
//! for step in &flow.steps {
//!     let deadline = Deadline::after_ms(step.step_timeout_ms());
//!     match step.class() {
//!         StepClass::Action => { session.perform(step, deadline).await?; }
//!         // One fresh verdict; the runner asks again on its cadence.
//!         StepClass::Assertion => { let _verdict = session.verify(step, deadline).await?; }
//!         // `waitForTimeout`: the runner sleeps, the driver is not asked.
//!         StepClass::Runner => {}
//!     }
//! }
//! let closed = session.close(Deadline::after_ms(10_000)).await;
//! assert!(closed.cleanup.left.is_empty());
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

mod driver;
#[cfg(target_os = "linux")]
mod imp;

pub use driver::{unsupported, LinuxDesktopDriver, DRIVER_ID};

/// Where programs another driver owns show their windows (the terminal
/// driver's `native-terminal` presentation): X11, the host's display or an
/// owned Xvfb under `--virtual-display`, with exact window capture and
/// video. `None` off Linux.
pub fn window_host() -> Option<std::sync::Arc<dyn qa_core::window::WindowHost>> {
    #[cfg(target_os = "linux")]
    {
        Some(std::sync::Arc::new(imp::X11Host))
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}
pub use qa_desktop::DesktopCode;
