//! `presentation: "native-terminal"` end to end: real programs in ui-qa's
//! PTY, mirrored into an owned xterm window on an owned Xvfb
//! (`--virtual-display`), its pixels read back by tesseract and ffmpeg.
#![cfg(target_os = "linux")]

mod common;

use common::{
    alive, all_pids, assert_clean, bin, pids_with_argv, proc_stat, report_video_markers, run_json,
    steps_on_video, unique_sleep, video_seconds, wait_until, write, KillSleepers,
};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The vim flow in `presentation` (and for native-terminal, in
/// `terminal`): type two lines, check them, capture.
fn vim_flow(dir: &Path, presentation: &str, terminal: &str) -> PathBuf {
    write(
        dir,
        &format!("vim-{presentation}-{terminal}.jsonc"),
        &format!(
            r#"{{
  "timeoutMs": 60000,
  "target": {{ "command": {{ "argv": ["vim", "-u", "NONE", "-N", "-n", "-i", "NONE", "notes.txt"], "presentation": "{presentation}"{terminal} }} }},
  "viewport": {{ "cols": 80, "rows": 24 }},
  "steps": [
    {{ "action": "waitForText", "text": "notes.txt", "timeoutMs": 15000 }},
    {{ "action": "sendText", "text": "iHello native window" }},
    {{ "action": "sendKeys", "keys": ["Enter"] }},
    {{ "action": "sendText", "text": "second line of text" }},
    {{ "action": "sendKeys", "keys": ["Escape"] }},
    {{ "action": "waitForText", "text": "second line of text" }},
    {{ "action": "assertText", "text": "Hello native window" }},
    {{ "action": "capture", "name": "typed" }}
  ]
}}"#
        ),
    )
}

/// Runs `flow` with `--virtual-display`, evidence under `dir/ws`.
fn run_virtual(flow: &Path, dir: &Path) -> (i32, Value) {
    run_json(flow, &dir.join("ws"), &["--virtual-display"], |_| {})
}

fn artifact(r: &Value, suffix: &str) -> Option<PathBuf> {
    r["artifacts"]
        .as_object()?
        .values()
        .filter_map(|group| group.as_array())
        .flatten()
        .filter_map(|a| a["path"].as_str())
        .find(|p| p.ends_with(suffix))
        .map(PathBuf::from)
}

fn ocr(png: &Path) -> String {
    let o = Command::new("tesseract")
        .arg(png)
        .arg("-")
        .stderr(Stdio::null())
        .output()
        .expect("tesseract runs");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn statuses(r: &Value) -> Vec<(String, String)> {
    r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["action"].as_str().unwrap().to_string(),
                s["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn vim_in_each_owned_terminal_window_shows_what_the_model_asserted() {
    let dir = tempfile::tempdir().unwrap();
    let flow = vim_flow(dir.path(), "pty", "");
    let (code, pty) = run_json(&flow, &dir.path().join("ws"), &[], |_| {});
    assert_eq!(code, 0, "{pty:#}");
    for terminal in ["xterm", "kitty", "alacritty"] {
        let flow = vim_flow(
            dir.path(),
            "native-terminal",
            &format!(r#", "terminal": "{terminal}""#),
        );
        let (code, r) = run_virtual(&flow, dir.path());
        assert_eq!(code, 0, "{terminal}: {r:#}");
        assert_eq!(r["status"], "PASSED");
        // The same step outcomes as in a PTY alone.
        assert_eq!(statuses(&r), statuses(&pty), "{terminal}");
        assert_clean(&r, &["terminal window", "xvfb", "terminal target"]);
        // The step's picture is the window's pixels: tesseract reads the
        // text the model asserted.
        let png = artifact(&r, "screenshots/typed.png").expect("a window picture");
        let text = ocr(&png);
        assert!(text.contains("Hello native window"), "{terminal}: {text}");
        let detail = r["steps"][7]["detail"].as_str().unwrap();
        assert!(detail.contains("window 0x"), "{detail}");
        // The model's rendering is kept, named as such.
        assert!(artifact(&r, "screenshots/typed-model.png").is_some());
        let notes = r["observations"].to_string();
        assert!(
            notes.contains(&format!("native-terminal: {terminal}")),
            "{notes}"
        );
        assert!(notes.contains("diagnostic only"), "{notes}");
        // The window video plays and its last frame shows the edits.
        let video = artifact(&r, "videos/window.webm").expect("a window video");
        let probe = Command::new("ffprobe")
            .args(["-v", "error", "-show_entries", "stream=codec_type"])
            .args(["-of", "csv=p=0"])
            .arg(&video)
            .output()
            .unwrap();
        let streams = String::from_utf8_lossy(&probe.stdout);
        assert!(streams.starts_with("video"), "{terminal}: {streams}");
        let last = dir.path().join(format!("last-{terminal}.png"));
        let ok = Command::new("ffmpeg")
            .args(["-v", "error", "-sseof", "-0.2", "-i"])
            .arg(&video)
            .args(["-frames:v", "1", "-y"])
            .arg(&last)
            .status()
            .unwrap();
        assert!(ok.success());
        let text = ocr(&last);
        assert!(text.contains("second line"), "{terminal}: {text}");
    }
}

/// A program that asks the terminal for its secondary device attributes
/// and prints the answer.
const ASK: &str = r#"
import os, sys, termios, tty
fd = sys.stdin.fileno()
old = termios.tcgetattr(fd)
tty.setraw(fd)
os.write(1, b"\x1b[>c")
reply = b""
while not reply.endswith(b"c"):
    reply += os.read(fd, 1)
termios.tcsetattr(fd, termios.TCSADRAIN, old)
print("DA2=" + reply.decode().replace("\x1b", "ESC"))
sys.stdin.readline()
"#;

#[test]
fn a_query_is_answered_by_the_real_window() {
    let dir = tempfile::tempdir().unwrap();
    let script = write(dir.path(), "ask.py", ASK);
    // xterm identifies itself as 41; the headless model as 0.
    for (presentation, answer) in [("native-terminal", "DA2=ESC[>41;"), ("pty", "DA2=ESC[>0;")] {
        let flow = write(
            dir.path(),
            &format!("ask-{presentation}.jsonc"),
            &format!(
                r#"{{ "target": {{ "command": {{ "argv": ["python3", {}], "presentation": "{presentation}", "terminal": "xterm" }} }},
                    "steps": [ {{ "action": "waitForText", "text": "DA2=", "timeoutMs": 15000 }},
                               {{ "action": "assertText", "text": "{answer}" }} ] }}"#,
                serde_json::to_string(script.to_str().unwrap()).unwrap()
            ),
        );
        let (code, r) = run_virtual(&flow, dir.path());
        assert_eq!(code, 0, "{presentation}: {r:#}");
    }
}

/// Lists, as JSON lines in `argv[2]`, the terminal windows ui-qa (this
/// program's parent) started and their children (the bridge): argv,
/// environment and working directory. Then prints SCANNED.
const SCAN: &str = r#"
import json, os, sys
runner = os.getppid()
def stat(pid):
    with open(f"/proc/{pid}/stat") as f:
        s = f.read()
    rest = s[s.rindex(")") + 2:].split()
    return s[s.index("(") + 1:s.rindex(")")], int(rest[1])
procs = {}
for p in os.listdir("/proc"):
    if p.isdigit():
        try:
            procs[int(p)] = stat(p)
        except OSError:
            pass
windows = [p for p, (comm, ppid) in procs.items() if ppid == runner and comm == "xterm"]
found = windows + [p for p, (comm, ppid) in procs.items() if ppid in windows]
with open(sys.argv[2], "w") as out:
    for p in found:
        read = lambda name: open(f"/proc/{p}/{name}", "rb").read().decode(errors="replace")
        out.write(json.dumps({"pid": p, "comm": procs[p][0], "argv": read("cmdline").split("\0"),
            "env": read("environ"), "cwd": os.readlink(f"/proc/{p}/cwd")}) + "\n")
print("SCANNED", len(found))
sys.stdin.readline()
"#;

#[test]
fn nothing_of_the_program_reaches_the_windows_command_line_or_environment() {
    let dir = tempfile::tempdir().unwrap();
    let script = write(dir.path(), "scan.py", SCAN);
    let cwd = dir.path().join("CWD-7731");
    std::fs::create_dir(&cwd).unwrap();
    let report = dir.path().join("report.jsonl");
    let flow = write(
        dir.path(),
        "scan.jsonc",
        &format!(
            r#"{{ "target": {{ "command": {{ "argv": ["python3", {}, "--marker=ARGV-7731", {}],
                  "cwd": "CWD-7731", "env": {{ "NT_MARKER": "ENV-7731" }}, "presentation": "native-terminal", "terminal": "xterm" }} }},
                "steps": [ {{ "action": "waitForText", "regex": "SCANNED [1-9]", "timeoutMs": 15000 }} ] }}"#,
            serde_json::to_string(script.to_str().unwrap()).unwrap(),
            serde_json::to_string(report.to_str().unwrap()).unwrap(),
        ),
    );
    let (code, r) = run_virtual(&flow, dir.path());
    assert_eq!(code, 0, "{r:#}");
    let text = std::fs::read_to_string(&report).unwrap();
    let found: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let comms: Vec<&str> = found.iter().map(|p| p["comm"].as_str().unwrap()).collect();
    assert!(comms.contains(&"xterm"), "{text}");
    assert!(comms.contains(&"ui-qa"), "no bridge in {text}");
    for p in &found {
        let all = p.to_string();
        assert!(!all.contains("7731"), "the program leaks into {all}");
        if p["comm"] == "ui-qa" {
            // The bridge: the binary alone, no arguments.
            let argv: Vec<&str> = p["argv"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|a| a.as_str())
                .filter(|a| !a.is_empty())
                .collect();
            assert_eq!(argv.len(), 1, "{all}");
        }
    }
}

/// A native-terminal flow whose program is `sleep MARKER` and whose last
/// step waits for text that never comes (for `timeout_ms`).
fn sleeping_flow(dir: &Path, marker: &str, flow_timeout_ms: u64) -> PathBuf {
    write(
        dir,
        &format!("sleep-{flow_timeout_ms}.jsonc"),
        &format!(
            r#"{{ "timeoutMs": {flow_timeout_ms},
                "target": {{ "command": {{ "argv": ["sleep", "{marker}"], "presentation": "native-terminal", "terminal": "xterm" }} }},
                "steps": [ {{ "action": "waitForText", "text": "never shown", "timeoutMs": 600000 }} ] }}"#
        ),
    )
}

#[test]
fn no_window_bridge_or_program_is_left_after_a_failure_or_a_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let marker = unique_sleep(4811);
    let _sweep = KillSleepers(vec![marker.clone()]);
    // A failing assertion.
    let flow = write(
        dir.path(),
        "fail.jsonc",
        &format!(
            r#"{{ "target": {{ "command": {{ "argv": ["sleep", "{marker}"], "presentation": "native-terminal" }} }},
                "steps": [ {{ "action": "assertText", "text": "not on the screen", "timeoutMs": 500 }} ] }}"#
        ),
    );
    let (code, r) = run_virtual(&flow, dir.path());
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(r["status"], "FAILED");
    assert_clean(&r, &["terminal window", "xvfb", "terminal target"]);
    // The failure picture is the window's.
    assert!(artifact(&r, "failure-step1.png").is_some(), "{r:#}");
    // The flow's deadline.
    let flow = sleeping_flow(dir.path(), &marker, 4000);
    let (code, r) = run_virtual(&flow, dir.path());
    assert_ne!(code, 0, "{r:#}");
    assert_eq!(r["timedOut"], true, "{r:#}");
    assert_clean(&r, &["terminal window", "xvfb", "terminal target"]);
    assert!(pids_with_argv(&["sleep", &marker]).is_empty());
}

/// Children of `parent` whose command name is `comm`.
fn children_named(parent: u32, comm: &str) -> Vec<u32> {
    all_pids()
        .into_iter()
        .filter(|p| matches!(proc_stat(*p), Some((c, _, pp)) if c == comm && pp == parent))
        .collect()
}

#[test]
fn a_sigkilled_runner_leaves_no_window_bridge_or_program() {
    let dir = tempfile::tempdir().unwrap();
    let marker = unique_sleep(4812);
    let _sweep = KillSleepers(vec![marker.clone()]);
    let flow = sleeping_flow(dir.path(), &marker, 600_000);
    let mut child = Command::new(bin())
        .args(["run", "--virtual-display", "--workspace"])
        .arg(dir.path().join("ws"))
        .arg(&flow)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let runner = child.id();
    let mut owned = Vec::new();
    assert!(
        wait_until(Duration::from_secs(60), || {
            owned = children_named(runner, "xterm");
            owned.extend(children_named(runner, "Xvfb"));
            owned.len() == 2 && !pids_with_argv(&["sleep", &marker]).is_empty()
        }),
        "the window and the program never both ran"
    );
    let bridges: Vec<u32> = children_named(owned[0], "ui-qa")
        .into_iter()
        .chain(children_named(owned[1], "ui-qa"))
        .collect();
    owned.extend(bridges);
    owned.extend(pids_with_argv(&["sleep", &marker]));
    Command::new("kill")
        .args(["-KILL", &runner.to_string()])
        .status()
        .unwrap();
    let _ = child.wait();
    for pid in owned {
        assert!(
            wait_until(Duration::from_secs(60), || !alive(u64::from(pid))),
            "process {pid} outlived the SIGKILLed runner"
        );
    }
}

#[test]
fn without_a_display_or_a_terminal_emulator_the_run_is_blocked_before_launch() {
    let dir = tempfile::tempdir().unwrap();
    let launched = dir.path().join("LAUNCHED");
    let flow = write(
        dir.path(),
        "touch.jsonc",
        &format!(
            r#"{{ "target": {{ "command": {{ "argv": ["/bin/sh", "-c", "touch {}"], "presentation": "native-terminal" }} }},
                "steps": [ {{ "action": "waitForText", "text": "x" }} ] }}"#,
            launched.display()
        ),
    );
    // No display, no --virtual-display.
    let (code, r) = run_json(&flow, &dir.path().join("ws"), &[], |c| {
        c.env_remove("DISPLAY").env_remove("WAYLAND_DISPLAY");
    });
    assert_eq!(code, 3, "{r:#}");
    assert_eq!(r["status"], "BLOCKED");
    let missing = r["selection"].to_string();
    assert!(missing.contains("\"display\""), "{missing}");
    // A virtual display, but no terminal emulator on PATH: only Xvfb.
    let only = dir.path().join("bin");
    std::fs::create_dir(&only).unwrap();
    let xvfb = qa_core_which("Xvfb");
    std::os::unix::fs::symlink(xvfb, only.join("Xvfb")).unwrap();
    let (code, r) = run_json(&flow, &dir.path().join("ws"), &["--virtual-display"], |c| {
        c.env("PATH", &only);
    });
    assert_eq!(code, 3, "{r:#}");
    let missing = r["selection"].to_string();
    assert!(missing.contains("terminal-emulator"), "{missing}");
    assert!(missing.contains("apt-get install -y xterm"), "{missing}");
    assert!(!launched.exists(), "the program was launched");
}

fn qa_core_which(name: &str) -> PathBuf {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{name} is not on PATH"))
}

#[test]
fn with_a_secret_registered_no_window_pixels_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let flow = write(
        dir.path(),
        "secret.jsonc",
        r#"{ "target": { "command": { "argv": ["sh", "-c", "echo the token is Sk-native-5521; read x"], "presentation": "native-terminal" } },
            "steps": [ { "action": "waitForText", "text": "the token is" },
                       { "action": "capture", "name": "shown" } ] }"#,
    );
    let (code, r) = run_json(&flow, &dir.path().join("ws"), &["--virtual-display"], |c| {
        c.env("UI_QA_SECRET_NATIVE", "Sk-native-5521");
    });
    assert_eq!(code, 0, "{r:#}");
    assert!(artifact(&r, "screenshots/shown.png").is_none(), "{r:#}");
    assert!(artifact(&r, "videos/window.webm").is_none(), "{r:#}");
    // The model's masked rendering is kept, and the step says why.
    assert!(artifact(&r, "screenshots/shown-model.png").is_some());
    let notes = r["observations"].to_string();
    assert!(notes.contains("picture was not taken"), "{notes}");
    assert!(notes.contains("video window was not recorded"), "{notes}");
    assert!(!r.to_string().contains("Sk-native-5521"));
}

#[test]
fn check_says_which_presentation_suits_which_program() {
    let dir = tempfile::tempdir().unwrap();
    for (presentation, says) in [
        ("pty", "for pixels of a real terminal window"),
        (
            "native-terminal",
            "use pty when text, cursor and exit codes",
        ),
    ] {
        let flow = vim_flow(dir.path(), presentation, "");
        let o = Command::new(bin())
            .arg("check")
            .arg(&flow)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{presentation}: {err}");
        let o = Command::new(bin())
            .args(["check", "--json"])
            .arg(&flow)
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["presentation"]["name"], presentation);
    }
    // A terminal named without its window is a warning, not an error.
    let flow = vim_flow(dir.path(), "pty", r#", "terminal": "kitty""#);
    let o = Command::new(bin())
        .arg("check")
        .arg(&flow)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("warning[flow.terminal_unused]"), "{err}");
}

#[test]
fn the_example_flow_passes_with_a_window_picture() {
    let dir = tempfile::tempdir().unwrap();
    let flow = common::root().join("examples/tui-native-vim.jsonc");
    let (code, r) = run_virtual(&flow, dir.path());
    assert_eq!(code, 0, "{r:#}");
    let png = artifact(&r, "screenshots/window.png").expect("a window picture");
    let text = ocr(&png);
    assert!(text.contains("what the model read"), "{text}");
    assert_clean(&r, &["terminal window", "terminal target"]);
}

/// nano in an owned xterm window, nine steps of which five are input.
const NANO_FLOW: &str = r#"{
  "timeoutMs": 60000,
  "target": { "command": { "argv": ["nano", "--ignorercfiles", "notes.txt"], "presentation": "native-terminal", "terminal": "xterm" } },
  "viewport": { "cols": 80, "rows": 24 },
  "steps": [
    { "action": "waitForText", "text": "notes.txt", "timeoutMs": 15000 },
    { "action": "sendText", "text": "Hello from nano" },
    { "action": "sendKeys", "keys": ["Enter"] },
    { "action": "sendText", "text": "second line" },
    { "action": "waitForText", "text": "second line" },
    { "action": "sendKeys", "keys": ["Control+o"] },
    { "action": "waitForText", "text": "File Name to Write" },
    { "action": "sendKeys", "keys": ["Enter"] },
    { "action": "waitForText", "text": "Wrote" }
  ]
}"#;

/// The window video can be watched like a browser video: it starts before
/// the first input (its first frame is nano's empty buffer, not the typed
/// text), and each performed step's result is held on screen, so every
/// step has at least half a second of video and the report places each
/// step at its own moment of it.
#[test]
fn the_window_video_starts_before_the_first_input_and_holds_every_step() {
    let dir = tempfile::tempdir().unwrap();
    let flow = write(dir.path(), "nano.jsonc", NANO_FLOW);
    let (code, r) = run_virtual(&flow, dir.path());
    assert_eq!(code, 0, "{r:#}");
    let video = r["artifacts"]["videos"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["path"].as_str().unwrap().ends_with("videos/window.webm"))
        .unwrap_or_else(|| panic!("a window video: {:#}", r["artifacts"]))
        .clone();
    let path = video["path"].as_str().unwrap();
    let input = |action: &str| action == "sendText" || action == "sendKeys";
    let placed = steps_on_video(&r, &video);
    let performed = placed.iter().filter(|(_, a, _)| input(a)).count();
    assert_eq!(performed, 5, "{placed:?}");
    let seconds = video_seconds(path);
    eprintln!(
        "window video: {seconds:.3} s for {} steps ({performed} performed)",
        placed.len()
    );
    // From the first input on, every step (performed or verified) is held:
    // half a second of the video before the next step begins (or the video
    // ends); the video lasts half a second per step of the flow.
    assert_eq!(placed.len(), 9, "{placed:?}");
    assert!(
        seconds >= 0.5 * placed.len() as f64,
        "the video lasts {seconds:.3} s for {} steps; steps on it: {placed:?}, video {video:#}",
        placed.len()
    );
    let first_input = placed.iter().position(|p| input(&p.1)).unwrap();
    for (k, (index, action, ms)) in placed.iter().enumerate().skip(first_input) {
        let next = placed
            .get(k + 1)
            .map(|p| p.2 as f64 / 1000.0)
            .unwrap_or(seconds);
        assert!(
            next - *ms as f64 / 1000.0 >= 0.5,
            "step {index} {action} has {:.3} s of video; steps on it: {placed:?}, video {video:#}",
            next - *ms as f64 / 1000.0
        );
    }
    // The report places each step there.
    let report = std::path::Path::new(r["evidenceDir"].as_str().unwrap()).join("report.html");
    let html = std::fs::read_to_string(report).unwrap();
    let at: Vec<u64> = placed.iter().map(|p| p.2).collect();
    assert_eq!(report_video_markers(&html), at);
    // The first input's step held the window as it was before its input
    // (its first hold, taken within that step): nano, without the text.
    let origin = video["startedMs"].as_u64().unwrap();
    let step2 = &r["steps"][1];
    let started = step2["startedMs"].as_u64().unwrap();
    let first_hold = video["holds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["atMs"].as_u64().unwrap())
        .find(|at| *at >= started)
        .unwrap_or_else(|| panic!("a hold in the first input's step: {video:#} {step2:#}"));
    assert!(
        first_hold <= started + step2["durationMs"].as_u64().unwrap(),
        "the first input's step holds the window before its input: {video:#} {step2:#}"
    );
    assert!(origin <= first_hold, "{video:#}");
    let t = (first_hold - origin) as f64 / 1000.0 + 0.25;
    let before = ocr(&frame_at(path, t, dir.path()));
    assert!(
        before.contains("nano") || before.contains("New File") || before.contains("Help"),
        "at {t:.3} s the video shows nano: {before}"
    );
    assert!(
        !before.contains("Hello"),
        "at {t:.3} s the video shows no typed text yet: {before}"
    );
    // Just before the next step begins: the typed text (the step's result,
    // held).
    let next = placed[2].2 as f64 / 1000.0;
    let typed = ocr(&frame_at(path, next - 0.1, dir.path()));
    assert!(
        typed.contains("Hello from nano"),
        "before step 3 the video shows step 2's text: {typed}"
    );
    assert_clean(&r, &["terminal window", "xvfb", "terminal target"]);
}

/// The picture `video` shows at `t` seconds (to 1/20 s), as a PNG in
/// `dir`. The video has a variable frame rate (a picture that stays is one
/// frame), so it is first made 20 pictures a second, each the one shown
/// then; seeking alone would give the next frame after `t`.
fn frame_at(video: &str, t: f64, dir: &Path) -> PathBuf {
    let png = dir.join(format!("frame-{:.0}.png", t * 1000.0));
    let n = (t * 20.0).round() as u64;
    let ok = Command::new("ffmpeg")
        .args(["-v", "error", "-i", video])
        .args(["-vf", &format!("fps=20,select=eq(n\\,{n})")])
        .args(["-frames:v", "1", "-y"])
        .arg(&png)
        .status()
        .unwrap();
    assert!(ok.success(), "a frame at {t:.3} s");
    png
}
