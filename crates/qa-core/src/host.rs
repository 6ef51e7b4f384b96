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

/// The first executable named `name` in the directories of `path` (a
/// `PATH`-style list).
pub fn find_in(name: &str, path: &OsStr) -> Option<PathBuf> {
    std::env::split_paths(path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

/// Finds an executable: `name` itself when it contains a `/`, else the
/// first match on this process's `PATH`.
pub fn which(name: &str) -> Option<PathBuf> {
    if name.contains('/') {
        let p = PathBuf::from(name);
        return is_executable(&p).then_some(p);
    }
    find_in(name, &std::env::var_os("PATH")?)
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
