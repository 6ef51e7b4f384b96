//! # qa-core — the ui-qa contract and runner
//!
//! qa-core holds everything that is the same for every surface ui-qa drives:
//! the [`flow`] model parsed from JSONC, the [`driver`] contract
//! ([`SurfaceDriver`] / [`SurfaceSession`]), driver [`select`]ion, the
//! [`runner`] that owns deadlines, evidence and cleanup, the [`result`]
//! document, the [`evidence`] store, [`secrets`] redaction and [`process`]
//! ownership. It contains no platform code: no browser, no terminal
//! emulator, no accessibility API.
//!
//! ```
//! use qa_core::flow::Flow;
//! let flow = Flow::parse(r#"{
//!   // a terminal flow
//!   "target": { "command": { "argv": ["bash", "--norc"] } },
//!   "steps": [ { "action": "sendText", "text": "echo hi" },
//!              { "action": "sendKeys", "keys": ["Enter"] },
//!              { "action": "waitForText", "text": "hi" } ],
//! }"#, std::path::Path::new(".")).unwrap();
//! assert_eq!(flow.steps.len(), 3);
//! ```
//!
//! The same flow without JSON, with the typed builder ([`flow::build`]),
//! validated by the same parser:
//!
//! ```
//! use qa_core::flow::build::{FlowBuilder, StepSpec};
//! let flow = FlowBuilder::terminal(["bash", "--norc"])
//!     .step(StepSpec::send_text("echo hi"))
//!     .step(StepSpec::send_keys(["Enter"]))
//!     .step(StepSpec::wait_for_text("hi"))
//!     .build()
//!     .unwrap();
//! assert_eq!(flow.steps.len(), 3);
//! ```
//!
//! To run it, pass `RunRequest::from_builder(&builder, workspace)` and the
//! drivers (`qa-tui`, `qa-web`, `qa-linux`) to [`runner::run`]. To explore one step at a
//! time, use [`runner::interactive::Interactive`]: drive a terminal program
//! in ten lines:
//!
//! ```no_run
//! # async fn demo(drivers: Vec<std::sync::Arc<dyn qa_core::SurfaceDriver>>) -> Result<(), Box<dyn std::error::Error>> {
//! use qa_core::flow::build::StepSpec;
//! use qa_core::runner::interactive::{Interactive, On, SessionConfig};
//! let target = serde_json::json!({ "command": { "argv": ["sh"] } });
//! let mut s = Interactive::start(&drivers, target, SessionConfig::new(".ui-qa")).await?;
//! s.act(On::Nothing, StepSpec::send_text("echo $((6 * 7))")).await?;
//! s.act(On::Nothing, StepSpec::send_keys(["Enter"])).await?;
//! s.act(On::Nothing, StepSpec::wait_for_text("42")).await?;
//! let screen = s.observe().await?.screen.expect("a terminal has a screen");
//! let (result, _) = s.finish(None).await;
//! println!("{}\n{:?}", screen.lines.join("\n"), result.status);
//! # Ok(()) }
//! ```
//!
//! The runnable versions (a terminal program, a web page, a desktop
//! application's tree, a built flow) are `crates/qa-cli/examples/`, run by
//! the test suite.

#![warn(missing_docs)]

pub mod auth;
pub mod codes;
pub mod deadline;
pub mod driver;
pub mod evidence;
pub mod flow;
pub mod host;
pub mod keys;
pub mod mismatch;
pub mod observe;
pub mod process;
pub mod recording;
pub mod report;
pub mod result;
pub mod secrets;

pub use codes::{CoreCode, ErrorCode};
pub use deadline::{Cadence, Deadline};
pub use driver::{
    Backend, Capability, CloseResult, DriverError, DriverId, DriverInfo, Host, MissingCapability,
    Note, NoteKind, Platform, Probe, ProgramState, RunOptions, SessionContext, StepOutcome,
    StepSupport, SurfaceDriver, SurfaceSession, SurfaceState, Verdict,
};
pub use evidence::{Artifact, ArtifactGroup, Evidence};
pub use flow::{Flow, FlowError, Step};
pub use mismatch::{ElementCandidate, Mismatch};
pub use secrets::Secrets;
#[cfg(feature = "conformance")]
pub mod conformance;
#[cfg(feature = "conformance")]
pub mod ocr;
pub mod placeholder;
pub mod progress;
pub mod runner;
pub mod schema;
pub mod select;
pub mod video;
