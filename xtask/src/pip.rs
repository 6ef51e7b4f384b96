//! Native programs the tests run that only PyPI ships here: a CEF runtime
//! with its sample browser (`cefsimple`), for the tests of apps that embed
//! Chromium. Each fixture directory holds a `requirements.txt` with one
//! pinned, hashed wheel; the wheel is downloaded once per that file (`pip
//! download --require-hashes`, nothing of it installed or run), the folder
//! named below is unpacked into the user's cache with its modes made
//! owner-writable only (the wheel stores them 0777), and `runtime` in the
//! fixture directory links there.

use crate::fixture_cache;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Fixture directories under `tests/fixtures/`, the folder of their wheel
/// that is unpacked, and why the tests need it.
const FIXTURES: &[(&str, &str, &str)] = &[(
    "cef",
    "cef_capi/runtime",
    "tests of apps that embed Chromium (CEF 131's cefsimple)",
)];

/// Downloads and unpacks every fixture that is not in the cache yet, and
/// links it. `false` (with a message) when one cannot be installed.
pub fn install(root: &Path) -> bool {
    let Some(cache) = fixture_cache::cache() else {
        eprintln!("xtask deps: neither XDG_CACHE_HOME nor HOME is set; cannot install the tests' PyPI fixtures");
        return false;
    };
    FIXTURES
        .iter()
        .all(|(name, folder, why)| one(root, &cache, name, folder, why))
}

fn one(root: &Path, cache: &Path, name: &str, folder: &str, why: &str) -> bool {
    let dir = root.join("tests/fixtures").join(name);
    let req = dir.join("requirements.txt");
    let pinned = match std::fs::read(&req) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("xtask deps: {}: {e}", req.display());
            return false;
        }
    };
    let what = format!("the PyPI fixture tests/fixtures/{name} ({why})");
    let dest = fixture_cache::install_once(cache, name, &pinned, &what, |work| {
        let wheels = work.join("wheels");
        let ok = std::fs::create_dir_all(&wheels).is_ok()
            && crate::run(
                Command::new("/usr/bin/python3")
                    .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:"])
                    .args(["--require-hashes", "--disable-pip-version-check", "-q"])
                    .arg("-r")
                    .arg(&req)
                    .arg("-d")
                    .arg(&wheels),
            )
            && unpack(&wheels, work, folder);
        let _ = std::fs::remove_dir_all(&wheels);
        ok
    });
    let Some(dest) = dest else {
        eprintln!("xtask deps: could not install tests/fixtures/{name}; Debian's python3-pip and unzip are needed (apt-get install -y python3-pip unzip)");
        return false;
    };
    fixture_cache::link(&dir.join("runtime"), &dest.join(folder))
}

/// Unpacks `folder` of the one wheel in `wheels` into `into`, then makes
/// every entry writable by its owner only.
fn unpack(wheels: &Path, into: &Path, folder: &str) -> bool {
    let Some(wheel) = std::fs::read_dir(wheels).ok().and_then(|d| {
        d.flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "whl"))
    }) else {
        eprintln!(
            "xtask deps: pip downloaded no wheel into {}",
            wheels.display()
        );
        return false;
    };
    crate::run(
        Command::new("unzip")
            .args(["-q", "-o"])
            .arg(&wheel)
            .arg(format!("{folder}/*"))
            .arg("-d")
            .arg(into),
    ) && restrict(&into.join(folder))
}

/// Removes group and other write permission under `p` (symlinks are left
/// alone).
fn restrict(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let Ok(meta) = std::fs::symlink_metadata(p) else {
            return false;
        };
        if meta.file_type().is_symlink() {
            return true;
        }
        let mode = meta.permissions().mode() & 0o755;
        if std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).is_err() {
            return false;
        }
        if meta.is_dir() {
            let entries: Vec<PathBuf> = match std::fs::read_dir(p) {
                Ok(d) => d.flatten().map(|e| e.path()).collect(),
                Err(_) => return false,
            };
            return entries.iter().all(|e| restrict(e));
        }
        true
    }
    #[cfg(not(unix))]
    {
        let _ = p;
        true
    }
}
