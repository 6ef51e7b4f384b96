//! `console.jsonl` and `network.jsonl`: what the page logged and requested
//! (method, origin + path, status, type, timing; never headers or bodies).

use super::publish;
use crate::shared::Shared;
use qa_core::{ArtifactGroup, Evidence};
use serde_json::json;

/// Writes both logs (a `{"dropped":N}` line ends a log that hit its bound).
/// Best effort: a log that cannot be written is left out.
pub(crate) fn write_logs(sh: &Shared, evidence: &Evidence) {
    let (console, network, dropped) = {
        let st = sh.st();
        let c: Vec<String> = st
            .console
            .iter()
            .map(|e| {
                json!({ "atMs": e.at_ms, "level": e.level.as_str(), "source": e.source, "text": e.text, "containment": e.containment }).to_string()
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
    for (base, text) in [
        ("console", jsonl(console, dropped)),
        ("network", jsonl(network, dropped)),
    ] {
        let _ = publish(
            evidence,
            ArtifactGroup::Logs,
            base,
            "jsonl",
            text.as_bytes(),
            None,
        );
    }
}

/// JSON Lines: every record, then `{"dropped":N}` when the bound was hit,
/// each ended by a newline (an empty log is an empty file).
fn jsonl(records: Vec<String>, dropped: u64) -> String {
    let mut out = String::new();
    for r in records {
        out.push_str(&r);
        out.push('\n');
    }
    if dropped > 0 {
        out.push_str(&format!("{{\"dropped\":{dropped}}}\n"));
    }
    out
}

/// Publishes `target.server`'s output as `logs/server.log` (withheld if it
/// holds a secret, like any artifact).
pub(crate) fn server_log(evidence: &Evidence, bytes: &[u8]) {
    if bytes.is_empty() {
        return;
    }
    let _ = publish(evidence, ArtifactGroup::Logs, "server", "log", bytes, None);
}

#[cfg(test)]
mod tests {
    use super::jsonl;

    #[test]
    fn every_line_ends_with_a_newline() {
        assert_eq!(jsonl(vec![], 0), "");
        assert_eq!(jsonl(vec!["{}".into(), "{}".into()], 0), "{}\n{}\n");
        assert_eq!(jsonl(vec!["{}".into()], 3), "{}\n{\"dropped\":3}\n");
    }
}
