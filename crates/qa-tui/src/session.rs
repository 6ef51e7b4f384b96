//! An open terminal session: a program in a PTY the run owns, its screen in
//! the model, and the flow's steps performed and verified against it.

use crate::keys::{encode_key, encode_paste, KeyModes};
use crate::launch::LaunchPlan;
use crate::pump::{self, Shared, WriterMsg};
use crate::screen::{self, Snapshot};
use alacritty_terminal::term::test::TermSize;
use alacritty_terminal::term::TermMode;
use qa_core::flow::{Action, Step, TerminalAction};
use qa_core::keys::KeyChord;
use qa_core::{
    ArtifactGroup, CloseResult, Deadline, DriverError, Observation, SessionContext, StepOutcome,
    SurfaceSession, Verdict,
};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

/// Output quiet time after exit that counts as drained when EIO never comes.
const DRAIN_QUIET: Duration = Duration::from_millis(300);
/// How often the scrollback is searched while waiting (the screen is searched on every change).
const SCROLLBACK_SCAN_EVERY: Duration = Duration::from_millis(200);
/// Minimum spacing between two evaluations while waiting (coalesces floods).
const MIN_EVAL_SPACING: Duration = Duration::from_millis(8);
/// Default `stableMs` of `waitForStable`.
pub const DEFAULT_STABLE_MS: u64 = 300;
/// Longest excerpt of screen text put in an observation.
const EXCERPT_CHARS: usize = 160;

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
    ctx: SessionContext,
    tasks: Vec<JoinHandle<()>>,
    pump: JoinHandle<()>,
    changes: watch::Receiver<u64>,
    program: String,
}

impl TuiSession {
    /// Spawns the planned program in a new PTY and starts the pump.
    pub(crate) async fn launch(
        plan: &LaunchPlan,
        ctx: SessionContext,
    ) -> Result<TuiSession, DriverError> {
        let (pty, pts) = pty_process::open().map_err(|e| {
            DriverError::new("tui.pty.open_failed", format!("could not open a PTY: {e}"))
                .with_remediation("check that /dev/ptmx and /dev/pts are available to this user")
        })?;
        pty.resize(pty_process::Size::new(plan.rows, plan.cols))
            .map_err(|e| {
                DriverError::new(
                    "tui.pty.resize_failed",
                    format!("could not size the PTY: {e}"),
                )
            })?;
        // The owner's marker lets cleanup claim orphans that escaped early.
        let (marker_key, marker_value) = ctx.processes.marker();
        let mut cmd = pty_process::Command::new(&plan.program)
            .args(plan.argv.iter().skip(1))
            .env_clear()
            .envs(&plan.env)
            .env(marker_key, marker_value)
            .current_dir(&plan.cwd);
        if let Some(a0) = plan.argv.first() {
            cmd = cmd.arg0(a0);
        }
        let child = cmd.spawn(pts).map_err(|e| spawn_error(&plan.argv[0], e))?;
        let pid = child.id().ok_or_else(|| {
            DriverError::new(
                "tui.launch.failed",
                "the program exited before its pid was known",
            )
        })?;
        ctx.processes.register(pid, "terminal target");
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
        let (read, write) = pty.into_split();
        let (tx, rx) = mpsc::unbounded_channel();
        let writer_task = tokio::spawn(pump::run_writer(write, rx));
        let pump_task = tokio::spawn(pump::run_pump(shared.clone(), read, tx.clone()));
        let exit_task = tokio::spawn(pump::run_exit_watch(shared.clone(), child));
        let changes = shared.subscribe();
        Ok(TuiSession {
            shared,
            writer: tx,
            pid,
            ctx,
            tasks: vec![writer_task, exit_task],
            pump: pump_task,
            changes,
            program: name,
        })
    }

    /// The program's process id (also its session and group id).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    async fn write(&self, bytes: Vec<u8>, deadline: Deadline) -> Result<(), DriverError> {
        if let Some(exit) = self.shared.exit() {
            return Err(DriverError::new(
                "tui.send.exited",
                format!(
                    "the program already ended ({}); nothing can be sent to it",
                    exit.describe()
                ),
            ));
        }
        let (ack, done) = oneshot::channel();
        self.writer
            .send(WriterMsg::Bytes(bytes, Some(ack)))
            .map_err(|_| DriverError::new("tui.send.closed", "the PTY writer has stopped"))?;
        match deadline.run(done).await {
            Some(Ok(Ok(()))) => Ok(()),
            Some(Ok(Err(e))) => Err(DriverError::new("tui.send.failed", format!("writing to the PTY failed: {e}"))),
            Some(Err(_)) => Err(DriverError::new("tui.send.closed", "the PTY writer has stopped")),
            None => Err(DriverError::new(
                "tui.send.timeout",
                "the program did not read its input before the step deadline (its input buffer is full)",
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

    async fn send_keys(&self, keys: &[String], deadline: Deadline) -> Result<(), DriverError> {
        for k in keys {
            let chord = KeyChord::parse(k).map_err(|e| DriverError::new("tui.keys.invalid", e))?;
            let modes = KeyModes {
                app_cursor: self
                    .shared
                    .model()
                    .term
                    .mode()
                    .contains(TermMode::APP_CURSOR),
            };
            let bytes = encode_key(&chord, modes)
                .map_err(|e| DriverError::new("tui.keys.unsupported", e.0))?;
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
            .map_err(|_| DriverError::new("tui.send.closed", "the PTY writer has stopped"))?;
        match deadline.run(done).await {
            Some(Ok(Ok(()))) => Ok(()),
            Some(Ok(Err(e))) => Err(DriverError::new(
                "tui.resize.failed",
                format!("resizing the PTY failed: {e}"),
            )),
            _ => Err(DriverError::new(
                "tui.resize.failed",
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
                    "tui.wait.unstable",
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

    fn capture(&self, step: &Step) -> Result<StepOutcome, DriverError> {
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
        let text_name = ev.unique_name(ArtifactGroup::TerminalCaptures, &base, "txt");
        let png_name = ev.unique_name(ArtifactGroup::Screenshots, &base, "png");
        let png = crate::render::render_png(&snap);
        for (group, name, bytes) in [
            (
                ArtifactGroup::TerminalCaptures,
                text_name,
                snap.to_text().into_bytes(),
            ),
            (ArtifactGroup::Screenshots, png_name, png),
        ] {
            match ev.write(group, &name, &bytes, Some(step.index + 1)) {
                Ok(Some(a)) => outcome.artifacts.push(a),
                Ok(None) => outcome.observations.push(format!(
                    "capture {name} was withheld: it contained a secret value"
                )),
                Err(e) => {
                    return Err(DriverError::new("tui.capture.write_failed", e.to_string()));
                }
            }
        }
        Ok(outcome)
    }

    fn redact(&self, s: &str) -> String {
        self.ctx.secrets.redact(s).into_owned()
    }

    /// The last lines of `text`, redacted *before* they are cut, so a secret
    /// cut in half by the length bound cannot leave its first half behind.
    fn excerpt(&self, text: &str) -> String {
        excerpt(&self.redact(text))
    }

    fn describe_query(&self, text: &Option<String>, regex: &Option<String>) -> String {
        let text = text.as_deref().map(|t| self.redact(t));
        let regex = regex.as_deref().map(|r| self.redact(r));
        describe_query(&text, &regex)
    }

    /// One evaluation of an assertion against the current model.
    fn evaluate(&self, action: &TerminalAction, scan: &mut ScanState) -> Verdict {
        let drained = self.shared.drained(DRAIN_QUIET);
        let exit = self.shared.exit();
        match action {
            TerminalAction::WaitForText(q) => {
                let m = self.shared.model();
                let screen = screen::screen_text(&m.term);
                if text_matches(&q.text, &q.regex, &screen) {
                    return Verdict::Holds;
                }
                let full_due = scan
                    .last_full
                    .is_none_or(|t| t.elapsed() >= SCROLLBACK_SCAN_EVERY)
                    || drained;
                if full_due {
                    scan.last_full = Some(Instant::now());
                    if text_matches(&q.text, &q.regex, &screen::full_text(&m.term)) {
                        return Verdict::Holds;
                    }
                    if drained {
                        return Verdict::Fails {
                            reason: self.redact(&format!(
                                "the program ended ({}) and its output never contained {}; last lines: {}",
                                exit.map(|e| e.describe()).unwrap_or_default(),
                                self.describe_query(&q.text, &q.regex),
                                self.excerpt(&screen)
                            )),
                        };
                    }
                }
                Verdict::NotYet {
                    observed: self.redact(&format!(
                        "not on screen or in scrollback yet; last lines: {}",
                        self.excerpt(&screen)
                    )),
                }
            }
            TerminalAction::AssertText(a) | TerminalAction::AssertNotText(a) => {
                let want_present = matches!(action, TerminalAction::AssertText(_));
                let m = self.shared.model();
                let (hay, place) = match a.row {
                    Some(r) => match screen::screen_row(&m.term, usize::from(r)) {
                        Some(t) => (t, format!("row {r}")),
                        None => {
                            return Verdict::Fails {
                                reason: format!(
                                    "row {r} is outside the {}-row screen",
                                    alacritty_terminal::grid::Dimensions::screen_lines(
                                        m.term.grid()
                                    )
                                ),
                            }
                        }
                    },
                    None => (screen::screen_text(&m.term), "the screen".to_string()),
                };
                let found = text_matches(&a.text, &a.regex, &hay);
                if found == want_present {
                    return Verdict::Holds;
                }
                let what = format!(
                    "{} {} {}",
                    place,
                    if want_present {
                        "does not contain"
                    } else {
                        "still contains"
                    },
                    self.describe_query(&a.text, &a.regex)
                );
                let seen = if a.row.is_some() {
                    quote(&self.redact(&hay))
                } else {
                    self.excerpt(&hay)
                };
                if drained {
                    Verdict::Fails {
                        reason: self.redact(&format!(
                            "{what} and the program has ended, so it cannot change; saw {seen}"
                        )),
                    }
                } else {
                    Verdict::NotYet {
                        observed: self.redact(&format!("{what}; saw {seen}")),
                    }
                }
            }
            TerminalAction::AssertCursor(c) => {
                let (row, col, visible) = screen::cursor(&self.shared.model().term);
                let pos_ok = row == usize::from(c.row) && col == usize::from(c.col);
                let vis_ok = c.visible.is_none_or(|v| v == visible);
                if pos_ok && vis_ok {
                    return Verdict::Holds;
                }
                let observed = format!(
                    "cursor at row {row}, col {col} ({})",
                    if visible { "visible" } else { "hidden" }
                );
                if drained {
                    Verdict::Fails {
                        reason: format!("{observed} and the program has ended"),
                    }
                } else {
                    Verdict::NotYet { observed }
                }
            }
            TerminalAction::AssertProcessRunning(_) => match exit {
                None => Verdict::Holds,
                Some(e) => Verdict::Fails {
                    reason: format!("the program has ended ({})", e.describe()),
                },
            },
            TerminalAction::AssertProcessExited(x) => match exit {
                None => Verdict::NotYet {
                    observed: "the program is still running".into(),
                },
                Some(e) => match x.exit_code {
                    None => Verdict::Holds,
                    Some(want) if e.code == Some(want) => Verdict::Holds,
                    Some(want) => Verdict::Fails {
                        reason: format!(
                            "the program ended with {}, expected exit code {want}",
                            e.describe()
                        ),
                    },
                },
            },
            other => Verdict::Fails {
                reason: format!("{} is not an assertion", other.name()),
            },
        }
    }
}

/// Bookkeeping of one verify call.
#[derive(Default)]
struct ScanState {
    last_full: Option<Instant>,
}

fn text_matches(text: &Option<String>, regex: &Option<String>, hay: &str) -> bool {
    if let Some(t) = text {
        return hay.contains(t.as_str());
    }
    if let Some(r) = regex {
        return compile(r).is_some_and(|re| re.is_match(hay));
    }
    false
}

/// Compiles a flow regex in multi-line mode (`^`/`$` match at line
/// boundaries), caching the last few.
fn compile(r: &str) -> Option<regex::Regex> {
    use std::sync::Mutex;
    static CACHE: Mutex<Vec<(String, regex::Regex)>> = Mutex::new(Vec::new());
    let mut cache = CACHE.lock().ok()?;
    if let Some((_, re)) = cache.iter().find(|(k, _)| k == r) {
        return Some(re.clone());
    }
    let re = regex::RegexBuilder::new(r).multi_line(true).build().ok()?;
    if cache.len() >= 16 {
        cache.remove(0);
    }
    cache.push((r.to_string(), re.clone()));
    Some(re)
}

fn describe_query(text: &Option<String>, regex: &Option<String>) -> String {
    match (text, regex) {
        (Some(t), _) => format!("text {:?}", truncate(t, 80)),
        (_, Some(r)) => format!("regex /{}/", truncate(r, 80)),
        _ => "nothing".into(),
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n).collect();
        t.push('…');
        t
    }
}

fn quote(s: &str) -> String {
    format!("{:?}", truncate(s, EXCERPT_CHARS))
}

/// The last few non-empty lines of `text`, quoted and bounded.
fn excerpt(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return "(empty screen)".into();
    }
    let tail = &lines[lines.len().saturating_sub(3)..];
    truncate(
        &tail
            .iter()
            .map(|l| format!("{:?}", l.trim_end()))
            .collect::<Vec<_>>()
            .join(" / "),
        EXCERPT_CHARS,
    )
}

fn spawn_error(argv0: &str, e: pty_process::Error) -> DriverError {
    let msg = e.to_string();
    let io_kind = match &e {
        pty_process::Error::Io(io) => Some((io.kind(), io.raw_os_error())),
        _ => None,
    };
    match io_kind {
        Some((std::io::ErrorKind::NotFound, _)) => DriverError::new(
            "tui.launch.not_found",
            format!("program {argv0:?} could not be started: {msg}"),
        ),
        Some((std::io::ErrorKind::PermissionDenied, _)) => DriverError::new(
            "tui.launch.not_executable",
            format!("program {argv0:?} is not executable: {msg}"),
        ),
        Some((_, Some(code))) if code == libc::ENOEXEC => DriverError::new(
            "tui.launch.not_executable",
            format!("{argv0:?} is not a program the system can run (no interpreter line or wrong format)"),
        )
        .with_remediation("add a #! line or run it through its interpreter, e.g. [\"sh\", \"script.sh\"]"),
        _ => DriverError::new("tui.launch.failed", format!("starting {argv0:?} failed: {msg}")),
    }
}

fn terminal_action(step: &Step) -> Result<&TerminalAction, DriverError> {
    match &step.action {
        Action::Terminal(a) => Ok(a),
        _ => Err(DriverError::new(
            "tui.step.unsupported",
            format!("{} is not a terminal step", step.action_name()),
        )),
    }
}

#[async_trait::async_trait]
impl SurfaceSession for TuiSession {
    async fn observe(&mut self) -> Result<Observation, DriverError> {
        let snap = self.masked_snapshot();
        let state = match self.shared.exit() {
            None => "running".to_string(),
            Some(e) => format!("ended ({})", e.describe()),
        };
        let rows: Vec<String> = snap.lines.iter().map(|l| self.redact(l)).collect();
        Ok(Observation {
            summary: format!(
                "{} {state}; {}x{} terminal, cursor row {} col {}, modes: {}",
                self.program,
                snap.cols,
                snap.rows,
                snap.cursor_row,
                snap.cursor_col,
                snap.modes.join(", ")
            ),
            detail: serde_json::json!({
                "cols": snap.cols,
                "rows": snap.rows,
                "cursor": { "row": snap.cursor_row, "col": snap.cursor_col, "visible": snap.cursor_visible },
                "modes": snap.modes,
                "screen": rows,
            }),
        })
    }

    async fn perform(
        &mut self,
        step: &Step,
        deadline: Deadline,
    ) -> Result<StepOutcome, DriverError> {
        let action = terminal_action(step)?;
        self.marker(step);
        match action {
            TerminalAction::SendText(t) => {
                if let Some(c) = t.text.chars().find(|c| c.is_control()) {
                    return Err(DriverError::new(
                        "tui.text.control_character",
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
                        "tui.paste.not_enabled",
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
            TerminalAction::Capture(_) => self.capture(step),
            other => Err(DriverError::new(
                "tui.step.not_an_action",
                format!("{} is an assertion; the runner verifies it", other.name()),
            )),
        }
    }

    async fn verify(&mut self, step: &Step, deadline: Deadline) -> Result<Verdict, DriverError> {
        let action = terminal_action(step)?.clone();
        // Wait for changes inside this call (event-driven), returning a little
        // before the deadline so the runner still gets the last observation.
        let margin = (deadline.remaining() / 20).min(Duration::from_millis(50));
        let poll_end = deadline
            .instant()
            .checked_sub(margin)
            .unwrap_or_else(Instant::now);
        let mut scan = ScanState::default();
        loop {
            self.changes.borrow_and_update();
            let evaluated_at = Instant::now();
            let v = self.evaluate(&action, &mut scan);
            if !matches!(v, Verdict::NotYet { .. }) || Instant::now() >= poll_end {
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
            .map(|o| o.artifacts)
            .unwrap_or_default()
    }

    async fn close(self: Box<Self>, deadline: Deadline) -> CloseResult {
        let mut result = CloseResult::default();
        let this = *self;
        // Hang up: what a terminal does when its window closes.
        if this.shared.exit().is_none() {
            signal_group(this.pid, libc::SIGHUP);
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
        result.observations.push(EVIDENCE_NOTE.to_string());
        if let Some(e) = this.shared.exit() {
            result.observations.push(format!(
                "terminal program {} ended with {}",
                this.program,
                e.describe()
            ));
        }
        if let Some(cast) = cast {
            let cast = cast.finish(Instant::now());
            if cast.cut {
                result.observations.push(format!(
                    "terminal replay reached its 1 MiB cap and was cut; {} bytes of later output ({} in total) are not in it",
                    cast.dropped_bytes,
                    bytes_read
                ));
            }
            if cast.masked {
                result.observations.push(REPLAY_MASKED_NOTE.to_string());
            }
            let ev = &this.ctx.evidence;
            let name = ev.unique_name(ArtifactGroup::Videos, "terminal", "cast");
            match ev.write(ArtifactGroup::Videos, &name, &cast.bytes, None) {
                Ok(Some(a)) => result.artifacts.push(a),
                Ok(None) => result
                    .observations
                    .push("the terminal replay was withheld: it contained a secret value".into()),
                Err(e) => result
                    .observations
                    .push(format!("the terminal replay could not be written: {e}")),
            }
        }
        result
    }
}

fn signal_group(pid: u32, sig: i32) {
    #[allow(unsafe_code)]
    // SAFETY: kill(2) on the process group of the program this session
    // started and registered (pid == pgid == sid after setsid).
    unsafe {
        libc::kill(-(pid as i32), sig);
    }
}
