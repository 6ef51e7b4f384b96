//! Finding what shows a secret on a page, and covering it for a screenshot.

use super::*;

/// `Runtime` object group of the references passed to the helper.
const GROUP: &str = "ui-qa-mask";
/// Bounds: places to cover, node references to pass.
const MAX_UNITS: usize = 500;
const MAX_NODES: usize = 2000;
/// Subtrees whose text and attributes are never painted.
const UNPAINTED: [&str; 5] = ["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD"];
use crate::page::DOM_JS;

/// What to cover on one page.
#[derive(Debug, Default)]
pub struct Plan {
    /// For the helper: `{"k":"el","n":i}` (an element whose value or
    /// attribute shows a secret) or `{"k":"text","p":[[i,from,to],…]}`
    /// (UTF-16 ranges of text nodes that together show one).
    pub units: Vec<Value>,
    /// Backend node ids the units' `i` index.
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
pub enum ShowError {
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

async fn call(
    page: &Page,
    session: &str,
    method: &str,
    params: Value,
    deadline: Deadline,
) -> Result<Value, CdpError> {
    page.sh
        .cdp
        .call_with_timeout(Some(session), method, params, bound(deadline))
        .await
}

/// Everything on `page` that shows a secret, from a DOM snapshot of
/// its process (plus the documents of cross-origin frames in other
/// processes, which can only withhold). `Err`: the page could not be
/// read (withhold).
pub async fn plan(page: &Page, secrets: &Secrets, deadline: Deadline) -> Result<Plan, String> {
    let snap = call(
        page,
        &page.session,
        "DOMSnapshot.captureSnapshot",
        json!({ "computedStyles": [] }),
        deadline,
    )
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
                    plan.units.push(json!({ "k": "el", "n": n }));
                }
                Hit::Text(pieces) => {
                    let p: Vec<Value> = pieces
                        .into_iter()
                        .map(|(b, from, to)| json!([plan.node(b), from, to]))
                        .collect();
                    plan.units.push(json!({ "k": "text", "p": p }));
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
        let snap = match call(
            page,
            &s,
            "DOMSnapshot.captureSnapshot",
            json!({ "computedStyles": [] }),
            deadline,
        )
        .await
        {
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
pub async fn show(page: &Page, plan: &Plan, deadline: Deadline) -> Result<(), ShowError> {
    let changed = |e: CdpError| ShowError::Changed(format!("the page changed: {e}"));
    let ctx = page
        .sh
        .st()
        .frame_contexts
        .get(&(page.session.clone(), plan.top_frame.clone()))
        .copied()
        .ok_or_else(|| ShowError::Changed("the page has no script context".into()))?;
    let resolve = |backend: i64| {
        call(
            page,
            &page.session,
            "DOM.resolveNode",
            json!({ "backendNodeId": backend, "objectGroup": GROUP, "executionContextId": ctx }),
            deadline,
        )
    };
    let doc = resolve(plan.top_doc).await.map_err(changed)?;
    let Some(doc) = doc["object"]["objectId"].as_str().map(str::to_string) else {
        return Err(ShowError::Changed("the page has no document".into()));
    };
    let mut args = vec![
        json!({ "value": "maskShow" }),
        json!({ "value": plan.units }),
    ];
    for &b in &plan.nodes {
        let r = resolve(b).await.map_err(changed)?;
        // A node of a cross-origin frame resolves to null in the top
        // document: the helper reports it as unreachable.
        args.push(match r["object"]["objectId"].as_str() {
            Some(id) => json!({ "objectId": id }),
            None => json!({ "value": null }),
        });
    }
    let r = call(
        page,
        &page.session,
        "Runtime.callFunctionOn",
        json!({
            "objectId": doc,
            "functionDeclaration": format!("function (op, plan, ...nodes) {{ return ({DOM_JS})(op, {{}}, {{ plan, nodes }}); }}"),
            "arguments": args,
            "awaitPromise": true,
            "returnByValue": true,
        }),
        deadline,
    )
    .await
    .map_err(|e| ShowError::Unmaskable(format!("the masking step failed: {e}")))?;
    if r.get("exceptionDetails").is_some() {
        return Err(ShowError::Unmaskable(
            "the masking step failed in the page".into(),
        ));
    }
    let v = &r["result"]["value"];
    match (v["status"].as_str(), v["why"].as_str()) {
        (Some("ok"), _) => Ok(()),
        (_, Some("hidden")) => Err(ShowError::Unmaskable(
            "an element showing it has no box on the page: hidden markup, drawn elsewhere (a canvas, say)".into(),
        )),
        (_, Some("frame")) => Err(ShowError::Unmaskable(
            "it is inside a frame the driver cannot reach (cross-origin)".into(),
        )),
        (_, Some("many")) => Err(ShowError::Unmaskable(
            "it needs too many masks".into(),
        )),
        _ => Err(ShowError::Unmaskable(
            "the masking step gave no answer".into(),
        )),
    }
}

/// Removes every mask (`maskHide`) and releases the references.
/// `Ok(true)`: something that shows a secret moved while masked, or the
/// masks were not intact (the page removed or hid them).
pub async fn hide(page: &Page, deadline: Deadline) -> Result<bool, String> {
    let top = page.top();
    let r = top
        .eval(
            "maskHide",
            &json!({}),
            &json!({}),
            Deadline::after(bound(deadline)),
        )
        .await;
    let _ = call(
        page,
        &page.session,
        "Runtime.releaseObjectGroup",
        json!({ "objectGroup": GROUP }),
        deadline,
    )
    .await;
    match r {
        Ok(v) => Ok(v["moved"].as_bool() != Some(false) || v["intact"].as_bool() != Some(true)),
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
pub enum Hit {
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
pub fn scan(doc: &Value, strings: &[String], secrets: &Secrets) -> Vec<Hit> {
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
pub fn occurrences(secrets: &Secrets, text: &str) -> Vec<std::ops::Range<usize>> {
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
