//! # qa-macos — the macOS accessibility (AXUIElement) driver for ui-qa
//!
//! This crate compiles on every platform. Today its driver is an honest
//! placeholder ([`qa_core::placeholder::PlaceholderDriver`]): its probe
//! answers BLOCKED — `platform` off macos, and `driver` ("not implemented
//! yet") on macos, with the privacy grants the real driver will need and
//! this process lacks ([`permissions`]: Accessibility, and Screen Recording
//! for a flow that keeps pixels), each with its System Settings pane — so a
//! desktop flow selected for it ends with a handoff instead of a fake pass.
//! It already declares the steps and locator kinds the real driver will
//! accept, so flows written for it pass `ui-qa check` today, and holds the
//! driver's first plain parts: [`ax`] (the batched attribute reads, the
//! accessible name, and the action or attribute each step uses),
//! [`keycodes`] (the flow's keys as `kVK_*` codes and `CGEventFlags`,
//! Meta = Command) and [`permissions`]. See
//! `docs/platforms.md` and `ui-qa guide --backend desktop --topic macos-accessibility`.
//!
//! ```
//! use qa_core::SurfaceDriver;
//! let driver = qa_macos::driver();
//! assert_eq!(driver.id().to_string(), "desktop/macos-accessibility");
//! ```

#![warn(missing_docs)]

pub mod ax;
pub mod keycodes;
pub mod permissions;

use async_trait::async_trait;
use qa_core::driver::{
    Backend, DriverError, DriverId, DriverInfo, Host, Platform, Probe, RunOptions, SessionContext,
    SurfaceDriver, SurfaceSession,
};
use qa_core::flow::Flow;
use qa_core::placeholder::PlaceholderDriver;

/// The driver id: `desktop/macos-accessibility`.
pub const DRIVER_ID: DriverId = DriverId {
    backend: Backend::Desktop,
    name: "macos-accessibility",
};

/// The platform this driver runs on.
pub const PLATFORM: Platform = Platform::Macos;

/// The macOS accessibility (AXUIElement) driver (not implemented yet:
/// BLOCKED with a handoff everywhere).
pub fn driver() -> MacDriver {
    MacDriver {
        placeholder: PlaceholderDriver::new(
            DriverInfo::desktop_accessibility(DRIVER_ID, PLATFORM),
            "accessibility",
        ),
    }
}

/// The macOS desktop driver.
pub struct MacDriver {
    placeholder: PlaceholderDriver,
}

#[async_trait]
impl SurfaceDriver for MacDriver {
    fn info(&self) -> &DriverInfo {
        self.placeholder.info()
    }

    /// The placeholder's answer and, on macOS, every grant this process
    /// lacks for the flow.
    async fn probe(&self, flow: &Flow, host: &Host, options: &RunOptions) -> Probe {
        #[cfg_attr(not(target_os = "macos"), allow(unused_mut))]
        let mut p = self.placeholder.probe(flow, host, options).await;
        #[cfg(target_os = "macos")]
        {
            let program = std::env::current_exe()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| "ui-qa".into());
            p.missing.extend(permissions::missing(
                permissions::Grants::read(),
                permissions::needs_screen_recording(flow, options),
                &program,
            ));
        }
        p
    }

    async fn open(
        &self,
        flow: &Flow,
        ctx: SessionContext,
    ) -> Result<Box<dyn SurfaceSession>, DriverError> {
        self.placeholder.open(flow, ctx).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qa_core::driver::{Host, RunOptions, SurfaceDriver};
    use qa_core::flow::Flow;

    #[tokio::test]
    async fn probe_is_blocked_with_remediation() {
        let flow = Flow::parse(
            r#"{"target":{"application":{"name":"App"}},"steps":[{"action":"activateWindow"}]}"#,
            std::path::Path::new("."),
        )
        .unwrap();
        let p = driver()
            .probe(&flow, &Host::current(), &RunOptions::default())
            .await;
        assert!(!p.available());
        let expected = if std::env::consts::OS == PLATFORM.as_str() {
            "driver"
        } else {
            "platform"
        };
        assert_eq!(p.missing[0].id, expected);
        assert!(!p.missing[0].remediation.is_empty());
    }
}
