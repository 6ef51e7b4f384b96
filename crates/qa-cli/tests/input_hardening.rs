//! Hostile and malformed input through the real `ui-qa` binary: strict JSONC,
//! strings no process can receive, exact pointers and positions, escaped
//! terminal output, and a closed stdout or stderr.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn ui_qa() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ui-qa"))
}

fn write(dir: &Path, name: &str, text: impl AsRef<[u8]>) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `ui-qa check FLOW` (human) and `ui-qa check --json FLOW`: both exit 2;
/// returns the human stderr and the first JSON error.
fn check_fails(flow: &Path) -> (String, Value) {
    let o = ui_qa().arg("check").arg(flow).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "check: {}", stderr(&o));
    assert!(o.stdout.is_empty());
    let human = stderr(&o);
    let o = ui_qa()
        .args(["check", "--json"])
        .arg(flow)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "check --json: {}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["valid"], false);
    (human, v["errors"][0].clone())
}

/// Asserts one error: code, pointer, line and column, in JSON and in the
/// human `error[CODE]: PATH:LINE:COLUMN: at POINTER:` line.
fn assert_error(flow: &Path, code: &str, pointer: &str, line: u64, column: u64) {
    let (human, e) = check_fails(flow);
    assert_eq!(e["code"], code, "{e}");
    assert_eq!(e["pointer"], pointer, "{e}");
    assert_eq!(
        (e["line"].as_u64(), e["column"].as_u64()),
        (Some(line), Some(column)),
        "{e}"
    );
    let ptr = if pointer.is_empty() {
        "(document)"
    } else {
        pointer
    };
    let want = format!(
        "error[{code}]: {}:{line}:{column}: at {ptr}: ",
        flow.display()
    );
    assert!(human.starts_with(&want), "want {want:?} in {human:?}");
}

#[test]
fn check_refuses_invalid_json_with_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str, u64, u64)] = &[
        (
            "no-commas",
            "{\n  \"target\": { \"command\": { \"argv\": [\"true\" \"x\"] } }\n  \"steps\": [ { \"action\": \"capture\" } ]\n}\n",
            2,
            43,
        ),
        (
            "one-missing-comma",
            "{\n  \"target\": { \"command\": { \"argv\": [\"true\"] } }\n  \"steps\": [ { \"action\": \"capture\" } ]\n}\n",
            2,
            48,
        ),
        (
            "unquoted-key",
            "{\n  target: { \"command\": { \"argv\": [\"true\"] } },\n  \"steps\": [ { \"action\": \"capture\" } ]\n}\n",
            2,
            3,
        ),
        (
            "single-quotes",
            "{\n  \"target\": { \"command\": { \"argv\": ['true'] } },\n  \"steps\": [ { \"action\": \"capture\" } ]\n}\n",
            2,
            37,
        ),
        (
            "hex",
            "{\n  \"target\": { \"command\": { \"argv\": [\"true\"] } },\n  \"timeoutMs\": 0x1000,\n  \"steps\": [ { \"action\": \"capture\" } ]\n}\n",
            3,
            16,
        ),
        (
            "raw-escape-in-string",
            "{\n  \"target\": { \"command\": { \"argv\": [\"true\", \"a\u{1b}b\"] } },\n  \"steps\": [ { \"action\": \"capture\" } ]\n}\n",
            2,
            47,
        ),
        (
            "raw-nul-in-string",
            "{\n  \"target\": { \"command\": { \"argv\": [\"true\", \"a\u{0}b\"] } },\n  \"steps\": [ { \"action\": \"capture\" } ]\n}\n",
            2,
            47,
        ),
    ];
    for (name, text, line, column) in cases {
        let f = write(dir.path(), &format!("{name}.jsonc"), text);
        assert_error(&f, "flow.syntax", "", *line, *column);
    }
    // Comments and trailing commas stay valid.
    let f = write(
        dir.path(),
        "jsonc.jsonc",
        "// c\n{\n  \"target\": { \"command\": { \"argv\": [\"true\",], }, }, /* c */\n  \"steps\": [ { \"action\": \"capture\", }, ],\n}\n",
    );
    let o = ui_qa().arg("check").arg(&f).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn nul_in_process_strings_is_refused_at_check_and_nothing_launches() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("LAUNCHED");
    let m = marker.display().to_string();
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "terminal-argv",
            format!(
                r#"{{"target":{{"command":{{"argv":["sh","-c","touch {m}","\u0000"]}}}},"steps":[{{"action":"capture"}}]}}"#
            ),
            "/target/command/argv/3",
        ),
        (
            "terminal-env",
            format!(
                r#"{{"target":{{"command":{{"argv":["sh","-c","touch {m}"],"env":{{"X":"\u0000"}}}}}},"steps":[{{"action":"capture"}}]}}"#
            ),
            "/target/command/env/X",
        ),
        (
            "desktop-argv",
            format!(
                r#"{{"target":{{"application":{{"launch":{{"argv":["sh","-c","touch {m}","a\u0000"]}}}}}},"steps":[{{"action":"activateWindow"}}]}}"#
            ),
            "/target/application/launch/argv/3",
        ),
        (
            "desktop-env",
            format!(
                r#"{{"target":{{"application":{{"launch":{{"argv":["sh","-c","touch {m}"],"env":{{"a/b\u0000":"1"}}}}}}}},"steps":[{{"action":"activateWindow"}}]}}"#
            ),
            "/target/application/launch/env/a~1b\u{0}",
        ),
        (
            "browser-server-command",
            format!(
                r#"{{"target":{{"url":"http://127.0.0.1:9/","server":{{"command":["sh","-c","touch {m}","\u0000"],"readyUrl":"http://127.0.0.1:9/"}}}},"steps":[{{"action":"reload"}}]}}"#
            ),
            "/target/server/command/3",
        ),
        (
            "browser-server-env",
            format!(
                r#"{{"target":{{"url":"http://127.0.0.1:9/","server":{{"command":["sh","-c","touch {m}"],"env":{{"E":"\u0000"}},"readyUrl":"http://127.0.0.1:9/"}}}},"steps":[{{"action":"reload"}}]}}"#
            ),
            "/target/server/env/E",
        ),
    ];
    for (name, text, pointer) in cases {
        let f = write(dir.path(), &format!("{name}.jsonc"), &text);
        let (human, e) = check_fails(&f);
        assert_eq!(e["code"], "flow.nul_character", "{name}: {e}");
        assert_eq!(e["pointer"], pointer, "{name}: {e}");
        assert_eq!(e["line"], 1, "{name}: {e}");
        assert!(e["column"].as_u64().is_some(), "{name}: {e}");
        assert!(
            human.contains("error[flow.nul_character]"),
            "{name}: {human}"
        );
        let o = ui_qa()
            .arg("run")
            .arg("--workspace")
            .arg(dir.path().join("ws"))
            .arg(&f)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "run {name}: {}", stderr(&o));
        assert!(!marker.exists(), "{name}: something was launched");
    }
}

#[test]
fn unknown_keys_with_backticks_get_exact_pointers() {
    let dir = tempfile::tempdir().unwrap();
    for (json_key, pointer) in [
        ("a`b", "/steps/0/a`b"),
        ("`x` at line 9", "/steps/0/`x` at line 9"),
        ("p/q~r", "/steps/0/p~1q~0r"),
    ] {
        let f = write(
            dir.path(),
            "f.jsonc",
            format!(
                "{{\"target\":{{\"command\":{{\"argv\":[\"true\"]}}}},\n\"steps\":[{{\"action\":\"capture\",\n   \"{json_key}\":1}}]}}"
            ),
        );
        assert_error(&f, "flow.unknown_field", pointer, 3, 4);
    }
}

#[test]
fn utf8_size_and_locator_errors_carry_positions() {
    let dir = tempfile::tempdir().unwrap();
    // Invalid UTF-8: the first bad byte.
    let f = write(
        dir.path(),
        "latin1.jsonc",
        b"{\"target\":{\"command\":{\"argv\":[\"true\"]}},\n \"name\":\"caf\xe9\",\"steps\":[{\"action\":\"capture\"}]}",
    );
    assert_error(&f, "flow.syntax", "", 2, 13);
    // Too large: the first byte past 16 MiB, here the start of line 16385.
    let mut text = String::from("{");
    text.push_str(&" ".repeat(1022));
    text.push('\n');
    let line = format!("{}\n", " ".repeat(1023));
    while text.len() <= 16 * 1024 * 1024 {
        text.push_str(&line);
    }
    text.push_str(r#""target":{"command":{"argv":["true"]}},"steps":[{"action":"capture"}]}"#);
    let f = write(dir.path(), "big.jsonc", &text);
    assert_error(&f, "flow.too_large", "", 16385, 1);
    std::fs::remove_file(&f).unwrap();
    // A locator kind the driver cannot resolve: the locator's key.
    let f = write(
        dir.path(),
        "css.jsonc",
        "{\"target\":{\"application\":{\"launch\":{\"argv\":[\"true\"]}}},\n\"steps\":[\n  {\"action\":\"activate\",\"locator\":{\"css\":\"button.ok\"}}]}",
    );
    assert_error(
        &f,
        "flow.unsupported_locator",
        "/steps/0/locator/css",
        3,
        35,
    );
}

#[test]
fn human_output_escapes_control_characters_from_the_flow() {
    let dir = tempfile::tempdir().unwrap();
    // An escaped ESC in a key is valid JSON; echoing it raw would let a flow
    // drive the reader's terminal.
    let f = write(
        dir.path(),
        "esc.jsonc",
        r#"{"target":{"command":{"argv":["true"]}},"steps":[{"action":"capture","\u001b[2J\u001b]0;pwned\u0007\u202e":1}]}"#,
    );
    let o = ui_qa().arg("check").arg(&f).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        !err.chars().any(|c| c.is_control() && c != '\n'),
        "raw control characters in {err:?}"
    );
    assert!(!err.contains('\u{202e}'), "raw bidi override in {err:?}");
    assert!(
        err.contains(r"at /steps/0/\u{1b}[2J\u{1b}]0;pwned\u{7}\u{202e}: "),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    // The JSON verdict keeps the exact key (JSON escapes it).
    let o = ui_qa().args(["check", "--json"]).arg(&f).output().unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["errors"][0]["pointer"],
        "/steps/0/\u{1b}[2J\u{1b}]0;pwned\u{7}\u{202e}"
    );
    // A file name with control characters is escaped too.
    let f = write(
        dir.path(),
        "ok\u{1b}[31m.jsonc",
        r#"{"target":{"command":{"argv":["true"]}},"steps":[{"action":"capture"}]}"#,
    );
    let o = ui_qa().arg("check").arg(&f).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        !err.contains('\u{1b}') && err.contains(r"ok\u{1b}[31m.jsonc"),
        "{err}"
    );
}

/// A pipe whose read end is already closed: the first write to it fails
/// with EPIPE, deterministically.
fn closed_pipe() -> Stdio {
    let mut reader = Command::new("true").stdin(Stdio::piped()).spawn().unwrap();
    let w = reader.stdin.take().unwrap();
    reader.wait().unwrap();
    Stdio::from(w)
}

fn terminal_flow(dir: &Path) -> PathBuf {
    write(
        dir,
        "exit0.jsonc",
        r#"{"target":{"command":{"argv":["sh","-c","exit 0"]}},"timeoutMs":20000,"steps":[{"action":"assertProcessExited","exitCode":0}]}"#,
    )
}

#[test]
fn a_closed_stdout_ends_every_command_quietly_with_141() {
    let dir = tempfile::tempdir().unwrap();
    let flow = terminal_flow(dir.path());
    let bad = write(dir.path(), "bad.jsonc", r#"{"target":{}}"#);
    let ws = dir.path().join("ws");
    let flow = flow.to_str().unwrap();
    let bad = bad.to_str().unwrap();
    let ws = ws.to_str().unwrap();
    let commands: Vec<Vec<&str>> = vec![
        vec!["schema", "flow"],
        vec!["schema", "result"],
        vec!["--help"],
        vec!["-h"],
        vec!["run", "--help"],
        vec!["--version"],
        vec!["guide", "--backend", "tui"],
        vec!["capabilities"],
        vec!["capabilities", "--json"],
        vec!["check", "--json", flow],
        vec!["check", "--json", bad],
        vec!["probe", "--json", flow],
        // --quiet: a run prints its progress on stderr even with --json.
        vec!["run", "--json", "--quiet", "--workspace", ws, flow],
    ];
    for args in commands {
        let o = ui_qa()
            .args(&args)
            .stdin(Stdio::null())
            .stdout(closed_pipe())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(141),
            "{args:?}: {:?} {}",
            o.status,
            stderr(&o)
        );
        assert_eq!(stderr(&o), "", "{args:?} printed on stderr");
    }
    // The run itself finished normally: its result document was written.
    let runs = Path::new(ws).join("runs");
    let results: Vec<PathBuf> = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| e.path().join("result.json"))
        .filter(|p| p.exists())
        .collect();
    assert_eq!(results.len(), 1, "no result.json under {ws}");
    // `runs/latest` points at it.
    assert_eq!(
        runs.join("latest").canonicalize().unwrap(),
        results[0].parent().unwrap().canonicalize().unwrap()
    );
    let r: Value = serde_json::from_slice(&std::fs::read(&results[0]).unwrap()).unwrap();
    assert_eq!(r["status"], "PASSED", "{r}");
}

#[test]
fn a_closed_stderr_does_not_change_the_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let flow = terminal_flow(dir.path());
    let bad = write(dir.path(), "bad.jsonc", r#"{"target":{}}"#);
    let ws = dir.path().join("ws");
    let cases: Vec<(Vec<&std::ffi::OsStr>, i32)> = vec![
        (vec!["check".as_ref(), bad.as_os_str()], 2),
        (vec!["check".as_ref(), flow.as_os_str()], 0),
        (vec!["frobnicate".as_ref()], 2),
        (
            vec![
                "run".as_ref(),
                "--workspace".as_ref(),
                ws.as_os_str(),
                flow.as_os_str(),
            ],
            0,
        ),
    ];
    for (args, code) in cases {
        let o = ui_qa()
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(closed_pipe())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(code), "{args:?}: {:?}", o.status);
    }
}

/// Runs `ui-qa ARGS…` to its end (a wide "must not hang" bound: killed
/// and failed past it).
#[cfg(unix)]
fn run_bounded(args: &[&std::ffi::OsStr]) -> Output {
    let child = ui_qa()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            panic!("ui-qa {args:?} hung");
        }
    }
}

#[cfg(unix)]
#[test]
fn a_fifo_as_the_flow_path_is_refused_without_blocking() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("flows").join("fifo.jsonc");
    std::fs::create_dir_all(fifo.parent().unwrap()).unwrap();
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let ws = d.path().join("ws");
    for args in [
        vec!["check".as_ref(), fifo.as_os_str()],
        vec!["check".as_ref(), "--json".as_ref(), fifo.as_os_str()],
        vec![
            "run".as_ref(),
            "--workspace".as_ref(),
            ws.as_os_str(),
            fifo.as_os_str(),
        ],
    ] {
        let o = run_bounded(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let all = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
        assert!(all.contains("flow.not_a_file"), "{args:?}: {all}");
        assert!(
            all.contains("not a regular file (a FIFO)"),
            "{args:?}: {all}"
        );
    }
    // A directory of flows holding one: it is not a flow file.
    let dir = fifo.parent().unwrap();
    let o = run_bounded(&[
        "run".as_ref(),
        "--workspace".as_ref(),
        ws.as_os_str(),
        dir.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("holds no flow files"), "{}", stderr(&o));
    // Nothing ran.
    assert!(!ws.join("runs").exists());
}
