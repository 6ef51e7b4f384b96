//! Opening a session: the probe (host facts only, never the target), and
//! the launch (owned: in the run's Job Object) or attach (by pid or window
//! title; never signalled), then waiting for the application's first
//! window.

use super::app::{titles, App};
use super::com::Com;
use super::session::Windows;
use super::video;
use super::win32;
use crate::handoff::{self, HostFacts};
use qa_core::flow::{ApplicationTarget, Target};
use qa_core::host::which;
use qa_core::process::DEFAULT_GRACE;
use qa_core::{
    Capability, Deadline, DriverError, Flow, MissingCapability, RunOptions, SessionContext,
    SurfaceSession,
};
use qa_desktop::{app_logs, DesktopCode, DesktopSession};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a launched application may take to show its first window.
const FIRST_WINDOW_MS: u64 = 20_000;

/// How often the windows are looked at while waiting.
const LOOK_EVERY: Duration = Duration::from_millis(100);

fn app_target(flow: &Flow) -> Result<&ApplicationTarget, DriverError> {
    match &flow.target {
        Target::Desktop(a) => Ok(a),
        Target::Browser(_) | Target::Terminal(_) => Err(DriverError::new(
            DesktopCode::TargetKind,
            "the flow's target is not an application",
        )),
    }
}

/// The host facts, read off the async runtime (creating the UI Automation
/// client joins a thread to COM: a fresh thread, not a pool one).
fn host_facts() -> HostFacts {
    let uia = std::thread::spawn(|| {
        uiautomation::UIAutomation::new()
            .map(|_| ())
            .map_err(|e| e.to_string())
    })
    .join()
    .unwrap_or_else(|_| Err("the UI Automation check panicked".into()));
    HostFacts {
        session: win32::own_session(),
        input_desktop: win32::input_desktop(),
        uia,
    }
}

/// The probe: host facts only; never launches the target.
pub(crate) async fn probe(
    flow: &Flow,
    options: &RunOptions,
) -> (Vec<Capability>, Vec<MissingCapability>) {
    let _ = options;
    let facts = tokio::task::spawn_blocking(host_facts).await.ok();
    let mut missing = Vec::new();
    let mut present = Vec::new();
    match &facts {
        Some(f) => {
            if let Some(s) = f.session {
                present.push(Capability {
                    id: "session".into(),
                    detail: format!("session {s}"),
                });
            }
            missing.extend(handoff::host_missing(f));
        }
        None => missing.push(MissingCapability {
            id: "ui-automation".into(),
            reason: "the host check did not finish".into(),
            remediation: "run ui-qa probe again; if it persists, report it".into(),
        }),
    }
    if let Target::Desktop(a) = &flow.target {
        let mut unsupported = handoff::target_unsupported(a);
        unsupported.append(&mut missing);
        missing = unsupported;
        if let Some(spec) = &a.launch {
            match which(&spec.argv[0]) {
                Some(p) => present.push(Capability {
                    id: "application".into(),
                    detail: p.display().to_string(),
                }),
                None => missing.push(not_found(&spec.argv[0])),
            }
        }
        if let Some(pid) = a.pid {
            let access = tokio::task::spawn_blocking(move || {
                win32::process_exists(pid).then(|| win32::target_access(pid))
            })
            .await
            .ok()
            .flatten();
            match access {
                None => missing.push(MissingCapability {
                    id: "application".into(),
                    reason: format!("no process with pid {pid} is running"),
                    remediation: "start the application first, or give the pid of a running one in application.pid".into(),
                }),
                Some(a) => missing.extend(handoff::target_missing(a)),
            }
        }
    }
    (present, missing)
}

fn not_found(program: &str) -> MissingCapability {
    MissingCapability {
        id: "application".into(),
        reason: format!("{program:?} was not found on PATH (with PATHEXT) or is not a file"),
        remediation:
            "install the application or give its absolute path in application.launch.argv[0]".into(),
    }
}

/// Opens a session; on failure ends whatever was started.
pub(crate) async fn open(
    flow: &Flow,
    ctx: SessionContext,
) -> Result<Box<dyn SurfaceSession>, DriverError> {
    match open_inner(flow, &ctx).await {
        Ok(s) => Ok(s),
        Err(e) => {
            let _ = ctx
                .processes
                .end_all(DEFAULT_GRACE, Deadline::after_ms(5000))
                .await;
            Err(e)
        }
    }
}

/// The process an attach names: `pid`, or the owner of the top-level
/// window titled `name`.
async fn attached_pid(a: &ApplicationTarget) -> Result<(u32, String), DriverError> {
    if let Some(pid) = a.pid {
        let exists = tokio::task::spawn_blocking(move || win32::process_exists(pid))
            .await
            .unwrap_or(false);
        if !exists {
            return Err(DriverError::new(
                DesktopCode::AttachNoProcess,
                format!("no process with pid {pid} is running"),
            ));
        }
        let name = a.name.clone().unwrap_or_else(|| format!("pid {pid}"));
        return Ok((pid, name));
    }
    let name = a.name.clone().unwrap_or_default();
    let wanted = name.clone();
    let windows = tokio::task::spawn_blocking(win32::top_levels)
        .await
        .unwrap_or_default();
    match windows.iter().find(|w| w.title == wanted) {
        Some(w) => Ok((w.pid, name)),
        None => Err(DriverError::new(
            DesktopCode::AttachNoProcess,
            format!(
                "no top-level window is titled {wanted:?} (the visible windows: {})",
                titles(&windows)
            ),
        )
        .with_remediation(
            "give the exact window title in application.name, or the process id in application.pid",
        )),
    }
}

async fn open_inner(
    flow: &Flow,
    ctx: &SessionContext,
) -> Result<Box<dyn SurfaceSession>, DriverError> {
    let target = app_target(flow)?.clone();
    let (_, miss) = probe(flow, &ctx.options).await;
    if let Some(m) = miss.into_iter().next() {
        return Err(DriverError::blocked(DesktopCode::HostMissing, m));
    }
    let deadline = ctx.flow_deadline;
    let mut launched = None;
    let (pid, name) = match &target.launch {
        Some(spec) => {
            let program = which(&spec.argv[0]).ok_or_else(|| {
                DriverError::blocked(DesktopCode::LaunchNotFound, not_found(&spec.argv[0]))
            })?;
            let mut cmd = tokio::process::Command::new(&program);
            cmd.args(&spec.argv[1..]);
            cmd.current_dir(match &spec.cwd {
                Some(cwd) => flow.base_dir.join(cwd),
                None => flow.base_dir.clone(),
            });
            cmd.envs(&spec.env);
            let (stdout, stderr) = app_logs::sinks(ctx);
            cmd.stdin(Stdio::null()).stdout(stdout).stderr(stderr);
            let child = ctx.processes.spawn(cmd, "app").map_err(|e| {
                DriverError::new(
                    DesktopCode::LaunchFailed,
                    format!("cannot start {:?}: {e}", spec.argv[0]),
                )
            })?;
            let pid = child.id().unwrap_or(0);
            launched = Some(child);
            let name = program
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| spec.argv[0].clone());
            (pid, name)
        }
        None => attached_pid(&target).await?,
    };
    let app = Arc::new(App {
        name,
        pid,
        window_title: target.window.as_ref().and_then(|w| w.title.clone()),
        picked: Mutex::new(None),
    });
    wait_first_window(
        &app,
        launched.as_mut(),
        deadline.min(Deadline::after_ms(FIRST_WINDOW_MS)),
    )
    .await?;
    let com = tokio::task::spawn_blocking(Com::start)
        .await
        .map_err(|e| e.to_string())
        .and_then(|r| r)
        .map_err(|e| {
            DriverError::blocked(
                DesktopCode::HostMissing,
                MissingCapability {
                    id: "ui-automation".into(),
                    reason: format!("the UI Automation client could not be created: {e}"),
                    remediation: "run ui-qa in a logged-on desktop session; check that UIAutomationCore.dll is intact".into(),
                },
            )
        })?;
    let video = video::start(ctx, app.clone());
    Ok(Box::new(DesktopSession::new(
        ctx.clone(),
        Windows {
            ctx: ctx.clone(),
            com,
            app,
            launched,
            video,
        },
    )))
}

/// Waits until the application shows a top-level window; a launched one
/// that exits first fails the open with its exit status.
async fn wait_first_window(
    app: &Arc<App>,
    mut launched: Option<&mut tokio::process::Child>,
    deadline: Deadline,
) -> Result<(), DriverError> {
    loop {
        let a = app.clone();
        let windows = tokio::task::spawn_blocking(move || a.windows())
            .await
            .unwrap_or_default();
        if !windows.is_empty() {
            return Ok(());
        }
        if let Some(child) = launched.as_deref_mut() {
            if let Ok(Some(st)) = child.try_wait() {
                return Err(DriverError::new(
                    DesktopCode::LaunchExited,
                    format!("the application exited ({st}) before it showed a window"),
                )
                .with_remediation(
                    "read its output in artifacts/logs (app-stdout, app-stderr); a program that hands off to an already running instance exits at once — close that instance or attach to it",
                ));
            }
        }
        if deadline.expired() {
            return Err(DriverError::new(
                DesktopCode::AppNotAccessible,
                format!(
                    "the application (pid {}) showed no top-level window within {} ms",
                    app.pid, FIRST_WINDOW_MS
                ),
            ));
        }
        tokio::time::sleep(LOOK_EVERY.min(deadline.remaining())).await;
    }
}
