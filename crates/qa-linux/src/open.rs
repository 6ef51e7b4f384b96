//! Opening a session: host facts for the probe, the display and buses, the
//! launch (owned) or attach (never signalled) and registration on the
//! accessibility bus.

use crate::bus::{self, A11y, AppEntry};
use crate::capture::X11;
use crate::display::{self, missing, DesktopEnv};
use crate::driver::LinuxSession;
use crate::procs;
use qa_core::flow::{ApplicationTarget, Target};
use qa_core::process::DEFAULT_GRACE;
use qa_core::{
    Cadence, Capability, Deadline, DriverError, Flow, Host, RunOptions, SessionContext,
    SurfaceSession,
};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Longest wait for the application to register on the a11y bus.
pub(crate) const REGISTRATION_MS: u64 = 15_000;
/// An attached application is already running: how long it may still take
/// to appear on the a11y bus.
pub(crate) const ATTACH_REGISTRATION_MS: u64 = 5_000;
/// Once the app shows an X window, how long it may still take to register.
pub(crate) const WINDOW_GRACE_MS: u64 = 4_000;

fn app_target(flow: &Flow) -> Result<&ApplicationTarget, DriverError> {
    match &flow.target {
        Target::Desktop(a) => Ok(a),
        _ => Err(DriverError::new(
            "desktop.target.kind",
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
            if let Some(p) = display::which(bin) {
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
        if virt && a.launch.is_none() {
            missing_caps.push(missing(
                "attach-in-virtual-display",
                "an attached application (pid/name) runs on its own display, not on a virtual display this run starts",
                "drop --virtual-display (and virtualDisplay) when attaching, or launch the application instead",
            ));
        }
    }
    if options.record_video {
        missing_caps.push(missing(
            "video",
            "video of desktop windows is not implemented by the Linux driver yet",
            "run without video; screenshots and accessibility snapshots are kept",
        ));
    }
    (present, missing_caps)
}

/// Everything opened so far (for cleanup when `open` fails half-way).
struct Opening {
    env: Option<DesktopEnv>,
}

/// Opens a session; on failure ends whatever was started.
pub(crate) async fn open(
    flow: &Flow,
    ctx: SessionContext,
) -> Result<Box<dyn SurfaceSession>, DriverError> {
    let mut opening = Opening { env: None };
    match open_inner(flow, &ctx, &mut opening).await {
        Ok(s) => Ok(s),
        Err(e) => {
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
        return Err(DriverError::blocked("desktop.host.missing", m));
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
    let x11 = X11::connect(&env.display).map_err(|e| {
        DriverError::blocked(
            "desktop.display.unavailable",
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
        let program = display::which(&spec.argv[0]).ok_or_else(|| {
            DriverError::new(
                "desktop.launch.not_found",
                format!(
                    "{:?} was not found on PATH or is not executable",
                    spec.argv[0]
                ),
            )
            .with_remediation(
                "install the application or give its absolute path in application.launch.argv[0]",
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
        cmd.envs(&spec.env);
        let logs = ctx.evidence.scratch_dir("desktop-app").ok();
        let log = |n: &str| {
            logs.as_ref()
                .and_then(|d| std::fs::File::create(d.join(n)).ok())
                .map(Stdio::from)
                .unwrap_or_else(Stdio::null)
        };
        cmd.stdin(Stdio::null())
            .stdout(log("stdout.log"))
            .stderr(log("stderr.log"));
        let child = ctx.processes.spawn(cmd, "app").map_err(|e| {
            DriverError::new(
                "desktop.launch.failed",
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
    Ok(Box::new(LinuxSession {
        ctx: ctx.clone(),
        env: opening.env.take().expect("set"),
        a11y,
        x11,
        app: entry.root,
        app_name: entry.name,
        app_pid: entry.pid.unwrap_or(0),
        launched_pid,
        window_title: app.window.as_ref().and_then(|w| w.title.clone()),
        _launched: launched,
    }))
}

/// Polls the registry until the target application appears, the launched
/// process dies, or the deadline passes (BLOCKED with the likely cause).
async fn wait_registration(
    a11y: &A11y,
    x11: &X11,
    env: &DesktopEnv,
    app: &ApplicationTarget,
    mut launched: Option<&mut tokio::process::Child>,
    deadline: Deadline,
) -> Result<AppEntry, DriverError> {
    let start = Instant::now();
    let attached = launched.is_none();
    let root_pid = launched.as_ref().and_then(|c| c.id()).or(app.pid);
    let mut window_seen: Option<(Instant, String)> = None;
    let mut cadence = Cadence::new();
    let mut last_members = Vec::new();
    let mut registered: Vec<String> = Vec::new();
    loop {
        let table = procs::table();
        if let Ok(apps) = a11y.applications().await {
            registered = apps
                .iter()
                .filter(|e| !e.name.is_empty())
                .map(|e| e.name.clone())
                .collect();
            let mut hits: Vec<AppEntry> = apps
                .into_iter()
                .filter(|e| match (root_pid, &app.name) {
                    (Some(root), _) => e.pid.is_some_and(|p| procs::belongs_to(&table, p, root)),
                    (None, Some(name)) => e.name == *name,
                    _ => false,
                })
                .collect();
            hits.sort_by_key(|e| std::cmp::Reverse(e.child_count));
            if let Some(e) = hits.into_iter().next() {
                return Ok(e);
            }
        }
        if let Some(root) = root_pid {
            last_members = procs::members(&table, root);
            if last_members.is_empty() && attached {
                return Err(DriverError::new(
                    "desktop.attach.no_process",
                    format!("application.pid {root}: no such process is running"),
                )
                .with_remediation(
                    "give the pid of the running GUI process (e.g. from `pgrep -n <name>`), or attach by application.name",
                ));
            }
            if last_members.is_empty() {
                let status = match launched.as_mut() {
                    Some(c) => c.try_wait().ok().flatten().map(|s| s.to_string()),
                    None => None,
                };
                return Err(DriverError::new(
                    "desktop.launch.exited",
                    format!(
                        "the application (pid {root}) exited before it registered on the accessibility bus{}",
                        status.map(|s| format!(" ({s})")).unwrap_or_default()
                    ),
                )
                .with_remediation("run the launch command by hand on the same display to see why it exits"));
            }
            if window_seen.is_none() {
                if let Some(w) = x11.windows_of(&last_members).into_iter().next() {
                    window_seen = Some((Instant::now(), w.title));
                }
            }
        }
        let grace_over = window_seen
            .as_ref()
            .is_some_and(|(t, _)| t.elapsed() >= Duration::from_millis(WINDOW_GRACE_MS));
        if grace_over || !cadence.wait(deadline).await {
            return Err(not_registered(
                app,
                env,
                Seen {
                    root_pid,
                    members: &last_members,
                    window: window_seen.map(|w| w.1),
                    registered: &registered,
                    waited: start.elapsed(),
                },
            ));
        }
    }
}

/// A bus address without its `guid=` part (the same bus may be written
/// with or without it).
fn bus_key(addr: &str) -> String {
    addr.split(';')
        .next()
        .unwrap_or_default()
        .split(',')
        .filter(|kv| !kv.starts_with("guid="))
        .collect::<Vec<_>>()
        .join(",")
}

/// What registration polling saw before it gave up.
struct Seen<'a> {
    root_pid: Option<u32>,
    members: &'a [u32],
    window: Option<String>,
    registered: &'a [String],
    waited: Duration,
}

fn not_registered(app: &ApplicationTarget, env: &DesktopEnv, seen: Seen<'_>) -> DriverError {
    let Seen {
        root_pid,
        members,
        window,
        registered,
        waited,
    } = seen;
    let attached = app.launch.is_none();
    let var = |k: &str| -> Option<String> {
        app.launch
            .as_ref()
            .and_then(|l| l.env.get(k).cloned())
            .or_else(|| members.iter().find_map(|&p| procs::env_var(p, k)))
    };
    let mut causes = Vec::new();
    if var("NO_AT_BRIDGE").is_some_and(|v| v == "1") {
        causes.push(
            "NO_AT_BRIDGE=1 is set for the application, which turns off GTK's AT-SPI bridge"
                .to_string(),
        );
    }
    if var("GTK_A11Y").is_some_and(|v| v == "none") {
        causes.push(
            "GTK_A11Y=none is set for the application, which turns off GTK 4 accessibility"
                .to_string(),
        );
    }
    if attached {
        // An attached app must talk to the same session (and so a11y) bus
        // and X display as this run.
        let bus = var("DBUS_SESSION_BUS_ADDRESS");
        if bus
            .as_deref()
            .is_some_and(|b| bus_key(b) != bus_key(&env.session_bus))
        {
            causes.push(format!(
                "it uses another session bus ({}) than this run ({}), so it registers on another accessibility bus",
                bus.unwrap_or_default(),
                env.session_bus
            ));
        }
        let display = var("DISPLAY");
        if display.as_deref().is_some_and(|d| d != env.display) {
            causes.push(format!(
                "it runs on X display {} while this run uses {}",
                display.unwrap_or_default(),
                env.display
            ));
        }
    }
    if causes.is_empty() {
        if let Some(t) = &window {
            causes.push(format!(
                "it shows an X window ({t:?}) but exposes no accessibility tree: its toolkit has no AT-SPI support (xterm, Xaw, Motif, plain Xlib) or has it turned off"
            ));
        }
    }
    let why = if causes.is_empty() {
        String::new()
    } else {
        format!(": {}", causes.join("; "))
    };
    let ms = waited.as_millis();
    let reason = match (root_pid, &app.name) {
        (Some(p), _) if attached => format!(
            "the attached process (pid {p}) is not on the accessibility bus (waited {ms} ms){why}"
        ),
        (Some(p), _) => format!(
            "the application (pid {p}) did not register on the accessibility bus within {ms} ms{why}"
        ),
        (None, Some(n)) => {
            let mut names: Vec<String> = registered.iter().take(20).map(|s| format!("{s:?}")).collect();
            names.sort();
            names.dedup();
            format!(
                "no application named {n:?} is registered on the accessibility bus (waited {ms} ms); registered: [{}]{why}",
                names.join(", ")
            )
        }
        _ => format!("the application did not register within {ms} ms{why}"),
    };
    let remediation = if attached {
        "an attached application must run on this run's X display and session bus (DISPLAY, DBUS_SESSION_BUS_ADDRESS) with accessibility on: restart it without NO_AT_BRIDGE=1 / GTK_A11Y=none (Qt: with QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1), check the name against the registered ones, or launch it with application.launch; toolkits without AT-SPI (e.g. xterm) cannot be driven through accessibility"
    } else {
        "remove NO_AT_BRIDGE=1 / GTK_A11Y=none from the application's environment; Qt apps need QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1; toolkits without AT-SPI (e.g. xterm) cannot be driven through accessibility"
    };
    DriverError::blocked(
        "desktop.app.not_accessible",
        missing("application-accessibility", reason, remediation),
    )
}

/// Host facts for the probe (kept here so lib.rs stays platform-neutral).
pub(crate) fn platform(_host: &Host) -> &'static str {
    "linux"
}

#[cfg(test)]
mod tests {
    use super::bus_key;

    #[test]
    fn bus_addresses_compare_without_guid() {
        assert_eq!(
            bus_key("unix:path=/tmp/x/bus,guid=0123abcd"),
            bus_key("unix:path=/tmp/x/bus")
        );
        assert_ne!(
            bus_key("unix:path=/tmp/x/bus"),
            bus_key("unix:path=/tmp/y/bus")
        );
    }
}
