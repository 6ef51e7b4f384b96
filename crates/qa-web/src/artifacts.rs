//! Evidence: PNG screenshots, bounded accessibility snapshots, console and
//! network logs.

use crate::actionability::actionable;
use crate::events::Shared;
use crate::page::Page;
use base64::Engine;
use qa_core::flow::Locator;
use qa_core::{Artifact, ArtifactGroup, Deadline, DriverError, Evidence, Step};
use serde_json::{json, Value};

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

/// A PNG of the viewport, the full page or one element.
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
    let r = page
        .call("Page.captureScreenshot", params)
        .await
        .map_err(|e| DriverError::new("web.screenshot.failed", e.to_string()))?;
    let png = base64::engine::general_purpose::STANDARD
        .decode(r["data"].as_str().unwrap_or(""))
        .map_err(|e| DriverError::new("web.screenshot.failed", e.to_string()))?;
    Ok(publish(
        evidence,
        ArtifactGroup::Screenshots,
        &step.evidence_name(),
        "png",
        &png,
        Some(step.index + 1),
    )?
    .into_iter()
    .collect())
}

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
}
