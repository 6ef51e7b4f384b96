//! An application that embeds Chromium (`target.app`): started like any
//! program the run owns (its own session and process group, ended at
//! cleanup with everything it started), given the DevTools switch the flow
//! names, and connected to.
//!
//! - `pipe`: `--remote-debugging-pipe` with the app's descriptors 3 and 4
//!   (as the run's own Chromium); nothing else on the machine can reach it.
//! - `port`: a free loopback port, given as `--remote-debugging-port=PORT`
//!   and `QTWEBENGINE_REMOTE_DEBUGGING=127.0.0.1:PORT` (Qt WebEngine has no
//!   pipe), asked for its WebSocket (`/json/version`) until it answers, and
//!   then watched by a [`PortGuard`]: a connection the run did not make
//!   ends the app.

use crate::cdp::{Cdp, CdpEvent};
use crate::codes::WebCode;
use crate::contain::PortGuard;
use qa_core::flow::EmbeddedApp;
use qa_core::{Deadline, DriverError, MissingCapability, Note, SessionContext};
use std::path::{Path, PathBuf};
use std::sync::Arc;
#[cfg(unix)]
use std::time::Duration;
use tokio::sync::mpsc::UnboundedReceiver;

/// Longest wait for the app's DevTools after it starts.
#[cfg(unix)]
const DEVTOOLS_WAIT: Duration = Duration::from_secs(30);

/// A launched app, connected.
pub(crate) struct LaunchedApp {
    /// The DevTools connection.
    pub cdp: Arc<Cdp>,
    /// Its events.
    pub events: UnboundedReceiver<CdpEvent>,
    /// The app's process (its own session and process group).
    pub child: tokio::process::Child,
    /// Its pid.
    pub pid: u32,
    /// The watch on its port (`"devtools": "port"`).
    pub guard: Option<PortGuard>,
    /// What the result says about it.
    pub notes: Vec<Note>,
}

/// The app's program: `argv[0]` on `PATH`, or a path relative to the flow's
/// directory; BLOCKED when there is none.
pub(crate) fn program(app: &EmbeddedApp, base_dir: &Path) -> Result<PathBuf, MissingCapability> {
    let name = &app.launch.argv[0];
    let candidate = if Path::new(name).is_relative() && name.contains(['/', '\\']) {
        base_dir.join(name).display().to_string()
    } else {
        name.clone()
    };
    qa_core::host::which(&candidate).ok_or_else(|| MissingCapability {
        id: "application".into(),
        reason: format!("{name:?} was not found on PATH or is not executable"),
        remediation: "install the application, or give its path in target.app.launch.argv[0] (relative paths start at the flow's folder)".into(),
    })
}

/// Starts `app` with `display` (the variables that reach the run's
/// display) and connects to its DevTools within `deadline`.
#[cfg(unix)]
pub(crate) async fn launch(
    app: &EmbeddedApp,
    base_dir: &Path,
    ctx: &SessionContext,
    display: Vec<(String, String)>,
    deadline: Deadline,
) -> Result<LaunchedApp, DriverError> {
    use qa_core::flow::{DevToolsChannel, Home};
    use qa_core::NoteKind;
    use std::process::Stdio;
    let exe = program(app, base_dir).map_err(|m| DriverError::blocked(WebCode::AppNotFound, m))?;
    let l = &app.launch;
    let mut cmd = tokio::process::Command::new(&exe);
    cmd.args(&l.argv[1..]);
    cmd.current_dir(match &l.cwd {
        Some(c) => base_dir.join(c),
        None => base_dir.to_path_buf(),
    });
    let mut notes = Vec::new();
    // Chromium refuses to run as root with its sandbox on.
    if qa_core::Host::current().is_root {
        cmd.arg("--no-sandbox")
            .env("QTWEBENGINE_DISABLE_SANDBOX", "1");
        notes.push(Note::new(
            NoteKind::Environment,
            "the app runs as root, so ui-qa started it with --no-sandbox (QTWEBENGINE_DISABLE_SANDBOX=1): Chromium refuses its sandbox to root",
        ));
    }
    cmd.envs(display);
    if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none() {
        // Without a session bus the app's D-Bus library would start one of
        // its own that outlives it: give it none to find.
        cmd.env("DBUS_SESSION_BUS_ADDRESS", "disabled:");
    }
    if l.home.unwrap_or_default() == Home::Fresh {
        let home = ctx
            .evidence
            .fresh_home()
            .map_err(|e| DriverError::new(WebCode::AppExited, e.to_string()))?;
        cmd.envs(home);
    }
    cmd.envs(&l.env)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(false);
    let within = Deadline::after(DEVTOOLS_WAIT).min(deadline);
    let tail = super::launch::Tail::default();
    match app.devtools {
        DevToolsChannel::Pipe => {
            cmd.arg("--remote-debugging-pipe");
            let pipes = super::launch::prepare_pipes(&mut cmd)?;
            let mut child = spawn(ctx, cmd, &exe, &tail)?;
            let pid = child.id().unwrap_or(0);
            let (to, from) = pipes.ours();
            let (cdp, events) =
                Cdp::over_pipe(to, from).map_err(|e| DriverError::new(WebCode::CdpConnect, e))?;
            let bound = within.remaining().max(Duration::from_millis(1));
            match cdp
                .call_with_timeout(None, "Browser.getVersion", serde_json::json!({}), bound)
                .await
            {
                Ok(_) => Ok(LaunchedApp {
                    cdp,
                    events,
                    child,
                    pid,
                    guard: None,
                    notes,
                }),
                Err(crate::cdp::CdpError::Timeout { .. }) => Err(no_devtools(
                    "did not answer on its DevTools pipe",
                    bound,
                    "use \"devtools\": \"port\" (Qt WebEngine never answers on the pipe), or check that the app hands the Chromium switches on its command line to its runtime",
                    &tail,
                )),
                Err(e) => Err(exited(&mut child, &e.to_string(), &tail).await),
            }
        }
        DevToolsChannel::Port => {
            let port = free_port()?;
            cmd.arg(format!("--remote-debugging-port={port}"))
                .env("QTWEBENGINE_REMOTE_DEBUGGING", format!("127.0.0.1:{port}"));
            let mut child = spawn(ctx, cmd, &exe, &tail)?;
            let pid = child.id().unwrap_or(0);
            let endpoint = format!("http://127.0.0.1:{port}");
            let mut ours = Vec::new();
            let started = std::time::Instant::now();
            let ws = loop {
                if let Ok(Some(_)) = child.try_wait() {
                    return Err(
                        exited(&mut child, "before its DevTools port answered", &tail).await,
                    );
                }
                let attempt = Deadline::after_ms(2000).min(within);
                match super::endpoint::websocket_url_noting(&endpoint, attempt, &mut ours).await {
                    Ok(ws) => break ws,
                    Err(_) if !within.expired() => {
                        tokio::time::sleep(Duration::from_millis(100)).await
                    }
                    Err(_) => {
                        return Err(no_devtools(
                            &format!("opened no DevTools port on 127.0.0.1:{port}"),
                            started.elapsed(),
                            "use \"devtools\": \"pipe\" for a Chromium, CEF or Electron app; a Qt WebEngine app must leave QTWEBENGINE_REMOTE_DEBUGGING to ui-qa",
                            &tail,
                        ))
                    }
                }
            };
            let c = Cdp::over_websocket(&ws, within.remaining().max(Duration::from_millis(1)))
                .await
                .map_err(|why| {
                    DriverError::new(
                        WebCode::CdpConnect,
                        format!("could not open the app's DevTools WebSocket: {why}"),
                    )
                })?;
            // The port must be the app's: a process of another user that
            // took it first (the app then had none) is never driven.
            if !crate::contain::same_user(c.local, c.peer) {
                c.cdp.close();
                return Err(DriverError::new(
                    WebCode::AppForeignConnection,
                    format!("127.0.0.1:{port} is held by a process of another user, not by the app: ui-qa never drives it"),
                )
                .with_remediation("use \"devtools\": \"pipe\" where the app supports it; otherwise find the process that listens on the app's port (any local user can take a port first)"));
            }
            ours.push(c.local.port());
            let (cdp, processes) = (c.cdp.clone(), ctx.processes.clone());
            let guard = PortGuard::start(port, ours, move |_| {
                // The app ends, and with it every connection to the port.
                processes.hang_up(pid);
                cdp.close();
            })
            .map_err(|e| DriverError::new(WebCode::AppExited, e.to_string()))?;
            notes.push(Note::new(
                NoteKind::Environment,
                format!(
                    "the app's DevTools listen on 127.0.0.1:{port} (\"devtools\": \"port\"): any local process could connect, so ui-qa watched the port and would have ended the app at the first connection it did not make; \"devtools\": \"pipe\" leaves nothing to watch"
                ),
            ));
            Ok(LaunchedApp {
                cdp: c.cdp,
                events: c.events,
                child,
                pid,
                guard: Some(guard),
                notes,
            })
        }
    }
}

/// Windows: `target.app` is not built here yet.
#[cfg(not(unix))]
pub(crate) async fn launch(
    _app: &EmbeddedApp,
    _base_dir: &Path,
    _ctx: &SessionContext,
    _display: Vec<(String, String)>,
    _deadline: Deadline,
) -> Result<LaunchedApp, DriverError> {
    Err(DriverError::blocked(
        WebCode::AppNoDevtools,
        MissingCapability {
            id: "app".into(),
            reason: format!(
                "target.app runs on Linux and macOS in this build, not on {}",
                std::env::consts::OS
            ),
            remediation: "drive the app's DevTools as a browser ui-qa did not start: start it with --remote-debugging-port and use target.browser.connect with \"page\": \"existing\"".into(),
        },
    ))
}

/// Spawns the app through the run's process owner, its stderr into `tail`.
#[cfg(unix)]
fn spawn(
    ctx: &SessionContext,
    cmd: tokio::process::Command,
    exe: &Path,
    tail: &super::launch::Tail,
) -> Result<tokio::process::Child, DriverError> {
    let mut child = ctx.processes.spawn(cmd, "app").map_err(|e| {
        DriverError::new(
            WebCode::AppExited,
            format!("could not start {}: {e}", exe.display()),
        )
    })?;
    if let Some(err) = child.stderr.take() {
        super::launch::collect_stderr(err, tail);
    }
    Ok(child)
}

/// A free loopback port (the app binds it right after).
#[cfg(unix)]
fn free_port() -> Result<u16, DriverError> {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| {
            DriverError::new(
                WebCode::AppExited,
                format!("no free loopback port for the app's DevTools: {e}"),
            )
        })
}

/// The last lines of the app's stderr.
#[cfg(unix)]
fn tail_text(tail: &super::launch::Tail) -> String {
    let t = tail.lock().expect("tail lock");
    let s = String::from_utf8_lossy(&t).into_owned();
    let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(8)..].join("\n")
}

/// BLOCKED: the app is up but its DevTools never answered.
#[cfg(unix)]
fn no_devtools(
    what: &str,
    waited: Duration,
    remediation: &str,
    tail: &super::launch::Tail,
) -> DriverError {
    DriverError::blocked(
        WebCode::AppNoDevtools,
        MissingCapability {
            id: "devtools".into(),
            reason: format!(
                "the app {what} within {} ms; stderr tail:\n{}",
                waited.as_millis(),
                tail_text(tail)
            ),
            remediation: remediation.into(),
        },
    )
}

/// The app ended (or broke its pipe) while starting.
#[cfg(unix)]
async fn exited(
    child: &mut tokio::process::Child,
    what: &str,
    tail: &super::launch::Tail,
) -> DriverError {
    let _ = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
    let status = match child.try_wait() {
        Ok(Some(s)) => s.to_string(),
        _ => "still running".into(),
    };
    DriverError::new(
        WebCode::AppExited,
        format!(
            "the app ended its DevTools connection {what} ({status}); stderr tail:\n{}",
            tail_text(tail)
        ),
    )
    .with_remediation("check the stderr tail: run the app's argv by hand to see why it stops")
}
