//! The page's elements for `ui-qa inspect` (and interactive sessions): the
//! accessibility tree of the main frame reduced to what one acts on
//! (buttons, links, fields, …, each with a reference) and what orients
//! (headings, landmarks, alerts, dialogs), in document order, each with its
//! states, its box and the flow locator that finds it.

use super::ax::{clip, states_of};
use crate::cdp::commands::{DescribeBackendNode, GetBoxModel, GetFullAxTree};
use crate::codes::WebCode;
use crate::page::{Counted, DomOp, Page};
use qa_core::observe::{suggest_locator, Bounds, ObservedElement, MAX_ELEMENTS};
use qa_core::{Deadline, DriverError};
use serde_json::Value;
use std::collections::HashMap;

/// Roles one acts on: they get a reference.
const ACTIONABLE: &[&str] = &[
    "button",
    "link",
    "textbox",
    "searchbox",
    "checkbox",
    "radio",
    "combobox",
    "listbox",
    "option",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "tab",
    "switch",
    "slider",
    "spinbutton",
    "treeitem",
];

/// Roles shown for orientation, without a reference.
const CONTEXT: &[&str] = &[
    "heading",
    "dialog",
    "alertdialog",
    "alert",
    "navigation",
    "main",
    "form",
    "banner",
    "contentinfo",
    "region",
    "img",
];

struct Raw {
    backend: Option<i64>,
    depth: usize,
    role: String,
    name: String,
    value: Option<String>,
    states: Vec<String>,
    actionable: bool,
}

/// Lists the elements of the page (main frame).
pub(crate) async fn elements(
    page: &Page,
    deadline: Deadline,
) -> Result<(Vec<ObservedElement>, bool), DriverError> {
    let failed = |e: crate::cdp::CdpError| DriverError::new(WebCode::AxFailed, e.to_string());
    let tree = page
        .send(&GetFullAxTree { frame_id: None })
        .await
        .map_err(failed)?;
    let by_id: HashMap<&str, &Value> = tree
        .nodes
        .iter()
        .filter_map(|n| n["nodeId"].as_str().map(|id| (id, n)))
        .collect();
    let Some(root) = tree.nodes.iter().find(|n| n["parentId"].is_null()) else {
        return Ok((Vec::new(), false));
    };
    let mut raw = Vec::new();
    let mut truncated = false;
    walk(root, &by_id, 0, 0, &mut raw, &mut truncated);
    let test_ids = {
        let mut v = Vec::with_capacity(raw.len());
        for r in &raw {
            v.push(match (r.backend, deadline.expired()) {
                (Some(b), false) => test_id(page, b).await,
                _ => None,
            });
        }
        v
    };
    let roles: Vec<(String, String)> = raw
        .iter()
        .map(|r| (r.role.clone(), r.name.clone()))
        .collect();
    let mut out = Vec::with_capacity(raw.len());
    let mut next_ref = 1;
    for (i, r) in raw.iter().enumerate() {
        let bounds = match (r.backend, deadline.expired()) {
            (Some(b), false) => bounds(page, b).await,
            _ => None,
        };
        let reference = r.actionable.then(|| {
            let s = format!("@e{next_ref}");
            next_ref += 1;
            s
        });
        let suggested = suggest_locator(&test_ids, &roles, i);
        // Only a locator the driver resolves to exactly this one element.
        let locator = match page
            .read::<Counted>(&DomOp::CountVisible(&suggested), deadline)
            .await
        {
            Ok(c) if c.count == 1 => Some(suggested),
            _ => None,
        };
        out.push(ObservedElement {
            reference,
            depth: r.depth,
            role: r.role.clone(),
            name: r.name.clone(),
            value: r.value.clone(),
            states: r.states.clone(),
            bounds,
            locator,
        });
    }
    Ok((out, truncated))
}

fn walk<'a>(
    n: &'a Value,
    by_id: &HashMap<&str, &'a Value>,
    tree_depth: usize,
    depth: usize,
    out: &mut Vec<Raw>,
    truncated: &mut bool,
) {
    if tree_depth > 200 {
        return;
    }
    // Chromium's internal role names where they differ from ARIA's (flow
    // locators use ARIA roles).
    let role = match n["role"]["value"].as_str().unwrap_or("") {
        "image" => "img",
        r => r,
    };
    let ignored = n["ignored"].as_bool() == Some(true);
    let actionable = !ignored && ACTIONABLE.contains(&role);
    let shown = actionable || (!ignored && CONTEXT.contains(&role));
    let mut child_depth = depth;
    if shown {
        if out.len() >= MAX_ELEMENTS {
            *truncated = true;
            return;
        }
        out.push(Raw {
            backend: n["backendDOMNodeId"].as_i64(),
            depth,
            role: role.to_string(),
            name: clip(n["name"]["value"].as_str().unwrap_or("").trim()),
            value: n["value"]["value"]
                .as_str()
                .filter(|s| !s.is_empty())
                .map(clip),
            states: states_of(n),
            actionable,
        });
        child_depth += 1;
    }
    if let Some(kids) = n["childIds"].as_array() {
        for k in kids {
            if let Some(c) = k.as_str().and_then(|c| by_id.get(c)) {
                walk(c, by_id, tree_depth + 1, child_depth, out, truncated);
            }
        }
    }
}

async fn test_id(page: &Page, backend: i64) -> Option<String> {
    let d = page
        .send(&DescribeBackendNode {
            backend_node_id: backend,
        })
        .await
        .ok()?;
    d.node
        .attributes
        .chunks(2)
        .find(|kv| kv.first().map(String::as_str) == Some("data-testid"))
        .and_then(|kv| kv.get(1).cloned())
        .filter(|v| !v.is_empty())
}

async fn bounds(page: &Page, backend: i64) -> Option<Bounds> {
    let b = page
        .send(&GetBoxModel {
            backend_node_id: backend,
        })
        .await
        .ok()?;
    let q = &b.model.border;
    if q.len() < 8 {
        return None;
    }
    let xs = [q[0], q[2], q[4], q[6]];
    let ys = [q[1], q[3], q[5], q[7]];
    let x = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let y = ys.iter().copied().fold(f64::INFINITY, f64::min);
    let w = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max) - x;
    let h = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max) - y;
    Some(Bounds {
        x: x.round(),
        y: y.round(),
        width: w.round(),
        height: h.round(),
    })
}
