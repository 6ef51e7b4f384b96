//! Node packages the tests run: a remote browser service (browserless) the
//! remote-browser tests start on loopback. Each fixture directory holds a
//! `package.json` and its `package-lock.json`; its packages are installed
//! once per lockfile (`npm ci`, no install scripts, no browser downloads)
//! into the user's cache, and `node_modules` in the fixture directory links
//! there. A changed lockfile installs anew; an unchanged one costs nothing.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Fixture directories under `tests/fixtures/` with their packages, and why
/// the tests need them.
const FIXTURES: &[(&str, &str)] = &[(
    "browserless",
    "remote browser service tests (browserless 2.x on loopback)",
)];

/// The cache every install goes to: `$XDG_CACHE_HOME/ui-qa-test-deps`, or
/// `~/.cache/ui-qa-test-deps`.
pub fn cache() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("ui-qa-test-deps"))
}

/// FNV-1a (64 bit) of `bytes`, as hex: the lockfile's key in the cache.
pub fn key(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Installs every fixture's packages that are not in the cache yet and
/// links them. `false` (with a message) when one cannot be installed.
pub fn install(root: &Path) -> bool {
    let Some(cache) = cache() else {
        eprintln!("xtask deps: neither XDG_CACHE_HOME nor HOME is set; cannot install the test's Node packages");
        return false;
    };
    FIXTURES
        .iter()
        .all(|(name, why)| one(root, &cache, name, why))
}

fn one(root: &Path, cache: &Path, name: &str, why: &str) -> bool {
    let dir = root.join("tests/fixtures").join(name);
    let lock = match std::fs::read(dir.join("package-lock.json")) {
        Ok(b) => b,
        Err(e) => {
            eprintln!(
                "xtask deps: {}: {e}",
                dir.join("package-lock.json").display()
            );
            return false;
        }
    };
    let dest = cache.join(format!("{name}-{}", key(&lock)));
    let done = dest.join(".installed");
    if !done.exists() {
        eprintln!(
            "xtask deps: installing the Node packages of tests/fixtures/{name} ({why}) into {}",
            dest.display()
        );
        let work = cache.join(format!(".{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&work);
        let copied = std::fs::create_dir_all(&work).is_ok()
            && ["package.json", "package-lock.json"]
                .iter()
                .all(|f| std::fs::copy(dir.join(f), work.join(f)).is_ok());
        let ok = copied
            && Command::new("npm")
                .args([
                    "ci",
                    "--no-audit",
                    "--no-fund",
                    "--ignore-scripts",
                    "--loglevel=error",
                ])
                .current_dir(&work)
                .env("PUPPETEER_SKIP_DOWNLOAD", "1")
                .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
                .status()
                .map(|s| s.success())
                .unwrap_or(false);
        if !ok {
            let _ = std::fs::remove_dir_all(&work);
            eprintln!("xtask deps: npm ci failed for tests/fixtures/{name}; Node.js and npm are needed (apt-get install -y nodejs npm)");
            return false;
        }
        let _ = std::fs::remove_dir_all(&dest);
        if std::fs::rename(&work, &dest).is_err() || std::fs::write(&done, b"").is_err() {
            eprintln!(
                "xtask deps: cannot move the install into {}",
                dest.display()
            );
            return false;
        }
    }
    let link = dir.join("node_modules");
    let target = dest.join("node_modules");
    if std::fs::read_link(&link).ok().as_deref() != Some(target.as_path()) {
        let _ = std::fs::remove_file(&link);
        #[cfg(unix)]
        if let Err(e) = std::os::unix::fs::symlink(&target, &link) {
            eprintln!("xtask deps: cannot link {}: {e}", link.display());
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_key_follows_every_byte_of_the_lockfile() {
        assert_eq!(super::key(b""), "cbf29ce484222325");
        assert_ne!(super::key(b"{\"a\":1}"), super::key(b"{\"a\":2}"));
    }
}
