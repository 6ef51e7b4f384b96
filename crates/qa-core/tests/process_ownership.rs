//! Process ownership against real processes: escaped daemons, job control,
//! SIGTERM-ignoring targets, same-named strangers and the watchdog.
//!
//! Every test uses `sleep` durations no other test uses, and no other test
//! process either ([`marker`]: `<n>.<tag>`, the tag being this test
//! process's pid), reads them back from `/proc/<pid>/cmdline` to find
//! processes for assertions, and sweeps them at the end in case an
//! assertion failed.
#![cfg(target_os = "linux")]

use qa_core::process::{CleanupReport, CleanupStatus, ProcessOwner};
use qa_core::Deadline;
use std::io::BufRead;
use std::time::{Duration, Instant};

const ROLE_ENV: &str = "QA_CORE_PROCESS_TEST_ROLE";
/// The tag of the test process that started a runner role (its markers).
const TAG_ENV: &str = "QA_CORE_PROCESS_TEST_TAG";

/// This test process's tag: its pid, or in a runner role the pid of the
/// test process that started it (so both use the same markers).
fn tag() -> String {
    std::env::var(TAG_ENV).unwrap_or_else(|_| std::process::id().to_string())
}

/// A `sleep` duration unique to test `n` of this test process: `<n>.<tag>`
/// (a valid `sleep` argument), so concurrent test runs never share one and
/// a sweep never kills another run's sleeper.
fn marker(n: u32) -> String {
    format!("{n}.{}", tag())
}

/// Pids whose argv is exactly `["sleep", marker]`.
fn sleeps(marker: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let argv: Vec<&[u8]> = cmd.split(|&b| b == 0).filter(|a| !a.is_empty()).collect();
        if argv.len() == 2
            && argv[0].ends_with(b"sleep")
            && argv[1] == marker.as_bytes()
            && running(pid)
        {
            out.push(pid);
        }
    }
    out
}

/// Running: present and not a zombie.
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        let state = s
            .rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().next());
        !matches!(state, Some("Z") | Some("X"))
    })
}

/// Whether `pid` ignores signal `sig` (its `SigIgn` mask in
/// `/proc/<pid>/status` has bit `sig - 1`).
fn ignores(pid: u32, sig: libc::c_int) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            let hex = s.lines().find_map(|l| l.strip_prefix("SigIgn:"))?;
            u64::from_str_radix(hex.trim(), 16).ok()
        })
        .is_some_and(|mask| mask & (1u64 << (sig - 1)) != 0)
}

fn field(pid: u32, n: usize) -> Option<u32> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the comm start at field 3.
    s.rsplit(')')
        .next()?
        .split_whitespace()
        .nth(n - 3)?
        .parse()
        .ok()
}

async fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(60);
    while !f() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// SIGKILLs, by pid, leftovers of one test's markers when dropped (failure
/// path): only `sleep <marker>` processes, and the markers are this test
/// process's own.
struct Sweep(Vec<String>);

impl Drop for Sweep {
    fn drop(&mut self) {
        for m in &self.0 {
            for pid in sleeps(m) {
                #[allow(unsafe_code)]
                // SAFETY: kill(2) on a `sleep <unique marker>` this test started.
                unsafe {
                    libc::kill(pid as i32, libc::SIGKILL);
                }
            }
        }
    }
}

fn sh(script: &str) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c").arg(script);
    cmd.stdin(std::process::Stdio::null());
    cmd
}

/// Cleanup with `grace_ms` before SIGKILL. Tests that expect SIGTERM to
/// be enough give it a grace no busy machine needs in full (a process that
/// dies of SIGTERM ends it at once).
async fn end(owner: &ProcessOwner, grace_ms: u64) -> CleanupReport {
    owner
        .end_all(Duration::from_millis(grace_ms), Deadline::after_ms(30_000))
        .await
}

fn how(report: &CleanupReport, pid: u32) -> Option<&str> {
    report
        .ended
        .iter()
        .find(|e| e.pid == pid)
        .map(|e| e.how.as_str())
}

#[tokio::test]
async fn double_forked_setsid_descendants_are_ended() {
    let (m1, m2, m3) = (marker(1001), marker(1002), marker(1003));
    let _sweep = Sweep(vec![m1.clone(), m2.clone(), m3.clone()]);
    let owner = ProcessOwner::new();
    let mut root = owner
        .spawn(
            sh(&format!(
                "setsid -f sleep {m1}; setsid sh -c 'sleep {m2} &' & sleep {m3}"
            )),
            "target",
        )
        .unwrap();
    let root_pid = root.id().unwrap();
    wait_for("all three sleeps", || {
        sleeps(&m1).len() == 1 && sleeps(&m2).len() == 1 && sleeps(&m3).len() == 1
    })
    .await;
    let (a, b) = (sleeps(&m1)[0], sleeps(&m2)[0]);
    // They escaped: other sessions, adopted by us (the subreaper).
    for p in [a, b] {
        wait_for("re-parenting", || field(p, 4) == Some(std::process::id())).await;
        assert_ne!(field(p, 6), Some(root_pid), "sleep {p} left the session");
    }
    let report = end(&owner, 10_000).await;
    assert_eq!(report.status, CleanupStatus::Clean, "{report:#?}");
    for p in [a, b] {
        assert!(!running(p), "escaped sleep {p} survived: {report:#?}");
        assert_eq!(how(&report, p), Some("SIGTERM"), "{report:#?}");
        let e = report.ended.iter().find(|e| e.pid == p).unwrap();
        assert_eq!(e.label, "target descendant");
    }
    assert!(sleeps(&m3).is_empty());
    let r = report.ended.iter().find(|e| e.pid == root_pid).unwrap();
    assert_eq!(r.label, "target");
    root.wait().await.unwrap();
}

#[tokio::test]
async fn escapee_found_before_the_sampler_saw_it() {
    let m = marker(1015);
    let _sweep = Sweep(vec![m.clone()]);
    let owner = ProcessOwner::new();
    // The intermediate process lives for microseconds; only the adoption
    // and the owner's marker connect the daemon to the run.
    let mut root = owner
        .spawn(sh(&format!("exec setsid -f sleep {m}")), "target")
        .unwrap();
    root.wait().await.unwrap();
    wait_for("the daemon", || sleeps(&m).len() == 1).await;
    let pid = sleeps(&m)[0];
    let report = end(&owner, 10_000).await;
    assert!(!running(pid), "{report:#?}");
    assert_eq!(how(&report, pid), Some("SIGTERM"), "{report:#?}");
}

#[tokio::test]
async fn job_control_groups_in_the_session_are_ended() {
    let m = marker(1005);
    let _sweep = Sweep(vec![m.clone()]);
    let owner = ProcessOwner::new();
    let mut cmd = tokio::process::Command::new("bash");
    cmd.args(["--norc", "-c", &format!("set -m; sleep {m} & wait")]);
    cmd.stdin(std::process::Stdio::null());
    let mut root = owner.spawn(cmd, "shell").unwrap();
    let root_pid = root.id().unwrap();
    wait_for("the background job", || sleeps(&m).len() == 1).await;
    let job = sleeps(&m)[0];
    assert_eq!(field(job, 5), Some(job), "the job has its own group");
    assert_eq!(field(job, 6), Some(root_pid), "in the shell's session");
    let report = end(&owner, 10_000).await;
    assert_eq!(report.status, CleanupStatus::Clean, "{report:#?}");
    assert!(!running(job), "{report:#?}");
    assert!(how(&report, job).is_some(), "{report:#?}");
    root.wait().await.unwrap();
}

#[tokio::test]
async fn sigterm_ignored_means_sigkill() {
    let owner = ProcessOwner::new();
    let mut root = owner
        .spawn(sh("trap '' TERM; while :; do sleep 0.1; done"), "stubborn")
        .unwrap();
    let pid = root.id().unwrap();
    // The shell has installed its trap once SIGTERM is in its ignored set.
    wait_for("the shell to ignore SIGTERM", || {
        ignores(pid, libc::SIGTERM)
    })
    .await;
    let report = end(&owner, 300).await;
    assert_eq!(report.status, CleanupStatus::Clean, "{report:#?}");
    assert_eq!(how(&report, pid), Some("SIGKILL"), "{report:#?}");
    assert!(!running(pid));
    root.wait().await.unwrap();
}

#[tokio::test]
async fn same_named_stranger_is_untouched() {
    let m = marker(1006);
    let _sweep = Sweep(vec![m.clone()]);
    let owner = ProcessOwner::new();
    let mut stranger = tokio::process::Command::new("sleep")
        .arg(&m)
        .spawn()
        .unwrap();
    let stranger_pid = stranger.id().unwrap();
    let mut mine = tokio::process::Command::new("sleep");
    mine.arg(&m);
    let mut mine = owner.spawn(mine, "sleeper").unwrap();
    let mine_pid = mine.id().unwrap();
    wait_for("both", || sleeps(&m).len() == 2).await;
    let report = end(&owner, 10_000).await;
    assert_eq!(how(&report, mine_pid), Some("SIGTERM"), "{report:#?}");
    assert!(report.ended.iter().all(|e| e.pid != stranger_pid));
    mine.wait().await.unwrap();
    // A sampler pass or two later, still untouched.
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(running(stranger_pid), "the stranger was signalled");
    stranger.kill().await.unwrap();
}

#[tokio::test]
async fn kill_all_now_is_immediate() {
    let m = marker(1008);
    let _sweep = Sweep(vec![m.clone()]);
    let owner = ProcessOwner::new();
    let mut root = owner
        .spawn(sh(&format!("trap '' TERM; sleep {m} & wait")), "target")
        .unwrap();
    wait_for("the sleep", || sleeps(&m).len() == 1).await;
    let child = sleeps(&m)[0];
    owner.kill_all_now();
    wait_for("SIGKILL to land", || !running(child)).await;
    root.wait().await.unwrap();
    let report = end(&owner, 10_000).await;
    assert_eq!(report.status, CleanupStatus::Clean, "{report:#?}");
}

#[tokio::test]
async fn nothing_registered_is_clean() {
    let owner = ProcessOwner::new();
    let report = end(&owner, 100).await;
    assert_eq!(report, CleanupReport::default());
}

/// Voluntary context switches of this process's sampler thread (named
/// `ui-qa-process-sampler`, `comm` keeps 15 bytes): it sleeps once per pass,
/// so the count advances once per pass.
fn sampler_switches() -> Option<u64> {
    for t in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        if !comm.starts_with("ui-qa-process-s") {
            continue;
        }
        let status = std::fs::read_to_string(t.path().join("status")).ok()?;
        return status
            .lines()
            .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
            .and_then(|v| v.trim().parse().ok());
    }
    None
}

/// Waits until the sampler has completed a few whole passes from now (each
/// pass that starts after this call sees what exists now).
async fn sampler_passes(n: u64) {
    match sampler_switches() {
        Some(c0) => {
            wait_for("sampler passes", || {
                sampler_switches().is_some_and(|c| c >= c0 + n)
            })
            .await
        }
        // No such thread to watch (renamed?): 13 sampling periods instead.
        None => tokio::time::sleep(Duration::from_secs(2)).await,
    }
}

/// Runner role: spawn through an owner, print pids, wait to be killed.
async fn runner_role() {
    let (sleeper, daemon) = (marker(1007), marker(1075));
    let owner = ProcessOwner::new();
    let mut cmd = tokio::process::Command::new("sleep");
    cmd.arg(&sleeper);
    let child = owner.spawn(cmd, "sleeper").unwrap();
    let mut escapee = owner
        .spawn(sh(&format!("setsid -f sleep {daemon}")), "daemon")
        .unwrap();
    escapee.wait().await.unwrap();
    println!("SLEEP_PID {}", child.id().unwrap());
    // The escaped daemon runs (the child `setsid -f` forked may not have
    // exec'd yet when the shell exits)…
    wait_for("the escaped daemon", || sleeps(&daemon).len() == 1).await;
    // …and the sampler, which reports escaped sessions to the watchdog,
    // has since made whole passes (one would do; a pass may also have to
    // wait for the daemon's environment to be readable).
    sampler_passes(4).await;
    println!("READY");
    // Wait to be killed; exit if the test that started us is gone (stdin
    // reaches end-of-file) or after a minute, so a failed test leaves no
    // runner behind.
    let stdin_closed = tokio::task::spawn_blocking(|| {
        let mut sink = Vec::new();
        let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut sink);
    });
    let _ = tokio::time::timeout(Duration::from_secs(60), stdin_closed).await;
    std::process::exit(0);
}

#[tokio::test]
async fn watchdog_ends_sessions_when_runner_is_killed() {
    if std::env::var_os(ROLE_ENV).is_some() {
        return runner_role().await;
    }
    let (sleeper, daemon_marker) = (marker(1007), marker(1075));
    let _sweep = Sweep(vec![sleeper, daemon_marker.clone()]);
    let mut runner = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "watchdog_ends_sessions_when_runner_is_killed",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ROLE_ENV, "runner")
        .env(TAG_ENV, tag())
        .stdout(std::process::Stdio::piped())
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = runner.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut sleep_pid = None;
    loop {
        let line = rx
            .recv_timeout(Duration::from_secs(120))
            .expect("runner printed its pids");
        // libtest may print `test <name> ... ` on the same line.
        if let Some((_, p)) = line.split_once("SLEEP_PID ") {
            sleep_pid = Some(p.trim().parse::<u32>().unwrap());
        }
        if line.ends_with("READY") {
            break;
        }
    }
    let sleep_pid = sleep_pid.unwrap();
    assert!(running(sleep_pid));
    let daemon = sleeps(&daemon_marker);
    assert_eq!(daemon.len(), 1);
    runner.kill().unwrap(); // SIGKILL: no cleanup in the runner.
    runner.wait().unwrap();
    wait_for("the watchdog to end the sleep", || !running(sleep_pid)).await;
    wait_for("the watchdog to end the daemon", || !running(daemon[0])).await;
    // Orphans re-parented to this process (a subreaper): collect them.
    for p in [sleep_pid, daemon[0]] {
        #[allow(unsafe_code)]
        // SAFETY: waitpid on one pid, no status pointer.
        unsafe {
            libc::waitpid(p as i32, std::ptr::null_mut(), libc::WNOHANG);
        }
    }
}
