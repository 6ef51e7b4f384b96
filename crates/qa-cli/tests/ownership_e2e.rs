//! Process ownership under attack, through the `ui-qa` binary: a daemon
//! with a scrubbed environment, and daemons that survive the runner's
//! SIGKILL (ignoring SIGTERM, respawning on it, spawned late).

mod common;

use common::{
    alive, bin, pids_with_argv, proc_stat, unique_sleep, wait_until, watchdog_of, write,
    KillSleepers,
};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// A python program (run under `env -i`, so no ui-qa marker reaches its
/// descendants) that starts a double-forked `setsid` daemon `sleep MARKER`
/// and prints `DAEMON <pid>` and then `READY`.
fn scrubbed_daemon_flow(dir: &Path, marker: &str) -> std::path::PathBuf {
    let script = format!(
        "import os\n\
         r, w = os.pipe()\n\
         if os.fork() == 0:\n\
         \x20   os.setsid()\n\
         \x20   pid = os.fork()\n\
         \x20   if pid == 0:\n\
         \x20       os.execv('/bin/sleep', ['sleep', '{marker}'])\n\
         \x20   os.write(w, str(pid).encode())\n\
         \x20   os._exit(0)\n\
         os.close(w)\n\
         pid = os.read(r, 64).decode()\n\
         print('DAEMON', pid, flush=True)\n\
         print('READY', flush=True)\n"
    );
    write(
        dir,
        "scrubbed.jsonc",
        &format!(
            r#"{{"target":{{"command":{{"argv":["env","-i","/usr/bin/python3","-c",{}]}}}},
                "steps":[{{"action":"waitForText","text":"READY","timeoutMs":60000}},
                         {{"action":"capture","name":"pids"}}]}}"#,
            serde_json::to_string(&script).unwrap()
        ),
    )
}

fn daemon_pid(r: &Value) -> u64 {
    let caps = r["artifacts"]["terminalCaptures"].as_array().unwrap();
    let txt = caps
        .iter()
        .map(|a| a["path"].as_str().unwrap())
        .find(|p| p.ends_with(".txt"))
        .expect("a text capture");
    let text = std::fs::read_to_string(txt).unwrap();
    // The capture frames each screen row as `|…|`.
    let line = text
        .lines()
        .map(|l| l.trim_matches('|').trim())
        .find(|l| l.starts_with("DAEMON "))
        .unwrap_or_else(|| panic!("the daemon's pid on screen:\n{text}"));
    line["DAEMON ".len()..].trim().parse().unwrap()
}

#[test]
fn a_daemon_with_a_scrubbed_environment_is_ended_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let marker = unique_sleep(4801);
    let _sweep = KillSleepers(vec![marker.clone()]);
    let flow = scrubbed_daemon_flow(dir.path(), &marker);
    let (code, r) = common::run_json(&flow, &dir.path().join("ws"), &[], |_| {});
    assert_eq!(code, 0, "{r:#}");
    let pid = daemon_pid(&r);
    let ended: Vec<&Value> = r["cleanup"]["ended"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["pid"].as_u64() == Some(pid))
        .collect();
    assert_eq!(
        ended.len(),
        1,
        "the daemon is in cleanup.ended: {:#}",
        r["cleanup"]
    );
    assert_ne!(ended[0]["how"], "exited", "{:#}", r["cleanup"]);
    assert_eq!(r["cleanup"]["status"], "clean", "{:#}", r["cleanup"]);
    assert!(!alive(pid), "the scrubbed daemon survived the run");
    assert!(pids_with_argv(&["sleep", &marker]).is_empty());
}

/// A python target for the SIGKILL test: it starts (1) a double-forked
/// setsid daemon that ignores SIGTERM (`sleep MARKER`), (2) one that
/// double-forks a new copy of itself on every SIGTERM (python with MARKER
/// in its argv), then prints READY, and (3) a second later forks a late
/// child into its own session. Every one of them carries MARKER in argv.
fn hostile_flow(dir: &Path, marker: &str) -> std::path::PathBuf {
    let script = format!(
        r#"import os, signal, sys, time
M = '{marker}'
def daemon(kind):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            if kind == 'ignore':
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                os.execv('/bin/sleep', ['sleep', M])
            def respawn(sig, frm):
                daemon('respawn')
            signal.signal(signal.SIGTERM, respawn)
            while True:
                time.sleep(0.05)
        os._exit(0)
    os.wait()
daemon('ignore')
daemon('respawn')
print('READY', flush=True)
time.sleep(1)
if os.fork() == 0:
    os.execv('/bin/sleep', ['sleep', M])
time.sleep(600)
"#
    );
    write(
        dir,
        "hostile.jsonc",
        &format!(
            r#"{{"target":{{"command":{{"argv":["python3","-c",{},"{marker}"]}}}},
                "steps":[{{"action":"waitForText","text":"READY","timeoutMs":60000}},
                         {{"action":"waitForText","text":"never","timeoutMs":120000}}]}}"#,
            serde_json::to_string(&script).unwrap()
        ),
    )
}

/// The watchdog's own count of single processes it guards (its name is
/// `ui-qa-wd SESSIONS/PROCESSES`).
fn watchdog_tracks(ui_qa: u32) -> Option<usize> {
    let (_, comm) = watchdog_of(ui_qa)?;
    comm.split('/').nth(1)?.parse().ok()
}

fn ppid(pid: u32) -> Option<u32> {
    proc_stat(pid).map(|(_, _, ppid)| ppid)
}

/// Live processes whose command line contains `marker`.
fn with_marker(marker: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        if cmd.split(|b| *b == 0).any(|a| a == marker.as_bytes()) && alive(pid as u64) {
            out.push(pid);
        }
    }
    out
}

struct KillMarked(String);

impl Drop for KillMarked {
    fn drop(&mut self) {
        for _ in 0..5 {
            for pid in with_marker(&self.0) {
                let _ = Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
            }
        }
    }
}

#[test]
fn after_sigkill_of_ui_qa_the_watchdog_ends_every_hostile_daemon() {
    let dir = tempfile::tempdir().unwrap();
    let marker = unique_sleep(4803);
    let _sweep = KillMarked(marker.clone());
    let flow = hostile_flow(dir.path(), &marker);
    let ws = dir.path().join("ws");
    let mut child = Command::new(bin())
        .args(["run", "--workspace"])
        .arg(&ws)
        .arg(&flow)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let ui_qa = child.id();
    // The target (python, the session root), both daemons (adopted by
    // ui-qa, the subreaper) and the late child run, and the watchdog has
    // been told about the daemons and the late child (the runner's sampler
    // found them; the watchdog's name counts what it guards).
    let adopted = || {
        with_marker(&marker)
            .into_iter()
            .filter(|&p| ppid(p) == Some(ui_qa))
            .count()
    };
    assert!(
        wait_until(Duration::from_secs(60), || with_marker(&marker).len() >= 4
            && adopted() >= 3),
        "the target and its daemons never started: {:?}",
        with_marker(&marker)
    );
    assert!(
        wait_until(Duration::from_secs(60), || watchdog_tracks(ui_qa)
            .is_some_and(|t| t >= 3)),
        "the watchdog never learned of the daemons (tracks {:?})",
        watchdog_tracks(ui_qa)
    );
    Command::new("kill")
        .args(["-KILL", &ui_qa.to_string()])
        .status()
        .unwrap();
    let _ = child.wait();
    // Everything carrying the marker goes: the SIGTERM-ignoring daemon,
    // the respawner, the late child and the target.
    assert!(
        wait_until(Duration::from_secs(60), || with_marker(&marker).is_empty()),
        "survivors after the runner's SIGKILL: {:?}",
        with_marker(&marker)
    );
}
