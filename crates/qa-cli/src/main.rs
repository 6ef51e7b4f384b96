//! `ui-qa` — reproduce user-visible bugs and prove fixes on real UIs.
//!
//! This binary only parses arguments, selects, wires and prints; the work
//! lives in `qa-core` and the driver crates.

// Every print of this binary goes through these (they shadow the standard
// macros in every module below): a closed or failing stdout is remembered,
// later output is skipped and the command ends with exit 141 after its
// normal cleanup, instead of panicking with `failed printing to stdout`; a
// closed stderr is ignored (diagnostics must never stop a run).
macro_rules! print {
    ($($arg:tt)*) => { $crate::console::write(format_args!($($arg)*)) };
}
macro_rules! println {
    () => { $crate::console::write(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::console::write(format_args!("{}\n", format_args!($($arg)*))) };
}
macro_rules! eprint {
    ($($arg:tt)*) => { $crate::console::write_stderr(format_args!($($arg)*)) };
}
macro_rules! eprintln {
    () => { $crate::console::write_stderr(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::console::write_stderr(format_args!("{}\n", format_args!($($arg)*))) };
}

/// Writing to stdout and stderr without panicking.
mod console {
    use std::io::Write;
    use std::sync::atomic::{AtomicBool, Ordering};

    static FAILED: AtomicBool = AtomicBool::new(false);

    /// Writes and flushes; after the first failure, writes nothing more.
    pub fn write(args: std::fmt::Arguments<'_>) {
        if FAILED.load(Ordering::Relaxed) {
            return;
        }
        let mut out = std::io::stdout().lock();
        if out.write_fmt(args).and_then(|()| out.flush()).is_err() {
            failed();
        }
    }

    /// Records that stdout could not be written (closed pipe or otherwise).
    fn failed() {
        FAILED.store(true, Ordering::Relaxed);
    }

    /// Whether any write to stdout failed.
    pub fn has_failed() -> bool {
        FAILED.load(Ordering::Relaxed)
    }

    /// Writes to stderr; failures are ignored.
    pub fn write_stderr(args: std::fmt::Arguments<'_>) {
        let _ = std::io::stderr().lock().write_fmt(args);
    }
}

mod auth;
mod codes;
mod drivers;
mod guides;
mod inspect;
mod mcp;
mod output;
mod private;
mod reports;
mod runs;

use clap::{Args, Parser, Subcommand, ValueEnum};
use qa_core::driver::{Host, RunOptions};
use qa_core::flow::{Flow, FlowError};
use qa_core::result::{ProbeResult, ProbeStatus, RunResult, RunStatus};
use qa_core::runner::{self, Cancel, RunRequest};
use qa_core::secrets::Secrets;
use qa_core::select;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// Exit codes (stable).
mod exit {
    pub const PASSED: u8 = 0;
    pub const FAILED: u8 = 1;
    pub const INVALID: u8 = 2;
    pub const BLOCKED: u8 = 3;
    pub const TIMED_OUT: u8 = 124;
    pub const CANCELLED: u8 = 130;
    /// stdout was closed (e.g. `| head`) or could not be written; like a
    /// process ended by SIGPIPE (128 + 13), but after normal cleanup.
    pub const STDOUT_CLOSED: u8 = 141;
}

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
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
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
    /// A page (`ui-qa inspect URL`): its buttons, links, fields and other
    /// controls, each with a reference such as @e1, its headings and
    /// landmarks, and the flow locator that finds each element (checked
    /// against the page). A terminal program (`ui-qa inspect -- CMD ARGS…`):
    /// its screen once it is stable, cursor and modes. A desktop
    /// application (`ui-qa inspect --app -- CMD ARGS…`): its controls with
    /// references and locators, windows and labels. Keeps no run;
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
enum SchemaName {
    /// The flow format.
    Flow,
    /// The result document.
    Result,
    /// The auth file (.ui-qa/auth.jsonc).
    Auth,
}

#[derive(Args, Clone)]
struct HostArgs {
    /// Chromium executable to use (default: $CHROME, then chromium on PATH).
    #[arg(long, value_name = "PATH")]
    browser: Option<PathBuf>,
    /// Run desktop flows inside an owned Xvfb display and private session bus.
    #[arg(long)]
    virtual_display: bool,
}

#[derive(Args)]
struct RunArgs {
    /// Flow files (JSONC), or directories: every `*.jsonc` and `*.json` in
    /// a directory, sorted by name (not recursive). All are checked before
    /// any is run.
    #[arg(required = true)]
    flows: Vec<PathBuf>,
    /// Print exactly the result document on stdout (an array when several
    /// flows are given); progress and the summary still go to stderr.
    #[arg(long)]
    json: bool,
    /// Print nothing on stderr but errors (no progress, no summary).
    #[arg(long, short = 'q')]
    quiet: bool,
    /// List the flows that would run (after --grep and --shard), one path
    /// per line on stdout, and run nothing.
    #[arg(long)]
    list: bool,
    /// Run only the flows whose file path or `name` matches this regular
    /// expression.
    #[arg(long, value_name = "REGEX")]
    grep: Option<String>,
    /// A value for `${var.NAME}` in the flows (repeatable; wins over the
    /// flow's own `vars`), e.g. `--var base=https://staging.example.test`.
    /// Not a secret: pass secrets with --secret-env or UI_QA_SECRET_*.
    #[arg(long = "var", value_name = "NAME=VALUE", value_parser = qa_core::flow::vars::parse_assignment)]
    vars: Vec<(String, String)>,
    /// Workspace for run directories.
    #[arg(long, value_name = "DIR", default_value = ".ui-qa")]
    workspace: PathBuf,
    /// Run id (one flow only); default: time stamp + random suffix.
    #[arg(long, value_name = "ID")]
    run_id: Option<String>,
    /// Keep the newest N finished runs in the workspace (0: keep all); runs
    /// named with --run-id are always kept. `runs/latest` points at the
    /// last run.
    #[arg(long, value_name = "N", default_value_t = runs::DEFAULT_KEEP)]
    keep_runs: usize,
    /// Override the flow deadline, in milliseconds.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    timeout_ms: Option<u64>,
    /// Also write a JUnit XML report (one testsuite per flow, one testcase per step).
    #[arg(long, value_name = "PATH")]
    junit: Option<PathBuf>,
    /// Run only shard I of N (1-based) of the given flows, e.g. `--shard 2/4`.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    shard: Option<(usize, usize)>,
    /// Run up to N flows at once.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=16))]
    jobs: u16,
    /// Environment variable whose value is a secret to redact (repeatable).
    /// Every UI_QA_SECRET_* variable is a secret too.
    #[arg(long, value_name = "NAME")]
    secret_env: Vec<String>,
    /// Video of the page or window: on (default), off, or
    /// retain-on-failure (kept only when the run does not pass). Wins over
    /// the flow's `evidence.video`. Needs ffmpeg; without it the frames are
    /// kept and the result says video is missing.
    #[arg(long, value_name = "MODE")]
    video: Option<RecordArg>,
    /// Step trace of browser runs: on, off (default), or retain-on-failure
    /// (kept only when the run does not pass).
    /// Wins over the flow's `evidence.trace`.
    #[arg(long, value_name = "MODE")]
    trace: Option<RecordArg>,
    #[command(flatten)]
    host: HostArgs,
}

/// `--video` / `--trace` values.
#[derive(Clone, Copy, ValueEnum)]
enum RecordArg {
    /// Record and keep.
    On,
    /// Do not record.
    Off,
    /// Record; keep only when the run does not pass.
    RetainOnFailure,
}

impl RecordArg {
    fn mode(self) -> qa_core::recording::RecordMode {
        use qa_core::recording::RecordMode;
        match self {
            RecordArg::On => RecordMode::On,
            RecordArg::Off => RecordMode::Off,
            RecordArg::RetainOnFailure => RecordMode::RetainOnFailure,
        }
    }
}

fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("{s:?} is not a shard; write I/N with 1 <= I <= N, e.g. 2/4");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (i.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
    if n == 0 || i == 0 || i > n {
        return Err(bad());
    }
    Ok((i, n))
}

impl HostArgs {
    fn options(&self) -> RunOptions {
        RunOptions {
            browser: self.browser.clone(),
            virtual_display: self.virtual_display,
            video: None,
            trace: None,
            origin_limit: None,
            redact_matchers: false,
        }
    }
}

/// Parses and admits a flow; returns every problem, each with its position
/// in the flow text.
fn check_flow(path: &Path) -> Result<(Flow, String), Vec<FlowError>> {
    check_flow_with(path, &qa_core::flow::vars::Vars::new())
}

/// [`check_flow`] with `--var` values.
fn check_flow_with(
    path: &Path,
    vars: &qa_core::flow::vars::Vars,
) -> Result<(Flow, String), Vec<FlowError>> {
    let checked = Flow::check_file(path, vars);
    let mut errors = checked.errors;
    // The driver's own checks run over every step that parsed, so one
    // `check` reports the parse errors and the admission errors together.
    if let (Some(flow), Some(text)) = (&checked.flow, &checked.text) {
        if let Some(d) = select::admission_driver(&drivers::all(), flow) {
            errors.extend(
                select::admit(d.as_ref(), flow)
                    .into_iter()
                    .map(|e| e.with_position(text)),
            );
        }
    }
    match (checked.flow, checked.text) {
        (Some(flow), Some(text)) if errors.is_empty() => Ok((flow, text)),
        _ => {
            // In the order they appear in the file, at most 20.
            errors.sort_by_key(|e| (e.line.unwrap_or(0), e.column.unwrap_or(0)));
            errors.truncate(qa_core::flow::MAX_REPORTED_ERRORS);
            Err(errors)
        }
    }
}

fn print_flow_errors(path: &Path, errors: &[FlowError]) {
    print_flow_problems(path, errors, "error");
}

/// The flow's warnings (`flow::lint`), placed in its text.
fn flow_warnings(flow: &Flow, text: &str) -> Vec<FlowError> {
    qa_core::flow::lint(flow)
        .into_iter()
        .map(|w| w.with_position(text))
        .collect()
}

fn print_flow_problems(path: &Path, errors: &[FlowError], what: &str) {
    use output::clean;
    let file = path.display().to_string();
    for e in errors {
        let pos = match (e.line, e.column) {
            (Some(l), Some(c)) => format!("{}:{l}:{c}", clean(&file)),
            _ => clean(&file).into_owned(),
        };
        let ptr = if e.pointer.is_empty() {
            "(document)".into()
        } else {
            clean(&e.pointer)
        };
        eprintln!("{what}[{}]: {pos}: at {ptr}: {}", e.code, clean(&e.message));
    }
}

fn cmd_check(path: &Path, json: bool, vars: &[(String, String)]) -> u8 {
    match check_flow_with(path, &vars.iter().cloned().collect()) {
        Ok((flow, text)) => {
            let warnings = flow_warnings(&flow, &text);
            if json {
                println!(
                    "{}",
                    serde_json::json!({"valid": true, "kind": flow.kind().as_str(), "steps": flow.steps.len(), "errors": [], "warnings": warnings})
                );
            } else {
                print_flow_problems(path, &warnings, "warning");
                let d = select::admission_driver(&drivers::all(), &flow)
                    .map(|d| d.id().to_string())
                    .unwrap_or_default();
                eprintln!(
                    "ok: {} is a valid {} flow with {} step(s) for {d}",
                    output::clean(&path.display().to_string()),
                    flow.kind().as_str(),
                    flow.steps.len()
                );
            }
            exit::PASSED
        }
        Err(errors) => {
            if json {
                println!("{}", serde_json::json!({"valid": false, "errors": errors}));
            } else {
                print_flow_errors(path, &errors);
            }
            exit::INVALID
        }
    }
}

async fn cmd_probe(path: &Path, json: bool, host: &HostArgs) -> u8 {
    let flow = match check_flow(path) {
        Ok((f, _)) => f,
        Err(errors) => {
            print_flow_errors(path, &errors);
            return exit::INVALID;
        }
    };
    let drivers = drivers::all();
    let Some(sel) = select::select(&drivers, &flow, &Host::current(), &host.options()).await else {
        eprintln!("error: no driver handles {} flows", flow.kind().as_str());
        return exit::INVALID;
    };
    let available = sel.probe.available();
    let handoff = (!available).then(|| qa_core::result::BlockedHandoff {
        backend: sel.selection.selected_backend,
        platform_driver: sel.selection.platform_driver.clone(),
        platform: sel.selection.platform,
        reason_code: qa_core::result::BlockedReasonCode::MissingCapability,
        missing_capabilities: sel.probe.missing.clone(),
        reason: sel.selection.why_selected.clone(),
        remediation: sel
            .probe
            .missing
            .iter()
            .map(|m| format!("{}: {}", m.id, m.remediation))
            .collect::<Vec<_>>()
            .join("\n"),
        manual_action_required: true,
        automatic_remediation_attempted: false,
    });
    let result = ProbeResult {
        status: if available {
            ProbeStatus::Available
        } else {
            ProbeStatus::Blocked
        },
        selection: sel.selection,
        blocked_handoff: handoff,
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&result).expect("json"));
    } else {
        output::print_probe(&result);
    }
    if available {
        exit::PASSED
    } else {
        exit::BLOCKED
    }
}

/// The flow files to run: files as given, directories expanded to their
/// `*.jsonc` and `*.json` files sorted by name (not recursive).
fn expand_flow_paths(given: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in given {
        if !p.is_dir() {
            out.push(p.clone());
            continue;
        }
        let entries = std::fs::read_dir(p).map_err(|e| format!("{}: {e}", p.display()))?;
        let mut found: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|f| f.is_file() && f.extension().is_some_and(|x| x == "jsonc" || x == "json"))
            .collect();
        if found.is_empty() {
            return Err(format!(
                "{} holds no flow files (*.jsonc, *.json)",
                p.display()
            ));
        }
        found.sort();
        out.extend(found);
    }
    Ok(out)
}

fn exit_for(r: &RunResult) -> u8 {
    if r.cancelled {
        exit::CANCELLED
    } else if r.timed_out {
        exit::TIMED_OUT
    } else {
        match r.status {
            RunStatus::Passed => exit::PASSED,
            RunStatus::Failed => exit::FAILED,
            RunStatus::Blocked => exit::BLOCKED,
        }
    }
}

fn severity(code: u8) -> u8 {
    match code {
        exit::CANCELLED => 5,
        exit::TIMED_OUT => 4,
        exit::FAILED => 3,
        exit::BLOCKED => 2,
        _ => 0,
    }
}

async fn cmd_run(args: &RunArgs) -> u8 {
    if let Some(id) = &args.run_id {
        if qa_core::evidence::check_name(id).is_err() || id.starts_with('.') || id == runs::LATEST {
            eprintln!("error: --run-id {id:?} must be a plain name (letters, digits, - _ .)");
            return exit::INVALID;
        }
    }
    let paths = match expand_flow_paths(&args.flows) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {}", output::clean(&e));
            return exit::INVALID;
        }
    };
    if args.run_id.is_some() && paths.len() > 1 {
        eprintln!("error: --run-id names one run; pass one flow or drop --run-id");
        return exit::INVALID;
    }
    let grep = match args.grep.as_deref().map(regex::Regex::new).transpose() {
        Ok(g) => g,
        Err(e) => {
            eprintln!("error: --grep is not a valid regular expression: {e}");
            return exit::INVALID;
        }
    };
    // Check every flow before launching anything.
    let vars: qa_core::flow::vars::Vars = args.vars.iter().cloned().collect();
    let mut flows = Vec::new();
    let mut invalid = false;
    for p in &paths {
        match check_flow_with(p, &vars) {
            Ok(f) => {
                if !args.quiet && !args.list {
                    print_flow_problems(p, &flow_warnings(&f.0, &f.1), "warning");
                }
                flows.push((p.clone(), f))
            }
            Err(errors) => {
                print_flow_errors(p, &errors);
                invalid = true;
            }
        }
    }
    if invalid {
        return exit::INVALID;
    }
    if let Some(g) = &grep {
        flows.retain(|(p, (f, _))| {
            g.is_match(&p.to_string_lossy()) || f.name.as_deref().is_some_and(|n| g.is_match(n))
        });
    }
    let secrets = Arc::new(Secrets::from_env());
    for name in &args.secret_env {
        match std::env::var(name) {
            Ok(v) => secrets.add(&v),
            Err(_) => {
                eprintln!("error: --secret-env {name}: that environment variable is not set");
                return exit::INVALID;
            }
        }
    }
    if let Some((i, n)) = args.shard {
        flows = flows
            .into_iter()
            .enumerate()
            .filter(|(k, _)| k % n == i - 1)
            .map(|(_, f)| f)
            .collect();
        if !args.quiet && !args.list {
            eprintln!("ui-qa: shard {i}/{n}: {} flow(s)", flows.len());
        }
    }
    if args.list {
        for (p, _) in &flows {
            println!("{}", output::clean_path(p));
        }
        return exit::PASSED;
    }
    let paint = output::Paint::for_stderr();
    let started = std::time::Instant::now();
    let drivers = drivers::all();
    let cancel = Cancel::new();
    // One process owner per run (so each run's cleanup report is its own);
    // the hard second Ctrl-C reaches all of them.
    let owners: Vec<Arc<qa_core::process::ProcessOwner>> = flows
        .iter()
        .map(|_| Arc::new(qa_core::process::ProcessOwner::new()))
        .collect();
    {
        let cancel = cancel.clone();
        let owners = owners.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("ui-qa: cancelling; cleanup is bounded. Press Ctrl-C again to end owned processes now.");
                cancel.cancel();
                if tokio::signal::ctrl_c().await.is_ok() {
                    eprintln!("ui-qa: ending owned processes now");
                    for o in &owners {
                        o.kill_all_now();
                    }
                }
            }
        });
    }
    let many = args.jobs > 1 && flows.len() > 1;
    let runs = flows
        .into_iter()
        .zip(owners)
        .map(|((path, (flow, text)), owner)| {
            let drivers = &drivers;
            let cancel = cancel.clone();
            let secrets = secrets.clone();
            async move {
                if cancel.is_cancelled() {
                    return None;
                }
                let sink = if args.quiet {
                    output::HumanProgress::off(&path)
                } else if many {
                    output::HumanProgress::buffered(&path, paint)
                } else {
                    output::HumanProgress::live(&path, paint)
                };
                let mut req = RunRequest::new(flow, text, args.workspace.clone());
                req.run_id = args.run_id.clone();
                req.timeout_ms = args.timeout_ms;
                req.options = args.host.options();
                req.options.video = args.video.map(RecordArg::mode);
                req.options.trace = args.trace.map(RecordArg::mode);
                req.secrets = secrets.clone();
                req.processes = owner;
                req.cancel = cancel;
                let r = runner::run(drivers, req, &sink).await;
                if let Ok(r) = &r {
                    if sink.enabled() {
                        // One write per flow: its progress (when kept) and
                        // its summary, never interleaved with another's.
                        let report = Path::new(&r.evidence_dir).join("report.html");
                        let report = report.is_file().then_some(report.as_path());
                        let summary = output::render_summary(&path, r, report, &secrets, paint);
                        eprint!("{}{summary}", sink.take());
                    }
                }
                Some((path, r))
            }
        });
    use futures_util::StreamExt;
    let finished: Vec<_> = futures_util::stream::iter(runs)
        .buffered(usize::from(args.jobs))
        .collect()
        .await;
    let mut results = Vec::new();
    let mut worst = exit::PASSED;
    let mut ran = Vec::new();
    for (path, r) in finished.into_iter().flatten() {
        match r {
            Ok(r) => {
                let code = exit_for(&r);
                if severity(code) > severity(worst) {
                    worst = code;
                }
                ran.push(path);
                results.push(r);
            }
            Err(e) => {
                eprintln!(
                    "error: {}: {}",
                    output::clean(&path.display().to_string()),
                    output::clean(&secrets.redact(&e.to_string()))
                );
                return exit::INVALID;
            }
        }
    }
    if let Some(last) = results.last() {
        let dir = Path::new(&last.evidence_dir);
        let _ = runs::mark_latest(dir);
        if let Some(runs_dir) = dir.parent() {
            runs::prune(runs_dir, args.keep_runs);
        }
    }
    // Several flows: one index report over their runs.
    let single = args.flows.len() == 1 && !args.flows[0].is_dir();
    let mut index = None;
    if !single && !results.is_empty() {
        let pairs: Vec<(PathBuf, &RunResult)> = ran.iter().cloned().zip(results.iter()).collect();
        match reports::write_run_index(&args.workspace, &pairs, &secrets) {
            Ok(p) => {
                runs::prune_reports(&args.workspace.join(reports::REPORTS_DIR), args.keep_runs);
                index = Some(p);
            }
            Err(e) => eprintln!(
                "ui-qa: the index report could not be written: {}",
                output::clean(&e.to_string())
            ),
        }
    }
    if (results.len() > 1 || index.is_some()) && !args.quiet {
        let runs: Vec<(String, &RunResult)> = ran
            .iter()
            .map(|p| output::clean_path(p))
            .zip(results.iter())
            .collect();
        eprint!(
            "{}",
            output::render_tally(
                &runs,
                Some(started.elapsed()),
                index.as_deref(),
                &secrets,
                paint
            )
        );
    }
    if let Some(j) = &args.junit {
        let sources: Vec<String> = ran.iter().map(|p| p.display().to_string()).collect();
        let pairs: Vec<(&str, &RunResult)> = sources
            .iter()
            .map(String::as_str)
            .zip(results.iter())
            .collect();
        let xml = secrets
            .redact(&qa_core::report::junit::render(&pairs))
            .into_owned();
        if let Err(e) = private::write_replacing(j, xml.as_bytes()) {
            eprintln!("error: cannot write --junit {}: {e}", j.display());
            return exit::INVALID;
        }
    }
    if args.json {
        // One flow given: the result document itself; several: an array
        // (even when a shard leaves one or none).
        // A directory gives an array, like several files.
        let out = if single && results.len() == 1 {
            serde_json::to_string_pretty(&results[0])
        } else {
            serde_json::to_string_pretty(&results)
        };
        println!("{}", secrets.redact(&out.expect("json")));
    }
    if cancel.is_cancelled() && worst != exit::CANCELLED {
        return exit::CANCELLED;
    }
    worst
}

fn cmd_guide(backend: &str, topic: Option<&str>) -> u8 {
    match guides::find(backend, topic) {
        Ok(g) if g.text.len() > guides::MAX_GUIDE_BYTES => {
            eprintln!("error: guide.too_large: the embedded guide exceeds its size bound");
            exit::INVALID
        }
        Ok(g) => {
            print!("{}", g.text);
            exit::PASSED
        }
        Err(e) => {
            eprintln!("error: {e}");
            if let guides::GuideError::UnknownTopic(_) | guides::GuideError::Traversal(_) = e {
                eprintln!(
                    "topics for {backend}: {}",
                    guides::topics(backend).join(", ")
                );
            }
            exit::INVALID
        }
    }
}

async fn cmd_capabilities(json: bool, host: &HostArgs) -> u8 {
    let report = drivers::capabilities(&host.options()).await;
    if json {
        println!("{}", serde_json::to_string_pretty(&report).expect("json"));
    } else {
        output::print_capabilities(&report);
    }
    exit::PASSED
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout (exit 0), usage errors to stderr
            // (exit 2); a closed stdout ends quietly like any other output.
            let printed = e.print().and_then(|()| {
                use std::io::Write;
                std::io::stdout().flush()
            });
            if printed.is_err() && !e.use_stderr() {
                return ExitCode::from(exit::STDOUT_CLOSED);
            }
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(exit::INVALID));
        }
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    // ui-qa starts every child through a run's ProcessOwner: whatever the
    // subreaper adopts is a run's, marker or not.
    qa_core::process::claim_unmarked_orphans(true);
    let code = rt.block_on(async {
        let code = match &cli.command {
            Command::Check { flow, json, vars } => cmd_check(flow, *json, vars),
            Command::Probe { flow, json, host } => cmd_probe(flow, *json, host).await,
            Command::Run(args) => cmd_run(args).await,
            Command::Guide { backend, topic } => cmd_guide(backend, topic.as_deref()),
            Command::Capabilities { json, host } => cmd_capabilities(*json, host).await,
            Command::Report(args) => reports::command::run(args),
            Command::Auth(args) => auth::run(args),
            Command::Mcp { args, host } => mcp::run(args, host.options()).await,
            Command::Inspect {
                url,
                json,
                app,
                host,
                command,
            } => inspect::run(url.as_deref(), command, *app, *json, host.options()).await,
            Command::Schema { name } => {
                match name {
                    SchemaName::Flow => print!("{}", qa_core::schema::flow_schema_json()),
                    SchemaName::Result => print!("{}", qa_core::schema::result_schema_json()),
                    SchemaName::Auth => print!("{}", qa_core::schema::auth_schema_json()),
                }
                exit::PASSED
            }
        };
        // Nothing of ours outlives the command: unattributed orphans ended,
        // zombies collected, the watchdog stopped and collected.
        let ended = qa_core::process::shutdown(
            qa_core::process::DEFAULT_GRACE,
            qa_core::Deadline::after_ms(10_000),
        )
        .await;
        if !ended.ended.is_empty() || !ended.left.is_empty() {
            output::print_shutdown(&ended);
        }
        code
    });
    rt.shutdown_timeout(std::time::Duration::from_secs(2));
    if console::has_failed() {
        return ExitCode::from(exit::STDOUT_CLOSED);
    }
    ExitCode::from(code)
}
