//! End to end through the `ui-qa` binary: a terminal program prints encoded
//! forms of a secret (base64 of it, base64 of HTTP Basic credentials that
//! contain it, its URL and hex encodings), a failing assertion quotes those
//! lines in its reason, and no encoding of the secret may reach stdout
//! (`--json`), stderr, the JUnit report or any file of the run directory.

mod common;

use common::{b64, bin, encodings_of, hex, percent, walk, write};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const SECRET: &str = "Kiwi7/Mango+42&Plum";
const SECRET_VAR: &str = "E2E_ENCODED_TOKEN";

fn encodings() -> Vec<String> {
    encodings_of(SECRET)
}

#[track_caller]
fn assert_clean(what: &str, bytes: &[u8]) {
    for e in encodings() {
        assert!(
            !bytes.windows(e.len()).any(|w| w == e.as_bytes()),
            "{what} contains {e:?}, an encoding of the secret:\n{}",
            String::from_utf8_lossy(bytes)
        );
    }
}

/// The flow: the program gets only encoded forms of the secret (as an app
/// that shows a token encoded would), prints them and exits; the capture
/// keeps the screen; the assertion fails and quotes the last lines.
fn flow(dir: &Path) -> PathBuf {
    let basic = b64(format!("user:{SECRET}").as_bytes());
    let script = r#"printf 'hex: %s\n' "$HEX"
printf 'b64: %s\n' "$B64"
printf 'auth: Basic %s\n' "$BASIC"
printf 'url: %s\n' "$URL"
printf 'DONE\n'"#;
    let js = |s: &str| serde_json::to_string(s).unwrap();
    write(
        dir,
        "encoded.jsonc",
        &format!(
            r#"{{ "name": "encoded secret", "viewport": {{ "cols": 100, "rows": 12 }},
                "target": {{ "command": {{ "argv": ["sh", "-c", {script}],
                    "env": {{ "HEX": {hex}, "B64": {b64}, "BASIC": {basic}, "URL": {url} }} }} }},
                "steps": [ {{ "action": "waitForText", "text": "DONE", "timeoutMs": 10000 }},
                           {{ "action": "capture" }},
                           {{ "action": "assertText", "text": "never printed", "timeoutMs": 3000 }} ] }}"#,
            script = js(script),
            hex = js(&hex(SECRET)),
            b64 = js(&b64(SECRET.as_bytes())),
            basic = js(&basic),
            url = js(&percent(SECRET)),
        ),
    )
}

#[test]
fn no_encoding_of_a_secret_leaves_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let flow = flow(dir.path());
    let junit = dir.path().join("junit.xml");
    let o = Command::new(bin())
        .args(["run", "--json", "--secret-env", SECRET_VAR, "--junit"])
        .arg(&junit)
        .arg("--workspace")
        .arg(dir.path().join("ws"))
        .arg(&flow)
        .env(SECRET_VAR, SECRET)
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    });
    assert_eq!(o.status.code(), Some(1), "{r:#}");
    assert_eq!(r["stage"], "step 3 assertText", "{r:#}");
    assert_clean("stdout (--json)", &o.stdout);
    assert_clean("stderr", &o.stderr);
    assert_clean("the JUnit report", &std::fs::read(&junit).unwrap());
    // The reason quotes the screen (redacted), so the encoded secret did take
    // the path this test guards.
    let reason = r["reason"].as_str().unwrap();
    assert!(reason.contains("DONE"), "{reason}");
    assert!(reason.contains("[REDACTED]"), "{reason}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("<failure "), "{xml}");

    // Evidence is kept: the capture (masked) and the replay are published.
    let run_dir = PathBuf::from(r["evidenceDir"].as_str().unwrap());
    for group in ["screenshots", "terminalCaptures", "videos"] {
        assert!(
            !r["artifacts"][group].as_array().unwrap().is_empty(),
            "no {group}: {r:#}"
        );
    }
    let files = walk(&run_dir);
    assert!(files.iter().any(|f| f.ends_with("result.json")));
    for f in files {
        assert_clean(&f.display().to_string(), &std::fs::read(&f).unwrap());
    }

    // Human output (the summary on stderr) too.
    let o = Command::new(bin())
        .args(["run", "--secret-env", SECRET_VAR, "--workspace"])
        .arg(dir.path().join("ws2"))
        .arg(&flow)
        .env(SECRET_VAR, SECRET)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("DONE"), "the summary quotes the reason: {err}");
    assert_clean("human stdout", &o.stdout);
    assert_clean("human stderr", &o.stderr);
}

/// A secret split across two elements (`<span>hunter2-TOP</span>
/// <span>SECRET-9876</span>`) is in no single accessible name: the
/// accessibility snapshots (asked for, and taken on failure) and the report
/// redact it across the names, as the pictures mask it.
#[test]
fn a_secret_split_across_elements_leaves_no_text_evidence() {
    let d = tempfile::tempdir().unwrap();
    let site = d.path().join("site");
    std::fs::create_dir(&site).unwrap();
    std::fs::write(
        site.join("index.html"),
        r#"<!doctype html><title>split</title><main><h1>Account</h1>
<p>Your key: <span>hunter2-TOP</span><span>SECRET-9876</span></p><button>Rotate</button></main>"#,
    )
    .unwrap();
    let flow = write(
        d.path(),
        "split.jsonc",
        r#"{"target":{"serve":"site","url":"/index.html"},
            "steps":[{"action":"snapshotAccessibility","name":"page"},
                     {"action":"assertVisible","locator":{"role":"button","name":"Nowhere"},"timeoutMs":300}]}"#,
    );
    let ws = d.path().join("ws");
    let o = Command::new(bin())
        .args(["run", "--json", "--video", "off", "--workspace"])
        .arg(&ws)
        .arg(&flow)
        .env("UI_QA_SECRET_SPLIT", "hunter2-TOPSECRET-9876")
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["status"], "FAILED", "{r:#}");
    let snapshots = r["artifacts"]["accessibilitySnapshots"].as_array().unwrap();
    assert_eq!(
        snapshots.len(),
        2,
        "the asked and the failure snapshot: {r:#}"
    );
    let run = PathBuf::from(r["evidenceDir"].as_str().unwrap());
    assert!(run.join("report.html").is_file());
    let mut checked = 0;
    for f in walk(&run) {
        let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
        for half in ["hunter2-TOP", "SECRET-9876"] {
            assert!(!text.contains(half), "{} shows {half}", f.display());
        }
        checked += 1;
    }
    assert!(checked > 3, "{checked} files");
    // The rest of the page is still there.
    let ax = std::fs::read_to_string(snapshots[0]["path"].as_str().unwrap()).unwrap();
    assert!(ax.contains("Rotate") && ax.contains("[REDACTED]"), "{ax}");
    for half in ["hunter2-TOP", "SECRET-9876"] {
        assert!(!String::from_utf8_lossy(&o.stdout).contains(half));
        assert!(!String::from_utf8_lossy(&o.stderr).contains(half));
    }
}

/// Every string value of `v` with its JSON pointer.
fn string_values(v: &Value, at: String, out: &mut Vec<(String, String)>) {
    match v {
        Value::String(s) => out.push((at, s.clone())),
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                string_values(x, format!("{at}/{i}"), out);
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                string_values(x, format!("{at}/{k}"), out);
            }
        }
        _ => {}
    }
}

/// A secret equal to a word of the result format itself — a field name
/// (`status`) or an enum value (`FAILED`) — never makes the result fall
/// back to its unredacted text: the program's output quoting the secret is
/// redacted in `--json` and `result.json`; where redacting would turn an
/// enum word into something unreadable, the details are withheld and the
/// result says so. The only places the word may stand are the format's own
/// keys and enum values.
#[test]
fn a_secret_equal_to_a_word_of_the_result_format_is_never_written_unredacted() {
    for (secret, withheld) in [("status", false), ("FAILED", true)] {
        let dir = tempfile::tempdir().unwrap();
        let flow = write(
            dir.path(),
            "word.jsonc",
            r#"{ "name": "format word", "viewport": { "cols": 80, "rows": 8 },
                 "target": { "command": { "argv": ["sh", "-c", "printf 'job %s here\\nDONE\\n' \"$WORD\""],
                                          "env": { "WORD": "${secret}" } } },
                 "steps": [ { "action": "waitForText", "text": "DONE", "timeoutMs": 10000 },
                            { "action": "assertText", "text": "never printed", "timeoutMs": 2000 } ] }"#
                .replace("${secret}", secret)
                .as_str(),
        );
        let (code, r) = common::run_json(
            &flow,
            &dir.path().join("ws"),
            &["--video", "off", "--secret-env", "E2E_FORMAT_WORD"],
            |c| {
                c.env("E2E_FORMAT_WORD", secret);
            },
        );
        assert_eq!(code, 1, "{secret}: {r:#}");
        // stdout is redacted once more as text: the word is nowhere in it.
        assert!(
            !r.to_string().contains(secret),
            "{secret}: --json shows the secret: {r:#}"
        );
        let run_dir = PathBuf::from(r["evidenceDir"].as_str().unwrap());
        let file: Value =
            serde_json::from_slice(&std::fs::read(run_dir.join("result.json")).unwrap()).unwrap();
        assert_eq!(file["status"], "FAILED", "{secret}");
        for (what, doc) in [("--json", &r), ("result.json", &file)] {
            let mut values = Vec::new();
            string_values(doc, String::new(), &mut values);
            for (at, s) in &values {
                if s.contains(secret) {
                    assert!(
                        s == secret && at.ends_with("/status"),
                        "{secret}: {what} {at} holds the secret unredacted: {s:?}"
                    );
                }
            }
            let reason = doc["reason"].as_str().unwrap_or("");
            assert!(
                reason.contains("job [REDACTED] here") && reason.contains("DONE"),
                "{secret}: {what}: the reason quotes the screen, redacted: {reason}"
            );
            let said_withheld = doc["observations"].as_array().unwrap().iter().any(|n| {
                n["kind"] == "evidenceWithheld"
                    && n["message"]
                        .as_str()
                        .unwrap()
                        .contains("result's details were withheld")
            });
            assert_eq!(said_withheld, withheld, "{secret}: {what}: {doc:#}");
        }
    }
}

/// `text` holds no 6 bytes in a row of `secret` (any piece of it, so no
/// prefix and no half of a split).
#[track_caller]
fn no_piece_of(secret: &str, what: &str, text: &str) {
    for i in 0..=secret.len() - 6 {
        let piece = &secret[i..i + 6];
        assert!(
            !text.contains(piece),
            "{what} shows {piece:?} of the secret:\n{text}"
        );
    }
}

/// The split secret of issue 44: in markup the page shows as one run of
/// text, whose pieces `inspect` joins with a space.
const SPLIT: &str = "hunter2-TOPSECRET-9876";

fn split_page(dir: &Path) {
    std::fs::write(
        dir.join("split.html"),
        r#"<!doctype html><title>split</title><main><h1>Account</h1>
<p>Your key: <b>hunter2-TOP</b>SECRET-9876</p>
<ul><li><input type="checkbox"> <span>hunter2-TOP</span><span>SECRET-9876</span></li></ul>
<button>Rotate</button></main>"#,
    )
    .unwrap();
}

/// A secret split across elements, whose pieces `inspect` joins with a
/// space (`Your key: hunter2-TOP SECRET-9876`, and an unnamed checkbox
/// `(in "hunter2-TOP SECRET-9876")`), is redacted in the printed tree and
/// in `--json`.
#[test]
fn inspect_redacts_a_secret_split_across_elements_and_joined_with_a_space() {
    let d = tempfile::tempdir().unwrap();
    split_page(d.path());
    let site = common::serve_dir(d.path());
    let url = format!("{}/split.html", site.base);
    for json in [false, true] {
        let mut c = Command::new(bin());
        c.arg("inspect");
        if json {
            c.arg("--json");
        }
        let o = c
            .arg(&url)
            .env("UI_QA_SECRET_SPLIT", SPLIT)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{err}");
        no_piece_of(SPLIT, "inspect", &out);
        no_piece_of(SPLIT, "inspect's stderr", &err);
        assert!(
            out.contains("Rotate") && out.contains("[REDACTED]") && out.contains("checkbox"),
            "{out}"
        );
    }
}

/// Filler, then a 33-byte secret straddling byte 200 of the element's text
/// (where names, texts and candidates are cut).
const CLIPPED: &str = "Zq8-hunter2-TOPSECRET-9876-abcdef";

fn filler() -> String {
    let f = "Filler words. ".repeat(20);
    f[..190].to_string()
}

/// A secret cut by the 200-byte clip leaves no start of it anywhere: the
/// accessibility snapshots (asked for and on failure), report.html,
/// result.json (the failing locator's candidates), `--json` and the human
/// output.
#[test]
fn a_secret_straddling_the_clip_leaves_no_start_of_it() {
    assert_eq!(CLIPPED.len(), 33);
    let d = tempfile::tempdir().unwrap();
    let site = d.path().join("site");
    std::fs::create_dir(&site).unwrap();
    let text = format!("{}{CLIPPED} and then some more words", filler());
    std::fs::write(
        site.join("index.html"),
        format!(
            r#"<!doctype html><title>clip</title><main><h1>Account</h1>
<p>{text}</p><button>{text}</button></main>"#
        ),
    )
    .unwrap();
    let flow = write(
        d.path(),
        "clip.jsonc",
        r#"{"target":{"serve":"site","url":"/index.html"},
            "steps":[{"action":"snapshotAccessibility","name":"page"},
                     {"action":"assertVisible","locator":{"role":"button","name":"Nowhere"},"timeoutMs":300}]}"#,
    );
    // `--json`, then the human output.
    for json in [true, false] {
        let ws = d.path().join(if json { "ws-json" } else { "ws-human" });
        let mut c = Command::new(bin());
        c.arg("run");
        if json {
            c.arg("--json");
        }
        let o = c
            .args(["--video", "off", "--workspace"])
            .arg(&ws)
            .arg(&flow)
            .env("UI_QA_SECRET_CLIPPED", CLIPPED)
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        no_piece_of(CLIPPED, "stdout", &out);
        no_piece_of(CLIPPED, "stderr", &err);
        if !json {
            // The human output lists the candidates.
            assert!(
                format!("{out}{err}").contains("Filler words."),
                "{out}\n{err}"
            );
            continue;
        }
        let r: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(r["status"], "FAILED", "{r:#}");
        let candidates = r["steps"][1]["failure"]["candidates"].to_string();
        assert!(candidates.contains("Filler words."), "{r:#}");
        let snapshots = r["artifacts"]["accessibilitySnapshots"].as_array().unwrap();
        assert_eq!(snapshots.len(), 2, "{r:#}");
        let ax = std::fs::read_to_string(snapshots[0]["path"].as_str().unwrap()).unwrap();
        assert!(
            ax.contains("Filler words.") && ax.contains("Account"),
            "{ax}"
        );
        let run = PathBuf::from(r["evidenceDir"].as_str().unwrap());
        assert!(run.join("report.html").is_file());
        let mut checked = 0;
        for f in walk(&run) {
            let bytes = std::fs::read(&f).unwrap();
            no_piece_of(
                CLIPPED,
                &f.display().to_string(),
                &String::from_utf8_lossy(&bytes),
            );
            checked += 1;
        }
        assert!(checked > 3, "{checked} files");
    }
}

/// A terminal program prints a secret split by a hard line break: the
/// screen `inspect` prints masks both halves.
#[test]
fn inspect_masks_a_terminal_secret_split_by_a_line_break() {
    let script = "printf 'key: hunter2-TOP\\nSECRET-9876\\n> '; read x";
    for json in [false, true] {
        let mut c = Command::new(bin());
        c.arg("inspect");
        if json {
            c.arg("--json");
        }
        let o = c
            .args(["--", "sh", "-c", script])
            .env("UI_QA_SECRET_SPLIT", SPLIT)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        no_piece_of(SPLIT, "inspect", &out);
        assert!(out.contains("key:"), "{out}");
    }
}
