//! The result document on the wire, pinned per backend: the README's
//! example flows run through the binary (real Chromium, a real PTY, GNOME
//! Calculator under an owned Xvfb) and their `--json` output, with volatile
//! fields redacted, must match the committed snapshots. A change to a field
//! name, an enum's spelling or the shape of a section fails here.
//!
//! Redacted: ids, times, durations, paths and digests; the number of
//! verdicts an assertion needed; process ids (also inside messages) and
//! loopback ports; a desktop capture's window; the processes a browser
//! happened to start (cleanup keeps the distinct labels and that each
//! ended); notes about requests the browser makes on its own.

mod common;

use common::{root, run_json};
use serde_json::{json, Value};

/// Replaces what differs from run to run.
fn normalize(mut v: Value) -> Value {
    redact(&mut v);
    // Cleanup: which kinds of process were ended, not how many or their pids.
    // Whether the browser's own children are still there to be ended
    // depends on how far the browser got in closing itself (it is asked to
    // close first), so they are not pinned.
    if let Some(ended) = v["cleanup"]["ended"].as_array() {
        let mut labels: Vec<String> = ended
            .iter()
            .filter_map(|e| e["label"].as_str())
            .filter(|l| *l != "chromium descendant")
            .map(str::to_string)
            .collect();
        labels.sort();
        labels.dedup();
        v["cleanup"]["ended"] = json!(labels);
    }
    // The browser's own background traffic (update checks, sign-in) is
    // timing-dependent; the notes ui-qa writes about it are not pinned.
    // Nor are the notes of a video encoder that a loaded machine left
    // behind (frames left out, stopped near the cleanup deadline): they
    // report the machine's speed, not the result's shape.
    if let Some(obs) = v["observations"].as_array_mut() {
        obs.retain(|o| {
            let m = o["message"].as_str().unwrap_or("");
            !(m.contains("google")
                || m.contains("gvt1")
                || m.contains("blocked")
                || (m.starts_with("video ") && m.contains("encoder was")))
        });
    }
    v
}

fn redact(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (k, x) in map.iter_mut() {
                match k.as_str() {
                    "runId" | "startedAt" | "startedMs" | "atMs" | "durationMs" | "evidenceDir"
                    | "path" | "uri" | "sha256" | "bytes" | "attempts" | "pid" => {
                        *x = json!("[redacted]")
                    }
                    _ => redact(x),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(redact),
        // A desktop capture's window: its id, owner and size (GTK's
        // layout can differ by a pixel between runs) are not pinned.
        Value::String(s) if s.starts_with("window 0x") => *s = "window [redacted]".into(),
        Value::String(s) => {
            *s = digits_after(s, "(pid ", "[pid]");
            *s = digits_after(s, "127.0.0.1:", "[port]");
            // The first free X display: another Xvfb (a concurrent run)
            // moves it.
            *s = digits_after(s, "virtual display :", "[n]");
        }
        _ => {}
    }
}

/// Replaces the run of digits after each `marker` in `s` with `with`
/// (process ids and loopback ports inside messages).
fn digits_after(s: &str, marker: &str, with: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find(marker) {
        let (head, tail) = rest.split_at(at + marker.len());
        out.push_str(head);
        let end = tail
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(tail.len());
        if end > 0 {
            out.push_str(with);
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

#[test]
fn browser_result_is_pinned() {
    let ws = tempfile::tempdir().unwrap();
    let (code, r) = run_json(
        &root().join("examples/web-form.jsonc"),
        ws.path(),
        &[],
        |_| {},
    );
    assert_eq!(code, 0, "{r:#}");
    insta::assert_json_snapshot!("result_browser", normalize(r));
}

#[test]
fn terminal_result_is_pinned() {
    let ws = tempfile::tempdir().unwrap();
    let (code, r) = run_json(
        &root().join("examples/tui-hello.jsonc"),
        ws.path(),
        &[],
        |_| {},
    );
    assert_eq!(code, 0, "{r:#}");
    insta::assert_json_snapshot!("result_terminal", normalize(r));
}

#[test]
fn desktop_result_is_pinned() {
    let ws = tempfile::tempdir().unwrap();
    let (code, r) = run_json(
        &root().join("examples/desktop-calculator.jsonc"),
        ws.path(),
        &["--virtual-display"],
        |c| {
            c.env_remove("DISPLAY").env_remove("WAYLAND_DISPLAY");
        },
    );
    assert_eq!(code, 0, "{r:#}");
    insta::assert_json_snapshot!("result_desktop", normalize(r));
}
