//! # qa-windows — the Windows UI Automation driver for ui-qa
//!
//! [`WindowsDesktopDriver`] drives a Windows application through UI
//! Automation: it launches the program in the run's Job Object (or attaches
//! by pid or window title, never signalling it), reads the control view of
//! its windows with cache requests (one cross-process round trip per
//! subtree), acts through control patterns (Invoke, Toggle, Value,
//! RangeValue, SelectionItem, ExpandCollapse, MSAA's default action) and
//! real input (`SendInput`) where none applies, and captures exactly its
//! window (`PrintWindow` with `PW_RENDERFULLCONTENT`). Every UI Automation
//! call runs on one dedicated COM thread, bounded by the step's deadline.
//! The step dispatch, verdicts, resolution and snapshots are
//! [`qa_desktop::DesktopSession`]'s.
//!
//! The crate compiles on every platform. Off Windows its probe answers
//! BLOCKED (`platform`) with a handoff. What is decided without Windows —
//! control types to roles, properties to states ([`uia`]), the pattern each
//! action uses ([`patterns`]), key names to virtual keys ([`vk`]), the
//! host's blocking conditions ([`handoff`]), pointer and pixel arithmetic ([`pointer`]) and the application's process
//! tree ([`procs`]) — is plain functions with unit tests that run
//! everywhere. See `docs/platforms.md` for what was compiled, linted and run
//! where, and `ui-qa guide --backend desktop --topic windows-uia`.
//!
//! ```
//! use qa_core::SurfaceDriver;
//! let driver = qa_windows::driver();
//! assert_eq!(driver.id().to_string(), "desktop/windows-uia");
//! ```

#![warn(missing_docs)]

mod driver;
pub mod handoff;
pub mod patterns;
pub mod pointer;
pub mod procs;
pub mod uia;
pub mod vk;

#[cfg(windows)]
mod imp;

pub use driver::{unsupported, WindowsDesktopDriver, DRIVER_ID, PLATFORM};

/// The Windows UI Automation driver.
pub fn driver() -> WindowsDesktopDriver {
    WindowsDesktopDriver::new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use qa_core::driver::SurfaceDriver;

    #[cfg(not(windows))]
    #[tokio::test]
    async fn off_windows_the_probe_is_blocked_on_the_platform_with_a_handoff() {
        use qa_core::driver::{Host, RunOptions};
        use qa_core::flow::Flow;
        let flow = Flow::parse(
            r#"{"target":{"application":{"name":"Notepad"}},"steps":[{"action":"activateWindow"}]}"#,
            std::path::Path::new("."),
        )
        .unwrap();
        let p = driver()
            .probe(&flow, &Host::current(), &RunOptions::default())
            .await;
        assert!(!p.available());
        assert_eq!(p.missing[0].id, "platform");
        assert!(p.missing[0].remediation.contains("Windows host"));
    }

    #[test]
    fn roles_are_checked_against_the_uia_table() {
        let d = driver();
        assert!(d.check_role("Button").is_ok());
        assert!(d.check_role("button").is_ok(), "portable names too");
        assert!(
            d.check_role("push button").is_err(),
            "AT-SPI's names are not UIA's"
        );
    }
}
