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
