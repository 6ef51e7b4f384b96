//! End to end through the `ui-qa` binary with the Linux desktop driver:
//! real GTK applications under an owned Xvfb and private session bus
//! (`--virtual-display`), on a machine without a display of its own.

#![cfg(target_os = "linux")]

mod common;

use common::{assert_clean, bin, root, run_json};
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn run(flow: &Path, ws: &Path, extra_env: &[(&str, &str)]) -> (i32, Value) {
    run_args(flow, ws, &[], extra_env)
}

/// [`run`] with more `ui-qa run` arguments.
fn run_args(flow: &Path, ws: &Path, args: &[&str], extra_env: &[(&str, &str)]) -> (i32, Value) {
    let args: Vec<&str> = ["--virtual-display"].iter().chain(args).copied().collect();
    run_json(flow, ws, &args, |c| {
        // The machine's own display (if any) must not matter.
        c.env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("DBUS_SESSION_BUS_ADDRESS");
        for (k, v) in extra_env {
            c.env(k, v);
        }
    })
}

/// The run ended everything, including its display server and bus.
fn assert_desktop_clean(r: &Value) {
    assert_clean(r, &["xvfb", "dbus"]);
}

#[test]
fn calculator_example_computes_five() {
    let ws = tempfile::tempdir().unwrap();
    // The example's own 30 s flow deadline is meant for a warm desktop; a
    // cold machine starting Xvfb, the buses and GNOME Calculator gets 60 s.
    let (code, r) = run_args(
        &root().join("examples/desktop-calculator.jsonc"),
        ws.path(),
        &["--timeout-ms", "60000"],
        &[],
    );
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["status"], "PASSED");
    assert_eq!(r["selection"]["platformDriver"], "desktop/linux-at-spi");
    assert_eq!(r["selection"]["guide"]["topic"], "linux-at-spi");
    assert_eq!(r["artifacts"]["screenshots"].as_array().unwrap().len(), 1);
    assert_desktop_clean(&r);
}

#[test]
fn zenity_entry_and_fixture_checkbox() {
    let dir = tempfile::tempdir().unwrap();
    let zenity = dir.path().join("zenity.jsonc");
    // The dialog's answer is its output: the flow waits for it to exit and
    // checks what it printed.
    let flow = |want: &str| {
        format!(
            r#"{{"target":{{"application":{{"launch":{{"argv":["zenity","--entry","--title=Ask","--text=Name"]}}}}}},
                "steps":[{{"action":"waitForWindow","title":{{"equals":"Ask"}}}},
                         {{"action":"inputText","locator":{{"role":"textbox"}},"text":"Grace Hopper"}},
                         {{"action":"pressKey","key":"Enter"}},
                         {{"action":"assertProcessExited","exitCode":0,"timeoutMs":15000}},
                         {{"action":"assertOutput","equals":"{want}","timeoutMs":1000}}]}}"#
        )
    };
    std::fs::write(&zenity, flow("Grace Hopper")).unwrap();
    let (code, r) = run(&zenity, &dir.path().join("ws"), &[]);
    assert_eq!(code, 0, "{r:#}");
    assert_desktop_clean(&r);
    // A wrong answer: expected and received side by side.
    std::fs::write(&zenity, flow("Ada Lovelace")).unwrap();
    let (code, r) = run(&zenity, &dir.path().join("ws"), &[]);
    assert_eq!(code, 1, "{r:#}");
    let f = &r["steps"][4]["failure"];
    assert_eq!(f["expected"], "stdout equals \"Ada Lovelace\"", "{f:#}");
    assert_eq!(f["received"], "\"Grace Hopper\"", "{f:#}");
    assert_desktop_clean(&r);

    let fixture = root().join("tests/fixtures/desktop/checkbox.jsonc");
    let (code, r) = run(&fixture, &dir.path().join("ws2"), &[]);
    assert_eq!(code, 0, "{r:#}");
    assert_desktop_clean(&r);
}

#[test]
fn inaccessible_apps_are_blocked_with_a_handoff() {
    let dir = tempfile::tempdir().unwrap();
    let gtk = dir.path().join("no-bridge.jsonc");
    std::fs::write(
        &gtk,
        r#"{"timeoutMs":120000,"target":{"application":{"launch":{"argv":["gtk3-demo"],"env":{"NO_AT_BRIDGE":"1"}}}},
            "steps":[{"action":"waitForWindow"}]}"#,
    )
    .unwrap();
    let t = Instant::now();
    let (code, r) = run(&gtk, &dir.path().join("ws"), &[]);
    assert_eq!(code, 3, "{r:#}");
    assert_eq!(r["status"], "BLOCKED");
    let h = &r["blockedHandoff"];
    assert_eq!(h["manualActionRequired"], true);
    assert_eq!(h["automaticRemediationAttempted"], false);
    assert!(
        h["reason"].as_str().unwrap().contains("NO_AT_BRIDGE"),
        "{h:#}"
    );
    assert_desktop_clean(&r);

    let xterm = dir.path().join("xterm.jsonc");
    std::fs::write(
        &xterm,
        r#"{"timeoutMs":120000,"target":{"application":{"launch":{"argv":["xterm"]}}},"steps":[{"action":"waitForWindow"}]}"#,
    )
    .unwrap();
    let (code, r) = run(&xterm, &dir.path().join("ws2"), &[]);
    assert_eq!(code, 3, "{r:#}");
    assert!(!r["blockedHandoff"]["remediation"]
        .as_str()
        .unwrap()
        .is_empty());
    assert_desktop_clean(&r);
    // Each run is blocked by the driver's bounded registration wait (15 s
    // after start-up), not by its 120 s flow deadline: two runs waiting
    // their deadlines out would take 240 s.
    assert!(
        t.elapsed() < Duration::from_secs(120),
        "blocked runs must not hang"
    );
}

#[test]
fn without_a_display_the_probe_names_the_fix() {
    let mut c = Command::new(bin());
    let o = c
        .args(["probe", "--json"])
        .arg(root().join("examples/desktop-calculator.jsonc"))
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["status"], "BLOCKED");
    let text = v["blockedHandoff"]["remediation"].as_str().unwrap();
    assert!(text.contains("--virtual-display"), "{text}");
}

/// A short flow on the GTK fixture window: type, copy, check, screenshot.
fn fixture_video_flow(dir: &Path) -> std::path::PathBuf {
    let app = root().join("tests/fixtures/desktop/fixture_app.py");
    let flow = format!(
        r#"{{"timeoutMs":60000,
            "target":{{"application":{{"launch":{{"argv":["/usr/bin/python3",{app:?}]}}}}}},
            "steps":[{{"action":"waitForWindow","title":{{"equals":"ui-qa fixture"}}}},
                     {{"action":"setValue","locator":{{"automationId":"name-entry"}},"value":"hello"}},
                     {{"action":"activate","locator":{{"role":"button","name":"Copy"}}}},
                     {{"action":"assertText","locator":{{"automationId":"echo-label"}},"equals":"hello"}},
                     {{"action":"waitForTimeout","ms":500}},
                     {{"action":"screenshot","name":"window"}}]}}"#,
        app = app.display().to_string()
    );
    let p = dir.join("video.jsonc");
    std::fs::write(&p, flow).unwrap();
    p
}

/// Width and height from a PNG's IHDR chunk.
fn png_size(path: &str) -> (u64, u64) {
    let b = std::fs::read(path).unwrap();
    assert_eq!(&b[12..16], b"IHDR", "{path} is not a PNG");
    let be = |s: &[u8]| u32::from_be_bytes(s.try_into().unwrap()) as u64;
    (be(&b[16..20]), be(&b[20..24]))
}

#[test]
fn window_video_is_exactly_the_window() {
    let dir = tempfile::tempdir().unwrap();
    let flow = fixture_video_flow(dir.path());
    let (code, r) = run_args(&flow, &dir.path().join("ws"), &["--video", "on"], &[]);
    assert_eq!(code, 0, "{r:#}");
    let shots = r["artifacts"]["screenshots"].as_array().unwrap();
    assert_eq!(shots.len(), 1, "{r:#}");
    let (w, h) = png_size(shots[0]["path"].as_str().unwrap());
    let videos = r["artifacts"]["videos"].as_array().unwrap();
    assert_eq!(videos.len(), 1, "{:#}", r["artifacts"]);
    let video = videos[0]["path"].as_str().unwrap();
    assert!(video.ends_with(".webm"), "{video}");
    let (vw, vh, frames) = probe(video);
    // The screenshot is the same X11 capture of the same window, so the
    // sizes match — except that VP8 needs even sizes: an odd dimension is
    // padded by one pixel, so the video has the size rounded up to even.
    let even = |n: u64| n + n % 2;
    assert_eq!((vw, vh), (even(w), even(h)), "video vs window {w}x{h}");
    assert!(frames >= 2, "{frames} frame(s)");
    // The encoder was the run's process, and it had exited on its own (it
    // finished the file) before cleanup ended the rest.
    assert_clean(&r, &["xvfb", "dbus", "ffmpeg"]);
    let ended = r["cleanup"]["ended"].as_array().unwrap();
    let ffmpeg: Vec<&Value> = ended.iter().filter(|e| e["label"] == "ffmpeg").collect();
    assert_eq!(ffmpeg.len(), 1, "{ended:#?}");
    assert_eq!(ffmpeg[0]["how"], "exited", "{ended:#?}");
}

#[test]
fn window_video_is_withheld_when_the_run_has_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let flow = fixture_video_flow(dir.path());
    // The secret never reaches the window, but nothing can prove that from
    // pixels: fail-closed, the video is not recorded at all.
    let (code, r) = run_args(
        &flow,
        &dir.path().join("ws"),
        &["--video", "on"],
        &[("UI_QA_SECRET_VIDEO_TEST", "never-on-screen-7731")],
    );
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(
        r["artifacts"]["videos"].as_array().map(Vec::len),
        Some(0),
        "{:#}",
        r["artifacts"]
    );
    let withheld = r["artifacts"]["withheld"].as_array().unwrap();
    assert!(
        withheld.iter().any(|a| a["name"] == "window.webm"),
        "{withheld:#?}"
    );
    assert_clean(&r, &["xvfb", "dbus"]);
    let ended = r["cleanup"]["ended"].as_array().unwrap();
    assert!(
        ended.iter().all(|e| e["label"] != "ffmpeg"),
        "no encoder was started: {ended:#?}"
    );
}

#[test]
fn window_video_never_shows_another_programs_window() {
    let dir = tempfile::tempdir().unwrap();
    let app = root().join("tests/fixtures/desktop/fixture_app.py");
    // Once the fixture's window is mapped, a magenta xterm of another
    // program (its own session: not one of the application's processes) is
    // mapped over part of it. Without a compositor X hands whatever is on
    // the screen for a covered part of a window (Xvfb: black, or the
    // xterm's magenta), so the video leaves those frames out;
    // `activateWindow` raises the application above it and frames resume.
    let script = format!(
        "UI_QA_FIXTURE_READY=1 /usr/bin/python3 {app:?} | {{ read ready; setsid -f xterm -bg '#ff00ff' -fg '#ff00ff' -geometry 30x8+180+140 -e sleep 120; cat >/dev/null; }}",
        app = app.display().to_string()
    );
    let flow = format!(
        r#"{{"timeoutMs":60000,
            "target":{{"application":{{"launch":{{"argv":["/bin/sh","-c",{script:?}]}}}}}},
            "steps":[{{"action":"waitForWindow","title":{{"equals":"ui-qa fixture"}}}},
                     {{"action":"waitForTimeout","ms":1500}},
                     {{"action":"activateWindow"}},
                     {{"action":"waitForTimeout","ms":700}}]}}"#
    );
    let p = dir.path().join("covered.jsonc");
    std::fs::write(&p, flow).unwrap();
    let (code, r) = run_args(&p, &dir.path().join("ws"), &["--video", "on"], &[]);
    assert_eq!(code, 0, "{r:#}");
    // The xterm did cover the window: frames were left out.
    let said = r["observations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["message"].as_str())
        .any(|m| m.contains("covered the application's window"));
    assert!(said, "{:#}", r["observations"]);
    let videos = r["artifacts"]["videos"].as_array().unwrap();
    assert_eq!(videos.len(), 1, "{r:#}");
    let video = videos[0]["path"].as_str().unwrap();
    let (w, h, _) = probe(video);
    let o = Command::new("ffmpeg")
        .args(["-v", "error", "-i", video])
        .args(["-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let frame_bytes = (w * h * 3) as usize;
    assert!(o.stdout.len() >= frame_bytes, "no frame decoded");
    // The fixture itself has ~150 near-black pixels (its text); a frame
    // with the xterm over it has ~20000 near-black or magenta ones (VP8 is
    // lossy: "near").
    for (i, f) in o.stdout.chunks_exact(frame_bytes).enumerate() {
        let foreign = f
            .chunks_exact(3)
            .filter(|p| {
                let black = p.iter().all(|c| *c < 40);
                let magenta = p[0] > 180 && p[1] < 90 && p[2] > 180;
                black || magenta
            })
            .count();
        assert!(
            foreign < 2000,
            "frame {i}: {foreign} pixels of the other program's window"
        );
    }
    assert_clean(&r, &["xvfb", "dbus", "ffmpeg"]);
}

/// `(width, height, frames)` of a video's first stream, read by ffprobe.
fn probe(video: &str) -> (u64, u64, u64) {
    let o = Command::new("ffprobe")
        .args(["-v", "error", "-count_frames", "-select_streams", "v:0"])
        .args(["-show_entries", "stream=width,height,nb_read_frames"])
        .args(["-of", "json", video])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let s = &v["streams"][0];
    let frames = s["nb_read_frames"].as_str().unwrap().parse().unwrap();
    (
        s["width"].as_u64().unwrap(),
        s["height"].as_u64().unwrap(),
        frames,
    )
}
