//! `cargo xtask bench web`: MiniWoB++-style task pages and a multi-step
//! form (`xtask/bench/web/*.html`), each solved by ui-qa, Playwright and
//! agent-browser with a fresh headless Chromium per task.
//!
//! Fairness choices:
//! - Every contender loads the pages from one shared loopback server
//!   ([`super::server`]) started once for the whole bench; ui-qa's flows
//!   (`xtask/bench/web/flows/*.jsonc`) therefore use an absolute `url` on
//!   that server rather than their own `serve` directory.
//! - All three use `/usr/bin/chromium` (or `$CHROME`), headless; the peers
//!   get `--no-sandbox` as a root user must pass it (ui-qa adds it itself
//!   when running as root).
//! - Each measurement is the whole wall time of solving one task: launch,
//!   navigation, the actions, checking that the result element reads
//!   `done`, and closing the browser.
//!   - ui-qa: one `ui-qa run` of the task's flow (role/label/text/testId
//!     locators, then `assertText` on the result) with its defaults, as a
//!     user runs it (video on: screencast, visualizer, holds, WebM
//!     encoding) — the headline ratio; and again with `--video off`, shown
//!     for reference, so the table and the line under it say what
//!     recording costs.
//!   - Playwright: one `node playwright-task.mjs <task> <url>`
//!     (`xtask/bench/peers/`).
//!   - agent-browser: one CLI call per step as its users run it (`open`,
//!     `find role|label|testid …`, `find testid result text`, `close`),
//!     with the native binary a global install runs, its own session
//!     (`AGENT_BROWSER_SESSION=ui-qa-bench`), and the documented variables `AGENT_BROWSER_EXECUTABLE_PATH`,
//!     `AGENT_BROWSER_ARGS=--no-sandbox` and
//!     `AGENT_BROWSER_NO_VERSION_CHECK=1` (its outdated-Chrome check fetches
//!     a web page, which this offline-capable bench must not wait on).
//!     `close` ends its daemon after every task.

use super::report::{Cell, Contender, Kind, Matrix};
use super::timing::{mib, run_timed, tail, Outcome};
use super::{chromium, server, Ctx};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// The MiniWoB++-style tasks (page stems under `xtask/bench/web/`).
const MINIWOB: &[&str] = &[
    "click-button",
    "enter-text",
    "focus-text",
    "click-checkboxes",
    "click-link",
    "click-collapsible",
    "login-user",
    "click-dialog",
];

/// The multi-step form flow.
const FORM: &str = "form-wizard";

/// The 160,000-element page (ui-qa's peak memory on a page of any size).
const HUGE: &str = "huge-page";

/// Deadline of one contender on one task (and of each agent-browser call).
const TASK_TIMEOUT: Duration = Duration::from_secs(90);

/// The contenders, in the order each round runs them.
#[derive(Debug, Clone, Copy)]
enum Who {
    UiQa,
    /// ui-qa without its default video (like for like with the peers).
    UiQaNoVideo,
    Playwright,
    AgentBrowser,
}

const CONTENDERS: [(Who, &str, Kind); 4] = [
    (Who::UiQa, "ui-qa (defaults)", Kind::UiQa),
    (Who::UiQaNoVideo, "ui-qa --video off", Kind::Reference),
    (Who::Playwright, "playwright", Kind::Peer),
    (Who::AgentBrowser, "agent-browser", Kind::Peer),
];

/// agent-browser's calls for a task, between `open` and reading the result:
/// its semantic `find` locators, and CSS where `find` has no such action
/// (`select`) or for a `wait`.
fn agent_browser_steps(task: &str) -> Vec<Vec<&'static str>> {
    let click = |role: &'static str, name: &'static str| {
        vec!["find", "role", role, "click", "--name", name]
    };
    let fill = |label: &'static str, text: &'static str| vec!["find", "label", label, "fill", text];
    let check = |role: &'static str, name: &'static str| {
        vec!["find", "role", role, "check", "--name", name]
    };
    match task {
        "click-button" => vec![click("button", "Submit")],
        "enter-text" => vec![fill("Name", "Ada Lovelace"), click("button", "Submit")],
        "focus-text" => vec![vec!["find", "label", "Answer", "click"]],
        "click-checkboxes" => vec![
            check("checkbox", "Apple"),
            check("checkbox", "Cherry"),
            click("button", "Submit"),
        ],
        "click-link" => vec![click("link", "dolor")],
        // `find` does not wait for an element that is not there yet; its
        // guide says to `wait` for what a page-changing action brings.
        "click-collapsible" => vec![
            click("button", "Section 1"),
            vec!["wait", "#submit"],
            click("button", "Submit"),
        ],
        "login-user" => vec![
            fill("Username", "kanye"),
            fill("Password", "abc123"),
            click("button", "Log in"),
        ],
        "click-dialog" => vec![click("button", "Close")],
        "form-wizard" => vec![
            fill("Full name", "Ada Lovelace"),
            fill("Email", "ada@example.com"),
            click("button", "Next"),
            vec!["select", "#plan", "Pro"],
            check("radio", "Yearly"),
            click("button", "Next"),
            check("checkbox", "I accept the terms"),
            click("button", "Create account"),
        ],
        _ => unreachable!("unknown web task {task}"),
    }
}

/// Everything one round of one task needs.
struct Env<'a> {
    ctx: &'a Ctx,
    origin: String,
    flows: std::path::PathBuf,
    logs: std::path::PathBuf,
    session: String,
}

impl Env<'_> {
    /// One contender solving one task: its wall time and the peak memory
    /// of its own process (none for agent-browser's many calls), or why it
    /// failed.
    fn attempt(&self, who: Who, task: &str) -> Result<(f64, Option<u64>), String> {
        let url = format!("{}/{task}.html", self.origin);
        match who {
            Who::UiQa | Who::UiQaNoVideo => {
                let ws = self.ctx.scratch_dir("web-ws");
                let video = match who {
                    Who::UiQaNoVideo => "off",
                    _ => "on",
                };
                let o = run_timed(
                    Command::new(&self.ctx.ui_qa)
                        .args(["run", "--video", video, "--workspace"])
                        .arg(&ws)
                        .arg("--browser")
                        .arg(chromium())
                        .arg(self.flows.join(format!("{task}.jsonc"))),
                    TASK_TIMEOUT,
                    &self.logs,
                );
                verdict(o)
            }
            Who::Playwright => {
                let o = run_timed(
                    Command::new("node")
                        .current_dir(&self.ctx.peers.node_dir)
                        .env("CHROME", chromium())
                        .args(["playwright-task.mjs", task, &url]),
                    TASK_TIMEOUT,
                    &self.logs,
                );
                verdict(o)
            }
            Who::AgentBrowser => {
                let started = Instant::now();
                let solved = self.agent_browser(task, &url);
                // `close` ends the browser and the daemon, also after a failure.
                let closed = self.ab(&["close"]);
                let ms = started.elapsed().as_secs_f64() * 1000.0;
                solved?;
                if !closed.ok() {
                    return Err(format!("agent-browser close: {}", closed.why()));
                }
                Ok((ms, None))
            }
        }
    }

    /// One agent-browser CLI call.
    fn ab(&self, args: &[&str]) -> Outcome {
        run_timed(
            Command::new(&self.ctx.peers.agent_browser)
                .current_dir(&self.logs)
                .env("AGENT_BROWSER_EXECUTABLE_PATH", chromium())
                .env("AGENT_BROWSER_ARGS", "--no-sandbox")
                .env("AGENT_BROWSER_NO_VERSION_CHECK", "1")
                .env("AGENT_BROWSER_SESSION", &self.session)
                .args(args),
            TASK_TIMEOUT,
            &self.logs,
        )
    }

    /// agent-browser's calls for one task, up to and including the check of
    /// the result text (polled a few times, as its users' scripts do).
    fn agent_browser(&self, task: &str, url: &str) -> Result<(), String> {
        let mut calls = vec![vec!["open", url]];
        calls.extend(agent_browser_steps(task));
        for args in calls {
            let o = self.ab(&args);
            if !o.ok() {
                return Err(format!("agent-browser {}: {}", args.join(" "), o.why()));
            }
        }
        let mut last = String::new();
        for _ in 0..20 {
            let o = self.ab(&["find", "testid", "result", "text"]);
            if !o.ok() {
                return Err(format!(
                    "agent-browser find testid result text: {}",
                    o.why()
                ));
            }
            last = o.stdout.trim().to_string();
            if last == "done" {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(format!("the result read {last:?}, not \"done\""))
    }
}

/// A timed process's wall time and peak memory (KiB) if it succeeded.
fn verdict(o: Outcome) -> Result<(f64, Option<u64>), String> {
    if o.ok() {
        Ok((o.ms, o.peak_rss_kib))
    } else {
        Err(o.why())
    }
}

/// Writes every task's flow with the shared server's origin filled in.
fn write_flows(assets: &Path, dir: &Path, origin: &str) -> Result<(), String> {
    for task in MINIWOB.iter().chain([&FORM, &HUGE]) {
        let src = assets.join("web/flows").join(format!("{task}.jsonc"));
        let text = std::fs::read_to_string(&src).map_err(|e| format!("{}: {e}", src.display()))?;
        std::fs::write(
            dir.join(format!("{task}.jsonc")),
            text.replace("{{ORIGIN}}", origin),
        )
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    Ok(())
}

/// Runs the web surface; false when a contender failed a task.
pub fn run(ctx: &Ctx) -> bool {
    let origin = match server::start(ctx.assets.join("web")) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("xtask bench web: cannot start the page server: {e}");
            return false;
        }
    };
    let env = Env {
        ctx,
        flows: ctx.scratch_dir("web-flows"),
        logs: ctx.scratch_dir("web-logs"),
        session: "ui-qa-bench".into(),
        origin,
    };
    if let Err(e) = write_flows(&ctx.assets, &env.flows, &env.origin) {
        eprintln!("xtask bench web: {e}");
        return false;
    }
    eprintln!("xtask bench web: pages served at {}", env.origin);
    // A daemon left over from an interrupted bench would be reused: end it.
    let _ = env.ab(&["close"]);
    let tasks: Vec<&str> = MINIWOB.iter().copied().chain([FORM]).collect();
    let mut cells = vec![vec![Cell::default(); CONTENDERS.len()]; tasks.len()];
    // Peak memory (KiB) of each contender's own process, every task and round.
    let mut rss: Vec<Vec<u64>> = vec![Vec::new(); CONTENDERS.len()];
    let mut huge = Cell::default();
    let mut huge_rss: Vec<u64> = Vec::new();
    let mut ok = true;
    for round in 1..=ctx.rounds {
        for (t, task) in tasks.iter().enumerate() {
            let mut line = format!("web round {round}/{}: {task:<18}", ctx.rounds);
            for (c, (who, name, _)) in CONTENDERS.iter().enumerate() {
                match env.attempt(*who, task) {
                    Ok((ms, kib)) => {
                        cells[t][c].samples.push(ms);
                        rss[c].extend(kib);
                        line.push_str(&format!(" {name} {ms:.0} ms;"));
                    }
                    Err(why) => {
                        ok = false;
                        cells[t][c].failures += 1;
                        line.push_str(&format!(" {name} FAILED;"));
                        eprintln!(
                            "xtask bench web: {name} failed {task} (round {round}): {}",
                            tail(&why, 8)
                        );
                    }
                }
            }
            eprintln!("{}", line.trim_end_matches(';'));
        }
        match env.attempt(Who::UiQa, HUGE) {
            Ok((ms, kib)) => {
                huge.samples.push(ms);
                huge_rss.extend(kib);
                eprintln!(
                    "web round {round}/{}: {HUGE} ui-qa (defaults) {ms:.0} ms, peak RSS {}",
                    ctx.rounds,
                    mib(kib)
                );
            }
            Err(why) => {
                ok = false;
                huge.failures += 1;
                eprintln!(
                    "xtask bench web: ui-qa failed {HUGE} (round {round}): {}",
                    tail(&why, 8)
                );
            }
        }
    }
    let contenders: Vec<Contender> = CONTENDERS
        .iter()
        .map(|(_, n, k)| Contender::new(n, *k))
        .collect();
    let rows = |names: &[&str]| -> Vec<(String, Vec<Cell>)> {
        tasks
            .iter()
            .zip(&cells)
            .filter(|(t, _)| names.contains(t))
            .map(|(t, c)| (t.to_string(), c.clone()))
            .collect()
    };
    let what =
        "wall time of one process per task: browser launch, page, actions, result check, close";
    let miniwob = Matrix {
        title: format!(
            "web: MiniWoB-style tasks, median of {} round(s) (ms; {what})",
            ctx.rounds
        ),
        row_header: "task".into(),
        contenders: contenders.clone(),
        rows: rows(MINIWOB),
        summary: true,
    };
    let form = Matrix {
        title: format!(
            "web: multi-step form (3 steps, 8 actions), median of {} round(s) (ms; same measure)",
            ctx.rounds
        ),
        row_header: "flow".into(),
        contenders,
        rows: rows(&[FORM]),
        summary: false,
    };
    println!("{}", miniwob.render());
    println!("{}", form.render());
    println!("{}", video_cost(&tasks, &cells));
    println!("{}", memory(&rss, &huge, &huge_rss));
    ok
}

/// Peak memory of each contender's own process over every task (not the
/// browser it drives), and ui-qa's on the 160,000-element page.
fn memory(rss: &[Vec<u64>], huge: &Cell, huge_rss: &[u64]) -> String {
    let mut out = String::from(
        "web: peak RSS of the tool's own process (not the browser), median and max over every task and round\n",
    );
    for ((_, name, _), samples) in CONTENDERS.iter().zip(rss) {
        let v: Vec<f64> = samples.iter().map(|&k| k as f64).collect();
        let line = match (super::timing::median(&v), samples.iter().max()) {
            (Some(m), Some(&x)) => format!(
                "  {name:<20} {} median, {} max\n",
                mib(Some(m as u64)),
                mib(Some(x))
            ),
            _ => format!("  {name:<20} - (one process per step, not measured)\n"),
        };
        out.push_str(&line);
    }
    let max = huge_rss.iter().max().copied();
    out.push_str(&format!(
        "web: {HUGE} (160,000 elements; two accessibility snapshots and a click), ui-qa (defaults): {} ms median, peak RSS {} max\n",
        huge.median().map_or_else(|| "-".into(), |m| format!("{m:.0}")),
        mib(max)
    ));
    out
}

/// What video costs: per task, ui-qa's default run (video on) over the
/// same run with `--video off`, and their median.
fn video_cost(tasks: &[&str], cells: &[Vec<Cell>]) -> String {
    let on = CONTENDERS
        .iter()
        .position(|(w, _, _)| matches!(w, Who::UiQa))
        .expect("ui-qa is a contender");
    let off = CONTENDERS
        .iter()
        .position(|(w, _, _)| matches!(w, Who::UiQaNoVideo))
        .expect("ui-qa --video off is a contender");
    let mut ratios = Vec::new();
    let mut each = Vec::new();
    for (task, row) in tasks.iter().zip(cells) {
        if let (Some(a), Some(b)) = (row[on].median(), row[off].median()) {
            ratios.push(a / b);
            each.push(format!("{task} {:.2}x", a / b));
        }
    }
    match super::timing::median(&ratios) {
        Some(m) => format!(
            "web: video on / video off (ui-qa defaults over --video off): median {m:.2}x ({})\n",
            each.join(", ")
        ),
        None => "web: video on / video off: no task completed both ways\n".into(),
    }
}
