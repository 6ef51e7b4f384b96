//! Actions: what each step does, per target kind.
//!
//! Each kind has its own action enum because the same action name can take
//! different arguments on different surfaces (`assertText` on a page takes a
//! locator; on a terminal it takes text and an optional row).

use super::locator::{Locator, Matcher};
use super::target::TargetKind;
use crate::keys::KeyChord;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Whether the runner performs a step once or retries it until it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum StepClass {
    /// Dispatched once; never retried after dispatch.
    Action,
    /// Asked for a fresh verdict until it holds or the step deadline passes.
    Assertion,
    /// Handled by the runner itself (`waitForTimeout`).
    Runner,
}

/// A problem found while validating a step's arguments.
#[derive(Debug, Clone)]
pub(crate) struct ArgProblem {
    /// Pointer suffix inside the step (e.g. `/locator`).
    pub pointer: String,
    /// Stable code suffix.
    pub code: super::FlowErrorCode,
    /// What is wrong and how to fix it.
    pub message: String,
}

pub(crate) fn problem(
    pointer: &str,
    code: super::FlowErrorCode,
    message: impl Into<String>,
) -> ArgProblem {
    ArgProblem {
        pointer: pointer.to_string(),
        code,
        message: message.into(),
    }
}

/// Behaviour every action's argument struct shares.
pub(crate) trait ActionArgs {
    fn locators(&self) -> Vec<&Locator> {
        Vec::new()
    }
    fn values(&self) -> Vec<&str> {
        Vec::new()
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        Ok(())
    }
}

fn check_locator(l: &Locator, at: &str) -> Result<(), ArgProblem> {
    use super::FlowErrorCode as C;
    let kinds = l.kinds();
    if kinds.is_empty() {
        return Err(problem(
            at,
            C::InvalidLocator,
            "locator needs exactly one of testId, role, name, label, placeholder, text, css, automationId, path",
        ));
    }
    if kinds.len() > 1 {
        let names: Vec<&str> = kinds.iter().map(|k| k.field()).collect();
        return Err(problem(
            at,
            C::InvalidLocator,
            format!(
                "locator sets {} kinds ({}); keep exactly one",
                kinds.len(),
                names.join(", ")
            ),
        ));
    }
    if l.nth.is_some() && l.occurrence.is_some() {
        return Err(problem(
            at,
            C::InvalidLocator,
            "use either nth (browser) or occurrence (desktop), not both",
        ));
    }
    for (field, v) in [
        ("testId", &l.test_id),
        ("role", &l.role),
        ("label", &l.label),
        ("placeholder", &l.placeholder),
        ("text", &l.text),
        ("css", &l.css),
        ("automationId", &l.automation_id),
    ] {
        if let Some(v) = v {
            if v.is_empty() {
                return Err(problem(
                    &format!("{at}/{field}"),
                    C::OutOfRange,
                    "must not be empty",
                ));
            }
        }
    }
    if let Some(p) = &l.path {
        if p.is_empty() || p.len() > 32 {
            return Err(problem(
                &format!("{at}/path"),
                C::OutOfRange,
                "path needs 1 to 32 segments",
            ));
        }
    }
    Ok(())
}

fn check_matcher(m: &Matcher, at: &str, what: &str) -> Result<(), ArgProblem> {
    use super::FlowErrorCode as C;
    if m.count_set() != 1 {
        return Err(problem(
            at,
            C::InvalidMatcher,
            format!("{what} needs exactly one of equals, includes, regex"),
        ));
    }
    if let Some(r) = &m.regex {
        if let Err(e) = regex::Regex::new(r) {
            let p = if at.is_empty() {
                "/regex".to_string()
            } else {
                format!("{at}/regex")
            };
            return Err(problem(&p, C::InvalidRegex, format!("invalid regex: {e}")));
        }
    }
    Ok(())
}

fn check_text_or_regex(
    text: &Option<String>,
    regex: &Option<String>,
) -> Result<(), ArgProblem> {
    use super::FlowErrorCode as C;
    match (text, regex) {
        (Some(_), Some(_)) | (None, None) => Err(problem(
            "",
            C::InvalidMatcher,
            "needs exactly one of text, regex",
        )),
        (None, Some(r)) => regex::Regex::new(r)
            .map(|_| ())
            .map_err(|e| problem("/regex", C::InvalidRegex, format!("invalid regex: {e}"))),
        (Some(t), None) if t.is_empty() => {
            Err(problem("/text", C::OutOfRange, "must not be empty"))
        }
        _ => Ok(()),
    }
}

fn check_printable(text: &str, at: &str) -> Result<(), ArgProblem> {
    if let Some(c) = text.chars().find(|c| c.is_control()) {
        return Err(problem(
            at,
            super::FlowErrorCode::ControlCharacter,
            format!(
                "contains the control character U+{:04X}; send it with sendKeys (e.g. \"Enter\", \"Ctrl+C\")",
                c as u32
            ),
        ));
    }
    Ok(())
}

fn check_key(key: &str, at: &str) -> Result<(), ArgProblem> {
    KeyChord::parse(key)
        .map(|_| ())
        .map_err(|e| problem(at, super::FlowErrorCode::InvalidKey, e))
}

macro_rules! actions {
    (
        $(#[$meta:meta])*
        $enum:ident, $kind:expr, {
            $( $(#[$vmeta:meta])* $variant:ident = $name:literal ($args:ident) : $class:ident ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Serialize)]
        #[serde(tag = "action")]
        pub enum $enum {
            $( $(#[$vmeta])* #[serde(rename = $name)] $variant($args), )*
        }

        impl $enum {
            /// Every action name of this kind, as written in flows.
            pub const NAMES: &'static [&'static str] = &[$($name),*];
            /// The target kind these actions belong to.
            pub const KIND: TargetKind = $kind;

            /// The action name as written in the flow.
            pub fn name(&self) -> &'static str {
                match self { $( Self::$variant(_) => $name, )* }
            }

            /// Once, retried, or runner-handled.
            pub fn class(&self) -> StepClass {
                match self { $( Self::$variant(_) => StepClass::$class, )* }
            }

            pub(crate) fn parse(
                name: &str,
                value: serde_json::Value,
            ) -> Option<Result<Self, serde_path_to_error::Error<serde_json::Error>>> {
                match name {
                    $( $name => Some(serde_path_to_error::deserialize(value).map(Self::$variant)), )*
                    _ => None,
                }
            }

            pub(crate) fn args(&self) -> &dyn ActionArgs {
                match self { $( Self::$variant(a) => a, )* }
            }

            #[allow(dead_code)]
            pub(crate) fn arg_schemas(
                generator: &mut schemars::SchemaGenerator,
            ) -> Vec<(&'static str, schemars::Schema)> {
                vec![ $( ($name, <$args as JsonSchema>::json_schema(generator)) ),* ]
            }
        }
    };
}

macro_rules! args {
    (
        $(#[$meta:meta])*
        $name:ident { $( $(#[$fmeta:meta])* $field:ident : $ty:ty ),* $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        #[allow(missing_docs)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
        }
    };
}

// ---------------------------------------------------------------- browser

/// Expected network response armed before an interaction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExpectResponse {
    /// URL path (and optional query) the response is for.
    pub path: String,
    /// HTTP method (default any).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Expected HTTP status (default any).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 100, max = 599))]
    pub status: Option<u16>,
}

/// Expected JavaScript dialog armed before an interaction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DialogExpectation {
    /// `alert`, `confirm`, `prompt` or `beforeunload`.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Matcher for the dialog message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<Matcher>,
    /// Accept (true) or dismiss (false, default).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accept: Option<bool>,
    /// Text to enter into a prompt when accepting.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_text: Option<String>,
}

/// `waitFor` states.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum WaitState {
    /// Attached and visible (default).
    #[default]
    Visible,
    /// Not visible or detached.
    Hidden,
    /// In the DOM.
    Attached,
    /// Not in the DOM.
    Detached,
}

/// The safe `evaluate` operations (never raw JavaScript).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum EvaluateOperation {
    /// `window.scrollTo(x, y)`.
    ScrollTo,
    /// `window.scrollBy(x, y)`.
    ScrollBy,
    /// Read document metrics into the step's observation.
    Metrics,
}

/// A file for `uploadFiles`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UploadFile {
    /// File name presented to the page.
    pub name: String,
    /// MIME type.
    pub mime_type: String,
    /// Contents, base64.
    pub base64: String,
}

args!(
    /// `goto`: open `path` (relative to the base URL) or `url`.
    Goto { #[serde(skip_serializing_if = "Option::is_none")] path: Option<String>, #[serde(skip_serializing_if = "Option::is_none")] url: Option<String> }
);
impl ActionArgs for Goto {
    fn validate(&self) -> Result<(), ArgProblem> {
        if self.path.is_some() == self.url.is_some() {
            return Err(problem(
                "",
                super::FlowErrorCode::MissingField,
                "goto needs exactly one of path, url",
            ));
        }
        Ok(())
    }
}
args!(
    /// An action without arguments.
    NoArgs {}
);
impl ActionArgs for NoArgs {}
args!(
    /// `waitFor`: wait until the element reaches `state`.
    WaitFor { locator: Locator, #[serde(skip_serializing_if = "Option::is_none")] state: Option<WaitState> }
);
impl ActionArgs for WaitFor {
    fn locators(&self) -> Vec<&Locator> {
        vec![&self.locator]
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        check_locator(&self.locator, "/locator")
    }
}
args!(
    /// `waitForTimeout`: sleep `ms` (bounded by the step deadline).
    WaitForTimeout { #[schemars(range(max = 600000))] ms: u64 }
);
impl ActionArgs for WaitForTimeout {}
args!(
    /// A pointer interaction on one element.
    Pointer {
        locator: Locator,
        #[serde(skip_serializing_if = "Option::is_none")] expect_response: Option<ExpectResponse>,
        #[serde(skip_serializing_if = "Option::is_none")] expect_dialog: Option<DialogExpectation>,
    }
);
impl ActionArgs for Pointer {
    fn locators(&self) -> Vec<&Locator> {
        vec![&self.locator]
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        check_locator(&self.locator, "/locator")
    }
}
args!(
    /// `hover`.
    Hover { locator: Locator }
);
impl ActionArgs for Hover {
    fn locators(&self) -> Vec<&Locator> {
        vec![&self.locator]
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        check_locator(&self.locator, "/locator")
    }
}
args!(
    /// `fill`: replace the element's value.
    Fill {
        locator: Locator,
        value: String,
        #[serde(skip_serializing_if = "Option::is_none")] expect_response: Option<ExpectResponse>,
        #[serde(skip_serializing_if = "Option::is_none")] expect_dialog: Option<DialogExpectation>,
    }
);
impl ActionArgs for Fill {
    fn locators(&self) -> Vec<&Locator> {
        vec![&self.locator]
    }
    fn values(&self) -> Vec<&str> {
        vec![&self.value]
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        check_locator(&self.locator, "/locator")
    }
}
args!(
    /// `press`: a key (optionally on an element).
    Press {
        key: String,
        #[serde(skip_serializing_if = "Option::is_none")] locator: Option<Locator>,
        #[serde(skip_serializing_if = "Option::is_none")] expect_response: Option<ExpectResponse>,
        #[serde(skip_serializing_if = "Option::is_none")] expect_dialog: Option<DialogExpectation>,
    }
);
impl ActionArgs for Press {
    fn locators(&self) -> Vec<&Locator> {
        self.locator.iter().collect()
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        check_key(&self.key, "/key")?;
        match &self.locator {
            Some(l) => check_locator(l, "/locator"),
            None => Ok(()),
        }
    }
}
args!(
    /// `selectOption`: choose by `value`, `label` or `index`.
    SelectOption {
        locator: Locator,
        #[serde(skip_serializing_if = "Option::is_none")] value: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")] label: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")] index: Option<u32>,
        #[serde(skip_serializing_if = "Option::is_none")] expect_response: Option<ExpectResponse>,
    }
);
impl ActionArgs for SelectOption {
    fn locators(&self) -> Vec<&Locator> {
        vec![&self.locator]
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        check_locator(&self.locator, "/locator")?;
        let n = [
            self.value.is_some(),
            self.label.is_some(),
            self.index.is_some(),
        ]
        .iter()
        .filter(|b| **b)
        .count();
        if n != 1 {
            return Err(problem(
                "",
                super::FlowErrorCode::MissingField,
                "selectOption needs exactly one of value, label, index",
            ));
        }
        Ok(())
    }
}
args!(
    /// `wheel`: scroll by a delta (over an element if given).
    Wheel {
        #[serde(skip_serializing_if = "Option::is_none")] delta_x: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")] delta_y: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")] locator: Option<Locator>,
    }
);
impl ActionArgs for Wheel {
    fn locators(&self) -> Vec<&Locator> {
        self.locator.iter().collect()
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        match &self.locator {
            Some(l) => check_locator(l, "/locator"),
            None => Ok(()),
        }
    }
}
args!(
    /// A position relative to an element's top-left corner.
    Position { x: f64, y: f64 }
);
args!(
    /// `dragTo`: drag `locator` onto `dropTarget`.
    DragTo {
        locator: Locator,
        drop_target: Locator,
        #[serde(skip_serializing_if = "Option::is_none")] source_position: Option<Position>,
        #[serde(skip_serializing_if = "Option::is_none")] target_position: Option<Position>,
    }
);
impl ActionArgs for DragTo {
    fn locators(&self) -> Vec<&Locator> {
        vec![&self.locator, &self.drop_target]
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        check_locator(&self.locator, "/locator")?;
        check_locator(&self.drop_target, "/dropTarget")
    }
}
args!(
    /// `uploadFiles`: set files on a file input.
    UploadFiles { locator: Locator, #[schemars(length(max = 20))] files: Vec<UploadFile> }
);
impl ActionArgs for UploadFiles {
    fn locators(&self) -> Vec<&Locator> {
        vec![&self.locator]
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        check_locator(&self.locator, "/locator")
    }
}
args!(
    /// `openPopup`: click `locator` and adopt the popup it opens under the step's `name`.
    OpenPopup { locator: Locator }
);
impl ActionArgs for OpenPopup {
    fn locators(&self) -> Vec<&Locator> {
        vec![&self.locator]
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        check_locator(&self.locator, "/locator")
    }
}
args!(
    /// `download`: click `locator` and keep the download it starts.
    Download {
        locator: Locator,
        #[serde(skip_serializing_if = "Option::is_none")] filename: Option<Matcher>,
        #[serde(skip_serializing_if = "Option::is_none")] #[schemars(range(min = 1))] max_bytes: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")] retain: Option<bool>,
    }
);
impl ActionArgs for Download {
    fn locators(&self) -> Vec<&Locator> {
        vec![&self.locator]
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        check_locator(&self.locator, "/locator")?;
        match &self.filename {
            Some(m) => check_matcher(m, "/filename", "filename"),
            None => Ok(()),
        }
    }
}
args!(
    /// `evaluate`: one safe operation.
    Evaluate {
        operation: EvaluateOperation,
        #[serde(skip_serializing_if = "Option::is_none")] x: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")] y: Option<f64>,
    }
);
impl ActionArgs for Evaluate {}
args!(
    /// An assertion about one element's state.
    ElementAssert { locator: Locator }
);
impl ActionArgs for ElementAssert {
    fn locators(&self) -> Vec<&Locator> {
        vec![&self.locator]
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        check_locator(&self.locator, "/locator")
    }
}
args!(
    /// An assertion about an element's text or value.
    ElementTextAssert {
        locator: Locator,
        #[serde(skip_serializing_if = "Option::is_none")] equals: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")] includes: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")] regex: Option<String>,
    }
);
impl ElementTextAssert {
    /// The matcher written inline in the step.
    pub fn matcher(&self) -> Matcher {
        Matcher::from_parts(&self.equals, &self.includes, &self.regex)
    }
}
impl ActionArgs for ElementTextAssert {
    fn locators(&self) -> Vec<&Locator> {
        vec![&self.locator]
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        check_locator(&self.locator, "/locator")?;
        check_matcher(&self.matcher(), "", "the assertion")
    }
}
args!(
    /// `assertAttribute`.
    AttributeAssert {
        locator: Locator,
        attribute: String,
        #[serde(skip_serializing_if = "Option::is_none")] equals: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")] includes: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")] regex: Option<String>,
    }
);
impl AttributeAssert {
    /// The matcher written inline in the step.
    pub fn matcher(&self) -> Matcher {
        Matcher::from_parts(&self.equals, &self.includes, &self.regex)
    }
}
impl ActionArgs for AttributeAssert {
    fn locators(&self) -> Vec<&Locator> {
        vec![&self.locator]
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        check_locator(&self.locator, "/locator")?;
        check_matcher(&self.matcher(), "", "assertAttribute")
    }
}
args!(
    /// `assertCount`: how many elements match.
    CountAssert { locator: Locator, #[schemars(range(max = 100000))] count: u32 }
);
impl ActionArgs for CountAssert {
    fn locators(&self) -> Vec<&Locator> {
        vec![&self.locator]
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        check_locator(&self.locator, "/locator")
    }
}
args!(
    /// A matcher with no element (`assertURL`).
    MatcherOnly {
        #[serde(skip_serializing_if = "Option::is_none")] equals: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")] includes: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")] regex: Option<String>,
    }
);
impl MatcherOnly {
    /// The matcher written inline in the step.
    pub fn matcher(&self) -> Matcher {
        Matcher::from_parts(&self.equals, &self.includes, &self.regex)
    }
}
impl ActionArgs for MatcherOnly {
    fn validate(&self) -> Result<(), ArgProblem> {
        check_matcher(&self.matcher(), "", "the assertion")
    }
}
/// Numeric comparison of `assertDOMMetric`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DomMetricComparison {
    /// `==`.
    Equals(f64),
    /// `>`.
    GreaterThan(f64),
    /// `>=`.
    GreaterThanOrEqual(f64),
    /// `<`.
    LessThan(f64),
    /// `<=`.
    LessThanOrEqual(f64),
}
impl DomMetricComparison {
    /// Whether `v` satisfies the comparison.
    pub fn holds(&self, v: f64) -> bool {
        match *self {
            Self::Equals(x) => v == x,
            Self::GreaterThan(x) => v > x,
            Self::GreaterThanOrEqual(x) => v >= x,
            Self::LessThan(x) => v < x,
            Self::LessThanOrEqual(x) => v <= x,
        }
    }
}
args!(
    /// `assertDOMMetric`: a numeric document metric compared once.
    DomMetricAssert {
        metric: String,
        #[serde(skip_serializing_if = "Option::is_none")] locator: Option<Locator>,
        #[serde(skip_serializing_if = "Option::is_none")] equals: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")] greater_than: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")] greater_than_or_equal: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")] less_than: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")] less_than_or_equal: Option<f64>,
    }
);
impl DomMetricAssert {
    /// The one comparison the step sets.
    pub fn comparison(&self) -> Option<DomMetricComparison> {
        use DomMetricComparison as D;
        self.equals
            .map(D::Equals)
            .or(self.greater_than.map(D::GreaterThan))
            .or(self.greater_than_or_equal.map(D::GreaterThanOrEqual))
            .or(self.less_than.map(D::LessThan))
            .or(self.less_than_or_equal.map(D::LessThanOrEqual))
    }
}
impl ActionArgs for DomMetricAssert {
    fn locators(&self) -> Vec<&Locator> {
        self.locator.iter().collect()
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        let n = [
            self.equals,
            self.greater_than,
            self.greater_than_or_equal,
            self.less_than,
            self.less_than_or_equal,
        ]
        .iter()
        .filter(|v| v.is_some())
        .count();
        if n != 1 {
            return Err(problem("", super::FlowErrorCode::MissingField,
                "assertDOMMetric needs exactly one of equals, greaterThan, greaterThanOrEqual, lessThan, lessThanOrEqual"));
        }
        match &self.locator {
            Some(l) => check_locator(l, "/locator"),
            None => Ok(()),
        }
    }
}
args!(
    /// `snapshotAccessibility` (optionally rooted at an element).
    Snapshot { #[serde(skip_serializing_if = "Option::is_none")] locator: Option<Locator> }
);
impl ActionArgs for Snapshot {
    fn locators(&self) -> Vec<&Locator> {
        self.locator.iter().collect()
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        match &self.locator {
            Some(l) => check_locator(l, "/locator"),
            None => Ok(()),
        }
    }
}
args!(
    /// `assertConsole`: a console message at `level` matching.
    ConsoleAssert {
        #[serde(skip_serializing_if = "Option::is_none")] level: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")] equals: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")] includes: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")] regex: Option<String>,
    }
);
impl ConsoleAssert {
    /// The matcher written inline in the step.
    pub fn matcher(&self) -> Matcher {
        Matcher::from_parts(&self.equals, &self.includes, &self.regex)
    }
}
impl ActionArgs for ConsoleAssert {
    fn validate(&self) -> Result<(), ArgProblem> {
        check_matcher(&self.matcher(), "", "assertConsole")
    }
}
args!(
    /// `assertNetworkRequest`: a request to `path` was made.
    NetworkAssert {
        path: String,
        #[serde(skip_serializing_if = "Option::is_none")] method: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")] #[schemars(range(min = 100, max = 599))] status: Option<u16>,
    }
);
impl ActionArgs for NetworkAssert {}
args!(
    /// `screenshot`: viewport, full page or one element.
    Screenshot {
        #[serde(skip_serializing_if = "Option::is_none")] locator: Option<Locator>,
        #[serde(skip_serializing_if = "Option::is_none")] full_page: Option<bool>,
    }
);
impl ActionArgs for Screenshot {
    fn locators(&self) -> Vec<&Locator> {
        self.locator.iter().collect()
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        match &self.locator {
            Some(l) => check_locator(l, "/locator"),
            None => Ok(()),
        }
    }
}
args!(
    /// `authRejectedIf`: the auth profile is rejected when this holds.
    AuthRejectedIf {
        #[serde(skip_serializing_if = "Option::is_none")] url_includes: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")] locator: Option<Locator>,
    }
);
impl ActionArgs for AuthRejectedIf {
    fn locators(&self) -> Vec<&Locator> {
        self.locator.iter().collect()
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        if self.url_includes.is_some() == self.locator.is_some() {
            return Err(problem(
                "",
                super::FlowErrorCode::MissingField,
                "authRejectedIf needs exactly one of urlIncludes, locator",
            ));
        }
        match &self.locator {
            Some(l) => check_locator(l, "/locator"),
            None => Ok(()),
        }
    }
}

actions!(
    /// Actions on a web page.
    BrowserAction, TargetKind::Browser, {
        /// Navigate.
        Goto = "goto" (Goto): Action,
        /// Reload the page.
        Reload = "reload" (NoArgs): Action,
        /// Wait for an element state.
        WaitFor = "waitFor" (WaitFor): Assertion,
        /// Sleep.
        WaitForTimeout = "waitForTimeout" (WaitForTimeout): Runner,
        /// Click.
        Click = "click" (Pointer): Action,
        /// Double-click.
        DoubleClick = "doubleClick" (Pointer): Action,
        /// Hover.
        Hover = "hover" (Hover): Action,
        /// Fill an input.
        Fill = "fill" (Fill): Action,
        /// Press a key.
        Press = "press" (Press): Action,
        /// Check a checkbox or radio.
        Check = "check" (Pointer): Action,
        /// Uncheck a checkbox.
        Uncheck = "uncheck" (Pointer): Action,
        /// Choose an option.
        SelectOption = "selectOption" (SelectOption): Action,
        /// Mouse wheel.
        Wheel = "wheel" (Wheel): Action,
        /// Drag and drop.
        DragTo = "dragTo" (DragTo): Action,
        /// Set files on a file input.
        UploadFiles = "uploadFiles" (UploadFiles): Action,
        /// Open and adopt a popup.
        OpenPopup = "openPopup" (OpenPopup): Action,
        /// Download a file.
        Download = "download" (Download): Action,
        /// A safe evaluation.
        Evaluate = "evaluate" (Evaluate): Action,
        /// Element is visible.
        AssertVisible = "assertVisible" (ElementAssert): Assertion,
        /// Element is hidden or absent.
        AssertHidden = "assertHidden" (ElementAssert): Assertion,
        /// Element is enabled.
        AssertEnabled = "assertEnabled" (ElementAssert): Assertion,
        /// Element is disabled.
        AssertDisabled = "assertDisabled" (ElementAssert): Assertion,
        /// Element is checked.
        AssertChecked = "assertChecked" (ElementAssert): Assertion,
        /// Element is unchecked.
        AssertUnchecked = "assertUnchecked" (ElementAssert): Assertion,
        /// Visible text matches.
        AssertText = "assertText" (ElementTextAssert): Assertion,
        /// Text content matches.
        AssertTextContent = "assertTextContent" (ElementTextAssert): Assertion,
        /// Input value matches.
        AssertValue = "assertValue" (ElementTextAssert): Assertion,
        /// Attribute matches.
        AssertAttribute = "assertAttribute" (AttributeAssert): Assertion,
        /// Number of matches.
        AssertCount = "assertCount" (CountAssert): Assertion,
        /// Page URL matches.
        AssertUrl = "assertURL" (MatcherOnly): Assertion,
        /// Numeric document metric.
        AssertDomMetric = "assertDOMMetric" (DomMetricAssert): Assertion,
        /// Accessibility snapshot.
        SnapshotAccessibility = "snapshotAccessibility" (Snapshot): Action,
        /// No console errors so far.
        AssertNoConsoleErrors = "assertNoConsoleErrors" (NoArgs): Assertion,
        /// A console message matches.
        AssertConsole = "assertConsole" (ConsoleAssert): Assertion,
        /// A network request was made.
        AssertNetworkRequest = "assertNetworkRequest" (NetworkAssert): Assertion,
        /// Performance trace summary.
        PerformanceTrace = "performanceTrace" (NoArgs): Action,
        /// Heap summary.
        HeapSummary = "heapSummary" (NoArgs): Action,
        /// Lighthouse audit.
        Lighthouse = "lighthouse" (NoArgs): Action,
        /// Screenshot.
        Screenshot = "screenshot" (Screenshot): Action,
        /// Auth rejection check.
        AuthRejectedIf = "authRejectedIf" (AuthRejectedIf): Assertion,
    }
);

// ---------------------------------------------------------------- terminal

args!(
    /// Text or regex on the terminal screen.
    TextQuery {
        #[serde(skip_serializing_if = "Option::is_none")] text: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")] regex: Option<String>,
    }
);
impl ActionArgs for TextQuery {
    fn validate(&self) -> Result<(), ArgProblem> {
        check_text_or_regex(&self.text, &self.regex)
    }
}
args!(
    /// Text or regex on the screen, optionally on one row (0-based).
    ScreenTextAssert {
        #[serde(skip_serializing_if = "Option::is_none")] text: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")] regex: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")] #[schemars(range(max = 499))] row: Option<u16>,
    }
);
impl ActionArgs for ScreenTextAssert {
    fn validate(&self) -> Result<(), ArgProblem> {
        check_text_or_regex(&self.text, &self.regex)
    }
}
args!(
    /// `waitForStable`: no screen change for `stableMs` (default 300).
    WaitForStable { #[serde(skip_serializing_if = "Option::is_none")] #[schemars(range(min = 10, max = 60000))] stable_ms: Option<u64> }
);
impl ActionArgs for WaitForStable {}
args!(
    /// Printable text to type.
    SendText { #[schemars(length(max = 65536))] text: String }
);
impl ActionArgs for SendText {
    fn values(&self) -> Vec<&str> {
        vec![&self.text]
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        check_printable(&self.text, "/text")
    }
}
args!(
    /// Text to paste (bracketed).
    SendPaste { #[schemars(length(max = 1048576))] text: String }
);
impl ActionArgs for SendPaste {
    fn values(&self) -> Vec<&str> {
        vec![&self.text]
    }
}
args!(
    /// Named keys and single characters.
    SendKeys { #[schemars(length(min = 1, max = 1000))] keys: Vec<String> }
);
impl ActionArgs for SendKeys {
    fn validate(&self) -> Result<(), ArgProblem> {
        if self.keys.is_empty() {
            return Err(problem(
                "/keys",
                super::FlowErrorCode::OutOfRange,
                "keys must not be empty",
            ));
        }
        for (i, k) in self.keys.iter().enumerate() {
            check_key(k, &format!("/keys/{i}"))?;
        }
        Ok(())
    }
}
args!(
    /// New terminal size.
    Resize { #[schemars(range(min = 2, max = 1000))] cols: u16, #[schemars(range(min = 2, max = 500))] rows: u16 }
);
impl ActionArgs for Resize {
    fn validate(&self) -> Result<(), ArgProblem> {
        if !(2..=1000).contains(&self.cols) {
            return Err(problem(
                "/cols",
                super::FlowErrorCode::OutOfRange,
                "cols must be 2..=1000",
            ));
        }
        if !(2..=500).contains(&self.rows) {
            return Err(problem(
                "/rows",
                super::FlowErrorCode::OutOfRange,
                "rows must be 2..=500",
            ));
        }
        Ok(())
    }
}
args!(
    /// Cursor position (0-based) and visibility.
    CursorAssert { row: u16, col: u16, #[serde(skip_serializing_if = "Option::is_none")] visible: Option<bool> }
);
impl ActionArgs for CursorAssert {}
args!(
    /// The program exited (optionally with this code).
    ExitAssert { #[serde(skip_serializing_if = "Option::is_none")] exit_code: Option<i32> }
);
impl ActionArgs for ExitAssert {}

actions!(
    /// Actions on a terminal program.
    TerminalAction, TargetKind::Terminal, {
        /// Wait until text appears (screen or scrollback).
        WaitForText = "waitForText" (TextQuery): Assertion,
        /// Wait until the screen stops changing.
        WaitForStable = "waitForStable" (WaitForStable): Action,
        /// Sleep.
        WaitForTimeout = "waitForTimeout" (WaitForTimeout): Runner,
        /// Type printable text.
        SendText = "sendText" (SendText): Action,
        /// Paste text (bracketed).
        SendPaste = "sendPaste" (SendPaste): Action,
        /// Send keys.
        SendKeys = "sendKeys" (SendKeys): Action,
        /// Resize the terminal.
        Resize = "resize" (Resize): Action,
        /// Text is on screen.
        AssertText = "assertText" (ScreenTextAssert): Assertion,
        /// Text is not on screen.
        AssertNotText = "assertNotText" (ScreenTextAssert): Assertion,
        /// Cursor position.
        AssertCursor = "assertCursor" (CursorAssert): Assertion,
        /// Program still running.
        AssertProcessRunning = "assertProcessRunning" (NoArgs): Assertion,
        /// Program exited.
        AssertProcessExited = "assertProcessExited" (ExitAssert): Assertion,
        /// Capture the screen (text + PNG).
        Capture = "capture" (NoArgs): Action,
    }
);

// ---------------------------------------------------------------- desktop

/// Accessibility states `assertState` can check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ElementState {
    /// Enabled (sensitive).
    Enabled,
    /// Disabled.
    Disabled,
    /// Checked / pressed.
    Checked,
    /// Not checked.
    Unchecked,
    /// Has keyboard focus.
    Focused,
    /// Selected.
    Selected,
    /// Visible / showing.
    Visible,
    /// Expanded.
    Expanded,
    /// Collapsed.
    Collapsed,
}

args!(
    /// `waitForWindow`: a window (optionally with a title) exists.
    WaitForWindow { #[serde(skip_serializing_if = "Option::is_none")] title: Option<Matcher> }
);
impl ActionArgs for WaitForWindow {
    fn validate(&self) -> Result<(), ArgProblem> {
        match &self.title {
            Some(m) => check_matcher(m, "/title", "title"),
            None => Ok(()),
        }
    }
}
args!(
    /// An action on one element.
    ElementAction { locator: Locator }
);
impl ActionArgs for ElementAction {
    fn locators(&self) -> Vec<&Locator> {
        vec![&self.locator]
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        check_locator(&self.locator, "/locator")
    }
}
args!(
    /// `snapshotAccessibility` on desktop (optionally rooted at an element).
    DesktopSnapshot { #[serde(skip_serializing_if = "Option::is_none")] locator: Option<Locator> }
);
impl ActionArgs for DesktopSnapshot {
    fn locators(&self) -> Vec<&Locator> {
        self.locator.iter().collect()
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        match &self.locator {
            Some(l) => check_locator(l, "/locator"),
            None => Ok(()),
        }
    }
}
args!(
    /// `setValue`: set text or a numeric value through accessibility.
    SetValue { locator: Locator, value: String }
);
impl ActionArgs for SetValue {
    fn locators(&self) -> Vec<&Locator> {
        vec![&self.locator]
    }
    fn values(&self) -> Vec<&str> {
        vec![&self.value]
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        check_locator(&self.locator, "/locator")
    }
}
args!(
    /// `inputText`: type text (focusing `locator` first).
    InputText { text: String, #[serde(skip_serializing_if = "Option::is_none")] locator: Option<Locator> }
);
impl ActionArgs for InputText {
    fn locators(&self) -> Vec<&Locator> {
        self.locator.iter().collect()
    }
    fn values(&self) -> Vec<&str> {
        vec![&self.text]
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        check_printable(&self.text, "/text")?;
        match &self.locator {
            Some(l) => check_locator(l, "/locator"),
            None => Ok(()),
        }
    }
}
args!(
    /// `pressKey`: one key chord.
    PressKey { key: String }
);
impl ActionArgs for PressKey {
    fn validate(&self) -> Result<(), ArgProblem> {
        check_key(&self.key, "/key")
    }
}
args!(
    /// Desktop text wait/assert: an element (or any element) whose text matches.
    DesktopTextAssert {
        #[serde(skip_serializing_if = "Option::is_none")] locator: Option<Locator>,
        #[serde(skip_serializing_if = "Option::is_none")] equals: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")] includes: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")] regex: Option<String>,
    }
);
impl DesktopTextAssert {
    /// The matcher written inline in the step.
    pub fn matcher(&self) -> Matcher {
        Matcher::from_parts(&self.equals, &self.includes, &self.regex)
    }
}
impl ActionArgs for DesktopTextAssert {
    fn locators(&self) -> Vec<&Locator> {
        self.locator.iter().collect()
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        if let Some(l) = &self.locator {
            check_locator(l, "/locator")?;
        }
        check_matcher(&self.matcher(), "", "the text assertion")
    }
}
args!(
    /// `assertState`: an accessibility state or value.
    StateAssert {
        locator: Locator,
        #[serde(skip_serializing_if = "Option::is_none")] state: Option<ElementState>,
        #[serde(skip_serializing_if = "Option::is_none")] value: Option<Matcher>,
    }
);
impl ActionArgs for StateAssert {
    fn locators(&self) -> Vec<&Locator> {
        vec![&self.locator]
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        check_locator(&self.locator, "/locator")?;
        if self.state.is_some() == self.value.is_some() {
            return Err(problem(
                "",
                super::FlowErrorCode::MissingField,
                "assertState needs exactly one of state, value",
            ));
        }
        match &self.value {
            Some(m) => check_matcher(m, "/value", "value"),
            None => Ok(()),
        }
    }
}

actions!(
    /// Actions on a desktop application.
    DesktopAction, TargetKind::Desktop, {
        /// Wait for a window.
        WaitForWindow = "waitForWindow" (WaitForWindow): Assertion,
        /// Raise and focus the window.
        ActivateWindow = "activateWindow" (NoArgs): Action,
        /// Invoke the element's default action.
        Activate = "activate" (ElementAction): Action,
        /// Accessibility snapshot.
        SnapshotAccessibility = "snapshotAccessibility" (DesktopSnapshot): Action,
        /// Set a value through accessibility.
        SetValue = "setValue" (SetValue): Action,
        /// Type text.
        InputText = "inputText" (InputText): Action,
        /// Press a key chord.
        PressKey = "pressKey" (PressKey): Action,
        /// Sleep.
        WaitForTimeout = "waitForTimeout" (WaitForTimeout): Runner,
        /// Wait for text.
        WaitForText = "waitForText" (DesktopTextAssert): Assertion,
        /// Element text matches.
        AssertText = "assertText" (DesktopTextAssert): Assertion,
        /// Element state or value.
        AssertState = "assertState" (StateAssert): Assertion,
        /// Window screenshot.
        Screenshot = "screenshot" (NoArgs): Action,
        /// Window screenshot plus accessibility snapshot.
        Capture = "capture" (NoArgs): Action,
    }
);

/// An action of any kind.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Action {
    /// A browser action.
    Browser(BrowserAction),
    /// A terminal action.
    Terminal(TerminalAction),
    /// A desktop action.
    Desktop(DesktopAction),
}

impl Action {
    /// The action name as written in the flow.
    pub fn name(&self) -> &'static str {
        match self {
            Action::Browser(a) => a.name(),
            Action::Terminal(a) => a.name(),
            Action::Desktop(a) => a.name(),
        }
    }

    /// Once, retried, or runner-handled.
    pub fn class(&self) -> StepClass {
        match self {
            Action::Browser(a) => a.class(),
            Action::Terminal(a) => a.class(),
            Action::Desktop(a) => a.class(),
        }
    }

    fn args(&self) -> &dyn ActionArgs {
        match self {
            Action::Browser(a) => a.args(),
            Action::Terminal(a) => a.args(),
            Action::Desktop(a) => a.args(),
        }
    }

    /// Locators used by this action.
    pub fn locators(&self) -> Vec<&Locator> {
        self.args().locators()
    }

    /// User data strings in this action (never echoed in progress).
    pub fn values(&self) -> Vec<&str> {
        self.args().values()
    }

    pub(crate) fn validate(&self) -> Result<(), ArgProblem> {
        self.args().validate()
    }

    /// Action names valid for a target kind.
    pub fn names_for(kind: TargetKind) -> &'static [&'static str] {
        match kind {
            TargetKind::Browser => BrowserAction::NAMES,
            TargetKind::Terminal => TerminalAction::NAMES,
            TargetKind::Desktop => DesktopAction::NAMES,
        }
    }

    /// Waits for `ms` if this is `waitForTimeout`.
    pub fn wait_for_timeout_ms(&self) -> Option<u64> {
        match self {
            Action::Browser(BrowserAction::WaitForTimeout(w))
            | Action::Terminal(TerminalAction::WaitForTimeout(w))
            | Action::Desktop(DesktopAction::WaitForTimeout(w)) => Some(w.ms),
            _ => None,
        }
    }
}
