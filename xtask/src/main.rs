//! `cargo xtask` — project chores in Rust, the same commands for people and CI.
//!
//! - `cargo xtask deps`     install the Debian packages the tests need (idempotent)
//! - `cargo xtask schemas`  regenerate `schemas/*.schema.json` from the Rust types
//! - `cargo xtask test`     `deps`, then build and run the whole test suite
//!   (`--repeat N`: run it N times and list every test that failed in any run)
//! - `cargo xtask ci`       `test` plus formatting and clippy checks
//! - `cargo xtask deny`     `cargo deny check bans licenses sources`
//! - `cargo xtask cross-check` type-check and lint every crate for
//!   `x86_64-pc-windows-msvc`, `aarch64-apple-darwin` and `x86_64-apple-darwin` (see `cross.rs`)
//! - `cargo xtask wine`     link every crate and its tests for
//!   `x86_64-pc-windows-gnu` and run under Wine what can run there (see `wine.rs`)
//! - `cargo xtask bench`    ui-qa and peer tools side by side, interleaved
//!   over rounds: `bench [web|tui|desktop|all] [--rounds N]` (medians and
//!   the ratio of ui-qa to the fastest peer; see `bench/mod.rs`)

mod bench;
mod cross;
mod fixture_cache;
mod imports;
mod npm;
mod pip;
mod repeat;
mod wine;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// Debian packages the test suite needs, with what each is for.
const DEBIAN_PACKAGES: &[(&str, &str)] = &[
    (
        "libssl-dev",
        "building qa-web (TLS to remote browsers: OpenSSL's headers)",
    ),
    ("pkg-config", "building qa-web (finds OpenSSL)"),
    ("chromium", "web driver tests (real Chromium)"),
    (
        "nodejs",
        "remote browser service tests (browserless runs on Node.js, installed with npm)",
    ),
    (
        "python3-pip",
        "tests of apps that embed Chromium (pip downloads the CEF runtime's wheel)",
    ),
    ("unzip", "tests of apps that embed Chromium (unpacks the CEF runtime)"),
    (
        "python3-pyqt5.qtwebengine",
        "tests of apps that embed Chromium (a Qt WebEngine app)",
    ),
    (
        "chromium-driver",
        "remote browser tests (chromedriver as a second browser service)",
    ),
    ("xvfb", "desktop tests (virtual X display)"),
    ("xauth", "desktop tests (Xvfb helpers)"),
    ("dbus", "desktop tests (private session bus)"),
    ("dbus-x11", "desktop tests (dbus-launch)"),
    (
        "at-spi2-core",
        "desktop tests (accessibility bus and registry)",
    ),
    ("gtk-3-examples", "desktop tests (gtk3-demo)"),
    ("gtk-4-examples", "desktop tests (gtk4-demo)"),
    ("zenity", "desktop tests (dialogs)"),
    ("gnome-calculator", "desktop tests (calculator)"),
    (
        "python3-gi",
        "desktop fixture app (GTK via Debian's python3)",
    ),
    ("gir1.2-gtk-3.0", "desktop fixture app (GTK 3 typelib)"),
    ("xterm", "native-terminal tests (the owned terminal window) and desktop tests (an app without AT-SPI)"),
    ("kitty", "native-terminal tests (a second terminal window provider)"),
    ("alacritty", "native-terminal tests (a third terminal window provider)"),
    (
        "qtbase5-examples",
        "desktop tests (a Qt 5 widgets calculator)",
    ),
    ("vim", "terminal tests (vim)"),
    (
        "nano",
        "terminal tests (nano: the replay and the native-terminal window video)",
    ),
    ("less", "terminal tests (less)"),
    ("htop", "terminal tests (htop)"),
    ("dialog", "terminal tests (dialog)"),
    ("python3", "terminal tests (python REPL)"),
    ("procps", "process tests (ps, pkill for diagnostics)"),
    (
        "fonts-dejavu-core",
        "readable text in Chromium and GTK screenshots",
    ),
    (
        "tesseract-ocr",
        "secret tests (OCR reads every published PNG)",
    ),
    ("tesseract-ocr-eng", "secret tests (English OCR model)"),
    (
        "ffmpeg",
        "video evidence (WebM encoding; ffprobe reads it in the tests)",
    ),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

fn run(cmd: &mut Command) -> bool {
    eprintln!("xtask: running {cmd:?}");
    match cmd.status() {
        Ok(s) => s.success(),
        Err(e) => {
            eprintln!("xtask: cannot run {cmd:?}: {e}");
            false
        }
    }
}

fn installed(pkg: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", pkg])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
        .unwrap_or(false)
}

fn deps() -> bool {
    install(DEBIAN_PACKAGES, "deps") && npm::install(&root()) && pip::install(&root())
}

/// Installs whichever of `packages` are missing (apt-get, as root); `who`
/// names the command in messages.
fn install(packages: &[(&str, &str)], who: &str) -> bool {
    let names: Vec<&str> = packages.iter().map(|(n, _)| *n).collect();
    if !Path::new("/usr/bin/dpkg-query").exists() {
        eprintln!("xtask {who}: this is not a Debian-based host; install the equivalents of:");
        for (n, why) in packages {
            eprintln!("  {n:20} {why}");
        }
        return true;
    }
    let missing: Vec<&str> = names.iter().copied().filter(|p| !installed(p)).collect();
    if missing.is_empty() {
        eprintln!(
            "xtask {who}: all {} Debian packages are installed",
            names.len()
        );
        return true;
    }
    eprintln!("xtask {who}: installing {}", missing.join(" "));
    // SAFETY-free check for root: apt-get needs it.
    let is_root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    if !is_root {
        eprintln!(
            "xtask {who}: not root; run: sudo apt-get install -y {}",
            missing.join(" ")
        );
        return false;
    }
    let ok = run(Command::new("apt-get").args(["update", "-qq"]))
        && run(Command::new("apt-get")
            .env("DEBIAN_FRONTEND", "noninteractive")
            .args(["install", "-y", "-qq", "--no-install-recommends"])
            .args(&missing));
    if !ok {
        eprintln!(
            "xtask {who}: install failed; run by hand: apt-get install -y {}",
            missing.join(" ")
        );
    }
    ok
}

fn schemas() -> bool {
    let dir = root().join("schemas");
    std::fs::create_dir_all(&dir).expect("schemas dir");
    let files = [
        ("flow.schema.json", qa_runner::schema::flow_schema_json()),
        (
            "result.schema.json",
            qa_runner::schema::result_schema_json(),
        ),
        ("auth.schema.json", qa_runner::schema::auth_schema_json()),
    ];
    for (name, text) in files {
        let p = dir.join(name);
        let old = std::fs::read_to_string(&p).unwrap_or_default();
        if old != text {
            std::fs::write(&p, text).expect("write schema");
            eprintln!("xtask schemas: wrote {}", p.display());
        } else {
            eprintln!("xtask schemas: {} is up to date", p.display());
        }
    }
    true
}

fn cargo() -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root());
    c
}

fn test(runs: Option<usize>) -> bool {
    if !deps() {
        return false;
    }
    // Build everything first (binaries the end-to-end tests run), then test.
    if !run(cargo().args(["build", "--workspace", "--all-targets"])) {
        return false;
    }
    if !embed() {
        return false;
    }
    let suite = match runs {
        None => run(cargo().args(["test", "--workspace", "--no-fail-fast"])),
        Some(n) => repeat::repeat(n, || {
            let mut c = cargo();
            c.args(["test", "--workspace", "--no-fail-fast"]);
            c
        }),
    };
    suite && attached()
}

/// The browser driver's containment, popup and secret suites again, each
/// flow pointed at a Chromium the tests started and ui-qa did not
/// (`target.browser.connect`; see `crates/qa-web/tests/common`).
fn attached() -> bool {
    eprintln!("xtask test: the containment, popup and secret suites against a browser ui-qa did not start");
    run(cargo()
        .args(["test", "-p", "qa-web", "--no-fail-fast"])
        .args([
            "--test",
            "containment",
            "--test",
            "popups",
            "--test",
            "secret_pixels",
        ])
        .env("UI_QA_TEST_ATTACH", "1"))
}

/// Builds `examples/embed` — a crate outside the workspace with the
/// dependency lines README.md gives — on its own and runs it: it must
/// print `PASSED`. Its lock is the workspace's (so it builds offline from
/// what the workspace fetched) and its artifacts go to the workspace's
/// target directory.
fn embed() -> bool {
    let dir = root().join("examples/embed");
    if let Err(e) = std::fs::copy(root().join("Cargo.lock"), dir.join("Cargo.lock")) {
        eprintln!("xtask: cannot copy Cargo.lock to {}: {e}", dir.display());
        return false;
    }
    let target = root().join("target");
    let mut build = cargo();
    build
        .args(["build", "--offline", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target);
    if !run(&mut build) {
        eprintln!("xtask: the embedding example does not build: README.md's dependency lines (examples/embed/Cargo.toml) are wrong");
        return false;
    }
    let exe = target.join("debug/embed-ui-qa");
    match Command::new(&exe).output() {
        Ok(o) if o.status.success() && String::from_utf8_lossy(&o.stdout).trim() == "PASSED" => {
            eprintln!("xtask: the embedding example built outside the workspace and PASSED");
            true
        }
        Ok(o) => {
            eprintln!(
                "xtask: {} did not print PASSED ({}): {}{}",
                exe.display(),
                o.status,
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            false
        }
        Err(e) => {
            eprintln!("xtask: cannot run {}: {e}", exe.display());
            false
        }
    }
}

/// `test [--repeat N]`.
fn test_args(args: &[String]) -> Result<Option<usize>, String> {
    match args {
        [] => Ok(None),
        [flag, n] if flag == "--repeat" => match n.parse::<usize>() {
            Ok(n) if n >= 1 => Ok(Some(n)),
            _ => Err(format!(
                "--repeat takes a whole number of runs (1 or more), not {n:?}"
            )),
        },
        _ => Err(format!(
            "unexpected arguments {args:?}; usage: cargo xtask test [--repeat N]"
        )),
    }
}

fn deny() -> bool {
    let have = Command::new("cargo-deny").arg("--version").output().is_ok();
    if !have {
        eprintln!(
            "xtask deny: cargo-deny is not installed; run: cargo install cargo-deny --locked"
        );
        return false;
    }
    // Advisories need the advisory database from the network; check it where that is reachable.
    run(cargo().args(["deny", "check", "bans", "licenses", "sources"]))
}

fn ci() -> bool {
    run(cargo().args(["fmt", "--all", "--", "--check"]))
        && imports::check(&root())
        && cross::check(&root())
        && run(cargo().args([
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ]))
        && test(None)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let ok = match args.first().map(String::as_str) {
        Some("deps") => deps(),
        Some("schemas") => schemas(),
        Some("test") => match test_args(&args[1..]) {
            Ok(r) => test(r),
            Err(e) => {
                eprintln!("xtask test: {e}");
                return ExitCode::from(2);
            }
        },
        Some("ci") => ci(),
        Some("deny") => deny(),
        Some("bench") => match bench::parse_args(&args[1..]) {
            Ok(opts) => bench::run(&opts),
            Err(e) => {
                eprintln!("xtask bench: {e}\n{}", bench::USAGE);
                return ExitCode::from(2);
            }
        },
        Some("imports") => imports::check(&root()),
        Some("cross-check") => cross::check(&root()),
        Some("wine") => wine::wine(&root()),
        _ => {
            eprintln!(
                "usage: cargo xtask <deps|schemas|test|ci|deny|bench|imports|cross-check|wine>\n\
                 \n  deps     install the Debian packages the tests need (idempotent)\
                 \n  schemas  regenerate schemas/*.schema.json from the Rust types\
                 \n  test     deps, then build and run the whole test suite\
                 \n           (--repeat N: N runs, then every test that failed in any)\
                 \n  ci       formatting, clippy, then test\
                 \n  deny     cargo-deny: licenses, bans, sources (deny.toml)\
                 \n  bench    ui-qa vs peer tools, interleaved rounds, medians and ratios\
                 \n           ([web|tui|desktop|all] [--rounds N]; default all, 3 rounds)\
                 \n  imports  fail on an import cycle between modules of any crate\
                 \n  cross-check  type-check and lint every crate for Windows and macOS\
                 \n           (installs Debian's rustc-web toolchain when missing)\
                 \n  wine     link every crate and its tests for x86_64-pc-windows-gnu and\
                 \n           run under Wine what runs there; list what runs only on Windows\
                 \n           (installs wine and mingw-w64 when missing)"
            );
            return ExitCode::from(2);
        }
    };
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
