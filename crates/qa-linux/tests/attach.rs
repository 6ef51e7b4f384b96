//! Attach mode (`application.pid` / `application.name`): the app runs on a
//! display and session bus the test starts itself (Xvfb + a private
//! dbus-daemon, all through the test's own `ProcessOwner`), and the driver
//! attaches in host mode — never signalling the app.
//!
//! Host mode reads `DISPLAY` / `DBUS_SESSION_BUS_ADDRESS` from the process
//! environment, and the test process's environment must not be changed
//! (other tests run in parallel threads). So the flows run in a child: this
//! binary re-invoked with `--exact attach_child --ignored`, the display and
//! bus in its environment and `UI_QA_ATTACH_ROLE=child`. The child writes a
//! JSON report; the parent asserts on it and on `/proc`.

mod common;

use common::{fixtures, run, run_with};
use qa_core::process::{CleanupReport, Ending, ProcessOwner, DEFAULT_GRACE};
use qa_core::{Deadline, RunOptions};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};

const ROLE: &str = "UI_QA_ATTACH_ROLE";
const APP_PID: &str = "UI_QA_ATTACH_APP_PID";
const OTHER_PID: &str = "UI_QA_ATTACH_OTHER_PID";
const OUT: &str = "UI_QA_ATTACH_OUT";

/// What a run's cleanup ended, leaving out the run's own video encoder
/// when it had exited by itself (it finishes the window video before
/// cleanup looks): never a signal to anything.
fn ended_besides_encoder(c: &CleanupReport) -> Vec<Value> {
    c.ended
        .iter()
        .filter(|e| !(e.label == "ffmpeg" && e.how == Ending::Exited))
        .map(|e| json!({"pid": e.pid, "label": e.label, "how": e.how.as_str()}))
        .collect()
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit(')')
                .next()
                .and_then(|r| r.split_whitespace().next())
                .map(|st| st != "Z" && st != "X")
        })
        .unwrap_or(false)
}

/// The first line `child` prints: its readiness (a cold, busy machine may
/// take a while, hence the wide bound — it only matters when it hangs).
async fn first_line(child: &mut tokio::process::Child, what: &str) -> String {
    let out = child.stdout.take().expect("piped stdout");
    let mut lines = BufReader::new(out).lines();
    let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
        .await
        .unwrap_or_else(|_| panic!("{what} was not ready within 60 s"))
        .unwrap()
        .unwrap_or_else(|| panic!("{what} exited before it was ready"));
    // Keep the read end open for the child's lifetime.
    child.stdout = Some(lines.into_inner().into_inner());
    line.trim().to_string()
}

fn bus_config(dir: &Path) -> std::path::PathBuf {
    let services = dir.join("services");
    std::fs::create_dir(&services).unwrap();
    std::fs::copy(
        "/usr/share/dbus-1/services/org.a11y.Bus.service",
        services.join("org.a11y.Bus.service"),
    )
    .expect("at-spi2-core's org.a11y.Bus.service");
    let conf = dir.join("session.conf");
    std::fs::write(
        &conf,
        format!(
            r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={}</listen>
  <auth>EXTERNAL</auth>
  <servicedir>{}</servicedir>
  <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
</busconfig>"#,
            dir.join("bus").display(),
            services.display()
        ),
    )
    .unwrap();
    conf
}

/// The parent: own display + bus + app, the child attaches, then we end all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_by_pid_and_name_never_signals_the_app() {
    let owner = ProcessOwner::new();
    let rt = tempfile::tempdir().unwrap();
    let rt_path = rt.path().to_path_buf();

    let mut xvfb = tokio::process::Command::new("Xvfb");
    xvfb.args([
        "-displayfd",
        "1",
        "-screen",
        "0",
        "1280x800x24",
        "-nolisten",
        "tcp",
    ])
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::null());
    let mut xvfb = owner.spawn(xvfb, "xvfb").expect("Xvfb");
    let display = format!(":{}", first_line(&mut xvfb, "Xvfb").await);

    let mut dbus = tokio::process::Command::new("dbus-daemon");
    dbus.arg(format!("--config-file={}", bus_config(&rt_path).display()))
        .args(["--nofork", "--print-address=1"])
        .env("DISPLAY", &display)
        .env("XDG_RUNTIME_DIR", &rt_path)
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut dbus = owner.spawn(dbus, "dbus-daemon").expect("dbus-daemon");
    let bus = first_line(&mut dbus, "dbus-daemon").await;

    let env = |cmd: &mut tokio::process::Command| {
        cmd.env("DISPLAY", &display)
            .env("DBUS_SESSION_BUS_ADDRESS", &bus)
            .env("XDG_RUNTIME_DIR", &rt_path)
            .env("GDK_BACKEND", "x11")
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("NO_AT_BRIDGE")
            .env_remove("GTK_A11Y")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
    };
    let mut app = tokio::process::Command::new("/usr/bin/python3");
    app.arg("fixture_app.py").current_dir(fixtures());
    env(&mut app);
    // It says READY once its window is mapped (its AT-SPI bridge started
    // with GTK, before that); the child attaches only then.
    app.env("UI_QA_FIXTURE_READY", "1").stdout(Stdio::piped());
    let mut app = owner.spawn(app, "fixture app").expect("fixture app");
    let app_pid = app.id().unwrap();
    assert_eq!(first_line(&mut app, "the fixture app").await, "READY");
    // A process on the display that is not on the accessibility bus (and
    // points at another session bus: the error names that cause).
    let mut other = tokio::process::Command::new("sleep");
    other.arg("120");
    env(&mut other);
    other.env(
        "DBUS_SESSION_BUS_ADDRESS",
        "unix:path=/nonexistent/ui-qa-bus",
    );
    let other = owner.spawn(other, "sleep").expect("sleep");
    let other_pid = other.id().unwrap();

    let report = rt_path.join("report.json");
    let mut child = tokio::process::Command::new(std::env::current_exe().unwrap());
    child
        .args([
            "--exact",
            "attach_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ROLE, "child")
        .env(APP_PID, app_pid.to_string())
        .env(OTHER_PID, other_pid.to_string())
        .env(OUT, &report);
    env(&mut child);
    child.stdout(Stdio::inherit()).stderr(Stdio::inherit());
    let mut child = owner.spawn(child, "attach child").expect("child test");
    let status = tokio::time::timeout(Duration::from_secs(300), child.wait()).await;

    // Whatever happened, read the report before ending anything.
    let doc: Option<Value> = std::fs::read(&report)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    let app_alive_after = alive(app_pid);
    let other_alive_after = alive(other_pid);
    let cleanup = owner
        .end_all(DEFAULT_GRACE, Deadline::after_ms(30_000))
        .await;
    drop((xvfb, dbus, app, other));

    let status = status.expect("the child finished within 300 s").unwrap();
    assert!(status.success(), "child failed: {status}");
    let doc = doc.expect("child report");
    eprintln!("{}", serde_json::to_string_pretty(&doc).unwrap());
    let runs = doc.as_object().unwrap();

    for key in ["warmUp", "byPid", "byName"] {
        let r = &runs[key];
        assert!(r["error"].is_null(), "{key}: {}", r["error"]);
        assert_eq!(r["ended"], json!([]), "{key}: cleanup ended something");
        assert_eq!(r["left"], json!([]), "{key}");
    }
    let by_pid = runs["byPid"]["details"].to_string();
    assert!(by_pid.contains("pointer click at"), "{by_pid}");

    let not_on_bus = &runs["notOnBus"];
    assert_eq!(not_on_bus["error"]["code"], "desktop.app.not_accessible");
    assert_eq!(not_on_bus["error"]["blocked"], true);
    // Attached apps are already running: a 5 s registration wait at most
    // (plus connecting to the display and buses), never the 15 s a launched
    // app gets nor the flow's 20 s.
    assert!(
        not_on_bus["elapsedMs"].as_u64().unwrap() < 12_000,
        "{not_on_bus}"
    );
    assert!(
        not_on_bus["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&format!("pid {other_pid}")),
        "{}",
        not_on_bus["error"]
    );
    assert!(
        not_on_bus["error"]["message"]
            .as_str()
            .unwrap()
            .contains("another session bus"),
        "{}",
        not_on_bus["error"]
    );
    assert_eq!(not_on_bus["ended"], json!([]));
    let unknown = &runs["unknownName"];
    assert_eq!(unknown["error"]["code"], "desktop.app.not_accessible");
    let msg = unknown["error"]["message"].as_str().unwrap();
    assert!(msg.contains("no application named"), "{msg}");
    assert!(
        msg.contains("\"fixture_app.py\""),
        "lists registered apps: {msg}"
    );
    let gone = &runs["noProcess"];
    assert_eq!(gone["error"]["code"], "desktop.attach.no_process");
    // A pid that is not running fails at once, without sitting out the
    // 5 s registration wait.
    assert!(gone["elapsedMs"].as_u64().unwrap() < 4_500, "{gone}");

    // Attached processes were never signalled: both outlived every run.
    assert!(app_alive_after, "the attached app {app_pid} was ended");
    assert!(other_alive_after, "the attached pid {other_pid} was ended");
    // Our own cleanup ended them (and the display, bus and a11y services).
    assert!(cleanup.left.is_empty(), "{:?}", cleanup.left);
    let ended: Vec<u32> = cleanup.ended.iter().map(|e| e.pid).collect();
    for pid in [app_pid, other_pid] {
        assert!(ended.contains(&pid), "{pid} not in {ended:?}");
    }
    for e in &cleanup.ended {
        assert!(!alive(e.pid), "{} ({}) still alive", e.pid, e.label);
    }
}

/// The child role: runs the attach flows in host mode against the parent's
/// display and bus (from its environment) and writes a report.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by attach_by_pid_and_name_never_signals_the_app"]
async fn attach_child() {
    if std::env::var(ROLE).as_deref() != Ok("child") {
        return;
    }
    let app_pid: u32 = std::env::var(APP_PID).unwrap().parse().unwrap();
    let other_pid: u32 = std::env::var(OTHER_PID).unwrap().parse().unwrap();
    let host = RunOptions::default();
    let flow = |target: &str, timeout: u32, steps: &str| {
        format!(
            r#"{{ "target": {{ "application": {target} }}, "timeoutMs": {timeout},
               "steps": [ {{ "action": "waitForWindow", "title": {{ "equals": "ui-qa fixture" }} }} {steps} ] }}"#
        )
    };
    let mut out = serde_json::Map::new();
    // The parent started us once the app's window was mapped; its
    // registration on the accessibility bus may still be under way on a
    // busy machine. Attach (by pid, with nothing but the window wait) until
    // it is there — each try waits up to the 5 s attach window — so the
    // cases below never race the app's start-up. Attaching never signals
    // the app (the parent checks this run's cleanup too).
    let warm_up = flow(&format!(r#"{{ "pid": {app_pid} }}"#), 30_000, "");
    let give_up = std::time::Instant::now() + Duration::from_secs(90);
    let mut tries = 0;
    loop {
        tries += 1;
        let r = run_with(&warm_up, host.clone()).await;
        let registered = r.error.is_none();
        if registered || std::time::Instant::now() > give_up {
            out.insert(
                "warmUp".into(),
                json!({
                    "tries": tries,
                    "error": r.error.as_ref().map(|e| json!({ "code": e.code, "message": e.message })),
                    "ended": ended_besides_encoder(&r.cleanup),
                    "left": r.cleanup.left.iter().map(|e| json!({"pid": e.pid, "label": e.label})).collect::<Vec<_>>(),
                }),
            );
            break;
        }
        assert!(
            ended_besides_encoder(&r.cleanup).is_empty(),
            "attaching ended something: {:?}",
            r.cleanup.ended
        );
    }
    // A pid that just exited (and is not reused this quickly).
    let mut exited = std::process::Command::new("true").spawn().unwrap();
    let gone = exited.id();
    exited.wait().unwrap();
    let cases = [
        (
            "byPid",
            flow(
                &format!(r#"{{ "pid": {app_pid} }}"#),
                60_000,
                r#",
                { "action": "setValue", "locator": { "automationId": "name-entry" }, "value": "attached" },
                { "action": "activate", "locator": { "role": "button", "name": "Copy" } },
                { "action": "assertText", "locator": { "automationId": "echo-label" }, "equals": "attached" },
                { "action": "activate", "locator": { "automationId": "click-area" } },
                { "action": "assertText", "locator": { "automationId": "click-label" }, "equals": "clicked 1" },
                { "action": "screenshot" }"#,
            ),
        ),
        (
            "byName",
            flow(
                r#"{ "name": "fixture_app.py" }"#,
                60_000,
                r#",
                { "action": "assertText", "locator": { "automationId": "echo-label" }, "equals": "attached" },
                { "action": "setValue", "locator": { "automationId": "name-entry" }, "value": "by name" },
                { "action": "activate", "locator": { "role": "button", "name": "Copy" } },
                { "action": "assertText", "locator": { "automationId": "echo-label" }, "equals": "by name" }"#,
            ),
        ),
        (
            "notOnBus",
            flow(&format!(r#"{{ "pid": {other_pid} }}"#), 20_000, ""),
        ),
        (
            "noProcess",
            flow(&format!(r#"{{ "pid": {gone} }}"#), 20_000, ""),
        ),
        (
            "unknownName",
            flow(r#"{ "name": "no-such-app-ui-qa" }"#, 20_000, ""),
        ),
    ];
    for (key, text) in cases {
        let r = run_with(&text, host.clone()).await;
        let entry = json!({
            "error": r.error.as_ref().map(|e| json!({
                "code": e.code, "message": e.message, "blocked": e.is_blocked(),
            })),
            "ended": ended_besides_encoder(&r.cleanup),
            "left": r.cleanup.left.iter().map(|e| json!({"pid": e.pid, "label": e.label})).collect::<Vec<_>>(),
            "elapsedMs": r.elapsed.as_millis() as u64,
            "details": r.details,
            "appAliveAfter": std::fs::metadata(format!("/proc/{app_pid}")).is_ok(),
        });
        eprintln!("{key}: {entry}");
        out.insert(key.into(), entry);
    }
    std::fs::write(
        std::env::var(OUT).unwrap(),
        serde_json::to_vec_pretty(&Value::Object(out)).unwrap(),
    )
    .unwrap();
}

/// `bundleId` is macOS only: BLOCKED with that missing capability, in host
/// and virtual mode alike, before anything is started.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bundle_id_is_blocked_on_linux() {
    let flow = r#"{ "target": { "application": { "bundleId": "com.example.App" } },
                    "steps": [ { "action": "waitForWindow" } ] }"#;
    for r in [run(flow).await, run_with(flow, RunOptions::default()).await] {
        let e = r.error.clone().expect("blocked");
        assert!(e.is_blocked(), "{e}");
        assert_eq!(e.missing[0].id, "bundle-id", "{e:?}");
        assert!(e.missing[0].reason.contains("macOS"), "{e:?}");
        assert!(r.cleanup.ended.is_empty(), "{:?}", r.cleanup.ended);
    }
}

/// Attaching under `--virtual-display` is a clear missing capability: the
/// private display this run would start has no pre-existing app.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_with_virtual_display_is_blocked() {
    let r = run(r#"{ "target": { "application": { "pid": 1 } },
                     "steps": [ { "action": "waitForWindow" } ] }"#)
    .await;
    let e = r.error.clone().expect("blocked");
    assert!(e.is_blocked(), "{e}");
    assert_eq!(e.missing[0].id, "attach-in-virtual-display", "{e:?}");
    assert!(r.cleanup.ended.is_empty(), "{:?}", r.cleanup.ended);
}
