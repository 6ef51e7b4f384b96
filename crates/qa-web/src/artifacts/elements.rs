//! The page's elements for `ui-qa inspect` (and interactive sessions): the
//! accessibility tree of the main frame reduced to what one acts on
//! (buttons, links, fields, …, each with a reference), what orients
//! (headings, landmarks, lists and their items, tables, alerts, dialogs)
//! and the text the page shows, as a tree in document order, each element
//! with its states, its box and the flow locator that finds it. Each
//! element's name is the one `role` + `name` locators match (the page
//! helper's, not Chromium's: the two differ, e.g. at a `<wbr>`), so a name
//! as listed is one a flow can write. A control without a name carries the
//! text of the item or row around it. A very big page's tree is read node
//! by node up to a bound, so its top is listed and the listing says it is
//! cut.
use super::ax::{self, clip, states_of, MAX_AX_STRING};
use super::names::{self, ACTIONABLE};
use crate::cdp::commands::{DescribeBackendNode, GetBoxModel, GetFullAxTree};
use crate::codes::WebCode;
use crate::page::{DomOp, Page, Resolved};
use qa_core::observe::{suggest_locator, Bounds, ObservedElement, MAX_ELEMENTS};
use qa_core::{Deadline, DriverError, Secrets};
use serde_json::Value;
use std::collections::HashMap;

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
    "list",
    "listitem",
    "table",
    "row",
    "cell",
    "columnheader",
    "rowheader",
    "status",
    "article",
    "complementary",
    "search",
    "paragraph",
];

/// Roles whose text names the unnamed controls inside them.
const ROWS: &[&str] = &["listitem", "row", "article", "form", "dialog"];

/// The role of text the page shows.
const TEXT: &str = "text";

struct Raw {
    backend: Option<i64>,
    depth: usize,
    role: String,
    name: String,
    value: Option<String>,
    states: Vec<String>,
    actionable: bool,
    /// Text that continues the text right before it (same parent run).
    joins: bool,
}

/// Lists the elements of the page (main frame). Names, values and the
/// text around unnamed controls are redacted whole — joined runs of text
/// included, and a secret split across elements — and only then cut to
/// [`MAX_AX_STRING`] bytes, so a cut never leaves part of a secret.
pub(crate) async fn elements(
    page: &Page,
    secrets: &Secrets,
    deadline: Deadline,
) -> Result<(Vec<ObservedElement>, bool), DriverError> {
    let failed = |e: crate::cdp::CdpError| DriverError::new(WebCode::AxFailed, e.to_string());
    // A big page's tree is read node by node, up to a bound, rather than
    // as one answer of hundreds of megabytes.
    let (nodes, partial) = if ax::element_count(page).await <= ax::WHOLE_TREE_ELEMENTS {
        let tree = page
            .send(&GetFullAxTree { frame_id: None })
            .await
            .map_err(failed)?;
        (tree.nodes, false)
    } else {
        ax::nodes_in_order(page, ax::MAX_AX_NODES)
            .await
            .map_err(failed)?
    };
    let by_id: HashMap<&str, &Value> = nodes
        .iter()
        .filter_map(|n| n["nodeId"].as_str().map(|id| (id, n)))
        .collect();
    let Some(root) = nodes.iter().find(|n| n["parentId"].is_null()) else {
        return Ok((Vec::new(), false));
    };
    let mut raw = Vec::new();
    let mut truncated = partial;
    walk(root, &by_id, 0, 0, "", &mut raw, &mut truncated);
    let mut raw = merge_texts(raw);
    locator_names(page, &mut raw, deadline).await;
    let contexts = row_texts(&raw);
    let test_ids = {
        let mut v = Vec::with_capacity(raw.len());
        for r in &raw {
            let located = r.actionable || !r.name.is_empty();
            v.push(match (r.backend, deadline.expired(), located) {
                (Some(b), false, true) => test_id(page, b).await,
                _ => None,
            });
        }
        v
    };
    // Locators are suggested from the names as read (cut as shown, not
    // redacted: they must find the element); the runner redacts them.
    let roles: Vec<(String, String)> = raw
        .iter()
        .map(|r| (r.role.clone(), shown(&r.name)))
        .collect();
    let (raw, contexts) = redacted(raw, contexts, secrets);
    let mut out = Vec::with_capacity(raw.len());
    let mut next_ref = 1;
    for (i, r) in raw.iter().enumerate() {
        if r.role == TEXT {
            out.push(ObservedElement {
                reference: None,
                depth: r.depth,
                role: r.role.clone(),
                name: r.name.clone(),
                value: None,
                states: Vec::new(),
                bounds: None,
                context: None,
                locator: None,
            });
            continue;
        }
        // Boxes and locators for what one acts on and for named landmarks
        // and headings; an unnamed list, item or paragraph only orients
        // (its text is in the tree), which keeps an observation small.
        let located = r.actionable || !r.name.is_empty();
        let bounds = match (r.backend, deadline.expired(), r.actionable) {
            (Some(b), false, true) => bounds(page, b).await,
            _ => None,
        };
        let reference = r.actionable.then(|| {
            let s = format!("@e{next_ref}");
            next_ref += 1;
            s
        });
        let suggested = suggest_locator(&test_ids, &roles, i);
        // Only a locator the driver resolves to exactly this one element:
        // one match, of this role, where this element is.
        let locator = if located {
            match page
                .read::<Option<Resolved>>(&DomOp::Resolved(&suggested), deadline)
                .await
            {
                Ok(Some(found))
                    if found.role.as_deref() == Some(&r.role) && same_box(&found, bounds) =>
                {
                    Some(suggested)
                }
                _ => None,
            }
        } else {
            None
        };
        out.push(ObservedElement {
            reference,
            depth: r.depth,
            role: r.role.clone(),
            name: r.name.clone(),
            value: r.value.clone(),
            states: r.states.clone(),
            bounds,
            context: contexts[i].clone(),
            locator,
        });
    }
    Ok((out, truncated))
}

/// Replaces the name (Chromium's) of each element one acts on or Chromium
/// names with the one `role` + `name` locators match
/// ([`super::names`]). An element the page no longer has, or that no
/// `role` locator finds, keeps Chromium's name (its locator is checked
/// anyway).
async fn locator_names(page: &Page, raw: &mut [Raw], deadline: Deadline) {
    // What is listed with a name: what one acts on, and what Chromium
    // names (an unnamed list, item or paragraph only orients).
    let (at, backends): (Vec<usize>, Vec<i64>) = raw
        .iter()
        .enumerate()
        .filter(|(_, r)| r.role != TEXT && (r.actionable || !r.name.is_empty()))
        .filter_map(|(i, r)| Some((i, r.backend?)))
        .unzip();
    let names = names::locator_names(page, &backends, deadline).await;
    for (i, n) in at.into_iter().zip(names) {
        if let Some(name) = n.and_then(names::LocatorName::by_role) {
            raw[i].name = clip(&name);
        }
    }
}

/// A name cut to [`MAX_AX_STRING`] bytes, not redacted (for locators).
fn shown(s: &str) -> String {
    Secrets::new().redact_then_clip(s, MAX_AX_STRING)
}

/// Names, values and contexts redacted — across consecutive texts too
/// ([`Secrets::redact_across`]) — and then cut to [`MAX_AX_STRING`] bytes.
fn redacted(
    mut raw: Vec<Raw>,
    contexts: Vec<Option<String>>,
    secrets: &Secrets,
) -> (Vec<Raw>, Vec<Option<String>>) {
    {
        let mut texts: Vec<&mut String> = Vec::with_capacity(raw.len());
        for r in raw.iter_mut() {
            texts.push(&mut r.name);
            if let Some(v) = r.value.as_mut() {
                texts.push(v);
            }
        }
        secrets.redact_across(&mut texts);
    }
    for r in raw.iter_mut() {
        r.name = secrets.redact_then_clip(&r.name, MAX_AX_STRING);
        r.value = r
            .value
            .as_deref()
            .map(|v| secrets.redact_then_clip(v, MAX_AX_STRING));
    }
    let contexts = contexts
        .into_iter()
        .map(|c| c.map(|c| secrets.redact_then_clip(&c, MAX_AX_STRING)))
        .collect();
    (raw, contexts)
}

/// Adjacent pieces of text of one parent (`2` and ` items left`) as one.
fn merge_texts(raw: Vec<Raw>) -> Vec<Raw> {
    let mut out: Vec<Raw> = Vec::with_capacity(raw.len());
    for r in raw {
        if let Some(last) = out.last_mut() {
            if r.role == TEXT && last.role == TEXT && last.depth == r.depth && r.joins {
                last.name = clip(&format!("{} {}", last.name, r.name));
                continue;
            }
        }
        out.push(r);
    }
    out
}

/// For each unnamed control: the text shown in the nearest list item, row,
/// article, form or dialog around it.
fn row_texts(raw: &[Raw]) -> Vec<Option<String>> {
    raw.iter()
        .enumerate()
        .map(|(i, r)| {
            if !r.actionable || !r.name.is_empty() {
                return None;
            }
            // The nearest enclosing row: walk back to shallower elements.
            let mut depth = r.depth;
            let mut j = i;
            while j > 0 && depth > 0 {
                j -= 1;
                if raw[j].depth < depth {
                    depth = raw[j].depth;
                    if ROWS.contains(&raw[j].role.as_str()) {
                        let text: Vec<&str> = raw[j + 1..]
                            .iter()
                            .take_while(|x| x.depth > raw[j].depth)
                            .filter(|x| x.role == TEXT)
                            .map(|x| x.name.as_str())
                            .collect();
                        let text = text.join(" ");
                        return (!text.is_empty()).then(|| clip(&text));
                    }
                }
            }
            None
        })
        .collect()
}

fn walk<'a>(
    n: &'a Value,
    by_id: &HashMap<&str, &'a Value>,
    tree_depth: usize,
    depth: usize,
    named: &str,
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
    let name = n["name"]["value"].as_str().unwrap_or("").trim();
    // Text the page shows, unless it only repeats the name of the element
    // it is in (a button's label).
    if !ignored && role == "StaticText" {
        let text = name.split_whitespace().collect::<Vec<_>>().join(" ");
        if !text.is_empty() && !named.contains(&text) {
            if out.len() >= MAX_ELEMENTS {
                *truncated = true;
                return;
            }
            // Pieces of one run of text join; a new one starts after an
            // element (the previous sibling was not text).
            out.push(Raw {
                backend: None,
                depth,
                role: TEXT.to_string(),
                name: clip(&text),
                value: None,
                states: Vec::new(),
                actionable: false,
                joins: true,
            });
        }
        return;
    }
    let actionable = !ignored && ACTIONABLE.contains(&role);
    let shown = actionable || (!ignored && CONTEXT.contains(&role));
    let mut child_depth = depth;
    let mut child_named = named;
    if shown {
        if out.len() >= MAX_ELEMENTS {
            *truncated = true;
            return;
        }
        out.push(Raw {
            backend: n["backendDOMNodeId"].as_i64(),
            depth,
            role: role.to_string(),
            name: clip(name),
            value: n["value"]["value"]
                .as_str()
                .filter(|s| !s.is_empty())
                .map(clip),
            // A list item's level says nothing an agent needs.
            states: states_of(n)
                .into_iter()
                .filter(|s| role != "listitem" || !s.starts_with("level="))
                .collect(),
            actionable,
            joins: false,
        });
        child_depth += 1;
        child_named = name;
    }
    if let Some(kids) = n["childIds"].as_array() {
        let mut after_element = false;
        for k in kids {
            if let Some(c) = k.as_str().and_then(|c| by_id.get(c)) {
                let before = out.len();
                walk(
                    c,
                    by_id,
                    tree_depth + 1,
                    child_depth,
                    child_named,
                    out,
                    truncated,
                );
                // Text right after an element starts a new run.
                if after_element {
                    if let Some(first) = out.get_mut(before) {
                        if first.role == TEXT {
                            first.joins = false;
                        }
                    }
                }
                after_element = out[before..].iter().any(|r| r.role != TEXT);
            }
        }
    }
}

/// Whether what a locator resolved to sits where the element is (its box,
/// to the pixel); an element without a box is not compared.
fn same_box(found: &Resolved, b: Option<Bounds>) -> bool {
    b.is_none_or(|b| {
        (found.x.round() - b.x).abs() <= 1.0
            && (found.y.round() - b.y).abs() <= 1.0
            && (found.w.round() - b.width).abs() <= 1.0
            && (found.h.round() - b.height).abs() <= 1.0
    })
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
