//! Opening a session: the probe (the privacy grants and whether the
//! target can be found; never launches it), and the launch (owned: its
//! own process group, children tracked by qa-core's process layer) or
//! attach (by pid, bundle id, or application name or window title; never
//! signalled), then waiting for the application's first window.

use super::app::{App, Win};
use super::ffi::{self, AxElement};
use super::objc;
use super::session::Mac;
use super::video;
use crate::launch::{self, Program};
use crate::permissions;
use qa_core::flow::{ApplicationTarget, Target};
use qa_core::host::which;
use qa_core::process::DEFAULT_GRACE;
use qa_core::{
    Capability, Deadline, DriverError, Flow, MissingCapability, RunOptions, SessionContext,
    SurfaceSession,
};
use qa_desktop::{app_logs, DesktopCode, DesktopSession};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a launched application may take to show its first window.
const FIRST_WINDOW_MS: u64 = 20_000;

/// How often the windows are looked at while waiting.
const LOOK_EVERY: Duration = Duration::from_millis(100);

/// The bound on every AX message (`AXUIElementSetMessagingTimeout`): a
/// hung application fails a call instead of hanging a step.
const AX_TIMEOUT_S: f32 = 3.0;

fn app_target(flow: &Flow) -> Result<&ApplicationTarget, DriverError> {
    match &flow.target {
        Target::Desktop(a) => Ok(a),
        Target::Browser(_) | Target::Terminal(_) => Err(DriverError::new(
            DesktopCode::TargetKind,
            "the flow's target is not an application",
        )),
    }
}

fn not_found(program: &str, why: &str) -> MissingCapability {
    MissingCapability {
        id: "application".into(),
        reason: format!("{program:?} {why}"),
        remediation: "give application.launch.argv[0] as a program on PATH, the path of an executable or of a .app bundle, or a bundle identifier LaunchServices knows (com.apple.TextEdit)".into(),
    }
}

/// The executable `argv0` launches and the application's name.
fn resolve(argv0: &str, base: &Path) -> Result<(PathBuf, String), MissingCapability> {
    let stem = |p: &Path| {
        p.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| argv0.to_string())
    };
    match launch::classify(argv0, base, which) {
        Program::Executable(p) => {
            let name = stem(&p);
            Ok((p, name))
        }
        Program::Bundle(app) => match objc::bundle_executable(&app) {
            Some(exe) => Ok((exe, stem(&app))),
            None => Err(not_found(argv0, "is a .app bundle without an executable (CFBundleExecutable)")),
        },
        Program::BundleId(id) => {
            let Some(app) = objc::bundle_for_id(&id) else {
                return Err(not_found(argv0, "is neither on PATH nor a bundle identifier LaunchServices knows"));
            };
            match objc::bundle_executable(&app) {
                Some(exe) => Ok((exe, stem(&app))),
                None => Err(not_found(argv0, &format!("resolves to {} which has no executable", app.display()))),
            }
        }
        Program::NotFound => Err(not_found(argv0, "was not found on PATH, is not an executable file, and is not a .app bundle or a bundle identifier")),
    }
}

/// What the target needs that cannot be found (blocking).
fn target_missing(a: &ApplicationTarget, base: &Path) -> (Vec<Capability>, Vec<MissingCapability>) {
    let (mut present, mut missing) = (Vec::new(), Vec::new());
    if let Some(spec) = &a.launch {
        match resolve(&spec.argv[0], base) {
            Ok((exe, _)) => present.push(Capability {
                id: "application".into(),
                detail: exe.display().to_string(),
            }),
            Err(m) => missing.push(m),
        }
    }
    if let Some(pid) = a.pid {
        if objc::app_for_pid(pid as i32).is_none() {
            missing.push(MissingCapability {
                id: "application".into(),
                reason: format!("no running application has pid {pid}"),
                remediation: "start the application first, or give the pid of a running one in application.pid".into(),
            });
        }
    }
    if let Some(id) = &a.bundle_id {
        if objc::running_with_bundle_id(id).is_empty() {
            missing.push(MissingCapability {
                id: "application".into(),
                reason: format!("no running application has the bundle identifier {id:?} (bundleId attaches; it never launches)"),
                remediation: format!("start it first (open -b {id}), or let the run launch and own it: application.launch.argv [\"{id}\"]"),
            });
        }
    }
    (present, missing)
}

/// The probe: the privacy grants, then the target; never launches it.
pub(crate) async fn probe(
    flow: &Flow,
    options: &RunOptions,
) -> (Vec<Capability>, Vec<MissingCapability>) {
    let program = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "ui-qa".into());
    let mut missing = permissions::missing(
        permissions::Grants::read(),
        permissions::needs_screen_recording(flow, options),
        &program,
    );
    let mut present = Vec::new();
    if let Target::Desktop(a) = &flow.target {
        let mut unsupported = launch::target_unsupported(a);
        unsupported.append(&mut missing);
        missing = unsupported;
        let (a, base) = (a.clone(), flow.base_dir.clone());
        if let Ok((p, m)) = tokio::task::spawn_blocking(move || target_missing(&a, &base)).await {
            present.extend(p);
            missing.extend(m);
        }
    }
    (present, missing)
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

fn no_process(why: String) -> DriverError {
    DriverError::new(DesktopCode::AttachNoProcess, why).with_remediation(
        "give the running application's pid in application.pid, its bundle identifier in application.bundleId, or its name or a window's exact title in application.name",
    )
}

/// The process an attach names (blocking): `pid`, the one application
/// with `bundleId`, or the one whose name — else one of whose window
/// titles — is `name`.
fn attached(a: &ApplicationTarget) -> Result<(i32, String), DriverError> {
    if let Some(pid) = a.pid {
        let pid = pid as i32;
        return match objc::app_for_pid(pid) {
            Some(app) => Ok((pid, app.name)),
            None => Err(no_process(format!("no running application has pid {pid}"))),
        };
    }
    if let Some(id) = &a.bundle_id {
        return match objc::running_with_bundle_id(id).as_slice() {
            [] => Err(no_process(format!("no running application has the bundle identifier {id:?}"))),
            [one] => Ok((one.pid, one.name.clone())),
            many => Err(no_process(format!(
                "{} running applications have the bundle identifier {id:?} (pids {}); attach to one by pid",
                many.len(),
                many.iter().map(|m| m.pid.to_string()).collect::<Vec<_>>().join(", ")
            ))),
        };
    }
    let name = a.name.clone().unwrap_or_default();
    let me = std::process::id() as i32;
    let apps: Vec<objc::RunningApp> = objc::running_apps()
        .into_iter()
        .filter(|r| r.pid != me)
        .collect();
    let by_name: Vec<&objc::RunningApp> = apps.iter().filter(|r| r.name == name).collect();
    if let [one] = by_name.as_slice() {
        return Ok((one.pid, one.name.clone()));
    }
    if by_name.len() > 1 {
        return Err(no_process(format!(
            "{} running applications are named {name:?}; attach to one by pid",
            by_name.len()
        )));
    }
    let titled: Vec<&objc::RunningApp> = apps
        .iter()
        .filter(|r| !r.name.is_empty())
        .filter(|r| {
            AxElement::application(r.pid).is_some_and(|ax| {
                probe_app(r, ax)
                    .windows()
                    .iter()
                    .any(|w| w.info.title == name)
            })
        })
        .collect();
    match titled.as_slice() {
        [one] => Ok((one.pid, name)),
        [] => Err(no_process(format!(
            "no running application is named {name:?} or has a window titled so"
        ))),
        many => Err(no_process(format!(
            "{} applications have a window titled {name:?} (pids {}); attach to one by pid",
            many.len(),
            many.iter()
                .map(|m| m.pid.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

fn probe_app(r: &objc::RunningApp, ax: AxElement) -> App {
    App {
        name: r.name.clone(),
        pid: r.pid,
        ax,
        window_title: None,
        picked: Mutex::new(None),
    }
}

async fn open_inner(
    flow: &Flow,
    ctx: &SessionContext,
) -> Result<Box<dyn SurfaceSession>, DriverError> {
    let target = app_target(flow)?.clone();
    let (_, miss) = probe(flow, &ctx.options).await;
    if let Some(m) = miss.into_iter().next() {
        let code = match (m.id.as_str(), &target.launch) {
            ("application", Some(_)) => DesktopCode::LaunchNotFound,
            ("application", None) => DesktopCode::AttachNoProcess,
            _ => DesktopCode::HostMissing,
        };
        return Err(DriverError::blocked(code, m));
    }
    tokio::task::spawn_blocking(|| ffi::set_messaging_timeout(AX_TIMEOUT_S))
        .await
        .ok();
    let deadline = ctx.flow_deadline;
    let mut launched = None;
    let (pid, name) = match &target.launch {
        Some(spec) => {
            let (argv0, base) = (spec.argv[0].clone(), flow.base_dir.clone());
            let (program, name) = tokio::task::spawn_blocking(move || resolve(&argv0, &base))
                .await
                .map_err(|e| DriverError::new(DesktopCode::LaunchFailed, e.to_string()))?
                .map_err(|m| DriverError::blocked(DesktopCode::LaunchNotFound, m))?;
            let mut cmd = tokio::process::Command::new(&program);
            cmd.args(&spec.argv[1..]);
            cmd.current_dir(match &spec.cwd {
                Some(cwd) => flow.base_dir.join(cwd),
                None => flow.base_dir.clone(),
            });
            // A fresh home in the run's scratch (unless the flow inherits
            // the user's); the flow's own env comes after, so it wins.
            cmd.envs(qa_desktop::home::vars(spec, ctx)?);
            cmd.envs(&spec.env);
            let (stdout, stderr) = app_logs::sinks(ctx);
            cmd.stdin(Stdio::null()).stdout(stdout).stderr(stderr);
            let child = ctx.processes.spawn(cmd, "app").map_err(|e| {
                DriverError::new(
                    DesktopCode::LaunchFailed,
                    format!("cannot start {}: {e}", program.display()),
                )
            })?;
            let pid = child.id().unwrap_or(0) as i32;
            launched = Some(child);
            (pid, name)
        }
        None => {
            let t = target.clone();
            tokio::task::spawn_blocking(move || attached(&t))
                .await
                .map_err(|e| DriverError::new(DesktopCode::AttachNoProcess, e.to_string()))??
        }
    };
    let ax = AxElement::application(pid).ok_or_else(|| {
        DriverError::new(
            DesktopCode::AppNotAccessible,
            format!("AXUIElementCreateApplication({pid}) returned nothing"),
        )
    })?;
    let app = Arc::new(App {
        name,
        pid,
        ax,
        window_title: target.window.as_ref().and_then(|w| w.title.clone()),
        picked: Mutex::new(None),
    });
    wait_first_window(
        &app,
        launched.as_mut(),
        deadline.min(Deadline::after_ms(FIRST_WINDOW_MS)),
    )
    .await?;
    let video = video::start(ctx, app.clone());
    Ok(Box::new(DesktopSession::new(
        ctx.clone(),
        Mac {
            ctx: ctx.clone(),
            app,
            launched,
            video,
        },
    )))
}

/// Waits until the application lists a window in `kAXWindowsAttribute`;
/// a launched one that exits first fails the open with its exit status.
async fn wait_first_window(
    app: &Arc<App>,
    mut launched: Option<&mut tokio::process::Child>,
    deadline: Deadline,
) -> Result<(), DriverError> {
    loop {
        let a = app.clone();
        let windows: Vec<Win> = tokio::task::spawn_blocking(move || a.windows())
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
                .with_remediation("read its output in artifacts/logs (app-stdout, app-stderr)"));
            }
        }
        if deadline.expired() {
            return Err(DriverError::new(
                DesktopCode::AppNotAccessible,
                format!(
                    "the application (pid {}) listed no window in kAXWindowsAttribute within {} ms",
                    app.pid, FIRST_WINDOW_MS
                ),
            )
            .with_remediation("check that it shows a window (some apps open a file panel or nothing when started directly) and that the Accessibility grant is given"));
        }
        tokio::time::sleep(LOOK_EVERY.min(deadline.remaining())).await;
    }
}
