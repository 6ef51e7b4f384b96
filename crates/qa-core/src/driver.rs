//! The contract every driver implements: [`SurfaceDriver`] (probe and open)
//! and [`SurfaceSession`] (observe, perform, verify, close).

use crate::deadline::Deadline;
use crate::evidence::{Artifact, Evidence};
use crate::flow::{Flow, LocatorKind, Step, TargetKind};
use crate::process::{CleanupReport, ProcessOwner};
use crate::secrets::Secrets;
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// The three user-facing backends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// Web pages (`browser`).
    Browser,
    /// Terminal programs (`tui`).
    Tui,
    /// Native applications (`desktop`).
    Desktop,
}

impl Backend {
    /// The backend for a target kind.
    pub fn for_kind(kind: TargetKind) -> Backend {
        match kind {
            TargetKind::Browser => Backend::Browser,
            TargetKind::Terminal => Backend::Tui,
            TargetKind::Desktop => Backend::Desktop,
        }
    }

    /// The lowercase name (`browser`, `tui`, `desktop`).
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Browser => "browser",
            Backend::Tui => "tui",
            Backend::Desktop => "desktop",
        }
    }

    /// Parses a backend name.
    pub fn parse(s: &str) -> Option<Backend> {
        match s {
            "browser" => Some(Backend::Browser),
            "tui" => Some(Backend::Tui),
            "desktop" => Some(Backend::Desktop),
            _ => None,
        }
    }
}

/// A driver's identity, e.g. `browser/cdp`, `tui/pty`, `desktop/linux-at-spi`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DriverId {
    /// The backend it serves.
    pub backend: Backend,
    /// The driver name within the backend (also its guide topic).
    pub name: &'static str,
}

impl fmt::Display for DriverId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.backend.as_str(), self.name)
    }
}

/// What a driver can do, for static admission by `check`.
#[derive(Debug, Clone)]
pub struct StepSupport {
    /// Action names this driver performs.
    pub actions: Vec<&'static str>,
    /// Locator kinds this driver resolves.
    pub locators: Vec<LocatorKind>,
    /// Whether steps may carry a `target` (popup or frame).
    pub step_targets: bool,
}

impl StepSupport {
    /// Whether an action name is supported.
    pub fn supports_action(&self, name: &str) -> bool {
        self.actions.contains(&name)
    }
}

/// A capability a driver has found present on this host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Capability {
    /// Stable id, e.g. `chromium`, `pty`, `at-spi-bus`.
    pub id: String,
    /// What was found (a path, a version).
    pub detail: String,
}

/// A capability a driver needs and did not find.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MissingCapability {
    /// Stable id, e.g. `chromium`, `display`, `accessibility-bus`.
    pub id: String,
    /// Why it counts as missing.
    pub reason: String,
    /// What a person does to provide it (e.g. the install command).
    pub remediation: String,
}

/// The answer of [`SurfaceDriver::probe`].
#[derive(Debug, Clone)]
pub struct Probe {
    /// The driver that answered.
    pub driver: DriverId,
    /// Capabilities found.
    pub present: Vec<Capability>,
    /// Capabilities missing. Empty means the driver can run the flow.
    pub missing: Vec<MissingCapability>,
    /// Presentation the driver would use (`pty`, `headless`, `accessibility`).
    pub presentation: Option<String>,
    /// Platform the driver runs on (`linux`, `macos`, `windows`).
    pub platform: &'static str,
    /// Guide topic for flow authors using this driver.
    pub guide_topic: &'static str,
}

impl Probe {
    /// Whether nothing is missing.
    pub fn available(&self) -> bool {
        self.missing.is_empty()
    }
}

/// Host facts shared by all probes.
#[derive(Debug, Clone, Default)]
pub struct Host {
    /// Running as root (uid 0).
    pub is_root: bool,
    /// Operating system (`linux`, `macos`, `windows`).
    pub os: &'static str,
}

impl Host {
    /// Facts of the current host.
    pub fn current() -> Host {
        #[cfg(unix)]
        #[allow(unsafe_code)]
        // SAFETY: geteuid has no preconditions and cannot fail.
        let is_root = unsafe { libc::geteuid() } == 0;
        #[cfg(not(unix))]
        let is_root = false;
        Host {
            is_root,
            os: std::env::consts::OS,
        }
    }
}

/// Run-level options a driver may honour.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Explicit browser executable (`--browser`).
    pub browser: Option<PathBuf>,
    /// Start an owned virtual display and session bus (`--virtual-display`).
    pub virtual_display: bool,
    /// Record video where the driver supports it.
    pub record_video: bool,
}

/// Everything a session needs from the runner.
#[derive(Clone)]
pub struct SessionContext {
    /// The run's evidence store.
    pub evidence: Arc<Evidence>,
    /// The run's process owner: launch every process through it.
    pub processes: Arc<ProcessOwner>,
    /// Secrets to keep out of everything that leaves the run.
    pub secrets: Arc<Secrets>,
    /// The flow deadline.
    pub flow_deadline: Deadline,
    /// Run options.
    pub options: RunOptions,
}

/// A compact, bounded observation of the surface.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Observation {
    /// One line a person can read.
    pub summary: String,
    /// Structured details (bounded by the driver).
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub detail: serde_json::Value,
}

/// What performing an action produced.
#[derive(Debug, Clone, Default)]
pub struct StepOutcome {
    /// A short detail for the step record (no user data or page text).
    pub detail: Option<String>,
    /// Notes to add to the result's observations.
    pub observations: Vec<String>,
    /// Evidence published during the step.
    pub artifacts: Vec<Artifact>,
}

/// A fresh verdict on an assertion.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The assertion holds.
    Holds,
    /// Not yet; `observed` says what was seen (safe to print).
    NotYet {
        /// What was seen.
        observed: String,
    },
    /// It can never hold (e.g. the program exited); stop retrying.
    Fails {
        /// Why.
        reason: String,
    },
}

/// Stable-coded driver errors.
#[derive(Debug, Clone)]
pub struct DriverError {
    /// Stable code, e.g. `tui.launch.not_found`.
    pub code: &'static str,
    /// What happened (safe to print).
    pub message: String,
    /// What a person can do about it.
    pub remediation: Option<String>,
    /// When set, the run is BLOCKED (could not look) rather than FAILED.
    pub missing: Vec<MissingCapability>,
    /// Evidence produced before the error (kept).
    pub artifacts: Vec<Artifact>,
}

impl DriverError {
    /// A failure with a code and message.
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        DriverError {
            code,
            message: message.into(),
            remediation: None,
            missing: Vec::new(),
            artifacts: Vec::new(),
        }
    }

    /// Adds remediation text.
    pub fn with_remediation(mut self, r: impl Into<String>) -> Self {
        self.remediation = Some(r.into());
        self
    }

    /// Marks the error as BLOCKED because of a missing capability.
    pub fn blocked(code: &'static str, missing: MissingCapability) -> Self {
        DriverError {
            code,
            message: missing.reason.clone(),
            remediation: Some(missing.remediation.clone()),
            missing: vec![missing],
            artifacts: Vec::new(),
        }
    }

    /// Whether this error means BLOCKED.
    pub fn is_blocked(&self) -> bool {
        !self.missing.is_empty()
    }
}

impl fmt::Display for DriverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for DriverError {}

/// What closing a session did.
#[derive(Debug, Clone, Default)]
pub struct CloseResult {
    /// Processes ended and anything left.
    pub cleanup: CleanupReport,
    /// Evidence written while closing (e.g. the terminal replay).
    pub artifacts: Vec<Artifact>,
    /// Notes for the result's observations.
    pub observations: Vec<String>,
}

/// A driver: probes the host and opens sessions.
#[async_trait]
pub trait SurfaceDriver: Send + Sync {
    /// The driver's identity.
    fn id(&self) -> DriverId;

    /// The target kind it drives.
    fn kind(&self) -> TargetKind;

    /// Steps and locator kinds it supports (static admission).
    fn supports(&self) -> &StepSupport;

    /// What is present and missing on this host for this flow. Must not
    /// launch the target.
    async fn probe(&self, flow: &Flow, host: &Host, options: &RunOptions) -> Probe;

    /// Launches or attaches to the target. Every process must be started
    /// through `ctx.processes`.
    async fn open(
        &self,
        flow: &Flow,
        ctx: SessionContext,
    ) -> Result<Box<dyn SurfaceSession>, DriverError>;
}

/// An open session on one target.
#[async_trait]
pub trait SurfaceSession: Send {
    /// A compact observation of the current state.
    async fn observe(&mut self) -> Result<Observation, DriverError>;

    /// Performs one action step (class [`crate::flow::StepClass::Action`]).
    /// Called once; never retried after dispatch.
    async fn perform(
        &mut self,
        step: &Step,
        deadline: Deadline,
    ) -> Result<StepOutcome, DriverError>;

    /// One fresh verdict for an assertion step. The runner calls it on the
    /// shared retry cadence until it holds or the step deadline passes.
    async fn verify(&mut self, step: &Step, deadline: Deadline) -> Result<Verdict, DriverError>;

    /// Evidence of the surface right after `step` failed (a screenshot, a
    /// screen capture), named from the step (`failure-step<N>`). Called at
    /// most once per run, bounded by a short deadline; the default captures
    /// nothing.
    async fn capture_failure(&mut self, step: &Step) -> Vec<Artifact> {
        let _ = step;
        Vec::new()
    }

    /// Ends the session, bounded by `deadline`. Must be safe to call after
    /// any error.
    async fn close(self: Box<Self>, deadline: Deadline) -> CloseResult;
}
