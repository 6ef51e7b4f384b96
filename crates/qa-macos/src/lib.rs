//! # qa-macos — the macOS Accessibility API (AXUIElement) driver for ui-qa
//!
//! [`MacDriver`] drives a macOS application through the Accessibility API:
//! it launches the program as an owned process (its own process group;
//! `application.launch.argv[0]` may be a program, a `.app` bundle, whose
//! executable is run, or a bundle identifier LaunchServices resolves) or
//! attaches by pid, bundle identifier, or application name or window
//! title, never signalling it; reads its windows (`kAXWindowsAttribute`)
//! and its tree with one batched read per element
//! (`AXUIElementCopyMultipleAttributeValues`, only the attributes the step
//! needs: [`ax::attributes`]); acts through AX actions (`AXPress`,
//! `AXConfirm`, `AXPick`, `AXShowMenu`, `AXIncrement`/`AXDecrement`) and
//! attribute writes (`AXValue`, `AXFocused`, `AXSelected`), each read
//! back, and through real CGEvent input where no action applies (a click
//! at the element's centre, key chords, typed text); and captures exactly
//! the application's window with ScreenCaptureKit (macOS 14+), for PNGs
//! and the window video. Every AX call runs on a blocking thread under a
//! messaging timeout. The step dispatch, verdicts, resolution and
//! snapshots are [`qa_desktop::DesktopSession`]'s.
//!
//! The crate compiles on every platform. Off macOS its probe answers
//! BLOCKED (`platform`) with a handoff; on macOS a missing Accessibility
//! or Screen Recording grant is BLOCKED with its System Settings pane
//! ([`permissions`]). What is decided without a Mac — the attribute plan,
//! the accessible name and the action each step uses ([`ax`]), what a read
//! means (role, states, text, frame: [`element`]), key names to `kVK_*`
//! codes ([`keycodes`]), which window a step uses and which captured
//! window is exactly it ([`window`]), what `argv[0]` names ([`launch`]),
//! and the pixels of a PNG ([`pixels`]) — is plain functions with unit
//! tests that run everywhere. The macOS code was compiled and linted on
//! Linux for both Mac architectures and has not run on a real Mac in this
//! environment: see `docs/platforms.md` and
//! `ui-qa guide --backend desktop --topic macos-accessibility`.
//!
//! ```
//! use qa_core::SurfaceDriver;
//! let driver = qa_macos::driver();
//! assert_eq!(driver.id().to_string(), "desktop/macos-accessibility");
//! ```

#![warn(missing_docs)]

pub mod ax;
mod driver;
pub mod element;
pub mod keycodes;
pub mod launch;
pub mod permissions;
pub mod pixels;
pub mod window;

#[cfg(target_os = "macos")]
mod imp;

pub use driver::{unsupported, MacDriver, DRIVER_ID, PLATFORM};

/// The macOS Accessibility API driver.
pub fn driver() -> MacDriver {
    MacDriver::new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use qa_core::driver::SurfaceDriver;

    #[cfg(not(target_os = "macos"))]
    #[tokio::test]
    async fn off_macos_the_probe_is_blocked_on_the_platform_with_a_handoff() {
        use qa_core::driver::{Host, RunOptions};
        use qa_core::flow::Flow;
        let flow = Flow::parse(
            r#"{"target":{"application":{"name":"App"}},"steps":[{"action":"activateWindow"}]}"#,
            std::path::Path::new("."),
        )
        .unwrap();
        let p = driver()
            .probe(&flow, &Host::current(), &RunOptions::default())
            .await;
        assert!(!p.available());
        assert_eq!(p.missing.len(), 1);
        assert_eq!(p.missing[0].id, "platform");
        assert!(p.missing[0].remediation.contains("macOS host"));
    }

    #[test]
    fn roles_are_checked_against_the_ax_table() {
        let d = driver();
        assert!(d.check_role("AXButton").is_ok());
        assert!(d.check_role("button").is_ok(), "portable names too");
        assert!(
            d.check_role("push button").is_err(),
            "AT-SPI's names are not AX's"
        );
    }
}
