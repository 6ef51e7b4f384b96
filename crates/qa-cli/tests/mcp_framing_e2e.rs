//! `ui-qa mcp` answers every line a client sends: input that is not a JSON
//! value within the server's limits (invalid UTF-8, 100k-deep nesting, a
//! 200 MB line, a truncated object) gets a JSON-RPC parse error at once,
//! and the server goes on to answer the next request. Before, the SDK
//! dropped such lines without a word and the client waited for its own
//! timeout.

mod common;

use common::bin;
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// Bound on one answer: generous, never reached when the server answers.
const ANSWER_WITHIN: Duration = Duration::from_secs(120);

#[test]
fn every_line_gets_an_answer_even_when_it_cannot_be_read() {
    let ws = tempfile::tempdir().unwrap();
    let mut child = Command::new(bin())
        .arg("mcp")
        .arg("--workspace")
        .arg(ws.path().join("ws"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, answers) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let next = || -> Value {
        let line = answers
            .recv_timeout(ANSWER_WITHIN)
            .expect("no answer from ui-qa mcp");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    };
    let parse_error = |what: &str, v: Value| {
        assert_eq!(v["jsonrpc"], "2.0", "{what}: {v}");
        assert!(v["id"].is_null(), "{what}: {v}");
        assert_eq!(v["error"]["code"], -32700, "{what}: {v}");
    };

    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\xfe\"}\n")
        .unwrap();
    stdin.flush().unwrap();
    parse_error("invalid UTF-8", next());

    let deep = "[".repeat(100_000) + &"]".repeat(100_000) + "\n";
    stdin.write_all(deep.as_bytes()).unwrap();
    stdin.flush().unwrap();
    parse_error("100k-deep", next());

    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":2,\n")
        .unwrap();
    stdin.flush().unwrap();
    parse_error("truncated", next());

    // 200 MB on one line, written in pieces: refused without being kept.
    let chunk = vec![b'7'; 1 << 20];
    stdin.write_all(b"[").unwrap();
    for _ in 0..200 {
        stdin.write_all(&chunk).unwrap();
    }
    stdin.write_all(b"]\n").unwrap();
    stdin.flush().unwrap();
    let v = next();
    parse_error("200 MB", v.clone());
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("longer than"),
        "{v}"
    );

    // The server is still there and answers a real request.
    let init = serde_json::json!({
        "jsonrpc": "2.0", "id": 7, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": { "name": "framing-test", "version": "1" }
        }
    });
    stdin.write_all(format!("{init}\n").as_bytes()).unwrap();
    stdin.flush().unwrap();
    let v = next();
    assert_eq!(v["id"], 7, "{v}");
    assert!(v["result"]["serverInfo"].is_object(), "{v}");

    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}
