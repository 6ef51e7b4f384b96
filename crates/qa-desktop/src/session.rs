//! The desktop session every desktop driver returns: the step dispatch (one
//! exhaustive match per entry point), verdicts, evidence and the typed
//! surface state, over a [`DesktopPlatform`].

use crate::codes::DesktopCode;
use crate::inspect::SNAPSHOT_CAP;
use crate::locate::{describe, truncate};
use crate::node::{ax_tree, Fields};
use crate::platform::{Activated, DesktopPlatform, Exit, Stream, WindowShot};
use crate::resolve::resolve_wait;
use crate::verdict;
use async_trait::async_trait;
use qa_core::flow::{Action, DesktopAction, Locator, OutputAssert, OutputStream};
use qa_core::observe::Observation;
use qa_core::snapshot::{AxApplication, AxSnapshot};
use qa_core::{
    Artifact, ArtifactGroup, CloseResult, Deadline, DriverError, Mismatch, SessionContext, Step,
    StepOutcome, SurfaceSession, SurfaceState, Verdict,
};
use std::time::{Duration, Instant};

/// Bound on one observation (the runner allows it 5 s).
const OBSERVE_MS: u64 = 2_000;
/// Most window titles an observation lists.
const OBSERVE_WINDOWS: usize = 20;
/// Characters of one window title in an observation.
const OBSERVE_TITLE_CHARS: usize = 120;
/// How long a failure's accessibility snapshot may take.
const FAILURE_SNAPSHOT_MS: u64 = 4_000;
/// Pause between focusing an element and typing into it, so the toolkit
/// has moved its focus before the first key arrives.
const FOCUS_SETTLE: Duration = Duration::from_millis(50);
/// Longest wait, before the first input, for the window video's first
/// frame.
const VIDEO_READY_MS: u64 = 5_000;
/// Longest wait, after a performed step, for the window video's fresh
/// frame.
const VIDEO_HOLD_MS: u64 = 2_000;

/// An open session on one application, over platform `P`.
pub struct DesktopSession<P: DesktopPlatform> {
    ctx: SessionContext,
    platform: Box<P>,
    /// The attempts at the assertion being retried: its last verdict the
    /// tree answered.
    attempts: verdict::Attempts,
}

impl<P: DesktopPlatform> DesktopSession<P> {
    /// A session driving the application `platform` reached, for the run
    /// `ctx` describes.
    pub fn new(ctx: SessionContext, platform: P) -> Self {
        DesktopSession {
            ctx,
            platform: Box::new(platform),
            attempts: verdict::Attempts::default(),
        }
    }

    fn redact(&self, s: &str) -> String {
        self.ctx.secrets.redact(s).into_owned()
    }

    /// Writes one artifact named from the step; a file holding a secret is
    /// withheld and reported as an error.
    fn write(
        &self,
        group: ArtifactGroup,
        step: &Step,
        ext: &str,
        bytes: &[u8],
    ) -> Result<Artifact, DriverError> {
        let ev = &self.ctx.evidence;
        let name = ev.unique_name(group, &step.evidence_name(), ext);
        ev.write(group, &name, bytes, Some(step.index + 1))?
            .ok_or_else(|| {
                DriverError::new(
                    DesktopCode::EvidenceWithheld,
                    format!("{name} contained a secret value and was withheld"),
                )
            })
    }

    /// The application window's PNG, published.
    async fn screenshot(&self, step: &Step) -> Result<(Artifact, WindowShot), DriverError> {
        let shot = self.platform.screenshot().await?;
        let a = self.write(ArtifactGroup::Screenshots, step, "png", &shot.png)?;
        Ok((a, shot))
    }

    /// A bounded, redacted JSON snapshot of the tree under the application
    /// (or under the element `root` names), published.
    async fn snapshot(
        &self,
        step: &Step,
        root: Option<&Locator>,
        deadline: Deadline,
    ) -> Result<Artifact, DriverError> {
        let p = &*self.platform;
        let root = match root {
            Some(l) => resolve_wait(p, l, deadline).await?.element,
            None => p.root(),
        };
        let started = Instant::now();
        let Some((nodes, truncated)) = deadline.run(p.walk(&root, Fields::ALL, SNAPSHOT_CAP)).await
        else {
            return Err(DriverError::new(
                DesktopCode::SnapshotTimeout,
                "the accessibility snapshot did not finish before the step deadline",
            ));
        };
        let (name, pid) = p.application();
        let doc = AxSnapshot {
            application: Some(AxApplication { name, pid }),
            node_count: Some(nodes.len()),
            node_cap: Some(SNAPSHOT_CAP),
            truncated,
            elapsed_ms: Some(started.elapsed().as_millis() as u64),
            tree: (!nodes.is_empty()).then(|| ax_tree(&nodes, 0)),
            nodes: None,
        };
        let bytes = doc.to_redacted_json(&self.ctx.secrets);
        self.write(ArtifactGroup::AccessibilitySnapshots, step, "json", &bytes)
    }

    /// Performs one action step.
    async fn act(&self, step: &Step, deadline: Deadline) -> Result<StepOutcome, DriverError> {
        let p = &*self.platform;
        match desktop(step)? {
            DesktopAction::ActivateWindow(_) => Ok(outcome(p.activate_window().await?)),
            DesktopAction::Activate(a) => {
                let n = resolve_wait(p, &a.locator, deadline).await?;
                let d = match p.activate(&n).await? {
                    Activated::Action(d) => d,
                    Activated::NoAction => p.click(&n).await?,
                };
                Ok(outcome(d))
            }
            DesktopAction::Click(a) => {
                let n = resolve_wait(p, &a.locator, deadline).await?;
                Ok(outcome(p.click(&n).await?))
            }
            DesktopAction::Select(a) => {
                let n = resolve_wait(p, &a.locator, deadline).await?;
                Ok(outcome(p.select(&n).await?))
            }
            DesktopAction::SnapshotAccessibility(s) => {
                self.snapshot(step, s.locator.as_ref(), deadline).await?;
                Ok(outcome("accessibility snapshot"))
            }
            DesktopAction::SetValue(s) => {
                let n = resolve_wait(p, &s.locator, deadline).await?;
                Ok(outcome(p.set_value(&n, &s.value, deadline).await?))
            }
            DesktopAction::InputText(t) => Ok(outcome(
                self.input_text(t.locator.as_ref(), &t.text, deadline)
                    .await?,
            )),
            DesktopAction::PressKey(k) => {
                let chord = k.key.chord();
                p.activate_window().await?;
                p.press(chord).await?;
                Ok(outcome(format!("pressed {chord}")))
            }
            DesktopAction::Screenshot(_) => {
                let (_, w) = self.screenshot(step).await?;
                Ok(outcome(format!(
                    "{} (pid {}) {}x{} at {},{}",
                    w.window, w.pid, w.width, w.height, w.x, w.y
                )))
            }
            DesktopAction::Capture(_) => {
                let (_, w) = self.screenshot(step).await?;
                self.snapshot(step, None, deadline).await?;
                Ok(outcome(format!(
                    "{} {}x{} + snapshot",
                    w.window, w.width, w.height
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

    /// `assertProcessExited`: the launched application has exited (with
    /// `want`, when given).
    fn exited(&mut self, want: Option<i32>) -> Verdict {
        let expected = match want {
            Some(c) => format!("the application to exit with code {c}"),
            None => "the application to exit".into(),
        };
        match self.platform.exit() {
            Exit::Attached => Verdict::Fails {
                reason: "only a launched application's exit can be checked; this one was attached"
                    .into(),
            },
            Exit::Running => Verdict::differs(Mismatch::new(expected, "it is still running")),
            Exit::Ended(code, how) => match (want, code) {
                (None, _) => Verdict::Holds,
                (Some(w), Some(c)) if w == c => Verdict::Holds,
                (Some(_), _) => Verdict::Fails {
                    reason: Mismatch::new(expected, format!("it ended with {how}")).summary(),
                },
            },
            Exit::Unknown(why) => Verdict::Fails {
                reason: format!("the application's exit could not be read: {why}"),
            },
        }
    }

    /// `assertOutput`: what the launched application printed so far matches
    /// (one trailing newline ignored).
    fn output(&self, o: &OutputAssert) -> Verdict {
        let (stream, label) = match o.stream.unwrap_or_default() {
            OutputStream::Stdout => (Stream::Stdout, "stdout"),
            OutputStream::Stderr => (Stream::Stderr, "stderr"),
        };
        let Some(bytes) = self.platform.output(stream) else {
            return Verdict::Fails {
                reason: "only a launched application's output is captured; this one was attached"
                    .into(),
            };
        };
        let text = String::from_utf8_lossy(&bytes);
        let text = text.strip_suffix('\n').unwrap_or(&text);
        let m = o.matcher();
        if m.matches(text) {
            return Verdict::Holds;
        }
        Verdict::differs(Mismatch::new(
            format!("{label} {}", m.describe()),
            format!("{:?}", self.redact(text)),
        ))
    }

    /// `inputText`: into the application's window, after focusing the
    /// located element (through the accessibility API, else by clicking it
    /// as a person would). Returns the step detail.
    async fn input_text(
        &self,
        locator: Option<&Locator>,
        text: &str,
        deadline: Deadline,
    ) -> Result<String, DriverError> {
        let p = &*self.platform;
        p.activate_window().await?;
        let mut how = String::new();
        if let Some(l) = locator {
            let n = resolve_wait(p, l, deadline).await?;
            if let Err(e) = p.focus(&n).await {
                match p.click(&n).await {
                    Ok(d) => {
                        how = format!(" after focusing it by {d} (the toolkit refused focus: {})", e.message)
                    }
                    Err(_) => {
                        return Err(DriverError::new(
                            DesktopCode::FocusUnsupported,
                            format!(
                                "{} cannot be focused through accessibility (the toolkit refused focus: {}) and exposes no on-screen position to click",
                                describe(&n.view),
                                e.message
                            ),
                        )
                        .with_remediation(
                            "move the keyboard focus there with pressKey (Tab, or the field's shortcut), then inputText without a locator",
                        ))
                    }
                }
            }
            tokio::time::sleep(FOCUS_SETTLE).await;
        }
        p.type_text(text).await?;
        Ok(format!("typed {} characters{how}", text.chars().count()))
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
impl<P: DesktopPlatform> SurfaceSession for DesktopSession<P> {
    async fn elements(&mut self, deadline: Deadline) -> Result<Observation, DriverError> {
        crate::inspect::elements(&*self.platform, deadline).await
    }

    async fn observe(&mut self) -> Result<SurfaceState, DriverError> {
        let wins = Deadline::after_ms(OBSERVE_MS)
            .run(self.platform.windows())
            .await
            .ok_or_else(|| {
                DriverError::new(
                    DesktopCode::ObserveTimeout,
                    format!(
                        "the application's accessible windows did not answer within {OBSERVE_MS} ms"
                    ),
                )
            })?;
        let (app, pid) = self.platform.application();
        Ok(SurfaceState::Desktop {
            app: self.redact(&app),
            pid,
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
        // The window video starts before the first input and holds each
        // performed step's result (see `crate::video`).
        let hold = Duration::from_millis(qa_core::recording::DEFAULT_VIDEO_HOLD_MS);
        if let Some(v) = self.platform.window_video() {
            v.ready(hold, Deadline::after_ms(VIDEO_READY_MS).min(deadline))
                .await;
        }
        let r = self.act(step, deadline).await;
        if let Some(v) = self.platform.window_video() {
            v.hold(hold, Deadline::after_ms(VIDEO_HOLD_MS).min(deadline))
                .await;
        }
        r
    }

    async fn verify(&mut self, step: &Step, deadline: Deadline) -> Result<Verdict, DriverError> {
        match desktop(step)? {
            DesktopAction::AssertProcessExited(x) => return Ok(self.exited(x.exit_code)),
            DesktopAction::AssertOutput(o) => return Ok(self.output(o)),
            _ => {}
        }
        let p = &*self.platform;
        let secrets = &self.ctx.secrets;
        let work =
            async {
                match desktop(step)? {
                    DesktopAction::WaitForWindow(w) => Ok(verdict::Read::Answered(
                        verdict::window(&p.windows().await, w.title.as_ref(), secrets),
                    )),
                    DesktopAction::WaitForText(t) | DesktopAction::AssertText(t) => {
                        verdict::text(p, t.locator.as_ref(), &t.matcher(), secrets).await
                    }
                    DesktopAction::AssertState(s) => verdict::state(p, s, secrets).await,
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
        // An attempt the tree did not answer never hides what an earlier
        // attempt of the same step read (see `verdict::Attempts`).
        let v = verdict::attempt(&mut self.attempts, (step.index, deadline), deadline, work).await;
        // A verified step's moment stays on the window video too, so a
        // person sees every step (`perform` holds the performed ones).
        if matches!(v, Ok(Verdict::Holds)) {
            if let Some(video) = self.platform.window_video() {
                let hold = Duration::from_millis(qa_core::recording::DEFAULT_VIDEO_HOLD_MS);
                video
                    .hold(hold, Deadline::after_ms(VIDEO_HOLD_MS).min(deadline))
                    .await;
            }
        }
        v
    }

    async fn capture_failure(&mut self, step: &Step) -> Vec<Artifact> {
        let mut named = step.clone();
        named.name = Some(format!("failure-step{}", step.index + 1));
        let mut out = Vec::new();
        if let Ok((a, _)) = self.screenshot(&named).await {
            out.push(a);
        }
        // The tree beside the picture: names and roles to write a locator from.
        let until = Deadline::after_ms(FAILURE_SNAPSHOT_MS);
        if let Ok(a) = self.snapshot(&named, None, until).await {
            out.push(a);
        }
        out
    }

    async fn close(self: Box<Self>, deadline: Deadline) -> CloseResult {
        self.platform.close(deadline).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scripted::{app, Scripted};
    use qa_core::flow::TargetKind;
    use qa_core::process::ProcessOwner;
    use qa_core::{Evidence, RunOptions, Secrets};
    use std::sync::Arc;

    /// Issue 45 item 8: a desktop `waitForText` whose reads answered (the
    /// label read "Idle", then "Busy") and whose last read was still
    /// running at the step deadline fails because the text never
    /// appeared, with the text last seen — not because the tree did not
    /// answer.
    #[tokio::test]
    async fn a_wait_cut_off_by_its_deadline_reports_the_text_last_seen() {
        let dir = tempfile::tempdir().unwrap();
        let secrets = Arc::new(Secrets::new());
        let ctx = SessionContext::new(
            Arc::new(Evidence::create(dir.path(), "run", secrets).unwrap()),
            Arc::new(ProcessOwner::new()),
            Deadline::after_ms(600_000),
            RunOptions::default(),
            None,
        );
        let step = Step::parse(
            TargetKind::Desktop,
            serde_json::json!({
                "action": "waitForText",
                "locator": { "role": "label", "name": "status" },
                "includes": "Ready"
            }),
        )
        .unwrap();
        // Two reads answer at once; the third never does.
        let walks = vec![Some(app("Idle")), Some(app("Busy")), None];
        let mut s = DesktopSession::new(ctx, Scripted::new(walks));
        let deadline = Deadline::after_ms(200);
        let mut verdicts = Vec::new();
        for _ in 0..3 {
            verdicts.push(s.verify(&step, deadline).await.unwrap());
        }
        let Verdict::NotYet { observed, mismatch } = &verdicts[2] else {
            panic!("{verdicts:?}")
        };
        assert_eq!(observed, r#"text is "Busy""#, "{verdicts:?}");
        assert_eq!(
            mismatch.as_ref().and_then(|m| m.received.as_deref()),
            Some(r#""Busy""#)
        );
        // With no read ever answered, the tree did not answer.
        let dir = tempfile::tempdir().unwrap();
        let ctx = SessionContext::new(
            Arc::new(Evidence::create(dir.path(), "run", Arc::new(Secrets::new())).unwrap()),
            Arc::new(ProcessOwner::new()),
            Deadline::after_ms(600_000),
            RunOptions::default(),
            None,
        );
        let mut s = DesktopSession::new(ctx, Scripted::new(vec![None]));
        let v = s.verify(&step, Deadline::after_ms(50)).await.unwrap();
        assert_eq!(
            v,
            Verdict::not_yet("the accessibility tree did not answer before the step deadline")
        );
    }
}
