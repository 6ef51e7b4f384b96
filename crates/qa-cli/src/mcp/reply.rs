//! The shapes of tool replies: structured content for every call, a
//! refusal with its code and the calls that would move on (`nextActions`),
//! and observations bounded to a size an agent can read (the rest spills
//! to an artifact whose path is returned).

use super::McpCode;
use qa_core::observe::Observation;
use qa_core::result::RunResult;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{json, Value};

/// At most this many elements are returned inline.
pub const INLINE_ELEMENTS: usize = 200;
/// At most this many bytes of observation JSON are returned inline.
pub const INLINE_BYTES: usize = 48 * 1024;

/// A call that would move on after a refusal.
pub struct Next {
    /// The tool to call.
    pub tool: &'static str,
    /// Its arguments.
    pub arguments: Value,
    /// Why.
    pub why: String,
}

impl Next {
    /// `observe` on `session`.
    pub fn observe(session: &str, why: impl Into<String>) -> Next {
        Next {
            tool: "observe",
            arguments: json!({ "session": session }),
            why: why.into(),
        }
    }
}

/// A successful reply with `value` as its structured content.
pub fn ok(value: Value) -> CallToolResult {
    CallToolResult::structured(value)
}

/// A failed reply: `{ error: { code, message }, nextActions, …extra }`.
pub fn refusal(code: McpCode, message: impl Into<String>, next: Vec<Next>) -> CallToolResult {
    refusal_with(code, message, next, json!({}))
}

/// [`refusal`] with further fields merged into the structured content.
pub fn refusal_with(
    code: McpCode,
    message: impl Into<String>,
    next: Vec<Next>,
    extra: Value,
) -> CallToolResult {
    let mut v = json!({
        "error": { "code": code.as_str(), "message": message.into() },
        "nextActions": next
            .into_iter()
            .map(|n| json!({ "tool": n.tool, "arguments": n.arguments, "why": n.why }))
            .collect::<Vec<_>>(),
    });
    if let (Some(o), Value::Object(e)) = (v.as_object_mut(), extra) {
        o.extend(e);
    }
    CallToolResult::structured_error(v)
}

/// The summary of a finished run: status, reason, where its result,
/// report and evidence are.
pub fn run_summary(r: &RunResult) -> Value {
    let dir = std::path::Path::new(&r.evidence_dir);
    let mut v = json!({
        "status": r.status,
        "runId": r.run_id,
        "runDir": r.evidence_dir,
        "result": dir.join("result.json"),
        "report": dir.join("report.html"),
        "steps": r.steps.iter().map(|s| json!({
            "index": s.index, "action": s.action, "status": s.status, "reason": s.reason,
        })).collect::<Vec<_>>(),
        "cleanup": r.cleanup.status,
    });
    if let Some(c) = &r.reason_code {
        v["reasonCode"] = json!(c);
    }
    if let Some(c) = &r.reason {
        v["reason"] = json!(c);
    }
    if let Some(h) = &r.blocked_handoff {
        v["blockedHandoff"] = json!(h);
    }
    if let Some(o) = r
        .observations
        .iter()
        .find(|o| o.kind == qa_core::result::ObservationKind::NothingChecked)
    {
        v["nothingChecked"] = json!(o.message);
    }
    v
}

/// The observation as JSON, bounded: past [`INLINE_ELEMENTS`] elements or
/// [`INLINE_BYTES`] bytes, the whole observation is written by `spill` (an
/// artifact of the run) and only the first elements that fit are returned,
/// with `spilled: { path, elements, shown }`.
pub fn bounded(o: &Observation, spill: impl FnOnce(&[u8]) -> Option<std::path::PathBuf>) -> Value {
    let mut v = bounded_full(o, spill);
    compact(&mut v);
    v
}

/// Leaves out each element's `locator` that is just its `role` and `name`
/// (what an agent would write from the element itself); a locator with
/// anything else (`testId`, `nth`, `exact`) stays. An agent acts on the
/// reference either way.
fn compact(v: &mut Value) {
    let Some(elements) = v["elements"].as_array_mut() else {
        return;
    };
    for e in elements {
        let plain = e["locator"].as_object().is_some_and(|l| {
            l.len() == 2
                && l.get("role").is_some_and(|r| Some(r) == e.get("role"))
                && l.get("name").is_some_and(|n| Some(n) == e.get("name"))
        });
        if plain {
            if let Some(o) = e.as_object_mut() {
                o.remove("locator");
            }
        }
    }
}

fn bounded_full(o: &Observation, spill: impl FnOnce(&[u8]) -> Option<std::path::PathBuf>) -> Value {
    let full = serde_json::to_vec(o).unwrap_or_default();
    if full.len() <= INLINE_BYTES && o.elements.len() <= INLINE_ELEMENTS {
        return serde_json::to_value(o).unwrap_or_default();
    }
    let path = spill(&full);
    let mut shown = o.elements.len().min(INLINE_ELEMENTS);
    loop {
        let mut part = o.clone();
        part.elements.truncate(shown);
        part.truncated = true;
        let mut v = serde_json::to_value(&part).unwrap_or_default();
        v["spilled"] = json!({
            "path": path,
            "elements": o.elements.len(),
            "shown": shown,
        });
        if shown == 0 || serde_json::to_vec(&v).map_or(0, |b| b.len()) <= INLINE_BYTES {
            return v;
        }
        shown = shown * 3 / 4;
    }
}

/// A PNG file as MCP image content.
pub fn png(path: &std::path::Path) -> Option<ContentBlock> {
    use base64::Engine as _;
    let bytes = std::fs::read(path).ok()?;
    Some(ContentBlock::image(
        base64::engine::general_purpose::STANDARD.encode(bytes),
        "image/png",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use qa_core::observe::ObservedElement;

    fn element(i: usize) -> ObservedElement {
        ObservedElement {
            reference: Some(format!("@e{i}")),
            depth: 0,
            role: "button".into(),
            name: format!("Button number {i} with a long enough name to fill the page"),
            value: None,
            states: vec![],
            bounds: None,
            context: None,
            locator: None,
        }
    }

    #[test]
    fn a_locator_that_is_just_role_and_name_is_left_out() {
        let mut named = element(1);
        named.name = "Save".into();
        named.locator = Some(qa_core::flow::Locator::role("button", "Save"));
        let mut counted = element(2);
        counted.name = String::new();
        counted.locator = Some(qa_core::flow::Locator {
            role: Some("button".into()),
            nth: Some(1),
            ..Default::default()
        });
        let o = Observation {
            id: "o1".into(),
            url: None,
            title: None,
            elements: vec![named, counted],
            truncated: false,
            screen: None,
        };
        let v = bounded(&o, |_| None);
        assert!(v["elements"][0].get("locator").is_none(), "{v:#}");
        assert_eq!(v["elements"][1]["locator"]["nth"], 1, "{v:#}");
    }

    #[test]
    fn a_large_observation_spills_and_stays_bounded() {
        let o = Observation {
            id: "o1".into(),
            url: None,
            title: None,
            elements: (1..=1000).map(element).collect(),
            truncated: false,
            screen: None,
        };
        let mut written = 0;
        let v = bounded(&o, |b| {
            written = b.len();
            Some("/tmp/o1.json".into())
        });
        assert!(written > INLINE_BYTES);
        assert!(serde_json::to_vec(&v).unwrap().len() <= INLINE_BYTES);
        assert_eq!(v["spilled"]["elements"], 1000);
        assert_eq!(v["spilled"]["path"], "/tmp/o1.json");
        let shown = v["spilled"]["shown"].as_u64().unwrap() as usize;
        assert!(shown > 0 && shown <= INLINE_ELEMENTS);
        assert_eq!(v["elements"].as_array().unwrap().len(), shown);

        let small = Observation {
            elements: (1..=3).map(element).collect(),
            ..o
        };
        let v = bounded(&small, |_| panic!("a small observation is not spilled"));
        assert!(v.get("spilled").is_none());
    }

    #[test]
    fn a_refusal_carries_its_code_and_next_actions() {
        let r = refusal(
            McpCode::StaleRef,
            "stale",
            vec![Next::observe("s1", "refs changed")],
        );
        assert_eq!(r.is_error, Some(true));
        let v = r.structured_content.unwrap();
        assert_eq!(v["error"]["code"], "mcp.stale_ref");
        assert_eq!(v["nextActions"][0]["tool"], "observe");
        assert_eq!(v["nextActions"][0]["arguments"]["session"], "s1");
    }
}
