//! DevTools diagnostics steps: `performanceTrace` (a bounded trace, only
//! its summary kept), `heapSummary` (a heap snapshot, only its summary
//! kept) and `lighthouse` (BLOCKED: not run by this driver).

use crate::page::Page;
use qa_core::{
    ArtifactGroup, Deadline, DriverError, Evidence, MissingCapability, Step, StepOutcome,
};
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long `performanceTrace` records (less when the step deadline is near).
pub const TRACE_WINDOW_MS: u64 = 1000;
/// Raw trace cap (bytes); over it the step fails and the raw file is deleted.
pub const MAX_TRACE_BYTES: u64 = 64 << 20;
/// Raw heap snapshot cap (bytes).
pub const MAX_HEAP_BYTES: u64 = 256 << 20;
/// A task longer than this counts as a long task.
pub const LONG_TASK_MS: f64 = 50.0;

const TRACE_CATEGORIES: &[&str] = &[
    "devtools.timeline",
    "disabled-by-default-devtools.timeline",
    "toplevel",
    "v8.execute",
    "blink.user_timing",
    "loading",
];

fn fail(code: &'static str) -> impl Fn(String) -> DriverError {
    move |m| DriverError::new(code, m)
}

fn publish_summary(
    evidence: &Evidence,
    step: &Step,
    suffix: &str,
    summary: &Value,
) -> Result<StepOutcome, DriverError> {
    let bytes = serde_json::to_vec_pretty(summary).unwrap_or_default();
    let name = evidence.unique_name(
        ArtifactGroup::Traces,
        &format!("{}-{suffix}", step.evidence_name()),
        "json",
    );
    let a = evidence
        .write(ArtifactGroup::Traces, &name, &bytes, Some(step.index + 1))
        .map_err(|e| DriverError::new("web.evidence.write", e.to_string()))?;
    Ok(StepOutcome {
        artifacts: a.into_iter().collect(),
        ..Default::default()
    })
}

fn scratch(evidence: &Evidence, base: &str) -> Result<PathBuf, DriverError> {
    for i in 1..100 {
        let name = if i == 1 {
            base.to_string()
        } else {
            format!("{base}-{i}")
        };
        if let Ok(d) = evidence.scratch_dir(&name) {
            return Ok(d);
        }
    }
    Err(DriverError::new(
        "web.evidence.write",
        "no scratch directory available",
    ))
}

// -------------------------------------------------------- performanceTrace

/// `performanceTrace`: records the page for [`TRACE_WINDOW_MS`] (never
/// reloads it), streams the raw trace into a scratch file, publishes a
/// summary to `traces` and deletes the raw trace.
pub async fn performance_trace(
    page: &Page,
    evidence: &Evidence,
    step: &Step,
    deadline: Deadline,
) -> Result<StepOutcome, DriverError> {
    let dir = scratch(evidence, &format!("trace-step{}", step.index + 1))?;
    let r = trace_into(page, &dir, deadline).await;
    let r = r.and_then(|(raw, window, loss)| {
        let events = read_trace(&raw).map_err(fail("web.trace.failed"))?;
        let mut s = summarize_trace(&events);
        s["windowMs"] = json!(window);
        s["dataLoss"] = json!(loss);
        publish_summary(evidence, step, "trace-summary", &s).map(|mut o| {
            o.detail = Some(format!(
                "{} trace events in {window} ms, {} long task(s)",
                s["eventCount"], s["longTasks"]["count"]
            ));
            o
        })
    });
    let _ = std::fs::remove_dir_all(&dir);
    r
}

async fn trace_into(
    page: &Page,
    dir: &Path,
    deadline: Deadline,
) -> Result<(PathBuf, u64, bool), DriverError> {
    let cdp = page.sh.cdp.clone();
    let left = deadline.remaining().as_millis() as u64;
    // Keep time for collecting: at most a third of what is left.
    let window = TRACE_WINDOW_MS.min(left / 3).max(50);
    let mut tap = page.sh.tap(&["Tracing.tracingComplete"]);
    cdp.call(
        None,
        "Tracing.start",
        json!({ "transferMode": "ReturnAsStream", "streamFormat": "json",
            "traceConfig": { "recordMode": "recordUntilFull", "traceBufferSizeInKb": 32768,
                "includedCategories": TRACE_CATEGORIES } }),
    )
    .await
    .map_err(|e| DriverError::new("web.trace.failed", format!("Tracing.start: {e}")))?;
    Deadline::after_ms(window).min(deadline).sleep().await;
    let ended = cdp.call(None, "Tracing.end", json!({})).await;
    ended.map_err(|e| DriverError::new("web.trace.failed", format!("Tracing.end: {e}")))?;
    let ev = loop {
        match deadline.run(tap.rx.recv()).await {
            Some(Some(ev)) if ev.session.is_none() => break ev,
            Some(Some(_)) => continue,
            _ => {
                return Err(DriverError::new(
                    "web.trace.timeout",
                    "the trace was not handed over before the step deadline",
                ))
            }
        }
    };
    let loss = ev.params["dataLossOccurred"].as_bool().unwrap_or(false);
    let handle = ev.params["stream"].as_str().unwrap_or("").to_string();
    let raw = dir.join("raw.trace.json");
    let r = read_stream(page, &handle, &raw, MAX_TRACE_BYTES, deadline).await;
    let _ = cdp
        .call(None, "IO.close", json!({ "handle": handle }))
        .await;
    r?;
    Ok((raw, window, loss))
}

async fn read_stream(
    page: &Page,
    handle: &str,
    to: &Path,
    cap: u64,
    deadline: Deadline,
) -> Result<(), DriverError> {
    use base64::Engine;
    let w = |e: std::io::Error| DriverError::new("web.evidence.write", e.to_string());
    let mut f = qa_core::evidence::create_private_file(to)
        .map_err(|e| DriverError::new("web.evidence.write", e.to_string()))?;
    let mut written = 0u64;
    loop {
        let bound = deadline.remaining().max(Duration::from_millis(50));
        let r = page
            .sh
            .cdp
            .call_with_timeout(
                None,
                "IO.read",
                json!({ "handle": handle, "size": 1 << 20 }),
                bound,
            )
            .await
            .map_err(|e| DriverError::new("web.trace.failed", format!("IO.read: {e}")))?;
        let data = r["data"].as_str().unwrap_or("");
        let bytes = if r["base64Encoded"] == true {
            base64::engine::general_purpose::STANDARD
                .decode(data)
                .map_err(|e| DriverError::new("web.trace.failed", e.to_string()))?
        } else {
            data.as_bytes().to_vec()
        };
        written += bytes.len() as u64;
        if written > cap {
            drop(f);
            let _ = std::fs::remove_file(to);
            return Err(DriverError::new(
                "web.trace.too_large",
                format!("the raw trace exceeded {cap} bytes; it was deleted"),
            ));
        }
        f.write_all(&bytes).map_err(w)?;
        if r["eof"] == true {
            return Ok(());
        }
        if deadline.expired() {
            return Err(DriverError::new(
                "web.trace.timeout",
                "the trace was not read before the step deadline",
            ));
        }
    }
}

fn read_trace(p: &Path) -> Result<Vec<Value>, String> {
    let f = std::fs::File::open(p).map_err(|e| e.to_string())?;
    let v: Value =
        serde_json::from_reader(std::io::BufReader::new(f)).map_err(|e| e.to_string())?;
    Ok(match v {
        Value::Array(a) => a,
        Value::Object(mut o) => match o.remove("traceEvents") {
            Some(Value::Array(a)) => a,
            _ => Vec::new(),
        },
        _ => Vec::new(),
    })
}

const SCRIPT: &[&str] = &[
    "EvaluateScript",
    "FunctionCall",
    "RunMicrotasks",
    "v8.compile",
];
const STYLE: &[&str] = &["UpdateLayoutTree", "RecalculateStyles"];
const LAYOUT: &[&str] = &["Layout"];
const PAINT: &[&str] = &["Paint", "PrePaint", "Layerize", "PaintImage"];

/// Summarizes trace events: counts by name (top 25), long tasks
/// (`RunTask` over [`LONG_TASK_MS`] on renderer main threads) and summed
/// durations of script, style, layout and paint events (complete events on
/// renderer main threads; nested events are not deduplicated).
pub fn summarize_trace(events: &[Value]) -> Value {
    let main: std::collections::HashSet<(i64, i64)> = events
        .iter()
        .filter(|e| {
            e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"] == "CrRendererMain"
        })
        .map(|e| {
            (
                e["pid"].as_i64().unwrap_or(0),
                e["tid"].as_i64().unwrap_or(0),
            )
        })
        .collect();
    let mut counts: HashMap<&str, u64> = HashMap::new();
    let (mut long_n, mut long_max, mut long_total) = (0u64, 0f64, 0f64);
    let mut sums = [0f64; 4];
    let mut n = 0u64;
    for e in events {
        let Some(name) = e["name"].as_str() else {
            continue;
        };
        if e["ph"] == "M" {
            continue;
        }
        n += 1;
        *counts.entry(name).or_insert(0) += 1;
        let on_main = main.contains(&(
            e["pid"].as_i64().unwrap_or(0),
            e["tid"].as_i64().unwrap_or(0),
        ));
        if e["ph"] != "X" || !on_main {
            continue;
        }
        let ms = e["dur"].as_f64().unwrap_or(0.0) / 1000.0;
        if name == "RunTask" && ms > LONG_TASK_MS {
            long_n += 1;
            long_total += ms;
            long_max = long_max.max(ms);
        }
        for (i, set) in [SCRIPT, STYLE, LAYOUT, PAINT].iter().enumerate() {
            if set.contains(&name) {
                sums[i] += ms;
            }
        }
    }
    let mut top: Vec<(&str, u64)> = counts.into_iter().collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    top.truncate(25);
    let r = |x: f64| (x * 10.0).round() / 10.0;
    json!({
        "eventCount": n,
        "rendererMainThreads": main.len(),
        "topEvents": top.iter().map(|(k, v)| json!({ "name": k, "count": v })).collect::<Vec<_>>(),
        "longTasks": { "thresholdMs": LONG_TASK_MS, "count": long_n, "maxMs": r(long_max), "totalMs": r(long_total) },
        "durationsMs": { "scripting": r(sums[0]), "style": r(sums[1]), "layout": r(sums[2]), "paint": r(sums[3]) },
    })
}

// ------------------------------------------------------------- heapSummary

/// `heapSummary`: takes a heap snapshot of the page (streamed into a
/// scratch file, capped at [`MAX_HEAP_BYTES`]), publishes a summary (total
/// self size, node count, top 20 constructors by self size, plus
/// `Runtime.getHeapUsage` and `Memory.getDOMCounters`) and deletes the raw
/// snapshot.
pub async fn heap_summary(
    page: &Page,
    evidence: &Evidence,
    step: &Step,
    deadline: Deadline,
) -> Result<StepOutcome, DriverError> {
    let dir = scratch(evidence, &format!("heap-step{}", step.index + 1))?;
    let raw = dir.join("raw.heapsnapshot");
    let r = snapshot_into(page, &raw, deadline).await;
    let r = match r {
        Ok(()) => {
            let (usage, dom) = tokio::join!(
                page.call("Runtime.getHeapUsage", json!({})),
                page.call("Memory.getDOMCounters", json!({})),
            );
            summarize_heap_file(&raw)
                .map_err(fail("web.heap.failed"))
                .and_then(|mut s| {
                    s["heapUsage"] = usage.unwrap_or(Value::Null);
                    s["domCounters"] = dom.unwrap_or(Value::Null);
                    publish_summary(evidence, step, "heap-summary", &s).map(|mut o| {
                        o.detail = Some(format!(
                            "{} heap nodes, {} bytes self size",
                            s["nodeCount"], s["totalSelfSize"]
                        ));
                        o
                    })
                })
        }
        Err(e) => Err(e),
    };
    let _ = std::fs::remove_dir_all(&dir);
    r
}

async fn snapshot_into(page: &Page, to: &Path, deadline: Deadline) -> Result<(), DriverError> {
    let w = |e: std::io::Error| DriverError::new("web.evidence.write", e.to_string());
    let mut f = qa_core::evidence::create_private_file(to)
        .map_err(|e| DriverError::new("web.evidence.write", e.to_string()))?;
    let mut tap = page.sh.tap(&["HeapProfiler.addHeapSnapshotChunk"]);
    let _ = page.call("HeapProfiler.enable", json!({})).await;
    let bound = deadline.remaining().max(Duration::from_millis(50));
    let call = page.sh.cdp.call_with_timeout(
        Some(&page.session),
        "HeapProfiler.takeHeapSnapshot",
        json!({ "reportProgress": false, "captureNumericValue": false }),
        bound,
    );
    tokio::pin!(call);
    let mut written = 0u64;
    let mut too_large = false;
    let mut write = |ev: crate::cdp::CdpEvent, written: &mut u64| -> Result<(), DriverError> {
        if ev.session.as_deref() != Some(page.session.as_str()) || too_large {
            return Ok(());
        }
        let chunk = ev.params["chunk"].as_str().unwrap_or("");
        *written += chunk.len() as u64;
        if *written > MAX_HEAP_BYTES {
            too_large = true;
            return Ok(());
        }
        f.write_all(chunk.as_bytes()).map_err(w)
    };
    let result = loop {
        tokio::select! {
            r = &mut call => break r,
            Some(ev) = tap.rx.recv() => write(ev, &mut written)?,
        }
    };
    // Chunks sent before the answer may still be in the pump.
    page.sh.caught_up(deadline).await;
    while let Ok(ev) = tap.rx.try_recv() {
        write(ev, &mut written)?;
    }
    let _ = page.call("HeapProfiler.disable", json!({})).await;
    result.map_err(|e| DriverError::new("web.heap.failed", format!("takeHeapSnapshot: {e}")))?;
    if too_large {
        return Err(DriverError::new(
            "web.heap.too_large",
            format!("the heap snapshot exceeded {MAX_HEAP_BYTES} bytes; it was deleted"),
        ));
    }
    Ok(())
}

#[derive(Deserialize)]
struct Snapshot {
    snapshot: SnapshotHead,
    nodes: Vec<u64>,
    strings: Vec<String>,
}

#[derive(Deserialize)]
struct SnapshotHead {
    meta: SnapshotMeta,
}

#[derive(Deserialize)]
struct SnapshotMeta {
    node_fields: Vec<String>,
    node_types: Vec<Value>,
}

fn summarize_heap_file(p: &Path) -> Result<Value, String> {
    let f = std::fs::File::open(p).map_err(|e| e.to_string())?;
    let s: Snapshot =
        serde_json::from_reader(std::io::BufReader::new(f)).map_err(|e| e.to_string())?;
    summarize_heap(&s)
}

fn class_of<'a>(kind: &str, name: &'a str) -> Option<std::borrow::Cow<'a, str>> {
    use std::borrow::Cow;
    Some(match kind {
        "object" | "native" => Cow::Borrowed(name),
        "closure" => Cow::Borrowed("(closure)"),
        "string" | "concatenated string" | "sliced string" => Cow::Borrowed("(string)"),
        "array" => Cow::Borrowed("(array)"),
        "code" => Cow::Borrowed("(compiled code)"),
        "number" | "heap number" => Cow::Borrowed("(number)"),
        "hidden" | "object shape" => Cow::Borrowed("(system)"),
        "synthetic" => return None,
        other => Cow::Owned(format!("({other})")),
    })
}

fn summarize_heap(s: &Snapshot) -> Result<Value, String> {
    let fields = &s.snapshot.meta.node_fields;
    let idx = |n: &str| {
        fields
            .iter()
            .position(|f| f == n)
            .ok_or(format!("no {n} field"))
    };
    let (ti, ni, si) = (idx("type")?, idx("name")?, idx("self_size")?);
    let types: Vec<String> = s
        .snapshot
        .meta
        .node_types
        .first()
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|t| t.as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default();
    let width = fields.len().max(1);
    let mut by: HashMap<String, (u64, u64)> = HashMap::new();
    let (mut total, mut count) = (0u64, 0u64);
    for node in s.nodes.chunks_exact(width) {
        let kind = types
            .get(node[ti] as usize)
            .map(String::as_str)
            .unwrap_or("");
        let name = s
            .strings
            .get(node[ni] as usize)
            .map(String::as_str)
            .unwrap_or("");
        let size = node[si];
        count += 1;
        total += size;
        if let Some(c) = class_of(kind, name) {
            let c: String = c.chars().take(120).collect();
            let e = by.entry(c).or_insert((0, 0));
            e.0 += 1;
            e.1 += size;
        }
    }
    let mut top: Vec<(String, (u64, u64))> = by.into_iter().collect();
    top.sort_by(|a, b| b.1 .1.cmp(&a.1 .1).then(a.0.cmp(&b.0)));
    top.truncate(20);
    Ok(json!({
        "nodeCount": count,
        "totalSelfSize": total,
        "topConstructors": top.iter().map(|(k, (n, sz))| json!({ "name": k, "count": n, "selfSize": sz })).collect::<Vec<_>>(),
    }))
}

// -------------------------------------------------------------- lighthouse

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Why `lighthouse` cannot run here: always a BLOCKED error (the driver
/// never fakes an audit).
pub fn lighthouse_missing() -> MissingCapability {
    match on_path("lighthouse") {
        None => MissingCapability {
            id: "lighthouse".into(),
            reason: "the lighthouse step needs the Lighthouse CLI, which is not on PATH".into(),
            remediation: "npm install -g lighthouse (then rerun)".into(),
        },
        Some(p) => MissingCapability {
            id: "lighthouse".into(),
            reason: format!(
                "a Lighthouse CLI is installed ({}) but the browser/cdp driver does not run it yet; no audit was run",
                p.display()
            ),
            remediation: "run lighthouse by hand against the target, or drop the lighthouse step".into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_summary_counts_long_tasks_on_the_main_thread() {
        let ev = vec![
            json!({ "ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": { "name": "CrRendererMain" } }),
            json!({ "ph": "X", "name": "RunTask", "pid": 1, "tid": 2, "dur": 80_000 }),
            json!({ "ph": "X", "name": "RunTask", "pid": 1, "tid": 2, "dur": 10_000 }),
            json!({ "ph": "X", "name": "RunTask", "pid": 9, "tid": 9, "dur": 90_000 }),
            json!({ "ph": "X", "name": "FunctionCall", "pid": 1, "tid": 2, "dur": 70_000 }),
            json!({ "ph": "X", "name": "Layout", "pid": 1, "tid": 2, "dur": 2_000 }),
        ];
        let s = summarize_trace(&ev);
        assert_eq!(s["eventCount"], 5);
        assert_eq!(s["longTasks"]["count"], 1);
        assert_eq!(s["longTasks"]["maxMs"], 80.0);
        assert_eq!(s["durationsMs"]["scripting"], 70.0);
        assert_eq!(s["durationsMs"]["layout"], 2.0);
        assert_eq!(s["topEvents"][0]["name"], "RunTask");
    }

    #[test]
    fn heap_summary_groups_by_constructor() {
        let s: Snapshot = serde_json::from_value(json!({
            "snapshot": { "meta": {
                "node_fields": ["type", "name", "id", "self_size"],
                "node_types": [["hidden", "array", "string", "object", "code", "closure", "synthetic"]] } },
            "nodes": [3, 0, 1, 100,  3, 0, 2, 50,  3, 1, 3, 10,  5, 2, 4, 30,  6, 3, 5, 0],
            "strings": ["Widget", "Object", "f", "(root)"]
        }))
        .unwrap();
        let v = summarize_heap(&s).unwrap();
        assert_eq!(v["nodeCount"], 5);
        assert_eq!(v["totalSelfSize"], 190);
        assert_eq!(
            v["topConstructors"][0],
            json!({ "name": "Widget", "count": 2, "selfSize": 150 })
        );
        assert_eq!(v["topConstructors"][1]["name"], "(closure)");
    }

    #[test]
    fn lighthouse_is_blocked_with_the_install_command() {
        let m = lighthouse_missing();
        assert_eq!(m.id, "lighthouse");
        if on_path("lighthouse").is_none() {
            assert_eq!(m.remediation, "npm install -g lighthouse (then rerun)");
        }
    }
}
