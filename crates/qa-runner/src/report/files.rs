//! The artifact files a run report reads: where an artifact lives inside
//! the run directory, its link, and its bytes (bounded, never through a
//! symlink, and only when they still have the digest the result names).

use crate::report::html::relative_href;
use qa_core::evidence::Artifact;
use qa_core::result::RunResult;
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// An artifact placed in its run directory.
pub(crate) struct Placed<'a> {
    /// The artifact as the result names it.
    pub artifact: &'a Artifact,
    /// Its path relative to the run directory (`artifacts/videos/x.webm`).
    pub rel: PathBuf,
    /// Its relative link from a page in the run directory.
    pub href: String,
    /// Its file name.
    pub name: String,
}

impl Placed<'_> {
    /// Whether the file name ends with `.ext` (any case).
    pub fn has_ext(&self, ext: &str) -> bool {
        Path::new(&self.name)
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case(ext))
    }
}

/// Where `a` lives inside the run directory of `r`: its path relative to
/// `evidenceDir`, made only of plain components. `None` for an artifact
/// outside the run directory (it is then listed, never read or linked).
pub(crate) fn place<'a>(r: &RunResult, a: &'a Artifact) -> Option<Placed<'a>> {
    let rel = Path::new(&a.path)
        .strip_prefix(Path::new(&r.evidence_dir))
        .ok()?;
    let mut segs = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(s) => segs.push(s.to_str()?),
            _ => return None,
        }
    }
    let name = (*segs.last()?).to_string();
    let href = relative_href(segs.iter().copied())?;
    Some(Placed {
        artifact: a,
        rel: rel.to_path_buf(),
        href,
        name,
    })
}

/// The file name of an artifact, for listing one that cannot be placed.
pub(crate) fn file_name(a: &Artifact) -> String {
    Path::new(&a.path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| a.path.clone())
}

/// Why an artifact's bytes are not in the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unread {
    /// Larger than the bound.
    TooLarge,
    /// Missing, unreadable, not a regular file, or reached through a
    /// symlink.
    Unreadable,
    /// Its bytes no longer have the digest the result names.
    Changed,
}

impl Unread {
    /// Why, in a few words for the page.
    pub fn says(self) -> &'static str {
        match self {
            Unread::TooLarge => "too large to embed; open the file",
            Unread::Unreadable => "the file could not be read",
            Unread::Changed => "the file changed after the run; not shown",
        }
    }
}

/// The bytes of a placed artifact under `run_dir`, when it is at most `max`
/// bytes, a regular file reached through no symlink, and still has the
/// SHA-256 the result names.
pub(crate) fn read(run_dir: &Path, p: &Placed<'_>, max: u64) -> Result<Vec<u8>, Unread> {
    if p.artifact.bytes > max {
        return Err(Unread::TooLarge);
    }
    // No component below the run directory may be a symlink.
    let mut at = run_dir.to_path_buf();
    for c in p.rel.components() {
        at.push(c);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if !m.file_type().is_symlink() => {}
            _ => return Err(Unread::Unreadable),
        }
    }
    let f = open_no_follow(&at).map_err(|_| Unread::Unreadable)?;
    match f.metadata() {
        Ok(m) if m.is_file() => {}
        _ => return Err(Unread::Unreadable),
    }
    let mut bytes = Vec::new();
    f.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|_| Unread::Unreadable)?;
    if bytes.len() as u64 > max {
        return Err(Unread::TooLarge);
    }
    if hex::encode(Sha256::digest(&bytes)) != p.artifact.sha256.to_ascii_lowercase() {
        return Err(Unread::Changed);
    }
    Ok(bytes)
}

fn open_no_follow(p: &Path) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    o.open(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn artifact(path: &str, bytes: &[u8]) -> Artifact {
        Artifact {
            group: None,
            path: path.into(),
            uri: String::new(),
            bytes: bytes.len() as u64,
            sha256: hex::encode(Sha256::digest(bytes)),
            step: None,
            started_ms: None,
            holds: Vec::new(),
        }
    }

    fn result_at(dir: &Path) -> RunResult {
        let mut v: serde_json::Value =
            serde_json::from_str(crate::report::MINIMAL_RESULT).expect("minimal result");
        v["evidenceDir"] = serde_json::json!(dir.display().to_string());
        serde_json::from_value(v).expect("result")
    }

    #[test]
    fn artifacts_are_placed_inside_the_run_directory_only() {
        let r = result_at(Path::new("/ws/runs/r1"));
        let a = artifact("/ws/runs/r1/artifacts/screenshots/a b.png", b"x");
        let p = place(&r, &a).expect("placed");
        assert_eq!(p.href, "artifacts/screenshots/a%20b.png");
        assert_eq!(p.name, "a b.png");
        assert!(p.has_ext("PNG"));
        for outside in [
            "/ws/runs/r2/artifacts/x.png",
            "/ws/runs/r1/../r2/x.png",
            "/etc/passwd",
        ] {
            assert!(place(&r, &artifact(outside, b"x")).is_none(), "{outside}");
        }
    }

    #[test]
    fn reads_are_bounded_verified_and_never_follow_symlinks() {
        let t = tempfile::tempdir().unwrap();
        let run = t.path().join("r1");
        std::fs::create_dir_all(run.join("artifacts/screenshots")).unwrap();
        std::fs::write(run.join("artifacts/screenshots/a.png"), b"hello").unwrap();
        let r = result_at(&run);
        let ok = artifact(
            &format!("{}/artifacts/screenshots/a.png", run.display()),
            b"hello",
        );
        let p = place(&r, &ok).unwrap();
        assert_eq!(read(&run, &p, 10).unwrap(), b"hello");
        assert_eq!(read(&run, &p, 4), Err(Unread::TooLarge));

        let changed = artifact(&ok.path, b"other");
        let p = place(&r, &changed).unwrap();
        assert_eq!(read(&run, &p, 10), Err(Unread::Changed));

        #[cfg(unix)]
        {
            std::fs::write(t.path().join("secret.txt"), b"hello").unwrap();
            std::os::unix::fs::symlink(
                t.path().join("secret.txt"),
                run.join("artifacts/screenshots/link.png"),
            )
            .unwrap();
            let link = artifact(
                &format!("{}/artifacts/screenshots/link.png", run.display()),
                b"hello",
            );
            let p = place(&r, &link).unwrap();
            assert_eq!(read(&run, &p, 10), Err(Unread::Unreadable));
            // A symlinked directory on the way is refused too.
            std::fs::create_dir(t.path().join("elsewhere")).unwrap();
            std::fs::write(t.path().join("elsewhere/a.png"), b"hello").unwrap();
            std::os::unix::fs::symlink(t.path().join("elsewhere"), run.join("artifacts/logs"))
                .unwrap();
            let via = artifact(&format!("{}/artifacts/logs/a.png", run.display()), b"hello");
            let p = place(&r, &via).unwrap();
            assert_eq!(read(&run, &p, 10), Err(Unread::Unreadable));
        }
    }
}
