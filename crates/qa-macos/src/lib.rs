//! # qa-macos — the macOS accessibility (AXUIElement) driver for ui-qa
//!
//! This crate compiles on every platform. Today it is an honest placeholder:
//! its probe answers BLOCKED — "requires macos" off macos, and "driver not
//! implemented yet" on macos — so a desktop flow selected for it ends with a
//! handoff instead of a fake pass. See `docs/platforms.md`.
//!
//! ```
//! use qa_core::SurfaceDriver;
//! let driver = qa_macos::MacosDesktopDriver::new();
//! assert_eq!(driver.id().to_string(), "desktop/macos-accessibility");
//! ```

#![warn(missing_docs)]

use async_trait::async_trait;
use qa_core::driver::{
    Backend, DriverError, DriverId, Host, MissingCapability, Probe, RunOptions, SessionContext,
    StepSupport, SurfaceDriver, SurfaceSession,
};
use qa_core::flow::{DesktopAction, Flow, LocatorKind, TargetKind};

/// The platform this driver runs on.
pub const PLATFORM: &str = "macos";

/// the macOS accessibility (AXUIElement) driver.
pub struct MacosDesktopDriver {
    support: StepSupport,
}

impl Default for MacosDesktopDriver {
    fn default() -> Self {
        Self::new()
    }
}

impl MacosDesktopDriver {
    /// A new driver.
    pub fn new() -> Self {
        MacosDesktopDriver {
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
                reason: format!("desktop/macos-accessibility drives {PLATFORM} applications; this host is {host_os}"),
                remediation: format!("run this flow on a {PLATFORM} host (or CI runner)"),
            }
        } else {
            MissingCapability {
                id: "driver".into(),
                reason: "the desktop/macos-accessibility driver is not implemented yet".into(),
                remediation: "run this flow on Linux with the desktop/linux-at-spi driver, or wait for the macos driver (see docs/platforms.md)".into(),
            }
        }
    }
}

#[async_trait]
impl SurfaceDriver for MacosDesktopDriver {
    fn id(&self) -> DriverId {
        DriverId {
            backend: Backend::Desktop,
            name: "macos-accessibility",
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
            guide_topic: "macos-accessibility",
        }
    }

    async fn open(
        &self,
        _flow: &Flow,
        _ctx: SessionContext,
    ) -> Result<Box<dyn SurfaceSession>, DriverError> {
        Err(DriverError::blocked(
            "desktop.macos.unavailable",
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
        let d = MacosDesktopDriver::new();
        let p = d
            .probe(&flow, &Host::current(), &RunOptions::default())
            .await;
        assert!(!p.available());
        assert!(!p.missing[0].remediation.is_empty());
    }
}
