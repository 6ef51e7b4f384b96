//! Reading the application's tree: one batched read per element
//! (`AXUIElementCopyMultipleAttributeValues` with only the attributes the
//! step needs, [`crate::ax::attributes`]), breadth-first from the root,
//! capped; an element that vanished while it was read is left out.
//! Blocking calls: run off the async executor.

use super::ffi::{Attr, AxElement};
use crate::ax;
use crate::element::Raw;
use qa_desktop::locate::NodeView;
use qa_desktop::Fields;
use std::collections::VecDeque;

/// A fetched node.
pub(crate) type Node = qa_desktop::Node<AxElement>;

/// One element's node and its children (`None`: it is gone or did not
/// answer).
fn read(el: &AxElement, fields: Fields) -> Option<(Node, Vec<AxElement>)> {
    let names = ax::attributes(fields);
    let values = el.read(&names).ok()?;
    let mut children = Vec::new();
    let mut pairs = Vec::with_capacity(names.len());
    for (name, v) in names.iter().zip(values) {
        match v {
            Some(Attr::Elements(es)) if *name == ax::CHILDREN => children = es,
            Some(Attr::Value(v)) => pairs.push((*name, Some(v))),
            _ => pairs.push((*name, None)),
        }
    }
    let raw = Raw::from_pairs(pairs);
    let (text, value) = if fields.content || fields.detail || fields.states {
        raw.content()
    } else {
        (None, None)
    };
    let node = Node {
        element: el.clone(),
        view: NodeView {
            role: raw.role(),
            name: raw.name(),
            id: if fields.id {
                raw.identifier.clone()
            } else {
                None
            },
            parent: None,
            order: Vec::new(),
        },
        states: fields.states.then(|| raw.states()),
        bounds: if fields.detail { raw.bounds() } else { None },
        text,
        value,
        child_idx: Vec::new(),
    };
    Some((node, children))
}

/// The tree under `root`, up to `cap` nodes, breadth-first; whether the
/// cap cut it short.
pub(crate) fn walk(root: &AxElement, fields: Fields, cap: usize) -> (Vec<Node>, bool) {
    let mut out: Vec<Node> = Vec::new();
    let mut queue: VecDeque<(AxElement, Option<usize>, Vec<u32>)> = VecDeque::new();
    queue.push_back((root.clone(), None, Vec::new()));
    let mut truncated = false;
    while let Some((el, parent, order)) = queue.pop_front() {
        if out.len() >= cap {
            truncated = true;
            break;
        }
        let Some((mut n, children)) = read(&el, fields) else {
            continue;
        };
        n.view.parent = parent;
        n.view.order = order.clone();
        let idx = out.len();
        if let Some(p) = parent {
            out[p].child_idx.push(idx);
        }
        out.push(n);
        for (i, c) in children.into_iter().enumerate() {
            let mut o = order.clone();
            o.push(i as u32);
            queue.push_back((c, Some(idx), o));
        }
    }
    (out, truncated)
}

/// One element with `fields` (`None`: it is gone).
pub(crate) fn fetch(el: &AxElement, fields: Fields) -> Option<Node> {
    read(el, fields).map(|(n, _)| n)
}
