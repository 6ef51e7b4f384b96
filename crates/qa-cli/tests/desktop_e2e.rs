//! End to end through the `ui-qa` binary with the Linux desktop driver:
//! real GTK applications under an owned Xvfb and private session bus
//! (`--virtual-display`), on a machine without a display of its own.

#![cfg(target_os = "linux")]

mod common;

use common::{
    assert_clean, bin, report_video_markers, root, run_json, steps_on_video, video_seconds,
};
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

/// The calculator's window video can be watched like a browser video: it
/// starts before the first click (the first click's step holds the window
/// as it was before it), each performed step's result is held on screen,
/// so every step has at least half a second of video, and the report
/// places each step at its own moment of it.
#[test]
fn the_window_video_starts_before_the_first_input_and_holds_every_step() {
    let ws = tempfile::tempdir().unwrap();
    let (code, r) = run_args(
        &root().join("examples/desktop-calculator.jsonc"),
        ws.path(),
        &["--timeout-ms", "60000", "--video", "on"],
        &[],
    );
    assert_eq!(code, 0, "{r:#}");
    let videos = r["artifacts"]["videos"].as_array().unwrap();
    assert_eq!(videos.len(), 1, "{:#}", r["artifacts"]);
    let video = &videos[0];
    let path = video["path"].as_str().unwrap();
    // Every action the driver performs (the four clicks and the
    // screenshot); the waits and assertions are the runner's.
    let performed_action = |a: &str| a == "activate" || a == "screenshot";
    let placed = steps_on_video(&r, video);
    let performed = placed
        .iter()
        .filter(|(_, a, _)| performed_action(a))
        .count();
    assert_eq!(performed, 5, "{placed:?}");
    let holds = video["holds"].as_array().expect("the video's holds");
    assert!(
        holds.len() > performed && holds.iter().all(|h| h["ms"] == 500),
        "one hold before the first input and one per performed step (and verified ones): {holds:?}"
    );
    let seconds = video_seconds(path);
    eprintln!("window video: {seconds:.3} s for {performed} performed steps");
    assert!(
        seconds >= 0.5 * performed as f64,
        "the video lasts {seconds:.3} s for {performed} performed steps; steps on it: {placed:?}, video {video:#}"
    );
    for (k, (index, action, ms)) in placed.iter().enumerate() {
        if !performed_action(action) {
            continue;
        }
        let next = placed
            .get(k + 1)
            .map(|p| p.2 as f64 / 1000.0)
            .unwrap_or(seconds);
        let has = next - *ms as f64 / 1000.0;
        assert!(
            has >= 0.5,
            "step {index} {action} has {has:.3} s of video; steps on it: {placed:?}, video {video:#}"
        );
    }
    // The first click's step holds the window as it was before the click
    // (its first hold, after the video's first frame; a verified step
    // before it may hold the window too).
    let first_click = &r["steps"][1];
    let started = first_click["startedMs"].as_u64().unwrap();
    let held = holds
        .iter()
        .map(|h| h["atMs"].as_u64().unwrap())
        .find(|at| *at >= started)
        .unwrap_or_else(|| panic!("a hold in the first click's step: {video:#}"));
    assert!(
        (started..=started + first_click["durationMs"].as_u64().unwrap()).contains(&held)
            && video["startedMs"].as_u64().unwrap() <= held,
        "{video:#} {first_click:#}"
    );
    let report = Path::new(r["evidenceDir"].as_str().unwrap()).join("report.html");
    let html = std::fs::read_to_string(report).unwrap();
    let at: Vec<u64> = placed.iter().map(|p| p.2).collect();
    assert_eq!(report_video_markers(&html), at);
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

/// A window resized after its video began keeps the video's size (its
/// first picture's): its wider pictures are scaled to fit that size whole
/// and padded, so the last frame's bottom rows are padding (black) where
/// the first frame's show the window.
#[test]
fn a_resized_window_is_scaled_into_the_videos_size() {
    let dir = tempfile::tempdir().unwrap();
    let app = root().join("tests/fixtures/desktop/fixture_app.py");
    let flow = format!(
        r#"{{"timeoutMs":60000,
            "target":{{"application":{{"launch":{{"argv":["/usr/bin/python3",{app:?}]}}}}}},
            "steps":[{{"action":"waitForWindow","title":{{"equals":"ui-qa fixture"}}}},
                     {{"action":"screenshot","name":"before"}},
                     {{"action":"setValue","locator":{{"automationId":"name-entry"}},"value":"grow"}},
                     {{"action":"activate","locator":{{"role":"button","name":"Copy"}}}},
                     {{"action":"assertText","locator":{{"automationId":"echo-label"}},"equals":"grown"}},
                     {{"action":"waitForTimeout","ms":500}},
                     {{"action":"screenshot","name":"after"}}]}}"#,
        app = app.display().to_string()
    );
    let p = dir.path().join("grow.jsonc");
    std::fs::write(&p, flow).unwrap();
    let (code, r) = run_args(&p, &dir.path().join("ws"), &["--video", "on"], &[]);
    assert_eq!(code, 0, "{r:#}");
    let (bw, bh) = png_size(&screenshot_path(&r, "before"));
    let (aw, ah) = png_size(&screenshot_path(&r, "after"));
    assert!(aw >= 2 * bw - 1 && ah == bh, "{bw}x{bh} grew to {aw}x{ah}");
    let videos = r["artifacts"]["videos"].as_array().unwrap();
    assert_eq!(videos.len(), 1, "{:#}", r["artifacts"]);
    let (vw, vh, rgb) = decode_rgb(videos[0]["path"].as_str().unwrap());
    let even = |n: u64| n + n % 2;
    assert_eq!((vw, vh), (even(bw), even(bh)), "the first picture's size");
    let notes = r["observations"].to_string();
    assert!(
        !notes.contains("did not have the first frame's size"),
        "{notes}"
    );
    let frames: Vec<&[u8]> = rgb.chunks_exact((vw * vh * 3) as usize).collect();
    assert!(frames.len() >= 2, "{} frame(s)", frames.len());
    // The share of near-black pixels in the bottom quarter of a frame.
    let bottom_dark = |f: &[u8]| {
        let rows = &f[(vw * 3 * (vh - vh / 4)) as usize..];
        let dark = rows.chunks_exact(3).filter(|p| p.iter().all(|c| *c < 40));
        dark.count() as f64 / (rows.len() / 3) as f64
    };
    let (first, last) = (
        bottom_dark(frames[0]),
        bottom_dark(frames[frames.len() - 1]),
    );
    assert!(first < 0.5, "the first frame shows the window: {first}");
    assert!(
        last > 0.9,
        "the last frame is padded below the picture: {last}"
    );
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

/// The fixture, and a magenta window of another program over it that
/// keeps raising itself above every window (`cover_window.py`, its own
/// session: not one of the application's processes). The flow captures the
/// fixture uncovered first, then clicks Copy, which makes the launch script
/// start the other program; that program says `MAPPED` through a FIFO to the
/// fixture's stdin once its window is mapped, and the fixture puts it in
/// its echo label, which the flow waits for: no step depends on timing.
fn covered_fixture_flow(dir: &Path, last_steps: &str) -> std::path::PathBuf {
    let app = root().join("tests/fixtures/desktop/fixture_app.py");
    let cover = root().join("tests/fixtures/desktop/cover_window.py");
    let fifo = dir.join("said");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let script = format!(
        "UI_QA_FIXTURE_READY=1 /usr/bin/python3 {app:?} 0<>{fifo:?} | {{ read ready; read copied; setsid -f /usr/bin/python3 {cover:?} 180 140 240 120 >{fifo:?}; cat >/dev/null; }}",
        app = app.display().to_string(),
        cover = cover.display().to_string(),
        fifo = fifo.display().to_string(),
    );
    let flow = format!(
        r#"{{"timeoutMs":60000,
            "target":{{"application":{{"launch":{{"argv":["/bin/sh","-c",{script:?}]}}}}}},
            "steps":[{{"action":"waitForWindow","title":{{"equals":"ui-qa fixture"}}}},
                     {{"action":"screenshot","name":"uncovered"}},
                     {{"action":"setValue","locator":{{"automationId":"name-entry"}},"value":"cover"}},
                     {{"action":"activate","locator":{{"role":"button","name":"Copy"}}}},
                     {{"action":"assertText","locator":{{"automationId":"echo-label"}},"equals":"MAPPED"}},
                     {last_steps}]}}"#
    );
    let p = dir.join("covered.jsonc");
    std::fs::write(&p, flow).unwrap();
    p
}

/// RGB24 pixels of every frame of a video or picture (ffmpeg decodes it);
/// `(width, height, bytes)`.
fn decode_rgb(path: &str) -> (u64, u64, Vec<u8>) {
    let o = Command::new("ffprobe")
        .args(["-v", "error", "-select_streams", "v:0"])
        .args(["-show_entries", "stream=width,height", "-of", "json", path])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let (w, h) = (
        v["streams"][0]["width"].as_u64().unwrap(),
        v["streams"][0]["height"].as_u64().unwrap(),
    );
    let o = Command::new("ffmpeg")
        .args(["-v", "error", "-i", path])
        .args(["-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stdout.len() as u64 >= w * h * 3, "no frame decoded");
    (w, h, o.stdout)
}

/// Fails when any frame shows the other program's window: the fixture
/// itself has ~150 near-black pixels (its text) and no magenta; a frame
/// with the magenta window (or Xvfb's black for a covered part) has ~28000
/// (VP8 is lossy: "near").
fn assert_no_foreign_pixels(path: &str) {
    let (w, h, rgb) = decode_rgb(path);
    for (i, f) in rgb.chunks_exact((w * h * 3) as usize).enumerate() {
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
            "{path} frame {i}: {foreign} pixels of the other program's window"
        );
    }
}

/// The run's notes that say video frames were left out.
fn left_out_notes(r: &Value) -> Vec<String> {
    r["observations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["message"].as_str())
        .filter(|m| m.contains("were left out while a window of another program covered"))
        .map(str::to_string)
        .collect()
}

/// The path of the run's screenshot named `name`.
fn screenshot_path(r: &Value, name: &str) -> String {
    let shots = r["artifacts"]["screenshots"].as_array().unwrap();
    let s = shots
        .iter()
        .find(|a| {
            a["path"]
                .as_str()
                .is_some_and(|p| p.ends_with(&format!("/{name}.png")))
        })
        .unwrap_or_else(|| panic!("no screenshot {name}: {shots:#?}"));
    s["path"].as_str().unwrap().to_string()
}

#[test]
fn window_video_never_shows_another_programs_window() {
    let dir = tempfile::tempdir().unwrap();
    // Xvfb has Composite: while the other program's window lies over the
    // application's, frames are kept and show the application's own pixels.
    let flow = covered_fixture_flow(dir.path(), r#"{"action":"waitForTimeout","ms":1500}"#);
    let (code, r) = run_args(&flow, &dir.path().join("ws"), &["--video", "on"], &[]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(left_out_notes(&r), Vec::<String>::new(), "{r:#}");
    let videos = r["artifacts"]["videos"].as_array().unwrap();
    assert_eq!(videos.len(), 1, "{r:#}");
    assert_no_foreign_pixels(videos[0]["path"].as_str().unwrap());
    assert_clean(&r, &["xvfb", "dbus", "ffmpeg"]);
}

#[test]
fn screenshot_of_a_covered_window_shows_only_the_application() {
    let dir = tempfile::tempdir().unwrap();
    let flow = covered_fixture_flow(dir.path(), r#"{"action":"screenshot","name":"covered"}"#);
    let (code, r) = run_args(&flow, &dir.path().join("ws"), &["--video", "off"], &[]);
    assert_eq!(code, 0, "{r:#}");
    let (uncovered, covered) = (
        screenshot_path(&r, "uncovered"),
        screenshot_path(&r, "covered"),
    );
    assert_no_foreign_pixels(&covered);
    // The whole window, as before the other program came.
    assert_eq!(png_size(&covered), png_size(&uncovered));
    assert_desktop_clean(&r);
}

/// An X server and session bus the test starts itself, without the
/// Composite extension (a user's own display may lack it); ended on drop.
struct HostDisplay {
    xvfb: std::process::Child,
    dbus: std::process::Child,
    display: String,
    bus: String,
    runtime: tempfile::TempDir,
}

impl HostDisplay {
    fn without_composite() -> HostDisplay {
        use std::io::{BufRead, BufReader};
        use std::process::Stdio;
        fn first_line(c: &mut std::process::Child, what: &str) -> String {
            let out = c.stdout.take().unwrap();
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let mut r = BufReader::new(out);
                let mut line = String::new();
                let _ = r.read_line(&mut line);
                let _ = tx.send(line);
                // Keep reading: the pipe stays open for the child's life.
                let _ = std::io::copy(&mut r, &mut std::io::sink());
            });
            rx.recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|_| panic!("{what} was not ready within 60 s"))
                .trim()
                .to_string()
        }
        let runtime = tempfile::tempdir().unwrap();
        let mut xvfb = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                "1280x800x24",
                "-nolisten",
                "tcp",
            ])
            .args(["-extension", "Composite"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let display = format!(":{}", first_line(&mut xvfb, "Xvfb"));
        let services = runtime.path().join("services");
        std::fs::create_dir(&services).unwrap();
        std::fs::copy(
            "/usr/share/dbus-1/services/org.a11y.Bus.service",
            services.join("org.a11y.Bus.service"),
        )
        .expect("at-spi2-core's org.a11y.Bus.service");
        let conf = runtime.path().join("session.conf");
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
                runtime.path().join("bus").display(),
                services.display()
            ),
        )
        .unwrap();
        let mut dbus = Command::new("dbus-daemon")
            .arg(format!("--config-file={}", conf.display()))
            .args(["--nofork", "--print-address=1"])
            .env("DISPLAY", &display)
            .env("XDG_RUNTIME_DIR", runtime.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let bus = first_line(&mut dbus, "dbus-daemon");
        HostDisplay {
            xvfb,
            dbus,
            display,
            bus,
            runtime,
        }
    }
}

impl Drop for HostDisplay {
    fn drop(&mut self) {
        for c in [&mut self.dbus, &mut self.xvfb] {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[test]
fn covered_frames_are_left_out_without_composite() {
    let host = HostDisplay::without_composite();
    let dir = tempfile::tempdir().unwrap();
    let flow = covered_fixture_flow(
        dir.path(),
        r#"{"action":"waitForTimeout","ms":1500},{"action":"screenshot","name":"covered"}"#,
    );
    let (code, r) = run_json(&flow, &dir.path().join("ws"), &["--video", "on"], |c| {
        c.env("DISPLAY", &host.display)
            .env("DBUS_SESSION_BUS_ADDRESS", &host.bus)
            .env("XDG_RUNTIME_DIR", host.runtime.path())
            .env_remove("WAYLAND_DISPLAY");
    });
    // The video leaves out the frames the other program covered, and says so.
    let notes = left_out_notes(&r);
    assert_eq!(notes.len(), 1, "{r:#}");
    assert!(notes[0].contains("no Composite extension"), "{notes:?}");
    let videos = r["artifacts"]["videos"].as_array().unwrap();
    assert_eq!(videos.len(), 1, "{r:#}");
    assert_no_foreign_pixels(videos[0]["path"].as_str().unwrap());
    // The screenshot after raising the window: the other program raises
    // its window again at once, so the step fails saying why; only when the
    // application stayed on top is a picture taken, and it is the
    // application's alone.
    let last = r["steps"].as_array().unwrap().last().unwrap().clone();
    match last["status"].as_str() {
        Some("failed") => {
            assert_eq!(code, 1, "{r:#}");
            let reason = last["reason"].as_str().unwrap();
            assert!(reason.contains("no Composite extension"), "{reason}");
        }
        Some("passed") => {
            assert_eq!(code, 0, "{r:#}");
            assert_no_foreign_pixels(&screenshot_path(&r, "covered"));
        }
        other => panic!("screenshot step {other:?}: {last:#}"),
    }
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
