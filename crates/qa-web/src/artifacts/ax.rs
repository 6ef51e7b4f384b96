//! Accessibility snapshots: Chromium's full accessibility tree (of the page
//! or the step's frame), compacted to a bounded tree of roles, names,
//! values and states, optionally rooted at one element. An element's name
//! is the one `role` + `name` locators match ([`super::names`]), so that a
//! snapshot is something to write a locator from.

use super::publish;
use crate::actionability::actionable;
use crate::cdp::commands::{
    AccessibilityEnable, DescribeNode, Evaluate, GetChildAxNodes, GetFullAxTree, GetPartialAxTree,
    GetRootAxNode,
};
use crate::codes::WebCode;
use crate::page::{ActKind, Nothing, Page};
use qa_core::flow::Locator;
use qa_core::snapshot::{AxNode, AxSnapshot};
use qa_core::{Artifact, ArtifactGroup, Deadline, DriverError, Evidence, Step};
use serde_json::value::RawValue;
use serde_json::Value;
use std::collections::HashMap;

/// The most nodes a snapshot keeps (and an observation reads).
pub(crate) const MAX_AX_NODES: usize = 5000;
/// Past this many elements in the document, the tree is read node by node
/// up to [`MAX_AX_NODES`] instead of in one answer: Chromium's full tree of
/// a 160,000-element page is one message of hundreds of megabytes.
pub(crate) const WHOLE_TREE_ELEMENTS: u64 = 2000;
/// The deepest node kept.
const MAX_AX_DEPTH: usize = 200;
/// The most bytes of one name, value or text shown (in the snapshot file,
/// an observation, `inspect`). The cut is made after redaction, on the
/// redacted text ([`qa_core::Secrets::redact_then_clip`]): a secret
/// straddling it is never left in part.
pub(crate) const MAX_AX_STRING: usize = 200;

/// The most bytes of one text held before it is redacted and cut to
/// [`MAX_AX_STRING`]: far past that cut, so what the cut keeps was redacted
/// whole (and what ends at this bound is never shown).
pub(crate) const MAX_AX_READ: usize = 4096;

/// `s` bounded to [`MAX_AX_READ`] bytes, to be redacted and then cut to
/// [`MAX_AX_STRING`].
pub(crate) fn clip(s: &str) -> String {
    if s.len() <= MAX_AX_READ {
        return s.to_string();
    }
    let mut end = MAX_AX_READ;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// The states of an AX node worth showing: `disabled`, `checked`,
/// `expanded`, …, `checked=mixed`, `level=2`.
pub(crate) fn states_of(n: &Value) -> Vec<String> {
    n["properties"]
        .as_array()
        .map(|ps| {
            ps.iter()
                .filter_map(|p| {
                    let name = p["name"].as_str()?;
                    let v = &p["value"]["value"];
                    match (name, v) {
                        (
                            "disabled" | "checked" | "expanded" | "selected" | "pressed"
                            | "focused" | "required" | "invalid" | "busy" | "readonly" | "modal",
                            Value::Bool(true),
                        ) => Some(name.to_string()),
                        ("checked" | "pressed", Value::String(s))
                            if s == "true" || s == "mixed" =>
                        {
                            Some(format!("{name}={s}"))
                        }
                        ("level", Value::Number(l)) => Some(format!("level={l}")),
                        _ => None,
                    }
                })
                .collect()
        })
        .unwrap_or_default()
}

/// One AX node as the snapshot shows it: role, name, value and states
/// (its children are added by the caller).
fn compact_node(n: &Value) -> AxNode {
    let states = states_of(n);
    AxNode {
        role: n["role"]["value"].as_str().unwrap_or("").to_string(),
        name: n["name"]["value"]
            .as_str()
            .filter(|s| !s.is_empty())
            .map(clip),
        value: n["value"]["value"]
            .as_str()
            .filter(|s| !s.is_empty())
            .map(clip),
        states: (!states.is_empty()).then_some(states),
        ..Default::default()
    }
}

/// The DOM node of an AX node whose name is shown and is an element's
/// (not text): one Chromium names, or one acts on.
fn named_element(n: &Value) -> Option<i64> {
    let role = n["role"]["value"].as_str().unwrap_or("");
    let named = n["name"]["value"].as_str().is_some_and(|s| !s.is_empty());
    let text = matches!(role, "StaticText" | "InlineTextBox" | "LineBreak");
    let acts = super::names::ACTIONABLE.contains(&role);
    (!text && (named || acts))
        .then(|| n["backendDOMNodeId"].as_i64())
        .flatten()
}

/// Gives the nodes of `tree` the names locators match: `elements[i]` is
/// the DOM node of the `i`-th node in pre-order (document order), when its
/// name is an element's. A node the page cannot answer for, or that no
/// `role` locator finds, keeps Chromium's name.
async fn locator_names(
    page: &Page,
    tree: &mut AxSnapshot,
    elements: &[Option<i64>],
    deadline: Deadline,
) {
    let (at, backends): (Vec<usize>, Vec<i64>) = elements
        .iter()
        .enumerate()
        .filter_map(|(i, b)| Some((i, (*b)?)))
        .unzip();
    if backends.is_empty() {
        return;
    }
    let found = super::names::locator_names(page, &backends, deadline).await;
    let mut names: Vec<Option<Option<String>>> = vec![None; elements.len()];
    for (i, n) in at.into_iter().zip(found) {
        names[i] = n
            .and_then(super::names::LocatorName::by_role)
            .map(|n| Some(clip(&n)).filter(|n| !n.is_empty()));
    }
    fn give(nodes: &mut [AxNode], names: &mut std::slice::IterMut<'_, Option<Option<String>>>) {
        for n in nodes {
            if let Some(Some(name)) = names.next().map(Option::take) {
                n.name = name;
            }
            give(&mut n.children, names);
        }
    }
    if let Some(nodes) = tree.nodes.as_mut() {
        give(nodes, &mut names.iter_mut());
    }
}

/// Turns `Accessibility.getFullAXTree`'s flat node list into a bounded tree
/// of `{role, name, value?, states?, children?}` (ignored nodes skipped).
#[cfg(test)]
pub(crate) fn compact_ax(nodes: &[Value]) -> AxSnapshot {
    compact_ax_with_elements(nodes).0
}

/// [`compact_ax`], and the DOM node of each kept node in pre-order whose
/// name is an element's ([`named_element`]).
fn compact_ax_with_elements(nodes: &[Value]) -> (AxSnapshot, Vec<Option<i64>>) {
    let by_id: HashMap<&str, &Value> = nodes
        .iter()
        .filter_map(|n| n["nodeId"].as_str().map(|id| (id, n)))
        .collect();
    let mut budget = MAX_AX_NODES;
    let mut elements = Vec::new();
    fn build<'a>(
        n: &'a Value,
        by_id: &HashMap<&str, &'a Value>,
        budget: &mut usize,
        depth: usize,
        out: &mut Vec<AxNode>,
        elements: &mut Vec<Option<i64>>,
    ) {
        if *budget == 0 || depth > MAX_AX_DEPTH {
            return;
        }
        let kids = n["childIds"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c.as_str().and_then(|c| by_id.get(c).copied()));
        if n["ignored"].as_bool() == Some(true) {
            // An ignored node's children take its place.
            for k in kids {
                build(k, by_id, budget, depth + 1, out, elements);
            }
            return;
        }
        // Counted before its children: a truncated tree keeps the top of
        // the page, in document order.
        *budget -= 1;
        elements.push(named_element(n));
        let mut children = Vec::new();
        for k in kids {
            build(k, by_id, budget, depth + 1, &mut children, elements);
        }
        let mut o = compact_node(n);
        o.children = children;
        out.push(o);
    }
    let root = nodes.iter().find(|n| n["parentId"].is_null());
    let mut out = Vec::new();
    if let Some(r) = root {
        build(r, &by_id, &mut budget, 0, &mut out, &mut elements);
    }
    let tree = AxSnapshot {
        nodes: Some(out),
        truncated: budget == 0,
        ..Default::default()
    };
    (tree, elements)
}

/// An accessibility snapshot of the page (or frame), or of the subtree of
/// one element. Nodes are read raw: the typed bindings of other clients
/// lag Chromium's enum of ignored reasons.
pub(crate) async fn ax_snapshot(
    page: &Page,
    evidence: &Evidence,
    step: &Step,
    locator: Option<&Locator>,
    deadline: Deadline,
) -> Result<Option<Artifact>, DriverError> {
    let failed = |e: crate::cdp::CdpError| DriverError::new(WebCode::AxFailed, e.to_string());
    let root_backend = match locator {
        Some(l) => {
            actionable::<Nothing>(page, l, "snapshotAccessibility", ActKind::Focus, deadline)
                .await?;
            // The element itself (not the focus: a landmark or a list is
            // not focusable).
            let Some(object_id) = page.element_object(l).await? else {
                return Err(DriverError::new(
                    WebCode::AxFailed,
                    format!("{} no longer matches one element", l.describe()),
                ));
            };
            let d = page
                .send(&DescribeNode { object_id })
                .await
                .map_err(failed)?;
            d.node.backend_node_id
        }
        None => None,
    };
    let frame_id = page.frame.as_ref().map(|f| f.id.clone());
    let (mut tree, elements) = match root_backend {
        None if element_count(page).await <= WHOLE_TREE_ELEMENTS => {
            let tree = page
                .send(&GetFullAxTree { frame_id })
                .await
                .map_err(failed)?;
            compact_ax_with_elements(&tree.nodes)
        }
        _ => walk_ax(page, root_backend, frame_id)
            .await
            .map_err(failed)?,
    };
    locator_names(page, &mut tree, &elements, deadline).await;
    // A secret split across elements (`<span>ab</span><span>cd</span>`)
    // shows in no single name: redacted across them, as pictures mask it.
    // Names and values are cut to their shown length after that, on the
    // redacted text.
    let bytes = tree.to_redacted_json_clipped(evidence.secrets(), MAX_AX_STRING);
    publish(
        evidence,
        ArtifactGroup::AccessibilitySnapshots,
        &step.evidence_name(),
        "json",
        &bytes,
        Some(step.index + 1),
    )
}

/// Elements in the document (of the step's frame), shadow trees aside;
/// `u64::MAX` when the page does not say.
pub(crate) async fn element_count(page: &Page) -> u64 {
    page.evaluate(Evaluate::expression(
        "document.getElementsByTagName('*').length",
    ))
    .await
    .ok()
    .and_then(|r| r.result.value.and_then(|v| v.as_u64()))
    .unwrap_or(u64::MAX)
}

/// A kept node whose children are still being read.
struct Open {
    /// The node (`None`: the list of top-level nodes).
    node: Option<AxNode>,
    /// Its children kept so far.
    children: Vec<AxNode>,
    /// Nodes still to visit under it (as JSON text, read when visited), in
    /// document order, with their depth.
    queue: std::collections::VecDeque<(Box<RawValue>, usize)>,
}

/// The same tree as [`compact_ax`], read node by node: the root (of the
/// page or frame, or the element `root_backend`), then the children of each
/// node visited, in document order, until [`MAX_AX_NODES`] are kept. What
/// ui-qa holds at once is bounded by the nodes kept, not by the page.
async fn walk_ax(
    page: &Page,
    root_backend: Option<i64>,
    frame_id: Option<String>,
) -> Result<(AxSnapshot, Vec<Option<i64>>), crate::cdp::CdpError> {
    page.send(&AccessibilityEnable {}).await?;
    let root = match root_backend {
        Some(b) => page
            .send(&GetPartialAxTree {
                backend_node_id: b,
                fetch_relatives: false,
            })
            .await?
            .nodes
            .into_iter()
            .next(),
        None => Some(
            page.send(&GetRootAxNode {
                frame_id: frame_id.clone(),
            })
            .await?
            .node,
        ),
    };
    let mut budget = MAX_AX_NODES;
    let mut elements = Vec::new();
    // Nodes read but not visited yet, by id: Chromium answers a node's
    // children with the children of its ignored children too.
    let mut received: HashMap<String, Box<RawValue>> = HashMap::new();
    let mut stack = vec![Open {
        node: None,
        children: Vec::new(),
        queue: root
            .and_then(|r| serde_json::value::to_raw_value(&r).ok())
            .map(|r| (r, 0))
            .into_iter()
            .collect(),
    }];
    loop {
        let top = stack.last_mut().expect("the top-level list stays");
        let Some((text, depth)) = top.queue.pop_front() else {
            let done = stack.pop().expect("non-empty");
            match (done.node, stack.last_mut()) {
                (Some(mut o), Some(parent)) => {
                    o.children = done.children;
                    parent.children.push(o);
                }
                _ => {
                    let tree = AxSnapshot {
                        nodes: Some(done.children),
                        truncated: budget == 0,
                        ..Default::default()
                    };
                    return Ok((tree, elements));
                }
            }
            continue;
        };
        if budget == 0 || depth > MAX_AX_DEPTH {
            continue;
        }
        let Ok(raw) = serde_json::from_str::<Value>(text.get()) else {
            continue;
        };
        let kids = children_of(page, &raw, &frame_id, &mut received).await?;
        if raw["ignored"].as_bool() == Some(true) {
            // An ignored node's children take its place.
            for k in kids.into_iter().rev() {
                top.queue.push_front((k, depth + 1));
            }
            continue;
        }
        budget -= 1;
        elements.push(named_element(&raw));
        let node = compact_node(&raw);
        stack.push(Open {
            node: Some(node),
            children: Vec::new(),
            queue: kids.into_iter().map(|k| (k, depth + 1)).collect(),
        });
    }
}

/// The accessibility nodes of the main frame in document order, read node
/// by node: the root, then each node's children before its next sibling,
/// until `max` are held. `true` when nodes were left out. What ui-qa holds
/// is bounded by `max` (and the answers of the nodes read), not by the page.
pub(crate) async fn nodes_in_order(
    page: &Page,
    max: usize,
) -> Result<(Vec<Value>, bool), crate::cdp::CdpError> {
    page.send(&AccessibilityEnable {}).await?;
    let root = page.send(&GetRootAxNode { frame_id: None }).await?.node;
    let mut received: HashMap<String, Box<RawValue>> = HashMap::new();
    let mut out = Vec::new();
    let mut todo: Vec<Box<RawValue>> = serde_json::value::to_raw_value(&root)
        .ok()
        .into_iter()
        .collect();
    while let Some(text) = todo.pop() {
        if out.len() >= max {
            return Ok((out, true));
        }
        let Ok(raw) = serde_json::from_str::<Value>(text.get()) else {
            continue;
        };
        let kids = children_of(page, &raw, &None, &mut received).await?;
        todo.extend(kids.into_iter().rev());
        out.push(raw);
    }
    Ok((out, false))
}

/// The children of `node`, in document order (its `childIds`): from what
/// was already read, else read now (and kept, as JSON text, for the ignored
/// children's own children, which come with them).
async fn children_of(
    page: &Page,
    node: &Value,
    frame_id: &Option<String>,
    received: &mut HashMap<String, Box<RawValue>>,
) -> Result<Vec<Box<RawValue>>, crate::cdp::CdpError> {
    let ids: Vec<&str> = node["childIds"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    if !ids.iter().all(|id| received.contains_key(*id)) {
        if let Some(id) = node["nodeId"].as_str() {
            let answer = page
                .send(&GetChildAxNodes {
                    id: id.to_string(),
                    frame_id: frame_id.clone(),
                })
                .await?;
            for n in answer.nodes {
                if let Ok(NodeId { node_id }) = serde_json::from_str::<NodeId>(n.get()) {
                    received.insert(node_id, n);
                }
            }
        }
    }
    Ok(ids.iter().filter_map(|id| received.remove(*id)).collect())
}

/// Just the id of an AX node read as JSON text.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct NodeId {
    node_id: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn compact_skips_ignored_and_bounds_strings() {
        // A secret straddles byte 200 (where the file cuts names); the
        // whole name is longer than what is held.
        let secret = "Zq8-hunter2-TOPSECRET-9876-abcdef";
        let long = format!("{}{secret}{}", "x".repeat(190), "y".repeat(5000));
        let nodes = vec![
            json!({ "nodeId": "1", "role": { "value": "RootWebArea" }, "name": { "value": "T" }, "childIds": ["2"] }),
            json!({ "nodeId": "2", "parentId": "1", "ignored": true, "role": { "value": "generic" }, "childIds": ["3"] }),
            json!({ "nodeId": "3", "parentId": "2", "role": { "value": "button" }, "name": { "value": long },
                    "properties": [ { "name": "disabled", "value": { "type": "boolean", "value": true } } ] }),
        ];
        let t = serde_json::to_value(compact_ax(&nodes)).unwrap();
        let b = &t["nodes"][0]["children"][0];
        assert_eq!(b["role"], "button");
        assert_eq!(b["states"][0], "disabled");
        assert!(b["name"].as_str().unwrap().len() <= MAX_AX_READ + 3);
        // The file: redacted whole, then cut; no start of the secret left.
        let secrets = qa_core::Secrets::new();
        secrets.add(secret);
        let file = compact_ax(&nodes).to_redacted_json_clipped(&secrets, MAX_AX_STRING);
        let v: Value = serde_json::from_slice(&file).unwrap();
        let name = v["nodes"][0]["children"][0]["name"].as_str().unwrap();
        assert_eq!(name, format!("{}[REDACTED]…", "x".repeat(190)));
        let text = String::from_utf8(file).unwrap();
        assert!(!text.contains("Zq8-hu"), "{text}");
    }

    /// Every node in a compacted tree.
    fn count(nodes: &Value) -> usize {
        nodes
            .as_array()
            .map(|a| a.iter().map(|n| 1 + count(&n["children"])).sum())
            .unwrap_or(0)
    }

    #[test]
    fn a_tree_past_the_budget_keeps_its_top_and_says_it_is_truncated() {
        // root → heading, then 3000 list items of two children each (past
        // the budget while children are still being built).
        let mut nodes = vec![json!({ "nodeId": "r", "role": { "value": "RootWebArea" },
            "childIds": (0..3001).map(|i| format!("i{i}")).collect::<Vec<_>>() })];
        nodes.push(
            json!({ "nodeId": "i0", "role": { "value": "heading" }, "name": { "value": "Top" } }),
        );
        for i in 1..3001 {
            nodes.push(
                json!({ "nodeId": format!("i{i}"), "role": { "value": "listitem" },
                "childIds": [format!("a{i}"), format!("b{i}")] }),
            );
            nodes.push(json!({ "nodeId": format!("a{i}"), "role": { "value": "link" } }));
            nodes.push(json!({ "nodeId": format!("b{i}"), "role": { "value": "button" } }));
        }
        let t = serde_json::to_value(compact_ax(&nodes)).unwrap();
        assert_eq!(t["truncated"], true);
        assert_eq!(count(&t["nodes"]), MAX_AX_NODES);
        let top = &t["nodes"][0];
        assert_eq!(top["role"], "RootWebArea");
        assert_eq!(top["children"][0]["name"], "Top");
        // An untruncated tree says so.
        let small = serde_json::to_value(compact_ax(&nodes[..2])).unwrap();
        assert_eq!(small["truncated"], false);
    }
}
