//! `ui-qa report DIR… [--output DIR] [--json]`: arguments, the merge, and
//! what is printed. The exit code is the one `ui-qa run` would have given
//! over the same runs (the most severe: 130, 124, 1, 3, else 0); 2 when
//! there is nothing to merge or the output cannot be written.

use super::merge::{merge, Merged};
use crate::output;
use clap::Args;
use qa_core::result::{RunResult, RunStatus};
use qa_core::secrets::Secrets;
use std::path::PathBuf;

/// Arguments of `ui-qa report`.
#[derive(Args)]
pub struct ReportArgs {
    /// Folders to search for runs (`result.json`): a run directory, a
    /// workspace's `runs/`, or downloaded CI artifacts. Searched up to 8
    /// levels deep; symlinks inside are never followed.
    #[arg(required = true, value_name = "DIR")]
    dirs: Vec<PathBuf>,
    /// Where to write `index.html`, `junit.xml` and a copy of each run
    /// (`runs/<run-id>/`). Must be new, empty, or an earlier report's
    /// folder (which is replaced).
    #[arg(long, value_name = "DIR", default_value = "ui-qa-report")]
    output: PathBuf,
    /// Print a summary document as JSON on stdout.
    #[arg(long)]
    json: bool,
}

/// Runs `ui-qa report`.
pub fn run(args: &ReportArgs) -> u8 {
    let secrets = Secrets::from_env();
    let merged = match merge(&args.dirs, &args.output, &secrets) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {}", output::clean(&e.to_string()));
            return crate::exit::INVALID;
        }
    };
    for s in &merged.skipped {
        eprintln!(
            "warning: skipped {}: {}",
            output::clean_path(&s.path),
            output::clean(&s.reason)
        );
    }
    for d in &merged.duplicates {
        eprintln!(
            "note: {} is the same run as {}; merged once",
            output::clean_path(&d.path),
            output::clean_path(&d.same_as)
        );
    }
    if let Some(why) = &merged.truncated {
        eprintln!(
            "warning: stopped searching early ({}); some runs may be missing",
            output::clean(why)
        );
    }
    let mut worst = crate::exit::PASSED;
    for m in &merged.runs {
        let code = crate::exit::exit_for(&m.result);
        if crate::exit::severity(code) > crate::exit::severity(worst) {
            worst = code;
        }
    }
    let runs: Vec<(String, &RunResult)> = merged
        .runs
        .iter()
        .map(|m| {
            (
                qa_runner::report::run_title(&m.result).to_string(),
                &m.result,
            )
        })
        .collect();
    eprint!(
        "{}",
        output::render_tally(
            &runs,
            None,
            Some(&merged.index),
            &secrets,
            output::Paint::for_stderr()
        )
    );
    eprintln!("  junit: {}", output::clean_path(&merged.junit));
    if args.json {
        println!("{}", secrets.redact(&summary(&merged, worst).to_string()));
    }
    worst
}

/// The `--json` summary document.
fn summary(m: &Merged, code: u8) -> serde_json::Value {
    let count = |s: RunStatus| m.runs.iter().filter(|r| r.result.status == s).count();
    let status = if count(RunStatus::Failed) > 0 {
        RunStatus::Failed
    } else if count(RunStatus::Blocked) > 0 {
        RunStatus::Blocked
    } else {
        RunStatus::Passed
    };
    serde_json::json!({
        "status": status.as_str(),
        "exitCode": code,
        "runs": m.runs.len(),
        "passed": count(RunStatus::Passed),
        "failed": count(RunStatus::Failed),
        "blocked": count(RunStatus::Blocked),
        "index": m.index.display().to_string(),
        "indexUri": qa_core::evidence::file_uri(&m.index),
        "junit": m.junit.display().to_string(),
        "results": m.runs.iter().map(|r| serde_json::json!({
            "runId": r.result.run_id,
            "flowName": r.result.flow_name,
            "status": r.result.status.as_str(),
            "durationMs": r.result.duration_ms,
            "foundAt": r.found.display().to_string(),
            "dir": format!("runs/{}", r.dir_name),
            "report": r.has_report.then(|| format!("runs/{}/report.html", r.dir_name)),
        })).collect::<Vec<_>>(),
        "duplicates": m.duplicates.iter().map(|d| serde_json::json!({
            "path": d.path.display().to_string(),
            "sameAs": d.same_as.display().to_string(),
        })).collect::<Vec<_>>(),
        "skipped": m.skipped.iter().map(|s| serde_json::json!({
            "path": s.path.display().to_string(),
            "reason": s.reason,
        })).collect::<Vec<_>>(),
    })
}
