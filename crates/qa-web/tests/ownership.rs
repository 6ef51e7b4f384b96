//! Ownership comes from what the run set up, never from command lines: a
//! process that merely names the run's private profile directory in its
//! arguments is not the run's, and cleanup never signals it. (Unix: it
//! reads `/proc` and signals the stranger itself; on Windows the job is
//! the only thing cleanup ends, see `windows_browser.rs`.)
#![cfg(unix)]

mod common;
use common::*;
use qa_core::{Deadline, Flow, SurfaceDriver};
use std::process::{Command, Stdio};

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
        .unwrap_or(false)
}

/// Ends a process this test started, by pid, when dropped.
struct Stranger {
    pid: u32,
    parent: std::process::Child,
}

impl Drop for Stranger {
    fn drop(&mut self) {
        #[allow(unsafe_code)]
        // SAFETY: kill(2) on a pid this test started and still holds.
        unsafe {
            libc::kill(self.pid as i32, libc::SIGKILL);
        }
        let _ = self.parent.kill();
        let _ = self.parent.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stranger_naming_the_profile_dir_is_never_signalled() {
    let flow = Flow::parse(
        r#"{ "target": { "serve": "web", "url": "/form.html" }, "steps": [
        { "action": "fill", "locator": { "label": "Name" }, "value": "Ada" }
    ] }"#,
        &fixtures(),
    )
    .unwrap();
    let run = context();
    let profile = run.ctx.evidence.run_dir().join("work/chromium-profile");
    let mut s = qa_web::WebDriver::new()
        .open(&flow, run.ctx.clone())
        .await
        .unwrap();
    // Where the profile really is (a link when the browser runs as its own user).
    let profile = common::real_path(&profile);
    s.perform(&flow.steps[0], Deadline::after_ms(60_000))
        .await
        .unwrap();
    // A process in its own session, started by someone else (here: a shell
    // this test started outside the run), whose arguments contain the
    // run's profile path — like `tail -F` or an editor on that directory.
    // It prints its own pid once it runs: `$!` would name the shell's child
    // before its exec, whose command line is briefly empty while it execs.
    let mut parent = Command::new("sh")
        .args([
            "-c",
            "setsid python3 -c 'import os, time; print(os.getpid(), flush=True); time.sleep(600)' \"$1\" & wait",
            "sh",
        ])
        .arg(&profile)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(parent.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let stranger = Stranger {
        pid: line.trim().parse().expect("the stranger prints its pid"),
        parent,
    };
    let cmdline = std::fs::read(format!("/proc/{}/cmdline", stranger.pid)).unwrap();
    assert!(
        String::from_utf8_lossy(&cmdline).contains(&profile.display().to_string()),
        "the stranger names the profile directory: {:?}",
        String::from_utf8_lossy(&cmdline)
    );
    let closed = s.close(Deadline::after_ms(60_000)).await;
    assert!(
        alive(stranger.pid),
        "cleanup signalled a process it did not start"
    );
    let mentioned = closed
        .cleanup
        .ended
        .iter()
        .map(|e| e.pid)
        .chain(closed.cleanup.left.iter().map(|l| l.pid))
        .any(|p| p == stranger.pid);
    assert!(!mentioned, "{:?}", closed.cleanup);
    assert!(closed.cleanup.left.is_empty(), "{:?}", closed.cleanup.left);
    drop(stranger);
}
