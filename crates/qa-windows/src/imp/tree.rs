//! Reading the application's tree: one cache request per walk fetches a
//! whole subtree's properties in one cross-process round trip (UI
//! Automation's answer to per-property calls, the slowness pywinauto's
//! users meet), then the cached tree is read in-process, breadth-first,
//! into [`qa_desktop::Node`]s. Runs on the COM thread.

use super::com::{Key, Uia};
use crate::patterns::{Pattern, Patterns};
use crate::uia::{self, Expansion, RawStates, Toggle};
use qa_desktop::locate::NodeView;
use qa_desktop::node::TEXT_CAP;
use qa_desktop::{Fields, UIA};
use std::collections::VecDeque;
use std::sync::Arc;
use uiautomation::core::UICacheRequest;
use uiautomation::types::{TreeScope, UIProperty};
use uiautomation::variants::Variant;
use uiautomation::UIElement;

/// The platform's element: its key, and what actions need to know about
/// it (read with the tree, so an action decides without another round
/// trip). Two are equal when their keys are.
#[derive(Debug, Clone)]
pub(crate) struct UiaElement {
    /// Which element.
    pub key: Key,
    /// The control patterns it supports.
    pub patterns: Patterns,
    /// Its expand/collapse state.
    pub expansion: Option<Expansion>,
    /// Whether its Value pattern is read-only.
    pub value_read_only: Option<bool>,
    /// Whether its RangeValue pattern is read-only.
    pub range_read_only: Option<bool>,
    /// Whether MSAA names a default action for it.
    pub default_action: bool,
}

impl PartialEq for UiaElement {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl UiaElement {
    /// The application root.
    pub fn app() -> UiaElement {
        UiaElement {
            key: Key::App,
            patterns: Patterns::default(),
            expansion: None,
            value_read_only: None,
            range_read_only: None,
            default_action: false,
        }
    }
}

/// A fetched node.
pub(crate) type Node = qa_desktop::Node<UiaElement>;

/// Properties every fetch reads: identity, role, name, and what actions
/// decide by.
const ALWAYS: &[UIProperty] = &[
    UIProperty::ControlType,
    UIProperty::Name,
    UIProperty::NativeWindowHandle,
    UIProperty::IsInvokePatternAvailable,
    UIProperty::IsTogglePatternAvailable,
    UIProperty::IsValuePatternAvailable,
    UIProperty::IsRangeValuePatternAvailable,
    UIProperty::IsSelectionItemPatternAvailable,
    UIProperty::IsExpandCollapsePatternAvailable,
    UIProperty::IsScrollItemPatternAvailable,
    UIProperty::IsTextPatternAvailable,
    UIProperty::IsLegacyIAccessiblePatternAvailable,
    UIProperty::ExpandCollapseExpandCollapseState,
    UIProperty::ValueIsReadOnly,
    UIProperty::RangeValueIsReadOnly,
    UIProperty::LegacyIAccessibleDefaultAction,
];

/// Properties of [`Fields::states`].
const STATES: &[UIProperty] = &[
    UIProperty::IsEnabled,
    UIProperty::HasKeyboardFocus,
    UIProperty::IsKeyboardFocusable,
    UIProperty::IsOffscreen,
    UIProperty::IsPassword,
    UIProperty::ToggleToggleState,
    UIProperty::SelectionItemIsSelected,
];

/// Properties of [`Fields::content`] and [`Fields::detail`].
const CONTENT: &[UIProperty] = &[UIProperty::ValueValue, UIProperty::RangeValueValue];

/// A cache request for `fields` over `scope`, in the control view (the
/// elements Inspect and FlaUI show, without layout-only panes).
pub(crate) fn request(
    u: &Uia,
    fields: Fields,
    scope: TreeScope,
) -> uiautomation::Result<UICacheRequest> {
    let r = u.auto.create_cache_request()?;
    r.set_tree_scope(scope)?;
    r.set_tree_filter(u.auto.get_control_view_condition()?)?;
    let mut props: Vec<UIProperty> = ALWAYS.to_vec();
    if fields.id {
        props.push(UIProperty::AutomationId);
    }
    if fields.states {
        props.extend_from_slice(STATES);
    }
    if fields.content || fields.detail {
        props.extend_from_slice(CONTENT);
    }
    if fields.detail {
        props.push(UIProperty::BoundingRectangle);
    }
    for p in props {
        r.add_property(p)?;
    }
    Ok(r)
}

fn cached(e: &UIElement, p: UIProperty) -> Option<Variant> {
    e.get_cached_property_value(p).ok()
}

fn flag(e: &UIElement, p: UIProperty) -> bool {
    cached(e, p)
        .and_then(|v| TryInto::<bool>::try_into(&v).ok())
        .unwrap_or(false)
}

fn int(e: &UIElement, p: UIProperty) -> Option<i32> {
    cached(e, p).and_then(|v| TryInto::<i32>::try_into(&v).ok())
}

fn text(e: &UIElement, p: UIProperty) -> Option<String> {
    cached(e, p).and_then(|v| TryInto::<String>::try_into(&v).ok())
}

fn number(e: &UIElement, p: UIProperty) -> Option<f64> {
    cached(e, p).and_then(|v| TryInto::<f64>::try_into(&v).ok())
}

fn patterns(e: &UIElement) -> Patterns {
    let mut p = Patterns::default();
    for (prop, pat) in [
        (UIProperty::IsInvokePatternAvailable, Pattern::Invoke),
        (UIProperty::IsTogglePatternAvailable, Pattern::Toggle),
        (UIProperty::IsValuePatternAvailable, Pattern::Value),
        (
            UIProperty::IsRangeValuePatternAvailable,
            Pattern::RangeValue,
        ),
        (
            UIProperty::IsSelectionItemPatternAvailable,
            Pattern::SelectionItem,
        ),
        (
            UIProperty::IsExpandCollapsePatternAvailable,
            Pattern::ExpandCollapse,
        ),
        (
            UIProperty::IsScrollItemPatternAvailable,
            Pattern::ScrollItem,
        ),
        (UIProperty::IsTextPatternAvailable, Pattern::Text),
        (
            UIProperty::IsLegacyIAccessiblePatternAvailable,
            Pattern::LegacyIAccessible,
        ),
    ] {
        if flag(e, prop) {
            p.insert(pat);
        }
    }
    p
}

/// One node from an element whose cache holds `fields` (`None`: it has
/// gone, its runtime id cannot be read).
pub(crate) fn node(u: &mut Uia, e: &UIElement, fields: Fields, foreground: isize) -> Option<Node> {
    let id: Arc<[i32]> = e.get_runtime_id().ok()?.into();
    let pats = patterns(e);
    let hwnd = int(e, UIProperty::NativeWindowHandle).unwrap_or(0) as isize;
    let has = |p: Pattern| pats.has(p);
    let element = UiaElement {
        key: Key::Runtime(id.clone()),
        patterns: pats,
        expansion: int(e, UIProperty::ExpandCollapseExpandCollapseState)
            .filter(|_| has(Pattern::ExpandCollapse))
            .and_then(Expansion::from_raw),
        value_read_only: has(Pattern::Value).then(|| flag(e, UIProperty::ValueIsReadOnly)),
        range_read_only: has(Pattern::RangeValue)
            .then(|| flag(e, UIProperty::RangeValueIsReadOnly)),
        default_action: text(e, UIProperty::LegacyIAccessibleDefaultAction)
            .is_some_and(|a| !a.is_empty()),
    };
    let states = fields.states.then(|| {
        uia::states(&RawStates {
            enabled: flag(e, UIProperty::IsEnabled),
            focused: flag(e, UIProperty::HasKeyboardFocus),
            focusable: flag(e, UIProperty::IsKeyboardFocusable),
            offscreen: flag(e, UIProperty::IsOffscreen),
            password: flag(e, UIProperty::IsPassword),
            toggle: int(e, UIProperty::ToggleToggleState)
                .filter(|_| has(Pattern::Toggle))
                .and_then(Toggle::from_raw),
            selected: has(Pattern::SelectionItem)
                .then(|| flag(e, UIProperty::SelectionItemIsSelected)),
            expansion: element.expansion,
            value_read_only: element.value_read_only,
            active: hwnd != 0 && hwnd == foreground,
        })
    });
    let content = fields.content || fields.detail;
    // A password field's value is never read into evidence.
    let password = flag(e, UIProperty::IsPassword);
    let text_value = (content && has(Pattern::Value) && !password)
        .then(|| text(e, UIProperty::ValueValue))
        .flatten()
        .map(|t| t.chars().take(TEXT_CAP).collect());
    let value = (content && has(Pattern::RangeValue))
        .then(|| number(e, UIProperty::RangeValueValue))
        .flatten();
    let bounds = if fields.detail {
        e.get_cached_bounding_rectangle().ok().and_then(|r| {
            let (w, h) = (r.get_right() - r.get_left(), r.get_bottom() - r.get_top());
            (w > 0 && h > 0).then_some((r.get_left(), r.get_top(), w, h))
        })
    } else {
        None
    };
    let role = uia::role_of(int(e, UIProperty::ControlType).unwrap_or(0));
    u.elements.put(id, e.clone());
    Some(Node {
        element,
        view: NodeView {
            role,
            name: text(e, UIProperty::Name).unwrap_or_default(),
            id: if fields.id {
                text(e, UIProperty::AutomationId)
            } else {
                None
            },
            parent: None,
            order: Vec::new(),
        },
        states,
        bounds,
        text: text_value,
        value,
        child_idx: Vec::new(),
    })
}

/// The synthetic application root: a `Pane` named after the application
/// (UI Automation's own desktop root is a pane too).
pub(crate) fn app_node(name: &str) -> Node {
    Node {
        element: UiaElement::app(),
        view: NodeView {
            role: UIA.native_or_unknown("Pane"),
            name: name.to_string(),
            id: None,
            parent: None,
            order: Vec::new(),
        },
        states: None,
        bounds: None,
        text: None,
        value: None,
        child_idx: Vec::new(),
    }
}

/// The application's top-level windows (elements of the desktop root whose
/// process is one of `pids`), each with its whole subtree cached for
/// `fields` — one round trip for all of them.
pub(crate) fn top_windows(u: &Uia, pids: &[u32], fields: Fields) -> Vec<UIElement> {
    let Ok(req) = request(u, fields, TreeScope::Subtree) else {
        return Vec::new();
    };
    if req.add_property(UIProperty::ProcessId).is_err() {
        return Vec::new();
    }
    let Ok(root) = u.auto.get_root_element() else {
        return Vec::new();
    };
    let Ok(cond) = u.auto.create_true_condition() else {
        return Vec::new();
    };
    root.find_all_build_cache(TreeScope::Children, &cond, &req)
        .unwrap_or_default()
        .into_iter()
        .filter(|w| int(w, UIProperty::ProcessId).is_some_and(|p| pids.contains(&(p as u32))))
        .collect()
}

/// The tree under `root`, up to `cap` nodes, breadth-first; whether the
/// cap cut it short.
pub(crate) fn walk(
    u: &mut Uia,
    root: &Key,
    app: (&str, &[u32]),
    fields: Fields,
    cap: usize,
    foreground: isize,
) -> (Vec<Node>, bool) {
    let mut out: Vec<Node> = Vec::new();
    let mut queue: VecDeque<(UIElement, Option<usize>, Vec<u32>)> = VecDeque::new();
    match root {
        Key::App => {
            out.push(app_node(app.0));
            for (i, w) in top_windows(u, app.1, fields).into_iter().enumerate() {
                queue.push_back((w, Some(0), vec![i as u32]));
            }
        }
        Key::Runtime(_) => {
            let Some(live) = u.elements.get(root) else {
                return (out, false);
            };
            let Ok(req) = request(u, fields, TreeScope::Subtree) else {
                return (out, false);
            };
            let Ok(cached) = live.build_updated_cache(&req) else {
                return (out, false);
            };
            queue.push_back((cached, None, Vec::new()));
        }
    }
    let mut truncated = false;
    while let Some((e, parent, order)) = queue.pop_front() {
        if out.len() >= cap {
            truncated = true;
            break;
        }
        let Some(mut n) = node(u, &e, fields, foreground) else {
            continue;
        };
        n.view.parent = parent;
        n.view.order = order.clone();
        let idx = out.len();
        if let Some(p) = parent {
            out[p].child_idx.push(idx);
        }
        out.push(n);
        for (i, c) in e
            .get_cached_children()
            .unwrap_or_default()
            .into_iter()
            .enumerate()
        {
            let mut o = order.clone();
            o.push(i as u32);
            queue.push_back((c, Some(idx), o));
        }
    }
    u.elements.end_walk();
    (out, truncated)
}

/// One element with `fields` (`None`: it is gone).
pub(crate) fn fetch(
    u: &mut Uia,
    key: &Key,
    app: &str,
    fields: Fields,
    foreground: isize,
) -> Option<Node> {
    if *key == Key::App {
        return Some(app_node(app));
    }
    let live = u.elements.get(key)?;
    let req = request(u, fields, TreeScope::Element).ok()?;
    let cached = live.build_updated_cache(&req).ok()?;
    node(u, &cached, fields, foreground)
}
