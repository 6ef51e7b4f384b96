//! `ui-qa report DIR… --output OUT`: finds every run result under the
//! folders given (CI shards, downloaded artifacts, a workspace), copies
//! each run into `OUT/runs/<run-id>/` (its `result.json` and artifacts; a
//! run id seen twice gets `-2`, `-3`, …), and writes one `OUT/index.html`
//! and one `OUT/junit.xml` over all of them. The very same run found twice
//! (same id, same result bytes) is merged once. The folder works as is:
//! opened locally or uploaded as one CI artifact.
//!
//! A downloaded run is not trusted: no HTML (or SVG, XML) file of it is
//! ever copied — anyone could have put a script in one — and each run's
//! `report.html` is written anew from its `result.json` and the artifacts
//! whose digests match it, as the runner wrote it.

use super::find::{find_results, Found};
use crate::private;
use qa_core::result::RunResult;
use qa_core::secrets::Secrets;
use qa_runner::report::{junit, render_index, run_title, IndexEntry};
use std::collections::hash_map::{Entry, HashMap};
use std::collections::HashSet;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::io;
use std::path::{Path, PathBuf};

/// The file that marks a folder as written by `ui-qa report`; only such a
/// folder (or an empty one) is ever replaced.
pub const MARKER: &str = ".ui-qa-report";

/// A `result.json` larger than this is not read.
pub const MAX_RESULT_BYTES: u64 = 16 << 20;

/// Files copied per run at most (a run holds far fewer).
const MAX_FILES_PER_RUN: usize = 10_000;

/// Nesting copied inside a run directory at most (`artifacts/<group>/<file>`).
const MAX_COPY_DEPTH: usize = 4;

/// One run in the merged folder.
#[derive(Debug)]
pub struct MergedRun {
    /// The result document.
    pub result: RunResult,
    /// Where its `result.json` was found.
    pub found: PathBuf,
    /// Its directory name under `OUT/runs/`.
    pub dir_name: String,
    /// Whether it has a `report.html` (a run whose report held a secret
    /// has none).
    pub has_report: bool,
}

/// A result file that was not merged, and why.
#[derive(Debug)]
pub struct Skipped {
    /// The file.
    pub path: PathBuf,
    /// Why.
    pub reason: String,
}

/// A result file that is the very same run as one already merged (same
/// run id, same bytes).
#[derive(Debug)]
pub struct Duplicate {
    /// The file left out.
    pub path: PathBuf,
    /// The file merged.
    pub same_as: PathBuf,
}

/// What `ui-qa report` wrote.
#[derive(Debug)]
pub struct Merged {
    /// The runs, ordered by start time.
    pub runs: Vec<MergedRun>,
    /// Result files that could not be read.
    pub skipped: Vec<Skipped>,
    /// Result files of a run already merged from elsewhere.
    pub duplicates: Vec<Duplicate>,
    /// Why the search stopped early, when it did.
    pub truncated: Option<String>,
    /// `OUT/index.html` (absolute).
    pub index: PathBuf,
    /// `OUT/junit.xml` (absolute).
    pub junit: PathBuf,
}

/// Why nothing could be merged (exit 2).
#[derive(Debug)]
pub enum MergeError {
    /// A folder given does not exist or is not a directory.
    NotADirectory(PathBuf),
    /// No result was found (or none could be read).
    NothingFound,
    /// The output folder is unusable (not empty and not a report, inside
    /// an input folder's run, a symlink…).
    Output(String),
    /// Writing failed.
    Io(PathBuf, io::Error),
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MergeError::NotADirectory(p) => write!(f, "{} is not a directory", p.display()),
            MergeError::NothingFound => write!(
                f,
                "no readable result.json under the folders given; pass run directories, a runs/ folder or downloaded CI artifacts"
            ),
            MergeError::Output(why) => f.write_str(why),
            MergeError::Io(p, e) => write!(f, "{}: {e}", p.display()),
        }
    }
}

/// Finds, copies and writes; see the module documentation.
pub fn merge(dirs: &[PathBuf], output: &Path, secrets: &Secrets) -> Result<Merged, MergeError> {
    for d in dirs {
        if !d.is_dir() {
            return Err(MergeError::NotADirectory(d.clone()));
        }
    }
    let output = absolute(output);
    // Checked first, cleared only once there is something to write.
    prepare_output(&output, dirs, false)?;
    let skip = output.canonicalize().ok();
    let mut found = Found::default();
    for d in dirs {
        find_results(d, skip.as_deref(), &mut found);
    }
    let mut skipped = Vec::new();
    let mut duplicates = Vec::new();
    let mut read: Vec<(PathBuf, RunResult)> = Vec::new();
    // The same run found twice (one artifact downloaded twice, a `latest`
    // link an upload turned into a folder) is merged once.
    let mut seen: HashMap<(String, u64), PathBuf> = HashMap::new();
    for path in found.results {
        match read_result(&path) {
            Ok((r, digest)) => match seen.entry((r.run_id.clone(), digest)) {
                Entry::Occupied(first) => duplicates.push(Duplicate {
                    path,
                    same_as: first.get().clone(),
                }),
                Entry::Vacant(slot) => {
                    slot.insert(path.clone());
                    read.push((path, r));
                }
            },
            Err(reason) => skipped.push(Skipped { path, reason }),
        }
    }
    if read.is_empty() {
        return Err(MergeError::NothingFound);
    }
    prepare_output(&output, dirs, true)?;
    read.sort_by(|a, b| {
        (&a.1.started_at, &a.1.run_id, &a.0).cmp(&(&b.1.started_at, &b.1.run_id, &b.0))
    });

    let io_at = |p: &Path| {
        let p = p.to_path_buf();
        move |e| MergeError::Io(p, e)
    };
    private::ensure_dir(&output).map_err(io_at(&output))?;
    let runs_out = output.join("runs");
    private::ensure_dir(&runs_out).map_err(io_at(&runs_out))?;
    let mut used = HashSet::new();
    let mut runs = Vec::new();
    for (found, result) in read {
        let base = if qa_core::evidence::check_name(&result.run_id).is_ok() {
            result.run_id.clone()
        } else {
            "run".to_string()
        };
        let mut dir_name = base.clone();
        let mut n = 1;
        while !used.insert(dir_name.clone()) {
            n += 1;
            dir_name = format!("{base}-{n}");
        }
        let src = found.parent().unwrap_or(Path::new(".")).to_path_buf();
        let dst = runs_out.join(&dir_name);
        private::create_dir(&dst).map_err(io_at(&dst))?;
        let mut budget = MAX_FILES_PER_RUN;
        copy_tree(&src, &dst, 0, &mut budget).map_err(io_at(&src))?;
        // The run had a report (none when it held a secret): ours replaces
        // it, built from the result and the verified artifacts.
        let report = dst.join("report.html");
        let has_report = super::has_file(&src, "report.html")
            && qa_runner::report::render_run_redacted(&result, &dst, secrets)
                .is_ok_and(|c| private::write_new(&report, c.html.as_bytes()).is_ok());
        runs.push(MergedRun {
            result,
            found,
            dir_name,
            has_report,
        });
    }

    let entries: Vec<IndexEntry<'_>> = runs
        .iter()
        .map(|m| {
            let href =
                |file: &str| qa_runner::report::html::relative_href(["runs", &m.dir_name, file]);
            IndexEntry {
                result: &m.result,
                source: m
                    .found
                    .parent()
                    .unwrap_or(Path::new("."))
                    .display()
                    .to_string(),
                report_href: m.has_report.then(|| href("report.html")).flatten(),
                result_href: href("result.json"),
            }
        })
        .collect();
    let title = format!("{} runs", runs.len());
    let index = output.join("index.html");
    let html = render_index(&title, &entries);
    private::write_replacing(&index, secrets.redact(&html).as_bytes()).map_err(io_at(&index))?;
    let labels: Vec<(&str, &RunResult)> = runs
        .iter()
        .map(|m| (run_title(&m.result), &m.result))
        .collect();
    let junit = output.join("junit.xml");
    let xml = junit::render(&labels);
    private::write_replacing(&junit, secrets.redact(&xml).as_bytes()).map_err(io_at(&junit))?;
    let marker = output.join(MARKER);
    private::write_replacing(
        &marker,
        b"This folder was written by `ui-qa report`; running it again with this --output replaces it.\n",
    )
    .map_err(io_at(&marker))?;
    Ok(Merged {
        runs,
        skipped,
        duplicates,
        truncated: found.truncated,
        index,
        junit,
    })
}

/// `p` made absolute against the current directory (not resolved).
fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|c| c.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    }
}

/// Reads and parses one result document (bounded); answers it with a
/// digest of its bytes.
fn read_result(path: &Path) -> Result<(RunResult, u64), String> {
    use std::io::Read;
    let f = open_no_follow(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    f.take(MAX_RESULT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_RESULT_BYTES {
        return Err(format!("larger than {MAX_RESULT_BYTES} bytes"));
    }
    let r =
        serde_json::from_slice(&bytes).map_err(|e| format!("not a ui-qa result document: {e}"))?;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    Ok((r, h.finish()))
}

fn open_no_follow(p: &Path) -> io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    o.open(p)
}

/// Checks that `output` is missing, empty, or a folder an earlier `ui-qa
/// report` wrote; with `clear`, also makes it ready (its parents are
/// created; an earlier report's `runs/`, `index.html` and `junit.xml` are
/// removed). Refuses a symlink, a file, any other non-empty folder, and an
/// output that holds a folder being merged.
fn prepare_output(output: &Path, inputs: &[PathBuf], clear: bool) -> Result<(), MergeError> {
    let bad = |why: String| Err(MergeError::Output(why));
    match std::fs::symlink_metadata(output) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if !clear {
                return Ok(());
            }
            if let Some(parent) = output.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| MergeError::Io(parent.to_path_buf(), e))?;
            }
            return Ok(());
        }
        Err(e) => return Err(MergeError::Io(output.to_path_buf(), e)),
        Ok(m) if m.file_type().is_symlink() => {
            return bad(format!(
                "--output {} is a symlink; ui-qa never writes through one",
                output.display()
            ))
        }
        Ok(m) if !m.is_dir() => {
            return bad(format!(
                "--output {} exists and is not a directory",
                output.display()
            ))
        }
        Ok(_) => {}
    }
    if let Ok(out) = output.canonicalize() {
        for i in inputs {
            if let Ok(i) = i.canonicalize() {
                if i.starts_with(&out) {
                    return bad(format!(
                        "{} is inside --output {}; write the report somewhere else",
                        i.display(),
                        output.display()
                    ));
                }
            }
        }
    }
    let empty = std::fs::read_dir(output)
        .map_err(|e| MergeError::Io(output.to_path_buf(), e))?
        .next()
        .is_none();
    if empty {
        return Ok(());
    }
    if !super::has_file(output, MARKER) {
        return bad(format!(
            "--output {} is not empty and was not written by ui-qa report; choose a new folder",
            output.display()
        ));
    }
    if !clear {
        return Ok(());
    }
    let runs = output.join("runs");
    match std::fs::symlink_metadata(&runs) {
        Ok(m) if m.file_type().is_symlink() => {
            std::fs::remove_file(&runs).map_err(|e| MergeError::Io(runs.clone(), e))?
        }
        Ok(_) => std::fs::remove_dir_all(&runs).map_err(|e| MergeError::Io(runs.clone(), e))?,
        Err(_) => {}
    }
    for f in ["index.html", "junit.xml"] {
        let p = output.join(f);
        if std::fs::symlink_metadata(&p).is_ok() {
            std::fs::remove_file(&p).map_err(|e| MergeError::Io(p.clone(), e))?;
        }
    }
    Ok(())
}

/// Whether a file of a downloaded run could be active content in a browser
/// (never copied: the merged report writes its own pages).
fn active_content(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    [
        ".html", ".htm", ".xhtml", ".shtml", ".svg", ".svgz", ".xml", ".xsl", ".mht", ".mhtml",
    ]
    .iter()
    .any(|ext| lower.ends_with(ext))
}

/// Copies the regular files and directories of a run directory (never a
/// symlink, never its `work/` scratch, never a file that could be active
/// content) into the new directory `dst`.
fn copy_tree(src: &Path, dst: &Path, depth: usize, budget: &mut usize) -> io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(src)?.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name();
        let Some(name_str) = name.to_str() else {
            continue;
        };
        if qa_core::evidence::check_name(name_str).is_err()
            || (depth == 0 && name_str == "work")
            || active_content(name_str)
        {
            continue;
        }
        let Ok(t) = e.file_type() else { continue };
        let to = dst.join(&name);
        if t.is_dir() && depth < MAX_COPY_DEPTH {
            private::create_dir(&to)?;
            copy_tree(&e.path(), &to, depth + 1, budget)?;
        } else if t.is_file() {
            if *budget == 0 {
                return Ok(());
            }
            *budget -= 1;
            let mut from = open_no_follow(&e.path())?;
            if !from.metadata()?.is_file() {
                continue;
            }
            let mut out = qa_core::evidence::create_private_file(&to).map_err(io::Error::other)?;
            io::copy(&mut from, &mut out)?;
        }
    }
    Ok(())
}
