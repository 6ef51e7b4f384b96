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
//! Every crate's libraries, binaries and test code (unit and integration
//! tests) are checked, in one clippy run per target. No test dev-dependency
//! may run a C compiler or assembler for the target (this host has none for
//! Windows or macOS): `insta`'s `redactions` feature, which pulls `pest` →
//! `stacker` → `psm`, is not used for that reason.

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

/// `program` of Debian's toolchain, run in `root` with that toolchain's
/// environment: Debian's programs first on `PATH`, so cargo-clippy runs
/// Debian's cargo and clippy-driver (rustup's would look for its own std
/// sources), and `RUSTC_BOOTSTRAP` for `-Zbuild-std`.
fn debian(program: &str, root: &Path) -> Command {
    let mut c = Command::new(program);
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![PathBuf::from("/usr/bin")];
    dirs.extend(std::env::split_paths(&path));
    c.current_dir(root)
        .env("PATH", std::env::join_paths(dirs).unwrap_or(path))
        .env("CARGO", CARGO)
        .env("RUSTC", RUSTC)
        .env("RUSTC_BOOTSTRAP", "1")
        .env_remove("RUSTC_WRAPPER")
        .env_remove("RUSTC_WORKSPACE_WRAPPER");
    c
}

/// Every crate and all its targets (tests included) but the host-only ones:
/// xtask and its bench helper run on the development host only.
pub const EVERY_CRATE_FOR_A_TARGET: &[&str] = &[
    "--workspace",
    "--exclude",
    "xtask",
    "--exclude",
    "zbus-walk",
    "--all-targets",
];

/// Debian's cargo in `root`, able to build `std` for any target
/// (`cargo xtask wine` links with it).
pub fn debian_cargo(root: &Path) -> Command {
    debian(CARGO, root)
}

/// The clippy command for `target`: every crate but the host-only ones,
/// with its tests.
fn clippy(root: &Path, target: &str) -> Command {
    let mut c = debian(CARGO_CLIPPY, root);
    c.args(["clippy", "-Zbuild-std=std,panic_abort", "--target", target])
        .arg("--target-dir")
        .arg(target_dir(root));
    c.args(EVERY_CRATE_FOR_A_TARGET);
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
        let ok = super::run(&mut clippy(root, t));
        eprintln!(
            "xtask cross-check: {t}: {} (libraries, binaries and tests) in {:.0} s",
            if ok { "clean" } else { "FAILED" },
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
