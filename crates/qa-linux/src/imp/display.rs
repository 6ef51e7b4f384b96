//! The X display and session bus a run uses: the host's own (`DISPLAY`,
//! `DBUS_SESSION_BUS_ADDRESS`) or an owned virtual pair (Xvfb + a private
//! `dbus-daemon`) started through the run's process owner.
//!
//! An owned Xvfb is private to the run: it is started with `-auth` on an
//! authority file holding one MIT-MAGIC-COOKIE-1 drawn from the OS's
//! CSPRNG, written 0600 in a fresh 0700 directory of the run's scratch,
//! and with `-nolisten tcp`. Xvfb then refuses every client without the
//! cookie on every socket it listens on (the `/tmp/.X11-unix` socket every
//! user can connect to and the abstract one alike); ui-qa's own connections
//! send it, and every program the run starts on the display gets
//! `XAUTHORITY` naming the file.

use qa_core::host::which;
use qa_core::{Deadline, DriverError, MissingCapability, SessionContext};
use qa_desktop::DesktopCode;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use tokio::io::{AsyncBufReadExt, BufReader};

/// Where the a11y bus service file lives on Debian/Ubuntu/Fedora/Arch.
const A11Y_SERVICE_FILES: &[&str] = &[
    "/usr/share/dbus-1/services/org.a11y.Bus.service",
    "/usr/local/share/dbus-1/services/org.a11y.Bus.service",
];

/// The display and bus one session runs against.
#[derive(Debug)]
pub(crate) struct DesktopEnv {
    /// X display name (`:N`).
    pub display: String,
    /// Session bus address.
    pub session_bus: String,
    /// Private `XDG_RUNTIME_DIR` (virtual mode); removed at close.
    pub runtime_dir: Option<PathBuf>,
    /// Whether the display and bus are owned by this run.
    pub owned: bool,
    /// Child handles of Xvfb and dbus-daemon (kept so their pipes stay open).
    pub children: Vec<tokio::process::Child>,
    /// The owned Xvfb's authority (`None` on the host's display, whose
    /// clients use the host's own `XAUTHORITY`).
    pub xauth: Option<XAuth>,
}

/// The authority name of the cookie an owned Xvfb accepts.
pub(crate) const COOKIE_NAME: &[u8] = b"MIT-MAGIC-COOKIE-1";

/// `FamilyWild` in an authority file: the entry matches any address.
const FAMILY_WILD: u16 = 0xffff;

/// The X authority of an owned Xvfb: its cookie and the 0600 file that
/// holds it (`-auth` for Xvfb, `XAUTHORITY` for every program the run
/// starts on the display). Never printed: `Debug` shows only the file.
pub(crate) struct XAuth {
    /// The authority file.
    pub file: PathBuf,
    cookie: [u8; 16],
}

impl std::fmt::Debug for XAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("XAuth")
            .field("file", &self.file)
            .finish_non_exhaustive()
    }
}

impl XAuth {
    /// A fresh cookie (16 bytes of the OS's CSPRNG) written to a new file
    /// `dir/Xauthority`, 0600 whatever the umask (Xvfb must be able to read
    /// it: an authority it cannot load leaves the display open).
    pub(crate) fn create(dir: &Path) -> std::io::Result<XAuth> {
        use std::io::Write;
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let mut cookie = [0u8; 16];
        getrandom::fill(&mut cookie).map_err(|e| std::io::Error::other(e.to_string()))?;
        let file = dir.join("Xauthority");
        // create_new: O_EXCL, so never through a symlink or over a file.
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&file)?;
        f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        f.write_all(&authority_entry(&cookie))?;
        f.sync_all()?;
        Ok(XAuth { file, cookie })
    }

    /// The cookie's bytes (for the run's own connections).
    pub(crate) fn cookie(&self) -> &[u8] {
        &self.cookie
    }
}

/// One authority file entry (the Xauthority format: big-endian `u16`
/// family, then the address, the display number, the authority name and
/// its data, each a big-endian `u16` length and bytes): `FamilyWild` with
/// an empty address and display number, so it matches the display the
/// run's Xvfb picks (`-displayfd`) on every transport. The file is only
/// ever handed to programs the run starts on that display.
fn authority_entry(cookie: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(10 + COOKIE_NAME.len() + cookie.len());
    let mut field = |b: &[u8]| {
        let len = u16::try_from(b.len()).expect("short field");
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(b);
    };
    field(&[]); // address
    field(&[]); // display number
    field(COOKIE_NAME);
    field(cookie);
    let mut entry = FAMILY_WILD.to_be_bytes().to_vec();
    entry.extend_from_slice(&out);
    entry
}

/// The installed `org.a11y.Bus` D-Bus service file (at-spi2-core).
pub(crate) fn a11y_service_file() -> Option<PathBuf> {
    A11Y_SERVICE_FILES
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

/// Missing capability helpers (stable ids and remediations).
pub(crate) fn missing(id: &str, reason: impl Into<String>, remediation: &str) -> MissingCapability {
    MissingCapability {
        id: id.into(),
        reason: reason.into(),
        remediation: remediation.into(),
    }
}

/// What the host lacks for an X display in the given mode (empty:
/// nothing): Xvfb for a virtual one, else an X11 `DISPLAY`.
pub(crate) fn display_missing(virtual_display: bool) -> Vec<MissingCapability> {
    let mut m = Vec::new();
    if virtual_display {
        if which("Xvfb").is_none() {
            m.push(missing(
                "xvfb",
                "--virtual-display needs Xvfb, which is not on PATH",
                "apt-get install -y xvfb",
            ));
        }
        return m;
    }
    let display = std::env::var("DISPLAY").ok().filter(|s| !s.is_empty());
    let wayland = std::env::var("WAYLAND_DISPLAY")
        .ok()
        .filter(|s| !s.is_empty());
    match (display, wayland) {
        (None, Some(w)) => m.push(missing(
            "x11-display",
            format!("only a Wayland display ({w}) is available; window capture and input need X11"),
            "run with --virtual-display, or start Xwayland and set DISPLAY",
        )),
        (None, None) => m.push(missing(
            "display",
            "no X display: DISPLAY is not set",
            "run with --virtual-display or set DISPLAY",
        )),
        _ => {}
    }
    m
}

/// What the host lacks for a run in the given mode (empty: nothing).
pub(crate) fn host_missing(virtual_display: bool) -> Vec<MissingCapability> {
    let mut m = display_missing(virtual_display);
    if virtual_display {
        if which("dbus-daemon").is_none() {
            m.push(missing(
                "dbus-daemon",
                "--virtual-display needs dbus-daemon for a private session bus, which is not on PATH",
                "apt-get install -y dbus",
            ));
        }
    } else if session_bus_from_env().is_none() {
        m.push(missing(
            "session-bus",
            "no D-Bus session bus: DBUS_SESSION_BUS_ADDRESS is not set and $XDG_RUNTIME_DIR/bus does not exist",
            "run with --virtual-display, or run ui-qa inside `dbus-run-session -- …`",
        ));
    }
    if a11y_service_file().is_none() {
        m.push(missing(
            "accessibility-bus",
            "the AT-SPI accessibility bus (org.a11y.Bus from at-spi2-core) is not installed",
            "apt-get install -y at-spi2-core",
        ));
    }
    m
}

/// The session bus address the host provides, if any.
pub(crate) fn session_bus_from_env() -> Option<String> {
    if let Some(a) = std::env::var("DBUS_SESSION_BUS_ADDRESS")
        .ok()
        .filter(|s| !s.is_empty())
    {
        return Some(a);
    }
    let rt = std::env::var("XDG_RUNTIME_DIR").ok()?;
    let p = Path::new(&rt).join("bus");
    p.exists().then(|| format!("unix:path={}", p.display()))
}

/// The host's own display and bus.
pub(crate) fn host_env() -> Result<DesktopEnv, DriverError> {
    if let Some(m) = host_missing(false).into_iter().next() {
        return Err(DriverError::blocked(DesktopCode::HostMissing, m));
    }
    Ok(DesktopEnv {
        display: std::env::var("DISPLAY").unwrap_or_default(),
        session_bus: session_bus_from_env().unwrap_or_default(),
        runtime_dir: None,
        owned: false,
        children: Vec::new(),
        xauth: None,
    })
}

pub(crate) fn private_dir() -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let base = std::env::temp_dir();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    for i in 0..100u32 {
        let p = base.join(format!(
            "ui-qa-desktop-{}-{nanos:x}-{i}",
            std::process::id()
        ));
        match std::fs::DirBuilder::new().mode(0o700).create(&p) {
            Ok(()) => return Ok(p),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("no free private directory name"))
}

async fn first_line(
    child: &mut tokio::process::Child,
    deadline: Deadline,
    what: &str,
) -> Result<String, DriverError> {
    let out = child.stdout.take().ok_or_else(|| {
        DriverError::new(
            DesktopCode::VirtualDisplayIo,
            format!("{what}: no stdout pipe"),
        )
    })?;
    let mut lines = BufReader::new(out).lines();
    let line = deadline.run(lines.next_line()).await;
    // Keep the pipe's read end alive with the child (dropping it would SIGPIPE later writes).
    let inner = lines.into_inner().into_inner();
    child.stdout = Some(inner);
    match line {
        Some(Ok(Some(l))) if !l.trim().is_empty() => Ok(l.trim().to_string()),
        Some(Ok(_)) => Err(DriverError::new(
            DesktopCode::VirtualDisplayFailed,
            format!("{what} exited before it was ready"),
        )),
        Some(Err(e)) => Err(DriverError::new(
            DesktopCode::VirtualDisplayIo,
            format!("{what}: {e}"),
        )),
        None => Err(DriverError::new(
            DesktopCode::VirtualDisplayTimeout,
            format!("{what} was not ready before the deadline"),
        )),
    }
}

fn io_error(code: DesktopCode, what: &str, e: std::io::Error) -> DriverError {
    DriverError::new(code, format!("{what}: {e}"))
}

/// Starts an owned Xvfb on a free display (`-displayfd`) and a private
/// session bus whose only activatable service is `org.a11y.Bus`.
pub(crate) async fn start_virtual(
    ctx: &SessionContext,
    deadline: Deadline,
) -> Result<DesktopEnv, DriverError> {
    if let Some(m) = host_missing(true).into_iter().next() {
        return Err(DriverError::blocked(DesktopCode::VirtualDisplayMissing, m));
    }
    let xvfb = which("Xvfb").expect("checked");
    let dbus = which("dbus-daemon").expect("checked");
    let service = a11y_service_file().expect("checked");
    let rt = private_dir()
        .map_err(|e| io_error(DesktopCode::VirtualDisplayIo, "private runtime dir", e))?;
    let mut env = DesktopEnv {
        display: String::new(),
        session_bus: String::new(),
        runtime_dir: Some(rt.clone()),
        owned: true,
        children: Vec::new(),
        xauth: None,
    };

    let (display, xauth) = start_xvfb(ctx, deadline, &xvfb, &rt, &mut env.children).await?;
    env.display = display;
    // Everything the bus starts (at-spi-bus-launcher sets a property on
    // the root window) is a client of the display too.
    let xauthority = xauth.file.clone();
    env.xauth = Some(xauth);

    let services = rt.join("services");
    std::fs::create_dir(&services)
        .and_then(|_| std::fs::copy(&service, services.join("org.a11y.Bus.service")).map(|_| ()))
        .map_err(|e| io_error(DesktopCode::VirtualDisplayIo, "bus service dir", e))?;
    let conf = rt.join("session.conf");
    std::fs::write(&conf, bus_config(&rt.join("bus"), &services))
        .map_err(|e| io_error(DesktopCode::VirtualDisplayIo, "bus config", e))?;
    let mut cmd = tokio::process::Command::new(&dbus);
    cmd.arg(format!("--config-file={}", conf.display()))
        .args(["--nofork", "--print-address=1"])
        .env("DISPLAY", &env.display)
        .env("XAUTHORITY", &xauthority)
        .env("XDG_RUNTIME_DIR", &rt)
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log_file(&rt, "dbus.log"));
    let mut d = ctx
        .processes
        .spawn(cmd, "dbus-daemon")
        .map_err(|e| io_error(DesktopCode::VirtualDisplaySpawn, "dbus-daemon", e))?;
    let addr = first_line(&mut d, deadline, "dbus-daemon").await;
    env.children.push(d);
    env.session_bus = addr?;
    Ok(env)
}

/// A fresh private directory `x11-auth-<n>` in the run's scratch (removed
/// with it, by the watchdog too if ui-qa is killed) holding a new
/// authority.
fn new_authority(ctx: &SessionContext) -> Result<XAuth, DriverError> {
    let fail = |e: String| {
        DriverError::new(
            DesktopCode::VirtualDisplayIo,
            format!("the X authority file: {e}"),
        )
    };
    for i in 0..100u32 {
        match ctx.evidence.scratch_dir(&format!("x11-auth-{i}")) {
            Ok(dir) => return XAuth::create(&dir).map_err(|e| fail(e.to_string())),
            Err(qa_core::evidence::EvidenceError::Exists(_)) => continue,
            Err(e) => return Err(fail(e.to_string())),
        }
    }
    Err(fail("no free scratch directory name".into()))
}

/// Starts an owned Xvfb on a free display (`-displayfd`), private to the
/// run (see the module docs), its log in `dir`; its handle goes to
/// `children` (started or not); the display name (`:N`) and its authority.
pub(crate) async fn start_xvfb(
    ctx: &SessionContext,
    deadline: Deadline,
    xvfb: &Path,
    dir: &Path,
    children: &mut Vec<tokio::process::Child>,
) -> Result<(String, XAuth), DriverError> {
    let xauth = new_authority(ctx)?;
    let mut cmd = tokio::process::Command::new(xvfb);
    cmd.arg("-auth")
        .arg(&xauth.file)
        .args([
            "-displayfd",
            "1",
            "-screen",
            "0",
            "1280x800x24",
            "-nolisten",
            "tcp",
            "-noreset",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log_file(dir, "xvfb.log"));
    let mut x = ctx
        .processes
        .spawn(cmd, "xvfb")
        .map_err(|e| io_error(DesktopCode::VirtualDisplaySpawn, "Xvfb", e))?;
    let n = first_line(&mut x, deadline, "Xvfb").await;
    children.push(x);
    let n = n?;
    if n.parse::<u32>().is_err() {
        return Err(DriverError::new(
            DesktopCode::VirtualDisplayFailed,
            format!("Xvfb reported an unexpected display number {n:?}"),
        ));
    }
    Ok((format!(":{n}"), xauth))
}

fn log_file(dir: &Path, name: &str) -> Stdio {
    std::fs::File::create(dir.join(name))
        .map(Stdio::from)
        .unwrap_or_else(|_| Stdio::null())
}

/// The private bus configuration: one listening socket, EXTERNAL auth, and a
/// service directory holding only `org.a11y.Bus` (no portals, no gvfs).
pub(crate) fn bus_config(socket: &Path, services: &Path) -> String {
    format!(
        r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <keep_umask/>
  <listen>unix:path={}</listen>
  <auth>EXTERNAL</auth>
  <servicedir>{}</servicedir>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"#,
        socket.display(),
        services.display()
    )
}

/// Removes the private runtime directory (after every process is gone).
pub(crate) fn remove_runtime_dir(env: &DesktopEnv) {
    if let Some(d) = &env.runtime_dir {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_authority_file_is_private_and_holds_one_wild_cookie() {
        let dir = tempfile::tempdir().unwrap();
        let a = XAuth::create(dir.path()).unwrap();
        let meta = std::fs::metadata(&a.file).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        let b = std::fs::read(&a.file).unwrap();
        let mut want = vec![0xff, 0xff, 0, 0, 0, 0, 0, 18];
        want.extend_from_slice(b"MIT-MAGIC-COOKIE-1");
        want.extend_from_slice(&[0, 16]);
        want.extend_from_slice(a.cookie());
        assert_eq!(b, want);
        // Fresh randomness each time, never a file written over.
        let other = tempfile::tempdir().unwrap();
        assert_ne!(XAuth::create(other.path()).unwrap().cookie(), a.cookie());
        assert!(XAuth::create(dir.path()).is_err());
        // The cookie is never printed.
        let shown = format!("{a:?}");
        assert!(!shown.contains(&format!("{:?}", a.cookie())), "{shown}");
    }
}
