//! Opening a session: host facts for the probe, the display and buses, and
//! the launch (owned) or attach (never signalled); waiting for the
//! application to register lives in `register.rs`.

use super::app::App;
use super::bus;
use super::capture::X11;
use super::display::{self, missing, DesktopEnv};
use super::register::{wait_registration, ATTACH_REGISTRATION_MS, REGISTRATION_MS};
use super::session::Linux;
use super::tree::Reads;
use super::video;
use qa_core::flow::{ApplicationTarget, Target};
use qa_core::host::which;
use qa_core::process::DEFAULT_GRACE;
use qa_core::{
    Capability, Deadline, DriverError, Flow, RunOptions, SessionContext, SurfaceSession,
};
use qa_desktop::{app_logs, DesktopCode, DesktopSession};
use std::process::Stdio;
use std::sync::Arc;

fn app_target(flow: &Flow) -> Result<&ApplicationTarget, DriverError> {
    match &flow.target {
        Target::Desktop(a) => Ok(a),
        Target::Browser(_) | Target::Terminal(_) => Err(DriverError::new(
            DesktopCode::TargetKind,
            "the flow's target is not an application",
        )),
    }
}

fn wants_virtual(flow: &Flow, options: &RunOptions) -> bool {
    options.virtual_display
        || matches!(&flow.target, Target::Desktop(a) if a.virtual_display == Some(true))
}

/// The probe: host facts only; never launches the target.
pub(crate) async fn probe(
    flow: &Flow,
    options: &RunOptions,
) -> (Vec<Capability>, Vec<qa_core::MissingCapability>) {
    let virt = wants_virtual(flow, options);
    let mut missing_caps = display::host_missing(virt);
    let mut present = Vec::new();
    if virt {
        for bin in ["Xvfb", "dbus-daemon"] {
            if let Some(p) = which(bin) {
                present.push(Capability {
                    id: bin.to_ascii_lowercase(),
                    detail: p.display().to_string(),
                });
            }
        }
    } else if let Ok(d) = std::env::var("DISPLAY") {
        present.push(Capability {
            id: "display".into(),
            detail: d,
        });
    }
    if let Some(p) = display::a11y_service_file() {
        present.push(Capability {
            id: "accessibility-bus".into(),
            detail: p.display().to_string(),
        });
    }
    if let Target::Desktop(a) = &flow.target {
        if a.bundle_id.is_some() {
            // First: it is the real reason, whatever the host has.
            missing_caps.insert(
                0,
                missing(
                    "bundle-id",
                    "application.bundleId is a macOS concept; Linux has no bundles",
                    "use application.launch, application.pid or application.name on Linux",
                ),
            );
        }
        if let Some(spec) = &a.launch {
            match which(&spec.argv[0]) {
                Some(p) => present.push(Capability {
                    id: "application".into(),
                    detail: p.display().to_string(),
                }),
                None => missing_caps.push(missing(
                    "application",
                    format!(
                        "{:?} was not found on PATH or is not executable",
                        spec.argv[0]
                    ),
                    "install the application or give its absolute path in application.launch.argv[0]",
                )),
            }
        }
        if virt && a.launch.is_none() {
            missing_caps.push(missing(
                "attach-in-virtual-display",
                "an attached application (pid/name) runs on its own display, not on a virtual display this run starts",
                "drop --virtual-display (and virtualDisplay) when attaching, or launch the application instead",
            ));
        }
    }
    (present, missing_caps)
}

/// Everything opened so far (for cleanup when `open` fails half-way).
struct Opening {
    env: Option<DesktopEnv>,
    /// The window video's recorder, started before the application.
    video: Option<qa_core::video::VideoRecorder>,
}

/// Opens a session; on failure ends whatever was started.
pub(crate) async fn open(
    flow: &Flow,
    ctx: SessionContext,
) -> Result<Box<dyn SurfaceSession>, DriverError> {
    let mut opening = Opening {
        env: None,
        video: None,
    };
    match open_inner(flow, &ctx, &mut opening).await {
        Ok(s) => Ok(s),
        Err(e) => {
            if let Some(r) = opening.video.take() {
                // Its encoder got no frame: it ends by itself now, before
                // anything is signalled.
                let _ = r.finish(Deadline::after_ms(2000)).await;
            }
            let _ = ctx
                .processes
                .end_all(DEFAULT_GRACE, Deadline::after_ms(5000))
                .await;
            if let Some(env) = &opening.env {
                display::remove_runtime_dir(env);
            }
            Err(e)
        }
    }
}

async fn open_inner(
    flow: &Flow,
    ctx: &SessionContext,
    opening: &mut Opening,
) -> Result<Box<dyn SurfaceSession>, DriverError> {
    let app = app_target(flow)?.clone();
    let deadline = ctx.flow_deadline;
    let (_, miss) = probe(flow, &ctx.options).await;
    if let Some(m) = miss.into_iter().next() {
        return Err(DriverError::blocked(DesktopCode::HostMissing, m));
    }
    let env = if wants_virtual(flow, &ctx.options) {
        display::start_virtual(ctx, deadline.min(Deadline::after_ms(10_000))).await?
    } else {
        display::host_env()?
    };
    opening.env = Some(env);
    let env = opening.env.as_ref().expect("set");
    let a11y = bus::connect(
        &env.session_bus,
        env.owned,
        deadline.min(Deadline::after_ms(10_000)),
    )
    .await?;
    let x11 = X11::connect(&env.display, env.xauth.as_ref().map(|a| a.cookie())).map_err(|e| {
        DriverError::blocked(
            DesktopCode::DisplayUnavailable,
            missing(
                "display",
                format!("cannot open X display {}: {e}", env.display),
                "run with --virtual-display or set DISPLAY to a reachable X server",
            ),
        )
    })?;
    let x11 = Arc::new(x11);

    let mut launched = None;
    if let Some(spec) = &app.launch {
        // BLOCKED like a missing terminal program: nothing was looked at.
        let program = which(&spec.argv[0]).ok_or_else(|| {
            DriverError::blocked(
                DesktopCode::LaunchNotFound,
                missing(
                    "application",
                    format!(
                        "{:?} was not found on PATH or is not executable",
                        spec.argv[0]
                    ),
                    "install the application or give its absolute path in application.launch.argv[0]",
                ),
            )
        })?;
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(&spec.argv[1..]);
        // Relative paths in the flow (argv[0], files) resolve against the
        // flow's directory, like the terminal driver.
        cmd.current_dir(match &spec.cwd {
            Some(cwd) => flow.base_dir.join(cwd),
            None => flow.base_dir.clone(),
        });
        for k in [
            "NO_AT_BRIDGE",
            "GTK_A11Y",
            "WAYLAND_DISPLAY",
            "DBUS_SESSION_BUS_ADDRESS",
        ] {
            cmd.env_remove(k);
        }
        cmd.env("DISPLAY", &env.display)
            .env("DBUS_SESSION_BUS_ADDRESS", &env.session_bus)
            .env("GDK_BACKEND", "x11")
            .env("QT_QPA_PLATFORM", "xcb")
            .env("QT_LINUX_ACCESSIBILITY_ALWAYS_ON", "1");
        if let Some(rt) = &env.runtime_dir {
            cmd.env("XDG_RUNTIME_DIR", rt);
        }
        if let Some(a) = &env.xauth {
            // The run's own display: only with its cookie.
            cmd.env("XAUTHORITY", &a.file);
        }
        // A fresh home in the run's scratch (unless the flow inherits the
        // user's); the flow's own env comes after, so it wins.
        let home = qa_desktop::home::vars(spec, ctx)?;
        if !home.is_empty() && env.xauth.is_none() && std::env::var_os("XAUTHORITY").is_none() {
            // Xlib finds the host display's cookie in $HOME/.Xauthority:
            // the application keeps reading the user's.
            if let Some(h) = std::env::var_os("HOME") {
                let cookie = std::path::Path::new(&h).join(".Xauthority");
                if cookie.is_file() {
                    cmd.env("XAUTHORITY", cookie);
                }
            }
        }
        cmd.envs(home);
        cmd.envs(&spec.env);
        let (stdout, stderr) = app_logs::sinks(ctx);
        cmd.stdin(Stdio::null()).stdout(stdout).stderr(stderr);
        // The window video's encoder starts with the application (see
        // `qa_desktop::video::start_early`).
        opening.video = qa_desktop::video::start_early(ctx).await;
        let child = ctx.processes.spawn(cmd, "app").map_err(|e| {
            DriverError::new(
                DesktopCode::LaunchFailed,
                format!("cannot start {:?}: {e}", spec.argv[0]),
            )
        })?;
        launched = Some(child);
    }
    let launched_pid = launched.as_ref().and_then(|c| c.id());
    let reg_ms = if launched.is_some() {
        REGISTRATION_MS
    } else {
        ATTACH_REGISTRATION_MS
    };
    let reg_deadline = deadline.min(Deadline::after_ms(reg_ms));
    let entry = wait_registration(&a11y, &x11, env, &app, launched.as_mut(), reg_deadline).await?;
    let env = opening.env.take().expect("set");
    let (picked, _) = tokio::sync::watch::channel(None);
    let reads = Reads::of(&a11y.conn, &entry.root).await;
    let app = App {
        a11y,
        x11,
        root: entry.root,
        reads,
        name: entry.name,
        pid: entry.pid.unwrap_or(0),
        launched_pid,
        window_title: app.window.as_ref().and_then(|w| w.title.clone()),
        display: env.display.clone(),
        picked,
    };
    let video = video::start(
        ctx,
        video::Target {
            x11: app.x11.clone(),
            bus_pid: app.pid,
            launched_pid,
            title: app.window_title.clone(),
            picked: app.picked.subscribe(),
            early: opening.video.take(),
        },
    );
    Ok(Box::new(DesktopSession::new(
        ctx.clone(),
        Linux {
            ctx: ctx.clone(),
            app,
            env,
            launched,
            video,
        },
    )))
}
