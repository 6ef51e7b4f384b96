//! A browser that stops (SIGSTOP) in the middle of a run never holds the
//! run past its deadlines: the step fails within its own bound, cleanup
//! ends the stopped browser, the result is written and the video recorded
//! so far is kept. Before, ui-qa's runtime blocked in a write to the
//! DevTools pipe once the stopped browser no longer read it (a message
//! larger than the pipe's buffer), and no deadline fired.

#![cfg(target_os = "linux")]

mod common;

use common::{all_pids, start_json, wait_until, write};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Processes whose command line mentions `needle`.
fn pids_mentioning(needle: &str) -> Vec<u32> {
    all_pids()
        .into_iter()
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
        })
        .collect()
}

fn signal(sig: &str, pids: &[u32]) {
    for p in pids {
        let _ = Command::new("kill")
            .args([sig, &p.to_string()])
            .stderr(Stdio::null())
            .status();
    }
}

/// Ends what the test stopped if the run did not (a failing test leaves
/// no stopped browser behind).
struct Stopped(Vec<u32>);

impl Drop for Stopped {
    fn drop(&mut self) {
        signal("-KILL", &self.0);
    }
}

/// The run directory under `ws` once its `progress.jsonl` shows `stage`
/// started.
fn run_at_stage(ws: &Path, stage: &str) -> Option<PathBuf> {
    std::fs::read_dir(ws.join("runs"))
        .ok()?
        .flatten()
        .find_map(|r| {
            let t = std::fs::read_to_string(r.path().join("progress.jsonl")).ok()?;
            t.lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .any(|v| v["event"] == "stageStart" && v["stage"] == stage)
                .then(|| r.path())
        })
}

/// The run's result once `ui-qa` ended, at most `within` after the peer
/// stopped (killed and failed past it).
fn result_within(
    mut child: std::process::Child,
    reader: std::thread::JoinHandle<String>,
    within: Duration,
    peer: &str,
) -> Value {
    if !wait_until(within, || child.try_wait().unwrap().is_some()) {
        let _ = child.kill();
        let _ = child.wait();
        panic!("ui-qa was still running {within:?} after its {peer} stopped");
    }
    let out = reader.join().unwrap();
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// Whether every one of `pids` is gone (or a zombie), waited for.
fn all_gone(pids: &[u32]) -> bool {
    wait_until(Duration::from_secs(30), || {
        pids.iter().all(|p| {
            !Path::new(&format!("/proc/{p}")).exists()
                || common::proc_stat(*p).is_some_and(|(_, s, _)| s == 'Z')
        })
    })
}

#[test]
fn a_stopped_browser_fails_the_step_within_its_deadline_and_is_cleaned_up() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("web")).unwrap();
    std::fs::copy(
        common::root().join("tests/fixtures/web/form.html"),
        dir.path().join("web/form.html"),
    )
    .unwrap();
    // The third step sends the browser a message far larger than a pipe's
    // buffer (a 900 KiB URL; a flow string holds at most 1 MiB): it is where the runtime blocked.
    let big = "x".repeat(900 << 10);
    let flow = write(
        dir.path(),
        "stall.jsonc",
        &format!(
            r#"{{"target":{{"serve":"web","url":"/form.html"}},"timeoutMs":90000,
                "steps":[{{"action":"fill","locator":{{"label":"Name"}},"value":"Ada"}},
                         {{"action":"waitForTimeout","ms":8000}},
                         {{"action":"goto","path":"/form.html?{big}","timeoutMs":5000}},
                         {{"action":"fill","locator":{{"label":"Name"}},"value":"{big}","timeoutMs":5000}}]}}"#
        ),
    );
    let ws = dir.path().join("ws");
    let (child, reader) = start_json(&["--video", "on"], &ws, &flow, |_| {});
    let mut run = None;
    assert!(
        wait_until(Duration::from_secs(120), || {
            run = run_at_stage(&ws, "step 2 waitForTimeout");
            run.is_some()
        }),
        "the run never reached its second step"
    );
    let run = run.unwrap();
    // Every process of the run's browser: its command line names the
    // run's profile (under the run's scratch, or linked from it).
    let work = run.join("work");
    let profile = std::fs::read_link(work.join("chromium-profile"))
        .unwrap_or_else(|_| work.join("chromium-profile"));
    let browser = pids_mentioning(&profile.to_string_lossy());
    assert!(
        !browser.is_empty(),
        "no browser names {}",
        profile.display()
    );
    let _guard = Stopped(browser.clone());
    signal("-STOP", &browser);

    // The flow's deadline is 90 s; the stalled steps' 5 s each. The run
    // must end well before the flow's deadline, whatever the browser does.
    let r = result_within(child, reader, Duration::from_secs(80), "browser");
    assert_eq!(r["status"], "FAILED", "{r:#}");
    let steps = r["steps"].as_array().unwrap();
    assert_eq!(steps[0]["status"], "passed", "{r:#}");
    assert_eq!(steps[2]["status"], "failed", "{r:#}");
    assert!(run.join("result.json").is_file(), "no result.json");
    // Cleanup ended the stopped browser (a stopped process still takes
    // SIGKILL) and says so.
    assert!(all_gone(&browser), "the stopped browser outlived the run");
    assert_eq!(r["cleanup"]["status"], "clean", "{:#}", r["cleanup"]);
    // The video recorded before the browser stopped is kept.
    let videos = r["artifacts"]["videos"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(!videos.is_empty(), "no video kept: {:#}", r["artifacts"]);
    for v in &videos {
        let p = v["path"].as_str().unwrap();
        assert!(
            std::fs::metadata(p).is_ok_and(|m| m.len() > 0),
            "video {p} is missing or empty"
        );
    }
}

/// A terminal program that stops (SIGSTOP) while ui-qa types a large text
/// into its PTY: the typing never blocks past the step, the next step
/// fails within its own bound, cleanup ends the stopped program and the
/// result is written.
#[test]
fn a_stopped_terminal_program_fails_the_step_within_its_deadline_and_is_cleaned_up() {
    let dir = tempfile::tempdir().unwrap();
    let gate = dir.path().join("gate");
    // The program says it is ready, then waits (stoppable) until the test
    // has stopped it; the flow then types far more than a PTY holds.
    let big = "y".repeat(900 << 10);
    let flow = write(
        dir.path(),
        "stall.jsonc",
        &format!(
            r#"{{"target":{{"command":{{"argv":["sh","-c","echo ready; while [ ! -e {gate} ]; do sleep 0.05; done; exec cat"]}}}},
                "timeoutMs":90000,
                "steps":[{{"action":"waitForText","text":"ready"}},
                         {{"action":"sendText","text":"{big}","timeoutMs":5000}},
                         {{"action":"waitForText","text":"never-shown","timeoutMs":3000}}]}}"#,
            gate = gate.display()
        ),
    );
    let ws = dir.path().join("ws");
    let (child, reader) = start_json(&[], &ws, &flow, |_| {});
    // The program: the shell whose command line names the gate.
    let mut program = Vec::new();
    assert!(
        wait_until(Duration::from_secs(60), || {
            program = pids_mentioning(&format!("while [ ! -e {}", gate.display()))
                .into_iter()
                .filter(|p| common::proc_stat(*p).is_some_and(|(c, _, _)| c == "sh"))
                .collect();
            !program.is_empty()
        }),
        "the program never started"
    );
    let _guard = Stopped(program.clone());
    signal("-STOP", &program);
    std::fs::write(&gate, "").unwrap();
    let r = result_within(child, reader, Duration::from_secs(80), "program");
    assert_eq!(r["status"], "FAILED", "{r:#}");
    assert_eq!(r["steps"][2]["status"], "failed", "{r:#}");
    assert_eq!(r["cleanup"]["status"], "clean", "{:#}", r["cleanup"]);
    assert!(all_gone(&program), "the stopped program outlived the run");
}

/// A desktop run whose accessibility buses and window-video encoder stop
/// (SIGSTOP) mid-flow: the assertion fails within its own bound, cleanup
/// ends the stopped processes and the result is written.
#[test]
fn a_stopped_bus_and_encoder_fail_the_step_within_its_deadline_and_are_cleaned_up() {
    let dir = tempfile::tempdir().unwrap();
    let app = common::root().join("tests/fixtures/desktop/fixture_app.py");
    let flow = write(
        dir.path(),
        "stall.jsonc",
        &format!(
            r#"{{"timeoutMs":90000,
                "target":{{"application":{{"launch":{{"argv":["/usr/bin/python3",{app:?}]}}}}}},
                "steps":[{{"action":"waitForWindow","title":{{"equals":"ui-qa fixture"}}}},
                         {{"action":"waitForTimeout","ms":8000}},
                         {{"action":"assertText","locator":{{"automationId":"echo-label"}},"equals":"never","timeoutMs":5000}}]}}"#,
            app = app.display().to_string()
        ),
    );
    let ws = dir.path().join("ws");
    let (child, reader) = start_json(&["--virtual-display", "--video", "on"], &ws, &flow, |_| {});
    let ui_qa = child.id();
    assert!(
        wait_until(Duration::from_secs(120), || run_at_stage(
            &ws,
            "step 2 waitForTimeout"
        )
        .is_some()),
        "the run never reached its second step"
    );
    // The run's session and accessibility buses and its encoder.
    let peers: Vec<u32> = common::descendants(ui_qa)
        .into_iter()
        .filter(|p| {
            common::proc_stat(*p).is_some_and(|(c, _, _)| c == "dbus-daemon" || c == "ffmpeg")
        })
        .collect();
    assert!(peers.len() >= 2, "no bus or encoder found: {peers:?}");
    let _guard = Stopped(peers.clone());
    signal("-STOP", &peers);
    let r = result_within(child, reader, Duration::from_secs(80), "bus and encoder");
    assert_eq!(r["status"], "FAILED", "{r:#}");
    assert_eq!(r["steps"][2]["status"], "failed", "{r:#}");
    assert_eq!(r["cleanup"]["status"], "clean", "{:#}", r["cleanup"]);
    assert!(
        all_gone(&peers),
        "a stopped bus or encoder outlived the run"
    );
}
