//! `ui-qa run`: check every flow, then run them (in shards, in parallel)
//! and report each and all of them.

use super::check::{check_flow, print_flow_errors, print_flow_problems};
use crate::cli::{RecordArg, RunArgs};
use crate::{drivers, exit, output, private, reports, runs};
use qa_core::result::RunResult;
use qa_core::secrets::Secrets;
use qa_runner::runner::{Cancel, RunRequest};
use qa_runner::select;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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

/// `ui-qa run`.
pub(crate) async fn run(args: &RunArgs) -> u8 {
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
        match check_flow(p, &vars) {
            Ok(f) if args.strict && !f.0.checks_anything() => {
                let refused = qa_core::flow::no_assertion(&f.0)
                    .map(|e| e.with_position(&f.1))
                    .into_iter()
                    .collect::<Vec<_>>();
                print_flow_errors(p, &refused);
                invalid = true;
            }
            Ok(f) => {
                if !args.quiet && !args.list {
                    print_flow_problems(p, &select::warnings(&f.0, &f.1), "warning");
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
            Ok(v) => secrets.add_from(&v, name),
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
    let workspace = match &args.workspace {
        Some(w) => w.clone(),
        None => match flows.first() {
            Some((_, (f, _))) => match project_workspace(&f.base_dir, args.quiet) {
                Ok(w) => w,
                Err(e) => {
                    eprintln!("error: {}", output::clean(&e.to_string()));
                    return exit::INVALID;
                }
            },
            None => PathBuf::from(".ui-qa"),
        },
    };
    let workspace = &workspace;
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
                let mut req = RunRequest::new(flow, text, workspace.clone());
                req.run_id = args.run_id.clone();
                req.timeout_ms = args.timeout_ms;
                req.options = args.host.options();
                req.options.video = args.video.map(RecordArg::mode);
                req.options.trace = args.trace.map(RecordArg::mode);
                req.secrets = secrets.clone();
                req.processes = owner;
                req.cancel = cancel;
                let r = qa_runner::runner::run(drivers, req, &sink).await;
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
                let code = exit::exit_for(&r);
                if exit::severity(code) > exit::severity(worst) {
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
        match reports::write_run_index(workspace, &pairs, &secrets) {
            Ok(p) => {
                runs::prune_reports(&workspace.join(reports::REPORTS_DIR), args.keep_runs);
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
            .redact(&qa_runner::report::junit::render(&pairs))
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

/// The default workspace: `.ui-qa` in the project of the flow in
/// `base_dir` (`qa_core::flow::project_root`), so evidence never creates a
/// `.ui-qa` above the project that would widen which directories its flows
/// may reach. When the project is only the flow's own directory (no `.git`
/// or `.ui-qa` above it) and `.ui-qa` does not exist yet, the note says
/// that flows below it now treat that directory as their project.
///
/// A project root or `.ui-qa` of another user, or a `.ui-qa` that is a
/// symlink, is refused (`qa_core::evidence::default_workspace`): another
/// user's directory is never adopted as the place for evidence.
fn project_workspace(
    base_dir: &Path,
    quiet: bool,
) -> Result<PathBuf, qa_core::evidence::EvidenceError> {
    let base = base_dir
        .canonicalize()
        .unwrap_or_else(|_| base_dir.to_path_buf());
    let root = qa_core::flow::project_root(&base);
    let ws = qa_core::evidence::default_workspace(&root)?;
    if !quiet && !ws.exists() && !root.join(".git").exists() {
        eprintln!(
            "ui-qa: evidence goes to {} (new); flows in {} and below now take it as their project root (pass --workspace DIR to keep evidence elsewhere)",
            output::clean_path(&ws),
            output::clean_path(&root)
        );
    }
    Ok(ws)
}
