//! Nothing `ui-qa` starts outlives it — not even a zombie. Alone in its
//! own test binary: the test process becomes a child subreaper, so anything
//! ui-qa leaves behind re-parents to it where the test can see it, and no
//! other test spawns processes meanwhile.
#![cfg(target_os = "linux")]

mod common;

use common::{all_pids, bin, proc_stat, unique_sleep, write, KillSleepers};
use std::process::{Command, Stdio};

/// Makes this test process a child subreaper, so whatever `ui-qa` leaves
/// behind (zombies included) re-parents here where the test can see it.
fn become_subreaper() {
    #[allow(unsafe_code)]
    // SAFETY: prctl with constant arguments.
    let r = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    assert_eq!(r, 0);
}

/// Children of this process (zombies included) other than `except`.
fn my_children(except: &[u32]) -> Vec<String> {
    let me = std::process::id();
    all_pids()
        .into_iter()
        .filter(|p| !except.contains(p))
        .filter_map(|pid| {
            let (comm, state, ppid) = proc_stat(pid)?;
            (ppid == me).then(|| format!("{pid} ({comm}) {state}"))
        })
        .collect()
}

#[test]
fn nothing_ui_qa_started_outlives_it_not_even_a_zombie() {
    become_subreaper();
    let dir = tempfile::tempdir().unwrap();
    let marker = unique_sleep(4802);
    let _sweep = KillSleepers(vec![marker.clone()]);
    let tui = write(
        dir.path(),
        "tui.jsonc",
        &format!(
            r#"{{"target":{{"command":{{"argv":["bash","--norc","--noprofile","-c","setsid sleep {marker} & echo READY; wait"]}}}},
                "steps":[{{"action":"waitForText","text":"READY","timeoutMs":60000}}]}}"#
        ),
    );
    let web = write(
        dir.path(),
        "web.jsonc",
        r#"{"target":{"serve":"web","url":"/form.html"},
            "steps":[{"action":"fill","locator":{"label":"Name"},"value":"Ada"},
                     {"action":"screenshot","name":"form"}]}"#,
    );
    std::fs::create_dir(dir.path().join("web")).unwrap();
    std::fs::copy(
        common::root().join("tests/fixtures/web/form.html"),
        dir.path().join("web/form.html"),
    )
    .unwrap();
    for flow in [&tui, &web] {
        let mut c = Command::new(bin());
        c.args(["run", "--json", "--workspace"])
            .arg(dir.path().join("ws"))
            .arg(flow)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let child = c.spawn().unwrap();
        let ui_qa = child.id();
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // ui-qa has exited and been collected: everything it started —
        // its watchdog, Chromium's helpers, adopted daemons — was ended and
        // collected by ui-qa itself, so nothing re-parented to us.
        let left = my_children(&[ui_qa]);
        assert!(left.is_empty(), "left behind by {flow:?}: {left:?}");
    }
}
