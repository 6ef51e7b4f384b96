//! The driver's cross-platform face: its static facts, the probe and
//! `open`, delegating to the macOS implementation on macOS and answering
//! BLOCKED (`platform`) everywhere else.

use async_trait::async_trait;
use qa_core::{
    Backend, DriverError, DriverId, DriverInfo, Flow, Host, MissingCapability, Platform, Probe,
    RunOptions, SessionContext, SurfaceDriver, SurfaceSession,
};

/// The driver id: `desktop/macos-accessibility`.
pub const DRIVER_ID: DriverId = DriverId {
    backend: Backend::Desktop,
    name: "macos-accessibility",
};

/// The platform this driver runs on.
pub const PLATFORM: Platform = Platform::Macos;

/// The macOS desktop driver (Accessibility API, CGEvent, ScreenCaptureKit).
#[derive(Debug, Clone)]
pub struct MacDriver {
    info: DriverInfo,
}

impl Default for MacDriver {
    fn default() -> Self {
        Self::new()
    }
}

impl MacDriver {
    /// A driver supporting every desktop step and the `name`, `role`,
    /// `automationId` and `path` locators.
    pub fn new() -> Self {
        MacDriver {
            info: DriverInfo::desktop_accessibility(DRIVER_ID, PLATFORM),
        }
    }
}

#[async_trait]
impl SurfaceDriver for MacDriver {
    fn info(&self) -> &DriverInfo {
        &self.info
    }

    /// Portable role names and the AX roles (`AXButton`, as Accessibility
    /// Inspector shows them).
    fn check_role(&self, role: &str) -> Result<(), String> {
        qa_desktop::AX.query(role).map(|_| ())
    }

    /// On macOS: each privacy grant this process lacks for the flow (each
    /// with its System Settings pane), then whatever of the target cannot
    /// be found; elsewhere: `platform`.
    async fn probe(&self, flow: &Flow, _host: &Host, options: &RunOptions) -> Probe {
        #[cfg(target_os = "macos")]
        let (present, missing) = crate::imp::probe(flow, options).await;
        #[cfg(not(target_os = "macos"))]
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
        #[cfg(target_os = "macos")]
        {
            crate::imp::open(flow, ctx).await
        }
        #[cfg(not(target_os = "macos"))]
        {
            let _ = (flow, ctx);
            Err(DriverError::blocked(
                qa_desktop::DesktopCode::PlatformUnsupported,
                unsupported(),
            ))
        }
    }
}

/// The missing capability reported off macOS.
pub fn unsupported() -> MissingCapability {
    MissingCapability {
        id: "platform".into(),
        reason: format!(
            "the macos-accessibility driver runs on macOS only (this is {})",
            std::env::consts::OS
        ),
        remediation: "run the flow on a macOS host (a logged-in desktop session, such as a macos-14 CI runner, with the Accessibility grant), or use this platform's own desktop driver".into(),
    }
}
