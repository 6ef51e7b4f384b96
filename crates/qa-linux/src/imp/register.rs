//! Registration: waiting for the target to appear on the accessibility
//! bus (matched by its bus connection's process among the launched
//! process's own, or by name when attached), and explaining precisely why
//! it did not (accessibility turned off, another bus or display, a toolkit
//! without AT-SPI) when it never does.

use super::bus::{A11y, AppEntry};
use super::capture::X11;
use super::display::{missing, DesktopEnv};
use super::procs;
use qa_core::flow::ApplicationTarget;
use qa_core::process::identity;
use qa_core::{Cadence, Deadline, DriverError};
use qa_desktop::DesktopCode;
use std::time::{Duration, Instant};

/// Longest wait for the application to register on the a11y bus.
pub(crate) const REGISTRATION_MS: u64 = 15_000;
/// An attached application is already running: how long it may still take
/// to appear on the a11y bus.
pub(crate) const ATTACH_REGISTRATION_MS: u64 = 5_000;
/// Once the app shows an X window, how long it may still take to register.
const WINDOW_GRACE_MS: u64 = 4_000;

/// Polls the registry until the target application appears, the launched
/// process dies, or the deadline passes (BLOCKED with the likely cause).
pub(crate) async fn wait_registration(
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
        let members = root_pid
            .map(|root| procs::members(&identity::table(), root))
            .unwrap_or_default();
        if let Ok(apps) = a11y.applications().await {
            registered = apps
                .iter()
                .filter(|e| !e.name.is_empty())
                .map(|e| e.name.clone())
                .collect();
            let mut hits: Vec<AppEntry> = apps
                .into_iter()
                .filter(|e| match (root_pid, &app.name) {
                    (Some(root), _) => e.pid.is_some_and(|p| procs::belongs_to(&members, p, root)),
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
            last_members = members;
            if last_members.is_empty() && attached {
                return Err(DriverError::new(
                    DesktopCode::AttachNoProcess,
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
                    DesktopCode::LaunchExited,
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
            .or_else(|| members.iter().find_map(|&p| identity::env_var(p, k)))
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
        DesktopCode::AppNotAccessible,
        missing("application-accessibility", reason, remediation),
    )
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
