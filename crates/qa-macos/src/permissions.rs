//! The macOS privacy grants (TCC) the driver needs, read without ever
//! prompting, and what a missing one becomes: a BLOCKED handoff that names
//! the System Settings pane and the program that needs the grant. ui-qa
//! never changes a privacy setting.
//!
//! - **Accessibility** for every desktop flow: without it the system
//!   answers no accessibility call and accepts no synthetic input.
//! - **Screen Recording** for a flow that keeps pixels: video (on unless
//!   `--video off` or the flow's `evidence` turns it off), `screenshot` and
//!   `capture` steps. Without it the system hands back the desktop
//!   wallpaper instead of the window.
//!
//! macOS gives the grant to the app *responsible* for the process: the
//! terminal that started ui-qa (Terminal, iTerm2), or a CI runner's agent.
//! The handoff names ui-qa's own path and says so.
//!
//! Reading the grants is macOS-only (`Grants::read`); what they mean is
//! plain code, unit-tested on every platform.

use qa_core::driver::{MissingCapability, RunOptions};
use qa_core::flow::{Action, DesktopAction, Flow};
use qa_core::recording::Recording;

/// The two grants, as the system reports them to this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grants {
    /// `AXIsProcessTrusted`.
    pub accessibility: bool,
    /// `CGPreflightScreenCaptureAccess`.
    pub screen_recording: bool,
}

/// The System Settings pane for Accessibility.
pub const ACCESSIBILITY_PANE: &str = "System Settings → Privacy & Security → Accessibility";
/// The System Settings pane for Screen Recording (named "Screen & System
/// Audio Recording" from macOS 15).
pub const SCREEN_RECORDING_PANE: &str =
    "System Settings → Privacy & Security → Screen Recording (macOS 15: Screen & System Audio Recording)";

/// Whether a run of `flow` with `options` keeps pixels of the window.
pub fn needs_screen_recording(flow: &Flow, options: &RunOptions) -> bool {
    let recording = Recording::resolve(flow.evidence.as_ref(), options.video, options.trace);
    recording.video.records()
        || flow.steps.iter().any(|s| {
            matches!(
                s.action,
                Action::Desktop(DesktopAction::Screenshot(_) | DesktopAction::Capture(_))
            )
        })
}

/// What is missing for a run that needs Screen Recording or not, run by
/// `program`: one handoff per grant not given, each with its pane.
pub fn missing(
    grants: Grants,
    needs_screen_recording: bool,
    program: &str,
) -> Vec<MissingCapability> {
    let who = format!(
        "{program} (macOS asks for the app responsible for it: the terminal that started it, such as Terminal or iTerm2, or the CI runner's agent)"
    );
    let mut out = Vec::new();
    if !grants.accessibility {
        out.push(MissingCapability {
            id: "accessibility-permission".into(),
            reason: format!(
                "macOS has not granted Accessibility to {who}; without it the system answers no accessibility call and takes no synthetic input"
            ),
            remediation: format!(
                "{ACCESSIBILITY_PANE}: add and turn on that app, then run again (ui-qa never changes privacy settings; on a hosted CI runner, seed the grant before the job, see docs/platforms.md)"
            ),
        });
    }
    if needs_screen_recording && !grants.screen_recording {
        out.push(MissingCapability {
            id: "screen-recording-permission".into(),
            reason: format!(
                "macOS has not granted Screen Recording to {who}; without it a window's pictures and video show the desktop instead of the window"
            ),
            remediation: format!(
                "{SCREEN_RECORDING_PANE}: add and turn on that app, then run again (ui-qa never changes privacy settings); or run with --video off and no screenshot or capture steps"
            ),
        });
    }
    out
}

#[cfg(target_os = "macos")]
impl Grants {
    /// The grants of this process, read without prompting.
    #[allow(unsafe_code)]
    pub fn read() -> Grants {
        #[link(name = "ApplicationServices", kind = "framework")]
        extern "C" {
            fn AXIsProcessTrusted() -> u8;
        }
        #[link(name = "CoreGraphics", kind = "framework")]
        extern "C" {
            fn CGPreflightScreenCaptureAccess() -> bool;
        }
        // SAFETY: both take no argument, only read this process's TCC
        // state and never prompt (macOS 10.9+ and 10.15+).
        unsafe {
            Grants {
                accessibility: AXIsProcessTrusted() != 0,
                screen_recording: CGPreflightScreenCaptureAccess(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(steps: &str, evidence: &str) -> Flow {
        Flow::parse(
            &format!(
                r#"{{"target":{{"application":{{"launch":{{"argv":["/System/Applications/TextEdit.app"]}}}}}}{evidence},"steps":[{steps}]}}"#
            ),
            std::path::Path::new("."),
        )
        .unwrap()
    }

    #[test]
    fn each_missing_grant_names_its_pane_and_the_program() {
        let none = Grants {
            accessibility: false,
            screen_recording: false,
        };
        let m = missing(none, true, "/usr/local/bin/ui-qa");
        let ids: Vec<&str> = m.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            ["accessibility-permission", "screen-recording-permission"]
        );
        assert!(m[0].remediation.starts_with(ACCESSIBILITY_PANE));
        assert!(m[1].remediation.starts_with(SCREEN_RECORDING_PANE));
        for c in &m {
            assert!(c.reason.contains("/usr/local/bin/ui-qa"), "{}", c.reason);
            assert!(c.reason.contains("Terminal"), "{}", c.reason);
            assert!(c.remediation.contains("never changes"), "{}", c.remediation);
        }
        // Only what is missing and needed.
        let ax_only = Grants {
            accessibility: true,
            screen_recording: false,
        };
        assert!(missing(ax_only, false, "ui-qa").is_empty());
        assert_eq!(
            missing(ax_only, true, "ui-qa")[0].id,
            "screen-recording-permission"
        );
        let all = Grants {
            accessibility: true,
            screen_recording: true,
        };
        assert!(missing(all, true, "ui-qa").is_empty());
    }

    #[test]
    fn pixels_need_screen_recording_and_nothing_else_does() {
        let video_off = RunOptions {
            video: Some(qa_core::recording::RecordMode::Off),
            ..Default::default()
        };
        let act = r#"{"action":"activateWindow"}"#;
        // Video is on by default.
        assert!(needs_screen_recording(
            &flow(act, ""),
            &RunOptions::default()
        ));
        assert!(!needs_screen_recording(&flow(act, ""), &video_off));
        assert!(!needs_screen_recording(
            &flow(act, r#","evidence":{"video":"off"}"#),
            &RunOptions::default()
        ));
        for pixels in [r#"{"action":"screenshot"}"#, r#"{"action":"capture"}"#] {
            assert!(needs_screen_recording(&flow(pixels, ""), &video_off));
        }
    }
}
