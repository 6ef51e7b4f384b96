//! The fetched tree: one [`Node`] per element, in a flat list (parents
//! before children), with what a platform read for it.
//!
//! A platform fetches only the [`Fields`] a step needs; everything here
//! reads what was fetched and never asks the platform again.

use crate::locate::NodeView;
use qa_core::flow::ElementState;
use qa_core::snapshot::{AxBounds, AxNode};

/// Which optional fields to fetch (role, name and children always are).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Fields {
    /// Accessible id (`automationId`).
    pub id: bool,
    /// States.
    pub states: bool,
    /// Everything a snapshot shows: screen extents, text content, value and
    /// the platform's own capabilities.
    pub detail: bool,
    /// Text content and value even without `detail` (text searches).
    pub content: bool,
}

impl Fields {
    /// Everything (snapshots, a resolved element).
    pub const ALL: Fields = Fields {
        id: true,
        states: true,
        detail: true,
        content: true,
    };
}

/// Maximum characters of text content kept per node.
pub const TEXT_CAP: usize = 2000;

/// A state every platform can report, as steps and inspection read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u16)]
pub enum State {
    /// It can be used (not greyed out).
    Enabled = 1 << 0,
    /// It has the keyboard focus.
    Focused = 1 << 1,
    /// Checked, or a toggle that is pressed.
    Checked = 1 << 2,
    /// Selected in its container.
    Selected = 1 << 3,
    /// On screen: shown and not hidden by its own state.
    Visible = 1 << 4,
    /// Shown (its window is mapped), whether or not scrolled into view.
    Showing = 1 << 5,
    /// Expanded.
    Expanded = 1 << 6,
    /// Collapsed (expandable and not expanded).
    Collapsed = 1 << 7,
    /// Its text can be edited.
    Editable = 1 << 8,
    /// The active window.
    Active = 1 << 9,
    /// Gone: the element no longer exists (its subtree is not followed).
    Defunct = 1 << 10,
}

/// An element's states: the portable ones every step reads, and the
/// platform's own names (as its inspector shows them) for snapshots.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct States {
    bits: u16,
    /// The platform's state names (`sensitive`, `showing`, …).
    pub native: Vec<&'static str>,
}

impl States {
    /// States from the portable ones it has and the platform's names.
    pub fn new(has: impl IntoIterator<Item = State>, native: Vec<&'static str>) -> Self {
        States {
            bits: has.into_iter().fold(0, |b, s| b | s as u16),
            native,
        }
    }

    /// Whether it has a portable state.
    pub fn has(&self, s: State) -> bool {
        self.bits & s as u16 != 0
    }

    /// Whether it is in the state a flow asks about.
    pub fn is(&self, want: ElementState) -> bool {
        match want {
            ElementState::Enabled => self.has(State::Enabled),
            ElementState::Disabled => !self.has(State::Enabled),
            ElementState::Checked => self.has(State::Checked),
            ElementState::Unchecked => !self.has(State::Checked),
            ElementState::Focused => self.has(State::Focused),
            ElementState::Selected => self.has(State::Selected),
            ElementState::Visible => self.has(State::Visible),
            ElementState::Expanded => self.has(State::Expanded),
            ElementState::Collapsed => self.has(State::Collapsed),
        }
    }
}

/// Screen extents `(x, y, width, height)`.
pub type Extents = (i32, i32, i32, i32);

/// One fetched element. `E` is the platform's reference to it (with
/// whatever else the platform read for it); two `E`s are equal when they
/// are the same element.
#[derive(Debug, Clone)]
pub struct Node<E> {
    /// The platform's element.
    pub element: E,
    /// What locator matching needs.
    pub view: NodeView,
    /// States, when fetched.
    pub states: Option<States>,
    /// Screen extents, when fetched and available.
    pub bounds: Option<Extents>,
    /// Text content, when fetched.
    pub text: Option<String>,
    /// Current numeric value, when fetched.
    pub value: Option<f64>,
    /// Indices of fetched children in the flat list.
    pub child_idx: Vec<usize>,
}

impl<E> Node<E> {
    /// Whether it has a portable state (`false` when states were not fetched).
    pub fn has(&self, s: State) -> bool {
        self.states.as_ref().is_some_and(|st| st.has(s))
    }

    /// Its text: text content, else its value, else its name.
    pub fn text(&self) -> String {
        if let Some(t) = &self.text {
            return t.clone();
        }
        if let Some(v) = self.value {
            return format_value(v);
        }
        self.view.name.clone()
    }

    /// Its value for `assertState value`: the numeric value, else text content.
    pub fn value_text(&self) -> Option<String> {
        self.value.map(format_value).or_else(|| self.text.clone())
    }

    /// Every readable string: text content, value, name.
    pub fn texts(&self) -> Vec<String> {
        let mut v = Vec::new();
        if let Some(t) = &self.text {
            v.push(t.clone());
        }
        if let Some(x) = self.value {
            v.push(format_value(x));
        }
        if !self.view.name.is_empty() {
            v.push(self.view.name.clone());
        }
        v
    }
}

/// A value formatted for people (`5`, not `5.0`).
pub fn format_value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// A flow's value as the number a range control (slider, spinner) takes:
/// surrounding spaces ignored, finite only.
pub fn parse_number(value: &str) -> Option<f64> {
    value.trim().parse::<f64>().ok().filter(|v| v.is_finite())
}

/// The views of a fetched tree, for locator matching.
pub fn views<E>(nodes: &[Node<E>]) -> Vec<NodeView> {
    nodes.iter().map(|n| n.view.clone()).collect()
}

/// Reorders a walk's nodes breadth-first (by depth, then by their path of
/// child positions) and rebuilds parent and child indices: a walk that
/// fetches concurrently receives nodes in any order.
pub fn breadth_first<E>(mut nodes: Vec<Node<E>>) -> Vec<Node<E>> {
    let old_parent: Vec<Option<usize>> = nodes.iter().map(|n| n.view.parent).collect();
    let mut perm: Vec<usize> = (0..nodes.len()).collect();
    perm.sort_by(|&a, &b| {
        let (oa, ob) = (&nodes[a].view.order, &nodes[b].view.order);
        oa.len().cmp(&ob.len()).then_with(|| oa.cmp(ob))
    });
    let mut new_of = vec![0usize; nodes.len()];
    for (new, &old) in perm.iter().enumerate() {
        new_of[old] = new;
    }
    let mut slots: Vec<Option<Node<E>>> = nodes.drain(..).map(Some).collect();
    let mut out: Vec<Node<E>> = perm
        .iter()
        .map(|&old| slots[old].take().expect("each node once"))
        .collect();
    for (new, &old) in perm.iter().enumerate() {
        out[new].view.parent = old_parent[old].map(|p| new_of[p]);
        out[new].child_idx.clear();
    }
    for i in 0..out.len() {
        if let Some(p) = out[i].view.parent {
            out[p].child_idx.push(i);
        }
    }
    out
}

/// The snapshot tree of a fetched subtree rooted at index `i`: role, name,
/// id, value, text, the platform's state names, bounds and children — what
/// was fetched.
pub fn ax_tree<E>(nodes: &[Node<E>], i: usize) -> AxNode {
    let n = &nodes[i];
    AxNode {
        role: n.view.role.name().to_string(),
        name: Some(n.view.name.clone()),
        id: n.view.id.clone().filter(|s| !s.is_empty()),
        value: n.value.map(format_value),
        text: n.text.clone(),
        states: n
            .states
            .as_ref()
            .map(|s| s.native.iter().map(|x| x.to_string()).collect()),
        bounds: n.bounds.map(|(x, y, width, height)| AxBounds {
            x,
            y,
            width,
            height,
        }),
        children: n.child_idx.iter().map(|&c| ax_tree(nodes, c)).collect(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::roles::ATSPI;

    /// A synthetic node: `element` is its name.
    pub(crate) fn node(
        role: &str,
        name: &str,
        parent: Option<usize>,
        order: &[u32],
    ) -> Node<String> {
        Node {
            element: name.to_string(),
            view: NodeView {
                role: ATSPI.native(role).unwrap(),
                name: name.into(),
                id: None,
                parent,
                order: order.to_vec(),
            },
            states: None,
            bounds: None,
            text: None,
            value: None,
            child_idx: Vec::new(),
        }
    }

    #[test]
    fn a_concurrent_walk_is_put_back_in_breadth_first_order() {
        // Arrival order: a deep branch answered before its uncle.
        // Tree: root -> [a -> [a0], b].
        let arrived = vec![
            node("application", "root", None, &[]),
            node("panel", "a", Some(0), &[0]),
            node("panel", "a0", Some(1), &[0, 0]),
            node("panel", "b", Some(0), &[1]),
        ];
        let out = breadth_first(arrived);
        let names: Vec<&str> = out.iter().map(|n| n.view.name.as_str()).collect();
        assert_eq!(names, ["root", "a", "b", "a0"]);
        let parents: Vec<Option<usize>> = out.iter().map(|n| n.view.parent).collect();
        assert_eq!(parents, [None, Some(0), Some(0), Some(1)]);
        assert_eq!(out[0].child_idx, [1, 2]);
        assert_eq!(out[1].child_idx, [3]);
        assert!(out[2].child_idx.is_empty() && out[3].child_idx.is_empty());
    }

    #[test]
    fn texts_values_and_states() {
        let mut n = node("spin button", "Count", None, &[]);
        assert_eq!(n.text(), "Count");
        n.value = Some(5.0);
        assert_eq!(n.text(), "5");
        assert_eq!(n.value_text().as_deref(), Some("5"));
        n.text = Some("5 items".into());
        assert_eq!(n.text(), "5 items");
        assert_eq!(n.texts(), ["5 items", "5", "Count"]);
        assert_eq!(format_value(2.5), "2.5");
        assert!(!n.has(State::Enabled));
        n.states = Some(States::new(
            [State::Enabled, State::Checked],
            vec!["sensitive"],
        ));
        let s = n.states.clone().unwrap();
        assert!(s.is(ElementState::Enabled) && s.is(ElementState::Checked));
        assert!(!s.is(ElementState::Disabled) && !s.is(ElementState::Focused));
        assert!(!s.is(ElementState::Unchecked));
    }

    #[test]
    fn a_snapshot_shows_what_was_fetched() {
        let mut nodes = vec![
            node("frame", "Main", None, &[]),
            node("push button", "OK", Some(0), &[0]),
        ];
        nodes[0].child_idx = vec![1];
        nodes[1].bounds = Some((1, 2, 30, 40));
        nodes[1].states = Some(States::new([State::Enabled], vec!["enabled", "sensitive"]));
        nodes[1].view.id = Some("ok".into());
        let v = serde_json::to_value(ax_tree(&nodes, 0)).unwrap();
        assert_eq!(v["role"], "frame");
        let b = &v["children"][0];
        assert_eq!(b["role"], "push button");
        assert_eq!(b["id"], "ok");
        assert_eq!(b["states"], serde_json::json!(["enabled", "sensitive"]));
        assert_eq!(b["bounds"]["width"], 30);
        assert!(b.get("text").is_none() && b.get("children").is_none());
    }
}
