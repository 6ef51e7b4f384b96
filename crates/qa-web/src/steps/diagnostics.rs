//! DevTools diagnostics steps: `performanceTrace` (a bounded trace, only
//! its summary kept), `heapSummary` (a heap snapshot, only its summary
//! kept) and `lighthouse` (BLOCKED: not run by this driver).

use super::scratch;
use crate::cdp::commands::{
    Command, GetDomCounters, GetHeapUsage, HeapProfilerDisable, HeapProfilerEnable, IoClose,
    IoRead, TakeHeapSnapshot, TraceConfig, TracingEnd, TracingStart,
};
use crate::cdp::events::{HeapSnapshotChunk, TracingComplete};
use crate::cdp::{CdpEvent, Event};
use crate::codes::WebCode;
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
const TRACE_WINDOW_MS: u64 = 1000;
/// Raw trace cap (bytes); over it the step fails and the raw file is deleted.
const MAX_TRACE_BYTES: u64 = 64 << 20;
/// Raw heap snapshot cap (bytes).
const MAX_HEAP_BYTES: u64 = 256 << 20;
/// A task longer than this counts as a long task.
const LONG_TASK_MS: f64 = 50.0;

const TRACE_CATEGORIES: &[&str] = &[
    "devtools.timeline",
    "disabled-by-default-devtools.timeline",
    "toplevel",
    "v8.execute",
    "blink.user_timing",
    "loading",
];

fn fail(code: WebCode) -> impl Fn(String) -> DriverError {
    move |m| DriverError::new(code, m)
}

fn write_failed(e: std::io::Error) -> DriverError {
    DriverError::new(WebCode::EvidenceWrite, e.to_string())
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
    evidence.write(ArtifactGroup::Traces, &name, &bytes, Some(step.index + 1))?;
    Ok(StepOutcome::default())
}

// -------------------------------------------------------- performanceTrace

/// `performanceTrace`: records the page for [`TRACE_WINDOW_MS`] (never
/// reloads it), streams the raw trace into a scratch file, publishes a
/// summary to `traces` and deletes the raw trace.
pub(super) async fn performance_trace(
    page: &Page,
    evidence: &Evidence,
    step: &Step,
    deadline: Deadline,
) -> Result<StepOutcome, DriverError> {
    let dir = scratch(evidence, &format!("trace-step{}", step.index + 1))?;
    let r = trace_into(page, &dir, deadline).await;
    let r = r.and_then(|(raw, window, loss)| {
        let events = read_trace(&raw).map_err(fail(WebCode::TraceFailed))?;
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
    if page.sh.attached() {
        // Tracing is browser-wide: it would record the user's other tabs.
        return Err(DriverError::new(
            WebCode::TraceFailed,
            "a performance trace records the whole browser, and this run drives a browser ui-qa did not start (its other tabs are the user's)",
        )
        .with_remediation("run the flow with a browser ui-qa launches (drop target.browser) to trace it"));
    }
    let cdp = page.sh.cdp.clone();
    let left = deadline.remaining().as_millis() as u64;
    // Keep time for collecting: at most a third of what is left.
    let window = TRACE_WINDOW_MS.min(left / 3).max(50);
    let mut tap = page.sh.tap(&[Event::TracingTracingComplete]);
    let failed = |what: &str, e: crate::cdp::CdpError| {
        DriverError::new(WebCode::TraceFailed, format!("{what}: {e}"))
    };
    let start = TracingStart {
        transfer_mode: "ReturnAsStream",
        stream_format: "json",
        trace_config: TraceConfig {
            record_mode: "recordUntilFull",
            trace_buffer_size_in_kb: 32768,
            included_categories: TRACE_CATEGORIES,
        },
    };
    cdp.call_typed(None, &start)
        .await
        .map_err(|e| failed(TracingStart::METHOD, e))?;
    Deadline::after_ms(window).min(deadline).sleep().await;
    cdp.call_typed(None, &TracingEnd {})
        .await
        .map_err(|e| failed(TracingEnd::METHOD, e))?;
    let ev = loop {
        match deadline.run(tap.rx.recv()).await {
            Some(Some(ev)) if ev.session.is_none() => break ev,
            Some(Some(_)) => continue,
            _ => {
                return Err(DriverError::new(
                    WebCode::TraceTimeout,
                    "the trace was not handed over before the step deadline",
                ))
            }
        }
    };
    let done: TracingComplete = ev.params();
    let raw = dir.join("raw.trace.json");
    let r = read_stream(page, &done.stream, &raw, MAX_TRACE_BYTES, deadline).await;
    let close = IoClose {
        handle: done.stream,
    };
    let _ = cdp.call_typed(None, &close).await;
    r?;
    Ok((raw, window, done.data_loss_occurred))
}

async fn read_stream(
    page: &Page,
    handle: &str,
    to: &Path,
    cap: u64,
    deadline: Deadline,
) -> Result<(), DriverError> {
    use base64::Engine;
    let mut f = qa_core::evidence::create_private_file(to)?;
    let mut written = 0u64;
    let read = IoRead {
        handle: handle.to_string(),
        size: 1 << 20,
    };
    loop {
        let bound = deadline.remaining().max(Duration::from_millis(50));
        let r = page
            .sh
            .cdp
            .call_typed_with_timeout(None, &read, bound)
            .await
            .map_err(|e| {
                DriverError::new(WebCode::TraceFailed, format!("{}: {e}", IoRead::METHOD))
            })?;
        let bytes = if r.base64_encoded {
            base64::engine::general_purpose::STANDARD
                .decode(&r.data)
                .map_err(|e| DriverError::new(WebCode::TraceFailed, e.to_string()))?
        } else {
            r.data.into_bytes()
        };
        written += bytes.len() as u64;
        if written > cap {
            drop(f);
            let _ = std::fs::remove_file(to);
            return Err(DriverError::new(
                WebCode::TraceTooLarge,
                format!("the raw trace exceeded {cap} bytes; it was deleted"),
            ));
        }
        f.write_all(&bytes).map_err(write_failed)?;
        if r.eof {
            return Ok(());
        }
        if deadline.expired() {
            return Err(DriverError::new(
                WebCode::TraceTimeout,
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
pub(super) fn summarize_trace(events: &[Value]) -> Value {
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
pub(super) async fn heap_summary(
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
            let (usage, dom) =
                tokio::join!(page.send(&GetHeapUsage {}), page.send(&GetDomCounters {}));
            summarize_heap_file(&raw)
                .map_err(fail(WebCode::HeapFailed))
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
    let mut f = qa_core::evidence::create_private_file(to)?;
    let mut tap = page.sh.tap(&[Event::HeapProfilerAddHeapSnapshotChunk]);
    let _ = page.send(&HeapProfilerEnable {}).await;
    let bound = deadline.remaining().max(Duration::from_millis(50));
    let take = TakeHeapSnapshot {
        report_progress: false,
        capture_numeric_value: false,
    };
    let call = page
        .sh
        .cdp
        .call_typed_with_timeout(Some(&page.session), &take, bound);
    tokio::pin!(call);
    let mut written = 0u64;
    let mut too_large = false;
    let mut write = |ev: CdpEvent, written: &mut u64| -> Result<(), DriverError> {
        if ev.session.as_deref() != Some(page.session.as_str()) || too_large {
            return Ok(());
        }
        let chunk = ev.params::<HeapSnapshotChunk>().chunk;
        *written += chunk.len() as u64;
        if *written > MAX_HEAP_BYTES {
            too_large = true;
            return Ok(());
        }
        f.write_all(chunk.as_bytes()).map_err(write_failed)
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
    let _ = page.send(&HeapProfilerDisable {}).await;
    result.map_err(|e| DriverError::new(WebCode::HeapFailed, format!("takeHeapSnapshot: {e}")))?;
    if too_large {
        return Err(DriverError::new(
            WebCode::HeapTooLarge,
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

/// Why `lighthouse` cannot run here: the browser/cdp driver does not run
/// the Lighthouse CLI, installed or not (the driver never fakes an audit),
/// so installing it would not help.
pub(crate) fn lighthouse_missing() -> MissingCapability {
    let found = match qa_core::host::which("lighthouse") {
        Some(p) => format!(
            " (a Lighthouse CLI is installed at {}, unused)",
            p.display()
        ),
        None => String::new(),
    };
    MissingCapability {
        id: "lighthouse".into(),
        reason: format!(
            "the browser/cdp driver does not run Lighthouse audits{found}; no audit was run"
        ),
        remediation: "run lighthouse by hand against the target URL, or drop the lighthouse step"
            .into(),
    }
}

/// `lighthouse`: always BLOCKED, with what is missing.
pub(super) fn lighthouse_blocked() -> DriverError {
    DriverError::blocked(WebCode::LighthouseUnavailable, lighthouse_missing())
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
    fn lighthouse_is_blocked_without_suggesting_an_install_that_would_not_help() {
        let m = lighthouse_missing();
        assert_eq!(m.id, "lighthouse");
        assert!(!m.remediation.contains("install"), "{}", m.remediation);
        assert!(m.reason.contains("does not run Lighthouse"), "{}", m.reason);
    }
}
