//! The protocol with the in-page helper (`dom.js`), typed on both sides:
//! [`DomOp`] is every operation the helper knows, serialized exactly as
//! it reads them (`(op, spec, arg)`), and each answer has its own reply
//! type. A reply missing a field the driver needs is an error (the
//! helper and the driver disagree), never a silent default.

use qa_core::flow::Locator;
use qa_core::ElementCandidate;
use serde::de::{DeserializeOwned, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The in-page helper, called as `(DOM_JS)(op, spec, arg)`.
pub(crate) const DOM_JS: &str = include_str!("dom.js");

/// The locator as the helper wants it (`exact` only when true).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct LocatorSpec<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    test_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    role: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    label: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    placeholder: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    css: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exact: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nth: Option<u32>,
}

/// The locator as the helper wants it.
pub(crate) fn locator_spec(l: &Locator) -> Value {
    let spec = LocatorSpec {
        test_id: l.test_id.as_deref(),
        role: l.role.as_deref(),
        name: l.name.as_deref(),
        label: l.label.as_deref(),
        placeholder: l.placeholder.as_deref(),
        text: l.text.as_deref(),
        css: l.css.as_deref(),
        exact: l.is_exact().then_some(true),
        nth: l.nth,
    };
    serde_json::to_value(spec).unwrap_or_else(|_| json!({}))
}

/// What `act` checks and prepares, per action kind (the helper's
/// `arg.kind` and its fields).
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub(crate) enum ActKind<'a> {
    /// Visible, stable, enabled, receives events; answers the click point.
    Click,
    /// As `Click`.
    Dblclick,
    /// Visible and stable; answers the point (no enabled check).
    Hover,
    /// Visible and stable; answers the point (no hit test).
    Wheel,
    /// As `Click`, or `noop` when already in the `want` state.
    Check {
        /// Checked (`true`) or unchecked.
        want: bool,
    },
    /// Visible, enabled, editable; focuses and selects its content (or
    /// sets date/time/color/range inputs directly: `direct`).
    Fill {
        /// The value (set directly only for the special input types).
        value: &'a str,
    },
    /// Focuses the element.
    Focus,
    /// The element's rectangle (document and viewport coordinates).
    Rect,
    /// A file input accepting `count` files.
    File {
        /// How many files will be set.
        count: usize,
    },
    /// Selects an option of a `<select>` by value, label or index.
    Select {
        /// By value.
        #[serde(skip_serializing_if = "Option::is_none")]
        value: Option<&'a str>,
        /// By label.
        #[serde(skip_serializing_if = "Option::is_none")]
        label: Option<&'a str>,
        /// By index.
        #[serde(skip_serializing_if = "Option::is_none")]
        index: Option<u32>,
    },
}

/// What a failed step meant to do with its element: the candidates of a
/// locator that matched nothing list the elements that can take it first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Intent {
    /// Click, double-click: buttons, links, tabs, … first.
    Click,
    /// Type into: text boxes, text areas, editable regions first (also
    /// when nothing about them is close to the locator).
    Fill,
    /// Check or uncheck: checkboxes, radios, switches first (also when
    /// not close).
    Check,
    /// Choose an option: `<select>` elements first (also when not close).
    Select,
    /// Set files: file inputs first (also when not close).
    File,
}

impl Intent {
    /// The intent of an action kind (`None`: hover, wheel, focus, rect).
    pub fn of(kind: &ActKind<'_>) -> Option<Intent> {
        match kind {
            ActKind::Click | ActKind::Dblclick => Some(Intent::Click),
            ActKind::Fill { .. } => Some(Intent::Fill),
            ActKind::Check { .. } => Some(Intent::Check),
            ActKind::Select { .. } => Some(Intent::Select),
            ActKind::File { .. } => Some(Intent::File),
            ActKind::Hover | ActKind::Wheel | ActKind::Focus | ActKind::Rect => None,
        }
    }
}

/// Which string of one element `state` reads besides its state.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Read<'a> {
    /// Nothing.
    Nothing,
    /// Normalized rendered text (`innerText`).
    Text,
    /// Raw `textContent`.
    TextContent,
    /// The current value.
    Value,
    /// An attribute.
    Attribute(&'a str),
}

/// One operation of the in-page helper.
#[derive(Debug, Clone)]
pub(crate) enum DomOp<'a> {
    /// Resolve exactly one element and run the checks for an action kind
    /// ([`ActReply`]).
    Act(&'a Locator, ActKind<'a>),
    /// The one element a locator matches, as a remote object (`null`
    /// unless exactly one matches).
    Element(&'a Locator),
    /// How many elements match; for exactly one, its state and one string
    /// ([`ElementState`]).
    State(&'a Locator, Read<'a>),
    /// How many elements match and how many are visible ([`Counted`]).
    CountVisible(&'a Locator),
    /// The elements a locator matched, or the closest ones when it matched
    /// none (those that can take the step's action first), for a failure
    /// message ([`Candidates`]).
    Candidates(&'a Locator, Option<Intent>),
    /// Readiness: document state, busy marker, mutation counter
    /// ([`Settled`]).
    Settle,
    /// Document metrics ([`Metrics`]).
    Metrics,
    /// Scrolls the window to (or by) a position.
    Scroll {
        /// Scroll by rather than to.
        by: bool,
        /// Horizontal position or delta.
        x: Option<f64>,
        /// Vertical position or delta.
        y: Option<f64>,
    },
    /// Whether a frame target's document can be driven
    /// ([`FrameReply`]`<`[`Nothing`]`>`).
    FrameInfo(&'a Locator),
    /// A frame's content-box offset, and what covers a point of the frame's
    /// viewport in the page ([`FrameReply`]`<`[`FrameBox`]`>`).
    FrameBox(&'a Locator, Option<(f64, f64)>),
    /// URL, title and ready state ([`PageInfo`]).
    PageInfo,
    /// Covers the places that show a secret ([`MaskShown`]; called with
    /// node references through `Runtime.callFunctionOn`).
    MaskShow,
    /// Removes every mask ([`MaskHidden`]).
    MaskHide,
    /// The one element a locator matches: role, name and box, for the
    /// step trace ([`Resolved`]`?`; `null` unless exactly one matches).
    Resolved(&'a Locator),
    /// The accessible name locators match, of elements passed by reference
    /// (`Vec<Option<String>>`; called through `Runtime.callFunctionOn`).
    Names,
}

impl DomOp<'_> {
    /// The helper's name for the operation.
    pub fn name(&self) -> &'static str {
        match self {
            DomOp::Act(..) => "act",
            DomOp::Element(_) => "element",
            DomOp::State(..) => "state",
            DomOp::CountVisible(_) => "countVisible",
            DomOp::Candidates(..) => "candidates",
            DomOp::Settle => "settle",
            DomOp::Metrics => "metrics",
            DomOp::Scroll { .. } => "scroll",
            DomOp::FrameInfo(_) => "frameInfo",
            DomOp::FrameBox(..) => "frameBox",
            DomOp::PageInfo => "page",
            DomOp::MaskShow => "maskShow",
            DomOp::MaskHide => "maskHide",
            DomOp::Resolved(_) => "resolved",
            DomOp::Names => "names",
        }
    }

    /// The `spec` argument: the locator, or `{}`.
    fn spec(&self) -> Value {
        match self {
            DomOp::Act(l, _)
            | DomOp::Element(l)
            | DomOp::State(l, _)
            | DomOp::CountVisible(l)
            | DomOp::Candidates(l, _)
            | DomOp::Resolved(l)
            | DomOp::FrameInfo(l)
            | DomOp::FrameBox(l, _) => locator_spec(l),
            DomOp::Settle
            | DomOp::Metrics
            | DomOp::Scroll { .. }
            | DomOp::PageInfo
            | DomOp::MaskShow
            | DomOp::MaskHide
            | DomOp::Names => json!({}),
        }
    }

    /// The `arg` argument.
    fn arg(&self) -> Value {
        match self {
            DomOp::Act(_, kind) => serde_json::to_value(kind).unwrap_or_else(|_| json!({})),
            DomOp::State(_, read) => match read {
                Read::Nothing => json!({}),
                Read::Text => json!({ "text": true }),
                Read::TextContent => json!({ "textContent": true }),
                Read::Value => json!({ "value": true }),
                Read::Attribute(a) => json!({ "attribute": a }),
            },
            DomOp::Scroll { by, x, y } => {
                let mut a = json!({ "x": x, "y": y });
                if *by {
                    a["by"] = json!(true);
                }
                a
            }
            DomOp::FrameBox(_, hit) => match hit {
                Some((x, y)) => json!({ "hit": true, "x": x, "y": y }),
                None => json!({ "hit": false }),
            },
            DomOp::Candidates(_, intent) => match intent {
                Some(i) => json!({ "action": i }),
                None => json!({}),
            },
            DomOp::Element(_)
            | DomOp::CountVisible(_)
            | DomOp::Resolved(_)
            | DomOp::Settle
            | DomOp::Metrics
            | DomOp::FrameInfo(_)
            | DomOp::PageInfo
            | DomOp::MaskShow
            | DomOp::MaskHide
            | DomOp::Names => json!({}),
        }
    }

    /// The expression that runs the operation in a document.
    pub fn expression(&self) -> String {
        format!(
            "({DOM_JS})({}, {}, {})",
            json!(self.name()),
            self.spec(),
            self.arg()
        )
    }
}

/// Reads a helper answer as `R`; `Err` names what did not fit.
pub(crate) fn reply<R: DeserializeOwned>(op: &DomOp<'_>, v: Value) -> Result<R, String> {
    serde_json::from_value(v).map_err(|e| {
        format!(
            "the page helper's {} answer is not understood: {e}",
            op.name()
        )
    })
}

/// An answer without fields the driver reads.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct Nothing {}

/// The failed actionability check of an `act` answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub(crate) enum Check {
    /// Not in the document.
    #[serde(rename = "attached")]
    Attached,
    /// Not visible.
    #[serde(rename = "visible")]
    Visible,
    /// Moving.
    #[serde(rename = "stable")]
    Stable,
    /// Disabled.
    #[serde(rename = "enabled")]
    Enabled,
    /// Not editable.
    #[serde(rename = "editable")]
    Editable,
    /// Another element receives events at the click point.
    #[serde(rename = "receives events")]
    ReceivesEvents,
    /// The `<select>` has no such option.
    #[serde(rename = "option present")]
    OptionPresent,
    /// The option is disabled.
    #[serde(rename = "option enabled")]
    OptionEnabled,
    /// A check this driver does not know.
    #[serde(other)]
    Other,
}

impl Check {
    /// How the check reads in a message (`element is not {}`).
    pub fn as_str(self) -> &'static str {
        match self {
            Check::Attached => "attached",
            Check::Visible => "visible",
            Check::Stable => "stable",
            Check::Enabled => "enabled",
            Check::Editable => "editable",
            Check::ReceivesEvents => "receives events",
            Check::OptionPresent => "option present",
            Check::OptionEnabled => "option enabled",
            Check::Other => "actionable",
        }
    }
}

/// Why an element cannot take the action at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Unfit {
    /// `uploadFiles` on something else than `<input type=file>`.
    NotFileInput,
    /// Several files for a single-file input.
    NotMultiple,
    /// Anything else (not a checkbox, not a `<select>`, …).
    #[serde(other)]
    Other,
}

/// The answer of `act`: `ok` with the kind's payload `T`, or why not (yet).
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub(crate) enum ActReply<T> {
    /// Every check passed.
    Ok(T),
    /// Nothing matches (`total`: matches before `nth`).
    None {
        /// Matches before `nth` applied.
        total: u64,
    },
    /// More than one element matches.
    Ambiguous {
        /// How many.
        count: u64,
    },
    /// A check failed (retried until the step deadline).
    Check {
        /// Which.
        check: Check,
        /// What covers the click point (`receives events`).
        #[serde(default)]
        cover: Option<String>,
    },
    /// The element cannot take the action.
    Error {
        /// Why, when the helper names it.
        #[serde(default)]
        code: Option<Unfit>,
        /// What the helper says.
        error: String,
    },
}

/// The point an action aims at, in the viewport of the element's document.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub(crate) struct ClickPoint {
    /// Center x.
    pub x: f64,
    /// Center y.
    pub y: f64,
    /// Left edge (for positions relative to the element).
    pub left: f64,
    /// Top edge.
    pub top: f64,
}

/// `ok` of a pointer kind: the point, or nothing to do (`check` on an
/// element already in the requested state).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(untagged)]
pub(crate) enum Pointed {
    /// Already in the requested state.
    Noop {
        /// Always `true`.
        noop: bool,
    },
    /// Aim here.
    At(ClickPoint),
}

/// `ok` of `fill`.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
pub(crate) struct Filled {
    /// The helper set the value itself (date, time, color, range inputs).
    #[serde(default)]
    pub direct: bool,
}

/// `ok` of `rect`.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub(crate) struct ElementRect {
    /// Left, in document coordinates.
    pub x: f64,
    /// Top, in document coordinates.
    pub y: f64,
    /// Left, in the viewport.
    pub vx: f64,
    /// Top, in the viewport.
    pub vy: f64,
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
}

/// Where an `act` answer is, for frames: its coordinates are in the
/// frame's viewport and are brought into the page's
/// (`super::scope::to_page`).
pub(crate) enum Placement {
    /// No coordinates.
    Nowhere,
    /// A point to aim at (hit-tested again in the page).
    Point(f64, f64),
    /// An element rectangle (moved into page-document coordinates).
    Rect,
}

/// An `ok` payload that may carry coordinates.
pub(crate) trait Placed: DeserializeOwned {
    /// Its coordinates.
    fn placement(&self) -> Placement;
    /// Moves it by the frame's box.
    fn shift(&mut self, frame: &FrameBox);
}

impl Placed for Nothing {
    fn placement(&self) -> Placement {
        Placement::Nowhere
    }
    fn shift(&mut self, _: &FrameBox) {}
}

impl Placed for Filled {
    fn placement(&self) -> Placement {
        Placement::Nowhere
    }
    fn shift(&mut self, _: &FrameBox) {}
}

impl Placed for ClickPoint {
    fn placement(&self) -> Placement {
        Placement::Point(self.x, self.y)
    }
    fn shift(&mut self, f: &FrameBox) {
        self.x += f.dx;
        self.y += f.dy;
        self.left += f.dx;
        self.top += f.dy;
    }
}

impl Placed for Pointed {
    fn placement(&self) -> Placement {
        match self {
            Pointed::Noop { .. } => Placement::Nowhere,
            Pointed::At(p) => p.placement(),
        }
    }
    fn shift(&mut self, f: &FrameBox) {
        if let Pointed::At(p) = self {
            p.shift(f);
        }
    }
}

impl Placed for ElementRect {
    fn placement(&self) -> Placement {
        Placement::Rect
    }
    fn shift(&mut self, f: &FrameBox) {
        self.x = self.vx + f.dx + f.sx;
        self.y = self.vy + f.dy + f.sy;
    }
}

/// The answer of `state`.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "RawState")]
pub(crate) struct ElementState {
    /// How many elements match.
    pub count: u64,
    /// The state of the one match (`None` unless exactly one matches).
    pub one: Option<OneElement>,
}

/// The state of the one element `state` matched.
#[derive(Debug, Clone)]
pub(crate) struct OneElement {
    /// Visible.
    pub visible: bool,
    /// Enabled.
    pub enabled: bool,
    /// Checked (`None`: not a checkable element).
    pub checked: Option<bool>,
    /// The string asked for with [`Read`] (`None`: not asked for or not
    /// answered; `Some(None)`: the element has none, e.g. no such
    /// attribute).
    pub read: Option<Option<String>>,
}

impl OneElement {
    /// The string asked for; `Err` when the helper did not answer it.
    pub fn read(&self) -> Result<Option<&str>, String> {
        match &self.read {
            Some(v) => Ok(v.as_deref()),
            None => Err("the page helper's state answer lacks the value asked for".into()),
        }
    }
}

/// `Some(v)` for a field that is present (`null` included).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(d).map(Some)
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawState {
    count: u64,
    visible: Option<bool>,
    enabled: Option<bool>,
    checked: Option<bool>,
    #[serde(default, deserialize_with = "present")]
    text: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    text_content: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    value: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    attribute: Option<Option<String>>,
}

impl TryFrom<RawState> for ElementState {
    type Error = String;

    fn try_from(r: RawState) -> Result<ElementState, String> {
        let one = if r.count == 1 {
            let (Some(visible), Some(enabled)) = (r.visible, r.enabled) else {
                return Err("one element matched, but its visible/enabled state is missing".into());
            };
            Some(OneElement {
                visible,
                enabled,
                checked: r.checked,
                read: r.text.or(r.text_content).or(r.value).or(r.attribute),
            })
        } else {
            None
        };
        Ok(ElementState {
            count: r.count,
            one,
        })
    }
}

/// The answer of `candidates`.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Candidates {
    /// The locator matched these (several); otherwise they are the closest.
    pub matched: bool,
    /// How many there were in all.
    pub total: u64,
    /// The first ten.
    pub list: Vec<RawCandidate>,
}

/// What a locator resolved to (the step trace).
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Resolved {
    /// Its role.
    pub role: Option<String>,
    /// Its accessible name (at most 200 characters).
    pub name: Option<String>,
    /// Its box in the viewport (CSS px).
    pub x: f64,
    /// Top.
    pub y: f64,
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
}

/// One element of [`Candidates`].
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RawCandidate {
    role: Option<String>,
    name: Option<String>,
    text: Option<String>,
    detail: Option<String>,
    /// A locator that finds this element alone, checked by the page.
    #[serde(default)]
    locator: Option<serde_json::Value>,
}

impl RawCandidate {
    /// The portable candidate, with a locator a flow could write that finds
    /// this element alone (the page checked it; none when no such locator
    /// exists).
    pub fn into_candidate(self) -> ElementCandidate {
        let nonempty = |s: Option<String>| s.filter(|s| !s.trim().is_empty());
        let name = nonempty(self.name);
        let locator = self
            .locator
            .filter(|l| l.as_object().is_some_and(|o| !o.is_empty()))
            .map(|l| l.to_string());
        ElementCandidate {
            role: self.role,
            name,
            text: nonempty(self.text),
            locator,
            detail: nonempty(self.detail),
        }
    }
}

/// The answer of `countVisible`.
#[derive(Debug, Clone, Copy, Deserialize)]
pub(crate) struct Counted {
    /// Matches.
    pub count: u64,
    /// Visible matches.
    pub visible: u64,
}

/// The answer of `settle`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct Settled {
    /// `document.readyState`.
    pub ready: String,
    /// A visible busy marker (`null`: none).
    pub busy: Option<String>,
    /// DOM mutations observed so far.
    pub mutations: u64,
    /// Marks of the recording visualizer still drawn (0 without video).
    #[serde(default)]
    pub marks: u64,
}

/// The answer of `metrics`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Metrics {
    /// `scrollX`.
    pub scroll_x: f64,
    /// `scrollY`.
    pub scroll_y: f64,
    /// `innerWidth`.
    pub inner_width: f64,
    /// `innerHeight`.
    pub inner_height: f64,
    /// The document's scroll width.
    pub scroll_width: f64,
    /// The document's scroll height.
    pub scroll_height: f64,
    /// Elements in the document.
    pub element_count: f64,
    /// `document.images.length`.
    pub image_count: f64,
    /// `document.links.length`.
    pub link_count: f64,
    /// `document.forms.length`.
    pub form_count: f64,
}

impl Metrics {
    /// A document metric of `assertDOMMetric` (`None` for the metrics of
    /// a locator's elements).
    pub fn get(&self, metric: qa_core::flow::DomMetric) -> Option<f64> {
        use qa_core::flow::DomMetric as M;
        Some(match metric {
            M::ScrollX => self.scroll_x,
            M::ScrollY => self.scroll_y,
            M::InnerWidth => self.inner_width,
            M::InnerHeight => self.inner_height,
            M::ScrollWidth => self.scroll_width,
            M::ScrollHeight => self.scroll_height,
            M::ElementCount => self.element_count,
            M::ImageCount => self.image_count,
            M::LinkCount => self.link_count,
            M::FormCount => self.form_count,
            M::Count | M::VisibleCount => return None,
        })
    }
}

/// The answer of `frameInfo` (`T` = [`Nothing`]) and `frameBox`
/// (`T` = [`FrameBox`]).
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub(crate) enum FrameReply<T> {
    /// The frame is there (and ready, for `frameInfo`).
    Ok(T),
    /// The locator matches nothing.
    None,
    /// The frame has not loaded its document yet.
    Loading,
    /// The locator matches several elements.
    Ambiguous {
        /// How many.
        count: u64,
    },
    /// The locator matches an element that is not a frame.
    NotAFrame {
        /// What it matched.
        what: String,
    },
    /// The frame's document is cross-origin.
    CrossOrigin {},
}

/// `ok` of `frameBox`: the frame's content-box offset in the page's
/// viewport, the page's scroll, and what covers the asked point.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct FrameBox {
    /// Content-box left in the page's viewport.
    pub dx: f64,
    /// Content-box top in the page's viewport.
    pub dy: f64,
    /// The page's `scrollX`.
    pub sx: f64,
    /// The page's `scrollY`.
    pub sy: f64,
    /// What receives events at the point instead of the frame.
    pub cover: Option<String>,
}

/// The answer of `page`.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct PageInfo {
    /// `location.href`.
    pub url: String,
    /// `document.title`.
    pub title: String,
    /// `document.readyState`.
    pub ready: String,
}

/// Why the masks could not be placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Unmaskable {
    /// Something showing a secret has no box on the page.
    Hidden,
    /// It is in a frame the helper cannot reach.
    Frame,
    /// Too many boxes.
    Many,
}

/// The answer of `maskShow`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub(crate) enum MaskShown {
    /// The boxes are in place.
    Ok {},
    /// Nothing was placed.
    Unmaskable {
        /// Why.
        why: Unmaskable,
    },
}

/// The answer of `maskHide`.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct MaskHidden {
    /// Something covered moved while masked.
    pub moved: bool,
    /// The masks were still there as placed.
    pub intact: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_of_locator() {
        let l = Locator {
            role: Some("button".into()),
            name: Some("Save".into()),
            exact: Some(true),
            nth: Some(1),
            ..Default::default()
        };
        assert_eq!(
            locator_spec(&l),
            json!({ "role": "button", "name": "Save", "exact": true, "nth": 1 })
        );
    }

    #[test]
    fn operations_are_serialized_as_the_helper_reads_them() {
        let l = Locator {
            test_id: Some("x".into()),
            ..Default::default()
        };
        assert_eq!(
            DomOp::Act(&l, ActKind::Check { want: true }).arg(),
            json!({ "kind": "check", "want": true })
        );
        assert_eq!(
            DomOp::Act(
                &l,
                ActKind::Select {
                    value: None,
                    label: Some("B"),
                    index: None
                }
            )
            .arg(),
            json!({ "kind": "select", "label": "B" })
        );
        assert_eq!(
            DomOp::Act(&l, ActKind::File { count: 2 }).arg(),
            json!({ "kind": "file", "count": 2 })
        );
        assert_eq!(
            DomOp::State(&l, Read::Attribute("href")).arg(),
            json!({ "attribute": "href" })
        );
        assert_eq!(
            DomOp::Scroll {
                by: true,
                x: None,
                y: Some(5.0)
            }
            .arg(),
            json!({ "by": true, "x": null, "y": 5.0 })
        );
        assert_eq!(
            DomOp::Candidates(&l, Intent::of(&ActKind::Fill { value: "x" })).arg(),
            json!({ "action": "fill" })
        );
        assert_eq!(
            DomOp::Candidates(&l, Intent::of(&ActKind::Dblclick)).arg(),
            json!({ "action": "click" })
        );
        assert_eq!(DomOp::Candidates(&l, None).arg(), json!({}));
        let e = DomOp::PageInfo.expression();
        assert!(e.ends_with(")(\"page\", {}, {})"), "{}", &e[e.len() - 40..]);
    }

    #[test]
    fn a_click_point_is_never_defaulted() {
        let ok: ActReply<Pointed> = serde_json::from_value(
            json!({ "status": "ok", "x": 1.0, "y": 2.0, "left": 0.5, "top": 1.5, "w": 1, "h": 1 }),
        )
        .unwrap();
        assert!(matches!(ok, ActReply::Ok(Pointed::At(ClickPoint { x, .. })) if x == 1.0));
        let noop: ActReply<Pointed> =
            serde_json::from_value(json!({ "status": "ok", "noop": true })).unwrap();
        assert!(matches!(noop, ActReply::Ok(Pointed::Noop { .. })));
        assert!(
            serde_json::from_value::<ActReply<Pointed>>(json!({ "status": "ok", "y": 2.0 }))
                .is_err()
        );
        let check: ActReply<Pointed> = serde_json::from_value(
            json!({ "status": "check", "check": "receives events", "cover": "div#x" }),
        )
        .unwrap();
        assert!(matches!(
            check,
            ActReply::Check {
                check: Check::ReceivesEvents,
                cover: Some(_)
            }
        ));
        let err: ActReply<Nothing> = serde_json::from_value(
            json!({ "status": "error", "code": "not_multiple", "error": "x" }),
        )
        .unwrap();
        assert!(matches!(
            err,
            ActReply::Error {
                code: Some(Unfit::NotMultiple),
                ..
            }
        ));
    }

    #[test]
    fn state_of_one_element_must_be_complete() {
        let s: ElementState = serde_json::from_value(
            json!({ "count": 1, "visible": true, "enabled": true, "checked": null, "value": null }),
        )
        .unwrap();
        let one = s.one.unwrap();
        assert_eq!(one.checked, None);
        assert_eq!(one.read().unwrap(), None);
        let s: ElementState = serde_json::from_value(json!({ "count": 0 })).unwrap();
        assert!(s.one.is_none());
        assert!(serde_json::from_value::<ElementState>(json!({ "count": 1 })).is_err());
        let s: ElementState = serde_json::from_value(
            json!({ "count": 1, "visible": true, "enabled": true, "checked": null }),
        )
        .unwrap();
        assert!(s.one.unwrap().read().is_err());
    }

    #[test]
    fn frame_replies() {
        let r: FrameReply<Nothing> =
            serde_json::from_value(json!({ "status": "not_a_frame", "what": "div" })).unwrap();
        assert!(matches!(r, FrameReply::NotAFrame { .. }));
        let r: FrameReply<FrameBox> = serde_json::from_value(
            json!({ "status": "ok", "dx": 1, "dy": 2, "sx": 0, "sy": 0, "cover": null }),
        )
        .unwrap();
        assert!(matches!(r, FrameReply::Ok(FrameBox { dx, .. }) if dx == 1.0));
    }
}
