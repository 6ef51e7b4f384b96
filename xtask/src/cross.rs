//! `cargo xtask cross-check`: type-check and lint every crate for Windows
//! and macOS on this Linux host.
//!
//! rustup here has the Linux target only, and no network reaches its
//! servers. Debian's `rustc-web` toolchain (rustc, cargo and clippy at
//! `/usr/bin`, beside rustup's, which stays first on `PATH`) with
//! `rust-web-src` (the standard library's sources) builds `std` for any
//! target with `-Zbuild-std`, an unstable flag enabled by
//! `RUSTC_BOOTSTRAP=1`. `check` and `clippy` need no linker and no SDK.
//! Why this way, and what it cannot catch: `docs/decisions/0006-cross-check.md`.
//!
//! Every crate's libraries and binaries are checked. Tests are checked for
//! the crates in [`TEST_CRATES`] only — the platform drivers' real-surface
//! tests: other crates' test dev-dependencies (`insta` → `pest` → `psm`)
//! run a C assembler for the target, which this host does not have.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The targets every crate must type-check and lint clean for.
/// Both macOS architectures: Apple silicon and the Intel Macs and
/// `macos-13` runners that remain.
pub const TARGETS: &[&str] = &[
    "x86_64-pc-windows-msvc",
    "aarch64-apple-darwin",
    "x86_64-apple-darwin",
];

/// Crates whose test code (unit and integration tests) is type-checked and
/// linted for each target too: the real-surface tests only that
/// platform's CI job runs.
pub const TEST_CRATES: &[(&str, &[&str])] = &[
    (
        "x86_64-pc-windows-msvc",
        &["qa-windows", "qa-tui", "qa-web"],
    ),
    // qa-macos's real-surface tests (TextEdit, Calculator); its
    // dev-dependencies pull no snapshot crate, so no assembler runs.
    ("aarch64-apple-darwin", &["qa-macos"]),
    ("x86_64-apple-darwin", &["qa-macos"]),
];

/// What one clippy run covers.
#[derive(Debug, Clone, Copy)]
enum Scope {
    /// Every crate's libraries and binaries.
    Workspace,
    /// These crates' tests.
    Tests(&'static [&'static str]),
}

/// Debian packages of the toolchain the check uses, with what each is for.
pub const PACKAGES: &[(&str, &str)] = &[
    (
        "rustc-web",
        "cross-check (rustc that builds std for any target)",
    ),
    ("cargo-web", "cross-check (its cargo, for -Zbuild-std)"),
    (
        "rust-web-src",
        "cross-check (the standard library's sources)",
    ),
    ("rust-web-clippy", "cross-check (clippy for that rustc)"),
];

/// The toolchain's programs.
const CARGO: &str = "/usr/bin/cargo";
const CARGO_CLIPPY: &str = "/usr/bin/cargo-clippy";
const RUSTC: &str = "/usr/bin/rustc";

/// Where the check builds: beside the normal build, never in it.
fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
        .join("cross")
}

/// The clippy command for `target` over `scope`.
fn clippy(root: &Path, target: &str, scope: Scope) -> Command {
    let mut c = Command::new(CARGO_CLIPPY);
    // Debian's programs first, so cargo-clippy runs Debian's cargo and
    // clippy-driver (rustup's would look for its own std sources).
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![PathBuf::from("/usr/bin")];
    dirs.extend(std::env::split_paths(&path));
    c.current_dir(root)
        .env("PATH", std::env::join_paths(dirs).unwrap_or(path))
        .env("CARGO", CARGO)
        .env("RUSTC", RUSTC)
        .env("RUSTC_BOOTSTRAP", "1")
        .env_remove("RUSTC_WRAPPER")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .args(["clippy", "-Zbuild-std=std,panic_abort", "--target", target])
        .arg("--target-dir")
        .arg(target_dir(root));
    match scope {
        Scope::Workspace => {
            // xtask and its bench helper run on the development host only.
            c.args([
                "--workspace",
                "--exclude",
                "xtask",
                "--exclude",
                "zbus-walk",
            ]);
        }
        Scope::Tests(crates) => {
            for p in crates {
                c.args(["-p", p]);
            }
            c.arg("--tests");
        }
    }
    c.args(["--keep-going", "--", "-D", "warnings"]);
    c
}

/// Installs the toolchain when missing, then checks every target; false
/// when a target fails (every target is checked either way).
pub fn check(root: &Path) -> bool {
    if !super::install(PACKAGES, "cross-check") {
        return false;
    }
    for p in [CARGO, CARGO_CLIPPY, RUSTC] {
        if !Path::new(p).exists() {
            eprintln!("xtask cross-check: {p} is missing after the install; install by hand: apt-get install -y rustc-web cargo-web rust-web-src rust-web-clippy");
            return false;
        }
    }
    let mut failed = Vec::new();
    for t in TARGETS {
        let started = std::time::Instant::now();
        let mut ok = super::run(&mut clippy(root, t, Scope::Workspace));
        let tests: Vec<&'static [&'static str]> = TEST_CRATES
            .iter()
            .filter(|(target, _)| target == t)
            .map(|(_, crates)| *crates)
            .collect();
        for crates in &tests {
            ok &= super::run(&mut clippy(root, t, Scope::Tests(crates)));
        }
        let with_tests = tests
            .iter()
            .flat_map(|c| c.iter())
            .copied()
            .collect::<Vec<_>>()
            .join(", ");
        eprintln!(
            "xtask cross-check: {t}: {}{} in {:.0} s",
            if ok { "clean" } else { "FAILED" },
            if with_tests.is_empty() {
                String::new()
            } else {
                format!(" (with the tests of {with_tests})")
            },
            started.elapsed().as_secs_f64()
        );
        if !ok {
            failed.push(*t);
        }
    }
    if failed.is_empty() {
        eprintln!(
            "xtask cross-check: every crate type-checks and lints clean for {}",
            TARGETS.join(", ")
        );
        true
    } else {
        eprintln!(
            "xtask cross-check: failed for {} (the errors are above; each names the file and line)",
            failed.join(", ")
        );
        false
    }
}
