//! # qa-core — the ui-qa contract
//!
//! qa-core holds everything that is the same for every surface ui-qa drives
//! and that a driver reads: the [`flow`] model parsed from JSONC, the
//! [`driver`] contract ([`SurfaceDriver`] / [`SurfaceSession`]), the
//! [`result`] document, the [`evidence`] store, [`secrets`] redaction and
//! [`process`] ownership. It contains no platform code: no browser, no terminal
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
//! Running a flow (driver selection, the runner, interactive sessions,
//! reports) is the `qa-runner` crate's job; this crate is the contract it
//! and every driver share.

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
pub mod result;
pub mod secrets;
pub mod snapshot;

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
pub mod placeholder;
pub mod video;
pub mod window;
