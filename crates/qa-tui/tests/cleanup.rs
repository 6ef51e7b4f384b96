//! Cleanup ends what the program started: job-control groups in its session
//! and (with the process module's session sweep / subreaper) escapees.

// Unix programs (bash, python3, the fixture's Unix half) through a Unix
// PTY, with Unix process APIs; the Windows backend's pure parts are
// unit-tested in the library.
#![cfg(unix)]

mod common;

use common::*;
use std::time::{Duration, Instant};

/// Types `start` (which starts `sleep <marker>` one way or another, and ends
/// with `&` or `;`) into an interactive bash, waits until that sleep runs
/// (`ESCAPED` is printed only once `pgrep` sees it) and bash is back at its
/// prompt, ends the run, and checks the sleep is gone.
async fn background_job_is_gone(start: &str, marker: &str) {
    let survivor = ["sleep", marker];
    // A failing test must not leave its sleeper behind.
    let _kill = KillOnDrop(survivor.iter().map(|s| s.to_string()).collect());
    let dir = tempfile::tempdir().unwrap();
    // `ESC""APED`: the typed line itself never reads ESCAPED.
    let command = format!(
        "{start} until pgrep -fx 'sleep {marker}' >/dev/null; do sleep 0.05; done; echo ESC\"\"APED"
    );
    let flow = format!(
        r#"{{ "target": {{ "command": {{ "argv": ["bash", "--norc", "--noprofile", "-i"], "env": {{ "PS1": "prompt$ " }} }} }},
          "steps": [
            {{ "action": "waitForText", "text": "prompt$", "timeoutMs": 15000 }},
            {{ "action": "sendText", "text": {} }},
            {{ "action": "sendKeys", "keys": ["Enter"] }},
            {{ "action": "waitForText", "regex": "(?m)^ESCAPED[^\\n]*\\n(?:.*\\n)*?prompt\\$", "timeoutMs": 15000 }}
          ] }}"#,
        js(&command)
    );
    let run = run_flow(&flow, dir.path()).await;
    run.assert_passed();
    // Cleanup has reported; give the signals time to land (polled).
    let until = Instant::now() + Duration::from_secs(15);
    while process_with_cmdline(&survivor).is_some() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left = process_with_cmdline(&survivor);
    assert!(
        left.is_none(),
        "{survivor:?} survived the run (pid {left:?}); cleanup: {:?}",
        run.close.cleanup
    );
}

#[tokio::test]
async fn job_control_background_sleep_is_ended() {
    let marker = unique_sleep(1234);
    background_job_is_gone(&format!("sleep {marker} &"), &marker).await;
}

#[tokio::test]
async fn setsid_escapee_is_ended() {
    let marker = unique_sleep(1235);
    // `-f`: always fork, so the sleep leaves bash's session at once.
    background_job_is_gone(&format!("setsid -f sleep {marker};"), &marker).await;
}
