//! `cargo xtask wine`: link every crate and its tests for Windows
//! (`x86_64-pc-windows-gnu`) and run under Wine what can run there.
//!
//! The build is cross-check's toolchain (Debian's `rustc-web` with
//! `-Zbuild-std`, see `cross.rs`) with mingw-w64 as the linker, in
//! `<target dir>/wine`. Wine runs in a private prefix cached outside the
//! clone (`$XDG_CACHE_HOME` or `~/.cache`, `ui-qa/wine-<version>`), so a
//! fresh clone reuses it. Wine 8.0 lacks `bcryptprimitives.dll`, whose
//! `ProcessPrng` Rust's standard library imports: a stand-in built here
//! from `STAND_IN_C` goes into the prefix's `system32`
//! (`docs/decisions/0008-wine.md`).
//!
//! Every test binary runs under Wine, except the tests in `WINDOWS_ONLY`
//! (Wine 8 lacks what they use: printed by name as "linked, runs only on
//! Windows") and the binaries in `NOT_WINDOWS_TESTS` (Linux tests that
//! link for Windows: printed with their counts). Neither is ever counted
//! as passed. Then `ui-qa.exe` runs `--version`, `--help`, `check` and a
//! `cmd.exe` terminal flow. A test that fails, a binary that does not load
//! or does not report every test, and a `ui-qa.exe` check that does not
//! hold fail the command, by name. Wine needs no display for any of it.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The target everything is linked for.
const TARGET: &str = "x86_64-pc-windows-gnu";

/// Debian packages Wine and the linker come from, with what each is for.
pub const PACKAGES: &[(&str, &str)] = &[
    ("wine64", "wine (runs the Windows test binaries)"),
    ("wine", "wine (the `wine` launcher, wineboot, wineserver)"),
    (
        "gcc-mingw-w64-x86-64",
        "wine (the linker for x86_64-pc-windows-gnu, and the stand-in DLL)",
    ),
    (
        "g++-mingw-w64-x86-64",
        "wine (mingw's C++ runtime for crates that build C++)",
    ),
];

/// The mingw-w64 C compiler, the target's linker.
const MINGW_GCC: &str = "x86_64-w64-mingw32-gcc";

/// Tests that link but run only on Windows, because Wine 8 lacks what
/// they use: by test binary, the tests (none named: every test of the
/// binary) and why. The `windows-2022` job of `.github/workflows/ci.yml`
/// runs them. Listed by name on every run, never counted as passed.
const WINDOWS_ONLY: &[(&str, &[&str], &str)] = &[
    (
        "qa-tui tests/conpty",
        &[],
        "ConPTY output: Wine 8 starts a headless conhost, the program runs and none of its output comes back; the PowerShell test also needs PowerShell, which Wine lacks",
    ),
    (
        "qa-windows tests/windows_desktop",
        &[
            "attaching_by_pid_never_signals_the_program",
            "fixture_check_box_list_typing_and_pointer_click",
            "notepad_types_opens_its_menu_and_saves_through_the_dialog",
            "windows_driver_keeps_the_contract",
        ],
        "UI Automation: Wine 8 provides no CUIAutomation (the driver answers desktop.host.missing); the WinForms fixture also needs PowerShell, which Wine lacks",
    ),
    (
        "qa-web tests/windows_browser",
        &[],
        "a Windows Chrome or Edge: the Wine prefix has none",
    ),
];

/// Test binaries that are not Windows tests, by label or label prefix
/// (ending in a space or `/`), and why: they link for Windows (so their
/// code builds there), run on Linux in `cargo xtask test`, and the
/// `windows-2022` job does not run them either. Listed with their test
/// counts on every run, never counted as passed.
const NOT_WINDOWS_TESTS: &[(&str, &str)] = &[
    (
        "qa-cli ",
        "ui-qa end to end and the CLI's unit tests: they start sh, python3, Xvfb and the host's Chromium, and compare Unix paths",
    ),
    (
        "qa-linux ",
        "the Linux desktop driver (AT-SPI, Xvfb)",
    ),
    (
        "qa-runner tests/runner",
        "the runner end to end; it compares artifact file names split at `/`",
    ),
    (
        "qa-web tests/",
        "the browser driver against the host's Chromium (under Wine, /usr/bin/chromium through drive Z:, a Linux program); tests/windows_browser is the Windows one",
    ),
];

/// Where a test binary belongs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    /// Run under Wine, skipping these Windows-only tests.
    Run(&'static [&'static str], Option<&'static str>),
    /// Every test is Windows-only.
    WindowsOnly(&'static str),
    /// Not a Windows test.
    NotWindows(&'static str),
}

fn plan(label: &str) -> Plan {
    if let Some((_, tests, why)) = WINDOWS_ONLY.iter().find(|(l, _, _)| *l == label) {
        return if tests.is_empty() {
            Plan::WindowsOnly(why)
        } else {
            Plan::Run(tests, Some(why))
        };
    }
    let matches =
        |p: &str| label == p || ((p.ends_with(' ') || p.ends_with('/')) && label.starts_with(p));
    match NOT_WINDOWS_TESTS.iter().find(|(p, _)| matches(p)) {
        Some((_, why)) => Plan::NotWindows(why),
        None => Plan::Run(&[], None),
    }
}

/// How long one test binary may run under Wine before it is ended.
const BINARY_DEADLINE: Duration = Duration::from_secs(300);

/// `bcryptprimitives.dll` for Wine 8.0: `ProcessPrng` (what Rust's std and
/// `getrandom` import) over advapi32's `SystemFunction036` (RtlGenRandom),
/// which Wine has. Real Windows and newer Wine have their own.
const STAND_IN_C: &str = r#"/* ui-qa `cargo xtask wine`: bcryptprimitives.dll for Wine 8.0, which lacks
   it. Rust's standard library imports ProcessPrng from it; this forwards to
   advapi32's SystemFunction036 (RtlGenRandom). Never used on Windows. */
#include <windows.h>

__declspec(dllimport) BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
"#;

/// The terminal flow `ui-qa.exe run` must pass under Wine. Its output
/// cannot be asserted (ConPTY output does not come back under Wine 8),
/// so it proves the launch on a pseudoconsole, the Job Object, the exit
/// code and cleanup.
const CMD_FLOW: &str = r#"// Written by `cargo xtask wine`: ui-qa.exe runs cmd.exe under Wine.
{
  "version": 1,
  "name": "wine: cmd.exe exits 7",
  "target": { "command": { "argv": ["cmd.exe", "/d", "/c", "exit 7"] } },
  "timeoutMs": 60000,
  "steps": [
    { "action": "assertProcessExited", "exitCode": 7 }
  ]
}
"#;

/// One linked test binary, from cargo's JSON messages.
#[derive(Debug, Clone, PartialEq, Eq)]
struct TestBinary {
    /// `<package> <kind>[/<name>]`, e.g. `qa-core lib`, `qa-tui tests/conpty`.
    label: String,
    /// The `.exe`.
    exe: PathBuf,
    /// The package's directory (cargo runs tests there).
    dir: PathBuf,
}

/// What became of one test binary.
#[derive(Debug, Default)]
struct Outcome {
    label: String,
    /// How many tests it has for Windows (`--list` under Wine).
    listed: usize,
    passed: usize,
    failed: Vec<String>,
    ignored: Vec<String>,
    /// Its tests that run only on Windows, and why.
    windows_only: Vec<String>,
    windows_only_why: Option<&'static str>,
    /// Why it is not a Windows test (its tests were not run).
    not_windows: Option<&'static str>,
    /// A problem other than failed tests (did not load, no result line,
    /// timed out, a stale list entry).
    broken: Option<String>,
}

/// What libtest printed for one run.
#[derive(Debug, Default, PartialEq, Eq)]
struct TestReport {
    passed: Vec<String>,
    failed: Vec<String>,
    ignored: Vec<String>,
    /// Whether the `test result:` line came.
    finished: bool,
}

/// Reads libtest's plain output (`test NAME ... ok|FAILED|ignored`).
fn parse_report(stdout: &str) -> TestReport {
    let mut r = TestReport::default();
    for line in stdout.lines() {
        let line = line.trim_end_matches('\r');
        if line.starts_with("test result: ") {
            r.finished = true;
            continue;
        }
        let Some(rest) = line.strip_prefix("test ") else {
            continue;
        };
        let Some((name, verdict)) = rest.rsplit_once(" ... ") else {
            continue;
        };
        let name = name.to_string();
        match verdict.trim() {
            "ok" => r.passed.push(name),
            "FAILED" => r.failed.push(name),
            v if v.starts_with("ignored") => r.ignored.push(name),
            _ => {}
        }
    }
    r
}

/// The test names `--list` printed (`NAME: test`).
fn parse_list(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter_map(|l| l.trim_end_matches('\r').strip_suffix(": test"))
        .map(str::to_string)
        .collect()
}

/// A package's name from its cargo package id: `path+file:///a/qa-core#0.1.0`
/// (the directory's name is the package's) or `…/dir#name@0.1.0`.
fn package_name(id: &str) -> String {
    let (url, frag) = id.rsplit_once('#').unwrap_or((id, ""));
    match frag.split_once('@') {
        Some((name, _)) => name.to_string(),
        None => url.rsplit('/').next().unwrap_or(url).to_string(),
    }
}

/// A binary's label from its target kind and name.
fn label(package: &str, kind: &str, name: &str) -> String {
    match kind {
        "test" => format!("{package} tests/{name}"),
        "bench" => format!("{package} benches/{name}"),
        "example" => format!("{package} examples/{name}"),
        "bin" => format!("{package} bin/{name}"),
        _ => format!("{package} lib"),
    }
}

/// What the build produced.
#[derive(Debug, Default)]
struct Built {
    tests: Vec<TestBinary>,
    ui_qa: Option<PathBuf>,
    /// Every other executable: binaries and examples.
    programs: Vec<String>,
}

/// Reads cargo's `--message-format=json` lines.
fn parse_artifacts(stdout: &str) -> Built {
    let mut b = Built::default();
    for line in stdout.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if v["reason"] != "compiler-artifact" {
            continue;
        }
        let Some(exe) = v["executable"].as_str() else {
            continue;
        };
        let package = package_name(v["package_id"].as_str().unwrap_or_default());
        let kind = v["target"]["kind"][0].as_str().unwrap_or_default();
        let name = v["target"]["name"].as_str().unwrap_or_default();
        let dir = v["manifest_path"]
            .as_str()
            .map(|p| {
                Path::new(p)
                    .parent()
                    .unwrap_or(Path::new("/"))
                    .to_path_buf()
            })
            .unwrap_or_default();
        if v["profile"]["test"] == true {
            b.tests.push(TestBinary {
                label: label(&package, kind, name),
                exe: PathBuf::from(exe),
                dir,
            });
        } else {
            if kind == "bin" && name == "ui-qa" {
                b.ui_qa = Some(PathBuf::from(exe));
            }
            b.programs.push(label(&package, kind, name));
        }
    }
    b.tests.sort_by(|a, b| a.label.cmp(&b.label));
    b.tests.dedup_by(|a, b| a.label == b.label);
    b.programs.sort();
    b.programs.dedup();
    b
}

/// Where the Windows build goes: beside the normal build, never in it.
fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
        .join("wine")
}

/// Links every crate but the host-only ones, with its tests, for `TARGET`.
fn build(root: &Path) -> Option<Built> {
    let mut c = super::cross::debian_cargo(root);
    c.env("CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER", MINGW_GCC)
        .args(["test", "--no-run", "--no-fail-fast"])
        .args(["-Zbuild-std=std,panic_abort", "--target", TARGET])
        .arg("--target-dir")
        .arg(target_dir(root))
        .args(crate::cross::EVERY_CRATE_FOR_A_TARGET)
        .arg("--message-format=json-render-diagnostics")
        .stdout(Stdio::piped());
    eprintln!("xtask wine: linking every crate and its tests for {TARGET} (cold, std and every dependency are built: 8 minutes measured on 2 cores, up to 28 while other builds share them; warm, seconds)");
    eprintln!("xtask wine: running {c:?}");
    let started = Instant::now();
    let out = match c.spawn().and_then(|child| child.wait_with_output()) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("xtask wine: cannot run cargo: {e}");
            return None;
        }
    };
    let built = parse_artifacts(&String::from_utf8_lossy(&out.stdout));
    if !out.status.success() {
        eprintln!("xtask wine: the build for {TARGET} FAILED (errors above; each names the crate and file)");
        return None;
    }
    eprintln!(
        "xtask wine: linked {} test binaries and {} other program(s) ({}) in {:.0} s",
        built.tests.len(),
        built.programs.len(),
        built.programs.join(", "),
        started.elapsed().as_secs_f64()
    );
    Some(built)
}

/// The private Wine prefix and the environment every Wine command gets.
struct Wine {
    prefix: PathBuf,
}

impl Wine {
    fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        c.env("WINEPREFIX", &self.prefix)
            .env("WINEDEBUG", "-all")
            .env("WINEARCH", "win64")
            // Console programs need no display; none is used, so the
            // result does not depend on the host having one.
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY");
        c
    }

    /// `wine <exe> <args>` in `dir`.
    fn run(&self, exe: &Path, args: &[&str], dir: &Path) -> Command {
        let mut c = self.command("wine");
        c.arg(exe).args(args).current_dir(dir);
        c
    }

    /// Starts the prefix's server and its services with no pipe of ours:
    /// a server or service started by a captured command inherits that
    /// command's pipes and holds them open until it exits, seconds later.
    /// The server stays up while any program runs and 60 s after.
    fn start(&self) {
        let quiet = |c: &mut Command| {
            let _ = c
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        };
        quiet(self.command("wineserver").arg("-p60"));
        quiet(self.command("wine").args(["cmd.exe", "/c", "exit"]));
    }

    /// Ends every process of the prefix (after a deadline, and at the end).
    fn kill_all(&self) {
        let _ = self.command("wineserver").arg("-k").status();
    }
}

/// `wine-8.0` from `wine-8.0 (Debian 8.0~repack-4)`.
fn wine_version() -> Option<String> {
    let out = Command::new("wine")
        .arg("--version")
        .env("WINEDEBUG", "-all")
        .output()
        .ok()?;
    let v = String::from_utf8_lossy(&out.stdout);
    let v = v.split_whitespace().next()?;
    v.chars()
        .all(|c| c.is_ascii_alphanumeric() || "-._".contains(c))
        .then(|| v.to_string())
}

/// The cache directory for prefixes: `$XDG_CACHE_HOME/ui-qa` or `~/.cache/ui-qa`.
fn cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("ui-qa"))
}

/// Creates the prefix when missing (`wineboot -i`) and installs the
/// stand-in `bcryptprimitives.dll` when Wine has none; both are cached.
fn prefix() -> Option<Wine> {
    let version = wine_version().or_else(|| {
        eprintln!("xtask wine: `wine --version` did not answer; is Debian's wine installed?");
        None
    })?;
    let cache = cache_dir().or_else(|| {
        eprintln!(
            "xtask wine: neither XDG_CACHE_HOME nor HOME is set: nowhere to keep the Wine prefix"
        );
        None
    })?;
    let wine = Wine {
        prefix: cache.join(&version),
    };
    let system32 = wine.prefix.join("drive_c/windows/system32");
    let booted = wine.prefix.join("ui-qa-booted");
    if booted.exists() {
        eprintln!(
            "xtask wine: Wine prefix {} ({version}, cached)",
            wine.prefix.display()
        );
    } else {
        eprintln!(
            "xtask wine: creating the Wine prefix {} (wineboot -i, no display)",
            wine.prefix.display()
        );
        if let Err(e) = std::fs::create_dir_all(&wine.prefix) {
            eprintln!("xtask wine: cannot create {}: {e}", wine.prefix.display());
            return None;
        }
        let started = Instant::now();
        let mut boot = wine.command("wineboot");
        // No Mono or Gecko installer: nothing here needs them.
        boot.arg("-i").env("WINEDLLOVERRIDES", "mscoree,mshtml=");
        if !super::run(&mut boot) || !system32.is_dir() {
            eprintln!(
                "xtask wine: wineboot -i failed; remove {} and retry",
                wine.prefix.display()
            );
            return None;
        }
        // wineboot returns before the prefix's registry is written.
        let _ = wine.command("wineserver").arg("-w").status();
        let provided = system32.join("bcryptprimitives.dll").exists();
        if std::fs::write(&booted, if provided { "wine" } else { "stand-in" }).is_err() {
            eprintln!("xtask wine: cannot write {}", booted.display());
            return None;
        }
        eprintln!(
            "xtask wine: prefix ready in {:.0} s",
            started.elapsed().as_secs_f64()
        );
    }
    if std::fs::read_to_string(&booted).ok().as_deref() == Some("stand-in")
        && !stand_in(&wine.prefix, &system32)
    {
        return None;
    }
    Some(wine)
}

/// Builds the stand-in DLL (when its source changed) into the prefix and
/// copies it into `system32`.
fn stand_in(prefix: &Path, system32: &Path) -> bool {
    let dir = prefix.join("ui-qa");
    let src = dir.join("bcryptprimitives.c");
    let dll = dir.join("bcryptprimitives.dll");
    let installed = system32.join("bcryptprimitives.dll");
    let current = std::fs::read_to_string(&src).ok().as_deref() == Some(STAND_IN_C);
    if current && dll.exists() {
        if std::fs::read(&dll).ok() == std::fs::read(&installed).ok() {
            return true;
        }
    } else {
        eprintln!("xtask wine: Wine lacks bcryptprimitives.dll (ProcessPrng, imported by Rust's std): building the stand-in");
        if std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(&src, STAND_IN_C))
            .is_err()
        {
            eprintln!("xtask wine: cannot write {}", src.display());
            return false;
        }
        let ok = super::run(
            Command::new(MINGW_GCC)
                .args(["-shared", "-O2", "-s", "-static-libgcc", "-o"])
                .arg(&dll)
                .arg(&src)
                .arg("-ladvapi32"),
        );
        if !ok {
            eprintln!("xtask wine: the stand-in bcryptprimitives.dll did not build");
            return false;
        }
    }
    match std::fs::copy(&dll, &installed) {
        Ok(_) => {
            eprintln!(
                "xtask wine: stand-in bcryptprimitives.dll installed in {}",
                system32.display()
            );
            true
        }
        Err(e) => {
            eprintln!(
                "xtask wine: cannot copy the stand-in to {}: {e}",
                installed.display()
            );
            false
        }
    }
}

/// Output of a finished Wine command.
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    timed_out: bool,
}

/// Runs `c` with its output captured, ending the prefix's processes after
/// `deadline`.
fn capture(wine: &Wine, c: &mut Command, deadline: Duration) -> std::io::Result<Ran> {
    let mut child = c
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut out = child.stdout.take().expect("piped stdout");
    let mut err = child.stderr.take().expect("piped stderr");
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
    let started = Instant::now();
    let mut timed_out = false;
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if started.elapsed() > deadline {
            timed_out = true;
            wine.kill_all();
            let _ = child.kill();
            break child.wait()?;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stdout = String::from_utf8_lossy(&reader.join().unwrap_or_default()).into_owned();
    let stderr = String::from_utf8_lossy(&err_reader.join().unwrap_or_default()).into_owned();
    Ok(Ran {
        code: status.code(),
        stdout,
        stderr,
        timed_out,
    })
}

/// Lists one binary's tests under Wine, then runs those that can run
/// there.
fn test_binary(wine: &Wine, bin: &TestBinary) -> Outcome {
    let mut o = Outcome {
        label: bin.label.clone(),
        ..Outcome::default()
    };
    let listed = match capture(
        wine,
        &mut wine.run(&bin.exe, &["--list"], &bin.dir),
        BINARY_DEADLINE,
    ) {
        Ok(r) if r.code == Some(0) => parse_list(&r.stdout),
        Ok(r) => {
            o.broken = Some(format!(
                "`--list` did not load under Wine (exit {:?}{}): {}",
                r.code,
                if r.timed_out { ", timed out" } else { "" },
                r.stderr.trim()
            ));
            return o;
        }
        Err(e) => {
            o.broken = Some(format!("cannot run wine: {e}"));
            return o;
        }
    };
    o.listed = listed.len();
    let skip = match plan(&bin.label) {
        Plan::WindowsOnly(why) => {
            o.windows_only = listed;
            o.windows_only_why = Some(why);
            return o;
        }
        Plan::NotWindows(why) => {
            o.not_windows = Some(why);
            return o;
        }
        Plan::Run(skip, why) => {
            if let Some(stale) = skip.iter().find(|t| !listed.iter().any(|l| l == *t)) {
                o.broken = Some(format!(
                    "{stale} is listed as Windows-only in xtask/src/wine.rs but is not a test of this binary"
                ));
                return o;
            }
            o.windows_only = skip.iter().map(|t| t.to_string()).collect();
            o.windows_only_why = why;
            skip
        }
    };
    let runnable = listed.len() - skip.len();
    if runnable == 0 {
        return o;
    }
    eprintln!(
        "xtask wine: running {} under Wine ({runnable} tests{})",
        bin.label,
        if skip.is_empty() {
            String::new()
        } else {
            format!("; {} Windows-only tests skipped by name", skip.len())
        }
    );
    let mut args = vec!["--exact"];
    for t in skip {
        args.extend(["--skip", t]);
    }
    let started = Instant::now();
    let ran = match capture(
        wine,
        &mut wine.run(&bin.exe, &args, &bin.dir),
        BINARY_DEADLINE,
    ) {
        Ok(r) => r,
        Err(e) => {
            o.broken = Some(format!("cannot run wine: {e}"));
            return o;
        }
    };
    let report = parse_report(&ran.stdout);
    o.passed = report.passed.len();
    o.failed = report.failed;
    o.ignored = report.ignored;
    let reported = o.passed + o.failed.len() + o.ignored.len();
    if ran.timed_out {
        o.broken = Some(format!(
            "did not finish within {} s; ended",
            BINARY_DEADLINE.as_secs()
        ));
    } else if !report.finished || reported != runnable {
        o.broken = Some(format!(
            "ended (exit {:?}) after reporting {reported} of {runnable} tests",
            ran.code
        ));
    } else if ran.code != Some(0) && o.failed.is_empty() {
        o.broken = Some(format!("exited {:?} with no failed test", ran.code));
    }
    eprintln!(
        "xtask wine: {}: {} passed, {} failed, {} ignored in {:.1} s",
        bin.label,
        o.passed,
        o.failed.len(),
        o.ignored.len(),
        started.elapsed().as_secs_f64()
    );
    if o.broken.is_some() || !o.failed.is_empty() {
        eprintln!(
            "---- {} stdout ----\n{}\n---- {} stderr ----\n{}",
            bin.label, ran.stdout, bin.label, ran.stderr
        );
    }
    o
}

/// `ui-qa.exe --version`, `--help`, `check` and `run` of a cmd.exe flow;
/// each line of the result is `(check, None)` when it held, else the
/// reason.
fn smoke(root: &Path, wine: &Wine, ui_qa: &Path) -> Vec<(String, Option<String>)> {
    let dir = target_dir(root).join("smoke");
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(dir.join("cmd-exit.jsonc"), CMD_FLOW))
    {
        return vec![(
            "ui-qa.exe".into(),
            Some(format!("cannot write {}: {e}", dir.display())),
        )];
    }
    let deadline = Duration::from_secs(120);
    let mut results = Vec::new();
    let mut check = |name: &str,
                     args: &[&str],
                     cwd: &Path,
                     verdict: &dyn Fn(&Ran) -> Result<String, String>| {
        eprintln!("xtask wine: ui-qa.exe {}", args.join(" "));
        let r = match capture(wine, &mut wine.run(ui_qa, args, cwd), deadline) {
            Ok(r) => match verdict(&r) {
                Ok(said) => {
                    eprintln!("xtask wine:   ok: {said}");
                    None
                }
                Err(why) => Some(format!(
                    "{why} (exit {:?}{})\n---- stdout ----\n{}\n---- stderr ----\n{}",
                    r.code,
                    if r.timed_out { ", timed out" } else { "" },
                    r.stdout.trim(),
                    r.stderr.trim()
                )),
            },
            Err(e) => Some(format!("cannot run wine: {e}")),
        };
        if let Some(why) = &r {
            eprintln!("xtask wine:   FAILED: {why}");
        }
        results.push((format!("ui-qa.exe {name}"), r));
    };
    let version = env!("CARGO_PKG_VERSION");
    check("--version", &["--version"], &dir, &|r| {
        let line = r.stdout.trim();
        (r.code == Some(0) && line.starts_with("ui-qa") && line.contains(version))
            .then(|| line.to_string())
            .ok_or_else(|| format!("expected `ui-qa {version}`"))
    });
    check("--help", &["--help"], &dir, &|r| {
        (r.code == Some(0) && r.stdout.contains("Usage:") && r.stdout.contains("run"))
            .then(|| format!("{} lines of help", r.stdout.lines().count()))
            .ok_or_else(|| "expected the usage".to_string())
    });
    check(
        "check examples/tui-hello.jsonc",
        &["check", "examples/tui-hello.jsonc"],
        root,
        &|r| {
            (r.code == Some(0))
                .then(|| "the flow is valid".to_string())
                .ok_or_else(|| "expected exit 0".to_string())
        },
    );
    check(
        "run (cmd.exe exits 7)",
        &["run", "--json", "--workspace", "ws", "cmd-exit.jsonc"],
        &dir,
        &|r| {
            let v: serde_json::Value = serde_json::from_str(r.stdout.trim())
                .map_err(|e| format!("no result document on stdout: {e}"))?;
            let status = v["status"].as_str().unwrap_or_default();
            let cleanup = v["cleanup"]["status"].as_str().unwrap_or_default();
            let ended = v["cleanup"]["ended"].as_array().map_or(0, Vec::len);
            if r.code == Some(0) && status == "PASSED" && cleanup == "clean" {
                Ok(format!("PASSED, cleanup clean ({ended} ended)"))
            } else {
                Err(format!(
                    "expected PASSED with cleanup clean, got {status} ({}) with cleanup {cleanup}",
                    v["reason"].as_str().unwrap_or("no reason")
                ))
            }
        },
    );
    results
}

/// Installs what is missing, links everything for Windows, runs under
/// Wine what can run there and prints the summary; false when anything
/// failed.
pub fn wine(root: &Path) -> bool {
    let started = Instant::now();
    let packages: Vec<(&str, &str)> = super::cross::PACKAGES
        .iter()
        .chain(PACKAGES)
        .copied()
        .collect();
    if !super::install(&packages, "wine") {
        return false;
    }
    let Some(built) = build(root) else {
        return false;
    };
    let Some(ui_qa) = built.ui_qa.clone() else {
        eprintln!("xtask wine: the build produced no ui-qa.exe");
        return false;
    };
    let Some(wine) = prefix() else {
        return false;
    };
    wine.start();
    let outcomes: Vec<Outcome> = built.tests.iter().map(|b| test_binary(&wine, b)).collect();
    let smoke = smoke(root, &wine, &ui_qa);
    wine.kill_all();
    summary(&built, &outcomes, &smoke, started.elapsed())
}

/// The table, the lists of what did not run and the verdict.
fn summary(
    built: &Built,
    outcomes: &[Outcome],
    smoke: &[(String, Option<String>)],
    took: Duration,
) -> bool {
    eprintln!("\nxtask wine: summary ({TARGET}, under Wine)");
    eprintln!(
        "  {:<42} {:>6} {:>6} {:>6} {:>7} {:>8}",
        "test binary", "tests", "passed", "failed", "ignored", "Win-only"
    );
    let mut failures = Vec::new();
    let (mut passed, mut windows_only, mut not_windows) = (0, 0, 0);
    for o in outcomes {
        let note = if o.broken.is_some() {
            "  BROKEN"
        } else if o.not_windows.is_some() {
            "  not run: not a Windows test"
        } else if o.listed == 0 {
            "  no tests for Windows"
        } else if o.windows_only.len() == o.listed {
            "  linked, runs only on Windows"
        } else {
            ""
        };
        eprintln!(
            "  {:<42} {:>6} {:>6} {:>6} {:>7} {:>8}{note}",
            o.label,
            o.listed,
            o.passed,
            o.failed.len(),
            o.ignored.len(),
            o.windows_only.len()
        );
        passed += o.passed;
        windows_only += o.windows_only.len();
        if o.not_windows.is_some() {
            not_windows += o.listed;
        }
        failures.extend(o.failed.iter().map(|t| format!("{}: {t}", o.label)));
        if let Some(b) = &o.broken {
            failures.push(format!("{}: {b}", o.label));
        }
    }
    for (name, failed) in smoke {
        eprintln!(
            "  {:<42} {}",
            name,
            if failed.is_some() { "FAILED" } else { "ok" }
        );
        if failed.is_some() {
            failures.push(name.clone());
        }
    }
    let ignored: Vec<String> = outcomes
        .iter()
        .flat_map(|o| o.ignored.iter().map(move |t| format!("{} {t}", o.label)))
        .collect();
    if !ignored.is_empty() {
        eprintln!("\nxtask wine: ignored (#[ignore], as on every platform):");
        for t in &ignored {
            eprintln!("  {t}");
        }
    }
    eprintln!("\nxtask wine: linked, runs only on Windows ({windows_only} tests; not run under Wine, never counted as passed):");
    for o in outcomes.iter().filter(|o| !o.windows_only.is_empty()) {
        eprintln!("  {}: {}", o.label, o.windows_only_why.unwrap_or_default());
        for t in &o.windows_only {
            eprintln!("    {t}");
        }
    }
    eprintln!("\nxtask wine: linked, not Windows tests ({not_windows} tests; run on Linux by `cargo xtask test`, not under Wine):");
    for (_, why) in NOT_WINDOWS_TESTS {
        let these: Vec<String> = outcomes
            .iter()
            .filter(|o| o.not_windows == Some(*why) && o.listed > 0)
            .map(|o| format!("{} ({})", o.label, o.listed))
            .collect();
        if !these.is_empty() {
            eprintln!("  {why}:\n    {}", these.join(", "));
        }
    }
    if failures.is_empty() {
        eprintln!(
            "\nxtask wine: every crate and its tests linked for {TARGET} ({} test binaries, {} other program(s)); {passed} tests and {} ui-qa.exe checks passed under Wine; {windows_only} tests run only on Windows; in {:.0} s",
            built.tests.len(),
            built.programs.len(),
            smoke.len(),
            took.as_secs_f64()
        );
        true
    } else {
        eprintln!("\nxtask wine: FAILED under Wine:");
        for f in &failures {
            eprintln!("  {f}");
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_libtest_output() {
        let out = "running 3 tests\r\ntest a::b ... ok\ntest c ... FAILED\ntest d ... ignored, needs x\n\nfailures:\n\ntest result: FAILED. 1 passed; 1 failed; 1 ignored\n";
        let r = parse_report(out);
        assert_eq!(r.passed, ["a::b"]);
        assert_eq!(r.failed, ["c"]);
        assert_eq!(r.ignored, ["d"]);
        assert!(r.finished);
        assert!(!parse_report("running 1 test\ntest a ... ok\n").finished);
    }

    #[test]
    fn reads_the_test_list() {
        let out = "a::b: test\r\nc: test\nd: benchmark\n\n2 tests, 1 benchmark\n";
        assert_eq!(parse_list(out), ["a::b", "c"]);
    }

    #[test]
    fn names_packages_and_binaries() {
        assert_eq!(
            package_name("path+file:///w/crates/qa-core#0.1.0"),
            "qa-core"
        );
        assert_eq!(
            package_name("path+file:///w/tests/fixtures/tui-fixture#tui_fixture@0.1.0"),
            "tui_fixture"
        );
        assert_eq!(label("qa-tui", "test", "conpty"), "qa-tui tests/conpty");
        assert_eq!(label("qa-core", "lib", "qa_core"), "qa-core lib");
        assert_eq!(label("qa-cli", "bin", "ui-qa"), "qa-cli bin/ui-qa");
    }

    #[test]
    fn plans_every_binary() {
        assert_eq!(plan("qa-core lib"), Plan::Run(&[], None));
        assert!(matches!(plan("qa-tui tests/conpty"), Plan::WindowsOnly(_)));
        assert!(matches!(
            plan("qa-web tests/windows_browser"),
            Plan::WindowsOnly(_)
        ));
        assert!(matches!(plan("qa-web tests/fixtures"), Plan::NotWindows(_)));
        assert!(matches!(plan("qa-web lib"), Plan::Run(&[], None)));
        assert!(matches!(plan("qa-cli bin/ui-qa"), Plan::NotWindows(_)));
        assert!(matches!(
            plan("qa-runner tests/runner"),
            Plan::NotWindows(_)
        ));
        assert!(matches!(
            plan("qa-runner tests/schemas"),
            Plan::Run(&[], None)
        ));
        match plan("qa-windows tests/windows_desktop") {
            Plan::Run(skip, Some(_)) => assert_eq!(skip.len(), 4),
            p => panic!("{p:?}"),
        }
    }

    #[test]
    fn every_entry_says_why() {
        for (label, _, why) in WINDOWS_ONLY {
            assert!(label.contains(' ') && !why.is_empty(), "{label}");
        }
        for (label, why) in NOT_WINDOWS_TESTS {
            assert!(label.contains(' ') && !why.is_empty(), "{label}");
        }
    }

    #[test]
    fn reads_cargo_artifacts() {
        let out = r#"{"reason":"compiler-artifact","package_id":"path+file:///w/crates/qa-core#0.1.0","manifest_path":"/w/crates/qa-core/Cargo.toml","target":{"kind":["lib"],"name":"qa_core"},"profile":{"test":true},"executable":"/t/deps/qa_core-1.exe"}
{"reason":"compiler-artifact","package_id":"path+file:///w/crates/qa-cli#0.1.0","manifest_path":"/w/crates/qa-cli/Cargo.toml","target":{"kind":["bin"],"name":"ui-qa"},"profile":{"test":false},"executable":"/t/ui-qa.exe"}
{"reason":"compiler-artifact","package_id":"path+file:///w/crates/qa-cli#0.1.0","manifest_path":"/w/crates/qa-cli/Cargo.toml","target":{"kind":["lib"],"name":"x"},"profile":{"test":false},"executable":null}
{"reason":"build-finished","success":true}"#;
        let b = parse_artifacts(out);
        assert_eq!(b.tests.len(), 1);
        assert_eq!(b.tests[0].label, "qa-core lib");
        assert_eq!(b.tests[0].dir, Path::new("/w/crates/qa-core"));
        assert_eq!(b.ui_qa.as_deref(), Some(Path::new("/t/ui-qa.exe")));
        assert_eq!(b.programs, ["qa-cli bin/ui-qa"]);
    }
}
