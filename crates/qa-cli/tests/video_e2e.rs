//! Video evidence end to end through the `ui-qa` binary: a browser flow
//! with clicks, a drag and typing is recorded as a WebM that `ffprobe`
//! reads, with the interaction visualizer in its frames; without `ffmpeg`
//! the run still passes and keeps its frames; a popup gets its own video.

mod common;

use common::{assert_clean, root, run_json};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const VIEW_W: u64 = 800;
const VIEW_H: u64 = 600;

/// The flow: two clicks, typing and a pointer drag on the recording fixture.
const FLOW: &str = r#"{
  "target": { "serve": "web", "url": "record.html" },
  "viewport": { "width": 800, "height": 600 },
  "evidence": { "video": "on" },
  "steps": [
    { "action": "click", "locator": { "role": "button", "name": "Count" } },
    { "action": "fill", "locator": { "label": "Name" }, "value": "Ada Lovelace" },
    { "action": "press", "locator": { "label": "Name" }, "key": "End" },
    { "action": "click", "locator": { "role": "button", "name": "Count" } },
    { "action": "dragTo", "locator": { "testId": "card" }, "dropTarget": { "testId": "done" } },
    { "action": "assertText", "locator": { "testId": "result" }, "includes": "dropped in done" },
    { "action": "assertText", "locator": { "testId": "count" }, "includes": "clicked 2 times" }
  ]
}"#;

/// A private copy of the web fixtures with `flow` next to them.
fn fixture_flow(dir: &Path, name: &str, flow: &str) -> PathBuf {
    let site = dir.join("web");
    std::fs::create_dir_all(&site).unwrap();
    for e in std::fs::read_dir(root().join("tests/fixtures/web"))
        .unwrap()
        .flatten()
    {
        std::fs::copy(e.path(), site.join(e.file_name())).unwrap();
    }
    let p = dir.join(format!("{name}.jsonc"));
    std::fs::write(&p, flow).unwrap();
    p
}

fn videos(r: &Value) -> Vec<(String, Value)> {
    r["artifacts"]["videos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["path"].as_str().unwrap().to_string(), a.clone()))
        .collect()
}

/// `ffprobe`'s width, height, decoded frame count and duration (s).
fn probe(file: &str) -> (u64, u64, u64, f64) {
    let o = Command::new("ffprobe")
        .args([
            "-v",
            "error",
            "-count_frames",
            "-select_streams",
            "v:0",
            "-show_entries",
            "stream=width,height,nb_read_frames:format=duration",
            "-of",
            "json",
            file,
        ])
        .output()
        .expect("ffprobe runs");
    assert!(
        o.status.success(),
        "ffprobe: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let s = &v["streams"][0];
    let num = |x: &Value| x.as_str().and_then(|t| t.parse::<f64>().ok()).unwrap();
    (
        s["width"].as_u64().unwrap(),
        s["height"].as_u64().unwrap(),
        num(&s["nb_read_frames"]) as u64,
        num(&v["format"]["duration"]),
    )
}

/// Frames that differ from the one before (ffmpeg's `mpdecimate` drops
/// near-duplicates).
fn distinct_frames(file: &str) -> usize {
    let o = Command::new("ffmpeg")
        .args([
            "-v",
            "error",
            "-i",
            file,
            "-vf",
            "mpdecimate",
            "-f",
            "framemd5",
            "-",
        ])
        .output()
        .unwrap();
    assert!(o.status.success());
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| !l.starts_with('#'))
        .count()
}

/// Pictures per second [`frames_between`] samples the video at (it has a
/// variable frame rate: a picture that stays is one frame).
const SAMPLE_FPS: f64 = 30.0;

/// The RGB pixels of what the video shows from `t0` to `t1` seconds,
/// sampled [`SAMPLE_FPS`] times a second.
fn frames_between(file: &str, t0: f64, t1: f64) -> Vec<Vec<u8>> {
    let o = Command::new("ffmpeg")
        .args(["-v", "error", "-i", file])
        .args(["-ss", &format!("{t0:.3}"), "-to", &format!("{t1:.3}")])
        .args(["-vf", &format!("fps={SAMPLE_FPS}")])
        .args(["-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let size = (VIEW_W * VIEW_H * 3) as usize;
    o.stdout.chunks(size).map(|c| c.to_vec()).collect()
}

/// Pixels of the visualizer's marker colour (#ff00aa, allowing for the
/// encoder's colour loss).
fn marker_pixels(rgb: &[u8]) -> usize {
    rgb.chunks(3)
        .filter(|p| p[0] > 200 && p[1] < 90 && p[2] > 110 && p[2] < 230)
        .count()
}

#[test]
fn a_browser_flow_is_recorded_with_the_visualizer() {
    let dir = tempfile::tempdir().unwrap();
    let flow = fixture_flow(dir.path(), "record", FLOW);
    let (code, r) = run_json(&flow, &dir.path().join("ws"), &[], |_| {});
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["status"], "PASSED");
    assert_clean(&r, &["chromium"]);
    let v = videos(&r);
    assert_eq!(
        v.len(),
        1,
        "one video: {v:?}; observations {:#}",
        r["observations"]
    );
    let (file, art) = &v[0];
    assert!(file.ends_with("/artifacts/videos/page.webm"), "{file}");
    let (w, h, frames, duration) = probe(file);
    assert_eq!((w, h), (VIEW_W, VIEW_H), "frame size = the viewport");
    assert!(frames >= 5, "{frames} frames (one per picture shown)");
    // The video spans the steps and the holds (each performed step's
    // result stays on screen for videoSettleMs, 500 ms, in the video while
    // the run goes on) — unless the encoder fell behind on a busy machine
    // and was stopped near the cleanup deadline, which the result must
    // then say (the video ends where it had got to, and what it holds is
    // checked below).
    let steps = r["steps"].as_array().unwrap();
    let holds = art["holds"].as_array().expect("the video's holds");
    assert_eq!(
        holds.len(),
        5,
        "one hold per performed step (5 actions, 2 assertions): {holds:?}"
    );
    assert!(holds.iter().all(|h| h["ms"] == 500), "{holds:?}");
    let held: u64 = holds.iter().map(|h| h["ms"].as_u64().unwrap()).sum();
    let first = steps[0]["startedMs"].as_u64().unwrap();
    let last = steps.last().unwrap();
    let end = last["startedMs"].as_u64().unwrap() + last["durationMs"].as_u64().unwrap();
    let video_time = (end - first + held) as f64 / 1000.0;
    let cut_short = r["observations"].as_array().unwrap().iter().any(|o| {
        o["message"]
            .as_str()
            .is_some_and(|m| m.contains("the video ends where it had got to"))
    });
    if cut_short {
        assert!(
            duration < video_time,
            "a video said to be cut short spans {duration:.2} s of {video_time:.2} s"
        );
    } else {
        assert!(
            (duration - video_time).abs() <= 0.2 * video_time,
            "video {duration:.2} s vs steps and holds {video_time:.2} s; observations {:#}",
            r["observations"]
        );
    }
    // The video moves: each of the five actions shows a picture of its
    // own (its marks, which stand still, and what it changed).
    let distinct = distinct_frames(file);
    assert!(distinct >= 5, "{distinct} distinct frames");
    // Where the video starts on the run's timeline.
    let video_start = art["startedMs"].as_u64().expect("startedMs");
    assert!(
        video_start <= first + 50,
        "{video_start} vs first step {first}"
    );
    // Where a moment of the run is in the video: after the video started,
    // plus every hold before it.
    let at = |ms: u64| {
        let before: u64 = holds
            .iter()
            .filter(|h| h["atMs"].as_u64().unwrap() <= ms)
            .map(|h| h["ms"].as_u64().unwrap())
            .sum();
        (ms.saturating_sub(video_start) + before) as f64 / 1000.0
    };
    // Every action's marks (the click's pulse, the typing outline, the
    // drag's path) show for at least 400 ms of the video: from the step's
    // start to the next step's, which includes its hold.
    let fps = SAMPLE_FPS;
    for i in 0..5 {
        let from = at(steps[i]["startedMs"].as_u64().unwrap());
        let to = at(steps[i + 1]["startedMs"].as_u64().unwrap());
        if cut_short && to > duration {
            break;
        }
        let marked = frames_between(file, from, to)
            .iter()
            .filter(|f| marker_pixels(f) >= 30)
            .count();
        let shown = marked as f64 / fps;
        assert!(
            shown >= 0.4,
            "step {} ({}): its marks show for {shown:.2} s of the video ({marked} frames at {fps:.1} fps, {from:.2}–{to:.2} s)",
            i + 1,
            steps[i]["action"]
        );
    }
}

/// `PATH` with every tool a browser run needs but `ffmpeg`.
fn path_without_ffmpeg(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    bin
}

#[test]
fn without_ffmpeg_the_run_passes_and_keeps_its_frames() {
    let dir = tempfile::tempdir().unwrap();
    let flow = fixture_flow(dir.path(), "record", FLOW);
    let chrome = qa_chrome();
    let empty = path_without_ffmpeg(dir.path());
    let (code, r) = run_json(&flow, &dir.path().join("ws"), &[], |c| {
        c.env("PATH", &empty).env("CHROME", &chrome);
    });
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["status"], "PASSED");
    let v = videos(&r);
    assert!(!v.iter().any(|(p, _)| p.ends_with(".webm")), "{v:?}");
    let frames: Vec<&String> = v
        .iter()
        .map(|(p, _)| p)
        .filter(|p| p.ends_with(".jpg"))
        .collect();
    assert!(frames.len() >= 5, "frames kept: {v:?}");
    let index = v
        .iter()
        .find(|(p, _)| p.ends_with("page-frames.json"))
        .expect("the frame index");
    let doc: Value = serde_json::from_slice(&std::fs::read(&index.0).unwrap()).unwrap();
    assert_eq!(doc["frames"].as_array().unwrap().len(), frames.len());
    assert_eq!(
        &std::fs::read(frames[0]).unwrap()[..2],
        &[0xff, 0xd8],
        "JPEG"
    );
    let missing: Vec<&Value> = r["observations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["kind"] == "missingCapability")
        .collect();
    assert_eq!(missing.len(), 1, "{:#}", r["observations"]);
    let m = missing[0]["message"].as_str().unwrap();
    assert!(
        m.contains("ffmpeg") && m.contains("apt-get install ffmpeg"),
        "{m}"
    );
}

/// The Chromium the suite uses, by absolute path (the run gets a `PATH`
/// without it).
fn qa_chrome() -> PathBuf {
    if let Some(c) = std::env::var_os("CHROME") {
        return PathBuf::from(c);
    }
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        if let Some(p) = qa_core::host::which(name) {
            return p;
        }
    }
    panic!("no Chromium on PATH");
}

#[test]
fn a_popup_gets_its_own_video() {
    let dir = tempfile::tempdir().unwrap();
    let flow = fixture_flow(
        dir.path(),
        "popup",
        r#"{
  "target": { "serve": "web", "url": "popup.html" },
  "viewport": { "width": 640, "height": 480 },
  "steps": [
    { "action": "openPopup", "name": "help", "locator": { "role": "button", "name": "Open help" } },
    { "action": "click", "target": { "type": "popup", "name": "help" }, "locator": { "role": "button", "name": "Acknowledge" } },
    { "action": "assertText", "target": { "type": "popup", "name": "help" }, "locator": { "testId": "result" }, "equals": "acknowledged in the popup" }
  ]
}"#,
    );
    let (code, r) = run_json(&flow, &dir.path().join("ws"), &["--video", "on"], |_| {});
    assert_eq!(code, 0, "{r:#}");
    let names: Vec<String> = videos(&r)
        .iter()
        .map(|(p, _)| {
            Path::new(p)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert!(names.contains(&"page.webm".to_string()), "{names:?}");
    assert!(names.contains(&"popup-1.webm".to_string()), "{names:?}");
    for (p, _) in videos(&r) {
        let (w, h, frames, _) = probe(&p);
        assert_eq!((w, h), (640, 480), "{p}");
        assert!(frames >= 1, "{p}");
    }
}

#[test]
fn retain_on_failure_keeps_no_video_of_a_passing_run() {
    let dir = tempfile::tempdir().unwrap();
    let flow = fixture_flow(
        dir.path(),
        "short",
        r#"{ "target": { "serve": "web", "url": "record.html" },
  "steps": [ { "action": "click", "locator": { "role": "button", "name": "Count" } } ] }"#,
    );
    let ws = dir.path().join("ws");
    let (code, r) = run_json(&flow, &ws, &["--video", "retain-on-failure"], |_| {});
    assert_eq!(code, 0, "{r:#}");
    assert!(videos(&r).is_empty(), "{:#}", r["artifacts"]);
    let run_dir = PathBuf::from(r["evidenceDir"].as_str().unwrap());
    let left = std::fs::read_dir(run_dir.join("artifacts/videos"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(left, 0, "the file is gone too");
    // --video off records nothing at all.
    let (code, r) = run_json(&flow, &ws, &["--video", "off"], |_| {});
    assert_eq!(code, 0, "{r:#}");
    assert!(videos(&r).is_empty());
}

#[test]
fn a_failing_browser_run_keeps_its_step_trace() {
    let dir = tempfile::tempdir().unwrap();
    let flow = fixture_flow(
        dir.path(),
        "traced",
        r#"{ "target": { "serve": "web", "url": "record.html" },
  "viewport": { "width": 800, "height": 600 },
  "steps": [
    { "action": "click", "name": "count-once", "locator": { "role": "button", "name": "Count" } },
    { "action": "assertText", "locator": { "testId": "count" }, "equals": "clicked 9 times", "timeoutMs": 300 }
  ] }"#,
    );
    // retain-on-failure keeps the trace of a failing run.
    let (code, r) = run_json(
        &flow,
        &dir.path().join("ws"),
        &["--video", "off", "--trace", "retain-on-failure"],
        |_| {},
    );
    assert_eq!(code, 1, "{r:#}");
    let traces = r["artifacts"]["traces"].as_array().unwrap();
    let trace = traces
        .iter()
        .find(|a| a["path"].as_str().unwrap().ends_with("/trace.json"))
        .unwrap_or_else(|| panic!("no trace.json: {traces:#?}"));
    let doc: Value =
        serde_json::from_slice(&std::fs::read(trace["path"].as_str().unwrap()).unwrap()).unwrap();
    let steps = doc["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2, "{doc:#}");
    let click = &steps[0];
    assert_eq!(click["action"], "click");
    assert_eq!(click["name"], "count-once");
    assert_eq!(click["locator"]["role"], "button");
    assert_eq!(click["resolved"]["role"], "button");
    assert_eq!(click["resolved"]["name"], "Count");
    assert!(click["resolved"]["box"]["width"].as_f64().unwrap() > 10.0);
    assert!(click["durationMs"].as_u64().is_some() && click["startedMs"].as_u64().is_some());
    // Pictures before and after, published beside the trace.
    let run_dir = PathBuf::from(r["evidenceDir"].as_str().unwrap());
    for key in ["before", "after"] {
        let name = click[key]
            .as_str()
            .unwrap_or_else(|| panic!("no {key}: {click:#}"));
        let p = run_dir.join("artifacts/traces").join(name);
        assert_eq!(
            &std::fs::read(&p).unwrap()[..2],
            &[0xff, 0xd8],
            "{key} is a JPEG"
        );
    }
    // The step's console message and request (origin and path, no query).
    let console = click["console"].as_array().unwrap();
    assert!(
        console.iter().any(|c| c["text"] == "count is 1"),
        "{console:#?}"
    );
    let network = click["network"].as_array().unwrap();
    let fetch = network
        .iter()
        .find(|n| n["url"].as_str().unwrap().ends_with("/data.json"))
        .unwrap_or_else(|| panic!("{network:#?}"));
    assert!(!fetch["url"].as_str().unwrap().contains("visit"), "{fetch}");
    // The assertion's step is traced too (its picture before).
    assert_eq!(steps[1]["action"], "assertText");
    assert!(steps[1]["before"].is_string());
    // report.html shows each step's pictures beside it, and the failure's
    // picture at full width.
    let html = std::fs::read_to_string(run_dir.join("report.html")).unwrap();
    let row = |i: usize| {
        let at = html
            .find(&format!("data-testid=\"step-{i}-pictures\""))
            .unwrap_or_else(|| panic!("no pictures beside step {i}"));
        let end = at + html[at..].find("</tr>").unwrap();
        html[at..end].to_string()
    };
    let first = row(1);
    assert_eq!(
        first.matches("data:image/jpeg;base64,").count(),
        2,
        "{first}"
    );
    assert!(
        first.contains("<figcaption>before</figcaption>")
            && first.contains("<figcaption>after</figcaption>")
    );
    assert!(row(2).contains("data:image/jpeg;base64,"));
    let before_row = html.find("data-testid=\"step-1-pictures\"").unwrap();
    assert!(
        html.find("id=\"step-1\"").unwrap() < before_row
            && before_row < html.find("id=\"step-2\"").unwrap(),
        "the pictures sit between their step and the next"
    );
    assert!(
        html.contains("<figure class=\"shot failure-shot\">"),
        "the failure picture"
    );

    // ... and none of a passing run.
    let ok = fixture_flow(
        dir.path(),
        "passing",
        r#"{ "target": { "serve": "web", "url": "record.html" },
  "steps": [ { "action": "click", "locator": { "role": "button", "name": "Count" } } ] }"#,
    );
    let (code, r) = run_json(
        &ok,
        &dir.path().join("ws"),
        &["--video", "off", "--trace", "retain-on-failure"],
        |_| {},
    );
    assert_eq!(code, 0, "{r:#}");
    assert!(r["artifacts"]["traces"].as_array().unwrap().is_empty());
}

/// A PNG's RGB pixels (decoded by ffmpeg).
fn png_pixels(file: &str) -> Vec<u8> {
    let o = Command::new("ffmpeg")
        .args(["-v", "error", "-i", file])
        .args(["-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        .output()
        .unwrap();
    assert!(o.status.success());
    o.stdout
}

#[test]
fn a_picture_right_after_a_click_shows_the_page_not_the_marks() {
    let dir = tempfile::tempdir().unwrap();
    let flow = fixture_flow(
        dir.path(),
        "shot",
        r#"{ "target": { "serve": "web", "url": "record.html" },
  "viewport": { "width": 800, "height": 600 },
  "evidence": { "video": "on" },
  "steps": [
    { "action": "click", "locator": { "role": "button", "name": "Count" } },
    { "action": "screenshot", "name": "after-click" }
  ] }"#,
    );
    let (code, r) = run_json(&flow, &dir.path().join("ws"), &[], |_| {});
    assert_eq!(code, 0, "{r:#}");
    let (file, art) = &videos(&r)[0];
    // The click's pulse is in the video for at least 400 ms (held there, or
    // drawn while the step settled)…
    let holds = art["holds"].as_array().expect("holds");
    let start = art["startedMs"].as_u64().unwrap();
    let steps = r["steps"].as_array().unwrap();
    let (click, shot) = (
        steps[0]["startedMs"].as_u64().unwrap(),
        steps[1]["startedMs"].as_u64().unwrap(),
    );
    // (On a loaded machine the first frame may come after the click: the
    // video then starts there, and a hold asked before any frame holds
    // nothing.)
    let held = holds.first().map_or(0, |h| h["ms"].as_u64().unwrap());
    let (from, to) = (
        click.saturating_sub(start) as f64 / 1000.0,
        (shot.saturating_sub(start) + held) as f64 / 1000.0,
    );
    let marked = frames_between(file, from, to)
        .iter()
        .filter(|f| marker_pixels(f) >= 30)
        .count();
    assert!(
        marked as f64 / SAMPLE_FPS >= 0.4,
        "the click's marks show for {marked} frames at {SAMPLE_FPS} fps ({from:.2}–{to:.2} s)"
    );
    // …and the picture taken right after it shows the page without them.
    let shots = r["artifacts"]["screenshots"].as_array().unwrap();
    let shot = shots
        .iter()
        .map(|a| a["path"].as_str().unwrap())
        .find(|p| p.ends_with("after-click.png"))
        .expect("the screenshot");
    let px = png_pixels(shot);
    assert_eq!(px.len(), (VIEW_W * VIEW_H * 3) as usize);
    assert_eq!(marker_pixels(&px), 0, "no mark of the click in {shot}");
}
