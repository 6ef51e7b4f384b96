//! Finding and launching Chromium.

use crate::codes::WebCode;
use qa_core::host::{find_in, is_executable};
use qa_core::{DriverError, MissingCapability};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::AsyncReadExt;

/// Remediation when no Chromium is found.
pub const CHROMIUM_REMEDIATION: &str =
    "apt-get install -y chromium (Debian/Ubuntu) or pass --browser PATH";

const NAMES: &[&str] = &[
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "chrome",
];

const WELL_KNOWN: &[&str] = &[
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/lib/chromium/chromium",
    "/snap/bin/chromium",
    "/usr/bin/google-chrome",
    "/opt/google/chrome/chrome",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
];

/// Finds Chromium: the explicit path, `$CHROME`, well-known names on `PATH`,
/// then well-known install paths. `Err` carries the missing capability.
pub fn find_chromium(explicit: Option<&Path>) -> Result<PathBuf, MissingCapability> {
    if let Some(p) = explicit {
        return if is_executable(p) {
            Ok(p.to_path_buf())
        } else {
            Err(MissingCapability {
                remediation: "pass --browser the path of a Chromium executable (such as /usr/bin/chromium), or drop --browser to use $CHROME or chromium on PATH".into(),
                ..missing(format!("--browser {} is not an executable file", p.display()))
            })
        };
    }
    if let Some(c) = std::env::var_os("CHROME") {
        let p = PathBuf::from(c);
        if is_executable(&p) {
            return Ok(p);
        }
        return Err(MissingCapability {
            remediation: "point $CHROME at a Chromium executable (such as /usr/bin/chromium), or unset it to use chromium on PATH".into(),
            ..missing(format!("$CHROME ({}) is not an executable file", p.display()))
        });
    }
    if let Some(path) = std::env::var_os("PATH") {
        if let Some(p) = NAMES.iter().find_map(|name| find_in(name, &path)) {
            return Ok(p);
        }
    }
    for p in WELL_KNOWN {
        let p = Path::new(p);
        if is_executable(p) {
            return Ok(p.to_path_buf());
        }
    }
    Err(missing(
        "no Chromium or Chrome executable found (--browser, $CHROME, PATH, well-known paths)"
            .into(),
    ))
}

fn missing(reason: String) -> MissingCapability {
    MissingCapability {
        id: "chromium".into(),
        reason,
        remediation: CHROMIUM_REMEDIATION.into(),
    }
}

/// Command-line flags for a contained, headless, closed-network Chromium.
///
/// `proxy` (`http://127.0.0.1:PORT`) is the containment proxy every
/// connection goes through, loopback included (`<-loopback>` removes
/// Chromium's implicit loopback bypass).
pub fn chromium_args(profile: &Path, no_sandbox: bool, locale: &str, proxy: &str) -> Vec<String> {
    let mut a: Vec<String> = vec![
        "--headless".into(),
        format!("--user-data-dir={}", profile.display()),
        "--remote-debugging-port=0".into(),
        "--remote-debugging-address=127.0.0.1".into(),
        "--no-first-run".into(),
        "--no-default-browser-check".into(),
        "--disable-background-networking".into(),
        "--disable-component-update".into(),
        "--disable-sync".into(),
        "--disable-gpu".into(),
        "--disable-dev-shm-usage".into(),
        "--disable-extensions".into(),
        "--disable-default-apps".into(),
        "--disable-domain-reliability".into(),
        "--disable-client-side-phishing-detection".into(),
        "--disable-breakpad".into(),
        "--metrics-recording-only".into(),
        "--no-pings".into(),
        "--mute-audio".into(),
        "--hide-scrollbars".into(),
        // A page behind another window keeps its timers and renderer
        // priority: steps drive openers while popups are open.
        "--disable-background-timer-throttling".into(),
        "--disable-backgrounding-occluded-windows".into(),
        "--disable-renderer-backgrounding".into(),
        "--disable-ipc-flooding-protection".into(),
        "--disable-hang-monitor".into(),
        "--password-store=basic".into(),
        "--use-mock-keychain".into(),
        "--disable-features=Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider,InterestFeedContentSuggestions,AutofillServerCommunication,CertificateTransparencyComponentUpdater,NetworkTimeServiceQuerying".into(),
        format!("--proxy-server={proxy}"),
        "--proxy-bypass-list=<-loopback>".into(),
        // QUIC is UDP and would not go through the proxy.
        "--disable-quic".into(),
        // WebRTC never reaches the network except through the proxy, which
        // refuses every tunnel that is not to an allowed origin.
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp".into(),
        "--webrtc-ip-handling-policy=disable_non_proxied_udp".into(),
        format!("--lang={locale}"),
    ];
    if no_sandbox {
        a.push("--no-sandbox".into());
    }
    a.push("about:blank".into());
    a
}

/// A launched browser: its pid and DevTools endpoint.
pub struct Launched {
    /// Main browser pid (its own session and process group).
    pub pid: u32,
    /// `ws://127.0.0.1:PORT/devtools/browser/ID`.
    pub ws_url: String,
    /// The child handle (kept so it is reaped).
    pub child: tokio::process::Child,
}

/// The fresh profile's preferences: no password manager (it would offer to
/// save a login's password and send a leak check to its service), no
/// credential service.
fn preferences(profile: &Path) {
    let dir = profile.join("Default");
    if std::fs::create_dir_all(&dir).is_ok() {
        let prefs = r#"{"credentials_enable_service":false,"profile":{"password_manager_enabled":false,"password_manager_leak_detection":false}}"#;
        if let Ok(mut f) = qa_core::evidence::create_private_file(&dir.join("Preferences")) {
            use std::io::Write;
            let _ = f.write_all(prefs.as_bytes());
        }
    }
}

/// Launches Chromium through the run's process owner and waits for its
/// DevTools endpoint (`DevToolsActivePort` in the profile dir).
pub async fn launch(
    exe: &Path,
    args: &[String],
    profile: &Path,
    processes: &qa_core::process::ProcessOwner,
    deadline: qa_core::Deadline,
) -> Result<Launched, DriverError> {
    preferences(profile);
    let mut cmd = tokio::process::Command::new(exe);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(false);
    // The profile is the run's private scratch (cookies, session state):
    // Chromium writes it owner-only whatever the caller's umask.
    #[cfg(unix)]
    {
        #[allow(unsafe_code)]
        // SAFETY: umask(2) is async-signal-safe; called between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::umask(0o077);
                Ok(())
            });
        }
    }
    let mut child = processes.spawn(cmd, "chromium").map_err(|e| {
        DriverError::new(
            WebCode::LaunchFailed,
            format!("could not start {}: {e}", exe.display()),
        )
        .with_remediation(CHROMIUM_REMEDIATION)
    })?;
    let pid = child.id().unwrap_or(0);
    // Collect a bounded stderr tail in the background.
    let tail = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
    if let Some(mut err) = child.stderr.take() {
        let tail = tail.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                let mut t = tail.lock().expect("tail lock");
                t.extend_from_slice(&buf[..n]);
                let len = t.len();
                if len > 8192 {
                    t.drain(..len - 8192);
                }
            }
        });
    }
    let port_file = profile.join("DevToolsActivePort");
    let stderr_tail = |tail: &std::sync::Arc<std::sync::Mutex<Vec<u8>>>| {
        let t = tail.lock().expect("tail lock");
        let s = String::from_utf8_lossy(&t).into_owned();
        let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(8)..].join("\n")
    };
    loop {
        if let Ok(text) = std::fs::read_to_string(&port_file) {
            let mut lines = text.lines();
            if let (Some(port), Some(path)) = (lines.next(), lines.next()) {
                if let Ok(port) = port.trim().parse::<u16>() {
                    return Ok(Launched {
                        pid,
                        ws_url: format!("ws://127.0.0.1:{port}{}", path.trim()),
                        child,
                    });
                }
            }
        }
        if let Ok(Some(status)) = child.try_wait() {
            tokio::time::sleep(Duration::from_millis(50)).await;
            return Err(DriverError::new(
                WebCode::LaunchFailed,
                format!(
                    "Chromium exited during start-up ({status}); stderr tail:\n{}",
                    stderr_tail(&tail)
                ),
            )
            .with_remediation("check the stderr tail; pass --browser PATH to use another build"));
        }
        if deadline.expired() {
            return Err(DriverError::new(
                WebCode::LaunchTimeout,
                format!(
                    "Chromium did not open its DevTools endpoint in time; stderr tail:\n{}",
                    stderr_tail(&tail)
                ),
            ));
        }
        // The port file appears once; Chromium writes it ~0.3-0.8 s after start.
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_missing_path_is_reported() {
        let e = find_chromium(Some(Path::new("/nonexistent/chrome"))).unwrap_err();
        assert_eq!(e.id, "chromium");
        // The fix is the path, not an install.
        assert!(
            e.remediation.contains("--browser the path"),
            "{}",
            e.remediation
        );
        assert!(!e.remediation.contains("apt-get"), "{}", e.remediation);
    }

    #[test]
    fn args_are_closed_network_and_sandbox_only_when_asked() {
        let a = chromium_args(Path::new("/tmp/p"), false, "en-US", "http://127.0.0.1:9");
        assert!(a.iter().any(|x| x == "--proxy-server=http://127.0.0.1:9"));
        assert!(a.iter().any(|x| x == "--proxy-bypass-list=<-loopback>"));
        assert!(a.iter().any(|x| x == "--remote-debugging-port=0"));
        assert!(a.iter().any(|x| x == "--disable-background-networking"));
        assert!(!a.iter().any(|x| x == "--no-sandbox"));
        assert!(!a.iter().any(|x| x.contains("ignore-certificate-errors")));
        let b = chromium_args(Path::new("/tmp/p"), true, "en-US", "http://127.0.0.1:9");
        assert!(b.iter().any(|x| x == "--no-sandbox"));
    }
}
