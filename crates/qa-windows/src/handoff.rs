//! When UI Automation cannot work on this host, and what a person does
//! about it: the probe's missing capabilities, decided from host facts the
//! Windows side reads (`imp::host`). Pure, so every answer is unit-tested
//! everywhere.

use qa_core::flow::ApplicationTarget;
use qa_core::MissingCapability;

fn missing(id: &str, reason: impl Into<String>, remediation: &str) -> MissingCapability {
    MissingCapability {
        id: id.into(),
        reason: reason.into(),
        remediation: remediation.into(),
    }
}

/// Whether the input desktop (the one that receives keyboard and mouse
/// input) can be opened by this process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputDesktop {
    /// Opened, and it is the user's `Default` desktop.
    Default,
    /// Opened, but another desktop has the input: the workstation is
    /// locked (`Winlogon`) or a secure prompt is up (named).
    Other(String),
    /// It could not be opened (the OS error).
    Unavailable(String),
}

/// What the probe reads about the runner's own session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostFacts {
    /// The Terminal Services session of this process (0: the services
    /// session, which has no interactive desktop); `None` if unreadable.
    pub session: Option<u32>,
    /// The input desktop.
    pub input_desktop: InputDesktop,
    /// Whether the UI Automation client could be created (why not).
    pub uia: Result<(), String>,
}

/// What is missing for any UI Automation run on this host, most
/// fundamental first.
pub fn host_missing(f: &HostFacts) -> Vec<MissingCapability> {
    let mut out = Vec::new();
    if f.session == Some(0) {
        out.push(missing(
            "interactive-desktop",
            "ui-qa runs in session 0 (a Windows service or a scheduled task without a logged-on user), which has no interactive desktop: no window there can be seen or driven",
            "run ui-qa in a logged-on user's session: a CI runner configured to run interactively (not as a service), or an RDP or console logon",
        ));
        return out;
    }
    match &f.input_desktop {
        InputDesktop::Default => {}
        InputDesktop::Other(name) => out.push(missing(
            "unlocked-desktop",
            format!(
                "the input desktop is {name:?}, not the user's desktop: the workstation is locked or a secure prompt (UAC, Ctrl+Alt+Del) is showing"
            ),
            "unlock the workstation (and keep it from locking: disable the screen saver lock for the CI user), or dismiss the secure prompt",
        )),
        InputDesktop::Unavailable(why) => out.push(missing(
            "interactive-desktop",
            format!("the input desktop cannot be opened ({why}): no interactive desktop is attached to this session (a disconnected RDP session or a service)"),
            "run ui-qa in a connected, logged-on user session; for RDP, keep the session connected (or use tscon to move it to the console before disconnecting)",
        )),
    }
    if let Err(why) = &f.uia {
        out.push(missing(
            "ui-automation",
            format!("the UI Automation client could not be created: {why}"),
            "UI Automation is part of Windows 7 and later; check that the UIAutomationCore.dll of the system is intact (sfc /scannow) and that COM is not disabled for this account",
        ));
    }
    out
}

/// Whether this process can drive the target process's windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetAccess {
    /// Same or lower integrity: it can be driven.
    Drivable,
    /// The target runs elevated (administrator) and ui-qa does not: UIPI
    /// keeps its input and most of its tree from ui-qa.
    ElevatedTarget,
}

/// What is missing to drive a target of `access`.
pub fn target_missing(access: TargetAccess) -> Option<MissingCapability> {
    match access {
        TargetAccess::Drivable => None,
        TargetAccess::ElevatedTarget => Some(missing(
            "elevation",
            "the application runs elevated (as administrator) and ui-qa does not: Windows (UIPI) blocks input to it and hides most of its accessibility tree from a non-elevated process",
            "run ui-qa elevated as well (an administrator terminal or an elevated CI step), or start the application without elevation",
        )),
    }
}

/// What the flow asks that Windows has no answer for.
pub fn target_unsupported(a: &ApplicationTarget) -> Vec<MissingCapability> {
    let mut out = Vec::new();
    if a.bundle_id.is_some() {
        out.push(missing(
            "bundle-id",
            "application.bundleId is a macOS concept; Windows has no bundles",
            "use application.launch, application.pid or application.name on Windows",
        ));
    }
    if a.virtual_display == Some(true) {
        out.push(missing(
            "virtual-display",
            "application.virtualDisplay starts an owned X server, which exists on Linux only",
            "drop virtualDisplay (and --virtual-display) for Windows runs; use a dedicated CI desktop session instead",
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> HostFacts {
        HostFacts {
            session: Some(1),
            input_desktop: InputDesktop::Default,
            uia: Ok(()),
        }
    }

    #[test]
    fn a_logged_on_unlocked_session_misses_nothing() {
        assert!(host_missing(&facts()).is_empty());
    }

    #[test]
    fn session_zero_is_blocked_first_and_alone() {
        let f = HostFacts {
            session: Some(0),
            input_desktop: InputDesktop::Unavailable("access denied".into()),
            uia: Err("class not registered".into()),
        };
        let m = host_missing(&f);
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].id, "interactive-desktop");
        assert!(m[0].reason.contains("session 0"));
    }

    #[test]
    fn a_locked_workstation_names_the_desktop_and_how_to_unlock() {
        let f = HostFacts {
            input_desktop: InputDesktop::Other("Winlogon".into()),
            ..facts()
        };
        let m = host_missing(&f);
        assert_eq!(m[0].id, "unlocked-desktop");
        assert!(m[0].reason.contains("Winlogon"));
        assert!(m[0].remediation.contains("unlock"));
        let gone = HostFacts {
            input_desktop: InputDesktop::Unavailable("The handle is invalid.".into()),
            uia: Err("E_FAIL".into()),
            ..facts()
        };
        let ids: Vec<String> = host_missing(&gone).into_iter().map(|m| m.id).collect();
        assert_eq!(ids, ["interactive-desktop", "ui-automation"]);
    }

    #[test]
    fn an_elevated_target_is_blocked_with_the_elevation_handoff() {
        assert!(target_missing(TargetAccess::Drivable).is_none());
        let m = target_missing(TargetAccess::ElevatedTarget).unwrap();
        assert_eq!(m.id, "elevation");
        assert!(m.remediation.contains("elevated"));
    }
}
