//! The program under test cannot redirect evidence: swapping the run's
//! `artifacts` directory, or the run directory itself, for a symlink to
//! somewhere else mid-run writes nothing there, and the run fails closed.

mod common;

use common::{walk, write};
use serde_json::Value;
use std::path::Path;

/// A terminal flow whose program, when told "go", runs `swap` (a shell
/// command) and prints SWAPPED; a capture before makes an artifact.
fn swapping_flow(dir: &Path, swap: &str) -> std::path::PathBuf {
    let script = format!("echo READY; read x; {swap} && echo SWAPPED; sleep 30");
    write(
        dir,
        "swap.jsonc",
        &format!(
            r#"{{"target":{{"command":{{"argv":["sh","-c",{}]}}}},
                "steps":[{{"action":"waitForText","text":"READY","timeoutMs":60000}},
                         {{"action":"capture","name":"before"}},
                         {{"action":"sendText","text":"go"}},{{"action":"sendKeys","keys":["Enter"]}},
                         {{"action":"waitForText","regex":"^SWAPPED","timeoutMs":60000}}]}}"#,
            serde_json::to_string(&script).unwrap()
        ),
    )
}

fn check_swap_fails_closed(
    swap: impl Fn(&Path, &Path) -> String,
) -> (tempfile::TempDir, Value, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let outside = dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let run = ws.canonicalize().unwrap_or_else(|_| {
        std::fs::create_dir_all(&ws).unwrap();
        ws.canonicalize().unwrap()
    });
    let run = run.join("runs/swap-run");
    let flow = swapping_flow(dir.path(), &swap(&run, &outside));
    let (code, r) = common::run_json(&flow, &ws, &["--run-id", "swap-run"], |_| {});
    // Nothing was written where the symlink pointed.
    assert_eq!(walk(&outside), Vec::<std::path::PathBuf>::new(), "{r:#}");
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(r["status"], "FAILED");
    assert_eq!(r["reasonCode"], "evidence.swapped", "{r:#}");
    // Every artifact still listed is where the result says, not through a
    // symlink.
    for group in r["artifacts"].as_object().unwrap().values() {
        for a in group.as_array().into_iter().flatten() {
            let Some(p) = a["path"].as_str() else {
                continue;
            };
            let canon = Path::new(p).canonicalize().unwrap();
            assert!(!canon.starts_with(&outside), "{p} leads outside");
        }
    }
    (dir, r, run)
}

#[test]
fn swapping_the_artifacts_directory_fails_the_run_closed() {
    let (_dir, _r, run) = check_swap_fails_closed(|run, outside| {
        format!(
            "mv {0}/artifacts {0}/artifacts.moved && ln -s {1} {0}/artifacts",
            run.display(),
            outside.display()
        )
    });
    // The result document itself is in the real run directory.
    let meta = std::fs::symlink_metadata(run.join("result.json")).unwrap();
    assert!(meta.is_file());
}

#[test]
fn swapping_the_run_directory_fails_the_run_closed() {
    let (_dir, _r, run) = check_swap_fails_closed(|run, outside| {
        format!(
            "mv {0} {0}.moved && ln -s {1} {0}",
            run.display(),
            outside.display()
        )
    });
    // result.json went into the directory ui-qa held (now moved), never
    // through the symlink.
    let moved = Path::new(&format!("{}.moved", run.display())).join("result.json");
    assert!(std::fs::symlink_metadata(&moved).unwrap().is_file());
}

/// A quick terminal flow.
#[cfg(target_os = "linux")]
const QUICK: &str =
    r#"{"target":{"command":{"argv":["true"]}},"steps":[{"action":"assertProcessExited"}]}"#;

/// Runs `argv` as uid/gid 65534 with no supplementary groups.
#[cfg(target_os = "linux")]
fn as_nobody(argv: &[&str]) {
    let ok = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .args(argv)
        .status()
        .unwrap()
        .success();
    assert!(ok, "as 65534: {argv:?}");
}

/// Whether `dir` holds nothing at all.
#[cfg(target_os = "linux")]
fn empty(dir: &Path) -> bool {
    std::fs::read_dir(dir).unwrap().next().is_none()
}

/// A temporary directory other users may traverse.
#[cfg(target_os = "linux")]
fn open_tempdir() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

#[cfg(target_os = "linux")]
#[test]
fn a_ui_qa_symlink_in_another_users_project_is_refused_and_nothing_is_written_there() {
    let dir = open_tempdir();
    let (proj, target) = (dir.path().join("proj"), dir.path().join("target"));
    let (p, t) = (proj.to_str().unwrap(), target.to_str().unwrap());
    // The other user's project, whose `.ui-qa` links to a directory of theirs.
    for d in [&proj, &target] {
        std::fs::create_dir(d).unwrap();
        std::os::unix::fs::lchown(d, Some(65534), Some(65534)).unwrap();
    }
    as_nobody(&["ln", "-s", t, &format!("{p}/.ui-qa")]);
    as_nobody(&[
        "sh",
        "-c",
        &format!("printf '%s' '{QUICK}' > {p}/flow.jsonc"),
    ]);
    let run = |extra: &[&str]| {
        std::process::Command::new(common::bin())
            .arg("run")
            .args(extra)
            .arg(proj.join("flow.jsonc"))
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    // The default workspace: refused, naming the owner and the fix.
    let o = run(&[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("uid 65534"), "{err}");
    assert!(err.contains("--workspace"), "{err}");
    // The link named as the workspace: never followed.
    let o = run(&["--workspace", &format!("{p}/.ui-qa")]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("symlink"), "{err}");
    // The MCP server's default workspace in that project: refused too.
    let o = std::process::Command::new(common::bin())
        .arg("mcp")
        .current_dir(&proj)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("uid 65534") && err.contains("--workspace"),
        "{err}"
    );
    assert!(
        empty(&target),
        "evidence was written through the other user's link: {:?}",
        walk(&target)
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_ui_qa_another_user_planted_in_a_shared_parent_is_not_adopted() {
    use std::os::unix::fs::PermissionsExt;
    let dir = open_tempdir();
    // A shared sticky parent (like /tmp) where the other user made `.ui-qa`,
    // and root's own private project in it, without `.git`.
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let planted = shared.join(".ui-qa");
    as_nobody(&["mkdir", planted.to_str().unwrap()]);
    let mine = shared.join("mine");
    std::fs::create_dir(&mine).unwrap();
    std::fs::set_permissions(&mine, std::fs::Permissions::from_mode(0o700)).unwrap();
    let flow = write(&mine, "flow.jsonc", QUICK);
    let o = std::process::Command::new(common::bin())
        .args(["run", "--json"])
        .arg(&flow)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    // The search stopped at the world-writable parent: the project is
    // root's own directory.
    let evidence = r["evidenceDir"].as_str().unwrap();
    assert!(
        Path::new(evidence).starts_with(mine.join(".ui-qa/runs")),
        "{evidence}"
    );
    assert!(empty(&planted), "the planted .ui-qa was adopted");
}
