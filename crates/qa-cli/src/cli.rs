//! The command line: every command, argument and its help.

use crate::{auth, mcp, reports, runs};
use clap::{Args, Parser, Subcommand, ValueEnum};
use qa_core::driver::RunOptions;
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "ui-qa",
    version,
    about = "Reproduce user-visible bugs and prove fixes on real UIs: web pages in Chromium, terminal programs in a PTY, desktop apps through accessibility.",
    long_about = "ui-qa runs a small declarative JSONC flow against a real surface and returns PASSED, FAILED or BLOCKED with evidence.\n\n\
        Start with `ui-qa guide --backend browser|tui|desktop` to learn the flow vocabulary, `ui-qa check FLOW` to validate a flow without launching anything, and `ui-qa run FLOW` to run it.",
    after_help = "Exit codes: 0 passed, 1 failed, 2 invalid invocation or flow, 3 blocked, 124 timed out, 130 cancelled, 141 stdout closed.",
    after_long_help = "Examples:\n  ui-qa check flow.jsonc                          validate, launch nothing\n  ui-qa run examples/tui-hello.jsonc              run a flow, evidence in .ui-qa/runs/<id>/\n  ui-qa run --json flow.jsonc > result.json       the result document on stdout\n  ui-qa run --virtual-display desktop.jsonc       desktop flow on a headless Linux host\n  ui-qa guide --backend tui --topic pty           how the terminal driver works\n  ui-qa report shard-*/ --output ui-qa-report     merge CI shards into one HTML index + JUnit\n\nExit codes: 0 passed, 1 failed, 2 invalid invocation or flow, 3 blocked, 124 timed out, 130 cancelled, 141 stdout closed."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Parse and admit a flow; launches nothing. Exit 0 when valid, 2 when not.
    Check {
        /// Flow file (JSONC).
        flow: PathBuf,
        /// Print the verdict as JSON on stdout.
        #[arg(long)]
        json: bool,
        /// A value for `${var.NAME}` (repeatable), as `run --var`.
        #[arg(long = "var", value_name = "NAME=VALUE", value_parser = qa_core::flow::vars::parse_assignment)]
        vars: Vec<(String, String)>,
    },
    /// Show which driver would run a flow here and what is missing. Exit 0 available, 3 blocked.
    Probe {
        /// Flow file (JSONC).
        flow: PathBuf,
        /// Print the probe result as JSON on stdout.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        host: HostArgs,
    },
    /// Run one or more flows and keep their evidence.
    Run(RunArgs),
    /// Print one embedded guide for flow authors.
    Guide {
        /// Backend: browser, tui or desktop.
        #[arg(long)]
        backend: String,
        /// Topic within the backend (browser: cdp, auth; tui: pty, native-terminal; desktop: linux-at-spi, windows-uia, macos-accessibility).
        #[arg(long)]
        topic: Option<String>,
    },
    /// What this host can drive, per backend.
    Capabilities {
        /// Print as JSON on stdout.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        host: HostArgs,
    },
    /// Merge runs (CI shards, downloaded artifacts) into one HTML index and JUnit file.
    ///
    /// The exit code is the one `run` gives over the same runs (0 all
    /// passed, 1 failed, 3 blocked, 124 timed out, 130 cancelled); 2 when
    /// nothing could be merged.
    Report(reports::command::ReportArgs),
    /// Open a page, a terminal program or a desktop application and print
    /// what it shows, with what to write in a flow.
    ///
    /// A page (`ui-qa inspect URL`): its URL and title, its buttons, links,
    /// fields and other controls, each with a reference such as @e1 (an
    /// unnamed one with the text of its list item or row), its headings,
    /// landmarks, lists and text, and the flow locator that finds each
    /// element (checked against the page). A terminal program (`ui-qa inspect -- CMD ARGS…`):
    /// its screen once it is stable, cursor and modes. A desktop
    /// application (`ui-qa inspect --app -- CMD ARGS…`): every control one
    /// acts on, buttons first, with references and locators, then the
    /// window as a tree of controls, labels and menus. Keeps no run;
    /// everything started is ended. Exit 0, 1 when the target cannot be
    /// read, 2 for a bad invocation, 3 when blocked.
    Inspect {
        /// The page (an http or https URL). Omit it to inspect the command
        /// after `--`.
        url: Option<String>,
        /// Print the observation as JSON on stdout.
        #[arg(long)]
        json: bool,
        /// The command after `--` is a desktop application: print its
        /// accessibility tree (with --virtual-display on a headless host).
        #[arg(long)]
        app: bool,
        /// Open the page in a running Chromium ui-qa did not start, through
        /// its DevTools endpoint (`http://127.0.0.1:9222` or `ws://…`), in a
        /// browser context of its own: its tabs are left as they were.
        #[arg(long, value_name = "ENDPOINT", requires = "url")]
        connect: Option<String>,
        /// Wait until this text is shown before printing: on a terminal's
        /// screen (instead of waiting for a stable screen), or in the page.
        #[arg(long, value_name = "TEXT")]
        wait_for: Option<String>,
        /// A flow step to run before printing (repeatable, in order), to
        /// reach a later state: `--step '{"action":"fill","locator":{"placeholder":"New todo"},"value":"milk"}' --step '{"action":"press","key":"Enter"}'`.
        /// A step that fails ends the inspection (exit 1).
        #[arg(long = "step", value_name = "JSON", value_parser = parse_step)]
        steps: Vec<serde_json::Value>,
        #[command(flatten)]
        host: HostArgs,
        /// A terminal program (or with --app, a desktop application) and
        /// its arguments, after `--`.
        #[arg(last = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Serve interactive sessions and flow runs to an agent over MCP (stdio)
    ///
    /// Tools: start, observe, act, finish, abort, run, guide, schema.
    /// Sessions reach only what the --allow-* flags name; when the client
    /// closes the connection, every session is ended. See docs/mcp.md.
    ///
    /// Example: ui-qa mcp --allow-origin http://127.0.0.1:8080 --allow-command /usr/bin/htop
    Mcp {
        #[command(flatten)]
        args: mcp::McpArgs,
        #[command(flatten)]
        host: HostArgs,
    },
    /// Auth profiles (.ui-qa/auth.jsonc): list them (ids, types, origins;
    /// never a value) or create the private template a person fills.
    Auth(auth::AuthArgs),
    /// Print a JSON Schema (exactly the bytes of schemas/<name>.schema.json).
    Schema {
        /// Which schema.
        name: SchemaName,
    },
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum SchemaName {
    /// The flow format.
    Flow,
    /// The result document.
    Result,
    /// The auth file (.ui-qa/auth.jsonc).
    Auth,
}

#[derive(Args, Clone)]
pub(crate) struct HostArgs {
    /// Chromium executable to use (default: $CHROME, then chromium on PATH).
    #[arg(long, value_name = "PATH")]
    pub(crate) browser: Option<PathBuf>,
    /// Run desktop flows, native-terminal windows and apps that embed
    /// Chromium (`target.app`) inside an owned Xvfb display and private
    /// session bus.
    #[arg(long)]
    pub(crate) virtual_display: bool,
}

#[derive(Args)]
pub(crate) struct RunArgs {
    /// Flow files (JSONC), or directories: every `*.jsonc` and `*.json` in
    /// a directory, sorted by name (not recursive). All are checked before
    /// any is run.
    #[arg(required = true)]
    pub(crate) flows: Vec<PathBuf>,
    /// Print exactly the result document on stdout (an array when several
    /// flows are given); progress and the summary still go to stderr.
    #[arg(long)]
    pub(crate) json: bool,
    /// Print nothing on stderr but errors (no progress, no summary).
    #[arg(long, short = 'q')]
    pub(crate) quiet: bool,
    /// List the flows that would run (after --grep and --shard), one path
    /// per line on stdout, and run nothing.
    #[arg(long)]
    pub(crate) list: bool,
    /// Run only the flows whose file path or `name` matches this regular
    /// expression.
    #[arg(long, value_name = "REGEX")]
    pub(crate) grep: Option<String>,
    /// A value for `${var.NAME}` in the flows (repeatable; wins over the
    /// flow's own `vars`), e.g. `--var base=https://staging.example.test`.
    /// Not a secret: pass secrets with --secret-env or UI_QA_SECRET_*.
    #[arg(long = "var", value_name = "NAME=VALUE", value_parser = qa_core::flow::vars::parse_assignment)]
    pub(crate) vars: Vec<(String, String)>,
    /// Workspace for run directories. Default: `.ui-qa` in the first
    /// flow's project (the nearest directory above it with .git or .ui-qa,
    /// else the flow's own directory), wherever ui-qa is started from.
    #[arg(long, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// Run id (one flow only); default: time stamp + random suffix.
    #[arg(long, value_name = "ID")]
    pub(crate) run_id: Option<String>,
    /// Keep the newest N finished runs in the workspace (0: keep all); runs
    /// named with --run-id are always kept. `runs/latest` points at the
    /// last run.
    #[arg(long, value_name = "N", default_value_t = runs::DEFAULT_KEEP)]
    pub(crate) keep_runs: usize,
    /// Override the flow deadline, in milliseconds.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    pub(crate) timeout_ms: Option<u64>,
    /// Refuse a flow that checks nothing (no assert* or waitFor* step)
    /// before anything launches (exit 2), instead of warning.
    #[arg(long)]
    pub(crate) strict: bool,
    /// Also write a JUnit XML report (one testcase per flow, its steps as details).
    #[arg(long, value_name = "PATH")]
    pub(crate) junit: Option<PathBuf>,
    /// Run only shard I of N (1-based) of the given flows, e.g. `--shard 2/4`.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub(crate) shard: Option<(usize, usize)>,
    /// Run up to N flows at once.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=16))]
    pub(crate) jobs: u16,
    /// Environment variable whose value is a secret to redact (repeatable).
    /// Every UI_QA_SECRET_* variable is a secret too.
    #[arg(long, value_name = "NAME")]
    pub(crate) secret_env: Vec<String>,
    /// Video of the page or window: on (default), off, or
    /// retain-on-failure (kept only when the run does not pass). Wins over
    /// the flow's `evidence.video`. Needs ffmpeg; without it the frames are
    /// kept and the result says video is missing.
    #[arg(long, value_name = "MODE")]
    pub(crate) video: Option<RecordArg>,
    /// Step trace of browser runs: on, off (default), or retain-on-failure
    /// (kept only when the run does not pass).
    /// Wins over the flow's `evidence.trace`.
    #[arg(long, value_name = "MODE")]
    pub(crate) trace: Option<RecordArg>,
    #[command(flatten)]
    pub(crate) host: HostArgs,
}

/// `--video` / `--trace` values.
#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum RecordArg {
    /// Record and keep.
    On,
    /// Do not record.
    Off,
    /// Record; keep only when the run does not pass.
    RetainOnFailure,
}

impl RecordArg {
    pub(crate) fn mode(self) -> qa_core::recording::RecordMode {
        use qa_core::recording::RecordMode;
        match self {
            RecordArg::On => RecordMode::On,
            RecordArg::Off => RecordMode::Off,
            RecordArg::RetainOnFailure => RecordMode::RetainOnFailure,
        }
    }
}

pub(crate) fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("{s:?} is not a shard; write I/N with 1 <= I <= N, e.g. 2/4");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (i.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
    if n == 0 || i == 0 || i > n {
        return Err(bad());
    }
    Ok((i, n))
}

impl HostArgs {
    pub(crate) fn options(&self) -> RunOptions {
        RunOptions {
            browser: self.browser.clone(),
            virtual_display: self.virtual_display,
            video: None,
            trace: None,
            origin_limit: None,
            connect_limit: None,
            redact_matchers: false,
        }
    }
}

/// One `--step`: a JSON object (the step is checked when it runs).
fn parse_step(s: &str) -> Result<serde_json::Value, String> {
    match serde_json::from_str::<serde_json::Value>(s) {
        Ok(v) if v.is_object() => Ok(v),
        Ok(_) => {
            Err("a step is a JSON object such as {\"action\":\"press\",\"key\":\"Enter\"}".into())
        }
        Err(e) => Err(format!(
            "not JSON ({e}); write a step such as {{\"action\":\"press\",\"key\":\"Enter\"}}"
        )),
    }
}
