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
pub mod keys;
pub mod launch;
pub mod mask;
pub mod palette;
pub mod render;
pub mod replay;
pub mod screen;

mod pty;
mod pump;
mod session;
#[cfg(test)]
mod test_term;
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

/// The missing capability reported for `presentation: "native-terminal"`.
pub fn native_terminal_missing() -> MissingCapability {
    MissingCapability {
        id: "native-terminal".into(),
        reason: "presentation \"native-terminal\" (the PTY mirrored into an owned, real terminal window for pixel evidence) is not implemented by this ui-qa build".into(),
        remediation: "use presentation \"pty\" (the default) for terminal-state evidence, or run the flow where a ui-qa build with native-terminal support and a controllable terminal window is available; see `ui-qa guide --backend tui --topic native-terminal`".into(),
    }
}

/// The guide topic for flow authors using this driver.
pub const GUIDE_TOPIC: &str = "pty";

/// The PTY terminal driver.
pub struct TuiDriver {
    info: DriverInfo,
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
        }
    }
}

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

    async fn probe(&self, flow: &Flow, host: &Host, _options: &RunOptions) -> Probe {
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
                    missing.push(native_terminal_missing());
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
        let plan = launch::plan(flow)?;
        if plan.presentation == Presentation::NativeTerminal {
            return Err(DriverError::blocked(
                TuiCode::NativeTerminalUnavailable,
                native_terminal_missing(),
            ));
        }
        open_pty(&plan, ctx).await
    }
}

async fn open_pty(
    plan: &launch::LaunchPlan,
    ctx: SessionContext,
) -> Result<Box<dyn SurfaceSession>, DriverError> {
    Ok(Box::new(session::TuiSession::launch(plan, ctx).await?))
}
