//! End to end through the `ui-qa` binary against apps that embed Chromium
//! (`target.app`), launched by the flow on an owned virtual display: CEF
//! 131's sample browser `cefsimple` (PyPI `cef-capi-py`, unpacked by
//! `cargo xtask deps` into `tests/fixtures/cef/runtime`) over the DevTools
//! pipe and over a port, and a Qt WebEngine app (Debian's PyQt5, Chromium
//! 87) over its port. Nothing of an app may outlive its run: beside the
//! run's own cleanup report, the test process is a child subreaper, so a
//! process of the app that outlived `ui-qa` re-parents to it and is seen.
#![cfg(target_os = "linux")]

mod common;

use common::{run_json, write};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// CEF's sample browser; installed by `cargo xtask deps` (never skipped:
/// a missing fixture fails the test).
fn cefsimple() -> PathBuf {
    let p = common::root().join("tests/fixtures/cef/runtime/cefsimple");
    assert!(
        p.is_file(),
        "{} is missing: run `cargo xtask deps` (it unpacks CEF from PyPI's cef-capi-py)",
        p.display()
    );
    p
}

/// The Qt WebEngine fixture app and the Python that has PyQt5.
fn qt_app() -> (String, String) {
    let app = common::root().join("tests/fixtures/qtwebengine/app.py");
    let ok = Command::new("/usr/bin/python3")
        .args(["-c", "import PyQt5.QtWebEngineWidgets"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(
        ok,
        "Debian's python3-pyqt5.qtwebengine is missing: run `cargo xtask deps`"
    );
    ("/usr/bin/python3".into(), app.display().to_string())
}

/// Whether the test runs as root (it can then act as another user).
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self")
        .map(|m| m.uid() == 0)
        .unwrap_or(false)
}

/// Makes this test process a child subreaper (once): a process of an app
/// that outlives its `ui-qa` re-parents here, where the test sees it.
fn become_subreaper() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        #[allow(unsafe_code)]
        // SAFETY: prctl with constant arguments.
        let r = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        assert_eq!(r, 0);
    });
}

/// Children of this test process that are an app's (CEF's, Qt WebEngine's
/// or the Qt fixture's): orphans an ended `ui-qa` left (zombies included).
fn orphans() -> Vec<String> {
    let me = std::process::id();
    let cef = common::root().join("tests/fixtures/cef/runtime");
    let cef = cef.canonicalize().unwrap_or(cef);
    common::all_pids()
        .into_iter()
        .filter_map(|pid| {
            let (comm, state, ppid) = common::proc_stat(pid)?;
            let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap_or_default();
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let app = exe.starts_with(&cef)
                || comm.starts_with("QtWebEngine")
                || comm == "cefsimple"
                || String::from_utf8_lossy(&cmd).contains("qtwebengine/app.py");
            (ppid == me && app).then(|| format!("{pid} ({comm}) {state}"))
        })
        .collect()
}

/// The run ended everything of the app: the cleanup is clean and lists the
/// app, and no process of an app re-parented to this test (the subreaper).
fn assert_nothing_outlives(r: &Value) {
    common::assert_clean(r, &["app"]);
    let left = orphans();
    assert!(
        left.is_empty(),
        "processes of an app outlived the run: {left:?}"
    );
}

/// A flow that fills, clicks, asserts and takes a screenshot in `app`'s
/// page (the web fixture's form).
fn form_flow(argv: Vec<String>, devtools: &str) -> Value {
    json!({
        "target": { "app": {
            "launch": { "argv": argv },
            "devtools": devtools
        } },
        "steps": [
            { "action": "fill", "locator": { "label": "Name" }, "value": "Ada" },
            { "action": "click", "locator": { "role": "button", "name": "Send" } },
            { "action": "assertText", "locator": { "testId": "result" }, "includes": "Hello Ada" },
            { "action": "screenshot", "name": "sent" }
        ]
    })
}

/// Runs `steps` in the Qt fixture app showing the web fixture's form, its
/// DevTools over `devtools`, on an owned display; exit code and result.
fn run_qt(devtools: &str, steps: Value) -> (i32, Value) {
    let (python, app) = qt_app();
    let site = common::serve_dir(&common::root().join("tests/fixtures/web"));
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    become_subreaper();
    let argv = vec![python, app, format!("{}/form.html", site.base)];
    let mut flow = form_flow(argv, devtools);
    if !steps.is_null() {
        flow["steps"] = steps;
    }
    let f = write(dir.path(), "qt.json", &flow.to_string());
    run_json(&f, ws.path(), &["--virtual-display"], |_| {})
}

/// The names of a result's screenshots.
fn shot_names(r: &Value) -> Vec<String> {
    r["artifacts"]["screenshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            Path::new(s["path"].as_str().unwrap())
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

/// A CEF app launched by a flow with its DevTools pipe is driven with
/// browser steps; the page's screenshot and the window's own picture and
/// video are kept; the app and every process it started end with the run.
#[test]
fn a_cef_app_over_its_pipe_is_driven_and_nothing_of_it_outlives_the_run() {
    let cef = cefsimple();
    let site = common::serve_dir(&common::root().join("tests/fixtures/web"));
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    become_subreaper();
    let argv = vec![
        cef.display().to_string(),
        format!("--url={}/form.html", site.base),
    ];
    let f = write(dir.path(), "cef.json", &form_flow(argv, "pipe").to_string());
    let (code, r) = run_json(
        &f,
        ws.path(),
        &["--virtual-display", "--video", "on"],
        |_| {},
    );
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["status"], "PASSED", "{r:#}");
    assert_eq!(
        r["selection"]["presentation"], "app",
        "{:#}",
        r["selection"]
    );
    let shots = shot_names(&r);
    assert!(shots.contains(&"sent.png".to_string()), "{shots:?}");
    assert!(shots.contains(&"sent-window.png".to_string()), "{shots:?}");
    let videos = r["artifacts"]["videos"].as_array().unwrap();
    assert_eq!(videos.len(), 1, "{:#}", r["artifacts"]);
    assert!(common::video_seconds(videos[0]["path"].as_str().unwrap()) > 0.0);
    assert!(r.to_string().contains("over DevTools (pipe)"), "{r:#}");
    assert_nothing_outlives(&r);
}

/// A Qt WebEngine app (Chromium 87, no pipe) launched by a flow is driven
/// over the loopback port ui-qa gives it, and nothing of it outlives the run.
#[test]
fn a_qt_webengine_app_over_its_port_is_driven_and_nothing_of_it_outlives_the_run() {
    let (code, r) = run_qt("port", Value::Null);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["status"], "PASSED", "{r:#}");
    assert!(shot_names(&r).contains(&"sent.png".to_string()), "{r:#}");
    assert!(r.to_string().contains("watched the port"), "{r:#}");
    assert_nothing_outlives(&r);
}

/// Qt WebEngine 5 drops all of a page's input after one DevTools key
/// event, so a `press` there fails at once with the reason (never by its
/// timeout), after `fill` typed without one.
#[test]
fn a_key_press_in_qt_webengine_5_is_refused_with_the_reason() {
    let (_, r) = run_qt(
        "port",
        json!([
            { "action": "fill", "locator": { "label": "Name" }, "value": "Ada" },
            { "action": "press", "key": "Enter" }
        ]),
    );
    assert_eq!(r["status"], "FAILED", "{r:#}");
    assert_eq!(r["reasonCode"], "web.input.failed", "{r:#}");
    assert_eq!(r["timedOut"], false, "{r:#}");
    assert_eq!(r["steps"][0]["status"], "passed", "{r:#}");
    assert!(
        r["reason"].as_str().unwrap().contains("Qt WebEngine 5"),
        "{r:#}"
    );
    assert_nothing_outlives(&r);
}

/// An app that never answers on the DevTools channel the flow names (Qt
/// WebEngine has no pipe) leaves the run BLOCKED with a handoff that names
/// the fix; nothing of it outlives the run.
#[test]
fn an_app_without_devtools_on_the_channel_is_blocked_with_a_handoff() {
    let (code, r) = run_qt("pipe", Value::Null);
    assert_ne!(code, 0);
    assert_eq!(r["status"], "BLOCKED", "{r:#}");
    assert_eq!(r["reasonCode"], "web.app.no_devtools", "{r:#}");
    let handoff = r["blockedHandoff"].to_string();
    assert!(
        handoff.contains("\\\"devtools\\\": \\\"port\\\""),
        "{handoff}"
    );
    assert_nothing_outlives(&r);
}

/// A program that is not there is BLOCKED before anything starts.
#[test]
fn an_app_that_is_not_installed_is_blocked_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "none.json",
        &json!({
            "target": { "app": { "launch": { "argv": ["no-such-cef-app-here"] }, "devtools": "pipe" } },
            "steps": [ { "action": "screenshot" } ]
        })
        .to_string(),
    );
    let (_, r) = run_json(&f, ws.path(), &["--virtual-display"], |_| {});
    assert_eq!(r["status"], "BLOCKED", "{r:#}");
    assert!(
        r["blockedHandoff"]
            .to_string()
            .contains("no-such-cef-app-here"),
        "{r:#}"
    );
    assert_eq!(
        r["cleanup"]["ended"].as_array().map(Vec::len),
        Some(0),
        "{r:#}"
    );
}

/// Attack: another local user (uid 65534 when the test runs as root)
/// connects to the app's DevTools port mid-run (after the flow's click
/// raised a flag, while its next step waits). The run fails with the code
/// that says so (not by the step's own timeout), the app is ended at once,
/// and nothing of it outlives the run.
#[test]
fn a_foreign_connection_to_the_apps_port_ends_the_app_and_fails_the_run() {
    let cef = cefsimple();
    let site = common::browsers::FlagSite::start();
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    become_subreaper();
    let flow = json!({
        "target": { "app": {
            "launch": {
                "argv": [cef.display().to_string(), format!("--url=http://127.0.0.1:{}/raise?name=mid-run", site.port)]
            },
            "devtools": "port"
        } },
        "steps": [
            { "action": "click", "locator": { "role": "button", "name": "Raise" } },
            { "action": "assertText", "locator": { "testId": "out" }, "includes": "never shown",
              "timeoutMs": 600000 }
        ],
        "timeoutMs": 900000
    });
    let f = write(dir.path(), "intruder.json", &flow.to_string());
    let (mut child, out) = common::start_json(&["--virtual-display"], ws.path(), &f, |_| {});
    assert!(
        site.wait("mid-run", Duration::from_secs(120)),
        "the run never clicked"
    );
    // The app's port, from the command line of this test's app.
    let url = format!("--url=http://127.0.0.1:{}/", site.port);
    let port = common::all_pids()
        .into_iter()
        .find_map(|pid| {
            // Chromium rewrites its command line as one string.
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if !cmd.contains(&url) {
                return None;
            }
            let at = cmd.find("--remote-debugging-port=")? + "--remote-debugging-port=".len();
            let digits: String = cmd[at..].chars().take_while(char::is_ascii_digit).collect();
            digits.parse::<u16>().ok()
        })
        .expect("the app's --remote-debugging-port");
    let script = format!(
        "import socket,time\ns=socket.create_connection(('127.0.0.1',{port}))\ns.sendall(b'GET /json/version HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n')\ntime.sleep(120)"
    );
    let mut intruder = Command::new("/usr/bin/python3");
    intruder.args(["-c", &script]);
    if is_root() {
        std::os::unix::process::CommandExt::uid(&mut intruder, 65534);
        std::os::unix::process::CommandExt::gid(&mut intruder, 65534);
    }
    let mut intruder = intruder.spawn().unwrap();
    let status = child.wait().unwrap();
    let _ = intruder.kill();
    let _ = intruder.wait();
    let out = out.join().unwrap();
    let r: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_ne!(status.code(), Some(0));
    assert_eq!(r["status"], "FAILED", "{r:#}");
    assert_eq!(r["reasonCode"], "web.app.foreign_connection", "{r:#}");
    assert_eq!(r["timedOut"], false, "the step ended by its timeout: {r:#}");
    assert_nothing_outlives(&r);
}
