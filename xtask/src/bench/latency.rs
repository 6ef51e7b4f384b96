//! The terminal's marker latency: how long after a marker reaches the PTY a
//! watcher has noticed it and answered.
//!
//! `xtask/bench/tui/marker-echo.py` writes `MARK-00` … `MARK-NN`, one at a
//! time, and after each waits for a line on stdin, timing from the marker's
//! write to the line's arrival with the monotonic clock. A watcher presses
//! Enter as soon as it sees each marker. One sample therefore holds the
//! watcher noticing the marker (ui-qa's `waitForText` returning) *plus*
//! sending a key and the kernel's PTY path both ways: an upper bound on the
//! "marker → `waitForText` returns" time the performance goal names.
//!
//! Contenders: ui-qa (a flow of `waitForText MARK-NN` + `sendKeys Enter`
//! pairs) and tmux (`capture-pane` polled every 20 ms, `send-keys Enter`).

use super::report::{Cell, Contender, Kind, ListRow, Listing};
use super::timing::{run_timed, tail};
use super::Ctx;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Markers per program run.
const MARKS: usize = 20;

/// Deadline of one contender's whole run.
const TIMEOUT: Duration = Duration::from_secs(60);

/// tmux's polling interval (as in the flood workloads).
const TMUX_POLL: Duration = Duration::from_millis(20);

/// The program's text for marker `i`.
fn mark(i: usize) -> String {
    format!("MARK-{i:02}")
}

/// The watched program: `marker-echo.py` writing its samples to `out`.
fn program(ctx: &Ctx, out: &Path) -> Vec<String> {
    let python = if Path::new("/usr/bin/python3").is_file() {
        "/usr/bin/python3"
    } else {
        "python3"
    };
    vec![
        python.to_string(),
        ctx.assets.join("tui/marker-echo.py").display().to_string(),
        MARKS.to_string(),
        out.display().to_string(),
    ]
}

/// ui-qa's flow: wait for each marker, press Enter, then wait for the end.
fn flow(argv: &[String]) -> String {
    let mut steps = Vec::new();
    for i in 0..MARKS {
        steps.push(serde_json::json!({ "action": "waitForText", "text": mark(i) }));
        steps.push(serde_json::json!({ "action": "sendKeys", "keys": ["Enter"] }));
    }
    steps.push(serde_json::json!({ "action": "waitForText", "text": "LAT-DONE" }));
    serde_json::json!({
        "version": 1,
        "name": "bench: answer every marker",
        "target": { "command": { "argv": argv } },
        "viewport": { "cols": 80, "rows": 24 },
        "timeoutMs": TIMEOUT.as_millis() as u64,
        "steps": steps
    })
    .to_string()
}

/// The samples the program wrote, in microseconds.
fn samples(out: &Path) -> Result<Vec<f64>, String> {
    let text = std::fs::read_to_string(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let v: Vec<f64> = text
        .lines()
        .filter_map(|l| l.trim().parse::<f64>().ok())
        .collect();
    if v.len() == MARKS {
        Ok(v)
    } else {
        Err(format!("{} samples instead of {MARKS}", v.len()))
    }
}

fn ui_qa(ctx: &Ctx, dir: &Path, out: &Path) -> Result<Vec<f64>, String> {
    let flow_path = dir.join("flow.jsonc");
    std::fs::write(&flow_path, flow(&program(ctx, out))).map_err(|e| e.to_string())?;
    let o = run_timed(
        Command::new(&ctx.ui_qa)
            .args(["run", "--workspace"])
            .arg(dir.join("ws"))
            .arg(&flow_path),
        TIMEOUT + Duration::from_secs(10),
        dir,
    );
    if !o.ok() {
        return Err(o.why());
    }
    samples(out)
}

fn tmux(ctx: &Ctx, dir: &Path, out: &Path) -> Result<Vec<f64>, String> {
    let socket = dir.join("tmux.sock");
    let tmux = || {
        let mut c = Command::new("tmux");
        c.arg("-S").arg(&socket).args(["-f", "/dev/null"]);
        c.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        c
    };
    let argv = program(ctx, out);
    let started = tmux()
        .args(["new-session", "-d", "-x", "80", "-y", "24", "-s", "lat"])
        .args(&argv)
        .status();
    if !started.as_ref().is_ok_and(|s| s.success()) {
        return Err(format!("tmux new-session: {started:?}"));
    }
    let deadline = Instant::now() + TIMEOUT;
    let mut next = 0;
    let mut done = false;
    while Instant::now() < deadline {
        let screen = tmux()
            .args(["capture-pane", "-p", "-t", "lat"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        if next < MARKS && screen.contains(&mark(next)) {
            let _ = tmux().args(["send-keys", "-t", "lat", "Enter"]).status();
            next += 1;
            continue;
        }
        if next == MARKS && screen.contains("LAT-DONE") {
            done = true;
            break;
        }
        std::thread::sleep(TMUX_POLL);
    }
    let _ = tmux().args(["kill-session", "-t", "lat"]).status();
    let _ = std::fs::remove_file(&socket);
    if !done {
        return Err(format!("tmux saw {next} of {MARKS} markers"));
    }
    samples(out)
}

/// The contenders, in the order each round runs them.
const CONTENDERS: [(&str, Kind); 2] = [
    ("ui-qa (release)", Kind::UiQa),
    ("tmux + capture-pane (20 ms)", Kind::Peer),
];

/// Runs the latency scenario; false when a contender failed.
pub fn run(ctx: &Ctx) -> bool {
    let mut cells = vec![Cell::default(); CONTENDERS.len()];
    let mut ok = true;
    for round in 1..=ctx.rounds {
        let mut line = format!("tui round {round}/{}: marker-latency", ctx.rounds);
        for (c, (name, _)) in CONTENDERS.iter().enumerate() {
            let dir = ctx.scratch_dir("tui-latency");
            let out = dir.join("samples.txt");
            let got = match c {
                0 => ui_qa(ctx, &dir, &out),
                _ => tmux(ctx, &dir, &out),
            };
            match got {
                Ok(v) => {
                    let med = super::timing::median(&v).unwrap_or(f64::NAN);
                    line.push_str(&format!(" {name} median {med:.0} µs;"));
                    cells[c].samples.extend(v);
                }
                Err(why) => {
                    ok = false;
                    cells[c].failures += 1;
                    line.push_str(&format!(" {name} FAILED;"));
                    eprintln!(
                        "xtask bench tui: {name} failed marker-latency (round {round}): {}",
                        tail(&why, 8)
                    );
                }
            }
        }
        eprintln!("{}", line.trim_end_matches(';'));
    }
    let listing = Listing {
        title: format!(
            "tui: marker latency, {MARKS} markers per round, {} round(s) \
             (µs from a marker's write to the watcher's Enter arriving; all samples pooled)",
            ctx.rounds
        ),
        rows: CONTENDERS
            .iter()
            .zip(cells)
            .map(|((name, kind), cell)| ListRow {
                contender: Contender::new(name, *kind),
                cell,
                note: String::new(),
            })
            .collect(),
        versus: None,
        note_header: None,
    };
    println!("{}", listing.render());
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flow_answers_every_marker_then_waits_for_the_end() {
        let f: serde_json::Value =
            serde_json::from_str(&flow(&["python3".into(), "x.py".into()])).unwrap();
        let steps = f["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 2 * MARKS + 1);
        assert_eq!(steps[0]["text"], "MARK-00");
        assert_eq!(steps[1]["keys"][0], "Enter");
        assert_eq!(steps[2 * MARKS]["text"], "LAT-DONE");
    }
}
