//! The driver's cross-platform face: its static facts ([`DriverInfo`]),
//! the probe and `open`, delegating to the Linux implementation on Linux
//! and answering BLOCKED (`unsupported-platform`) everywhere else.

use async_trait::async_trait;
use qa_core::{
    Backend, DriverError, DriverId, DriverInfo, Flow, Host, MissingCapability, Platform, Probe,
    RunOptions, SessionContext, SurfaceDriver, SurfaceSession,
};

/// The driver's identity: `desktop/linux-at-spi`.
pub const DRIVER_ID: DriverId = DriverId {
    backend: Backend::Desktop,
    name: "linux-at-spi",
};

/// The Linux desktop driver (AT-SPI + X11).
#[derive(Debug, Clone)]
pub struct LinuxDesktopDriver {
    info: DriverInfo,
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
            info: DriverInfo::desktop_accessibility(DRIVER_ID, Platform::Linux),
        }
    }
}

#[async_trait]
impl SurfaceDriver for LinuxDesktopDriver {
    fn info(&self) -> &DriverInfo {
        &self.info
    }

    /// Portable role names and AT-SPI's own (`push button`, as Accerciser
    /// and dogtail show them).
    fn check_role(&self, role: &str) -> Result<(), String> {
        qa_desktop::ATSPI.query(role).map(|_| ())
    }

    async fn probe(&self, flow: &Flow, _host: &Host, options: &RunOptions) -> Probe {
        #[cfg(target_os = "linux")]
        let (present, missing) = crate::imp::probe(flow, options).await;
        #[cfg(not(target_os = "linux"))]
        let (present, missing) = {
            let _ = (flow, options);
            (Vec::new(), vec![unsupported()])
        };
        Probe {
            driver: DRIVER_ID,
            present,
            missing,
            presentation: Some("accessibility".into()),
        }
    }

    async fn open(
        &self,
        flow: &Flow,
        ctx: SessionContext,
    ) -> Result<Box<dyn SurfaceSession>, DriverError> {
        #[cfg(target_os = "linux")]
        {
            crate::imp::open(flow, ctx).await
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (flow, ctx);
            Err(DriverError::blocked(
                qa_desktop::DesktopCode::PlatformUnsupported,
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
