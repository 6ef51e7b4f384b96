//! Ownership comes from what the run set up, never from command lines: a
//! process that merely names the run's private profile directory in its
//! arguments is not the run's, and cleanup never signals it.

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
    s.perform(&flow.steps[0], Deadline::after_ms(60_000))
        .await
        .unwrap();
    // A process in its own session, started by someone else (here: a shell
    // this test started outside the run), whose arguments contain the
    // run's profile path — like `tail -F` or an editor on that directory.
    let mut parent = Command::new("sh")
        .args([
            "-c",
            "setsid python3 -c 'import time; time.sleep(600)' \"$1\" & echo $!; wait",
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
        pid: line.trim().parse().unwrap(),
        parent,
    };
    // `$!` is known before the job has exec'ed: wait for its command line.
    let names_profile = || {
        std::fs::read(format!("/proc/{}/cmdline", stranger.pid))
            .is_ok_and(|c| String::from_utf8_lossy(&c).contains(&profile.display().to_string()))
    };
    let t = std::time::Instant::now();
    while !names_profile() && t.elapsed() < std::time::Duration::from_secs(60) {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(names_profile(), "the stranger names the profile directory");
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
