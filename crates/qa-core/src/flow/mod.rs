//! The flow: what a user asks ui-qa to do, parsed from JSONC.
//!
//! A flow names exactly one target (a web page, a terminal command or a
//! desktop application) and a bounded list of [`Step`]s. [`Flow::parse`]
//! rejects anything it does not understand with a [`FlowError`] that carries a
//! stable code, the JSON pointer of the offending value and its line/column.

pub mod build;
mod error;
mod lint;
mod locator;
mod matcher;
pub(crate) mod parse;
pub mod roles;
pub(crate) mod steps;
pub mod suggest;
pub(crate) mod target;
pub(crate) mod validate;
pub mod vars;

pub use error::{escape_token, FlowError, FlowErrorCode};
pub use lint::{lint, no_assertion};
pub use locator::{Locator, LocatorKind, PathSegment, StepTarget, StepTargetKind};
pub use matcher::{redacted_view, text_or_regex_matches, Matcher, Pattern};
pub use parse::{de_at, jsonc_value, step_lines, ParseLimits, MAX_REPORTED_ERRORS};
pub use steps::*;
pub use target::{
    endpoint_key, ApplicationTarget, BrowserConnection, BrowserTarget, ColorScheme, CommandTarget,
    DevToolsChannel, EmbeddedApp, Environment, Home, LaunchSpec, PageChoice, Presentation,
    RawTarget, ReducedMotion, ServerSpec, Target, TargetKind, TerminalApp, Viewport, WindowSpec,
    EMULATED_TERM,
};
pub use validate::{check_origin, project_root, valid_profile_id};

use serde::Serialize;
use std::path::{Path, PathBuf};

/// Maximum size of a flow file, in bytes.
pub const MAX_FLOW_BYTES: usize = 16 * 1024 * 1024;
/// Default maximum number of steps in a flow.
pub const DEFAULT_MAX_STEPS: usize = 100;
/// Default deadline of a whole flow when it names none.
pub const DEFAULT_FLOW_TIMEOUT_MS: u64 = 60_000;
/// Default deadline of one step when it names none (actions and waits).
pub const DEFAULT_STEP_TIMEOUT_MS: u64 = 15_000;
/// Default deadline of an `assert*` step when it names none: a wrong
/// expectation should fail fast (Playwright's `expect` waits 5 s too).
pub const DEFAULT_ASSERT_TIMEOUT_MS: u64 = 5_000;

/// A parsed, validated flow.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Flow {
    /// Format version; always 1.
    pub version: u32,
    /// Human name of the flow.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The one target of the flow.
    pub target: Target,
    /// Browser viewport or terminal size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub viewport: Option<Viewport>,
    /// Browser emulation settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub environment: Option<Environment>,
    /// What the run records besides step evidence (video, step trace).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<crate::recording::EvidenceSettings>,
    /// Deadline of the whole flow in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Default deadline of its actions and waits (default 15000).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_timeout_ms: Option<u64>,
    /// Default deadline of its `assert*` steps (default 5000).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assert_timeout_ms: Option<u64>,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// Directory of the flow file; relative paths in the flow resolve against it.
    #[serde(skip)]
    pub base_dir: PathBuf,
}

impl Flow {
    /// Parses and validates flow text. `base_dir` is where relative paths
    /// (`cwd`, `serve`) resolve.
    pub fn parse(text: &str, base_dir: &Path) -> Result<Flow, FlowError> {
        parse::parse_flow(text, base_dir, &ParseLimits::default())
    }

    /// Parses with explicit limits (for example a different step cap).
    pub fn parse_with_limits(
        text: &str,
        base_dir: &Path,
        limits: &ParseLimits,
    ) -> Result<Flow, FlowError> {
        parse::parse_flow(text, base_dir, limits)
    }

    /// Reads and parses a flow file, reading at most one byte past the size
    /// bound.
    pub fn load(path: &Path) -> Result<Flow, FlowError> {
        parse::load_flow(path, &ParseLimits::default()).map(|(flow, _)| flow)
    }

    /// Like [`Flow::load`], and also returns the text the flow was parsed
    /// from (read once), e.g. to place later errors with
    /// [`FlowError::with_position`].
    pub fn load_with_source(path: &Path) -> Result<(Flow, String), FlowError> {
        parse::load_flow(path, &ParseLimits::default())
    }

    /// Like [`Flow::load_with_source`], with every step's error (at most
    /// [`parse::MAX_REPORTED_ERRORS`]) rather than the first, each placed in
    /// the text.
    pub fn load_checked(path: &Path) -> Result<(Flow, String), Vec<FlowError>> {
        Flow::load_checked_with(path, &vars::Vars::new())
    }

    /// What `check` needs: the flow (complete when there are no errors;
    /// otherwise the steps that parsed, each keeping its index, when only
    /// steps failed), the text when it could be read, and every error.
    pub fn check_file(path: &Path, given: &vars::Vars) -> CheckedFile {
        let (r, text) = parse::load_flow_checked(path, &ParseLimits::default(), given);
        match r {
            Ok(flow) => CheckedFile {
                flow: Some(flow),
                text,
                errors: Vec::new(),
            },
            Err(f) => CheckedFile {
                flow: f.partial.map(|b| *b),
                text,
                errors: f.errors,
            },
        }
    }

    /// Like [`Flow::load_checked`], with `${var.NAME}` values given on the
    /// command line (they win over the flow's own `vars`).
    pub fn load_checked_with(
        path: &Path,
        given: &vars::Vars,
    ) -> Result<(Flow, String), Vec<FlowError>> {
        parse::load_flow_all(path, &ParseLimits::default(), given)
    }

    /// The kind of target this flow drives.
    pub fn kind(&self) -> TargetKind {
        self.target.kind()
    }

    /// Whether any step checks something: an `assert*` or `waitFor*` step
    /// (a step the runner asks for a verdict until it holds). A flow that
    /// checks nothing PASSES whenever its steps run.
    pub fn checks_anything(&self) -> bool {
        self.steps.iter().any(|s| s.class() == StepClass::Assertion)
    }

    /// The flow deadline in milliseconds.
    pub fn flow_timeout_ms(&self) -> u64 {
        self.timeout_ms.unwrap_or(DEFAULT_FLOW_TIMEOUT_MS)
    }

    /// Every string value in the flow that a user supplied as data (typed
    /// text, fill values, pasted text). The runner never echoes these in
    /// progress events.
    pub fn step_values(&self) -> Vec<&str> {
        self.steps.iter().flat_map(|s| s.action.values()).collect()
    }
}

/// The outcome of [`Flow::check_file`].
#[derive(Debug)]
pub struct CheckedFile {
    /// The flow: complete when `errors` is empty, else the steps that
    /// parsed (absent when the flow itself could not be read or parsed).
    pub flow: Option<Flow>,
    /// The flow text, when it could be read (to place later errors).
    pub text: Option<String>,
    /// Every error found (bounded).
    pub errors: Vec<FlowError>,
}

/// One step of a flow: an action plus the options every step may carry.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    /// 0-based position in the flow.
    #[serde(skip)]
    pub index: usize,
    /// What to do.
    #[serde(flatten)]
    pub action: Action,
    /// Name used for evidence files (safe file-name characters only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Deadline of this step in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Browser only: run the step in a popup or a frame instead of the page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<StepTarget>,
    /// The deadline when the step names none: the flow's default for its
    /// kind of step, or ui-qa's.
    #[serde(skip)]
    pub default_timeout_ms: u64,
}

impl Step {
    /// Parses one step of a flow of `kind` (as written in a flow's `steps`,
    /// with the same rules and messages; errors point at `/steps/0`), with
    /// ui-qa's default deadlines: a step added to a running session.
    pub fn parse(kind: TargetKind, value: serde_json::Value) -> Result<Step, FlowError> {
        parse::parse_one_step(kind, value)
    }

    /// The action's name as written in the flow (`click`, `sendKeys`, …).
    pub fn action_name(&self) -> &'static str {
        self.action.name()
    }

    /// The step deadline in milliseconds.
    pub fn step_timeout_ms(&self) -> u64 {
        self.timeout_ms.unwrap_or(self.default_timeout_ms)
    }

    /// Whether the step is an `assert*` step (shorter default deadline).
    pub fn is_assert(&self) -> bool {
        self.action_name().starts_with("assert")
    }

    /// Whether the runner retries this step until it holds (assertions and waits).
    pub fn class(&self) -> StepClass {
        self.action.class()
    }

    /// A collision-free evidence base name: the step's `name`, or
    /// `<action>-step<index>`.
    pub fn evidence_name(&self) -> String {
        match &self.name {
            Some(n) => n.clone(),
            None => format!("{}-step{}", self.action_name(), self.index + 1),
        }
    }

    /// What the step acts on, as the flow wrote it: its first locator
    /// (`label="Name"`), after the popup or frame it runs in, if any.
    pub fn locator_text(&self) -> Option<String> {
        let own = self.action.locators().first().map(|l| l.describe());
        let within = self.target.as_ref().map(|t| match t.kind {
            StepTargetKind::Popup => format!("popup {:?}", t.name.as_deref().unwrap_or("")),
            StepTargetKind::Frame => match &t.locator {
                Some(l) => format!("frame {}", l.describe()),
                None => "frame".to_string(),
            },
        });
        match (within, own) {
            (Some(w), Some(o)) => Some(format!("{w} >> {o}")),
            (w, o) => o.or(w),
        }
    }

    /// The value the step types, chooses, presses or compares with, as the
    /// flow wrote it (compact JSON: `"Ada"`, `["Ctrl+S"]`), if it has one.
    pub fn value_text(&self) -> Option<String> {
        const VALUE_KEYS: &[&str] = &[
            "value", "text", "equals", "includes", "regex", "key", "keys", "url", "path", "label",
            "count", "title",
        ];
        let v = serde_json::to_value(self).ok()?;
        let args = v.as_object()?;
        VALUE_KEYS
            .iter()
            .find_map(|k| args.get(*k))
            .map(|x| x.to_string())
    }

    /// Every locator the step uses (for static admission), including a
    /// frame target's locator.
    pub fn locators(&self) -> Vec<&Locator> {
        let mut v = self.action.locators();
        if let Some(l) = self.target.as_ref().and_then(|t| t.locator.as_ref()) {
            v.push(l);
        }
        v
    }
}

#[cfg(test)]
mod describe_tests {
    use super::*;

    #[test]
    fn a_step_says_what_it_acts_on_and_with_what_value() {
        let text = "{\"target\":{\"url\":\"https://example.test/\"},\n\"steps\":[\n{\"action\":\"fill\",\"locator\":{\"label\":\"Name\"},\"value\":\"Ada\"},\n  {\"action\":\"press\",\"locator\":{\"role\":\"textbox\",\"name\":\"Name\"},\"key\":\"Enter\"},\n{\"action\":\"selectOption\",\"locator\":{\"label\":\"Color\"},\"label\":\"Green\"},\n{\"action\":\"reload\"}]}";
        let f = Flow::parse(text, Path::new(".")).unwrap();
        let s = &f.steps;
        assert_eq!(s[0].locator_text().as_deref(), Some("label=\"Name\""));
        assert_eq!(s[0].value_text().as_deref(), Some("\"Ada\""));
        assert_eq!(
            s[1].locator_text().as_deref(),
            Some("role=textbox name=\"Name\"")
        );
        assert_eq!(s[1].value_text().as_deref(), Some("\"Enter\""));
        assert_eq!(s[2].value_text().as_deref(), Some("\"Green\""));
        assert_eq!((s[3].locator_text(), s[3].value_text()), (None, None));
        assert_eq!(step_lines(text, 4), [Some(3), Some(4), Some(5), Some(6)]);
    }
}
