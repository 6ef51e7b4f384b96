//! The driver's cross-platform face: its static facts, the probe and
//! `open`, delegating to the Windows implementation on Windows and
//! answering BLOCKED (`platform`) everywhere else.

use async_trait::async_trait;
use qa_core::{
    Backend, DriverError, DriverId, DriverInfo, Flow, Host, MissingCapability, Platform, Probe,
    RunOptions, SessionContext, SurfaceDriver, SurfaceSession,
};

/// The driver id: `desktop/windows-uia`.
pub const DRIVER_ID: DriverId = DriverId {
    backend: Backend::Desktop,
    name: "windows-uia",
};

/// The platform this driver runs on.
pub const PLATFORM: Platform = Platform::Windows;

/// The Windows desktop driver (UI Automation, `SendInput`, `PrintWindow`).
#[derive(Debug, Clone)]
pub struct WindowsDesktopDriver {
    info: DriverInfo,
}

impl Default for WindowsDesktopDriver {
    fn default() -> Self {
        Self::new()
    }
}

impl WindowsDesktopDriver {
    /// A driver supporting every desktop step and the `name`, `role`,
    /// `automationId` and `path` locators.
    pub fn new() -> Self {
        WindowsDesktopDriver {
            info: DriverInfo::desktop_accessibility(DRIVER_ID, PLATFORM),
        }
    }
}

#[async_trait]
impl SurfaceDriver for WindowsDesktopDriver {
    fn info(&self) -> &DriverInfo {
        &self.info
    }

    /// Portable role names and UI Automation's control types (`Button`,
    /// `Edit`, as Inspect and FlaUI show them).
    fn check_role(&self, role: &str) -> Result<(), String> {
        qa_desktop::UIA.query(role).map(|_| ())
    }

    async fn probe(&self, flow: &Flow, _host: &Host, options: &RunOptions) -> Probe {
        #[cfg(windows)]
        let (present, missing) = crate::imp::probe(flow, options).await;
        #[cfg(not(windows))]
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
        #[cfg(windows)]
        {
            crate::imp::open(flow, ctx).await
        }
        #[cfg(not(windows))]
        {
            let _ = (flow, ctx);
            Err(DriverError::blocked(
                qa_desktop::DesktopCode::PlatformUnsupported,
                unsupported(),
            ))
        }
    }
}

/// The missing capability reported off Windows.
pub fn unsupported() -> MissingCapability {
    MissingCapability {
        id: "platform".into(),
        reason: format!(
            "the windows-uia driver runs on Windows only (this is {})",
            std::env::consts::OS
        ),
        remediation: "run the flow on a Windows host (a logged-on desktop session, such as a windows-2022 CI runner), or use this platform's own desktop driver".into(),
    }
}
