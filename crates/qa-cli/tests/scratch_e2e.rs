//! A run's scratch (the browser profile, with cookies and session state)
//! is never left at rest when `ui-qa` is killed: its watchdog removes it,
//! and when the watchdog is gone too, the next run in the workspace does.

mod common;

use common::{alive, bin, wait_until, watchdog_of, write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// A web flow that holds in its second step until it is killed.
fn holding_flow(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir.join("web")).unwrap();
    std::fs::copy(
        common::root().join("tests/fixtures/web/form.html"),
        dir.join("web/form.html"),
    )
    .unwrap();
    write(
        dir,
        "hold.jsonc",
        r#"{"target":{"serve":"web","url":"/form.html"},
            "steps":[{"action":"fill","locator":{"label":"Name"},"value":"Ada Lovelace"},
                     {"action":"waitFor","locator":{"testId":"never"},"timeoutMs":120000}]}"#,
    )
}

/// The run's `work/chromium-profile`, once Chromium has written into it.
fn profile_in_use(ws: &Path) -> Option<PathBuf> {
    let runs = std::fs::read_dir(ws.join("runs")).ok()?;
    for r in runs.flatten() {
        // The profile holds Chromium's `Default` directory once a browser
        // was started on it (the run's holding step runs after that).
        let p = r.path().join("work/chromium-profile");
        if p.join("Default").is_dir() {
            return Some(r.path().join("work"));
        }
    }
    None
}

fn stage_started(ws: &Path, stage: &str) -> bool {
    let Ok(runs) = std::fs::read_dir(ws.join("runs")) else {
        return false;
    };
    runs.flatten().any(|run| {
        std::fs::read_to_string(run.path().join("progress.jsonl"))
            .is_ok_and(|t| t.contains("\"stageStart\"") && t.contains(stage))
    })
}

fn start(ws: &Path, flow: &Path) -> std::process::Child {
    Command::new(bin())
        .args(["run", "--workspace"])
        .arg(ws)
        .arg(flow)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Where the run's browser profile really is: `work/chromium-profile`, or
/// the directory it links to when the browser runs as its own user (root).
fn real_profile(work: &Path) -> PathBuf {
    let p = work.join("chromium-profile");
    std::fs::read_link(&p).unwrap_or(p)
}

fn kill9(pid: u32) {
    Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
}

/// A run holding in its second step with Chromium's profile in use:
/// `(temp dir, workspace, ui-qa, the run's work directory)`.
fn start_holding() -> (tempfile::TempDir, PathBuf, std::process::Child, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let flow = holding_flow(dir.path());
    let child = start(&ws, &flow);
    assert!(
        wait_until(Duration::from_secs(120), || stage_started(
            &ws,
            "step 2 waitFor"
        )),
        "the run never reached its holding step"
    );
    let work = profile_in_use(&ws).expect("a profile in use");
    (dir, ws, child, work)
}

#[test]
fn the_watchdog_removes_the_scratch_of_a_killed_run() {
    let (_dir, _ws, mut child, work) = start_holding();
    let profile = real_profile(&work);
    kill9(child.id());
    let _ = child.wait();
    assert!(
        wait_until(Duration::from_secs(60), || !work.exists()),
        "the killed run's scratch is still at rest: {}",
        work.display()
    );
    assert!(
        wait_until(Duration::from_secs(60), || !profile.exists()),
        "the killed run's browser profile is still at rest: {}",
        profile.display()
    );
}

#[test]
fn the_next_run_sweeps_scratch_whose_owner_is_gone() {
    let (dir, ws, mut child, work) = start_holding();
    // The watchdog first, then the runner: nothing is left to clean up.
    let (wd, _) = watchdog_of(child.id()).expect("the run's watchdog");
    kill9(wd);
    assert!(wait_until(Duration::from_secs(30), || !alive(wd as u64)));
    kill9(child.id());
    let _ = child.wait();
    // Chromium may outlive both (its DevTools pipe closed, it may be
    // quitting); end it by hand so the profile is not in use, and check
    // the scratch is still there.
    let profile = real_profile(&work);
    assert!(
        profile.join("Default").is_dir(),
        "scratch left at rest after the double kill"
    );
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
            let c = String::from_utf8_lossy(&c);
            c.contains(&work.display().to_string()) || c.contains(&profile.display().to_string())
        }) {
            kill9(pid);
        }
    }
    // Its processes are gone before the sweep (a browser still running
    // would make its profile directory again).
    assert!(wait_until(Duration::from_secs(30), || {
        std::fs::read_dir("/proc").unwrap().flatten().all(|e| {
            std::fs::read(e.path().join("cmdline")).map_or(true, |c| {
                !String::from_utf8_lossy(&c).contains(&profile.display().to_string())
            })
        })
    }));
    // The next run in the same workspace removes it before it starts.
    let quick = write(
        dir.path(),
        "quick.jsonc",
        r#"{"target":{"command":{"argv":["true"]}},"steps":[{"action":"assertProcessExited"}]}"#,
    );
    let (code, r) = common::run_json(&quick, &ws, &[], |_| {});
    assert_eq!(code, 0, "{r:#}");
    assert!(!work.exists(), "the orphaned scratch was not swept");
    assert!(
        !profile.exists(),
        "the orphaned browser profile was not swept: {}",
        profile.display()
    );
}
