//! `cargo xtask bench desktop`: gtk4-demo over AT-SPI, ui-qa against
//! pyatspi and against a floor, on one shared display and bus.
//!
//! The bench starts one `Xvfb` on a free display (`-displayfd`) and one
//! private session bus (`dbus-daemon --session`, whose standard service
//! directories activate `org.a11y.Bus`, i.e. at-spi-bus-launcher and the
//! registry) with a private `XDG_RUNTIME_DIR`. Every contender runs against
//! that same pair: ui-qa *without* `--virtual-display` (it uses the host's
//! `DISPLAY` and `DBUS_SESSION_BUS_ADDRESS`, which are these),
//! `xtask/bench/peers/atspi-walk.py` under Debian's python3 with pyatspi,
//! and `zbus-walk` (`xtask/bench/zbus-walk`, built in release before the
//! first round). Each run launches its own gtk4-demo and waits for its
//! window; only the operation itself is timed:
//!
//! - snapshot: ui-qa's `snapshotAccessibility` step (`durationMs` from
//!   `ui-qa run --json`) against pyatspi walking the whole tree and reading
//!   every node's role, name, states and extents (and the id, interfaces,
//!   text and value that ui-qa's snapshot also records); and against the
//!   *floor*, a reference rather than a peer: `zbus-walk` reads the same
//!   fields with the fewest calls ui-qa's driver could make, every call of
//!   every node in flight at once, and does nothing with the answers. The
//!   line under the table divides ui-qa by it (the goal: at most 1.2×);
//! - lookup: ui-qa's `assertText` on the push button "Run" by role + name
//!   against `pyatspi.findDescendant` for the same button, its name read
//!   back.
//!
//! ui-qa runs twice: with its defaults (window video on, the headline) and
//! with `--video off`, a reference row that shows what the video costs.
//!
//! The node counts, each contender's whole-process wall time (launch,
//! wait, operation, teardown) and the peak resident memory of its own
//! process (its `VmHWM`, the maximum over the rounds; never the
//! application's) are shown next to the medians for context.

use super::report::{Cell, Contender, Kind, ListRow, Listing};
use super::timing::{kill_group, mib, run_timed, tail, Outcome};
use super::Ctx;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// Deadline of one contender run.
const TIMEOUT: Duration = Duration::from_secs(90);

/// The application under test.
const APP: &str = "gtk4-demo";

/// One desktop scenario.
struct Scenario {
    /// Short name (progress lines).
    name: &'static str,
    /// Table title (what is measured).
    title: &'static str,
    /// The ui-qa flow's steps; the last one is the timed one.
    steps: serde_json::Value,
    /// The pyatspi script's mode arguments.
    pyatspi: &'static [&'static str],
    /// Whether the zbus floor does this operation too.
    floor: bool,
}

fn scenarios() -> Vec<Scenario> {
    use serde_json::json;
    vec![
        Scenario {
            name: "snapshot",
            title: "full accessibility snapshot of gtk4-demo (ms of the walk only: ui-qa's \
                    snapshotAccessibility step vs pyatspi reading role, name, states, extents, \
                    id, interfaces, text and value of every node; the zbus floor reading the same \
                    fields, every call in flight at once)",
            steps: json!([
                { "action": "waitForWindow" },
                { "action": "snapshotAccessibility" }
            ]),
            pyatspi: &["walk"],
            floor: true,
        },
        Scenario {
            name: "lookup",
            title: "one locator lookup in gtk4-demo, push button \"Run\" by role + name, name \
                    read back (ms of the lookup only: ui-qa's assertText step vs \
                    pyatspi.findDescendant)",
            steps: json!([
                { "action": "waitForWindow" },
                {
                    "action": "assertText",
                    "locator": { "role": "button", "name": "Run" },
                    "equals": "Run"
                }
            ]),
            pyatspi: &["find", "push button", "Run"],
            floor: false,
        },
    ]
}

/// The shared X display and session bus, torn down on drop.
struct Desktop {
    display: String,
    bus: String,
    runtime_dir: PathBuf,
    children: Vec<Child>,
    /// Kept open: Xvfb and dbus-daemon wrote their first line here.
    _pipes: Vec<BufReader<ChildStdout>>,
}

impl Desktop {
    /// Starts Xvfb and the bus; `dir` holds the runtime dir and logs.
    fn start(dir: &Path) -> Result<Desktop, String> {
        let runtime_dir = dir.join("runtime");
        std::fs::create_dir_all(&runtime_dir)
            .and_then(|_| {
                std::fs::set_permissions(&runtime_dir, std::fs::Permissions::from_mode(0o700))
            })
            .map_err(|e| format!("{}: {e}", runtime_dir.display()))?;
        let mut d = Desktop {
            display: String::new(),
            bus: String::new(),
            runtime_dir,
            children: Vec::new(),
            _pipes: Vec::new(),
        };
        let mut x = Command::new("Xvfb");
        x.args([
            "-displayfd",
            "1",
            "-screen",
            "0",
            "1280x800x24",
            "-nolisten",
            "tcp",
            "-noreset",
        ]);
        let n = d.spawn_reading_line(x, dir, "xvfb")?;
        if n.parse::<u32>().is_err() {
            return Err(format!("Xvfb reported display {n:?}"));
        }
        d.display = format!(":{n}");
        let mut bus = Command::new("dbus-daemon");
        bus.args(["--session", "--nofork", "--print-address=1"])
            .env("DISPLAY", &d.display)
            .env("XDG_RUNTIME_DIR", &d.runtime_dir)
            .env_remove("DBUS_SESSION_BUS_ADDRESS");
        d.bus = d.spawn_reading_line(bus, dir, "dbus-daemon")?;
        Ok(d)
    }

    /// Spawns `cmd` in its own process group and returns the first line it
    /// prints (within 15 s).
    fn spawn_reading_line(
        &mut self,
        mut cmd: Command,
        dir: &Path,
        name: &str,
    ) -> Result<String, String> {
        let log = std::fs::File::create(dir.join(format!("{name}.log")))
            .map(Stdio::from)
            .unwrap_or_else(|_| Stdio::null());
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log)
            .process_group(0)
            .spawn()
            .map_err(|e| format!("{name}: {e}"))?;
        let mut reader = BufReader::new(child.stdout.take().expect("piped stdout"));
        self.children.push(child);
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let r = reader.read_line(&mut line);
            let _ = tx.send((r, line, reader));
        });
        match rx.recv_timeout(Duration::from_secs(15)) {
            Ok((Ok(n), line, reader)) if n > 0 => {
                self._pipes.push(reader);
                Ok(line.trim().to_string())
            }
            Ok(_) => Err(format!(
                "{name} exited before it was ready (see {name}.log)"
            )),
            Err(_) => Err(format!("{name} was not ready within 15 s")),
        }
    }

    /// Points `cmd` at this display and bus.
    fn apply<'a>(&self, cmd: &'a mut Command) -> &'a mut Command {
        cmd.env("DISPLAY", &self.display)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.bus)
            .env("XDG_RUNTIME_DIR", &self.runtime_dir)
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("AT_SPI_BUS_ADDRESS")
    }
}

impl Drop for Desktop {
    fn drop(&mut self) {
        // The bus first (its activated a11y bus and registry follow it), then X.
        for child in self.children.iter_mut().rev() {
            kill_group(child.id(), "-TERM");
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.runtime_dir);
    }
}

/// One measurement: the timed operation, the node count, the whole process
/// and its peak memory (KiB).
struct Sample {
    ms: f64,
    nodes: u64,
    wall: f64,
    kib: Option<u64>,
}

fn failed(o: &Outcome) -> String {
    o.why()
}

/// ui-qa with its defaults (window video on): one `run --json` of the
/// scenario's flow; the last step's `durationMs`.
fn ui_qa(b: &Bench, s: &Scenario) -> Result<Sample, String> {
    ui_qa_with(b, s, &[])
}

/// ui-qa with `--video off`, for what the window video costs.
fn ui_qa_no_video(b: &Bench, s: &Scenario) -> Result<Sample, String> {
    ui_qa_with(b, s, &["--video", "off"])
}

fn ui_qa_with(b: &Bench, s: &Scenario, extra: &[&str]) -> Result<Sample, String> {
    let (ctx, desk) = (b.ctx, b.desk);
    let dir = ctx.scratch_dir("desktop-ui-qa");
    let flow = serde_json::json!({
        "version": 1,
        "name": format!("bench: {}", s.name),
        "target": { "application": { "launch": { "argv": [APP] } } },
        "timeoutMs": 60_000,
        "steps": s.steps,
    });
    let flow_path = dir.join("flow.jsonc");
    std::fs::write(&flow_path, flow.to_string()).map_err(|e| e.to_string())?;
    let o = run_timed(
        desk.apply(&mut Command::new(&ctx.ui_qa))
            .args(["run", "--json"])
            .args(extra)
            .arg("--workspace")
            .arg(dir.join("ws"))
            .arg(&flow_path),
        TIMEOUT,
        &b.logs,
    );
    if !o.ok() {
        return Err(failed(&o));
    }
    let result: serde_json::Value =
        serde_json::from_str(&o.stdout).map_err(|e| format!("ui-qa --json output: {e}"))?;
    let last = s.steps.as_array().map_or(0, Vec::len).saturating_sub(1);
    let ms = result["steps"][last]["durationMs"]
        .as_f64()
        .ok_or("no durationMs for the timed step")?;
    let nodes = match result["artifacts"]["accessibilitySnapshots"][0]["path"].as_str() {
        Some(p) => std::fs::read_to_string(p)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| v["nodeCount"].as_u64())
            .unwrap_or(0),
        None => 1,
    };
    Ok(Sample {
        ms,
        nodes,
        wall: o.ms,
        kib: o.peak_rss_kib,
    })
}

/// pyatspi: one run of `atspi-walk.py`; the time it reports.
fn pyatspi(b: &Bench, s: &Scenario) -> Result<Sample, String> {
    let mut cmd = Command::new(&b.ctx.peers.python);
    cmd.arg(b.ctx.assets.join("peers/atspi-walk.py"))
        .args(s.pyatspi)
        .args(["--", APP]);
    reported(b, &mut cmd, "atspi-walk.py")
}

/// The zbus floor: one run of `zbus-walk`; the time it reports.
fn zbus_floor(b: &Bench, _: &Scenario) -> Result<Sample, String> {
    let bin = b.floor.as_ref().ok_or("zbus-walk could not be built")?;
    let mut cmd = Command::new(bin);
    cmd.args(["--", APP]);
    reported(b, &mut cmd, "zbus-walk")
}

/// Runs `cmd` on the shared display and bus; the `{"ms", "nodes"}` line it
/// prints last.
fn reported(b: &Bench, cmd: &mut Command, name: &str) -> Result<Sample, String> {
    let o = run_timed(b.desk.apply(cmd), TIMEOUT, &b.logs);
    if !o.ok() {
        return Err(failed(&o));
    }
    let line = o.stdout.lines().last().unwrap_or_default();
    let v: serde_json::Value =
        serde_json::from_str(line).map_err(|e| format!("{name} printed {line:?}: {e}"))?;
    Ok(Sample {
        ms: v["ms"].as_f64().ok_or("no ms")?,
        nodes: v["nodes"].as_u64().unwrap_or(0),
        wall: o.ms,
        kib: o.peak_rss_kib,
    })
}

/// Builds `zbus-walk` in release (`cargo build --release -p zbus-walk`);
/// its path, or `None` when the build failed.
fn build_floor() -> Option<PathBuf> {
    let root = crate::root();
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let mut cargo = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cargo
        .current_dir(&root)
        .args(["build", "--release", "-p", "zbus-walk"]);
    if !crate::run(&mut cargo) {
        eprintln!("xtask bench desktop: `cargo build --release -p zbus-walk` failed");
        return None;
    }
    Some(target.join("release/zbus-walk"))
}

/// What every contender run needs.
struct Bench<'a> {
    ctx: &'a Ctx,
    desk: &'a Desktop,
    /// The built floor, if it built.
    floor: Option<PathBuf>,
    /// Where contenders' output goes.
    logs: PathBuf,
}

/// The floor's row name.
const FLOOR: &str = "zbus floor";

/// One contender run of a scenario.
type Attempt = fn(&Bench, &Scenario) -> Result<Sample, String>;

/// The contenders, in the order each round runs them.
const CONTENDERS: [(&str, Kind, Attempt); 4] = [
    ("ui-qa (release)", Kind::UiQa, ui_qa),
    ("ui-qa --video off", Kind::Reference, ui_qa_no_video),
    ("pyatspi", Kind::Peer, pyatspi),
    (FLOOR, Kind::Reference, zbus_floor),
];

/// The contenders of one scenario (the floor only where it applies).
fn contenders(s: &Scenario) -> Vec<(&'static str, Kind, Attempt)> {
    CONTENDERS
        .into_iter()
        .filter(|(name, _, _)| s.floor || *name != FLOOR)
        .collect()
}

/// The line under a table: ui-qa's median over the floor's.
fn over_floor(cells: &[Cell], list: &[(&str, Kind, Attempt)]) -> Option<String> {
    let median = |want: &str| {
        list.iter()
            .position(|(name, _, _)| *name == want)
            .and_then(|i| cells[i].median())
    };
    let floor = median(FLOOR)?;
    let mine = median(CONTENDERS[0].0)?;
    let mut out = format!("ui-qa / zbus floor: {:.2}x", mine / floor);
    if let Some(off) = median(CONTENDERS[1].0) {
        out.push_str(&format!(
            " (with --video off {:.2}x); video on / video off: {:.2}x",
            off / floor,
            mine / off
        ));
    }
    out.push('\n');
    Some(out)
}

/// Runs the desktop surface; false when a contender failed a scenario.
pub fn run(ctx: &Ctx) -> bool {
    if !cfg!(target_os = "linux") {
        println!("desktop: skipped (AT-SPI is Linux only)\n");
        return true;
    }
    let floor = build_floor();
    let dir = ctx.scratch_dir("desktop");
    let logs = ctx.scratch_dir("desktop-logs");
    let desk = match Desktop::start(&dir) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("xtask bench desktop: cannot start Xvfb + session bus: {e}");
            return false;
        }
    };
    eprintln!(
        "xtask bench desktop: shared display {} and session bus {}",
        desk.display, desk.bus
    );
    let bench = Bench {
        ctx,
        desk: &desk,
        floor,
        logs,
    };
    let list = scenarios();
    let lists: Vec<_> = list.iter().map(contenders).collect();
    let mut cells: Vec<Vec<Cell>> = lists
        .iter()
        .map(|l| vec![Cell::default(); l.len()])
        .collect();
    let mut nodes: Vec<Vec<Vec<u64>>> = lists.iter().map(|l| vec![Vec::new(); l.len()]).collect();
    let mut walls: Vec<Vec<Vec<f64>>> = lists.iter().map(|l| vec![Vec::new(); l.len()]).collect();
    let mut peaks: Vec<Vec<Option<u64>>> = lists.iter().map(|l| vec![None; l.len()]).collect();
    let mut ok = true;
    for round in 1..=ctx.rounds {
        for (i, s) in list.iter().enumerate() {
            let mut line = format!("desktop round {round}/{}: {:<9}", ctx.rounds, s.name);
            for (c, (name, _, attempt)) in lists[i].iter().enumerate() {
                match attempt(&bench, s) {
                    Ok(r) => {
                        cells[i][c].samples.push(r.ms);
                        nodes[i][c].push(r.nodes);
                        walls[i][c].push(r.wall);
                        peaks[i][c] = peaks[i][c].max(r.kib);
                        line.push_str(&format!(" {name} {:.0} ms ({} nodes);", r.ms, r.nodes));
                    }
                    Err(why) => {
                        ok = false;
                        cells[i][c].failures += 1;
                        line.push_str(&format!(" {name} FAILED;"));
                        eprintln!(
                            "xtask bench desktop: {name} failed {} (round {round}): {}",
                            s.name,
                            tail(&why, 8)
                        );
                    }
                }
            }
            eprintln!("{}", line.trim_end_matches(';'));
        }
    }
    drop(bench);
    drop(desk);
    for (i, s) in list.iter().enumerate() {
        let rows = lists[i]
            .iter()
            .enumerate()
            .map(|(c, (name, kind, _))| {
                let seen = &nodes[i][c];
                let (lo, hi) = (seen.iter().min(), seen.iter().max());
                let count = match (lo, hi) {
                    (Some(l), Some(h)) if l == h => format!("{l}"),
                    (Some(l), Some(h)) => format!("{l}-{h}"),
                    _ => "-".into(),
                };
                let wall = super::timing::median(&walls[i][c])
                    .map_or_else(|| "-".into(), |w| format!("{w:.0} ms"));
                ListRow {
                    contender: Contender::new(name, *kind),
                    cell: cells[i][c].clone(),
                    note: format!("{count} · {wall} · {}", mib(peaks[i][c])),
                }
            })
            .collect();
        let floor = lists[i].iter().position(|(name, _, _)| *name == FLOOR);
        let listing = Listing {
            title: format!(
                "desktop: {}; shared Xvfb + private session bus, median of {} round(s)",
                s.title, ctx.rounds
            ),
            rows,
            versus: floor.map(|f| (f, "÷ zbus floor".into())),
            note_header: Some("nodes · whole process · peak RSS".into()),
        };
        let mut out = listing.render();
        if let Some(l) = over_floor(&cells[i], &lists[i]) {
            out.push_str(&l);
        }
        println!("{out}");
    }
    ok
}
