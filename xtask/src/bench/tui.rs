//! `cargo xtask bench tui`: a program floods an 80x24 terminal, then prints
//! `MARKER-DONE` and sleeps; each contender must notice the marker.
//!
//! Workloads:
//! - line flood: `xtask/bench/tui/line-flood.py`, 400,000 lines of 55 bytes
//!   with one `os.write` per line (many small PTY reads);
//! - large write: `yes … | head -c 20000000` (20 MB in big writes) — the
//!   former single `cargo xtask bench`, whose references and tmux peer are
//!   kept here, with the ratio to the bare PTY.
//!
//! Contenders (each measured from spawn to marker seen plus its own exit):
//! - references, not peers: the program alone with output to `/dev/null`,
//!   and the program in a bare PTY nobody models (`script -qfc … /dev/null`);
//!   these run the program without its trailing sleep and end when it does;
//! - ui-qa: `ui-qa run` of a one-step flow (`waitForText` MARKER-DONE,
//!   timeout 120 s, 80x24), start-up and cleanup included;
//! - tmux: `new-session -d -x 80 -y 24` on a private server socket, then
//!   `capture-pane -p` every 20 ms until the marker shows, then
//!   `kill-session`;
//! - node-pty + @xterm/headless: `xtask/bench/peers/xterm-wait.mjs`.
//!
//! Next to the times, each contender's peak resident memory (the maximum
//! over the rounds of its kernel high-water mark, `VmHWM`): the terminal's
//! side only, never the program's — `script` for the bare PTY, ui-qa's own
//! process, the tmux server (read just before `kill-session`; the read is
//! not timed), and node running node-pty and the headless xterm.

use super::report::{Cell, Contender, Kind, ListRow, Listing};
use super::timing::{high_water_kib, mib, run_timed, run_timed_quiet, tail, Outcome};
use super::Ctx;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What every contender waits for.
const MARKER: &str = "MARKER-DONE";

/// Deadline of one contender on one workload.
const TIMEOUT: Duration = Duration::from_secs(150);

/// tmux's polling interval.
const TMUX_POLL: Duration = Duration::from_millis(20);

/// One flood.
struct Workload {
    /// Short name (progress lines).
    name: &'static str,
    /// What it does (table title).
    what: &'static str,
    /// Shell command that floods, prints the marker, then sleeps 30 s.
    watched: String,
    /// The same without the sleep (for the references).
    reference: String,
}

/// The contenders, in the order each round runs them.
#[derive(Debug, Clone, Copy)]
enum Who {
    Alone,
    BarePty,
    UiQa,
    Tmux,
    Xterm,
}

const CONTENDERS: [(Who, &str, Kind); 5] = [
    (Who::Alone, "program alone (no terminal)", Kind::Reference),
    (Who::BarePty, "program in a bare PTY", Kind::Reference),
    (Who::UiQa, "ui-qa (release)", Kind::UiQa),
    (Who::Tmux, "tmux + capture-pane (20 ms)", Kind::Peer),
    (Who::Xterm, "node-pty + @xterm/headless", Kind::Peer),
];

/// `s` as one single-quoted shell word.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn workloads(ctx: &Ctx) -> Vec<Workload> {
    let python = if Path::new("/usr/bin/python3").is_file() {
        "/usr/bin/python3".to_string()
    } else {
        "python3".to_string()
    };
    let flood = format!(
        "exec {} {}",
        sh_quote(&python),
        sh_quote(&ctx.assets.join("tui/line-flood.py").display().to_string())
    );
    let yes =
        "yes 'the quick brown fox jumps over the lazy dog' | head -c 20000000; echo MARKER-DONE";
    vec![
        Workload {
            name: "line-flood",
            what: "line flood: 400,000 writes of one 55-byte line, then MARKER-DONE",
            watched: format!("{flood} 30"),
            reference: format!("{flood} 0"),
        },
        Workload {
            name: "large-write",
            what: "large write: 20 MB from `yes | head -c`, then MARKER-DONE",
            watched: format!("{yes}; sleep 30"),
            reference: yes.to_string(),
        },
    ]
}

/// One contender's run of a workload.
struct Run {
    /// Spawn → marker seen → exit, in milliseconds.
    ms: f64,
    /// Peak resident memory of the terminal's side, in KiB (`None`: not
    /// measured).
    kib: Option<u64>,
}

/// A timed process's wall time and peak memory if it succeeded.
fn verdict(o: Outcome) -> Result<Run, String> {
    if o.ok() {
        Ok(Run {
            ms: o.ms,
            kib: o.peak_rss_kib,
        })
    } else {
        Err(o.why())
    }
}

/// The one-step ui-qa flow waiting for the marker.
fn flow(watched: &str) -> String {
    serde_json::json!({
        "version": 1,
        "name": "bench: wait for the marker after a flood",
        "target": { "command": { "argv": ["sh", "-c", watched] } },
        "viewport": { "cols": 80, "rows": 24 },
        "timeoutMs": 150_000,
        "steps": [ { "action": "waitForText", "text": MARKER, "timeoutMs": 120_000 } ]
    })
    .to_string()
}

/// tmux: start detached, poll `capture-pane`, kill the session. The
/// server's peak memory is read once the marker showed, and that read is
/// left out of the time.
fn tmux(dir: &Path, watched: &str) -> Result<Run, String> {
    let socket = dir.join("tmux.sock");
    let tmux = || {
        let mut c = Command::new("tmux");
        c.arg("-S").arg(&socket).args(["-f", "/dev/null"]);
        c.stdin(Stdio::null());
        c
    };
    let started = Instant::now();
    let status = tmux()
        .args([
            "new-session",
            "-d",
            "-x",
            "80",
            "-y",
            "24",
            "-s",
            "bench",
            watched,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !status.as_ref().is_ok_and(|s| s.success()) {
        return Err(format!("tmux new-session: {status:?}"));
    }
    let mut seen = false;
    while started.elapsed() < TIMEOUT {
        let out = tmux().args(["capture-pane", "-p", "-t", "bench"]).output();
        if out.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains(MARKER)) {
            seen = true;
            break;
        }
        std::thread::sleep(TMUX_POLL);
    }
    let untimed = Instant::now();
    let kib = tmux()
        .args(["display-message", "-p", "-t", "bench", "#{pid}"])
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .trim()
                .parse::<u32>()
                .ok()
        })
        .and_then(high_water_kib);
    let untimed = untimed.elapsed();
    let killed = tmux()
        .args(["kill-session", "-t", "bench"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let ms = (started.elapsed() - untimed).as_secs_f64() * 1000.0;
    let _ = std::fs::remove_file(&socket);
    match (seen, killed) {
        (true, Ok(s)) if s.success() => Ok(Run { ms, kib }),
        (true, k) => Err(format!("tmux kill-session: {k:?}")),
        (false, _) => Err(format!("{MARKER} never showed in capture-pane")),
    }
}

/// One contender on one workload: its time and memory, or why it failed.
fn attempt(ctx: &Ctx, who: Who, w: &Workload) -> Result<Run, String> {
    let logs = ctx.scratch.join("tui-logs");
    match who {
        // No terminal: nothing of a terminal's to measure.
        Who::Alone => verdict(run_timed_quiet(
            Command::new("sh").args(["-c", &w.reference]),
            TIMEOUT,
            &logs,
        ))
        .map(|r| Run { kib: None, ..r }),
        Who::BarePty => verdict(run_timed_quiet(
            Command::new("script").args(["-qfc", &w.reference, "/dev/null"]),
            TIMEOUT,
            &logs,
        )),
        Who::UiQa => {
            let dir = ctx.scratch_dir("tui-ui-qa");
            let flow_path = dir.join("flow.jsonc");
            std::fs::write(&flow_path, flow(&w.watched)).map_err(|e| e.to_string())?;
            verdict(run_timed(
                Command::new(&ctx.ui_qa)
                    .args(["run", "--workspace"])
                    .arg(dir.join("ws"))
                    .arg(&flow_path),
                TIMEOUT,
                &logs,
            ))
        }
        Who::Tmux => tmux(&logs, &w.watched),
        Who::Xterm => verdict(run_timed(
            Command::new("node").current_dir(&ctx.peers.node_dir).args([
                "xterm-wait.mjs",
                MARKER,
                "sh",
                "-c",
                &w.watched,
            ]),
            TIMEOUT,
            &logs,
        )),
    }
}

/// Runs the terminal surface; false when a contender failed a workload.
pub fn run(ctx: &Ctx) -> bool {
    let _ = ctx.scratch_dir("tui-logs");
    let loads = workloads(ctx);
    let mut cells = vec![vec![Cell::default(); CONTENDERS.len()]; loads.len()];
    let mut peaks = vec![vec![None::<u64>; CONTENDERS.len()]; loads.len()];
    let mut ok = true;
    for round in 1..=ctx.rounds {
        for (i, w) in loads.iter().enumerate() {
            let mut line = format!("tui round {round}/{}: {:<12}", ctx.rounds, w.name);
            for (c, (who, name, _)) in CONTENDERS.iter().enumerate() {
                match attempt(ctx, *who, w) {
                    Ok(r) => {
                        cells[i][c].samples.push(r.ms);
                        peaks[i][c] = peaks[i][c].max(r.kib);
                        line.push_str(&format!(" {name} {:.0} ms;", r.ms));
                    }
                    Err(why) => {
                        ok = false;
                        cells[i][c].failures += 1;
                        line.push_str(&format!(" {name} FAILED;"));
                        eprintln!(
                            "xtask bench tui: {name} failed {} (round {round}): {}",
                            w.name,
                            tail(&why, 8)
                        );
                    }
                }
            }
            eprintln!("{}", line.trim_end_matches(';'));
        }
    }
    for ((w, row), peak) in loads.iter().zip(cells).zip(peaks) {
        let listing = Listing {
            title: format!(
                "tui: {}; 80x24, median of {} round(s) (ms, spawn → marker seen → exit; \
                 peak RSS of the terminal's side, max over the rounds)",
                w.what, ctx.rounds
            ),
            rows: CONTENDERS
                .iter()
                .zip(row)
                .zip(peak)
                .map(|(((_, name, kind), cell), kib)| ListRow {
                    contender: Contender::new(name, *kind),
                    cell,
                    note: mib(kib),
                })
                .collect(),
            versus: Some((1, "÷ bare PTY".into())),
            note_header: Some("peak RSS".into()),
        };
        println!("{}", listing.render());
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_for_sh() {
        assert_eq!(sh_quote("a b"), "'a b'");
        assert_eq!(sh_quote("it's"), r"'it'\''s'");
    }

    #[test]
    fn the_flow_waits_for_the_marker_in_80x24() {
        let f: serde_json::Value = serde_json::from_str(&flow("echo MARKER-DONE")).unwrap();
        assert_eq!(f["viewport"]["cols"], 80);
        assert_eq!(f["steps"][0]["action"], "waitForText");
        assert_eq!(f["target"]["command"]["argv"][2], "echo MARKER-DONE");
    }
}
