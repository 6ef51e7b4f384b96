//! The result document: `result.json` in the run directory and `--json` on stdout.

use crate::driver::{Backend, Capability, MissingCapability, Platform};
use crate::evidence::{Artifact, ArtifactGroup, WithheldArtifact};
use crate::flow::TargetKind;
pub use crate::mismatch::{ElementCandidate, Mismatch};
use crate::process::CleanupReport;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The version of the result document (`schemaVersion`).
pub const SCHEMA_VERSION: u32 = 1;

/// Outcome of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum RunStatus {
    /// Every step held.
    Passed,
    /// A step failed (or the run timed out or was cancelled).
    Failed,
    /// The run could not look: a capability is missing.
    Blocked,
}

impl RunStatus {
    /// `PASSED`, `FAILED` or `BLOCKED`.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Passed => "PASSED",
            RunStatus::Failed => "FAILED",
            RunStatus::Blocked => "BLOCKED",
        }
    }
}

/// Outcome of one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StepStatus {
    /// It held / it was done.
    Passed,
    /// It did not hold / it failed.
    Failed,
    /// Not reached.
    Skipped,
    /// The step or flow deadline passed during it.
    TimedOut,
}

/// The guide a flow author should read for the selected driver.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GuideRef {
    /// `browser`, `tui` or `desktop`.
    pub backend: Backend,
    /// Topic within the backend's guide.
    pub topic: String,
}

/// A candidate driver considered during selection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Candidate {
    /// Driver id, e.g. `browser/cdp`.
    pub driver: String,
    /// Whether it can run the flow here.
    pub available: bool,
    /// Capabilities found.
    pub supported_capabilities: Vec<Capability>,
    /// Capabilities missing.
    pub missing_capabilities: Vec<MissingCapability>,
}

/// How the backend and driver were chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Selection {
    /// `browser`, `terminal` or `desktop`.
    pub detected_target_kind: TargetKind,
    /// `browser`, `tui` or `desktop`.
    pub selected_backend: Backend,
    /// Driver id of the selected driver.
    pub platform_driver: String,
    /// Presentation (`headless`, `pty`, `accessibility`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub presentation: Option<String>,
    /// `linux`, `macos` or `windows`.
    pub platform: Platform,
    /// Every driver considered.
    pub candidate_backends: Vec<Candidate>,
    /// Capabilities of the selected driver found here.
    pub supported_capabilities: Vec<Capability>,
    /// Capabilities of the selected driver missing here.
    pub missing_capabilities: Vec<MissingCapability>,
    /// Why this driver.
    pub why_selected: String,
    /// The authoritative guide for this flow.
    pub guide: GuideRef,
}

/// One step's record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StepRecord {
    /// 1-based index.
    pub index: usize,
    /// Action name.
    pub action: String,
    /// Step name, if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What the step acts on, as the flow wrote it (`label="Name"`,
    /// `role=button name="Send"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locator: Option<String>,
    /// The value it types, chooses, presses or compares with, as the flow
    /// wrote it (JSON; redacted like the rest of the result).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The 1-based line of the step in the flow file (absent for steps of
    /// an interactive session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// Outcome.
    pub status: StepStatus,
    /// When the step started, in milliseconds after the run started
    /// (absent for steps that never ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_ms: Option<u64>,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// Why it failed (redacted; never echoes page text beyond the flow's own words).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// A short detail of what was done.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// For a failed step: what it expected, what it found, the locator and
    /// the elements that could have been meant (bounded, redacted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Mismatch>,
}

/// One assertion's record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AssertionRecord {
    /// 1-based step index.
    pub step: usize,
    /// Action name.
    pub action: String,
    /// Whether it held.
    pub passed: bool,
    /// How many verdicts were asked for.
    pub attempts: u32,
    /// What was last observed when it did not hold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed: Option<String>,
}

/// Artifacts by group; every item has an absolute path, a `file:` URI, size and digest.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Artifacts {
    /// PNG screenshots.
    pub screenshots: Vec<Artifact>,
    /// Videos and terminal replays.
    pub videos: Vec<Artifact>,
    /// Traces.
    pub traces: Vec<Artifact>,
    /// Terminal screen captures.
    pub terminal_captures: Vec<Artifact>,
    /// Accessibility snapshots.
    pub accessibility_snapshots: Vec<Artifact>,
    /// Observation documents.
    pub observations: Vec<Artifact>,
    /// Downloads.
    pub downloads: Vec<Artifact>,
    /// Console and network logs.
    pub logs: Vec<Artifact>,
    /// Artifacts withheld because they contained a secret.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub withheld: Vec<WithheldArtifact>,
}

impl Artifacts {
    /// Sorts artifacts into their groups.
    pub fn from_list(list: Vec<Artifact>, withheld: Vec<WithheldArtifact>) -> Artifacts {
        let mut a = Artifacts {
            withheld,
            ..Default::default()
        };
        for item in list {
            let g = match item.group {
                Some(g) => g,
                None => ArtifactGroup::Observations,
            };
            match g {
                ArtifactGroup::Screenshots => a.screenshots.push(item),
                ArtifactGroup::Videos => a.videos.push(item),
                ArtifactGroup::Traces => a.traces.push(item),
                ArtifactGroup::TerminalCaptures => a.terminal_captures.push(item),
                ArtifactGroup::AccessibilitySnapshots => a.accessibility_snapshots.push(item),
                ArtifactGroup::Observations => a.observations.push(item),
                ArtifactGroup::Downloads => a.downloads.push(item),
                ArtifactGroup::Logs => a.logs.push(item),
            }
        }
        a
    }

    /// Every artifact, in group order.
    pub fn all(&self) -> Vec<&Artifact> {
        self.screenshots
            .iter()
            .chain(&self.videos)
            .chain(&self.traces)
            .chain(&self.terminal_captures)
            .chain(&self.accessibility_snapshots)
            .chain(&self.observations)
            .chain(&self.downloads)
            .chain(&self.logs)
            .collect()
    }
}

/// Why a run is BLOCKED.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BlockedReasonCode {
    /// A required capability is missing on this host: could not look.
    MissingCapability,
    /// The target could not be reached or never became observable.
    TargetUnobservable,
    /// The flow asks for something no driver here can do.
    NothingToCheck,
    /// The flow's auth profile has no auth file yet: a person fills the
    /// template ui-qa created.
    #[serde(rename = "auth.provide_credentials")]
    AuthProvideCredentials,
    /// The flow's auth profile is missing, incomplete, rejected or expired:
    /// a person updates it.
    #[serde(rename = "auth.update_required")]
    AuthUpdateRequired,
    /// The auth file is unsafe or invalid: a person fixes it.
    #[serde(rename = "auth.file_refused")]
    AuthFileRefused,
}

impl BlockedReasonCode {
    /// The handoff code for a BLOCKED driver error with `code`: the auth
    /// codes name themselves; anything else is `fallback`.
    pub fn for_error_code(code: &str, fallback: BlockedReasonCode) -> BlockedReasonCode {
        use crate::codes::CoreCode;
        match code {
            c if c == CoreCode::AuthProvideCredentials.as_str() => {
                BlockedReasonCode::AuthProvideCredentials
            }
            c if c == CoreCode::AuthUpdateRequired.as_str() => {
                BlockedReasonCode::AuthUpdateRequired
            }
            c if c == CoreCode::AuthFileRefused.as_str() => BlockedReasonCode::AuthFileRefused,
            _ => fallback,
        }
    }
}

/// What a person must do to unblock the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BlockedHandoff {
    /// `browser`, `tui` or `desktop`.
    pub backend: Backend,
    /// The driver that could not run.
    pub platform_driver: String,
    /// `linux`, `macos` or `windows`.
    pub platform: Platform,
    /// Distinguishes "could not look" from "nothing to check".
    pub reason_code: BlockedReasonCode,
    /// What is missing.
    pub missing_capabilities: Vec<MissingCapability>,
    /// Why (redacted).
    pub reason: String,
    /// How a person fixes it.
    pub remediation: String,
    /// Always true: ui-qa never fixes the host itself.
    pub manual_action_required: bool,
    /// Always false: nothing was installed or reconfigured.
    pub automatic_remediation_attempted: bool,
}

/// A note in the result's `observations`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObservationNote {
    /// 1-based step index, when tied to a step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<usize>,
    /// Where the note comes from.
    pub kind: ObservationKind,
    /// The note (redacted).
    pub message: String,
}

/// Where a note in `observations` comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ObservationKind {
    /// A driver's note about an action step.
    Step,
    /// A driver's note written while closing the session.
    Driver,
    /// Cleanup of processes or scratch files.
    Cleanup,
    /// The evidence store (tampering, write failures).
    Evidence,
    /// An artifact withheld because it contained a secret.
    EvidenceWithheld,
    /// Evidence captured after a step failed.
    FailureEvidence,
    /// A fact about the environment the run used (browser settings, a
    /// virtual display, how terminal evidence is rendered). Kept in the
    /// result; the human output leaves it out.
    Environment,
    /// A capability the run went on without (video without `ffmpeg`); the
    /// message says what is missing and how to provide it.
    MissingCapability,
    /// The flow checks nothing (no `assert*` or `waitFor*` step): its
    /// PASSED says only that the steps ran.
    NothingChecked,
}

/// The result document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunResult {
    /// Result format version (currently 1).
    pub schema_version: u32,
    /// `PASSED`, `FAILED` or `BLOCKED`.
    pub status: RunStatus,
    /// Why it failed or is blocked (redacted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Stable code of the failure, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<String>,
    /// Whether a deadline passed.
    pub timed_out: bool,
    /// Whether the run was cancelled (Ctrl-C).
    pub cancelled: bool,
    /// Last started stage (`launch`, `step 3 click`, `cleanup`, …).
    pub stage: String,
    /// Flow name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flow_name: Option<String>,
    /// How the driver was chosen.
    pub selection: Selection,
    /// Per-step records.
    pub steps: Vec<StepRecord>,
    /// Per-assertion records.
    pub assertions: Vec<AssertionRecord>,
    /// Notes from drivers and the runner.
    pub observations: Vec<ObservationNote>,
    /// Evidence.
    pub artifacts: Artifacts,
    /// Present when `status` is `BLOCKED`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked_handoff: Option<BlockedHandoff>,
    /// What cleanup ended and anything left.
    pub cleanup: CleanupReport,
    /// Absolute run directory.
    pub evidence_dir: String,
    /// Run id.
    pub run_id: String,
    /// RFC 3339 start time.
    pub started_at: String,
    /// Wall time of the run in milliseconds.
    pub duration_ms: u64,
}

/// The answer of `ui-qa probe`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProbeResult {
    /// `AVAILABLE` or `BLOCKED`.
    pub status: ProbeStatus,
    /// How the driver would be chosen.
    pub selection: Selection,
    /// Present when `status` is `BLOCKED`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked_handoff: Option<BlockedHandoff>,
}

/// The answer of `ui-qa probe`: can the flow run here?
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum ProbeStatus {
    /// The selected driver has everything it needs.
    Available,
    /// A capability is missing.
    Blocked,
}

impl std::fmt::Display for ProbeStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ProbeStatus::Available => "AVAILABLE",
            ProbeStatus::Blocked => "BLOCKED",
        })
    }
}
