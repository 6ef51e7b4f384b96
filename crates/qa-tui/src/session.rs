//! An open terminal session: a program in a PTY the run owns, its screen in
//! the model, and the flow's steps performed and verified against it.

use crate::codes::TuiCode;
use crate::keys::{encode_key, encode_paste, KeyModes};
use crate::launch::LaunchPlan;
use crate::pty;
use crate::pump::{self, ExitInfo, Shared, WriterMsg};
use crate::screen::{self, Snapshot};
use crate::verdict::{Judge, ScanState};
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::term::test::TermSize;
use alacritty_terminal::term::TermMode;
use qa_core::flow::{Action, Step, TerminalAction};
use qa_core::keys::KeyName;
use qa_core::{
    Artifact, ArtifactGroup, CloseResult, Deadline, DriverError, Note, NoteKind, ProgramState,
    SessionContext, StepOutcome, SurfaceSession, SurfaceState, Verdict,
};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

/// One `verify` call watches the screen for at most 1/`WATCH_SHARE` of the
/// step time left, then answers `NotYet` so the runner's cadence asks again.
const WATCH_SHARE: u32 = 4;
/// Minimum spacing between two evaluations while waiting (coalesces floods).
const MIN_EVAL_SPACING: Duration = Duration::from_millis(4);
/// Default `stableMs` of `waitForStable`.
pub const DEFAULT_STABLE_MS: u64 = 300;

/// The note every terminal result carries about what its pictures are.
pub const EVIDENCE_NOTE: &str = "terminal evidence (the asciicast replay and PNG captures) is rendered from the alacritty_terminal model of the PTY output; it is terminal-state evidence, not pixels of a real terminal window";

/// The note a result carries when the replay was re-encoded because the run
/// has secrets.
pub const REPLAY_MASKED_NOTE: &str = "the run has secrets, so the terminal replay was re-encoded from the terminal model after every read, with every cell that showed a secret masked; it does not contain the program's raw output bytes";

/// A running terminal program and its model.
pub struct TuiSession {
    shared: Arc<Shared>,
    writer: mpsc::UnboundedSender<WriterMsg>,
    pid: u32,
    line: pty::Line,
    ctx: SessionContext,
    tasks: Vec<JoinHandle<()>>,
    pump: JoinHandle<()>,
    changes: watch::Receiver<u64>,
    program: String,
    /// `native-terminal`: the real window the output is mirrored to.
    native: Option<crate::native::NativeParts>,
}

/// A terminal window opened for a session, ready for its program.
#[cfg(unix)]
pub(crate) struct OpenWindow {
    /// The window.
    pub window: crate::native::window::NativeWindow,
    /// The connection to its bridge.
    pub stream: tokio::net::UnixStream,
}

/// No terminal window off Unix.
#[cfg(not(unix))]
pub(crate) enum OpenWindow {}

impl TuiSession {
    /// Spawns the planned program in a new PTY and starts the pump.
    pub(crate) async fn launch(
        plan: &LaunchPlan,
        ctx: SessionContext,
        window: Option<OpenWindow>,
    ) -> Result<TuiSession, DriverError> {
        let spawned = pty::spawn(plan, &ctx.processes).await?;
        let name = std::path::Path::new(&plan.argv[0])
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let shared = Shared::new(
            plan.cols,
            plan.rows,
            Some(&format!("ui-qa: {name}")),
            ctx.secrets.clone(),
        );
        let (tx, rx) = mpsc::unbounded_channel();
        let writer_task = tokio::spawn(pump::run_writer(spawned.input, rx));
        let mut tasks = vec![writer_task];
        let (tee, native) = match window {
            None => (pump::Tee::None, None),
            #[cfg(unix)]
            Some(OpenWindow { window, stream }) => {
                let to_program = tx.clone();
                let (mirror, copies) = crate::native::window::start_mirror(stream, move |b| {
                    let _ = to_program.send(WriterMsg::Bytes(b, None));
                });
                tasks.extend(copies);
                let video = Some(window.screen.record(&ctx, window.pid));
                (
                    pump::Tee::Window(mirror.clone()),
                    Some(crate::native::NativeParts {
                        window,
                        mirror,
                        video,
                        readied: Default::default(),
                    }),
                )
            }
            #[cfg(not(unix))]
            Some(w) => match w {},
        };
        let pump_task = tokio::spawn(pump::run_pump(
            shared.clone(),
            spawned.output,
            tx.clone(),
            tee,
        ));
        tasks.push(tokio::spawn(pump::run_exit_watch(
            shared.clone(),
            spawned.child,
        )));
        let changes = shared.subscribe();
        Ok(TuiSession {
            shared,
            writer: tx,
            pid: spawned.pid,
            line: spawned.line,
            ctx,
            tasks,
            pump: pump_task,
            changes,
            program: name,
            native,
        })
    }

    /// The program's process id (on Unix also its session and group id).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    async fn write(&self, bytes: Vec<u8>, deadline: Deadline) -> Result<(), DriverError> {
        if let Some(exit) = self.shared.exit() {
            return Err(DriverError::new(
                TuiCode::SendExited,
                format!(
                    "the program already ended ({}); nothing can be sent to it",
                    exit.describe()
                ),
            ));
        }
        let (ack, done) = oneshot::channel();
        self.writer
            .send(WriterMsg::Bytes(bytes, Some(ack)))
            .map_err(|_| DriverError::new(TuiCode::SendClosed, "the PTY writer has stopped"))?;
        match deadline.run(done).await {
            Some(Ok(Ok(()))) => Ok(()),
            Some(Ok(Err(e))) => Err(DriverError::new(TuiCode::SendFailed, format!("writing to the PTY failed: {e}"))),
            Some(Err(_)) => Err(DriverError::new(TuiCode::SendClosed, "the PTY writer has stopped")),
            None => Err(DriverError::new(
                TuiCode::SendTimeout,
                "the program did not read its input before the step deadline (its input buffer is full)",
            )),
        }
    }

    /// Performs one action step.
    async fn act(&mut self, step: &Step, deadline: Deadline) -> Result<StepOutcome, DriverError> {
        let action = terminal_action(step)?;
        self.marker(step);
        match action {
            TerminalAction::SendText(t) => {
                if let Some(c) = t.text.chars().find(|c| c.is_control()) {
                    return Err(DriverError::new(
                        TuiCode::TextControlCharacter,
                        format!(
                            "sendText only types printable text (found U+{:04X}); use sendKeys",
                            c as u32
                        ),
                    ));
                }
                self.write(t.text.as_bytes().to_vec(), deadline).await?;
                Ok(StepOutcome {
                    detail: Some(format!("typed {} characters", t.text.chars().count())),
                    ..Default::default()
                })
            }
            TerminalAction::SendPaste(p) => {
                let enabled = self
                    .shared
                    .model()
                    .term
                    .mode()
                    .contains(TermMode::BRACKETED_PASTE);
                if !enabled {
                    return Err(DriverError::new(
                        TuiCode::PasteNotEnabled,
                        "the program has not enabled bracketed paste (mode 2004), so a paste cannot be told apart from typing",
                    )
                    .with_remediation("wait until the program is ready (e.g. waitForText) or use sendText for typed input"));
                }
                self.write(encode_paste(&p.text), deadline).await?;
                Ok(StepOutcome {
                    detail: Some(format!(
                        "pasted {} characters (bracketed)",
                        p.text.chars().count()
                    )),
                    ..Default::default()
                })
            }
            TerminalAction::SendKeys(k) => {
                self.send_keys(&k.keys, deadline).await?;
                Ok(StepOutcome {
                    detail: Some(format!("sent {} key(s)", k.keys.len())),
                    ..Default::default()
                })
            }
            TerminalAction::Resize(r) => {
                if self.native.is_some() {
                    return Err(DriverError::new(
                        TuiCode::NativeTerminalResize,
                        "resize is not available in native-terminal presentation: the terminal window keeps the flow's viewport for the whole run, so the window and the model show the same grid",
                    )
                    .with_remediation("set the size with the flow's viewport, or use presentation \"pty\" to test resizing"));
                }
                self.resize(r.cols, r.rows, deadline).await?;
                Ok(StepOutcome {
                    detail: Some(format!("resized to {}x{}", r.cols, r.rows)),
                    ..Default::default()
                })
            }
            TerminalAction::WaitForStable(w) => {
                let ms = w.stable_ms.unwrap_or(DEFAULT_STABLE_MS);
                self.wait_for_stable(Duration::from_millis(ms), deadline)
                    .await?;
                Ok(StepOutcome {
                    detail: Some(format!("screen unchanged for {ms} ms")),
                    ..Default::default()
                })
            }
            TerminalAction::Capture(_) => self.capture(step).await.map(|(outcome, _)| outcome),
            TerminalAction::WaitForText(_)
            | TerminalAction::AssertText(_)
            | TerminalAction::AssertNotText(_)
            | TerminalAction::AssertCursor(_)
            | TerminalAction::AssertProcessRunning(_)
            | TerminalAction::AssertProcessExited(_) => Err(DriverError::new(
                TuiCode::StepNotAnAction,
                format!("{} is an assertion; the runner verifies it", action.name()),
            )),
            TerminalAction::WaitForTimeout(_) => Err(DriverError::new(
                TuiCode::StepNotAnAction,
                format!("{} is performed by the runner", action.name()),
            )),
        }
    }

    fn marker(&self, step: &Step) {
        if let Some(cast) = self.shared.model().cast.as_mut() {
            cast.marker(
                Instant::now(),
                &format!("step {}: {}", step.index + 1, step.action_name()),
            );
        }
    }

    async fn send_keys(&self, keys: &[KeyName], deadline: Deadline) -> Result<(), DriverError> {
        for k in keys {
            let chord = k.chord();
            let modes = KeyModes {
                app_cursor: self
                    .shared
                    .model()
                    .term
                    .mode()
                    .contains(TermMode::APP_CURSOR),
            };
            let bytes = encode_key(&chord, modes)
                .map_err(|e| DriverError::new(TuiCode::KeysUnsupported, e.0))?;
            self.write(bytes, deadline).await?;
        }
        Ok(())
    }

    async fn resize(
        &mut self,
        cols: u16,
        rows: u16,
        deadline: Deadline,
    ) -> Result<(), DriverError> {
        {
            let mut m = self.shared.model();
            let pump::Model { term, cast, .. } = &mut *m;
            term.resize(TermSize::new(usize::from(cols), usize::from(rows)));
            if let Some(cast) = cast.as_mut() {
                let now = Instant::now();
                cast.resize(now, cols, rows);
                cast.refresh(now, term);
            }
        }
        self.shared.bump();
        let (ack, done) = oneshot::channel();
        self.writer
            .send(WriterMsg::Resize(cols, rows, ack))
            .map_err(|_| DriverError::new(TuiCode::SendClosed, "the PTY writer has stopped"))?;
        match deadline.run(done).await {
            Some(Ok(Ok(()))) => Ok(()),
            Some(Ok(Err(e))) => Err(DriverError::new(
                TuiCode::ResizeFailed,
                format!("resizing the PTY failed: {e}"),
            )),
            _ => Err(DriverError::new(
                TuiCode::ResizeFailed,
                "the PTY writer did not answer",
            )),
        }
    }

    async fn wait_for_stable(
        &mut self,
        stable: Duration,
        deadline: Deadline,
    ) -> Result<(), DriverError> {
        let mut last = self.stability_key();
        let mut since = Instant::now();
        loop {
            if since.elapsed() >= stable {
                return Ok(());
            }
            let until = (since + stable).min(deadline.instant());
            if Instant::now() >= deadline.instant() {
                return Err(DriverError::new(
                    TuiCode::WaitUnstable,
                    format!(
                        "the screen kept changing; it was never unchanged for {} ms before the step deadline",
                        stable.as_millis()
                    ),
                )
                .with_remediation("raise stableMs or timeoutMs, or wait for specific text with waitForText"));
            }
            let changed = tokio::select! {
                r = self.changes.changed() => r.is_ok(),
                _ = tokio::time::sleep_until(tokio::time::Instant::from_std(until)) => false,
            };
            if changed {
                let now_key = self.stability_key();
                if now_key != last {
                    last = now_key;
                    since = Instant::now();
                }
            }
        }
    }

    /// Screen hash, or a fresh value while a synchronized update is pending.
    fn stability_key(&self) -> (u64, bool) {
        let m = self.shared.model();
        (screen::screen_hash(&m.term), m.sync_pending())
    }

    /// The screen with every cell that shows a secret masked: what captures
    /// and observations publish.
    fn masked_snapshot(&self) -> Snapshot {
        Snapshot::of_masked(&self.shared.model().term, &self.ctx.secrets)
    }

    /// Writes the text and PNG capture of the screen; returns the outcome
    /// and the artifacts published (a withheld file is a note instead).
    async fn capture(&self, step: &Step) -> Result<(StepOutcome, Vec<Artifact>), DriverError> {
        // Rendered from the masked grid: the PNG paints secret cells as
        // opaque blocks and the text twin prints the mask, so both can be
        // published. The evidence store still scans both and withholds a
        // file that contains a secret anyway (fail closed).
        let snap = self.masked_snapshot();
        let base = step.evidence_name();
        let ev = &self.ctx.evidence;
        let mut outcome = StepOutcome {
            detail: Some(format!("{}x{} screen captured", snap.cols, snap.rows)),
            ..Default::default()
        };
        let mut artifacts = Vec::new();
        let text_name = ev.unique_name(ArtifactGroup::TerminalCaptures, &base, "txt");
        // A native terminal's window is the picture named after the step;
        // the model's rendering is kept beside it, as a diagnostic.
        let model_base = match &self.native {
            Some(_) => format!("{base}-model"),
            None => base.clone(),
        };
        if let Some(native) = &self.native {
            if self.ctx.secrets.is_empty() {
                let pic = native.capture().await?;
                let name = ev.unique_name(ArtifactGroup::Screenshots, &base, "png");
                match ev.write(
                    ArtifactGroup::Screenshots,
                    &name,
                    &pic.png,
                    Some(step.index + 1),
                )? {
                    Some(a) => artifacts.push(a),
                    None => outcome.notes.push(Note::new(
                        NoteKind::Evidence,
                        format!("window picture {name} was withheld: it contained a secret value"),
                    )),
                }
                outcome.detail = Some(format!(
                    "{}x{} screen captured; {} {}x{} px",
                    snap.cols, snap.rows, pic.window, pic.width, pic.height
                ));
            } else {
                outcome.notes.push(Note::new(
                    NoteKind::Evidence,
                    "the terminal window's picture was not taken: the run has secret values, and a window's pixels cannot be checked or masked for them (the model's masked rendering is kept)",
                ));
            }
        }
        let png_name = ev.unique_name(ArtifactGroup::Screenshots, &model_base, "png");
        let png = crate::render::render_png(&snap);
        for (group, name, bytes) in [
            (
                ArtifactGroup::TerminalCaptures,
                text_name,
                snap.to_text().into_bytes(),
            ),
            (ArtifactGroup::Screenshots, png_name, png),
        ] {
            match ev.write(group, &name, &bytes, Some(step.index + 1))? {
                Some(a) => artifacts.push(a),
                None => outcome.notes.push(Note::new(
                    NoteKind::Evidence,
                    format!("capture {name} was withheld: it contained a secret value"),
                )),
            }
        }
        Ok((outcome, artifacts))
    }

    /// The assertion judge over this session's model and secrets.
    fn judge(&self) -> Judge<'_> {
        Judge {
            shared: &self.shared,
            secrets: &self.ctx.secrets,
        }
    }

    /// The typed state of the terminal: size, cursor, modes and whether the
    /// program runs. Reads the model once; no screen contents.
    fn surface_state(&self) -> SurfaceState {
        let exit = self.shared.exit();
        let m = self.shared.model();
        let grid = m.term.grid();
        let (row, col, _) = screen::cursor(&m.term);
        let mode = m.term.mode();
        SurfaceState::Terminal {
            cols: clamp_u16(grid.columns()),
            rows: clamp_u16(grid.screen_lines()),
            cursor_row: clamp_u16(row),
            cursor_col: clamp_u16(col),
            alternate_screen: mode.contains(TermMode::ALT_SCREEN),
            bracketed_paste: mode.contains(TermMode::BRACKETED_PASTE),
            program: program_state(exit),
        }
    }
}

fn clamp_u16(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

/// Whether the program runs, or how it ended. A status that is neither a
/// code nor a signal (waiting for it failed) is reported as exit code -1.
fn program_state(exit: Option<ExitInfo>) -> ProgramState {
    match exit {
        None => ProgramState::Running,
        Some(ExitInfo {
            code: Some(code), ..
        }) => ProgramState::Exited { code },
        Some(ExitInfo {
            signal: Some(signal),
            ..
        }) => ProgramState::Signaled { signal },
        Some(ExitInfo { .. }) => ProgramState::Exited { code: -1 },
    }
}

fn terminal_action(step: &Step) -> Result<&TerminalAction, DriverError> {
    match &step.action {
        Action::Terminal(a) => Ok(a),
        Action::Browser(_) | Action::Desktop(_) => Err(DriverError::new(
            TuiCode::StepUnsupported,
            format!("{} is not a terminal step", step.action_name()),
        )),
    }
}

#[async_trait::async_trait]
impl SurfaceSession for TuiSession {
    async fn observe(&mut self) -> Result<SurfaceState, DriverError> {
        Ok(self.surface_state())
    }

    /// The screen (masked where it shows a secret), cursor and modes.
    async fn elements(
        &mut self,
        _deadline: Deadline,
    ) -> Result<qa_core::observe::Observation, DriverError> {
        let s = self.masked_snapshot();
        Ok(qa_core::observe::Observation {
            id: String::new(),
            url: None,
            title: None,
            elements: Vec::new(),
            truncated: false,
            screen: Some(qa_core::observe::ScreenObservation {
                cols: s.cols,
                rows: s.rows,
                lines: s.lines,
                cursor_row: s.cursor_row,
                cursor_col: s.cursor_col,
                modes: s.modes.iter().map(|m| m.to_string()).collect(),
            }),
        })
    }

    async fn perform(
        &mut self,
        step: &Step,
        deadline: Deadline,
    ) -> Result<StepOutcome, DriverError> {
        // A native terminal's window video starts before the first input
        // and holds each performed step's result.
        let Some(native) = &self.native else {
            return self.act(step, deadline).await;
        };
        native.video_ready(deadline).await;
        let changes = self.shared.subscribe();
        let r = self.act(step, deadline).await;
        if let Some(native) = &self.native {
            native.video_hold(changes, deadline).await;
        }
        r
    }

    async fn verify(&mut self, step: &Step, deadline: Deadline) -> Result<Verdict, DriverError> {
        let action = terminal_action(step)?.clone();
        // Wait for changes inside this call (event-driven) for a share of the
        // time left, so the runner's cadence still asks again (and counts
        // attempts); always return a little before the deadline so the
        // runner gets the last observation.
        let remaining = deadline.remaining();
        let margin = (remaining / 20).min(Duration::from_millis(50));
        let poll_end = deadline
            .instant()
            .checked_sub(margin)
            .unwrap_or_else(Instant::now)
            .min(Instant::now() + remaining / WATCH_SHARE);
        let mut scan = ScanState::default();
        loop {
            self.changes.borrow_and_update();
            let evaluated_at = Instant::now();
            let v = self.judge().evaluate(&action, &mut scan);
            if !matches!(v, Verdict::NotYet { .. }) || Instant::now() >= poll_end {
                // A native terminal's window video holds a verified step's
                // moment too, so a person sees every step.
                if let (Verdict::Holds, Some(native)) = (&v, &self.native) {
                    native.video_hold(self.shared.subscribe(), deadline).await;
                }
                return Ok(v);
            }
            // Wake on change, and at least every 100 ms (drain timers, scrollback scans).
            let wake = (Instant::now() + Duration::from_millis(100)).min(poll_end);
            tokio::select! {
                _ = self.changes.changed() => {}
                _ = tokio::time::sleep_until(tokio::time::Instant::from_std(wake)) => {}
            }
            let next = (evaluated_at + MIN_EVAL_SPACING).min(poll_end);
            tokio::time::sleep_until(tokio::time::Instant::from_std(next)).await;
        }
    }

    async fn capture_failure(&mut self, step: &Step) -> Vec<qa_core::Artifact> {
        let mut named = step.clone();
        named.name = Some(format!("failure-step{}", step.index + 1));
        self.capture(&named)
            .await
            .map(|(_, artifacts)| artifacts)
            .unwrap_or_default()
    }

    async fn close(self: Box<Self>, deadline: Deadline) -> CloseResult {
        let mut result = CloseResult::default();
        let mut this = *self;
        // The replay marks where the steps ended: what follows is cleanup
        // (a full-screen program leaves its alternate screen when hung up),
        // and a report shows the screen as it was here.
        if let Some(cast) = this.shared.model().cast.as_mut() {
            cast.marker(Instant::now(), qa_core::recording::REPLAY_STEPS_ENDED);
        }
        // The window's video ends with the last step, before cleanup
        // changes the window.
        if let Some(native) = this.native.as_mut() {
            let video = Deadline::after_ms(10_000).min(deadline);
            result.notes.extend(native.finish(video).await);
            result
                .notes
                .push(Note::new(NoteKind::Environment, native.describe()));
        }
        // Hang up: what a terminal does when its window closes. Unix: only
        // an owned, identity-verified session leader is signalled; Windows:
        // the pseudoconsole closes, which ends the programs attached to it.
        if this.shared.exit().is_none() && this.line.hang_up(&this.ctx.processes) {
            let until = Deadline::after_ms(500).min(deadline);
            let mut changes = this.shared.subscribe();
            while this.shared.exit().is_none() && !until.expired() {
                let _ = until.run(changes.changed()).await;
            }
        }
        drop(this.writer);
        result.cleanup = this
            .ctx
            .processes
            .end_all(qa_core::process::DEFAULT_GRACE, deadline)
            .await;
        // Let the pump take the last output (bounded), then stop everything.
        let mut pump = this.pump;
        let drain = Deadline::after_ms(200).min(deadline);
        if drain.run(&mut pump).await.is_none() {
            pump.abort();
        }
        for t in &this.tasks {
            t.abort();
        }
        let (cast, bytes_read) = {
            let mut m = this.shared.model();
            (m.cast.take(), m.bytes_read)
        };
        result.notes.push(Note::new(
            NoteKind::Environment,
            match this.native {
                Some(_) => crate::native::NATIVE_EVIDENCE_NOTE,
                None => EVIDENCE_NOTE,
            },
        ));
        if let Some(e) = this.shared.exit() {
            result.notes.push(Note::info(format!(
                "terminal program {} ended with {}",
                this.program,
                e.describe()
            )));
        }
        if let Some(cast) = cast {
            let cast = cast.finish(Instant::now());
            if cast.cut {
                result.notes.push(Note::info(format!(
                    "terminal replay reached its 1 MiB cap and was cut; {} bytes of later output ({} in total) are not in it",
                    cast.dropped_bytes,
                    bytes_read
                )));
            }
            if cast.masked {
                result.notes.push(Note::info(REPLAY_MASKED_NOTE));
            }
            let ev = &this.ctx.evidence;
            let name = ev.unique_name(ArtifactGroup::Videos, "terminal", "cast");
            // The replay's time 0 on the run's timeline, for step markers.
            let written = ev.write_recording(
                ArtifactGroup::Videos,
                &name,
                &cast.bytes,
                ev.offset_ms(cast.started),
            );
            match written {
                Ok(Some(_)) => {}
                Ok(None) => result.notes.push(Note::new(
                    NoteKind::Evidence,
                    "the terminal replay was withheld: it contained a secret value",
                )),
                Err(e) => result.notes.push(Note::new(
                    NoteKind::Evidence,
                    format!("the terminal replay could not be written: {e}"),
                )),
            }
        }
        result
    }
}
