//! Windows rules: a small environment of the runner's variables (the ones
//! Windows programs need to work at all), names compared without regard to
//! case, and programs found on a `;`-separated PATH as `.exe` or `.com`.
//!
//! `CreateProcessW` runs Windows programs only. A batch file (`.bat`,
//! `.cmd`) runs through `cmd.exe`, whose command-line rules differ from the
//! C runtime's (an argument can turn into a command): it is refused, with
//! the `cmd.exe` argv to use instead. Other files (`.py`, `.ps1`) are not
//! programs either; they need their interpreter in argv.

use crate::codes::TuiCode;
use qa_core::DriverError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// PATH used when the runner has none and names no `SystemRoot`.
pub const FALLBACK_PATH: &str = r"C:\Windows\System32;C:\Windows";

/// The runner's variables a program gets (when set), besides PATH: where
/// Windows is (`SystemRoot` — sockets and cryptography fail without it —,
/// `windir`, `SystemDrive`, `ComSpec`, `PATHEXT`), the user's directories
/// and names (the Windows `HOME` and `USER`), temporary files, installed
/// programs and the machine's kind.
const FROM_RUNNER: &[&str] = &[
    "SystemRoot",
    "windir",
    "SystemDrive",
    "ComSpec",
    "PATHEXT",
    "USERPROFILE",
    "HOMEDRIVE",
    "HOMEPATH",
    "APPDATA",
    "LOCALAPPDATA",
    "USERNAME",
    "USERDOMAIN",
    "TEMP",
    "TMP",
    "ProgramData",
    "ProgramFiles",
    "ProgramFiles(x86)",
    "ProgramW6432",
    "CommonProgramFiles",
    "CommonProgramFiles(x86)",
    "CommonProgramW6432",
    "NUMBER_OF_PROCESSORS",
    "PROCESSOR_ARCHITECTURE",
    "OS",
];

fn same_name(a: &str, b: &str) -> bool {
    a.to_uppercase() == b.to_uppercase()
}

/// The small, safe base environment: PATH and the variables of
/// [`FROM_RUNNER`] from the runner (when set), `LANG`/`LC_ALL` =
/// `C.UTF-8`, `TERM=xterm-256color`, `COLORTERM=truecolor`, `UI_QA=1`;
/// then the flow's `env` over it. A flow variable replaces a base one
/// whatever its case (`Path` replaces `PATH`) and keeps the base spelling.
pub fn environment(
    flow_env: &BTreeMap<String, String>,
    runner_env: impl Fn(&str) -> Option<String>,
) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    let path = runner_env("PATH").unwrap_or_else(|| match runner_env("SystemRoot") {
        Some(root) => format!(r"{root}\System32;{root}"),
        None => FALLBACK_PATH.to_string(),
    });
    env.insert("PATH".to_string(), path);
    for k in FROM_RUNNER {
        if let Some(v) = runner_env(k) {
            env.insert(k.to_string(), v);
        }
    }
    env.insert("LANG".into(), "C.UTF-8".into());
    env.insert("LC_ALL".into(), "C.UTF-8".into());
    env.insert("TERM".into(), qa_core::flow::EMULATED_TERM.into());
    env.insert("COLORTERM".into(), "truecolor".into());
    env.insert("UI_QA".into(), "1".into());
    for (k, v) in flow_env {
        let name = env
            .keys()
            .find(|existing| same_name(existing, k))
            .cloned()
            .unwrap_or_else(|| k.clone());
        env.insert(name, v.clone());
    }
    env
}

/// What a file found for `argv[0]` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A Windows program (`.exe`, `.com`).
    Program,
    /// A batch file (`.bat`, `.cmd`).
    Batch,
    /// Anything else.
    Other,
}

fn kind(p: &Path) -> Kind {
    let ext = p
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    match ext.as_deref() {
        Some("exe" | "com") => Kind::Program,
        Some("bat" | "cmd") => Kind::Batch,
        _ => Kind::Other,
    }
}

/// The files `name` may mean, in the order they are tried: the name
/// itself when it has an extension, then with each extension Windows
/// programs (and batch files) have.
fn candidates(name: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if name.extension().is_some() {
        out.push(name.to_path_buf());
    }
    for ext in [".com", ".exe", ".bat", ".cmd"] {
        let mut s = name.as_os_str().to_owned();
        s.push(ext);
        out.push(PathBuf::from(s));
    }
    out
}

/// Whether `argv0` names a path (it has a separator or a drive), not a
/// program to look for on PATH.
fn is_path(argv0: &str) -> bool {
    let b = argv0.as_bytes();
    argv0.contains(['/', '\\']) || (b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':')
}

/// Whether `p` is a file here. An App Execution Alias (the
/// `WindowsApps\python.exe` kind) is a reparse point that `metadata`
/// cannot follow; it counts as a file too.
fn is_file(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file())
        || std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file())
}

/// Finds `argv0`: a path (with `\`, `/` or a drive) relative to `cwd`, else
/// the first Windows program of that name on `path` (`;`-separated; the
/// current directory is never searched).
pub fn resolve_program(argv0: &str, cwd: &Path, path: &str) -> Result<PathBuf, DriverError> {
    resolve_with(argv0, cwd, path, is_file)
}

/// [`resolve_program`] over any file system (`exists` says whether a path
/// is a file).
fn resolve_with(
    argv0: &str,
    cwd: &Path,
    path: &str,
    exists: impl Fn(&Path) -> bool,
) -> Result<PathBuf, DriverError> {
    if argv0.is_empty() {
        return Err(
            DriverError::new(TuiCode::LaunchNotFound, "argv[0] is empty")
                .with_remediation("put the program to run first in target.command.argv"),
        );
    }
    let found: Vec<PathBuf> = if is_path(argv0) {
        let p = cwd.join(argv0);
        let found: Vec<PathBuf> = candidates(&p).into_iter().filter(|c| exists(c)).collect();
        if found.is_empty() {
            return Err(DriverError::new(
                TuiCode::LaunchNotFound,
                format!(
                    "program {argv0:?} does not exist (resolved against {}, with .exe and .com tried)",
                    cwd.display()
                ),
            )
            .with_remediation(
                "fix target.command.argv[0]; relative paths resolve against the command's cwd",
            ));
        }
        found
    } else {
        path.split(';')
            .map(|d| d.trim().trim_matches('"'))
            .filter(|d| !d.is_empty())
            .flat_map(|d| candidates(&Path::new(d).join(argv0)))
            .filter(|c| exists(c))
            .collect()
    };
    // The first program wins; else say why the first match cannot run.
    if let Some(p) = found.iter().find(|p| kind(p) == Kind::Program) {
        return Ok(p.clone());
    }
    match found.first() {
        Some(p) if kind(p) == Kind::Batch => Err(batch_refused(argv0, p)),
        Some(p) => Err(DriverError::new(
            TuiCode::LaunchNotExecutable,
            format!("{argv0:?} ({}) is not a Windows program", p.display()),
        )
        .with_remediation(
            "point argv[0] at an .exe, or run the file through its interpreter, e.g. [\"python\", \"script.py\"]",
        )),
        None => Err(DriverError::new(
            TuiCode::LaunchNotFound,
            format!("program {argv0:?} was not found on PATH (as .com or .exe)"),
        )
        .with_remediation(format!(
            "install {argv0:?} or give its full path in target.command.argv[0]"
        ))),
    }
}

fn batch_refused(argv0: &str, p: &Path) -> DriverError {
    DriverError::new(
        TuiCode::LaunchNotExecutable,
        format!(
            "{argv0:?} is a batch file ({}); batch files run through cmd.exe, whose argument rules differ",
            p.display()
        ),
    )
    .with_remediation(format!(
        "run it through cmd.exe explicitly: [\"cmd.exe\", \"/d\", \"/c\", {argv0:?}, …], and quote its arguments for cmd.exe"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn runner(k: &str) -> Option<String> {
        match k {
            "PATH" => Some(r"C:\Windows\System32;C:\Tools".into()),
            "SystemRoot" => Some(r"C:\Windows".into()),
            "USERPROFILE" => Some(r"C:\Users\qa".into()),
            "GITHUB_TOKEN" => Some("secret".into()),
            _ => None,
        }
    }

    #[test]
    fn env_is_small_and_flow_wins_whatever_its_case() {
        let mut flow_env = BTreeMap::new();
        flow_env.insert("Path".to_string(), r"C:\flow".to_string());
        flow_env.insert("term".to_string(), "dumb".to_string());
        flow_env.insert("FOO".to_string(), "bar".to_string());
        let env = environment(&flow_env, runner);
        assert_eq!(env["PATH"], r"C:\flow");
        assert!(!env.contains_key("Path"));
        assert_eq!(env["TERM"], "dumb");
        assert_eq!(env["FOO"], "bar");
        assert_eq!(env["SystemRoot"], r"C:\Windows");
        assert_eq!(env["USERPROFILE"], r"C:\Users\qa");
        assert_eq!(env["UI_QA"], "1");
        assert!(!env.contains_key("GITHUB_TOKEN"));
        assert!(!env.contains_key("TEMP"));
    }

    #[test]
    fn without_a_path_the_system_directories_are_used() {
        let env = environment(&BTreeMap::new(), |k| {
            (k == "SystemRoot").then(|| r"D:\Win".to_string())
        });
        assert_eq!(env["PATH"], r"D:\Win\System32;D:\Win");
        assert_eq!(
            environment(&BTreeMap::new(), |_| None)["PATH"],
            FALLBACK_PATH
        );
    }

    fn files(list: &[&str]) -> impl Fn(&Path) -> bool {
        let set: BTreeSet<PathBuf> = list.iter().map(PathBuf::from).collect();
        move |p: &Path| set.contains(p)
    }

    #[test]
    fn programs_are_found_on_path_as_exe_or_com() {
        let fs = files(&["/w/sys/cmd.exe", "/w/tools/vim.exe", "/w/tools/more.com"]);
        let cwd = Path::new("/w/project");
        let path = "/w/sys; \"/w/tools\" ;;";
        assert_eq!(
            resolve_with("vim", cwd, path, &fs).unwrap(),
            PathBuf::from("/w/tools/vim.exe")
        );
        assert_eq!(
            resolve_with("more", cwd, path, &fs).unwrap(),
            PathBuf::from("/w/tools/more.com")
        );
        assert_eq!(
            resolve_with("cmd.exe", cwd, path, &fs).unwrap(),
            PathBuf::from("/w/sys/cmd.exe")
        );
        let missing = resolve_with("nano", cwd, path, &fs).unwrap_err();
        assert_eq!(missing.code, TuiCode::LaunchNotFound.as_str());
        // The current directory is not searched.
        let here = files(&["/w/project/tool.exe"]);
        assert!(resolve_with("tool", cwd, "", &here).is_err());
    }

    #[test]
    fn a_program_later_on_path_wins_over_a_batch_file() {
        let fs = files(&["/a/npm.cmd", "/b/npm.exe"]);
        assert_eq!(
            resolve_with("npm", Path::new("/"), "/a;/b", &fs).unwrap(),
            PathBuf::from("/b/npm.exe")
        );
    }

    #[test]
    fn batch_files_and_scripts_are_refused_with_what_to_do() {
        let fs = files(&["/a/npm.cmd", "/p/run.py"]);
        let e = resolve_with("npm", Path::new("/"), "/a", &fs).unwrap_err();
        assert_eq!(e.code, TuiCode::LaunchNotExecutable.as_str());
        assert!(e.remediation.unwrap().contains("cmd.exe"));
        let e = resolve_with("/p/run.py", Path::new("/"), "", &fs).unwrap_err();
        assert_eq!(e.code, TuiCode::LaunchNotExecutable.as_str());
        assert!(e.remediation.unwrap().contains("interpreter"));
    }

    #[test]
    fn paths_resolve_against_the_cwd() {
        let fs = files(&["/w/project/bin/tool.exe"]);
        let cwd = Path::new("/w/project");
        for argv0 in ["bin/tool", r"bin\tool", "bin/tool.exe"] {
            let got = resolve_with(argv0, cwd, "/nowhere", &fs);
            // A backslash is a separator on Windows only; on the host that
            // runs this module's tests elsewhere it joins as part of the
            // name, so only the forward-slash forms exist there.
            if argv0.contains('\\') && !cfg!(windows) {
                assert!(got.is_err());
            } else {
                assert_eq!(got.unwrap(), PathBuf::from("/w/project/bin/tool.exe"));
            }
        }
        let e = resolve_with("bin/none", cwd, "", &fs).unwrap_err();
        assert_eq!(e.code, TuiCode::LaunchNotFound.as_str());
        assert_eq!(
            resolve_with("", cwd, "", &fs).unwrap_err().code,
            TuiCode::LaunchNotFound.as_str()
        );
    }

    #[test]
    fn drive_letters_and_separators_make_a_path() {
        assert!(is_path(r"C:\Tools\vim.exe"));
        assert!(is_path("c:vim"));
        assert!(is_path(r".\vim"));
        assert!(is_path("./vim"));
        assert!(!is_path("vim"));
        assert!(!is_path("vim.exe"));
    }

    #[test]
    fn candidates_keep_a_given_extension_first() {
        let c = candidates(Path::new("/d/python3.11"));
        assert_eq!(c[0], PathBuf::from("/d/python3.11"));
        assert_eq!(c[2], PathBuf::from("/d/python3.11.exe"));
        assert_eq!(
            candidates(Path::new("/d/vim"))[0],
            PathBuf::from("/d/vim.com")
        );
        assert_eq!(kind(Path::new("X.EXE")), Kind::Program);
        assert_eq!(kind(Path::new("x.Cmd")), Kind::Batch);
        assert_eq!(kind(Path::new("x.ps1")), Kind::Other);
    }
}
