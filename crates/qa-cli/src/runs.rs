//! The workspace's run directories after a command: `runs/latest` points at
//! the last run, and only the newest runs (and index reports) are kept.

use std::path::Path;

/// Runs kept by default (`--keep-runs`).
pub const DEFAULT_KEEP: usize = 50;

/// The name of the link to the last run.
pub const LATEST: &str = "latest";

/// Whether `name` is a run id ui-qa made itself (`YYYYMMDD-HHMMSS-xxxxxx`):
/// only those are ever pruned; runs named with `--run-id` are kept.
fn generated_id(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() == 22
        && b[..8].iter().all(u8::is_ascii_digit)
        && b[8] == b'-'
        && b[9..15].iter().all(u8::is_ascii_digit)
        && b[15] == b'-'
        && b[16..]
            .iter()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
}

/// Points `runs/latest` at `run_dir` (a relative symlink, replaced
/// atomically). Unix only: creating a symlink on Windows needs a privilege
/// most accounts lack, so there is no `latest` link there.
#[cfg(not(unix))]
pub fn mark_latest(_run_dir: &Path) -> std::io::Result<()> {
    Ok(())
}

/// Points `runs/latest` at `run_dir` (a relative symlink, replaced
/// atomically).
#[cfg(unix)]
pub fn mark_latest(run_dir: &Path) -> std::io::Result<()> {
    let (Some(runs), Some(name)) = (run_dir.parent(), run_dir.file_name()) else {
        return Ok(());
    };
    let tmp = runs.join(format!(".latest-{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(name, &tmp)?;
    std::fs::rename(&tmp, runs.join(LATEST))
}

/// Removes the oldest finished runs with generated ids beyond the newest
/// `keep` (0 keeps every run). A run counts as finished when it holds a
/// regular `result.json`; symlinks and anything else are left alone.
/// Answers the names removed.
pub fn prune(runs: &Path, keep: usize) -> Vec<String> {
    prune_finished(runs, keep, "result.json")
}

/// Removes the oldest index reports (`<workspace>/reports/<id>/`, with a
/// generated id and a regular `index.html`) beyond the newest `keep` (0
/// keeps every one). Answers the names removed.
pub fn prune_reports(reports: &Path, keep: usize) -> Vec<String> {
    prune_finished(reports, keep, "index.html")
}

/// Removes the oldest directories of `dir` with generated ids that hold a
/// regular file `marker`, beyond the newest `keep`.
fn prune_finished(dir: &Path, keep: usize, marker: &str) -> Vec<String> {
    let runs = dir;
    if keep == 0 {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir(runs) else {
        return Vec::new();
    };
    let mut finished: Vec<String> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| generated_id(n))
        .filter(|n| {
            std::fs::symlink_metadata(runs.join(n).join(marker))
                .is_ok_and(|m| m.file_type().is_file())
        })
        .collect();
    finished.sort();
    let excess = finished.len().saturating_sub(keep);
    finished
        .into_iter()
        .take(excess)
        .filter(|n| std::fs::remove_dir_all(runs.join(n)).is_ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(runs: &Path, name: &str, finished: bool) {
        std::fs::create_dir_all(runs.join(name)).unwrap();
        if finished {
            std::fs::write(runs.join(name).join("result.json"), "{}").unwrap();
        }
    }

    #[test]
    fn only_the_oldest_finished_generated_runs_go() {
        let t = tempfile::tempdir().unwrap();
        let runs = t.path();
        run(runs, "20261201-100000-aaaaaa", true);
        run(runs, "20261201-110000-bbbbbb", false); // unfinished: kept
        run(runs, "20261202-100000-cccccc", true);
        run(runs, "20261203-100000-dddddd", true);
        run(runs, "my-named-run", true); // --run-id: kept
        std::fs::write(runs.join("notes.txt"), "x").unwrap();
        let removed = prune(runs, 2);
        assert_eq!(removed, ["20261201-100000-aaaaaa"]);
        assert!(runs.join("20261201-110000-bbbbbb").exists());
        assert!(runs.join("my-named-run").exists());
        assert!(runs.join("notes.txt").exists());
        assert!(prune(runs, 0).is_empty(), "0 keeps everything");
        mark_latest(&runs.join("20261203-100000-dddddd")).unwrap();
        mark_latest(&runs.join("my-named-run")).unwrap();
        assert_eq!(
            std::fs::read_link(runs.join(LATEST)).unwrap(),
            Path::new("my-named-run")
        );
        assert!(runs.join(LATEST).join("result.json").is_file());
    }

    #[test]
    fn generated_ids_are_recognized() {
        assert!(generated_id("20261203-123110-b63f6f"));
        assert!(!generated_id("20261203-123110-b63f6g"));
        assert!(!generated_id("latest"));
        assert!(!generated_id("../../etc"));
    }
}
