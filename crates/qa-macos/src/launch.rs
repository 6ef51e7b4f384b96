//! What `application.launch.argv[0]` names on macOS: a `.app` bundle (its
//! executable is run), a program (on `PATH` or by path), or a bundle
//! identifier (`com.apple.TextEdit`), which LaunchServices resolves to its
//! `.app`. Pure apart from looking at the file system; the macOS side asks
//! LaunchServices and the bundle for the executable.

use qa_core::flow::ApplicationTarget;
use qa_core::MissingCapability;
use std::path::{Path, PathBuf};

/// What the flow asks that macOS has no answer for.
pub fn target_unsupported(a: &ApplicationTarget) -> Vec<MissingCapability> {
    let mut out = Vec::new();
    if a.virtual_display == Some(true) {
        out.push(MissingCapability {
            id: "virtual-display".into(),
            reason: "application.virtualDisplay starts an owned X server, which exists on Linux only".into(),
            remediation: "drop virtualDisplay (and --virtual-display) for macOS runs; the application runs in the logged-in user's session".into(),
        });
    }
    out
}

/// What `argv[0]` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Program {
    /// A `.app` bundle directory (relative paths against the flow's base).
    Bundle(PathBuf),
    /// An executable file.
    Executable(PathBuf),
    /// A bundle identifier to resolve through LaunchServices.
    BundleId(String),
    /// Nothing that can be launched.
    NotFound,
}

/// Whether `s` has the shape of a bundle identifier: reverse-DNS, at least
/// two dot-separated parts of letters, digits, `-` and `_`, no slash.
pub fn is_bundle_id(s: &str) -> bool {
    let parts: Vec<&str> = s.split('.').collect();
    parts.len() >= 2
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        })
}

/// What `argv0` names, for a flow in `base`; `which` finds programs on
/// `PATH` (or checks a path).
pub fn classify(argv0: &str, base: &Path, which: impl Fn(&str) -> Option<PathBuf>) -> Program {
    let trimmed = argv0.trim_end_matches('/');
    if trimmed.ends_with(".app") {
        let p = base.join(trimmed);
        return if p.is_dir() {
            Program::Bundle(p)
        } else {
            Program::NotFound
        };
    }
    if let Some(p) = which(argv0) {
        return Program::Executable(p);
    }
    if is_bundle_id(argv0) {
        return Program::BundleId(argv0.to_string());
    }
    Program::NotFound
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundles_programs_and_bundle_ids() {
        let dir = std::env::temp_dir().join(format!("qa-macos-launch-{}", std::process::id()));
        let app = dir.join("Fixture.app");
        std::fs::create_dir_all(&app).unwrap();
        let none = |_: &str| None;
        assert_eq!(
            classify("Fixture.app", &dir, none),
            Program::Bundle(app.clone())
        );
        assert_eq!(
            classify(&format!("{}/", app.display()), &dir, none),
            Program::Bundle(app.clone())
        );
        assert_eq!(classify("Missing.app", &dir, none), Program::NotFound);
        let found = |p: &str| (p == "python3").then(|| PathBuf::from("/usr/bin/python3"));
        assert_eq!(
            classify("python3", &dir, found),
            Program::Executable("/usr/bin/python3".into())
        );
        assert_eq!(
            classify("com.apple.TextEdit", &dir, none),
            Program::BundleId("com.apple.TextEdit".into())
        );
        assert_eq!(classify("textedit", &dir, none), Program::NotFound);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_virtual_display_is_linux_only() {
        let flow = |extra: &str| {
            qa_core::flow::Flow::parse(
                &format!(r#"{{"target":{{"application":{{"name":"TextEdit"{extra}}}}},"steps":[{{"action":"activateWindow"}}]}}"#),
                Path::new("."),
            )
            .unwrap()
        };
        let app = |f: &qa_core::flow::Flow| match &f.target {
            qa_core::flow::Target::Desktop(a) => a.clone(),
            _ => unreachable!(),
        };
        assert!(target_unsupported(&app(&flow(""))).is_empty());
        let m = target_unsupported(&app(&flow(r#","virtualDisplay":true"#)));
        assert_eq!(m[0].id, "virtual-display");
    }

    #[test]
    fn bundle_id_shape() {
        assert!(is_bundle_id("com.apple.calculator"));
        assert!(is_bundle_id("org.mozilla.firefox-beta"));
        assert!(!is_bundle_id("TextEdit"));
        assert!(!is_bundle_id("./a.b"));
        assert!(!is_bundle_id("com..apple"));
        assert!(!is_bundle_id("a b.c"));
    }
}
