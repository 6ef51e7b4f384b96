//! Accessibility snapshots: Chromium's full accessibility tree (of the page
//! or the step's frame), compacted to a bounded tree of roles, names,
//! values and states, optionally rooted at one element.

use super::publish;
use crate::actionability::actionable;
use crate::cdp::commands::{DescribeNode, Evaluate, GetFullAxTree};
use crate::codes::WebCode;
use crate::page::{ActKind, Nothing, Page};
use qa_core::flow::Locator;
use qa_core::{Artifact, ArtifactGroup, Deadline, DriverError, Evidence, Step};
use serde_json::{json, Value};
use std::collections::HashMap;

const MAX_AX_NODES: usize = 5000;
const MAX_AX_STRING: usize = 200;

pub(crate) fn clip(s: &str) -> String {
    if s.len() <= MAX_AX_STRING {
        return s.to_string();
    }
    let mut end = MAX_AX_STRING;
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

/// Turns `Accessibility.getFullAXTree`'s flat node list into a bounded tree
/// of `{role, name, value?, states?, children?}` (ignored nodes skipped).
pub(crate) fn compact_ax(nodes: &[Value], root_backend: Option<i64>) -> Value {
    let by_id: HashMap<&str, &Value> = nodes
        .iter()
        .filter_map(|n| n["nodeId"].as_str().map(|id| (id, n)))
        .collect();
    let mut budget = MAX_AX_NODES;
    fn build<'a>(
        n: &'a Value,
        by_id: &HashMap<&str, &'a Value>,
        budget: &mut usize,
        depth: usize,
        out: &mut Vec<Value>,
    ) {
        if *budget == 0 || depth > 200 {
            return;
        }
        let kids: Vec<&Value> = n["childIds"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|c| c.as_str().and_then(|c| by_id.get(c).copied()))
                    .collect()
            })
            .unwrap_or_default();
        let mut children = Vec::new();
        for k in kids {
            build(k, by_id, budget, depth + 1, &mut children);
        }
        if n["ignored"].as_bool() == Some(true) {
            out.extend(children);
            return;
        }
        *budget -= 1;
        let mut o = serde_json::Map::new();
        o.insert(
            "role".into(),
            json!(n["role"]["value"].as_str().unwrap_or("")),
        );
        if let Some(name) = n["name"]["value"].as_str().filter(|s| !s.is_empty()) {
            o.insert("name".into(), json!(clip(name)));
        }
        if let Some(v) = n["value"]["value"].as_str().filter(|s| !s.is_empty()) {
            o.insert("value".into(), json!(clip(v)));
        }
        let states = states_of(n);
        if !states.is_empty() {
            o.insert("states".into(), json!(states));
        }
        if !children.is_empty() {
            o.insert("children".into(), Value::Array(children));
        }
        out.push(Value::Object(o));
    }
    let root = match root_backend {
        Some(b) => nodes
            .iter()
            .find(|n| n["backendDOMNodeId"].as_i64() == Some(b)),
        None => nodes.iter().find(|n| n["parentId"].is_null()),
    };
    let mut out = Vec::new();
    if let Some(r) = root {
        build(r, &by_id, &mut budget, 0, &mut out);
    }
    json!({ "nodes": out, "truncated": budget == 0 })
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
            // The helper focused the element; find it back by focus.
            let r = page
                .evaluate(Evaluate {
                    return_by_value: Some(false),
                    ..Evaluate::expression("document.activeElement")
                })
                .await
                .map_err(failed)?;
            let Some(object_id) = r.result.object_id else {
                return Err(DriverError::new(
                    WebCode::AxFailed,
                    "the focused element could not be found again",
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
    let tree = page
        .send(&GetFullAxTree {
            frame_id: page.frame.as_ref().map(|f| f.id.clone()),
        })
        .await
        .map_err(failed)?;
    let mut tree = compact_ax(&tree.nodes, root_backend);
    // A secret split across elements (`<span>ab</span><span>cd</span>`)
    // shows in no single name: redacted across them, as pictures mask it.
    evidence
        .secrets()
        .redact_json_across(&mut tree, &["name", "value"]);
    let bytes = serde_json::to_vec_pretty(&tree).unwrap_or_default();
    publish(
        evidence,
        ArtifactGroup::AccessibilitySnapshots,
        &step.evidence_name(),
        "json",
        &bytes,
        Some(step.index + 1),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_skips_ignored_and_bounds_strings() {
        let long = "x".repeat(500);
        let nodes = vec![
            json!({ "nodeId": "1", "role": { "value": "RootWebArea" }, "name": { "value": "T" }, "childIds": ["2"] }),
            json!({ "nodeId": "2", "parentId": "1", "ignored": true, "role": { "value": "generic" }, "childIds": ["3"] }),
            json!({ "nodeId": "3", "parentId": "2", "role": { "value": "button" }, "name": { "value": long },
                    "properties": [ { "name": "disabled", "value": { "type": "boolean", "value": true } } ] }),
        ];
        let t = compact_ax(&nodes, None);
        let b = &t["nodes"][0]["children"][0];
        assert_eq!(b["role"], "button");
        assert_eq!(b["states"][0], "disabled");
        assert!(b["name"].as_str().unwrap().len() < 210);
    }
}
