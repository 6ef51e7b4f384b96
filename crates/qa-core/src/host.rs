//! Finding programs on the host: one `PATH` lookup and one "is this an
//! executable file" test for every driver.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// Whether `p` is a regular file this user may execute (on Unix, any
/// execute bit; elsewhere, any regular file).
pub fn is_executable(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p)
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    }
    #[cfg(not(unix))]
    {
        p.is_file()
    }
}

/// The extensions that make a file a program when its name is given
/// without one: on Windows, `PATHEXT` (`.COM;.EXE;.BAT;.CMD` when unset);
/// elsewhere none.
fn program_extensions() -> Option<String> {
    if cfg!(windows) {
        Some(
            std::env::var("PATHEXT")
                .ok()
                .filter(|v| !v.trim().is_empty())
                .unwrap_or_else(|| ".COM;.EXE;.BAT;.CMD".into()),
        )
    } else {
        None
    }
}

/// The file names `name` may mean, in the order they are tried: `name`
/// itself where programs need no extension (`extensions` is `None`), or
/// when it already ends in one of `extensions` (a `PATHEXT`-style list);
/// otherwise `name` with each extension, then `name` itself.
pub fn candidates(name: &str, extensions: Option<&str>) -> Vec<String> {
    let Some(exts) = extensions else {
        return vec![name.to_string()];
    };
    let exts: Vec<&str> = exts
        .split(';')
        .map(str::trim)
        .filter(|e| e.starts_with('.') && e.len() > 1)
        .collect();
    let lower = name.to_ascii_lowercase();
    if exts
        .iter()
        .any(|e| lower.ends_with(&e.to_ascii_lowercase()))
    {
        return vec![name.to_string()];
    }
    let mut out: Vec<String> = exts
        .iter()
        .map(|e| format!("{name}{}", e.to_ascii_lowercase()))
        .collect();
    out.push(name.to_string());
    out
}

/// Whether `name` is a path rather than a bare program name.
fn is_path(name: &str) -> bool {
    name.contains('/') || (cfg!(windows) && name.contains('\\'))
}

/// The first executable named `name` in the directories of `path` (a
/// `PATH`-style list; on Windows, with `PATHEXT`'s extensions).
pub fn find_in(name: &str, path: &OsStr) -> Option<PathBuf> {
    let names = candidates(name, program_extensions().as_deref());
    std::env::split_paths(path)
        .flat_map(|d| names.iter().map(move |n| d.join(n)))
        .find(|p| is_executable(p))
}

/// Finds an executable: `name` itself when it is a path (it contains a
/// `/`, or on Windows a `\`), else the first match on this process's
/// `PATH`.
pub fn which(name: &str) -> Option<PathBuf> {
    if is_path(name) {
        return candidates(name, program_extensions().as_deref())
            .into_iter()
            .map(PathBuf::from)
            .find(|p| is_executable(p));
    }
    find_in(name, &std::env::var_os("PATH")?)
}

#[cfg(test)]
mod neutral_tests {
    use super::candidates;

    #[test]
    fn windows_names_are_tried_with_each_pathext_extension() {
        let exts = Some(".COM;.EXE;.BAT;.CMD");
        assert_eq!(
            candidates("notepad", exts),
            [
                "notepad.com",
                "notepad.exe",
                "notepad.bat",
                "notepad.cmd",
                "notepad"
            ]
        );
        assert_eq!(candidates("notepad.EXE", exts), ["notepad.EXE"]);
        assert_eq!(candidates(r"C:\tools\app.cmd", exts), [r"C:\tools\app.cmd"]);
        assert_eq!(
            candidates("my.app", Some(".EXE; ;bogus")),
            ["my.app.exe", "my.app"],
            "malformed entries are skipped"
        );
    }

    #[test]
    fn elsewhere_the_name_is_the_only_candidate() {
        assert_eq!(candidates("sh", None), ["sh"]);
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn finds_sh_and_refuses_directories() {
        assert!(which("sh").is_some());
        assert!(which("/bin/sh").is_some());
        assert!(!is_executable(Path::new("/")));
        assert!(which("ui-qa-no-such-program").is_none());
        assert!(find_in("sh", OsStr::new("/nonexistent")).is_none());
    }
}
