//! Browser actions and their arguments.

use super::*;

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

/// The kind of a JavaScript dialog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DialogKind {
    /// `alert()`.
    Alert,
    /// `confirm()`.
    Confirm,
    /// `prompt()`.
    Prompt,
    /// The page's `beforeunload` prompt.
    BeforeUnload,
}

impl DialogKind {
    /// Its name in flows and in Chromium's `Page.javascriptDialogOpening`.
    pub fn as_str(self) -> &'static str {
        match self {
            DialogKind::Alert => "alert",
            DialogKind::Confirm => "confirm",
            DialogKind::Prompt => "prompt",
            DialogKind::BeforeUnload => "beforeunload",
        }
    }
}

impl std::fmt::Display for DialogKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Expected JavaScript dialog armed before an interaction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DialogExpectation {
    /// `alert`, `confirm`, `prompt` or `beforeunload`.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<DialogKind>,
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
                crate::flow::FlowErrorCode::MissingField,
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
element_args!(WaitFor);
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
element_args!(Pointer);
args!(
    /// `hover`.
    Hover { locator: Locator }
);
element_args!(Hover);
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
        key: KeyName,
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
                crate::flow::FlowErrorCode::MissingField,
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
optional_element_args!(Wheel);
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
element_args!(UploadFiles);
args!(
    /// `openPopup`: click `locator` and adopt the popup it opens under the step's `name`.
    OpenPopup { locator: Locator }
);
element_args!(OpenPopup);
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
element_args!(ElementAssert);
args!(
    /// An assertion about an element's text or value.
    ElementTextAssert {
        locator: Locator,
        #[serde(skip_serializing_if = "Option::is_none")] equals: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")] includes: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")] regex: Option<Pattern>,
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
        #[serde(skip_serializing_if = "Option::is_none")] regex: Option<Pattern>,
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
element_args!(CountAssert);
args!(
    /// A matcher with no element (`assertURL`).
    MatcherOnly {
        #[serde(skip_serializing_if = "Option::is_none")] equals: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")] includes: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")] regex: Option<Pattern>,
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
    /// The comparison in words: `>= 3`.
    pub fn describe(&self) -> String {
        match *self {
            Self::Equals(x) => format!("== {x}"),
            Self::GreaterThan(x) => format!("> {x}"),
            Self::GreaterThanOrEqual(x) => format!(">= {x}"),
            Self::LessThan(x) => format!("< {x}"),
            Self::LessThanOrEqual(x) => format!("<= {x}"),
        }
    }
}
/// A numeric metric `assertDOMMetric` compares: of the document, or, with
/// a `locator`, of the elements it matches (`count`, `visibleCount`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum DomMetric {
    /// Elements in the document.
    ElementCount,
    /// `<img>` elements.
    ImageCount,
    /// Links.
    LinkCount,
    /// Forms.
    FormCount,
    /// The document's scroll width.
    ScrollWidth,
    /// The document's scroll height.
    ScrollHeight,
    /// Horizontal scroll position.
    ScrollX,
    /// Vertical scroll position.
    ScrollY,
    /// The viewport's width.
    InnerWidth,
    /// The viewport's height.
    InnerHeight,
    /// Elements the locator matches (needs a `locator`).
    Count,
    /// Visible elements the locator matches (needs a `locator`).
    VisibleCount,
}

impl DomMetric {
    /// Its name in flows.
    pub fn as_str(self) -> &'static str {
        match self {
            DomMetric::ElementCount => "elementCount",
            DomMetric::ImageCount => "imageCount",
            DomMetric::LinkCount => "linkCount",
            DomMetric::FormCount => "formCount",
            DomMetric::ScrollWidth => "scrollWidth",
            DomMetric::ScrollHeight => "scrollHeight",
            DomMetric::ScrollX => "scrollX",
            DomMetric::ScrollY => "scrollY",
            DomMetric::InnerWidth => "innerWidth",
            DomMetric::InnerHeight => "innerHeight",
            DomMetric::Count => "count",
            DomMetric::VisibleCount => "visibleCount",
        }
    }

    /// Whether it is measured on a locator's elements (else on the
    /// document).
    pub fn of_elements(self) -> bool {
        matches!(self, DomMetric::Count | DomMetric::VisibleCount)
    }
}

/// A console message level `assertConsole` filters on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ConsoleLevel {
    /// `console.log` and friends.
    Log,
    /// `console.info`.
    Info,
    /// `console.warn`.
    Warning,
    /// The same as `warning`.
    Warn,
    /// `console.error`, `console.assert`, exceptions.
    Error,
    /// `console.debug`.
    Debug,
}

impl ConsoleLevel {
    /// Its name in flows.
    pub fn as_str(self) -> &'static str {
        match self {
            ConsoleLevel::Log => "log",
            ConsoleLevel::Info => "info",
            ConsoleLevel::Warning => "warning",
            ConsoleLevel::Warn => "warn",
            ConsoleLevel::Error => "error",
            ConsoleLevel::Debug => "debug",
        }
    }
}

args!(
    /// `assertDOMMetric`: a numeric document metric compared once.
    DomMetricAssert {
        metric: DomMetric,
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
            return Err(problem("", crate::flow::FlowErrorCode::MissingField,
                "assertDOMMetric needs exactly one of equals, greaterThan, greaterThanOrEqual, lessThan, lessThanOrEqual"));
        }
        match (&self.locator, self.metric.of_elements()) {
            (Some(l), true) => check_locator(l, "/locator"),
            (None, false) => Ok(()),
            (Some(_), false) => Err(problem("/metric", crate::flow::FlowErrorCode::OutOfRange,
                format!("assertDOMMetric with a locator measures its elements: metric must be count or visibleCount, not {}", self.metric.as_str()))),
            (None, true) => Err(problem("/locator", crate::flow::FlowErrorCode::MissingField,
                format!("assertDOMMetric metric {} counts a locator's elements: add a locator", self.metric.as_str()))),
        }
    }
}
args!(
    /// `snapshotAccessibility` (optionally rooted at an element).
    Snapshot { #[serde(skip_serializing_if = "Option::is_none")] locator: Option<Locator> }
);
optional_element_args!(Snapshot);
args!(
    /// `assertConsole`: a console message at `level` matching.
    ConsoleAssert {
        #[serde(skip_serializing_if = "Option::is_none")] level: Option<ConsoleLevel>,
        #[serde(skip_serializing_if = "Option::is_none")] equals: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")] includes: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")] regex: Option<Pattern>,
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
optional_element_args!(Screenshot);
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
                crate::flow::FlowErrorCode::MissingField,
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
