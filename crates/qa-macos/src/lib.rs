//! # qa-macos — the macOS accessibility (AXUIElement) driver for ui-qa
//!
//! This crate compiles on every platform. Today it is an honest placeholder
//! ([`qa_core::placeholder::PlaceholderDriver`]): its probe answers BLOCKED —
//! `platform` off macos, and `driver` ("not implemented yet") on macos — so a
//! desktop flow selected for it ends with a handoff instead of a fake pass.
//! It already declares the steps and locator kinds the real driver will
//! accept, so flows written for it pass `ui-qa check` today. See
//! `docs/platforms.md` and `ui-qa guide --backend desktop --topic macos-accessibility`.
//!
//! ```
//! use qa_core::SurfaceDriver;
//! let driver = qa_macos::driver();
//! assert_eq!(driver.id().to_string(), "desktop/macos-accessibility");
//! ```

#![warn(missing_docs)]

use qa_core::driver::{Backend, DriverId, DriverInfo, Platform};
use qa_core::placeholder::PlaceholderDriver;

/// The driver id: `desktop/macos-accessibility`.
pub const DRIVER_ID: DriverId = DriverId {
    backend: Backend::Desktop,
    name: "macos-accessibility",
};

/// The platform this driver runs on.
pub const PLATFORM: Platform = Platform::Macos;

/// the macOS accessibility (AXUIElement) driver (not implemented yet: BLOCKED with a handoff everywhere).
pub fn driver() -> PlaceholderDriver {
    PlaceholderDriver::new(
        DriverInfo::desktop_accessibility(DRIVER_ID, PLATFORM),
        "accessibility",
    )
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
