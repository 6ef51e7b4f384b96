//! `cargo xtask bench [web|tui|desktop|all] [--rounds N]`: ui-qa and peer
//! tools side by side on the same machine, in the same run.
//!
//! Every scenario runs its contenders *interleaved*: round 1 runs ui-qa, then
//! each peer, round 2 the same again, and so on, so that a burst of load from
//! something else on the machine lands on every contender alike. Each surface
//! prints one table per scenario with the median wall time of every
//! contender and its ratio to the fastest *peer* (references such as "the
//! program alone" are shown but are not peers).
//!
//! Nothing here asserts on speed: the command fails only when a contender
//! could not complete a task (or a peer could not be installed).
//!
//! - `web` ([`web`]): MiniWoB++-style task pages and a multi-step form
//!   (`xtask/bench/web/`) against ui-qa, Playwright and agent-browser; and
//!   ([`observe`]) the size of ui-qa's MCP observation against Playwright
//!   MCP's snapshot of the same TodoMVC page.
//! - `tui` ([`tui`]): a line flood and a 20 MB write, then a marker, against
//!   ui-qa, tmux and node-pty + @xterm/headless (the former single `bench`).
//! - `desktop` ([`desktop`]): an accessibility snapshot and one locator
//!   lookup in gtk4-demo against pyatspi, on one shared Xvfb + session bus.
//!
//! Peers live in a cache outside the repository ([`peers`]); the scripts
//! that drive them are in `xtask/bench/peers/`.

mod desktop;
mod latency;
mod observe;
mod peers;
mod report;
mod server;
mod timing;
mod tui;
mod web;

use std::path::{Path, PathBuf};
use std::process::Command;

/// Which surfaces a bench run covers, and how many rounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Web pages in Chromium.
    pub web: bool,
    /// Terminal programs in a PTY.
    pub tui: bool,
    /// Desktop applications over AT-SPI.
    pub desktop: bool,
    /// Interleaved rounds per scenario (the median is over these).
    pub rounds: usize,
}

/// The usage line of `cargo xtask bench`.
pub const USAGE: &str = "usage: cargo xtask bench [web|tui|desktop|all] [--rounds N]";

/// Parses `[web|tui|desktop|all] [--rounds N]` (in any order; the surface
/// defaults to `all`, the rounds to 3).
pub fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut surface: Option<&str> = None;
    let mut rounds: usize = 3;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let value = if a == "--rounds" {
            i += 1;
            Some(
                args.get(i)
                    .map(String::as_str)
                    .ok_or("--rounds needs a number")?,
            )
        } else {
            a.strip_prefix("--rounds=")
        };
        if let Some(v) = value {
            rounds = match v.parse::<usize>() {
                Ok(n) if n >= 1 => n,
                _ => {
                    return Err(format!(
                        "--rounds takes a whole number (1 or more), not {v:?}"
                    ))
                }
            };
        } else if matches!(a, "web" | "tui" | "desktop" | "all") {
            if let Some(s) = surface {
                return Err(format!("one surface at a time: {s:?} and {a:?}"));
            }
            surface = Some(a);
        } else {
            return Err(format!("unexpected argument {a:?}"));
        }
        i += 1;
    }
    let s = surface.unwrap_or("all");
    Ok(Options {
        web: matches!(s, "web" | "all"),
        tui: matches!(s, "tui" | "all"),
        desktop: matches!(s, "desktop" | "all"),
        rounds,
    })
}

/// What every surface needs: where things are and how many rounds to run.
pub struct Ctx {
    /// `xtask/bench/` (pages, peer scripts, workloads).
    pub assets: PathBuf,
    /// The release ui-qa binary.
    pub ui_qa: PathBuf,
    /// The installed peers.
    pub peers: peers::Peers,
    /// A scratch directory for this run (flows, logs, run directories),
    /// removed at the end.
    pub scratch: PathBuf,
    /// Interleaved rounds per scenario.
    pub rounds: usize,
}

impl Ctx {
    /// A fresh, empty scratch sub-directory `name`.
    pub fn scratch_dir(&self, name: &str) -> PathBuf {
        let d = self.scratch.join(name);
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("bench scratch dir");
        d
    }
}

/// The Chromium every browser contender uses.
pub fn chromium() -> PathBuf {
    std::env::var_os("CHROME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"))
}

/// The first line a command prints (stdout, else stderr), trimmed.
pub fn first_line(cmd: &mut Command) -> Option<String> {
    let o = cmd.output().ok()?;
    let text = if o.stdout.iter().any(|b| !b.is_ascii_whitespace()) {
        o.stdout
    } else {
        o.stderr
    };
    String::from_utf8_lossy(&text)
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_owned)
}

/// Builds the release ui-qa; if the build fails (the crates may be mid-edit)
/// but an older binary exists, says so loudly and uses it.
fn build_ui_qa(root: &Path) -> Option<PathBuf> {
    let bin = root.join("target/release/ui-qa");
    let mut cargo = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cargo
        .current_dir(root)
        .args(["build", "--release", "-p", "qa-cli"]);
    if crate::run(&mut cargo) {
        return Some(bin);
    }
    if bin.is_file() {
        eprintln!(
            "xtask bench: WARNING: `cargo build --release -p qa-cli` failed; \
             measuring the existing {} instead",
            bin.display()
        );
        return Some(bin);
    }
    eprintln!("xtask bench: no ui-qa binary to measure");
    None
}

/// Runs the selected surfaces; false when any contender failed a task.
pub fn run(opts: &Options) -> bool {
    let root = crate::root();
    let Some(ui_qa) = build_ui_qa(&root) else {
        return false;
    };
    let Some(peers) = peers::ensure(opts) else {
        return false;
    };
    let scratch = std::env::temp_dir().join(format!("ui-qa-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).expect("bench scratch dir");
    let ctx = Ctx {
        assets: root.join("xtask/bench"),
        ui_qa,
        peers,
        scratch,
        rounds: opts.rounds,
    };
    print_header(&ctx, opts);
    let mut ok = true;
    if opts.web {
        ok &= web::run(&ctx);
        ok &= observe::run(&ctx);
    }
    if opts.tui {
        ok &= tui::run(&ctx);
        ok &= latency::run(&ctx);
    }
    if opts.desktop {
        ok &= desktop::run(&ctx);
    }
    let _ = std::fs::remove_dir_all(&ctx.scratch);
    if !ok {
        eprintln!("xtask bench: some contender did not complete a task (see above)");
    }
    ok
}

/// Versions of everything measured, and the machine, before any table.
fn print_header(ctx: &Ctx, opts: &Options) {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let load = std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into());
    println!(
        "ui-qa bench: {} round(s), contenders interleaved per round; {cores} cores, load average {load}",
        ctx.rounds
    );
    let v = |cmd: &mut Command| first_line(cmd).unwrap_or_else(|| "not found".into());
    println!(
        "  ui-qa            {} ({})",
        v(Command::new(&ctx.ui_qa).arg("--version")),
        ctx.ui_qa.display()
    );
    if opts.web {
        println!(
            "  chromium         {}",
            v(Command::new(chromium()).arg("--version"))
        );
    }
    for (name, version) in ctx.peers.versions(opts) {
        println!("  {name:<16} {version}");
    }
    println!();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn defaults_to_all_surfaces_and_three_rounds() {
        let o = parse_args(&[]).unwrap();
        assert!(o.web && o.tui && o.desktop);
        assert_eq!(o.rounds, 3);
    }

    #[test]
    fn one_surface_and_rounds_in_any_order() {
        let o = parse_args(&args(&["--rounds", "1", "tui"])).unwrap();
        assert!(o.tui && !o.web && !o.desktop);
        assert_eq!(o.rounds, 1);
        let o = parse_args(&args(&["web", "--rounds=5"])).unwrap();
        assert!(o.web && !o.tui);
        assert_eq!(o.rounds, 5);
    }

    #[test]
    fn rejects_nonsense() {
        assert!(parse_args(&args(&["--rounds", "0"])).is_err());
        assert!(parse_args(&args(&["--rounds"])).is_err());
        assert!(parse_args(&args(&["web", "tui"])).is_err());
        assert!(parse_args(&args(&["gui"])).is_err());
    }
}
