//! A run's scratch (the browser profile, with cookies and session state)
//! is never left at rest when `ui-qa` is killed: its watchdog removes it,
//! and when the watchdog is gone too, the next run in the workspace does
//! (or, once the workspace is gone, any later run of the same user). The
//! sweep removes only what this user's runs made and can prove dead: what
//! another user plants never makes it remove a live run's profile.
#![cfg(target_os = "linux")]

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

/// Every test here kills runs and looks at what sweeps remove, and any
/// `ui-qa` run of this user sweeps profiles whose owner is dead: run side
/// by side, one test's run removed another's killed profile before that
/// test looked. They take turns.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn the_watchdog_removes_the_scratch_of_a_killed_run() {
    let _turn = one_at_a_time();
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
    let _turn = one_at_a_time();
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
    end_browser(&work, &profile);
    // The next run in the same workspace removes it before it starts.
    let quick = write(dir.path(), "quick.jsonc", QUICK);
    let (code, r) = common::run_json(&quick, &ws, &[], |_| {});
    assert_eq!(code, 0, "{r:#}");
    assert!(!work.exists(), "the orphaned scratch was not swept");
    assert!(
        !profile.exists(),
        "the orphaned browser profile was not swept: {}",
        profile.display()
    );
}

/// A quick terminal flow.
const QUICK: &str =
    r#"{"target":{"command":{"argv":["true"]}},"steps":[{"action":"assertProcessExited"}]}"#;

/// Ends, by hand, every process naming the run's scratch or profile, and
/// waits until none is left (a browser still running would make its
/// profile directory again).
fn end_browser(work: &Path, profile: &Path) {
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
    assert!(wait_until(Duration::from_secs(30), || {
        std::fs::read_dir("/proc").unwrap().flatten().all(|e| {
            std::fs::read(e.path().join("cmdline")).map_or(true, |c| {
                !String::from_utf8_lossy(&c).contains(&profile.display().to_string())
            })
        })
    }));
}

#[test]
fn a_killed_runs_profile_is_swept_even_when_its_workspace_is_gone() {
    let _turn = one_at_a_time();
    let (dir, ws, mut child, work) = start_holding();
    let profile = real_profile(&work);
    let (wd, _) = watchdog_of(child.id()).expect("the run's watchdog");
    kill9(wd);
    assert!(wait_until(Duration::from_secs(30), || !alive(wd as u64)));
    kill9(child.id());
    let _ = child.wait();
    end_browser(&work, &profile);
    // The workspace is deleted: no sweep of a run there will find the
    // profile any more.
    std::fs::remove_dir_all(&ws).unwrap();
    assert!(profile.join("Default").is_dir(), "{}", profile.display());
    // Any later run of the same user, in another workspace, removes it.
    let quick = write(dir.path(), "quick.jsonc", QUICK);
    let (code, r) = common::run_json(&quick, &dir.path().join("other-ws"), &[], |_| {});
    assert_eq!(code, 0, "{r:#}");
    assert!(
        !profile.exists(),
        "the orphaned browser profile outlived its workspace: {}",
        profile.display()
    );
}

#[test]
fn the_browser_profile_is_owner_only_inside() {
    let _turn = one_at_a_time();
    use std::os::unix::fs::PermissionsExt;
    let (_dir, _ws, mut child, work) = start_holding();
    let profile = real_profile(&work);
    for p in [profile.clone(), profile.join("Default")] {
        let mode = std::fs::symlink_metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode & 0o077, 0, "{} is {mode:o}", p.display());
    }
    kill9(child.id());
    let _ = child.wait();
}

/// Runs `script` with `sh -c` as uid/gid 65534, no supplementary groups.
fn as_nobody(script: &str) {
    let ok = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "sh",
            "-c",
        ])
        .arg(script)
        .status()
        .unwrap()
        .success();
    assert!(ok, "as 65534: {script}");
}

#[test]
fn a_planted_owner_file_never_sweeps_a_live_runs_profile() {
    let _turn = one_at_a_time();
    use std::os::unix::fs::PermissionsExt;
    // A live run, held until the test writes `done.txt` into its site.
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(
        site.join("index.html"),
        r#"<h1 id="s">waiting</h1><script>
async function poll() {
  const r = await fetch('/done.txt', { cache: 'no-store' });
  if (r.ok) document.getElementById('s').textContent = 'done';
  else setTimeout(poll, 500);
}
setTimeout(poll, 500);
</script>"#,
    )
    .unwrap();
    let flow = write(
        dir.path(),
        "gated.jsonc",
        r#"{"timeoutMs":150000,"target":{"serve":"site","url":"/index.html"},
            "steps":[{"action":"assertText","locator":{"role":"heading"},"equals":"done","timeoutMs":140000}]}"#,
    );
    let ws = dir.path().join("ws");
    let child = Command::new(bin())
        .args(["run", "--json", "--video", "off", "--workspace"])
        .arg(&ws)
        .arg(&flow)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        wait_until(Duration::from_secs(120), || stage_started(&ws, "step 1")),
        "the run never reached its step"
    );
    let work = profile_in_use(&ws).expect("a profile in use");
    let link = std::fs::read_link(work.join("chromium-profile"))
        .expect("as root, the profile is the helper user's, linked from work/");
    let profile = link.to_str().unwrap().to_string();

    // The other user's project: a run whose owner is dead, linking to the
    // live run's profile (whose base anyone can list in /dev/shm).
    let other = tempfile::tempdir().unwrap();
    std::fs::set_permissions(other.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let proj = other.path().join("proj");
    let plant = |runs: &str| {
        format!(
            "mkdir -p {runs}/x/work && echo '999999999 1' > {runs}/x/work/.owner && \
             ln -s {profile} {runs}/x/work/chromium-profile"
        )
    };
    std::fs::create_dir(&proj).unwrap();
    std::os::unix::fs::lchown(&proj, Some(65534), Some(65534)).unwrap();
    as_nobody(&format!(
        "printf '%s' '{QUICK}' > {p}/flow.jsonc && {}",
        plant(&format!("{}/.ui-qa/runs", proj.display())),
        p = proj.display()
    ));
    // Root runs a flow there: the project is refused, nothing is swept.
    let o = Command::new(bin())
        .arg("run")
        .arg(proj.join("flow.jsonc"))
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // And a workspace of root's whose `runs/` others may write in: the
    // sweep takes nothing another user made there.
    let mine = dir.path().join("mine");
    std::fs::create_dir_all(mine.join("runs")).unwrap();
    std::fs::set_permissions(mine.join("runs"), std::fs::Permissions::from_mode(0o1777)).unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    as_nobody(&plant(&mine.join("runs").display().to_string()));
    let quick = write(dir.path(), "quick.jsonc", QUICK);
    let (code, r) = common::run_json(&quick, &mine, &[], |_| {});
    assert_eq!(code, 0, "{r:#}");
    assert!(
        Path::new(&profile).join("Default").is_dir(),
        "the live run's profile was swept: {profile}"
    );
    // The live run goes on and passes.
    std::fs::write(site.join("done.txt"), "done").unwrap();
    let out = child.wait_with_output().unwrap();
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{r:#}");
    assert_eq!(r["status"], "PASSED", "{r:#}");
}
