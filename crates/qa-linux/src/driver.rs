//! The Linux session: open (display, buses, launch, registration), the step
//! dispatch, evidence and cleanup.

use crate::actions::{
    self, element_text, element_value, has_state, resolve_once, resolve_wait, Resolved,
};
use crate::bus::{self, A11y, AppEntry};
use crate::capture::{XWindow, X11};
use crate::display::{self, missing, DesktopEnv};
use crate::locate::truncate;
use crate::tree::{node_texts, snapshot_json, walk, Fields, ObjRef};
use crate::{keys, procs};
use async_trait::async_trait;
use qa_core::evidence::ArtifactGroup;
use qa_core::flow::{Action, ApplicationTarget, DesktopAction, Matcher, Target};
use qa_core::keys::KeyChord;
use qa_core::process::DEFAULT_GRACE;
use qa_core::{
    Artifact, Cadence, Capability, CloseResult, Deadline, DriverError, Flow, Host, Observation,
    RunOptions, SessionContext, Step, StepOutcome, SurfaceSession, Verdict,
};
use serde_json::json;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Longest wait for the application to register on the a11y bus.
pub(crate) const REGISTRATION_MS: u64 = 15_000;
/// Once the app shows an X window, how long it may still take to register.
pub(crate) const WINDOW_GRACE_MS: u64 = 4_000;
/// Node cap of accessibility snapshots.
pub(crate) const SNAPSHOT_CAP: usize = 2_000;

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
            missing_caps.push(missing(
                "bundle-id",
                "application.bundleId is a macOS concept; Linux has no bundles",
                "use application.launch, application.pid or application.name on Linux",
            ));
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
    let reg_deadline = deadline.min(Deadline::after_ms(REGISTRATION_MS));
    let entry = wait_registration(&a11y, &x11, &app, launched.as_mut(), reg_deadline).await?;
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
    app: &ApplicationTarget,
    mut launched: Option<&mut tokio::process::Child>,
    deadline: Deadline,
) -> Result<AppEntry, DriverError> {
    let start = Instant::now();
    let root_pid = launched.as_ref().and_then(|c| c.id()).or(app.pid);
    let mut window_seen: Option<(Instant, String)> = None;
    let mut cadence = Cadence::new();
    let mut last_members = Vec::new();
    loop {
        let table = procs::table();
        if let Ok(apps) = a11y.applications().await {
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
                root_pid,
                &last_members,
                window_seen.map(|w| w.1),
                start.elapsed(),
            ));
        }
    }
}

fn not_registered(
    app: &ApplicationTarget,
    root_pid: Option<u32>,
    members: &[u32],
    window: Option<String>,
    waited: Duration,
) -> DriverError {
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
    if causes.is_empty() {
        if let Some(t) = &window {
            causes.push(format!(
                "it shows an X window ({t:?}) but exposes no accessibility tree: its toolkit has no AT-SPI support (xterm, Xaw, Motif, plain Xlib) or has it turned off"
            ));
        }
    }
    let who = match (root_pid, &app.name) {
        (Some(p), _) => format!("the application (pid {p})"),
        (None, Some(n)) => format!("no application named {n:?}"),
        _ => "the application".into(),
    };
    let reason = format!(
        "{who} did not register on the accessibility bus within {} ms{}",
        waited.as_millis(),
        if causes.is_empty() {
            String::new()
        } else {
            format!(": {}", causes.join("; "))
        }
    );
    DriverError::blocked(
        "desktop.app.not_accessible",
        missing(
            "application-accessibility",
            reason,
            "remove NO_AT_BRIDGE=1 / GTK_A11Y=none from the application's environment; Qt apps need QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1; toolkits without AT-SPI (e.g. xterm) cannot be driven through accessibility",
        ),
    )
}

/// An open session on one application.
pub(crate) struct LinuxSession {
    ctx: SessionContext,
    env: DesktopEnv,
    a11y: A11y,
    x11: Arc<X11>,
    app: ObjRef,
    app_name: String,
    app_pid: u32,
    launched_pid: Option<u32>,
    window_title: Option<String>,
    _launched: Option<tokio::process::Child>,
}

/// A top-level accessible window.
struct AtWindow {
    role: String,
    name: String,
    showing: bool,
    active: bool,
}

impl LinuxSession {
    fn conn(&self) -> &zbus::Connection {
        &self.a11y.conn
    }

    async fn windows(&self) -> Vec<AtWindow> {
        let f = Fields {
            states: true,
            ..Fields::default()
        };
        let (nodes, _) = walk(self.conn(), &self.app, f, 64).await;
        nodes
            .iter()
            .skip(1)
            .filter(|n| n.view.parent == Some(0))
            .map(|n| {
                let s = n.states.unwrap_or_else(atspi::StateSet::empty);
                AtWindow {
                    role: n.view.role.clone(),
                    name: n.view.name.clone(),
                    showing: s.contains(atspi::State::Showing),
                    active: s.contains(atspi::State::Active),
                }
            })
            .collect()
    }

    fn pids(&self) -> Vec<u32> {
        let mut v = vec![self.app_pid];
        if let Some(l) = self.launched_pid {
            v.extend(procs::members(&procs::table(), l));
        }
        v
    }

    /// The X window to capture / type into: the flow's window title, else the
    /// active accessible window, else the first showing one, else the largest.
    async fn x_window(&self) -> Result<XWindow, DriverError> {
        let wins = self.windows().await;
        let want = self.window_title.clone().or_else(|| {
            wins.iter()
                .find(|w| w.active)
                .or_else(|| wins.iter().find(|w| w.showing))
                .map(|w| w.name.clone())
        });
        let x = self.x11.clone();
        let pids = self.pids();
        let xs = tokio::task::spawn_blocking(move || x.windows_of(&pids))
            .await
            .unwrap_or_default();
        if xs.is_empty() {
            return Err(DriverError::blocked(
                "desktop.capture.no_window",
                missing(
                    "window-capture",
                    format!("no viewable X window carries _NET_WM_PID {} on display {}", self.app_pid, self.env.display),
                    "the application must run on this X display (not Wayland) and set _NET_WM_PID (GTK and Qt do)",
                ),
            ));
        }
        let by_title = want.and_then(|t| xs.iter().find(|w| w.title == t).cloned());
        Ok(by_title.unwrap_or_else(|| {
            xs.iter()
                .max_by_key(|w| w.width as u64 * w.height as u64)
                .cloned()
                .expect("non-empty")
        }))
    }

    async fn focus_window(&self) -> Result<XWindow, DriverError> {
        let w = self.x_window().await?;
        let x = self.x11.clone();
        let id = w.id;
        tokio::task::spawn_blocking(move || x.raise_and_focus(id))
            .await
            .map_err(|e| DriverError::new("desktop.input.failed", e.to_string()))?
            .map_err(|e| DriverError::new("desktop.input.failed", e))?;
        Ok(w)
    }

    async fn screenshot(&self, step: &Step) -> Result<(Artifact, XWindow), DriverError> {
        let w = self.focus_window().await?;
        tokio::time::sleep(Duration::from_millis(80)).await;
        let x = self.x11.clone();
        let id = w.id;
        let (png, _, _) = tokio::task::spawn_blocking(move || x.capture_png(id))
            .await
            .map_err(|e| DriverError::new("desktop.capture.failed", e.to_string()))?
            .map_err(|e| {
                DriverError::blocked(
                    "desktop.capture.failed",
                    missing(
                        "window-capture",
                        e,
                        "run on a 24/32-bit TrueColor X display (Xvfb -screen 0 WxHx24)",
                    ),
                )
            })?;
        let a = self.write(ArtifactGroup::Screenshots, step, "png", &png)?;
        Ok((a, w))
    }

    fn write(
        &self,
        group: ArtifactGroup,
        step: &Step,
        ext: &str,
        bytes: &[u8],
    ) -> Result<Artifact, DriverError> {
        let ev = &self.ctx.evidence;
        let name = ev.unique_name(group, &step.evidence_name(), ext);
        match ev.write(group, &name, bytes, Some(step.index + 1)) {
            Ok(Some(a)) => Ok(a),
            Ok(None) => Err(DriverError::new(
                "desktop.evidence.withheld",
                format!("{name} contained a secret value and was withheld"),
            )),
            Err(e) => Err(DriverError::new("desktop.evidence.io", e.to_string())),
        }
    }

    async fn snapshot(
        &self,
        step: &Step,
        root: Option<&qa_core::flow::Locator>,
        deadline: Deadline,
    ) -> Result<Artifact, DriverError> {
        let root_obj = match root {
            Some(l) => resolve_wait(self.conn(), &self.app, l, deadline).await?.obj,
            None => self.app.clone(),
        };
        let started = Instant::now();
        let walked = deadline
            .run(walk(self.conn(), &root_obj, Fields::ALL, SNAPSHOT_CAP))
            .await;
        let Some((nodes, truncated)) = walked else {
            return Err(DriverError::new(
                "desktop.snapshot.timeout",
                "the accessibility snapshot did not finish before the step deadline",
            ));
        };
        let mut doc = json!({
            "application": { "name": self.app_name, "pid": self.app_pid },
            "nodeCount": nodes.len(),
            "nodeCap": SNAPSHOT_CAP,
            "truncated": truncated,
            "elapsedMs": started.elapsed().as_millis() as u64,
            "tree": if nodes.is_empty() { serde_json::Value::Null } else { snapshot_json(&nodes, 0) },
        });
        self.ctx.secrets.redact_json(&mut doc);
        let bytes = serde_json::to_vec_pretty(&doc).unwrap_or_default();
        self.write(ArtifactGroup::AccessibilitySnapshots, step, "json", &bytes)
    }

    async fn type_keys(
        &self,
        f: impl FnOnce(&X11) -> Result<(), String> + Send + 'static,
    ) -> Result<(), DriverError> {
        let x = self.x11.clone();
        tokio::task::spawn_blocking(move || f(&x))
            .await
            .map_err(|e| DriverError::new("desktop.input.failed", e.to_string()))?
            .map_err(|e| DriverError::new("desktop.input.failed", e))
    }

    fn redact(&self, s: &str) -> String {
        self.ctx.secrets.redact(s).into_owned()
    }

    async fn text_verdict(
        &mut self,
        loc: Option<&qa_core::flow::Locator>,
        m: &Matcher,
    ) -> Result<Verdict, DriverError> {
        match loc {
            Some(l) => match resolve_once(self.conn(), &self.app, l).await? {
                Resolved::None => Ok(Verdict::NotYet {
                    observed: format!("no element matches {}", l.describe()),
                }),
                Resolved::One(n) => {
                    let t = element_text(&n);
                    Ok(if m.matches(&t) {
                        Verdict::Holds
                    } else {
                        Verdict::NotYet {
                            observed: format!("text is {:?}", self.redact(&truncate(&t, 200))),
                        }
                    })
                }
            },
            None => {
                let f = Fields {
                    content: true,
                    ..Fields::default()
                };
                let (nodes, _) = walk(self.conn(), &self.app, f, actions::LOCATE_CAP).await;
                if nodes
                    .iter()
                    .any(|n| node_texts(n).iter().any(|t| m.matches(t)))
                {
                    Ok(Verdict::Holds)
                } else {
                    Ok(Verdict::NotYet {
                        observed: format!(
                            "no text {} among {} elements",
                            m.describe(),
                            nodes.len()
                        ),
                    })
                }
            }
        }
    }
}

fn outcome(detail: impl Into<String>, artifacts: Vec<Artifact>) -> StepOutcome {
    StepOutcome {
        detail: Some(detail.into()),
        observations: Vec::new(),
        artifacts,
    }
}

fn desktop(step: &Step) -> Result<&DesktopAction, DriverError> {
    match &step.action {
        Action::Desktop(a) => Ok(a),
        _ => Err(DriverError::new(
            "desktop.step.kind",
            format!("{} is not a desktop step", step.action_name()),
        )),
    }
}

#[async_trait]
impl SurfaceSession for LinuxSession {
    async fn observe(&mut self) -> Result<Observation, DriverError> {
        let wins = self.windows().await;
        let list: Vec<serde_json::Value> = wins
            .iter()
            .take(20)
            .map(|w| json!({"role": w.role, "name": self.redact(&w.name), "showing": w.showing, "active": w.active}))
            .collect();
        Ok(Observation {
            summary: format!(
                "{} (pid {}) on display {}: {} window(s)",
                self.app_name,
                self.app_pid,
                self.env.display,
                wins.len()
            ),
            detail: json!({ "windows": list }),
        })
    }

    async fn perform(
        &mut self,
        step: &Step,
        deadline: Deadline,
    ) -> Result<StepOutcome, DriverError> {
        let conn = self.a11y.conn.clone();
        match desktop(step)? {
            DesktopAction::ActivateWindow(_) => {
                let w = self.focus_window().await?;
                Ok(outcome(
                    format!("raised and focused window 0x{:x}", w.id),
                    vec![],
                ))
            }
            DesktopAction::Activate(a) => {
                let n = resolve_wait(&conn, &self.app, &a.locator, deadline).await?;
                let d = actions::activate(&conn, &n).await?;
                Ok(outcome(d, vec![]))
            }
            DesktopAction::SnapshotAccessibility(s) => {
                let a = self.snapshot(step, s.locator.as_ref(), deadline).await?;
                Ok(outcome("accessibility snapshot", vec![a]))
            }
            DesktopAction::SetValue(s) => {
                let n = resolve_wait(&conn, &self.app, &s.locator, deadline).await?;
                let d = actions::set_value(&conn, &n, &s.value, deadline).await?;
                Ok(outcome(d, vec![]))
            }
            DesktopAction::InputText(t) => {
                self.focus_window().await?;
                if let Some(l) = &t.locator {
                    let n = resolve_wait(&conn, &self.app, l, deadline).await?;
                    actions::focus(&conn, &n).await?;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                let text = t.text.clone();
                self.type_keys(move |x| keys::type_text(x, &text)).await?;
                Ok(outcome(
                    format!("typed {} characters", t.text.chars().count()),
                    vec![],
                ))
            }
            DesktopAction::PressKey(k) => {
                let chord = KeyChord::parse(&k.key)
                    .map_err(|e| DriverError::new("desktop.key.invalid", e))?;
                self.focus_window().await?;
                self.type_keys(move |x| {
                    let mut map = keys::Keymap::load(x)?;
                    keys::press_chord(x, &mut map, &chord)
                })
                .await?;
                Ok(outcome(format!("pressed {chord}"), vec![]))
            }
            DesktopAction::Screenshot(_) => {
                let (a, w) = self.screenshot(step).await?;
                Ok(outcome(
                    format!(
                        "window 0x{:x} (pid {}) {}x{} at {},{}",
                        w.id, w.pid, w.width, w.height, w.x, w.y
                    ),
                    vec![a],
                ))
            }
            DesktopAction::Capture(_) => {
                let (a, w) = self.screenshot(step).await?;
                let s = self.snapshot(step, None, deadline).await?;
                Ok(outcome(
                    format!("window 0x{:x} {}x{} + snapshot", w.id, w.width, w.height),
                    vec![a, s],
                ))
            }
            other => Err(DriverError::new(
                "desktop.step.not_an_action",
                format!("{} is not performed by the driver", other.name()),
            )),
        }
    }

    async fn verify(&mut self, step: &Step, deadline: Deadline) -> Result<Verdict, DriverError> {
        let work = async {
            match desktop(step)? {
                DesktopAction::WaitForWindow(w) => {
                    let wins = self.windows().await;
                    let ok = wins
                        .iter()
                        .any(|x| x.showing && w.title.as_ref().is_none_or(|m| m.matches(&x.name)));
                    Ok(if ok {
                        Verdict::Holds
                    } else {
                        let names: Vec<String> = wins
                            .iter()
                            .take(10)
                            .map(|x| {
                                format!(
                                    "{:?}{}",
                                    self.redact(&x.name),
                                    if x.showing { "" } else { " (not showing)" }
                                )
                            })
                            .collect();
                        Verdict::NotYet {
                            observed: format!("windows: [{}]", names.join(", ")),
                        }
                    })
                }
                DesktopAction::WaitForText(t) | DesktopAction::AssertText(t) => {
                    let m = t.matcher();
                    self.text_verdict(t.locator.as_ref(), &m).await
                }
                DesktopAction::AssertState(s) => {
                    match resolve_once(self.conn(), &self.app, &s.locator).await? {
                        Resolved::None => Ok(Verdict::NotYet {
                            observed: format!("no element matches {}", s.locator.describe()),
                        }),
                        Resolved::One(n) => {
                            if let Some(want) = s.state {
                                let st = n.states.unwrap_or_else(atspi::StateSet::empty);
                                Ok(if has_state(st, want) {
                                    Verdict::Holds
                                } else {
                                    Verdict::NotYet {
                                        observed: format!(
                                            "states: [{}]",
                                            crate::tree::state_names(st).join(", ")
                                        ),
                                    }
                                })
                            } else {
                                let m = s.value.clone().unwrap_or(Matcher {
                                    equals: None,
                                    includes: None,
                                    regex: None,
                                });
                                let v = element_value(&n).unwrap_or_default();
                                Ok(if m.matches(&v) {
                                    Verdict::Holds
                                } else {
                                    Verdict::NotYet {
                                        observed: format!(
                                            "value is {:?}",
                                            self.redact(&truncate(&v, 200))
                                        ),
                                    }
                                })
                            }
                        }
                    }
                }
                other => Err(DriverError::new(
                    "desktop.step.not_an_assertion",
                    format!("{} is not verified by the driver", other.name()),
                )),
            }
        };
        match deadline.run(work).await {
            Some(r) => r,
            None => Ok(Verdict::NotYet {
                observed: "the accessibility tree did not answer before the step deadline".into(),
            }),
        }
    }

    async fn capture_failure(&mut self, step: &Step) -> Vec<Artifact> {
        let mut named = step.clone();
        named.name = Some(format!("failure-step{}", step.index + 1));
        match self.screenshot(&named).await {
            Ok((a, _)) => vec![a],
            Err(_) => Vec::new(),
        }
    }

    async fn close(self: Box<Self>, deadline: Deadline) -> CloseResult {
        let this = *self;
        let processes = this.ctx.processes.clone();
        let env = this.env;
        drop(this.a11y);
        let cleanup = processes.end_all(DEFAULT_GRACE, deadline).await;
        display::remove_runtime_dir(&env);
        let mut observations = Vec::new();
        if env.owned {
            observations.push(format!(
                "virtual display {} and its private session bus were ended",
                env.display
            ));
        }
        CloseResult {
            cleanup,
            artifacts: Vec::new(),
            observations,
        }
    }
}

/// Host facts for the probe (kept here so lib.rs stays platform-neutral).
pub(crate) fn platform(_host: &Host) -> &'static str {
    "linux"
}
