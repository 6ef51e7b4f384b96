//! Finding run results under the folders given to `ui-qa report`: a run
//! directory, a `runs/` directory, a workspace or a downloaded CI artifact
//! folder. The walk is bounded in depth and size and never follows a
//! symlink below the folder given.

use std::path::{Path, PathBuf};

/// Directories below a given folder searched at most.
pub const MAX_DEPTH: usize = 8;

/// Directory entries looked at, at most, per folder given.
pub const MAX_ENTRIES: usize = 200_000;

/// Results found, at most, over all folders.
pub const MAX_RESULTS: usize = 10_000;

/// What the walk found.
#[derive(Debug, Default)]
pub struct Found {
    /// Every `result.json` found (regular files), in walk order: by name
    /// at each level.
    pub results: Vec<PathBuf>,
    /// Why the walk stopped early, when it did.
    pub truncated: Option<String>,
}

/// Walks `dir` for `result.json` files. A directory holding one is a run
/// directory and is not searched further (its artifacts hold no runs).
/// Symlinks below `dir` are skipped; `skip` (the output folder, when it is
/// inside `dir`) is not entered.
pub fn find_results(dir: &Path, skip: Option<&Path>, found: &mut Found) {
    let mut seen = 0usize;
    walk(dir, 0, skip, &mut seen, found);
}

fn walk(dir: &Path, depth: usize, skip: Option<&Path>, seen: &mut usize, found: &mut Found) {
    if found.truncated.is_some() {
        return;
    }
    if skip.is_some_and(|s| dir.canonicalize().is_ok_and(|d| d == s)) {
        return;
    }
    let here = dir.join("result.json");
    if std::fs::symlink_metadata(&here).is_ok_and(|m| m.file_type().is_file()) {
        if found.results.len() >= MAX_RESULTS {
            found.truncated = Some(format!("more than {MAX_RESULTS} results"));
            return;
        }
        found.results.push(here);
        return;
    }
    if depth >= MAX_DEPTH {
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut dirs = Vec::new();
    for e in rd.flatten() {
        *seen += 1;
        if *seen > MAX_ENTRIES {
            found.truncated = Some(format!(
                "{} holds more than {MAX_ENTRIES} entries",
                dir.display()
            ));
            return;
        }
        // `file_type` of a directory entry does not follow symlinks.
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            dirs.push(e.path());
        }
    }
    dirs.sort();
    for d in dirs {
        walk(&d, depth + 1, skip, seen, found);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_runs_at_any_depth_without_following_symlinks() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        let put = |rel: &str| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "{}").unwrap();
        };
        put("shard-1/runs/a/result.json");
        put("shard-1/runs/a/artifacts/x/result.json"); // inside a run: not searched
        put("shard-2/.ui-qa/runs/b/result.json");
        put("c/result.json");
        std::fs::create_dir_all(root.join("elsewhere/runs/z")).unwrap();
        std::fs::write(root.join("elsewhere/runs/z/result.json"), "{}").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(root.join("elsewhere"), root.join("shard-1/link")).unwrap();
        let mut found = Found::default();
        find_results(&root.join("shard-1"), None, &mut found);
        find_results(&root.join("shard-2"), None, &mut found);
        find_results(&root.join("c"), None, &mut found);
        let rel: Vec<String> = found
            .results
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().display().to_string())
            .collect();
        assert_eq!(
            rel,
            [
                "shard-1/runs/a/result.json",
                "shard-2/.ui-qa/runs/b/result.json",
                "c/result.json"
            ]
        );
        assert!(found.truncated.is_none());

        let mut skipping = Found::default();
        let skip = root.join("shard-2").canonicalize().unwrap();
        find_results(root, Some(&skip), &mut skipping);
        assert!(skipping
            .results
            .iter()
            .all(|p| !p.starts_with(root.join("shard-2"))));
        assert_eq!(skipping.results.len(), 3, "{:?}", skipping.results);
    }
}
