//! The Linux session: the step dispatch (one exhaustive match per entry
//! point), the typed surface state, failure evidence and cleanup. Opening
//! it lives in `open.rs`; the work of each step in the modules it calls.

use super::actions::{self, resolve_wait};
use super::app::App;
use super::artifacts;
use super::capture::X11;
use super::checks;
use super::display::{self, DesktopEnv};
use super::keys;
use super::pointer;
use super::video::WindowVideo;
use crate::codes::DesktopCode;
use crate::locate::truncate;
use async_trait::async_trait;
use qa_core::flow::{Action, DesktopAction};
use qa_core::process::DEFAULT_GRACE;
use qa_core::{
    Artifact, CloseResult, Deadline, DriverError, Mismatch, Note, NoteKind, SessionContext, Step,
    StepOutcome, SurfaceSession, SurfaceState, Verdict,
};
use std::time::Duration;

/// Bound on one observation (the runner allows it 5 s).
const OBSERVE_MS: u64 = 2_000;
/// Most window titles an observation lists.
const OBSERVE_WINDOWS: usize = 20;
/// Characters of one window title in an observation.
const OBSERVE_TITLE_CHARS: usize = 120;
/// Time `close` keeps for ending the processes beyond their grace period
/// (finishing the video gets the rest of its deadline).
const CLOSE_RESERVE: Duration = Duration::from_millis(1_000);

/// An open session on one application.
pub(crate) struct LinuxSession {
    /// What the runner gave the session.
    pub ctx: SessionContext,
    /// The display and session bus (owned ones end at close).
    pub env: DesktopEnv,
    /// The application driven.
    pub app: App,
    /// The launched process's handle (`None` when attached).
    pub launched: Option<tokio::process::Child>,
    /// The application window's video.
    pub video: WindowVideo,
}

impl LinuxSession {
    fn redact(&self, s: &str) -> String {
        self.ctx.secrets.redact(s).into_owned()
    }

    /// `assertProcessExited`: the launched application has exited (with
    /// `want`, when given).
    fn exited(&mut self, want: Option<i32>) -> Verdict {
        let expected = match want {
            Some(c) => format!("the application to exit with code {c}"),
            None => "the application to exit".into(),
        };
        let Some(child) = self.launched.as_mut() else {
            return Verdict::Fails {
                reason: "only a launched application's exit can be checked; this one was attached"
                    .into(),
            };
        };
        match child.try_wait() {
            Ok(None) => Verdict::differs(Mismatch::new(expected, "it is still running")),
            Ok(Some(st)) => match (want, st.code()) {
                (None, _) => Verdict::Holds,
                (Some(w), Some(c)) if w == c => Verdict::Holds,
                (Some(_), _) => Verdict::Fails {
                    reason: Mismatch::new(expected, format!("it ended with {st}")).summary(),
                },
            },
            Err(e) => Verdict::Fails {
                reason: format!("the application's exit could not be read: {e}"),
            },
        }
    }

    /// `assertOutput`: what the launched application printed so far matches
    /// (one trailing newline ignored).
    fn output(&self, o: &qa_core::flow::OutputAssert) -> Verdict {
        let file = match o.stream.unwrap_or_default() {
            qa_core::flow::OutputStream::Stdout => "stdout.log",
            qa_core::flow::OutputStream::Stderr => "stderr.log",
        };
        if self.launched.is_none() {
            return Verdict::Fails {
                reason: "only a launched application's output is captured; this one was attached"
                    .into(),
            };
        }
        let path = self
            .ctx
            .evidence
            .run_dir()
            .join("work")
            .join(artifacts::APP_LOG_DIR)
            .join(file);
        let bytes = std::fs::read(&path).unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes);
        let text = text.strip_suffix('\n').unwrap_or(&text);
        let m = o.matcher();
        if m.matches(text) {
            return Verdict::Holds;
        }
        Verdict::differs(Mismatch::new(
            format!("{} {}", file.trim_end_matches(".log"), m.describe()),
            format!("{:?}", self.redact(text)),
        ))
    }

    /// Types through XTest off the async runtime.
    async fn input(
        &self,
        f: impl FnOnce(&X11) -> Result<(), String> + Send + 'static,
    ) -> Result<(), DriverError> {
        self.app
            .with_x11(DesktopCode::InputFailed, f)
            .await?
            .map_err(|e| DriverError::new(DesktopCode::InputFailed, e))
    }
}

fn outcome(detail: impl Into<String>) -> StepOutcome {
    StepOutcome {
        detail: Some(detail.into()),
        notes: Vec::new(),
    }
}

fn desktop(step: &Step) -> Result<&DesktopAction, DriverError> {
    match &step.action {
        Action::Desktop(a) => Ok(a),
        Action::Browser(_) | Action::Terminal(_) => Err(DriverError::new(
            DesktopCode::StepKind,
            format!("{} is not a desktop step", step.action_name()),
        )),
    }
}

#[async_trait]
impl SurfaceSession for LinuxSession {
    async fn elements(
        &mut self,
        deadline: Deadline,
    ) -> Result<qa_core::observe::Observation, DriverError> {
        super::inspect::elements(&self.app, deadline).await
    }

    async fn observe(&mut self) -> Result<SurfaceState, DriverError> {
        let wins = Deadline::after_ms(OBSERVE_MS)
            .run(self.app.windows())
            .await
            .ok_or_else(|| {
                DriverError::new(
                    DesktopCode::ObserveTimeout,
                    format!(
                        "the application's accessible windows did not answer within {OBSERVE_MS} ms"
                    ),
                )
            })?;
        Ok(SurfaceState::Desktop {
            app: self.redact(&self.app.name),
            pid: self.app.pid,
            windows: wins
                .iter()
                .take(OBSERVE_WINDOWS)
                .map(|w| truncate(&self.redact(&w.name), OBSERVE_TITLE_CHARS))
                .collect(),
        })
    }

    async fn perform(
        &mut self,
        step: &Step,
        deadline: Deadline,
    ) -> Result<StepOutcome, DriverError> {
        let conn = self.app.conn().clone();
        match desktop(step)? {
            DesktopAction::ActivateWindow(_) => {
                let w = self.app.focus_window().await?;
                Ok(outcome(format!("raised and focused window 0x{:x}", w.id)))
            }
            DesktopAction::Activate(a) => {
                let n = resolve_wait(&conn, &self.app.root, &a.locator, deadline).await?;
                let d = match actions::activate(&conn, &n).await? {
                    actions::Activated::Action(d) => d,
                    actions::Activated::NoAction => pointer::click(&self.app, &n).await?,
                };
                Ok(outcome(d))
            }
            DesktopAction::Click(a) => {
                let n = resolve_wait(&conn, &self.app.root, &a.locator, deadline).await?;
                Ok(outcome(pointer::click(&self.app, &n).await?))
            }
            DesktopAction::Select(a) => {
                let n = resolve_wait(&conn, &self.app.root, &a.locator, deadline).await?;
                Ok(outcome(actions::select(&conn, &n).await?))
            }
            DesktopAction::SnapshotAccessibility(s) => {
                artifacts::snapshot(&self.app, &self.ctx, step, s.locator.as_ref(), deadline)
                    .await?;
                Ok(outcome("accessibility snapshot"))
            }
            DesktopAction::SetValue(s) => {
                let n = resolve_wait(&conn, &self.app.root, &s.locator, deadline).await?;
                let d = actions::set_value(&conn, &n, &s.value, deadline).await?;
                Ok(outcome(d))
            }
            DesktopAction::InputText(t) => {
                self.app.focus_window().await?;
                let mut how = String::new();
                if let Some(l) = &t.locator {
                    let n = resolve_wait(&conn, &self.app.root, l, deadline).await?;
                    // GTK 4 answers GrabFocus with NotSupported: a real
                    // click into the element focuses it as a person would.
                    if let Err(e) = actions::focus(&conn, &n).await {
                        match pointer::click(&self.app, &n).await {
                            Ok(d) => how = format!(" after focusing it by {d} (GrabFocus: {})", e.message),
                            Err(_) => {
                                return Err(DriverError::new(
                                    DesktopCode::FocusUnsupported,
                                    format!(
                                        "{} cannot be focused through accessibility (the toolkit refused GrabFocus: {}) and exposes no on-screen position to click",
                                        crate::locate::describe(&n.view),
                                        e.message
                                    ),
                                )
                                .with_remediation(
                                    "move the keyboard focus there with pressKey (Tab, or the field's shortcut), then inputText without a locator",
                                ))
                            }
                        }
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                let text = t.text.clone();
                self.input(move |x| keys::type_text(x, &text)).await?;
                Ok(outcome(format!(
                    "typed {} characters{how}",
                    t.text.chars().count()
                )))
            }
            DesktopAction::PressKey(k) => {
                let chord = k.key.chord();
                self.app.focus_window().await?;
                self.input(move |x| {
                    let mut map = keys::Keymap::load(x)?;
                    keys::press_chord(x, &mut map, &chord)
                })
                .await?;
                Ok(outcome(format!("pressed {chord}")))
            }
            DesktopAction::Screenshot(_) => {
                let (_, w) = artifacts::screenshot(&self.app, &self.ctx, step).await?;
                Ok(outcome(format!(
                    "window 0x{:x} (pid {}) {}x{} at {},{}",
                    w.id, w.pid, w.width, w.height, w.x, w.y
                )))
            }
            DesktopAction::Capture(_) => {
                let (_, w) = artifacts::screenshot(&self.app, &self.ctx, step).await?;
                artifacts::snapshot(&self.app, &self.ctx, step, None, deadline).await?;
                Ok(outcome(format!(
                    "window 0x{:x} {}x{} + snapshot",
                    w.id, w.width, w.height
                )))
            }
            other @ (DesktopAction::WaitForWindow(_)
            | DesktopAction::WaitForTimeout(_)
            | DesktopAction::WaitForText(_)
            | DesktopAction::AssertText(_)
            | DesktopAction::AssertState(_)
            | DesktopAction::AssertProcessExited(_)
            | DesktopAction::AssertOutput(_)) => Err(DriverError::new(
                DesktopCode::StepNotAnAction,
                format!("{} is not performed by the driver", other.name()),
            )),
        }
    }

    async fn verify(&mut self, step: &Step, deadline: Deadline) -> Result<Verdict, DriverError> {
        match desktop(step)? {
            DesktopAction::AssertProcessExited(x) => return Ok(self.exited(x.exit_code)),
            DesktopAction::AssertOutput(o) => return Ok(self.output(o)),
            _ => {}
        }
        let app = &self.app;
        let secrets = &self.ctx.secrets;
        let work = async {
            match desktop(step)? {
                DesktopAction::WaitForWindow(w) => {
                    Ok(checks::window(app, w.title.as_ref(), secrets).await)
                }
                DesktopAction::WaitForText(t) | DesktopAction::AssertText(t) => {
                    checks::text(app, t.locator.as_ref(), &t.matcher(), secrets).await
                }
                DesktopAction::AssertState(s) => checks::state(app, s, secrets).await,
                other @ (DesktopAction::AssertProcessExited(_)
                | DesktopAction::AssertOutput(_)
                | DesktopAction::ActivateWindow(_)
                | DesktopAction::Activate(_)
                | DesktopAction::Click(_)
                | DesktopAction::Select(_)
                | DesktopAction::SnapshotAccessibility(_)
                | DesktopAction::SetValue(_)
                | DesktopAction::InputText(_)
                | DesktopAction::PressKey(_)
                | DesktopAction::WaitForTimeout(_)
                | DesktopAction::Screenshot(_)
                | DesktopAction::Capture(_)) => Err(DriverError::new(
                    DesktopCode::StepNotAnAssertion,
                    format!("{} is not verified by the driver", other.name()),
                )),
            }
        };
        match deadline.run(work).await {
            Some(r) => r,
            None => Ok(Verdict::not_yet(
                "the accessibility tree did not answer before the step deadline",
            )),
        }
    }

    async fn capture_failure(&mut self, step: &Step) -> Vec<Artifact> {
        let mut named = step.clone();
        named.name = Some(format!("failure-step{}", step.index + 1));
        let mut out = Vec::new();
        if let Ok((a, _)) = artifacts::screenshot(&self.app, &self.ctx, &named).await {
            out.push(a);
        }
        // The tree beside the picture: names and roles to write a locator from.
        let until = Deadline::after_ms(4000);
        if let Ok(a) = artifacts::snapshot(&self.app, &self.ctx, &named, None, until).await {
            out.push(a);
        }
        out
    }

    async fn close(self: Box<Self>, deadline: Deadline) -> CloseResult {
        let LinuxSession {
            ctx,
            env,
            app,
            launched,
            video,
        } = *self;
        // The video first, while the window is still there (it may have
        // closed already: the video ends at its last frame); what it leaves
        // of the deadline is kept for ending the processes.
        let keep = DEFAULT_GRACE + CLOSE_RESERVE;
        let video_deadline = Deadline::after(deadline.remaining().saturating_sub(keep));
        let mut notes = video.finish(video_deadline).await;
        // Off the accessibility bus before its processes end.
        drop(app);
        let cleanup = ctx.processes.end_all(DEFAULT_GRACE, deadline).await;
        drop(launched);
        display::remove_runtime_dir(&env);
        notes.extend(artifacts::app_logs(&ctx));
        if env.owned {
            notes.push(Note::new(
                NoteKind::Environment,
                format!(
                    "virtual display {} and its private session bus were ended",
                    env.display
                ),
            ));
        }
        CloseResult { cleanup, notes }
    }
}
