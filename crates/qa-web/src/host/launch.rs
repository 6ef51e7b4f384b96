//! Finding and launching Chromium.

use crate::cdp::{Cdp, CdpError, CdpEvent};
use crate::codes::WebCode;
use qa_core::evidence::HelperUser;
use qa_core::host::{find_in, is_executable};
use qa_core::{DriverError, MissingCapability};
use std::path::{Path, PathBuf};
#[cfg(unix)]
use std::process::Stdio;
use std::time::Duration;
#[cfg(unix)]
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
    "msedge",
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

/// Where Chrome, Chromium and Edge install themselves on Windows, in the
/// order they are tried: per-machine then per-user Chrome, Chromium, then
/// Edge (present on every Windows 10 and 11). `var` reads an environment
/// variable (`ProgramFiles`, `ProgramFiles(x86)`, `LOCALAPPDATA`).
pub fn windows_install_paths(var: impl Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    const BASES_AND_TAILS: &[(&str, &str)] = &[
        ("ProgramFiles", r"Google\Chrome\Application\chrome.exe"),
        ("ProgramFiles(x86)", r"Google\Chrome\Application\chrome.exe"),
        ("LOCALAPPDATA", r"Google\Chrome\Application\chrome.exe"),
        ("LOCALAPPDATA", r"Chromium\Application\chrome.exe"),
        ("ProgramFiles", r"Chromium\Application\chrome.exe"),
        (
            "ProgramFiles(x86)",
            r"Microsoft\Edge\Application\msedge.exe",
        ),
        ("ProgramFiles", r"Microsoft\Edge\Application\msedge.exe"),
    ];
    BASES_AND_TAILS
        .iter()
        .filter_map(|(base, tail)| {
            let b = var(base).filter(|b| !b.is_empty())?;
            Some(PathBuf::from(format!(
                r"{}\{tail}",
                b.trim_end_matches('\\')
            )))
        })
        .collect()
}

/// Finds Chromium: the explicit path, `$CHROME`, well-known names on `PATH`,
/// then well-known install paths (on Windows, Chrome's, Chromium's and
/// Edge's). `Err` carries the missing capability.
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
    if cfg!(windows) {
        if let Some(p) = windows_install_paths(|v| std::env::var(v).ok())
            .into_iter()
            .find(|p| is_executable(p))
        {
            return Ok(p);
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
        // DevTools over the fds ui-qa hands it (3 in, 4 out): no port that
        // another local user could attach to.
        "--remote-debugging-pipe".into(),
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

/// A launched browser: its pid and its DevTools connection.
pub struct Launched {
    /// Main browser pid (its own session and process group).
    pub pid: u32,
    /// The DevTools connection over the browser's pipe.
    pub cdp: std::sync::Arc<Cdp>,
    /// Its events, from the browser's first message on.
    pub events: tokio::sync::mpsc::UnboundedReceiver<CdpEvent>,
    /// The child handle (kept so it is reaped).
    pub child: BrowserChild,
    /// How the setup commands sent with the first one went.
    pub setup: Result<(), CdpError>,
}

/// The browser's process handle: a Tokio child on Unix; on Windows, where
/// the standard library cannot hand it descriptors 3 and 4, the owner's.
#[cfg(unix)]
pub type BrowserChild = tokio::process::Child;
/// The browser's process handle: a Tokio child on Unix; on Windows, where
/// the standard library cannot hand it descriptors 3 and 4, the owner's.
#[cfg(windows)]
pub type BrowserChild = qa_core::process::windows_spawn::OwnedChild;

/// A started browser before its first answer.
struct Started {
    child: BrowserChild,
    pid: u32,
    /// Ours: the write end of the browser's input.
    to_browser: std::fs::File,
    /// Ours: the read end of the browser's output.
    from_browser: std::fs::File,
    /// Fired once the browser's stderr has ended.
    stderr_done: Option<tokio::sync::oneshot::Receiver<()>>,
}

/// The two pipes of `--remote-debugging-pipe`: the browser reads fd 3 and
/// writes fd 4. The browser's ends are moved to 3 and 4 between fork and
/// exec; every end is close-on-exec, so no other program ui-qa starts
/// inherits one.
#[cfg(unix)]
pub(crate) struct DevToolsPipes {
    /// Ours: the write end of the browser's input.
    to_browser: std::fs::File,
    /// Ours: the read end of the browser's output.
    from_browser: std::fs::File,
    /// The browser's: the read end of its input (becomes fd 3).
    browser_in: std::os::fd::OwnedFd,
    /// The browser's: the write end of its output (becomes fd 4).
    browser_out: std::os::fd::OwnedFd,
}

#[cfg(unix)]
impl DevToolsPipes {
    fn new() -> std::io::Result<DevToolsPipes> {
        use std::os::fd::{FromRawFd, OwnedFd};
        fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
            let mut fds = [0; 2];
            // SAFETY: `fds` has room for the two descriptors pipe(2) writes.
            #[allow(unsafe_code)]
            let r = unsafe { libc::pipe(fds.as_mut_ptr()) };
            if r != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // SAFETY: pipe(2) succeeded: both are open and ours alone.
            #[allow(unsafe_code)]
            let (a, b) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
            Ok((high_cloexec(a)?, high_cloexec(b)?))
        }
        let (browser_in, to_browser) = pipe()?;
        let (from_browser, browser_out) = pipe()?;
        Ok(DevToolsPipes {
            to_browser: to_browser.into(),
            from_browser: from_browser.into(),
            browser_in,
            browser_out,
        })
    }

    /// Our ends, once the browser is spawned with its own: the browser's
    /// ends close here, or its exit would never end our reads.
    pub(crate) fn ours(self) -> (std::fs::File, std::fs::File) {
        (self.to_browser, self.from_browser)
    }
}

/// `fd` moved to a descriptor ≥ 10 with close-on-exec set (so that moving
/// the browser's ends to 3 and 4 never overwrites one of them).
#[cfg(unix)]
fn high_cloexec(fd: std::os::fd::OwnedFd) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    // SAFETY: F_DUPFD_CLOEXEC on an open descriptor; the new one is ours.
    #[allow(unsafe_code)]
    let n = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 10) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fcntl returned a new open descriptor that nothing else owns.
    #[allow(unsafe_code)]
    Ok(unsafe { OwnedFd::from_raw_fd(n) })
}

/// The fresh profile's preferences: no password manager (it would offer to
/// save a login's password and send a leak check to its service), no
/// credential service. Handed to the browser's user when it has its own.
fn preferences(profile: &Path, user: Option<HelperUser>) -> std::io::Result<()> {
    let dir = profile.join("Default");
    // Owner-only like the rest of the profile (Chromium writes with umask
    // 077): 0700 before the umask, which can only take bits away.
    #[cfg(unix)]
    let b = {
        let mut b = std::fs::DirBuilder::new();
        std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
        b
    };
    #[cfg(not(unix))]
    let b = std::fs::DirBuilder::new();
    b.create(&dir)?;
    let prefs = r#"{"credentials_enable_service":false,"profile":{"password_manager_enabled":false,"password_manager_leak_detection":false}}"#;
    let mut f = qa_core::evidence::create_private_file(&dir.join("Preferences"))
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    std::io::Write::write_all(&mut f, prefs.as_bytes())?;
    #[cfg(unix)]
    if let Some(u) = user {
        // Root made both inside the browser user's 0700 profile; the file
        // is changed through its descriptor, the directory is not followed.
        std::os::unix::fs::fchown(&f, Some(u.uid), Some(u.gid))?;
        std::os::unix::fs::lchown(&dir, Some(u.uid), Some(u.gid))?;
    }
    #[cfg(not(unix))]
    let _ = user;
    Ok(())
}

/// Chromium's own word, on stderr, when it cannot set up its sandbox here
/// (no user namespaces and no setuid helper).
const NO_SANDBOX_HERE: &str = "No usable sandbox";

/// Whether Chromium refused to start because its sandbox cannot work on
/// this host (the caller may start it again without the sandbox).
pub fn sandbox_refused(e: &DriverError) -> bool {
    e.code == WebCode::LaunchFailed.as_str() && e.message.contains(NO_SANDBOX_HERE)
}

/// Runs the browser as `user`: its own id and group and no supplementary
/// groups (the standard library drops them when root sets the id), with
/// its home in its profile, away from root's session bus and runtime
/// directory.
#[cfg(unix)]
fn run_as(cmd: &mut tokio::process::Command, profile: &Path, user: Option<HelperUser>) {
    if let Some(u) = user {
        cmd.uid(u.uid)
            .gid(u.gid)
            .env("HOME", profile)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_CACHE_HOME")
            .env_remove("XDG_DATA_HOME")
            .env_remove("XDG_RUNTIME_DIR")
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .env_remove("XAUTHORITY");
    }
}

/// The DevTools pipes, set up to become the browser's fds 3 and 4 when
/// `cmd` is spawned; the profile is written owner-only (umask 077).
#[cfg(unix)]
pub(crate) fn prepare_pipes(
    cmd: &mut tokio::process::Command,
) -> Result<DevToolsPipes, DriverError> {
    use std::os::fd::AsRawFd;
    let pipes = DevToolsPipes::new().map_err(|e| {
        DriverError::new(
            WebCode::LaunchFailed,
            format!("could not create the DevTools pipes: {e}"),
        )
    })?;
    let (fd_in, fd_out) = (pipes.browser_in.as_raw_fd(), pipes.browser_out.as_raw_fd());
    #[allow(unsafe_code)]
    // SAFETY: umask(2) and dup2(2) are async-signal-safe; called between
    // fork and exec on descriptors that stay open until the spawn returns.
    unsafe {
        cmd.pre_exec(move || {
            // The profile is the run's private scratch (cookies, session
            // state): Chromium writes it owner-only whatever the umask.
            libc::umask(0o077);
            // dup2 clears close-on-exec on 3 and 4 only.
            if libc::dup2(fd_in, 3) < 0 || libc::dup2(fd_out, 4) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    Ok(pipes)
}

/// Launches Chromium through the run's process owner with its DevTools
/// pipe, and waits until it answers on it.
///
/// `user`: the user Chromium runs as (see [`super::user`]); its profile
/// must already be its own. `setup` sends the session's first commands
/// right behind the first one, so the browser reads them all as soon as
/// it is up (its answers are in [`Launched::setup`]).
#[allow(clippy::too_many_arguments)]
pub async fn launch<F, Fut>(
    exe: &Path,
    args: &[String],
    profile: &Path,
    user: Option<HelperUser>,
    processes: &qa_core::process::ProcessOwner,
    deadline: qa_core::Deadline,
    setup: F,
) -> Result<Launched, DriverError>
where
    F: FnOnce(std::sync::Arc<Cdp>) -> Fut,
    Fut: std::future::Future<Output = Result<(), CdpError>>,
{
    if !profile.join("Default").is_dir() {
        preferences(profile, user).map_err(|e| {
            DriverError::new(
                WebCode::LaunchProfile,
                format!(
                    "could not prepare the browser profile {}: {e}",
                    profile.display()
                ),
            )
        })?;
    }
    let tail = Tail::default();
    let Started {
        mut child,
        pid,
        to_browser,
        from_browser,
        stderr_done,
    } = start(exe, args, profile, user, processes, &tail)?;
    let (cdp, events) = Cdp::over_pipe(to_browser, from_browser)
        .map_err(|e| DriverError::new(WebCode::CdpConnect, e))?;
    let stderr_tail = |tail: &Tail| {
        let t = tail.lock().expect("tail lock");
        let s = String::from_utf8_lossy(&t).into_owned();
        let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(8)..].join("\n")
    };
    // The first answer on the pipe says the browser is up.
    let bound = deadline.remaining().max(Duration::from_millis(1));
    let (answered, setup) = tokio::join!(
        cdp.call_with_timeout(None, "Browser.getVersion", serde_json::json!({}), bound),
        setup(cdp.clone()),
    );
    match answered {
        Ok(_) => Ok(Launched {
            pid,
            cdp,
            events,
            child,
            setup,
        }),
        Err(CdpError::Timeout { .. }) => Err(DriverError::new(
            WebCode::LaunchTimeout,
            format!(
                "Chromium did not answer on its DevTools pipe in time; stderr tail:\n{}",
                stderr_tail(&tail)
            ),
        )),
        Err(e) => {
            // Exited: its stderr ends with it (or soon after, when a helper
            // it started still holds it).
            let _ = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
            if let Some(r) = stderr_done {
                let _ = tokio::time::timeout(Duration::from_secs(2), r).await;
            }
            let status = match child.try_wait() {
                Ok(Some(s)) => s.to_string(),
                _ => "still running".into(),
            };
            Err(DriverError::new(
                WebCode::LaunchFailed,
                format!(
                    "Chromium ended its DevTools pipe during start-up ({e}; {status}); stderr tail:\n{}",
                    stderr_tail(&tail)
                ),
            )
            .with_remediation("check the stderr tail; pass --browser PATH to use another build"))
        }
    }
}

/// The tail of the browser's stderr that a failed start reports.
pub(crate) type Tail = std::sync::Arc<std::sync::Mutex<Vec<u8>>>;

/// Most stderr bytes kept.
const TAIL_BYTES: usize = 8192;

fn keep_tail(tail: &Tail, bytes: &[u8]) {
    let mut t = tail.lock().expect("tail lock");
    t.extend_from_slice(bytes);
    let len = t.len();
    if len > TAIL_BYTES {
        t.drain(..len - TAIL_BYTES);
    }
}

/// Reads `err` (a child's stderr) into `tail` until it ends; fired then.
#[cfg(unix)]
pub(crate) fn collect_stderr(
    mut err: tokio::process::ChildStderr,
    tail: &Tail,
) -> tokio::sync::oneshot::Receiver<()> {
    let (done, fired) = tokio::sync::oneshot::channel();
    let tail = tail.clone();
    tokio::spawn(async move {
        let mut buf = [0u8; 4096];
        while let Ok(n) = err.read(&mut buf).await {
            if n == 0 {
                break;
            }
            keep_tail(&tail, &buf[..n]);
        }
        let _ = done.send(());
    });
    fired
}

/// Why the browser could not be started.
fn spawn_error(exe: &Path, user: Option<HelperUser>, e: std::io::Error) -> DriverError {
    match user {
        #[cfg(unix)]
        Some(u) if e.kind() == std::io::ErrorKind::PermissionDenied => DriverError::new(
            WebCode::LaunchFailed,
            format!(
                "could not start {} as the browser's own user (uid {}): {e}",
                exe.display(),
                u.uid
            ),
        )
        .with_remediation(
            "as root, ui-qa starts Chromium as an unprivileged user of its own: pass --browser a Chromium that every user can read and execute (such as /usr/bin/chromium)",
        ),
        _ => DriverError::new(
            WebCode::LaunchFailed,
            format!("could not start {}: {e}", exe.display()),
        )
        .with_remediation(CHROMIUM_REMEDIATION),
    }
}

/// Starts the browser with the DevTools pipes as its fds 3 and 4 and its
/// stderr collected into `tail`.
#[cfg(unix)]
fn start(
    exe: &Path,
    args: &[String],
    profile: &Path,
    user: Option<HelperUser>,
    processes: &qa_core::process::ProcessOwner,
    tail: &Tail,
) -> Result<Started, DriverError> {
    let mut cmd = tokio::process::Command::new(exe);
    run_as(&mut cmd, profile, user);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(false);
    let pipes = prepare_pipes(&mut cmd)?;
    let mut child = processes
        .spawn(cmd, "chromium")
        .map_err(|e| spawn_error(exe, user, e))?;
    let pid = child.id().unwrap_or(0);
    let (to_browser, from_browser) = pipes.ours();
    let stderr_done = child.stderr.take().map(|err| collect_stderr(err, tail));
    Ok(Started {
        child,
        pid,
        to_browser,
        from_browser,
        stderr_done,
    })
}

/// Starts the browser with the DevTools pipes as its C-runtime
/// descriptors 3 and 4 (see `qa_core::process::crt_fds`) and its stderr
/// collected into `tail`. Windows has no other user to run it as, and the
/// profile is the run's private scratch already.
#[cfg(windows)]
fn start(
    exe: &Path,
    args: &[String],
    _profile: &Path,
    user: Option<HelperUser>,
    processes: &qa_core::process::ProcessOwner,
    tail: &Tail,
) -> Result<Started, DriverError> {
    use qa_core::process::windows_spawn::{pipe, FdCommand};
    use std::io::Read;
    let failed = |e: std::io::Error| {
        DriverError::new(
            WebCode::LaunchFailed,
            format!("could not create the DevTools pipes: {e}"),
        )
    };
    let (browser_in, to_browser) = pipe().map_err(failed)?;
    let (from_browser, browser_out) = pipe().map_err(failed)?;
    let (err_read, err_write) = pipe().map_err(failed)?;
    let cmd = FdCommand::new(exe)
        .args(args)
        .stderr(err_write)
        .fds(vec![browser_in, browser_out]);
    // The browser's ends close in our process once it has its own.
    let child = processes
        .spawn_with_fds(cmd, "chromium")
        .map_err(|e| spawn_error(exe, user, e))?;
    let (done, fired) = tokio::sync::oneshot::channel();
    let tail = tail.clone();
    let mut err = std::fs::File::from(err_read);
    // A thread, not a blocking task: a read that waits for the browser
    // must never hold up the runtime's shutdown.
    std::thread::Builder::new()
        .name("qa-web-chromium-stderr".into())
        .spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                keep_tail(&tail, &buf[..n]);
            }
            let _ = done.send(());
        })
        .map_err(failed)?;
    Ok(Started {
        pid: child.id(),
        child,
        to_browser: to_browser.into(),
        from_browser: from_browser.into(),
        stderr_done: Some(fired),
    })
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
    fn windows_install_paths_cover_chrome_chromium_and_edge() {
        let env = |v: &str| match v {
            "ProgramFiles" => Some(r"C:\Program Files".to_string()),
            "ProgramFiles(x86)" => Some(r"C:\Program Files (x86)\".to_string()),
            "LOCALAPPDATA" => Some(r"C:\Users\ci\AppData\Local".to_string()),
            _ => None,
        };
        let paths: Vec<String> = windows_install_paths(env)
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        assert_eq!(
            paths.first().map(String::as_str),
            Some(r"C:\Program Files\Google\Chrome\Application\chrome.exe")
        );
        assert!(paths
            .contains(&r"C:\Users\ci\AppData\Local\Chromium\Application\chrome.exe".to_string()));
        assert_eq!(
            paths.last().map(String::as_str),
            Some(r"C:\Program Files\Microsoft\Edge\Application\msedge.exe")
        );
        assert!(
            paths.contains(
                &r"C:\Program Files (x86)\Microsoft\Edge\Application\msedge.exe".to_string()
            ),
            "a trailing separator is not doubled: {paths:?}"
        );
        assert!(windows_install_paths(|_| None).is_empty());
    }

    #[test]
    fn args_are_closed_network_and_sandbox_only_when_asked() {
        let a = chromium_args(Path::new("/tmp/p"), false, "en-US", "http://127.0.0.1:9");
        assert!(a.iter().any(|x| x == "--proxy-server=http://127.0.0.1:9"));
        assert!(a.iter().any(|x| x == "--proxy-bypass-list=<-loopback>"));
        assert!(a.iter().any(|x| x == "--remote-debugging-pipe"));
        assert!(!a.iter().any(|x| x.starts_with("--remote-debugging-port")));
        assert!(a.iter().any(|x| x == "--disable-background-networking"));
        assert!(!a.iter().any(|x| x == "--no-sandbox"));
        assert!(!a.iter().any(|x| x.contains("ignore-certificate-errors")));
        let b = chromium_args(Path::new("/tmp/p"), true, "en-US", "http://127.0.0.1:9");
        assert!(b.iter().any(|x| x == "--no-sandbox"));
    }
}
