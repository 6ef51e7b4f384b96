//! Node packages the tests run: a remote browser service (browserless) the
//! remote-browser tests start on loopback. Each fixture directory holds a
//! `package.json` and its `package-lock.json`; its packages are installed
//! once per lockfile (`npm ci`, no install scripts, no browser downloads)
//! into the user's cache (`fixture_cache`), and `node_modules` in the
//! fixture directory links there. A changed lockfile installs anew; an
//! unchanged one costs nothing.

use crate::fixture_cache;
use std::path::Path;
use std::process::Command;

/// Fixture directories under `tests/fixtures/` with their packages, and why
/// the tests need them.
const FIXTURES: &[(&str, &str)] = &[(
    "browserless",
    "remote browser service tests (browserless 2.x on loopback)",
)];

/// Installs every fixture's packages that are not in the cache yet and
/// links them. `false` (with a message) when one cannot be installed.
pub fn install(root: &Path) -> bool {
    let Some(cache) = fixture_cache::cache() else {
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
    let what = format!("the Node packages of tests/fixtures/{name} ({why})");
    let dest = fixture_cache::install_once(cache, name, &lock, &what, |work| {
        ["package.json", "package-lock.json"]
            .iter()
            .all(|f| std::fs::copy(dir.join(f), work.join(f)).is_ok())
            && Command::new("npm")
                .args([
                    "ci",
                    "--no-audit",
                    "--no-fund",
                    "--ignore-scripts",
                    "--loglevel=error",
                ])
                .current_dir(work)
                .env("PUPPETEER_SKIP_DOWNLOAD", "1")
                .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
                .status()
                .map(|s| s.success())
                .unwrap_or(false)
    });
    let Some(dest) = dest else {
        eprintln!("xtask deps: npm ci failed for tests/fixtures/{name}; Node.js and npm are needed (apt-get install -y nodejs npm)");
        return false;
    };
    fixture_cache::link(&dir.join("node_modules"), &dest.join("node_modules"))
}
