//! Evidence: PNG screenshots, bounded accessibility snapshots, console and
//! network logs.
//!
//! Secrets in pixels: when the run has secrets, no screenshot is taken
//! until everything on the page that shows one is covered (see [`capture`]):
//! a DOM snapshot of the page (every document of its process, open and
//! closed shadow trees, current input values) is matched against the
//! secrets here, in the runner — the page never receives a secret — and the
//! in-page helper covers each place with an opaque box in the top layer
//! (`maskShow`), the picture is taken, and the boxes are removed
//! (`maskHide`, also on error). A secret on the page that cannot be covered
//! (no box: hidden markup next to a canvas that draws it; a cross-origin
//! frame) withholds the picture, as does any failure of the masking step.

use crate::actionability::actionable;
use crate::cdp::CdpError;
use crate::events::Shared;
use crate::page::Page;
use base64::Engine;
use qa_core::flow::Locator;
use qa_core::{Artifact, ArtifactGroup, Deadline, DriverError, Evidence, Secrets, Step};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::time::Duration;

const MAX_AX_NODES: usize = 5000;
const MAX_AX_STRING: usize = 200;
const MAX_SHOT_HEIGHT: f64 = 16384.0;

fn ev_err(e: qa_core::evidence::EvidenceError) -> DriverError {
    DriverError::new("web.evidence.write", e.to_string())
}

fn publish(
    evidence: &Evidence,
    group: ArtifactGroup,
    base: &str,
    ext: &str,
    bytes: &[u8],
    step: Option<usize>,
) -> Result<Option<Artifact>, DriverError> {
    let name = evidence.unique_name(group, base, ext);
    evidence.write(group, &name, bytes, step).map_err(ev_err)
}

/// A PNG of the viewport, the full page or one element. With secrets in
/// the run, secrets on the page are masked first; a picture that cannot be
/// masked is withheld (no artifact, an observation says why).
pub async fn screenshot(
    page: &Page,
    evidence: &Evidence,
    step: &Step,
    locator: Option<&Locator>,
    full_page: bool,
    deadline: Deadline,
) -> Result<Vec<Artifact>, DriverError> {
    let mut params = json!({ "format": "png", "fromSurface": true });
    if let Some(l) = locator {
        let r = actionable(page, l, "screenshot", json!({ "kind": "rect" }), deadline).await?;
        let v = &r.value;
        params["clip"] = json!({ "x": v["x"], "y": v["y"], "width": v["w"], "height": v["h"].as_f64().unwrap_or(1.0).min(MAX_SHOT_HEIGHT), "scale": 1 });
        params["captureBeyondViewport"] = json!(true);
    } else if full_page {
        let m = page
            .call("Page.getLayoutMetrics", json!({}))
            .await
            .map_err(|e| DriverError::new("web.screenshot.failed", e.to_string()))?;
        let size = &m["cssContentSize"];
        params["clip"] = json!({ "x": 0, "y": 0, "width": size["width"], "height": size["height"].as_f64().unwrap_or(1.0).min(MAX_SHOT_HEIGHT), "scale": 1 });
        params["captureBeyondViewport"] = json!(true);
    }
    let base = step.evidence_name();
    let Some(png) = capture(page, evidence, &params, &base, deadline).await? else {
        return Ok(Vec::new());
    };
    Ok(publish(
        evidence,
        ArtifactGroup::Screenshots,
        &base,
        "png",
        &png,
        Some(step.index + 1),
    )?
    .into_iter()
    .collect())
}

/// One `Page.captureScreenshot`, decoded.
async fn capture_raw(page: &Page, params: &Value) -> Result<Vec<u8>, DriverError> {
    let r = page
        .call("Page.captureScreenshot", params.clone())
        .await
        .map_err(|e| DriverError::new("web.screenshot.failed", e.to_string()))?;
    base64::engine::general_purpose::STANDARD
        .decode(r["data"].as_str().unwrap_or(""))
        .map_err(|e| DriverError::new("web.screenshot.failed", e.to_string()))
}

/// Masking rounds before a page that keeps changing under the masks
/// withholds its picture.
const MASK_ATTEMPTS: usize = 3;

/// `Page.captureScreenshot` of `page` with every secret on it covered.
/// `Ok(None)`: withheld (an observation says why). Without secrets in the
/// run, a plain capture.
///
/// One round: find what shows a secret ([`mask::plan`]); if some of it
/// cannot be covered, withhold; cover the rest (`maskShow`), capture,
/// uncover (`maskHide`, always); then look again: the picture is kept only
/// if the same places show secrets and nothing moved while it was taken
/// (otherwise another round). Any error of the masking step withholds.
pub async fn capture(
    page: &Page,
    evidence: &Evidence,
    params: &Value,
    base: &str,
    deadline: Deadline,
) -> Result<Option<Vec<u8>>, DriverError> {
    let secrets = evidence.secrets();
    if secrets.is_empty() {
        return capture_raw(page, params).await.map(Some);
    }
    let withhold = |why: &str| {
        let note = format!(
            "screenshot {base}.png withheld: a secret is shown on the page and could not be masked ({why})"
        );
        page.sh
            .st()
            .observations
            .push(secrets.redact(&note).into_owned());
        evidence.withhold(
            &format!("{base}.png"),
            "a secret is shown on the page and could not be masked; no picture was taken",
        );
        Ok(None)
    };
    let mut why = String::from("the page kept changing while it was captured");
    for _ in 0..MASK_ATTEMPTS {
        let plan = match mask::plan(page, secrets, deadline).await {
            Ok(p) => p,
            Err(e) => return withhold(&e),
        };
        if let Some(e) = &plan.unmaskable {
            return withhold(e);
        }
        let covered = if plan.units.is_empty() {
            Ok(())
        } else {
            mask::show(page, &plan, deadline).await
        };
        let png = match &covered {
            Ok(()) => Some(capture_raw(page, params).await),
            Err(_) => None,
        };
        // The masks go, whatever happened.
        let moved = if plan.units.is_empty() {
            Ok(false)
        } else {
            mask::hide(page, deadline).await
        };
        match covered {
            Err(mask::ShowError::Unmaskable(e)) => return withhold(&e),
            Err(mask::ShowError::Changed(e)) => {
                why = e;
                continue;
            }
            Ok(()) => {}
        }
        let png = match png {
            Some(p) => p?,
            None => continue,
        };
        match moved {
            Err(e) => return withhold(&e),
            Ok(true) => {
                why = "what shows a secret moved, or the masks were disturbed, while the picture was taken".into();
                continue;
            }
            Ok(false) => {}
        }
        let after = match mask::plan(page, secrets, deadline).await {
            Ok(p) => p,
            Err(e) => return withhold(&e),
        };
        if let Some(e) = &after.unmaskable {
            return withhold(e);
        }
        if after.same_places(&plan) {
            return Ok(Some(png));
        }
        why = "the places showing a secret changed while the picture was taken".into();
    }
    withhold(&why)
}

/// Finding what shows a secret, and covering it.
mod mask;

fn clip(s: &str) -> String {
    if s.len() <= MAX_AX_STRING {
        return s.to_string();
    }
    let mut end = MAX_AX_STRING;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// Turns `Accessibility.getFullAXTree`'s flat node list into a bounded tree
/// of `{role, name, value?, states?, children?}` (ignored nodes skipped).
pub fn compact_ax(nodes: &[Value], root_backend: Option<i64>) -> Value {
    use std::collections::HashMap;
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
        let states: Vec<String> = n["properties"]
            .as_array()
            .map(|ps| {
                ps.iter()
                    .filter_map(|p| {
                        let name = p["name"].as_str()?;
                        let v = &p["value"]["value"];
                        match (name, v) {
                            (
                                "disabled" | "checked" | "expanded" | "selected" | "pressed"
                                | "focused" | "required" | "invalid" | "busy" | "readonly"
                                | "modal",
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
            .unwrap_or_default();
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

/// An accessibility snapshot (raw protocol call: the typed bindings lag
/// Chromium's enum of ignored reasons).
pub async fn ax_snapshot(
    page: &Page,
    evidence: &Evidence,
    step: &Step,
    locator: Option<&Locator>,
    deadline: Deadline,
) -> Result<Vec<Artifact>, DriverError> {
    let root_backend = match locator {
        Some(l) => {
            actionable(
                page,
                l,
                "snapshotAccessibility",
                json!({ "kind": "focus" }),
                deadline,
            )
            .await?;
            // The helper focused the element; find it back by focus.
            let r = page
                .evaluate(json!({ "expression": "document.activeElement", "returnByValue": false }))
                .await
                .map_err(|e| DriverError::new("web.ax.failed", e.to_string()))?;
            let oid = r["result"]["objectId"].as_str().unwrap_or("").to_string();
            let d = page
                .call("DOM.describeNode", json!({ "objectId": oid }))
                .await
                .map_err(|e| DriverError::new("web.ax.failed", e.to_string()))?;
            d["node"]["backendNodeId"].as_i64()
        }
        None => None,
    };
    let mut ax = json!({});
    if let Some(f) = &page.frame {
        ax["frameId"] = json!(f.id);
    }
    let r = page
        .call("Accessibility.getFullAXTree", ax)
        .await
        .map_err(|e| DriverError::new("web.ax.failed", e.to_string()))?;
    let nodes = r["nodes"].as_array().cloned().unwrap_or_default();
    let tree = compact_ax(&nodes, root_backend);
    let bytes = serde_json::to_vec_pretty(&tree).unwrap_or_default();
    Ok(publish(
        evidence,
        ArtifactGroup::AccessibilitySnapshots,
        &step.evidence_name(),
        "json",
        &bytes,
        Some(step.index + 1),
    )?
    .into_iter()
    .collect())
}

/// Writes `console.jsonl` and `network.jsonl` (method, origin + path,
/// status, type, timing; never headers or bodies).
pub fn write_logs(sh: &Shared, evidence: &Evidence) -> Vec<Artifact> {
    let (console, network, dropped) = {
        let st = sh.st();
        let c: Vec<String> = st
            .console
            .iter()
            .map(|e| {
                json!({ "atMs": e.at_ms, "level": e.level, "source": e.source, "text": e.text, "containment": e.containment }).to_string()
            })
            .collect();
        let n: Vec<String> = st
            .network
            .iter()
            .map(|e| {
                json!({ "method": e.method, "url": e.url, "type": e.kind, "status": e.status, "startMs": e.start_ms, "durationMs": e.duration_ms, "failed": e.failed }).to_string()
            })
            .collect();
        (c, n, st.dropped)
    };
    let mut out = Vec::new();
    let mut c = console.join("\n");
    let mut n = network.join("\n");
    if dropped > 0 {
        c.push_str(&format!("\n{{\"dropped\":{dropped}}}"));
        n.push_str(&format!("\n{{\"dropped\":{dropped}}}"));
    }
    for (base, text) in [("console", c), ("network", n)] {
        if let Ok(Some(a)) = publish(
            evidence,
            ArtifactGroup::Logs,
            base,
            "jsonl",
            text.as_bytes(),
            None,
        ) {
            out.push(a);
        }
    }
    out
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

    fn secrets() -> Secrets {
        let s = Secrets::new();
        s.add("Wombat7Quartz");
        s
    }

    #[test]
    fn occurrences_are_found_without_the_secret_values() {
        let s = secrets();
        let text = format!(
            "ä {} x{}y {}",
            "Wombat7Quartz",
            "Wombat7Quartz",
            "z".repeat(300)
        );
        let found = mask::occurrences(&s, &text);
        assert_eq!(found.len(), 2);
        for r in &found {
            assert_eq!(&text[r.clone()], "Wombat7Quartz");
        }
        assert!(mask::occurrences(&s, "nothing to see").is_empty());
        assert!(mask::occurrences(&s, "").is_empty());
        let long = format!("{}Wombat7Quartz", "é".repeat(5000));
        let r = &mask::occurrences(&s, &long)[0];
        assert_eq!(&long[r.clone()], "Wombat7Quartz");
    }

    /// A snapshot document: `(parent, type, name, value)` per node, plus
    /// attributes and input values.
    fn doc(
        nodes: &[(i64, i64, &str, &str)],
        attrs: &[(usize, &str, &str)],
        input: &[(usize, &str)],
    ) -> (Value, Vec<String>) {
        let mut strings: Vec<String> = Vec::new();
        let mut id = |x: &str| -> i64 {
            if x.is_empty() {
                return -1;
            }
            strings.push(x.to_string());
            strings.len() as i64 - 1
        };
        let mut a: Vec<Vec<i64>> = vec![Vec::new(); nodes.len()];
        for &(i, k, v) in attrs {
            a[i].push(id(k));
            a[i].push(id(v));
        }
        let (mut ii, mut iv) = (Vec::new(), Vec::new());
        for &(i, v) in input {
            ii.push(i as i64);
            iv.push(id(v));
        }
        let d = json!({ "nodes": {
            "parentIndex": nodes.iter().map(|n| n.0).collect::<Vec<_>>(),
            "nodeType": nodes.iter().map(|n| n.1).collect::<Vec<_>>(),
            "nodeName": nodes.iter().map(|n| id(n.2)).collect::<Vec<_>>(),
            "nodeValue": nodes.iter().map(|n| id(n.3)).collect::<Vec<_>>(),
            "backendNodeId": (0..nodes.len() as i64).map(|i| 100 + i).collect::<Vec<_>>(),
            "attributes": a,
            "inputValue": { "index": ii, "value": iv },
        } });
        (d, strings)
    }

    #[test]
    fn scan_finds_split_text_values_and_attributes_but_not_scripts() {
        let s = secrets();
        let (d, strings) = doc(
            &[
                (-1, 9, "#document", ""),
                (0, 1, "HTML", ""),
                (1, 1, "HEAD", ""),
                (2, 1, "TITLE", ""),
                (3, 3, "#text", "Wombat7Quartz"),
                (1, 1, "BODY", ""),
                (5, 1, "P", ""),
                (6, 3, "#text", "héllo Wom"),
                (6, 1, "B", ""),
                (8, 3, "#text", "bat7"),
                (6, 3, "#text", "Quartz!"),
                (5, 1, "INPUT", ""),
                (5, 1, "DIV", ""),
                (5, 1, "SCRIPT", ""),
                (13, 3, "#text", "var t = 'Wombat7Quartz';"),
            ],
            &[
                (12, "title", "Wombat7Quartz"),
                (13, "data-x", "Wombat7Quartz"),
            ],
            &[(11, "Wombat7Quartz")],
        );
        let hits = mask::scan(&d, &strings, &s);
        assert_eq!(
            hits,
            vec![
                mask::Hit::Element(111),
                mask::Hit::Element(112),
                // "héllo Wom": UTF-16 offsets 6..9.
                mask::Hit::Text(vec![(107, 6, 9), (109, 0, 4), (110, 0, 6)]),
            ]
        );
        let none = Secrets::new();
        none.add("Platypus9");
        assert!(mask::scan(&d, &strings, &none).is_empty());
    }
}
