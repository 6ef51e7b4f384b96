//! Reports besides each run's own `report.html` (which the runner writes):
//! the index after `ui-qa run` with several flows
//! (`<workspace>/reports/<id>/index.html`), and the folder `ui-qa report`
//! merges runs into ([`merge`]). The pages are rendered by
//! `qa_runner::report`; this module decides where they go and writes them
//! privately.

pub mod command;
mod find;
pub mod merge;

use crate::private;
use qa_core::result::RunResult;
use qa_core::secrets::Secrets;
use qa_runner::report::{render_index, IndexEntry};
use std::path::{Path, PathBuf};

/// The folder of index reports in a workspace.
pub const REPORTS_DIR: &str = "reports";

/// Whether `dir` holds a regular `name` (not a symlink).
fn has_file(dir: &Path, name: &str) -> bool {
    std::fs::symlink_metadata(dir.join(name)).is_ok_and(|m| m.file_type().is_file())
}

/// Writes the index of one `ui-qa run` over several flows to
/// `<workspace>/reports/<id>/index.html` (directories 0700, file 0600,
/// never through a symlink) and answers its path. Each run's row links to
/// its `report.html` (or, when the run has none, its `result.json`)
/// relative to the index, so the workspace can be moved or uploaded whole.
pub fn write_run_index(
    workspace: &Path,
    runs: &[(PathBuf, &RunResult)],
    secrets: &Secrets,
) -> std::io::Result<PathBuf> {
    let reports = std::path::absolute(workspace)?.join(REPORTS_DIR);
    private::ensure_dir(&reports)?;
    let mut attempt = 0;
    let (id, dir) = loop {
        let id = qa_runner::runner::new_run_id();
        let dir = reports.join(&id);
        match private::create_dir(&dir) {
            Ok(()) => break (id, dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 5 => {
                attempt += 1;
            }
            Err(e) => return Err(e),
        }
    };
    let entries: Vec<IndexEntry<'_>> = runs
        .iter()
        .map(|(flow, r)| {
            let run_dir = Path::new(&r.evidence_dir);
            let link = |file: &str| {
                let name = run_dir.file_name()?.to_str()?;
                if !has_file(run_dir, file) {
                    return None;
                }
                qa_runner::report::html::relative_href(["runs", name, file])
                    .map(|h| format!("../../{h}"))
            };
            IndexEntry {
                result: r,
                source: flow.display().to_string(),
                report_href: link("report.html"),
                result_href: link("result.json"),
            }
        })
        .collect();
    let title = format!("{} flows · {id}", runs.len());
    let html = render_index(&title, &entries);
    let path = dir.join("index.html");
    private::write_new(&path, secrets.redact(&html).as_bytes())?;
    Ok(path)
}
