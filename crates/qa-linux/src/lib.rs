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
//! - **BLOCKED, never a fake tree**: no display / Wayland only / no session
//!   bus / no accessibility bus / an application that never registers
//!   (`NO_AT_BRIDGE=1`, `GTK_A11Y=none`, toolkits without AT-SPI such as
//!   xterm) are reported as missing capabilities with remediation.
//!
//! Off Linux the crate still builds; its probe answers BLOCKED
//! (`unsupported-platform`).
//!
//! ```no_run
//! use qa_core::{Deadline, Evidence, RunOptions, Secrets, SessionContext, SurfaceDriver};
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
//! let ctx = SessionContext {
//!     evidence: Arc::new(Evidence::create(std::path::Path::new(".ui-qa"), "run-1", secrets.clone())?),
//!     processes: Arc::new(ProcessOwner::new()),
//!     secrets,
//!     flow_deadline: Deadline::after_ms(30_000),
//!     options: RunOptions { virtual_display: true, ..Default::default() },
//! };
//! let driver = qa_linux::LinuxDesktopDriver::new();
//! let mut session = driver.open(&flow, ctx).await?;
//! for step in &flow.steps {
//!     let deadline = Deadline::after_ms(step.step_timeout_ms());
//!     match step.class() {
//!         qa_core::flow::StepClass::Action => { session.perform(step, deadline).await?; }
//!         _ => { let _verdict = session.verify(step, deadline).await?; }
//!     }
//! }
//! let closed = session.close(Deadline::after_ms(10_000)).await;
//! assert!(closed.cleanup.left.is_empty());
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

pub mod locate;
pub mod roles;

#[cfg(target_os = "linux")]
mod actions;
#[cfg(target_os = "linux")]
mod bus;
#[cfg(target_os = "linux")]
mod capture;
#[cfg(target_os = "linux")]
mod display;
#[cfg(target_os = "linux")]
mod driver;
#[cfg(target_os = "linux")]
pub mod keys;
#[cfg(target_os = "linux")]
mod open;
#[cfg(target_os = "linux")]
mod pointer;
#[cfg(target_os = "linux")]
mod procs;
#[cfg(target_os = "linux")]
mod tree;

use async_trait::async_trait;
use qa_core::flow::{DesktopAction, LocatorKind, TargetKind};
use qa_core::{
    Backend, DriverError, DriverId, Flow, Host, MissingCapability, Probe, RunOptions,
    SessionContext, StepSupport, SurfaceDriver, SurfaceSession,
};

/// The driver's identity: `desktop/linux-at-spi`.
pub const DRIVER_ID: DriverId = DriverId {
    backend: Backend::Desktop,
    name: "linux-at-spi",
};

/// The Linux desktop driver (AT-SPI + X11).
#[derive(Debug, Clone)]
pub struct LinuxDesktopDriver {
    support: StepSupport,
}

impl Default for LinuxDesktopDriver {
    fn default() -> Self {
        Self::new()
    }
}

impl LinuxDesktopDriver {
    /// A driver supporting every desktop step and the `name`, `role`,
    /// `automationId` and `path` locators.
    pub fn new() -> Self {
        LinuxDesktopDriver {
            support: StepSupport {
                actions: DesktopAction::NAMES.to_vec(),
                locators: vec![
                    LocatorKind::Name,
                    LocatorKind::Role,
                    LocatorKind::AutomationId,
                    LocatorKind::Path,
                ],
                step_targets: false,
            },
        }
    }
}

#[async_trait]
impl SurfaceDriver for LinuxDesktopDriver {
    fn id(&self) -> DriverId {
        DRIVER_ID
    }

    fn kind(&self) -> TargetKind {
        TargetKind::Desktop
    }

    fn supports(&self) -> &StepSupport {
        &self.support
    }

    async fn probe(&self, flow: &Flow, host: &Host, options: &RunOptions) -> Probe {
        #[cfg(target_os = "linux")]
        let (present, missing, platform) = {
            let (p, m) = open::probe(flow, options).await;
            (p, m, open::platform(host))
        };
        #[cfg(not(target_os = "linux"))]
        let (present, missing, platform) = {
            let _ = (flow, options);
            (Vec::new(), vec![unsupported()], host.os)
        };
        Probe {
            driver: DRIVER_ID,
            present,
            missing,
            presentation: Some("accessibility".into()),
            platform,
            guide_topic: "linux-at-spi",
        }
    }

    async fn open(
        &self,
        flow: &Flow,
        ctx: SessionContext,
    ) -> Result<Box<dyn SurfaceSession>, DriverError> {
        #[cfg(target_os = "linux")]
        {
            open::open(flow, ctx).await
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (flow, ctx);
            Err(DriverError::blocked(
                "desktop.platform.unsupported",
                unsupported(),
            ))
        }
    }
}

/// The missing capability reported off Linux.
pub fn unsupported() -> MissingCapability {
    MissingCapability {
        id: "unsupported-platform".into(),
        reason: format!(
            "the linux-at-spi driver runs on Linux only (this is {})",
            std::env::consts::OS
        ),
        remediation: "run the flow on a Linux host, or use this platform's own desktop driver"
            .into(),
    }
}
