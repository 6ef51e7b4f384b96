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
