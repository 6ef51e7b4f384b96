//! The Linux session: window choice, the step dispatch, evidence and
//! cleanup (opening it lives in `open.rs`).

use crate::actions::{
    self, element_text, element_value, has_state, resolve_once, resolve_wait, Resolved,
};
use crate::bus::A11y;
use crate::capture::{XWindow, X11};
use crate::display::{self, missing, DesktopEnv};
use crate::locate::truncate;
use crate::tree::{node_texts, snapshot_json, walk, Fields, ObjRef};
use crate::{keys, procs};
use async_trait::async_trait;
use qa_core::evidence::ArtifactGroup;
use qa_core::flow::{Action, DesktopAction, Matcher};
use qa_core::keys::KeyChord;
use qa_core::process::DEFAULT_GRACE;
use qa_core::{
    Artifact, CloseResult, Deadline, DriverError, Observation, SessionContext, Step, StepOutcome,
    SurfaceSession, Verdict,
};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Node cap of accessibility snapshots.
pub(crate) const SNAPSHOT_CAP: usize = 2_000;

/// An open session on one application.
pub(crate) struct LinuxSession {
    pub(crate) ctx: SessionContext,
    pub(crate) env: DesktopEnv,
    pub(crate) a11y: A11y,
    pub(crate) x11: Arc<X11>,
    pub(crate) app: ObjRef,
    pub(crate) app_name: String,
    pub(crate) app_pid: u32,
    /// The launched process (`None` when attached: never signalled).
    pub(crate) launched_pid: Option<u32>,
    pub(crate) window_title: Option<String>,
    pub(crate) _launched: Option<tokio::process::Child>,
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

    pub(crate) fn pids(&self) -> Vec<u32> {
        let mut v = vec![self.app_pid];
        if let Some(l) = self.launched_pid {
            v.extend(procs::members(&procs::table(), l));
        }
        v
    }

    /// The X window to capture / type into: the flow's window title, else the
    /// active accessible window, else the first showing one, else the largest.
    pub(crate) async fn x_window(&self) -> Result<XWindow, DriverError> {
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

/// The last bytes of the application's stdout/stderr kept as evidence.
const APP_LOG_CAP: usize = 256 * 1024;

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
                let d = match actions::activate(&conn, &n).await? {
                    actions::Activated::Action(d) => d,
                    actions::Activated::NoAction => self.pointer_click(&n).await?,
                };
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
        // The app's own output is evidence (scanned for secrets like any
        // artifact); the scratch directory it was written to is removed
        // when the run ends.
        let mut artifacts = Vec::new();
        let app_logs = this.ctx.evidence.run_dir().join("work").join("desktop-app");
        for (file, name) in [
            ("stdout.log", "app-stdout.log"),
            ("stderr.log", "app-stderr.log"),
        ] {
            let Ok(bytes) = std::fs::read(app_logs.join(file)) else {
                continue;
            };
            if bytes.is_empty() {
                continue;
            }
            let tail = &bytes[bytes.len().saturating_sub(APP_LOG_CAP)..];
            let name = this.ctx.evidence.unique_name(
                qa_core::ArtifactGroup::Logs,
                name.trim_end_matches(".log"),
                "log",
            );
            match this
                .ctx
                .evidence
                .write(qa_core::ArtifactGroup::Logs, &name, tail, None)
            {
                Ok(Some(a)) => artifacts.push(a),
                Ok(None) => {
                    observations.push(format!("{name} was withheld: it contained a secret value"))
                }
                Err(_) => {}
            }
        }
        if env.owned {
            observations.push(format!(
                "virtual display {} and its private session bus were ended",
                env.display
            ));
        }
        CloseResult {
            cleanup,
            artifacts,
            observations,
        }
    }
}
