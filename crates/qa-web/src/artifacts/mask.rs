//! Finding what shows a secret on a page, and covering it for a screenshot.
//!
//! The DOM snapshot (`DOMSnapshot.captureSnapshot`) is read as the
//! protocol gives it: its tables are indexed by node, not keyed.

use crate::cdp::commands::{
    CallArgument, CallFunctionOn, CaptureSnapshot, Command, ReleaseObjectGroup, ResolveNode,
};
use crate::cdp::CdpError;
use crate::page::{DomOp, MaskHidden, MaskShown, Page, Unmaskable, DOM_JS};
use qa_core::{Deadline, Secrets};
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::time::Duration;

/// `Runtime` object group of the references passed to the helper.
const GROUP: &str = "ui-qa-mask";
/// Bounds: places to cover, node references to pass.
const MAX_UNITS: usize = 500;
const MAX_NODES: usize = 2000;
/// Subtrees whose text and attributes are never painted.
const UNPAINTED: [&str; 5] = ["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD"];

/// One place to cover, as the helper reads it: an element whose value or
/// attribute shows a secret (`{"k":"el","n":i}`), or UTF-16 ranges of
/// text nodes that together show one (`{"k":"text","p":[[i,from,to],…]}`);
/// `i` indexes [`Plan::nodes`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "k", rename_all = "lowercase")]
pub(super) enum Unit {
    /// An element.
    El {
        /// Its node reference.
        n: usize,
    },
    /// Text ranges.
    Text {
        /// `(node reference, from, to)` pieces.
        p: Vec<(usize, usize, usize)>,
    },
}

/// What to cover on one page.
#[derive(Debug, Default)]
pub(super) struct Plan {
    /// The places.
    pub units: Vec<Unit>,
    /// Backend node ids the units index.
    pub nodes: Vec<i64>,
    /// Index of each backend node id in `nodes`.
    index: HashMap<i64, usize>,
    /// The top document's backend node id and frame id.
    top_doc: i64,
    top_frame: String,
    /// A secret shown where it cannot be covered: why.
    pub unmaskable: Option<String>,
}

impl Plan {
    /// The same places (by node and range) as `other`.
    pub fn same_places(&self, other: &Plan) -> bool {
        self.units == other.units && self.nodes == other.nodes
    }

    fn node(&mut self, backend: i64) -> usize {
        *self.index.entry(backend).or_insert_with(|| {
            self.nodes.push(backend);
            self.nodes.len() - 1
        })
    }
}

/// Why covering failed.
pub(super) enum ShowError {
    /// Something shows a secret that cannot be covered (or the masking
    /// step failed): withhold.
    Unmaskable(String),
    /// The page changed between finding and covering: try again.
    Changed(String),
}

fn bound(deadline: Deadline) -> Duration {
    deadline
        .remaining()
        .clamp(Duration::from_millis(200), Duration::from_secs(15))
}

async fn call<C: Command>(
    page: &Page,
    session: &str,
    cmd: &C,
    deadline: Deadline,
) -> Result<C::Response, CdpError> {
    page.sh
        .cdp
        .call_typed_with_timeout(Some(session), cmd, bound(deadline))
        .await
}

fn snapshot() -> CaptureSnapshot {
    CaptureSnapshot {
        computed_styles: Vec::new(),
    }
}

/// Everything on `page` that shows a secret, from a DOM snapshot of
/// its process (plus the documents of cross-origin frames in other
/// processes, which can only withhold). `Err`: the page could not be
/// read (withhold).
pub(super) async fn plan(
    page: &Page,
    secrets: &Secrets,
    deadline: Deadline,
) -> Result<Plan, String> {
    let snap = call(page, &page.session, &snapshot(), deadline)
        .await
        .map_err(|e| format!("the page could not be read: {e}"))?;
    let mut plan = Plan::default();
    let strings = strings_of(&snap);
    let docs = snap["documents"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let Some(top) = docs.first() else {
        return Err("the page has no document".into());
    };
    plan.top_doc = ints(&top["nodes"]["backendNodeId"])
        .first()
        .copied()
        .unwrap_or(-1);
    plan.top_frame = string(&strings, &top["frameId"]).to_string();
    for d in docs {
        for hit in scan(d, &strings, secrets) {
            match hit {
                Hit::Element(b) => {
                    let n = plan.node(b);
                    plan.units.push(Unit::El { n });
                }
                Hit::Text(pieces) => {
                    let p = pieces
                        .into_iter()
                        .map(|(b, from, to)| (plan.node(b), from, to))
                        .collect();
                    plan.units.push(Unit::Text { p });
                }
            }
        }
    }
    if plan.units.len() > MAX_UNITS || plan.nodes.len() > MAX_NODES {
        plan.unmaskable = Some(format!("it is shown in more than {MAX_UNITS} places"));
    }
    // Frames rendered by another process (cross-site) are their own
    // targets: they cannot be covered from here, only detected.
    let frames: Vec<String> = {
        let st = page.sh.st();
        st.session_type
            .iter()
            .filter(|(s, k)| k.as_str() == "iframe" && st.sessions.values().any(|v| v == *s))
            .map(|(s, _)| s.clone())
            .collect()
    };
    for s in frames {
        let snap = match call(page, &s, &snapshot(), deadline).await {
            Ok(v) => v,
            // A frame that went away shows nothing.
            Err(CdpError::TargetClosed { .. }) => continue,
            Err(CdpError::Protocol { message, .. }) if message.contains("ession") => continue,
            Err(e) => return Err(format!("a cross-origin frame could not be read: {e}")),
        };
        let strings = strings_of(&snap);
        let docs = snap["documents"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        if docs.iter().any(|d| !scan(d, &strings, secrets).is_empty()) {
            plan.unmaskable = Some("it is inside a cross-origin frame".into());
        }
    }
    Ok(plan)
}

/// Covers the plan's places (`maskShow` in the top document).
pub(super) async fn show(page: &Page, plan: &Plan, deadline: Deadline) -> Result<(), ShowError> {
    let changed = |e: CdpError| ShowError::Changed(format!("the page changed: {e}"));
    let ctx = page
        .sh
        .st()
        .frame_contexts
        .get(&(page.session.clone(), plan.top_frame.clone()))
        .copied()
        .ok_or_else(|| ShowError::Changed("the page has no script context".into()))?;
    let resolve = |backend: i64| {
        let cmd = ResolveNode {
            backend_node_id: backend,
            object_group: GROUP,
            execution_context_id: Some(ctx),
        };
        async move { call(page, &page.session, &cmd, deadline).await }
    };
    let doc = resolve(plan.top_doc).await.map_err(changed)?;
    let Some(doc) = doc.object.object_id else {
        return Err(ShowError::Changed("the page has no document".into()));
    };
    let mut args = vec![
        CallArgument::Value(json!(DomOp::MaskShow.name())),
        CallArgument::Value(json!(plan.units)),
    ];
    for &b in &plan.nodes {
        let r = resolve(b).await.map_err(changed)?;
        // A node of a cross-origin frame resolves to null in the top
        // document: the helper reports it as unreachable.
        args.push(match r.object.object_id {
            Some(id) => CallArgument::ObjectId(id),
            None => CallArgument::Value(Value::Null),
        });
    }
    let cmd = CallFunctionOn {
        object_id: doc,
        function_declaration: format!(
            "function (op, plan, ...nodes) {{ return ({DOM_JS})(op, {{}}, {{ plan, nodes }}); }}"
        ),
        arguments: Some(args),
        await_promise: Some(true),
        return_by_value: Some(true),
    };
    let r = call(page, &page.session, &cmd, deadline)
        .await
        .map_err(|e| ShowError::Unmaskable(format!("the masking step failed: {e}")))?;
    if r.exception_details.is_some() {
        return Err(ShowError::Unmaskable(
            "the masking step failed in the page".into(),
        ));
    }
    let shown = r
        .result
        .value
        .and_then(|v| serde_json::from_value::<MaskShown>(v).ok());
    match shown {
        Some(MaskShown::Ok {}) => Ok(()),
        Some(MaskShown::Unmaskable { why }) => Err(ShowError::Unmaskable(match why {
            Unmaskable::Hidden => "an element showing it has no box on the page: hidden markup, drawn elsewhere (a canvas, say)".into(),
            Unmaskable::Frame => "it is inside a frame the driver cannot reach (cross-origin)".into(),
            Unmaskable::Many => "it needs too many masks".into(),
        })),
        None => Err(ShowError::Unmaskable(
            "the masking step gave no answer".into(),
        )),
    }
}

/// Removes every mask (`maskHide`) and releases the references.
/// `Ok(true)`: something that shows a secret moved while masked, or the
/// masks were not intact (the page removed or hid them).
pub(super) async fn hide(page: &Page, deadline: Deadline) -> Result<bool, String> {
    let top = page.top();
    let r = top
        .dom::<MaskHidden>(&DomOp::MaskHide, Deadline::after(bound(deadline)))
        .await;
    let _ = call(
        page,
        &page.session,
        &ReleaseObjectGroup {
            object_group: GROUP,
        },
        deadline,
    )
    .await;
    match r {
        Ok(h) => Ok(h.moved || !h.intact),
        Err(e) => Err(format!("the masks could not be removed: {e:?}")),
    }
}

fn strings_of(snap: &Value) -> Vec<String> {
    snap["strings"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|s| s.as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn string<'a>(strings: &'a [String], i: &Value) -> &'a str {
    i.as_i64()
        .and_then(|i| usize::try_from(i).ok())
        .and_then(|i| strings.get(i))
        .map(String::as_str)
        .unwrap_or("")
}

fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .map(|a| a.iter().map(|x| x.as_i64().unwrap_or(-1)).collect())
        .unwrap_or_default()
}

/// `RareStringData` / `RareIntegerData`: node index → value.
fn rare(v: &Value) -> HashMap<i64, i64> {
    ints(&v["index"])
        .into_iter()
        .zip(ints(&v["value"]))
        .collect()
}

/// A place that shows a secret.
#[derive(Debug, PartialEq)]
pub(super) enum Hit {
    /// An element (by backend node id) whose value or an attribute
    /// shows it.
    Element(i64),
    /// One occurrence in text: (text node, UTF-16 from, to) pieces.
    Text(Vec<(i64, usize, usize)>),
}

/// What in one snapshot document shows a secret: elements whose
/// attributes or current value contain one, and every occurrence in
/// the document's text (all text nodes in tree order, shadow trees
/// included, so an occurrence split across nodes is found too).
pub(super) fn scan(doc: &Value, strings: &[String], secrets: &Secrets) -> Vec<Hit> {
    let n = &doc["nodes"];
    let parent = ints(&n["parentIndex"]);
    let kind = ints(&n["nodeType"]);
    let name = ints(&n["nodeName"]);
    let value = ints(&n["nodeValue"]);
    let backend = ints(&n["backendNodeId"]);
    let attrs = n["attributes"].as_array();
    let input = rare(&n["inputValue"]);
    let textarea = rare(&n["textValue"]);
    let pseudo = rare(&n["pseudoType"]);
    let s = |i: i64| string(strings, &json!(i));
    let found = |t: &str| !t.is_empty() && secrets.found_in(t.as_bytes());
    let mut hits = Vec::new();
    let mut skip = vec![false; kind.len()];
    let mut text = String::new();
    // (backend node, start, end) of each text node in `text`.
    let mut pieces: Vec<(i64, usize, usize)> = Vec::new();
    let mut texts: Vec<&str> = Vec::new();
    for i in 0..kind.len() {
        let p = parent.get(i).copied().unwrap_or(-1);
        let inherited = usize::try_from(p)
            .ok()
            .and_then(|p| skip.get(p).copied())
            .unwrap_or(false);
        let nm = s(name.get(i).copied().unwrap_or(-1));
        skip[i] =
            inherited || (kind[i] == 1 && UNPAINTED.iter().any(|u| u.eq_ignore_ascii_case(nm)));
        if skip[i] {
            continue;
        }
        let b = backend.get(i).copied().unwrap_or(-1);
        let key = i as i64;
        match kind[i] {
            3 | 4 => {
                let t = s(value.get(i).copied().unwrap_or(-1));
                if !t.is_empty() {
                    pieces.push((b, text.len(), text.len() + t.len()));
                    texts.push(t);
                    text.push_str(t);
                }
            }
            1 if !pseudo.contains_key(&key) => {
                let in_attrs = attrs
                    .and_then(|a| a.get(i))
                    .map(|a| ints(a).into_iter().any(|x| found(s(x))))
                    .unwrap_or(false);
                let in_value = [input.get(&key), textarea.get(&key)]
                    .into_iter()
                    .flatten()
                    .any(|&v| found(s(v)));
                if in_attrs || in_value {
                    hits.push(Hit::Element(b));
                }
            }
            _ => {}
        }
    }
    for occ in occurrences(secrets, &text) {
        let mut p = Vec::new();
        for (k, &(b, start, end)) in pieces.iter().enumerate() {
            if end <= occ.start || start >= occ.end {
                continue;
            }
            let t = texts[k];
            let from = occ.start.max(start) - start;
            let to = occ.end.min(end) - start;
            p.push((b, utf16_at(t, from, false), utf16_at(t, to, true)));
        }
        if !p.is_empty() {
            hits.push(Hit::Text(p));
        }
    }
    hits
}

/// The UTF-16 offset of byte `at` of `t` (rounded to a character
/// boundary: down for a start, up for an end).
fn utf16_at(t: &str, mut at: usize, up: bool) -> usize {
    at = at.min(t.len());
    while !t.is_char_boundary(at) {
        if up {
            at += 1;
        } else {
            at -= 1;
        }
    }
    t[..at].encode_utf16().count()
}

/// Byte ranges of `text` that contain a secret, each as small as it
/// gets, left to right — found with [`Secrets::found_in`] only (the
/// runner never hands its secrets out): gallop to the shortest prefix
/// that contains one, then to the shortest suffix of that.
pub(super) fn occurrences(secrets: &Secrets, text: &str) -> Vec<std::ops::Range<usize>> {
    let b = text.as_bytes();
    let found = |r: std::ops::Range<usize>| secrets.found_in(&b[r]);
    let mut out = Vec::new();
    let mut from = 0;
    while from < b.len() && out.len() <= MAX_UNITS {
        // The smallest end: found(from..end), not found(from..end-1).
        let (mut lo, mut hi, mut step) = (from, from, 64usize);
        loop {
            hi = (hi + step).min(b.len());
            if found(from..hi) {
                break;
            }
            if hi == b.len() {
                return out;
            }
            lo = hi;
            step = step.saturating_mul(2);
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if found(from..mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        let end = hi;
        // The largest start: found(start..end).
        let (mut lo, mut hi, mut step) = (end, end, 64usize);
        loop {
            lo = lo.saturating_sub(step).max(from);
            if found(lo..end) {
                break;
            }
            hi = lo;
            step = step.saturating_mul(2);
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if found(mid..end) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        out.push(lo..end);
        from = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let found = occurrences(&s, &text);
        assert_eq!(found.len(), 2);
        for r in &found {
            assert_eq!(&text[r.clone()], "Wombat7Quartz");
        }
        assert!(occurrences(&s, "nothing to see").is_empty());
        assert!(occurrences(&s, "").is_empty());
        let long = format!("{}Wombat7Quartz", "é".repeat(5000));
        let r = &occurrences(&s, &long)[0];
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
        let hits = scan(&d, &strings, &s);
        assert_eq!(
            hits,
            vec![
                Hit::Element(111),
                Hit::Element(112),
                // "héllo Wom": UTF-16 offsets 6..9.
                Hit::Text(vec![(107, 6, 9), (109, 0, 4), (110, 0, 6)]),
            ]
        );
        let none = Secrets::new();
        none.add("Platypus9");
        assert!(scan(&d, &strings, &none).is_empty());
    }
}
