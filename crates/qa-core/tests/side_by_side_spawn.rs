//! Two runs side by side in one host that claims unmarked orphans (the
//! `ui-qa` binary does): a process one run is starting — between fork and
//! exec it has the host's environment, no owner marker, and no owner knows
//! it yet — is never claimed by the other run's cleanup. Before, about one
//! web flow in 120 of a `--jobs 2` suite failed at launch: the other run's
//! sampler took the browser being started for an orphan of its own and its
//! cleanup ended it.
//!
//! Its own test binary: `claim_unmarked_orphans` is process-wide.
#![cfg(target_os = "linux")]

use qa_core::process::{claim_unmarked_orphans, ProcessOwner};
use qa_core::Deadline;
use std::process::Command;
use std::time::Duration;

/// A `sleep` in a session of its own whose environment has no owner
/// marker: what a child looks like to the other run between fork and exec
/// (it still has the host's environment).
fn unmarked_child(secs: &str) -> std::process::Child {
    let mut c = Command::new("/bin/sleep");
    c.arg(secs).env_clear().env("PATH", "/usr/bin:/bin");
    ProcessOwner::prepare_std(&mut c);
    c.spawn().unwrap()
}

fn alive(child: &mut std::process::Child) -> bool {
    child.try_wait().unwrap().is_none()
}

fn ends(report: &qa_core::process::CleanupReport, pid: u32) -> bool {
    report.ended.iter().any(|e| e.pid == pid)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_another_run_is_starting_is_never_claimed() {
    claim_unmarked_orphans(true);
    let bound = || Deadline::after(Duration::from_secs(20));

    // Run A is active: it owns a process of its own.
    let a = ProcessOwner::new();
    let mut cmd = tokio::process::Command::new("/bin/sleep");
    cmd.arg("311.5");
    let mut a_root = a.spawn(cmd, "a").unwrap();

    // Control: with no start under way, an unmarked child in a session of
    // its own is taken as A's orphan (the only active run) and ended.
    let mut orphan = unmarked_child("312.5");
    let pid = orphan.id();
    let r = a.end_all(Duration::from_millis(500), bound()).await;
    assert!(ends(&r, pid), "the control orphan was not claimed: {r:?}");
    let _ = orphan.wait();
    assert!(r.ended.iter().any(|e| e.pid == a_root.id().unwrap()));
    let _ = a_root.wait().await;

    // A is active again.
    let mut cmd = tokio::process::Command::new("/bin/sleep");
    cmd.arg("313.5");
    let mut a_root = a.spawn(cmd, "a").unwrap();

    // Run B starts a process: until B registers it, A must leave it alone,
    // however often A looks.
    let b = ProcessOwner::new();
    let starting = b.spawning();
    let mut child = unmarked_child("314.5");
    let pid = child.id();
    for _ in 0..3 {
        let r = a.end_all(Duration::from_millis(200), bound()).await;
        assert!(!ends(&r, pid), "A ended the process B is starting: {r:?}");
        assert!(alive(&mut child), "the process B is starting is gone");
        // A's own process is ended the first time; start another so A
        // stays active.
        let _ = a_root.wait().await;
        let mut cmd = tokio::process::Command::new("/bin/sleep");
        cmd.arg("315.5");
        a_root = a.spawn(cmd, "a").unwrap();
    }
    b.register(pid, "b");
    drop(starting);

    // Registered with B: A still never takes it; B ends it.
    let r = a.end_all(Duration::from_millis(200), bound()).await;
    assert!(!ends(&r, pid), "A ended B's process: {r:?}");
    assert!(alive(&mut child));
    let _ = a_root.wait().await;
    let r = b.end_all(Duration::from_millis(500), bound()).await;
    assert!(ends(&r, pid), "B did not end its own process: {r:?}");
    let _ = child.wait();
}
