//! Unix rules: a small environment of the runner's variables, programs
//! found on a `:`-separated PATH by their execute bits.

use crate::codes::TuiCode;
use qa_core::host::{find_in, is_executable};
use qa_core::DriverError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// PATH used when the runner has none.
pub const FALLBACK_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// The small, safe base environment: PATH, HOME, USER, LOGNAME and SHELL from
/// the runner (when set), `LANG`/`LC_ALL` = `C.UTF-8`, `TERM=xterm-256color`,
/// `COLORTERM=truecolor`, `UI_QA=1`; then the flow's `env` over it.
pub fn environment(
    flow_env: &BTreeMap<String, String>,
    runner_env: impl Fn(&str) -> Option<String>,
) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    env.insert(
        "PATH".to_string(),
        runner_env("PATH").unwrap_or_else(|| FALLBACK_PATH.to_string()),
    );
    for k in ["HOME", "USER", "LOGNAME", "SHELL"] {
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
        env.insert(k.clone(), v.clone());
    }
    env
}

/// Finds `argv0`: a path (containing `/`) relative to `cwd`, else the first
/// executable match on `path`.
pub fn resolve_program(argv0: &str, cwd: &Path, path: &str) -> Result<PathBuf, DriverError> {
    if argv0.is_empty() {
        return Err(
            DriverError::new(TuiCode::LaunchNotFound, "argv[0] is empty")
                .with_remediation("put the program to run first in target.command.argv"),
        );
    }
    if argv0.contains('/') {
        let p = cwd.join(argv0);
        if !p.exists() {
            return Err(DriverError::new(
                TuiCode::LaunchNotFound,
                format!(
                    "program {argv0:?} does not exist (resolved against {})",
                    cwd.display()
                ),
            )
            .with_remediation(
                "fix target.command.argv[0]; relative paths resolve against the command's cwd",
            ));
        }
        if !is_executable(&p) {
            return Err(not_executable(argv0, &p));
        }
        return Ok(p);
    }
    // Empty entries are skipped (they would mean "the runner's directory").
    let dirs: Vec<&str> = path.split(':').filter(|d| !d.is_empty()).collect();
    if let Ok(search) = std::env::join_paths(&dirs) {
        if !search.is_empty() {
            if let Some(p) = find_in(argv0, &search) {
                return Ok(p);
            }
        }
    }
    // Nothing executable: name the first match that exists but cannot run.
    if let Some(p) = dirs
        .iter()
        .map(|d| Path::new(d).join(argv0))
        .find(|p| p.exists())
    {
        return Err(not_executable(argv0, &p));
    }
    Err(DriverError::new(
        TuiCode::LaunchNotFound,
        format!("program {argv0:?} was not found on PATH"),
    )
    .with_remediation(format!(
        "install {argv0:?} (e.g. with the system package manager) or give its full path in target.command.argv[0]"
    )))
}

fn not_executable(argv0: &str, p: &Path) -> DriverError {
    DriverError::new(
        TuiCode::LaunchNotExecutable,
        format!("{argv0:?} ({}) is not an executable program", p.display()),
    )
    .with_remediation(
        "point argv[0] at an executable file (chmod +x), not a directory or data file",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_is_small_and_flow_wins() {
        let mut flow_env = BTreeMap::new();
        flow_env.insert("TERM".to_string(), "dumb".to_string());
        flow_env.insert("FOO".to_string(), "bar".to_string());
        let env = environment(&flow_env, |k| match k {
            "PATH" => Some("/bin".into()),
            "SECRET" => Some("x".into()),
            _ => None,
        });
        assert_eq!(env["PATH"], "/bin");
        assert_eq!(env["TERM"], "dumb");
        assert_eq!(env["FOO"], "bar");
        assert_eq!(env["UI_QA"], "1");
        assert_eq!(env["LANG"], "C.UTF-8");
        assert!(!env.contains_key("SECRET"));
        assert!(!env.contains_key("HOME"));
    }

    #[test]
    fn resolution_errors_have_codes() {
        let cwd = std::env::temp_dir();
        assert_eq!(
            resolve_program("definitely-not-a-program-xyz", &cwd, "/usr/bin:/bin")
                .unwrap_err()
                .code,
            TuiCode::LaunchNotFound.as_str()
        );
        assert_eq!(
            resolve_program("/etc", &cwd, "").unwrap_err().code,
            TuiCode::LaunchNotExecutable.as_str()
        );
        let data = cwd.join(format!("qa-tui-data-{}.txt", std::process::id()));
        std::fs::write(&data, "not a program").unwrap();
        let err = resolve_program(data.to_str().unwrap(), &cwd, "").unwrap_err();
        let _ = std::fs::remove_file(&data);
        assert_eq!(err.code, TuiCode::LaunchNotExecutable.as_str());
        assert!(resolve_program("sh", &cwd, "/usr/bin:/bin").is_ok());
    }
}
