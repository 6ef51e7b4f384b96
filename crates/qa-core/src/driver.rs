//! The contract every driver implements: [`SurfaceDriver`] (probe and open)
//! and [`SurfaceSession`] (observe, perform, verify, close).

use crate::codes::{CoreCode, ErrorCode};
use crate::deadline::Deadline;
use crate::evidence::{Artifact, Evidence, EvidenceError};
use crate::flow::{Flow, FlowError, LocatorKind, Step, TargetKind};
use crate::mismatch::Mismatch;
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
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
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

/// The operating systems ui-qa has drivers for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    /// Linux.
    Linux,
    /// macOS.
    Macos,
    /// Windows.
    Windows,
}

impl Platform {
    /// The platform this binary runs on (other Unix systems count as Linux:
    /// they share its drivers' assumptions and are reported BLOCKED by them).
    pub fn current() -> Platform {
        match std::env::consts::OS {
            "macos" => Platform::Macos,
            "windows" => Platform::Windows,
            _ => Platform::Linux,
        }
    }

    /// The lowercase name (`linux`, `macos`, `windows`).
    pub fn as_str(self) -> &'static str {
        match self {
            Platform::Linux => "linux",
            Platform::Macos => "macos",
            Platform::Windows => "windows",
        }
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The static facts of a driver: who it is, what it drives, where it runs,
/// which guide teaches it and which steps it can perform. Everything the
/// runner, `check` and the CLI need to know about a driver without probing.
#[derive(Debug, Clone)]
pub struct DriverInfo {
    /// Its identity, e.g. `browser/cdp`.
    pub id: DriverId,
    /// The target kind it drives.
    pub kind: TargetKind,
    /// The platform it runs on.
    pub platform: Platform,
    /// The guide topic for flow authors using it.
    pub guide_topic: &'static str,
    /// Steps and locator kinds it supports (static admission).
    pub support: StepSupport,
}

impl DriverInfo {
    /// A desktop accessibility driver on `platform`: every desktop step
    /// ([`StepSupport::desktop_accessibility`]), its guide topic named after
    /// the driver.
    pub fn desktop_accessibility(id: DriverId, platform: Platform) -> DriverInfo {
        DriverInfo {
            id,
            kind: TargetKind::Desktop,
            platform,
            guide_topic: id.name,
            support: StepSupport::desktop_accessibility(),
        }
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
    /// What a desktop accessibility driver supports: every desktop action
    /// and the locator kinds an accessibility tree can answer (name, role,
    /// automation id, path); no step targets.
    pub fn desktop_accessibility() -> StepSupport {
        StepSupport {
            actions: crate::flow::DesktopAction::NAMES.to_vec(),
            locators: vec![
                LocatorKind::Name,
                LocatorKind::Role,
                LocatorKind::AutomationId,
                LocatorKind::Path,
            ],
            step_targets: false,
        }
    }

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
    /// Video mode over the flow's (`--video`).
    pub video: Option<crate::recording::RecordMode>,
    /// Step trace mode over the flow's (`--trace`).
    pub trace: Option<crate::recording::RecordMode>,
    /// The only origins (`scheme://host[:port]`) a browser run may reach,
    /// besides ui-qa's own `target.serve` server; `None`: what the flow
    /// names. Checked after every URL is resolved (start URL, base URL,
    /// `allowedOrigins`, an auth profile's origins), before the browser
    /// starts; the browser's containment then refuses everything else.
    /// `ui-qa mcp` sets it from `--allow-origin`.
    pub origin_limit: Option<Vec<String>>,
    /// When set, the only DevTools endpoints (`HOST:PORT`) a flow's
    /// `target.browser.connect` may name; `Some(empty)` allows none.
    /// `ui-qa mcp` sets it from `--allow-connect`.
    pub connect_limit: Option<Vec<String>>,
    /// Text matchers (`equals`, `includes`, `regex`, terminal text) see the
    /// text with the run's secrets redacted, so that whoever chose the
    /// pattern learns nothing of a secret from pass or fail. `ui-qa mcp`
    /// sets it: an agent chooses its patterns.
    pub redact_matchers: bool,
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
    /// What the run records (video, step trace), resolved from the flow's
    /// `evidence` section and the options.
    pub recording: crate::recording::Recording,
    /// The flow's auth profile, prepared by the runner (its values are
    /// registered in `secrets`); `None` for a public flow.
    pub auth: Option<Arc<crate::auth::AuthProfile>>,
}

impl SessionContext {
    /// The context of one run: its evidence store (whose secrets are the
    /// run's), its process owner, the flow deadline and the options; what
    /// it records is resolved from the flow's `evidence` section and the
    /// options. A public flow: no auth profile (see
    /// [`SessionContext::with_auth`]).
    pub fn new(
        evidence: Arc<Evidence>,
        processes: Arc<ProcessOwner>,
        flow_deadline: Deadline,
        options: RunOptions,
        flow_evidence: Option<&crate::recording::EvidenceSettings>,
    ) -> Self {
        let recording =
            crate::recording::Recording::resolve(flow_evidence, options.video, options.trace);
        SessionContext {
            secrets: evidence.secrets().clone(),
            evidence,
            processes,
            flow_deadline,
            options,
            recording,
            auth: None,
        }
    }

    /// The same context with the flow's prepared auth profile.
    pub fn with_auth(self, auth: Option<Arc<crate::auth::AuthProfile>>) -> Self {
        SessionContext { auth, ..self }
    }

    /// The same context recording `recording` instead.
    pub fn with_recording(self, recording: crate::recording::Recording) -> Self {
        SessionContext { recording, ..self }
    }
}

/// What a surface looks like right now, typed per backend and bounded: no
/// page text, no screen contents beyond sizes and states. The runner records
/// it when a step fails; interactive sessions build on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "surface", rename_all = "camelCase")]
pub enum SurfaceState {
    /// A browser page.
    #[serde(rename_all = "camelCase")]
    Page {
        /// The page's URL (redacted like everything else).
        url: String,
        /// The document title.
        title: String,
        /// `document.readyState`: `loading`, `interactive` or `complete`.
        ready_state: String,
        /// Console errors seen so far in the session.
        console_errors: u32,
        /// Requests blocked by origin containment so far.
        blocked_requests: u32,
        /// Popups adopted so far.
        popups: u32,
    },
    /// A terminal program.
    #[serde(rename_all = "camelCase")]
    Terminal {
        /// Columns.
        cols: u16,
        /// Rows.
        rows: u16,
        /// Cursor row (0-based).
        cursor_row: u16,
        /// Cursor column (0-based).
        cursor_col: u16,
        /// Whether the alternate screen is active.
        alternate_screen: bool,
        /// Whether bracketed paste is on.
        bracketed_paste: bool,
        /// Whether the program is running or how it ended.
        program: ProgramState,
    },
    /// A desktop application.
    #[serde(rename_all = "camelCase")]
    Desktop {
        /// The application's accessible name.
        app: String,
        /// Its process id.
        pid: u32,
        /// Its top-level windows (titles, bounded).
        windows: Vec<String>,
    },
}

/// Whether a terminal program is running, or how it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum ProgramState {
    /// Still running.
    Running,
    /// Exited with a status code.
    Exited {
        /// The exit code.
        code: i32,
    },
    /// Ended by a signal.
    Signaled {
        /// The signal number.
        signal: i32,
    },
}

impl SurfaceState {
    /// One line a person can read.
    pub fn summary(&self) -> String {
        match self {
            SurfaceState::Page {
                url,
                ready_state,
                console_errors,
                blocked_requests,
                ..
            } => format!(
                "page {url} ({ready_state}; {console_errors} console error(s), {blocked_requests} blocked request(s))"
            ),
            SurfaceState::Terminal {
                cols,
                rows,
                cursor_row,
                cursor_col,
                program,
                ..
            } => {
                let p = match program {
                    ProgramState::Running => "running".to_string(),
                    ProgramState::Exited { code } => format!("exited with code {code}"),
                    ProgramState::Signaled { signal } => format!("ended by signal {signal}"),
                };
                format!("terminal {cols}x{rows}, cursor at {cursor_row},{cursor_col}; program {p}")
            }
            SurfaceState::Desktop { app, pid, windows } => {
                format!("{app} (pid {pid}) with {} window(s)", windows.len())
            }
        }
    }
}

/// What kind of thing a driver note reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NoteKind {
    /// General information about what the driver did.
    Info,
    /// A request stopped by origin containment.
    BlockedRequest,
    /// A JavaScript dialog that appeared and was handled.
    Dialog,
    /// A popup or new window.
    Popup,
    /// A fact about the environment (the browser's own traffic, the renderer).
    Environment,
    /// Evidence that was written, withheld or could not be written.
    Evidence,
    /// A capability the run went on without (video without `ffmpeg`):
    /// not a failure, but evidence is missing until a person provides it.
    MissingCapability,
}

/// A typed note from a driver, for the result's `observations`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// What it reports.
    pub kind: NoteKind,
    /// The note (the runner redacts it).
    pub message: String,
}

impl Note {
    /// A note of a kind.
    pub fn new(kind: NoteKind, message: impl Into<String>) -> Note {
        Note {
            kind,
            message: message.into(),
        }
    }

    /// A general note.
    pub fn info(message: impl Into<String>) -> Note {
        Note::new(NoteKind::Info, message)
    }
}

/// What performing an action produced. Evidence it wrote is in the run's
/// [`Evidence`] store, the single source of artifacts.
#[derive(Debug, Clone, Default)]
pub struct StepOutcome {
    /// A short detail for the step record (no user data or page text).
    pub detail: Option<String>,
    /// Notes to add to the result's observations.
    pub notes: Vec<Note>,
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
        /// The same, structured: expected, received, locator, candidates.
        mismatch: Option<Box<Mismatch>>,
    },
    /// It can never hold (e.g. the program exited); stop retrying.
    Fails {
        /// Why.
        reason: String,
    },
}

impl Verdict {
    /// Not yet, with what was seen.
    pub fn not_yet(observed: impl Into<String>) -> Verdict {
        Verdict::NotYet {
            observed: observed.into(),
            mismatch: None,
        }
    }

    /// Not yet: `m` says what was expected and received; its summary is
    /// what was seen.
    pub fn differs(m: Mismatch) -> Verdict {
        Verdict::NotYet {
            observed: m.summary(),
            mismatch: Some(Box::new(m)),
        }
    }
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
    /// What was expected and found (locator failures: the candidates).
    pub mismatch: Option<Box<Mismatch>>,
    /// Notes the driver gathered during the failed call (blocked requests,
    /// dialogs): they go to the result's observations, tied to the step.
    pub notes: Vec<Note>,
}

impl DriverError {
    /// A failure with a code and message.
    pub fn new(code: impl ErrorCode, message: impl Into<String>) -> Self {
        DriverError {
            code: code.as_str(),
            message: message.into(),
            remediation: None,
            missing: Vec::new(),
            mismatch: None,
            notes: Vec::new(),
        }
    }

    /// An action or assertion the surface cannot perform.
    pub fn unsupported(what: impl fmt::Display) -> Self {
        DriverError::new(
            CoreCode::Unsupported,
            format!("{what} is not supported by this driver"),
        )
    }

    /// Adds remediation text.
    pub fn with_remediation(mut self, r: impl Into<String>) -> Self {
        self.remediation = Some(r.into());
        self
    }

    /// Adds what was expected and found.
    pub fn with_mismatch(mut self, m: Mismatch) -> Self {
        self.mismatch = Some(Box::new(m));
        self
    }

    /// Marks the error as BLOCKED because of a missing capability.
    pub fn blocked(code: impl ErrorCode, missing: MissingCapability) -> Self {
        DriverError {
            code: code.as_str(),
            message: missing.reason.clone(),
            remediation: Some(missing.remediation.clone()),
            missing: vec![missing],
            mismatch: None,
            notes: Vec::new(),
        }
    }

    /// BLOCKED by the run's auth profile (missing capability
    /// `auth-profile`, the auth code of its kind).
    pub fn from_auth(b: crate::auth::AuthBlock) -> Self {
        DriverError::blocked(
            b.kind.code(),
            MissingCapability {
                id: crate::auth::CAPABILITY.into(),
                reason: b.reason,
                remediation: b.remediation,
            },
        )
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

impl From<EvidenceError> for DriverError {
    fn from(e: EvidenceError) -> DriverError {
        DriverError::new(e.code(), e.to_string())
    }
}

/// What closing a session did. Evidence written while closing (the
/// terminal replay) is in the run's [`Evidence`] store.
#[derive(Debug, Clone, Default)]
pub struct CloseResult {
    /// Processes ended and anything left.
    pub cleanup: CleanupReport,
    /// Notes for the result's observations.
    pub notes: Vec<Note>,
}

/// A driver: probes the host and opens sessions.
#[async_trait]
pub trait SurfaceDriver: Send + Sync {
    /// The driver's static facts.
    fn info(&self) -> &DriverInfo;

    /// The driver's identity.
    fn id(&self) -> DriverId {
        self.info().id
    }

    /// The target kind it drives.
    fn kind(&self) -> TargetKind {
        self.info().kind
    }

    /// Steps and locator kinds it supports (static admission).
    fn supports(&self) -> &StepSupport {
        &self.info().support
    }

    /// Whether a locator's `role` names a role this driver can ever match
    /// (`Err`: why not, with the nearest valid name). Checked before
    /// anything launches; the default accepts every name.
    fn check_role(&self, role: &str) -> Result<(), String> {
        let _ = role;
        Ok(())
    }

    /// Driver-specific static checks of one step (keys the surface cannot
    /// send, …), each error at the step's JSON pointer. Checked before
    /// anything launches; the default finds nothing.
    fn admit_step(&self, step: &Step) -> Vec<FlowError> {
        let _ = step;
        Vec::new()
    }

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
    /// The typed, bounded state of the surface right now.
    async fn observe(&mut self) -> Result<SurfaceState, DriverError>;

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

    /// The elements the surface shows, with a reference for each element
    /// one can act on and the flow locator that finds it (`ui-qa inspect`).
    /// Drivers that cannot list elements yet say so.
    /// The observation's `id` is the caller's to set.
    async fn elements(
        &mut self,
        _deadline: Deadline,
    ) -> Result<crate::observe::Observation, DriverError> {
        Err(DriverError::unsupported("listing elements (ui-qa inspect)"))
    }
}
