//! Cleanup ends what the program started: job-control groups in its session
//! and (with the process module's session sweep / subreaper) escapees.

mod common;

use common::*;

async fn background_job_is_gone(command: &str, survivor: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let flow = format!(
        r#"{{ "target": {{ "command": {{ "argv": ["bash", "--norc", "--noprofile", "-i"], "env": {{ "PS1": "prompt$ " }} }} }},
          "steps": [
            {{ "action": "waitForText", "text": "prompt$", "timeoutMs": 10000 }},
            {{ "action": "sendText", "text": {} }},
            {{ "action": "sendKeys", "keys": ["Enter"] }},
            {{ "action": "waitForText", "regex": "(?m)^prompt\\$ .*\\n(.*\\n)?prompt\\$", "timeoutMs": 5000 }},
            {{ "action": "waitForTimeout", "ms": 200 }}
          ] }}"#,
        js(command)
    );
    let run = run_flow(&flow, dir.path()).await;
    run.assert_passed();
    // Give signals a moment to land.
    for _ in 0..50 {
        if process_with_cmdline(survivor).is_none() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let left = process_with_cmdline(survivor);
    if let Some(pid) = left {
        // Do not leave it behind for the next test run.
        #[allow(unsafe_code)]
        unsafe {
            libc::kill(pid as i32, libc::SIGKILL);
        }
    }
    assert!(
        left.is_none(),
        "{survivor:?} survived the run (pid {left:?}); cleanup: {:?}",
        run.close.cleanup
    );
}

#[tokio::test]
async fn job_control_background_sleep_is_ended() {
    background_job_is_gone("sleep 1234 &", &["sleep", "1234"]).await;
}

#[tokio::test]
async fn setsid_escapee_is_ended() {
    background_job_is_gone("setsid sleep 1235 &", &["sleep", "1235"]).await;
}
