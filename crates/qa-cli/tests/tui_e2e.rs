//! End to end through the `ui-qa` binary with the terminal driver: real PTYs,
//! real programs, real signals.

mod common;

use common::{bin, pids_with_argv, root, unique_sleep, wait_until, walk, write, KillSleepers};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn run_json(flow: &Path, ws: &Path, env: &[(&str, &str)]) -> (i32, Value, ()) {
    let (code, v) = common::run_json(flow, ws, &[], |c| {
        for (k, v) in env {
            c.env(k, v);
        }
    });
    (code, v, ())
}

#[test]
fn example_flow_passes_with_evidence() {
    let ws = tempfile::tempdir().unwrap();
    let (code, r, _) = run_json(&root().join("examples/tui-hello.jsonc"), ws.path(), &[]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["status"], "PASSED");
    assert_eq!(r["selection"]["platformDriver"], "tui/pty");
    assert_eq!(
        r["selection"]["guide"],
        serde_json::json!({"backend": "tui", "topic": "pty"})
    );
    assert_eq!(r["cleanup"]["status"], "clean");
    let dir = PathBuf::from(r["evidenceDir"].as_str().unwrap());
    assert!(dir.starts_with(ws.path().canonicalize().unwrap()));
    for group in ["screenshots", "videos", "terminalCaptures"] {
        let items = r["artifacts"][group].as_array().unwrap();
        assert!(!items.is_empty(), "no {group}");
        for a in items {
            let p = Path::new(a["path"].as_str().unwrap());
            assert!(p.is_absolute() && p.starts_with(&dir));
            assert_eq!(
                std::fs::metadata(p).unwrap().len(),
                a["bytes"].as_u64().unwrap()
            );
            assert!(a["uri"].as_str().unwrap().starts_with("file:///"));
            assert_eq!(a["sha256"].as_str().unwrap().len(), 64);
        }
    }
    // The result on stdout is exactly result.json.
    let file: Value =
        serde_json::from_slice(&std::fs::read(dir.join("result.json")).unwrap()).unwrap();
    assert_eq!(file, r);
}

#[test]
fn failing_assertion_exits_1_names_the_step_and_keeps_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let flow = write(
        dir.path(),
        "fail.jsonc",
        r#"{"target":{"command":{"argv":["bash","--norc","--noprofile"],"env":{"PS1":"$ "}}},
            "steps":[{"action":"waitForText","text":"$"},
                     {"action":"assertText","text":"this text never appears","timeoutMs":5000},
                     {"action":"capture"}]}"#,
    );
    let (code, r, _) = run_json(&flow, &dir.path().join("ws"), &[]);
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(r["status"], "FAILED");
    assert_eq!(r["stage"], "step 2 assertText");
    assert!(r["reason"].as_str().unwrap().contains("step 2 assertText"));
    assert_eq!(r["steps"][2]["status"], "skipped");
    assert!(
        !r["artifacts"]["videos"].as_array().unwrap().is_empty(),
        "replay kept"
    );
    let dir = PathBuf::from(r["evidenceDir"].as_str().unwrap());
    assert!(dir.join("result.json").is_file());
}

#[test]
fn flow_deadline_exits_124_and_names_the_stage() {
    let dir = tempfile::tempdir().unwrap();
    let flow = write(
        dir.path(),
        "slow.jsonc",
        r#"{"timeoutMs":10000,"target":{"command":{"argv":["bash","--norc","--noprofile"]}},
            "steps":[{"action":"sendText","text":"echo started"},{"action":"waitForText","text":"never-ever","timeoutMs":60000}]}"#,
    );
    // 10 s: far beyond a cold bash start and step 1, far below step 2's own
    // 60 s, so the flow deadline passes while step 2 is waiting.
    let (code, r, _) = run_json(&flow, &dir.path().join("ws"), &[]);
    assert_eq!(code, 124, "{r:#}");
    assert_eq!(r["timedOut"], true);
    assert_eq!(r["stage"], "step 2 waitForText");
    assert_eq!(r["cleanup"]["status"], "clean");
}

#[test]
fn secret_in_a_flow_value_never_leaves_the_runner() {
    let dir = tempfile::tempdir().unwrap();
    let secret = "s3cr3t-Tok3n-991";
    let flow = write(
        dir.path(),
        "secret.jsonc",
        &format!(
            r#"{{"target":{{"command":{{"argv":["bash","--norc","--noprofile"]}}}},
                "steps":[{{"action":"sendText","text":"echo {secret}"}},{{"action":"sendKeys","keys":["Enter"]}},
                         {{"action":"waitForText","text":"{secret}"}},{{"action":"capture"}},
                         {{"action":"assertText","text":"{secret}-missing","timeoutMs":5000}}]}}"#
        ),
    );
    let ws = dir.path().join("ws");
    let mut c = Command::new(bin());
    c.args(["run", "--json", "--workspace"])
        .arg(&ws)
        .arg(&flow)
        .env("UI_QA_SECRET_TOKEN", secret);
    let o = c.output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!stdout.contains(secret), "secret on stdout");
    assert!(!stderr.contains(secret), "secret on stderr");
    let r: Value = serde_json::from_str(&stdout).unwrap();
    let run_dir = PathBuf::from(r["evidenceDir"].as_str().unwrap());
    for f in ["result.json", "progress.jsonl", "flow.jsonc"] {
        let body = std::fs::read_to_string(run_dir.join(f)).unwrap();
        assert!(!body.contains(secret), "secret in {f}");
    }
    // Evidence that saw the secret is published masked (captures, and the
    // replay rebuilt from the masked screen), and nothing published
    // contains it.
    assert!(
        r["artifacts"]["withheld"]
            .as_array()
            .is_none_or(|w| w.is_empty()),
        "{r:#}"
    );
    assert!(
        !r["artifacts"]["terminalCaptures"]
            .as_array()
            .unwrap()
            .is_empty(),
        "{r:#}"
    );
    for entry in walk(&run_dir) {
        let bytes = std::fs::read(&entry).unwrap();
        assert!(
            !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "secret in {}",
            entry.display()
        );
    }
}

/// Starts `ui-qa run` on a flow whose program starts `sleep <marker>` and
/// waits for it; returns the child once the sleep is running and step 2 (a
/// 60 s wait) has started.
fn start_holding_run(dir: &Path, marker: &str) -> std::process::Child {
    let flow = write(
        dir,
        "hold.jsonc",
        &format!(
            r#"{{"target":{{"command":{{"argv":["bash","--norc","--noprofile","-c","sleep {marker} & echo READY; wait"]}}}},
                "steps":[{{"action":"waitForText","text":"READY"}},{{"action":"waitForText","text":"never","timeoutMs":60000}}]}}"#
        ),
    );
    let ws = dir.join("ws");
    let child = Command::new(bin())
        .args(["run", "--workspace"])
        .arg(&ws)
        .arg(&flow)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(
        wait_until(Duration::from_secs(60), || !pids_with_argv(&[
            "sleep", marker
        ])
        .is_empty()),
        "the target never started"
    );
    assert!(
        wait_until(Duration::from_secs(60), || stage_started(
            &ws,
            "step 2 waitForText"
        )),
        "step 2 never started"
    );
    child
}

/// Whether a run under the workspace `ws` has started `stage`: its
/// `progress.jsonl` (written line by line as the run goes) says so.
fn stage_started(ws: &Path, stage: &str) -> bool {
    let Ok(runs) = std::fs::read_dir(ws.join("runs")) else {
        return false;
    };
    runs.flatten().any(|run| {
        std::fs::read_to_string(run.path().join("progress.jsonl")).is_ok_and(|text| {
            text.lines().any(|l| {
                serde_json::from_str::<Value>(l)
                    .is_ok_and(|v| v["event"] == "stageStart" && v["stage"] == stage)
            })
        })
    })
}

#[test]
fn ctrl_c_cancels_with_bounded_cleanup() {
    let dir = tempfile::tempdir().unwrap();
    let marker = unique_sleep(4711);
    let _sweep = KillSleepers(vec![marker.clone()]);
    // Returns once step 2 is running: the SIGINT lands in a step.
    let mut child = start_holding_run(dir.path(), &marker);
    // SAFETY-free: the kill command sends SIGINT to the ui-qa we started.
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let t = Instant::now();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    // Bounded: well below the 60 s the running step (and the flow) would
    // take to end on their own, so the cancel did not wait for them.
    assert!(t.elapsed() < Duration::from_secs(40), "{:?}", t.elapsed());
    assert!(
        pids_with_argv(&["sleep", &marker]).is_empty(),
        "target survived the cancel"
    );
    let mut stderr = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .for_each(|l| {
            stderr.push_str(&l);
            stderr.push('\n')
        });
    assert!(stderr.contains("cancelled"), "{stderr}");
}

#[test]
fn sigkill_of_the_runner_still_ends_the_target() {
    let dir = tempfile::tempdir().unwrap();
    let marker = unique_sleep(4712);
    let _sweep = KillSleepers(vec![marker.clone()]);
    let mut child = start_holding_run(dir.path(), &marker);
    Command::new("kill")
        .args(["-KILL", &child.id().to_string()])
        .status()
        .unwrap();
    let _ = child.wait();
    assert!(
        wait_until(Duration::from_secs(60), || pids_with_argv(&[
            "sleep", &marker
        ])
        .is_empty()),
        "the watchdog did not end the owned session"
    );
}

#[test]
fn escaped_and_job_control_processes_are_ended() {
    let dir = tempfile::tempdir().unwrap();
    let (job, escapee, unrelated) = (unique_sleep(4713), unique_sleep(4714), unique_sleep(4715));
    let _sweep = KillSleepers(vec![job.clone(), escapee.clone(), unrelated.clone()]);
    // STARTED is printed once both sleeps run (the escapee in its own
    // session); `STAR""TED` keeps the typed command line from matching.
    let command = format!(
        "sleep {job} & setsid sleep {escapee} & until pgrep -fx 'sleep {job}' >/dev/null && pgrep -fx 'sleep {escapee}' >/dev/null; do sleep 0.05; done; echo STAR\"\"TED"
    );
    let flow = write(
        dir.path(),
        "jobs.jsonc",
        &format!(
            r#"{{"target":{{"command":{{"argv":["bash","--norc","--noprofile","-i"],"env":{{"PS1":"jobs$ "}}}}}},
            "steps":[{{"action":"waitForText","text":"jobs$","timeoutMs":15000}},
                     {{"action":"sendText","text":{}}},
                     {{"action":"sendKeys","keys":["Enter"]}},
                     {{"action":"waitForText","regex":"^STARTED","timeoutMs":15000}},
                     {{"action":"waitForStable","stableMs":200}}]}}"#,
            serde_json::to_string(&command).unwrap()
        ),
    );
    let (code, r, _) = run_json(&flow, &dir.path().join("ws"), &[]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["cleanup"]["status"], "clean");
    for m in [&job, &escapee] {
        assert!(
            wait_until(Duration::from_secs(15), || pids_with_argv(&["sleep", m])
                .is_empty()),
            "sleep {m} survived"
        );
    }
    // An unrelated process with the same name is untouched.
    let mut mine = Command::new("sleep").arg(&unrelated).spawn().unwrap();
    let (code, _, _) = run_json(&flow, &dir.path().join("ws2"), &[]);
    assert_eq!(code, 0);
    assert!(
        mine.try_wait().unwrap().is_none(),
        "an unrelated sleep was signalled"
    );
    mine.kill().unwrap();
    let _ = mine.wait();
}

#[test]
fn several_flows_in_parallel_with_junit_and_shards() {
    let dir = tempfile::tempdir().unwrap();
    let mut flows = Vec::new();
    for (i, ok) in [true, false, true].iter().enumerate() {
        let expect = if *ok { "flow-ok" } else { "flow-never" };
        flows.push(write(
            dir.path(),
            &format!("f{i}.jsonc"),
            &format!(
                r#"{{"name":"flow {i}","target":{{"command":{{"argv":["sh","-c","echo flow-ok; sleep 60"]}}}},
                    "steps":[{{"action":"waitForText","text":"{expect}","timeoutMs":10000}}]}}"#
            ),
        ));
    }
    let junit = dir.path().join("junit.xml");
    let o = Command::new(bin())
        .args(["run", "--json", "--jobs", "2", "--junit"])
        .arg(&junit)
        .arg("--workspace")
        .arg(dir.path().join("ws"))
        .args(&flows)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "one flow fails");
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let statuses: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        ["PASSED", "FAILED", "PASSED"],
        "results keep the flows' order"
    );
    // It failed because its text never came while the program ran (the
    // program outlives the 10 s wait), not because the program ended.
    assert_eq!(v[1]["reasonCode"], "assertion.timeout", "{:#}", v[1]);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<testcase ").count(), 3, "one case per flow");
    assert_eq!(xml.matches("<failure ").count(), 1);
    assert!(xml.contains("name=\"flow 1\""));

    let o = Command::new(bin())
        .args(["run", "--json", "--shard", "2/3", "--workspace"])
        .arg(dir.path().join("ws2"))
        .args(&flows)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(1),
        "shard 2/3 is the failing flow alone"
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v.as_array().unwrap().len(),
        1,
        "an array: several flows were given"
    );
    assert_eq!(v[0]["flowName"], "flow 1");
    for bad in ["0/3", "4/3", "x"] {
        let o = Command::new(bin())
            .args(["run", "--shard", bad])
            .args(&flows)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "--shard {bad}");
    }
}

/// A one-step terminal flow named `name` that prints `word` and waits for
/// `want`.
fn echo_flow(name: &str, word: &str, want: &str) -> String {
    format!(
        r#"{{"version":1,"name":"{name}","target":{{"command":{{"argv":["sh","-c","echo {word}; sleep 5"]}}}},
            "steps":[{{"action":"waitForText","text":"{want}","timeoutMs":1500}}]}}"#
    )
}

#[test]
fn a_directory_of_flows_runs_sorted_filtered_listed_and_tallied_without_interleaving() {
    let ws = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let flows = dir.path().join("flows");
    std::fs::create_dir(&flows).unwrap();
    std::fs::write(
        flows.join("b-pass.jsonc"),
        echo_flow("second", "BRAVO", "BRAVO"),
    )
    .unwrap();
    std::fs::write(
        flows.join("a-pass.jsonc"),
        echo_flow("first", "ALPHA", "ALPHA"),
    )
    .unwrap();
    std::fs::write(
        flows.join("c-fail.jsonc"),
        echo_flow("third", "CHARLIE", "DELTA"),
    )
    .unwrap();
    std::fs::write(flows.join("notes.txt"), "not a flow").unwrap();
    let ui_qa = |args: &[&str]| {
        let o = Command::new(bin())
            .arg("run")
            .args(args)
            .arg("--workspace")
            .arg(ws.path())
            .arg(&flows)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    // --list: sorted by name, only flow files, nothing run.
    let (code, out, _) = ui_qa(&["--list"]);
    assert_eq!(code, Some(0));
    let listed: Vec<&str> = out.lines().collect();
    assert_eq!(listed.len(), 3, "{out}");
    assert!(
        listed[0].ends_with("a-pass.jsonc") && listed[2].ends_with("c-fail.jsonc"),
        "{out}"
    );
    assert!(!ws.path().join("runs").exists(), "--list runs nothing");
    // --grep on the flow's name or path.
    let (_, out, _) = ui_qa(&["--list", "--grep", "^sec"]);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.trim_end().ends_with("b-pass.jsonc"), "{out}");

    // All three at once: each flow's lines come together, then the tally.
    let (code, out, err) = ui_qa(&["--jobs", "3", "--json"]);
    assert_eq!(code, Some(1), "{err}");
    let results: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(results.as_array().unwrap().len(), 3);
    let (body, _) = err.split_once("\n3 flows in ").expect("a tally");
    let blocks: Vec<&str> = body
        .split("ui-qa: ")
        .filter(|b| !b.trim().is_empty())
        .collect();
    assert_eq!(blocks.len(), 3, "{err}");
    let names = ["a-pass.jsonc", "b-pass.jsonc", "c-fail.jsonc"];
    for b in &blocks {
        let own = names
            .iter()
            .find(|n| b.lines().next().unwrap().contains(*n))
            .unwrap();
        assert!(
            b.contains(&format!("{own} in ")),
            "the block holds its summary: {b}"
        );
        for other in names.iter().filter(|n| *n != own) {
            assert!(
                !b.contains(other),
                "lines of {other} inside the block of {own}:\n{b}"
            );
        }
    }
    assert!(
        err.contains("\n3 flows in ") && err.contains(": 2 passed, 1 failed\n"),
        "{err}"
    );
    assert!(
        err.contains("  FAILED ") && err.contains("c-fail.jsonc: step 1 waitForText failed"),
        "{err}"
    );
    assert!(
        err.contains("    expected: the screen or scrollback to contain text \"DELTA\""),
        "{err}"
    );
}

/// A flow that checks nothing: `check` warns, `run` says PASSED (nothing
/// checked) with a `nothingChecked` observation, and `run --strict`
/// refuses it before anything launches.
#[test]
fn a_flow_that_checks_nothing_is_warned_noted_and_refused_when_strict() {
    let dir = tempfile::tempdir().unwrap();
    let flow = write(
        dir.path(),
        "unchecked.jsonc",
        r#"{ "target": { "command": { "argv": ["cat"] } },
  "steps": [ { "action": "sendText", "text": "hello" } ] }"#,
    );
    let o = Command::new(bin())
        .args(["check", "--json"])
        .arg(&flow)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["valid"], true);
    assert_eq!(v["warnings"][0]["code"], "flow.no_assertion", "{v:#}");
    assert_eq!(v["warnings"][0]["pointer"], "/steps", "{v:#}");

    let ws = dir.path().join("ws");
    let (code, v, ()) = run_json(&flow, &ws, &[]);
    assert_eq!((code, v["status"].as_str()), (0, Some("PASSED")), "{v:#}");
    let notes: Vec<&Value> = v["observations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["kind"] == "nothingChecked")
        .collect();
    assert_eq!(notes.len(), 1, "{v:#}");

    let o = Command::new(bin())
        .args(["run", "--video", "off", "--workspace"])
        .arg(&ws)
        .arg(&flow)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("PASSED (nothing checked)"), "{err}");

    let o = Command::new(bin())
        .args(["run", "--strict", "--workspace"])
        .arg(dir.path().join("ws-strict"))
        .arg(&flow)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("flow.no_assertion"), "{err}");
    assert!(
        !dir.path().join("ws-strict").join("runs").exists(),
        "nothing ran"
    );
}

/// Without --workspace, evidence goes to the flow's project (`.ui-qa` in
/// the nearest directory above it with .git or .ui-qa, else its own), not
/// to a new `.ui-qa` wherever ui-qa was started — which would make that
/// directory the project root of every flow below it.
#[test]
fn evidence_goes_to_the_flows_project_not_the_current_directory() {
    let dir = tempfile::tempdir().unwrap();
    let flow_text = r#"{ "target": { "command": { "argv": ["sh", "-c", "echo ready; exec sleep 30"] } },
  "steps": [ { "action": "waitForText", "text": "ready", "timeoutMs": 10000 } ] }"#;
    // A project with .git; the flow in a subdirectory; ui-qa started
    // from elsewhere.
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("flows")).unwrap();
    let in_repo = write(&repo.join("flows"), "f.jsonc", flow_text);
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let o = Command::new(bin())
        .args(["run", "--video", "off"])
        .arg(&in_repo)
        .current_dir(&elsewhere)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(repo.join(".ui-qa/runs").is_dir(), "evidence in the project");
    assert!(
        !elsewhere.join(".ui-qa").exists(),
        "nothing where ui-qa started"
    );
    assert!(!repo.join("flows/.ui-qa").exists());

    // No project marker: the flow's own directory, said once on stderr;
    // the directory ui-qa started from gets nothing.
    let loose = dir.path().join("loose");
    std::fs::create_dir_all(&loose).unwrap();
    let f = write(&loose, "f.jsonc", flow_text);
    let o = Command::new(bin())
        .args(["run", "--video", "off"])
        .arg(&f)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(loose.join(".ui-qa/runs").is_dir(), "{err}");
    assert!(!dir.path().join(".ui-qa").exists(), "{err}");
    assert!(err.contains("take it as their project root"), "{err}");
}
