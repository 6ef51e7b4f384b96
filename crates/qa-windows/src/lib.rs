//! # qa-windows — the Windows UI Automation driver for ui-qa
//!
//! This crate compiles on every platform. Today it is an honest placeholder:
//! its probe answers BLOCKED — "requires windows" off windows, and "driver not
//! implemented yet" on windows — so a desktop flow selected for it ends with a
//! handoff instead of a fake pass. See `docs/platforms.md`.
//!
//! ```
//! use qa_core::SurfaceDriver;
//! let driver = qa_windows::WindowsDesktopDriver::new();
//! assert_eq!(driver.id().to_string(), "desktop/windows-uia");
//! ```

#![warn(missing_docs)]

use async_trait::async_trait;
use qa_core::driver::{
    Backend, DriverError, DriverId, Host, MissingCapability, Probe, RunOptions, SessionContext,
    StepSupport, SurfaceDriver, SurfaceSession,
};
use qa_core::flow::{DesktopAction, Flow, LocatorKind, TargetKind};

/// The platform this driver runs on.
pub const PLATFORM: &str = "windows";

/// the Windows UI Automation driver.
pub struct WindowsDesktopDriver {
    support: StepSupport,
}

impl Default for WindowsDesktopDriver {
    fn default() -> Self {
        Self::new()
    }
}

impl WindowsDesktopDriver {
    /// A new driver.
    pub fn new() -> Self {
        WindowsDesktopDriver {
            support: StepSupport {
                actions: DesktopAction::NAMES.to_vec(),
                locators: vec![
                    LocatorKind::Name,
                    LocatorKind::Role,
                    LocatorKind::AutomationId,
                    LocatorKind::Path,
                ],
            },
        }
    }

    fn missing(host_os: &str) -> MissingCapability {
        if host_os != PLATFORM {
            MissingCapability {
                id: "platform".into(),
                reason: format!(
                    "desktop/windows-uia drives {PLATFORM} applications; this host is {host_os}"
                ),
                remediation: format!("run this flow on a {PLATFORM} host (or CI runner)"),
            }
        } else {
            MissingCapability {
                id: "driver".into(),
                reason: "the desktop/windows-uia driver is not implemented yet".into(),
                remediation: "run this flow on Linux with the desktop/linux-at-spi driver, or wait for the windows driver (see docs/platforms.md)".into(),
            }
        }
    }
}

#[async_trait]
impl SurfaceDriver for WindowsDesktopDriver {
    fn id(&self) -> DriverId {
        DriverId {
            backend: Backend::Desktop,
            name: "windows-uia",
        }
    }

    fn kind(&self) -> TargetKind {
        TargetKind::Desktop
    }

    fn supports(&self) -> &StepSupport {
        &self.support
    }

    async fn probe(&self, _flow: &Flow, host: &Host, _options: &RunOptions) -> Probe {
        Probe {
            driver: self.id(),
            present: Vec::new(),
            missing: vec![Self::missing(host.os)],
            presentation: Some("accessibility".into()),
            platform: PLATFORM,
            guide_topic: "windows-uia",
        }
    }

    async fn open(
        &self,
        _flow: &Flow,
        _ctx: SessionContext,
    ) -> Result<Box<dyn SurfaceSession>, DriverError> {
        Err(DriverError::blocked(
            "desktop.windows.unavailable",
            Self::missing(std::env::consts::OS),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn probe_is_blocked_with_remediation() {
        let flow = Flow::parse(
            r#"{"target":{"application":{"name":"App"}},"steps":[{"action":"activateWindow"}]}"#,
            std::path::Path::new("."),
        )
        .unwrap();
        let d = WindowsDesktopDriver::new();
        let p = d
            .probe(&flow, &Host::current(), &RunOptions::default())
            .await;
        assert!(!p.available());
        assert!(!p.missing[0].remediation.is_empty());
    }
}
