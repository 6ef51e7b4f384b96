//! # qa-tui — the ui-qa terminal driver
//!
//! Runs a real terminal program in a PTY the run owns (`pty-process` on
//! Unix, ConPTY on Windows), models its screen with a real terminal core
//! (`alacritty_terminal`), answers the program's terminal queries, encodes
//! named keys from the live terminal modes, and keeps evidence: a bounded
//! asciicast v2 replay of every run and text + PNG captures of the grid.
//! [`TuiDriver`] implements [`qa_core::SurfaceDriver`] for flows whose
//! target is `command`.
//!
//! ```no_run
//! # async fn demo(ctx: qa_core::SessionContext) -> Result<(), qa_core::DriverError> {
//! use qa_core::{flow::Flow, Deadline, SurfaceDriver};
//! let flow = Flow::parse(r#"{ "target": { "command": { "argv": ["python3", "-q"] } },
//!   "steps": [ { "action": "sendText", "text": "6*7" }, { "action": "sendKeys", "keys": ["Enter"] },
//!              { "action": "waitForText", "text": "42" } ] }"#, std::path::Path::new(".")).unwrap();
//! let mut session = qa_tui::TuiDriver::new().open(&flow, ctx).await?;
//! for step in &flow.steps[..2] { session.perform(step, Deadline::after_ms(5_000)).await?; }
//! let verdict = session.verify(&flow.steps[2], Deadline::after_ms(5_000)).await?;
//! let closed = session.close(Deadline::after_ms(5_000)).await; // replay in ctx.evidence
//! # let _ = (verdict, closed); Ok(()) }
//! ```
//!
//! The pure parts stand alone and are unit-tested: [`keys`] (key and paste
//! encoding), [`screen`] (text, cursor, modes, snapshots), [`cast`] (the
//! replay writer), [`replay`] (raw, or re-encoded from the masked model when
//! the run has secrets), [`mask`] (which cells show a secret), [`render`] and
//! [`boxdraw`] (PNG of a snapshot),
//! [`palette`] (colours) and [`launch`] (program, cwd and environment).
//! Every error code is a [`TuiCode`].

#![warn(missing_docs)]

pub mod boxdraw;
pub mod cast;
mod codes;
mod inbox;
pub mod keys;
pub mod launch;
pub mod mask;
pub mod palette;
pub mod render;
pub mod replay;
pub mod screen;

pub mod native;
mod pty;
mod pump;
mod session;
mod skip;
#[cfg(test)]
mod test_term;
mod text_runs;
mod verdict;

pub use session::{TuiSession, DEFAULT_STABLE_MS, EVIDENCE_NOTE, REPLAY_MASKED_NOTE};

pub use codes::TuiCode;

use qa_core::flow::{Flow, Presentation, TargetKind, TerminalAction};
use qa_core::{
    Backend, Capability, DriverError, DriverId, DriverInfo, Host, MissingCapability, Platform,
    Probe, RunOptions, SessionContext, StepSupport, SurfaceDriver, SurfaceSession,
};

/// The driver id: `tui/pty`.
pub const DRIVER_ID: DriverId = DriverId {
    backend: Backend::Tui,
    name: "pty",
};

/// The guide topic for flow authors using this driver.
pub const GUIDE_TOPIC: &str = "pty";

/// The PTY terminal driver.
pub struct TuiDriver {
    info: DriverInfo,
    native: Option<native::NativeSupport>,
}

impl Default for TuiDriver {
    fn default() -> Self {
        TuiDriver::new()
    }
}

impl TuiDriver {
    /// A driver.
    pub fn new() -> TuiDriver {
        TuiDriver {
            info: DriverInfo {
                id: DRIVER_ID,
                kind: TargetKind::Terminal,
                platform: Platform::current(),
                guide_topic: GUIDE_TOPIC,
                support: StepSupport {
                    actions: TerminalAction::NAMES.to_vec(),
                    locators: Vec::new(),
                    step_targets: false,
                },
            },
            native: None,
        }
    }

    /// The driver with `presentation: "native-terminal"`: `support` gives
    /// the display the terminal window shows on and the bridge program the
    /// window runs. Without it, such a flow is BLOCKED.
    pub fn with_native_terminal(mut self, support: native::NativeSupport) -> TuiDriver {
        self.native = Some(support);
        self
    }
}

/// How long opening the terminal window may take.
#[cfg(unix)]
const NATIVE_OPEN_MS: u64 = 30_000;

#[async_trait::async_trait]
impl SurfaceDriver for TuiDriver {
    fn info(&self) -> &DriverInfo {
        &self.info
    }

    /// A terminal has no Meta/Super modifier: such a chord is refused
    /// before anything launches.
    fn admit_step(&self, step: &qa_core::Step) -> Vec<qa_core::FlowError> {
        use qa_core::flow::{Action, FlowErrorCode, TerminalAction};
        let Action::Terminal(TerminalAction::SendKeys(k)) = &step.action else {
            return Vec::new();
        };
        k.keys
            .iter()
            .enumerate()
            .filter(|(_, key)| key.chord().meta)
            .map(|(j, key)| {
                qa_core::FlowError::new(
                    FlowErrorCode::UnsupportedKey,
                    format!("/steps/{}/keys/{j}", step.index),
                    format!(
                        "{}: terminals have no Meta/Super modifier; use Alt (sent as an ESC prefix)",
                        key.as_str()
                    ),
                )
            })
            .collect()
    }

    async fn probe(&self, flow: &Flow, host: &Host, options: &RunOptions) -> Probe {
        let mut present = Vec::new();
        let mut missing = Vec::new();
        let mut presentation = "pty";
        match pty::probe(host) {
            Ok(c) => present.push(c),
            Err(m) => missing.push(m),
        }
        match launch::command_target(flow) {
            Ok(t) => {
                if t.presentation == Some(Presentation::NativeTerminal) {
                    presentation = "native-terminal";
                    match native::probe(self.native.as_ref(), t.terminal, options) {
                        Ok((found, _, _)) => present.extend(found),
                        Err(m) => missing.extend(m),
                    }
                }
            }
            Err(e) => missing.push(MissingCapability {
                id: "terminal-target".into(),
                reason: e.message,
                remediation: "give the flow a target.command".into(),
            }),
        }
        match launch::plan(flow) {
            Ok(plan) => present.push(Capability {
                id: "program".into(),
                detail: plan.program.display().to_string(),
            }),
            Err(e) if e.code == TuiCode::TargetNotTerminal.as_str() => {}
            Err(e) => missing.push(MissingCapability {
                id: if e.code == TuiCode::LaunchCwdMissing.as_str() {
                    "cwd"
                } else {
                    "program"
                }
                .into(),
                reason: format!("{}: {}", e.code, e.message),
                remediation: e.remediation.unwrap_or_default(),
            }),
        }
        Probe {
            driver: DRIVER_ID,
            present,
            missing,
            presentation: Some(presentation.into()),
        }
    }

    async fn open(
        &self,
        flow: &Flow,
        ctx: SessionContext,
    ) -> Result<Box<dyn SurfaceSession>, DriverError> {
        let mut plan = launch::plan(flow)?;
        launch::give_home(&mut plan, launch::command_target(flow)?, &ctx.evidence)?;
        if plan.presentation != Presentation::NativeTerminal {
            return Ok(Box::new(
                session::TuiSession::launch(&plan, ctx, None).await?,
            ));
        }
        let terminal = launch::command_target(flow)?.terminal;
        let window = self.open_window(&mut plan, terminal, &ctx).await?;
        Ok(Box::new(
            session::TuiSession::launch(&plan, ctx, Some(window)).await?,
        ))
    }
}

impl TuiDriver {
    /// Opens the owned terminal window a native-terminal session shows in,
    /// before its program starts (so the window sees every byte); the
    /// plan takes the window's size.
    #[cfg(unix)]
    async fn open_window(
        &self,
        plan: &mut launch::LaunchPlan,
        terminal: Option<qa_core::flow::TerminalApp>,
        ctx: &SessionContext,
    ) -> Result<session::OpenWindow, DriverError> {
        let (_, provider, program) = native::probe(self.native.as_ref(), terminal, &ctx.options)
            .map_err(|m| {
                DriverError::blocked(
                    TuiCode::NativeTerminalUnavailable,
                    m.into_iter()
                        .next()
                        .expect("a probe error names what is missing"),
                )
            })?;
        let support = self.native.as_ref().expect("the probe found support");
        let deadline = qa_core::Deadline::after_ms(NATIVE_OPEN_MS).min(ctx.flow_deadline);
        let screen = support.host.open(ctx, deadline).await?;
        let name = std::path::Path::new(&plan.argv[0])
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (window, stream) = native::window::open(
            provider,
            &program,
            &support.bridge,
            screen,
            ctx,
            (plan.cols, plan.rows),
            &format!("ui-qa: {name}"),
            deadline,
        )
        .await?;
        if window.cols > 0 && window.rows > 0 {
            plan.cols = window.cols;
            plan.rows = window.rows;
        }
        Ok(session::OpenWindow { window, stream })
    }

    #[cfg(not(unix))]
    async fn open_window(
        &self,
        _plan: &mut launch::LaunchPlan,
        terminal: Option<qa_core::flow::TerminalApp>,
        ctx: &SessionContext,
    ) -> Result<session::OpenWindow, DriverError> {
        let m = native::probe(self.native.as_ref(), terminal, &ctx.options)
            .err()
            .and_then(|m| m.into_iter().next())
            .expect("native-terminal is missing off Unix");
        Err(DriverError::blocked(TuiCode::NativeTerminalUnavailable, m))
    }
}
