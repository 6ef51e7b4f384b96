//! The user's cache of test fixtures that come from a package registry
//! (`npm.rs`, `pip.rs`): each is installed once per the bytes of its pin
//! file (a lockfile, a hashed requirements file) into
//! `$XDG_CACHE_HOME/ui-qa-test-deps/NAME-KEY` (or `~/.cache/…`), built in
//! a scratch folder and moved into place only when whole, and linked from
//! the fixture's directory.

use std::path::{Path, PathBuf};

/// The cache every install goes to: `$XDG_CACHE_HOME/ui-qa-test-deps`, or
/// `~/.cache/ui-qa-test-deps`.
pub fn cache() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("ui-qa-test-deps"))
}

/// FNV-1a (64 bit) of `bytes`, as hex: a pin file's key in the cache.
pub fn key(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// `cache/NAME-KEY` for the pin file's bytes `pinned`, installed once:
/// when it is not there yet, `fill` builds it in a scratch folder (`true`
/// when whole), which then moves into place. `what` says what is installed
/// (for messages); `None` when it could not be.
pub fn install_once(
    cache: &Path,
    name: &str,
    pinned: &[u8],
    what: &str,
    fill: impl FnOnce(&Path) -> bool,
) -> Option<PathBuf> {
    let dest = cache.join(format!("{name}-{}", key(pinned)));
    let done = dest.join(".installed");
    if done.exists() {
        return Some(dest);
    }
    eprintln!("xtask deps: installing {what} into {}", dest.display());
    let work = cache.join(format!(".{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    if !(std::fs::create_dir_all(&work).is_ok() && fill(&work)) {
        let _ = std::fs::remove_dir_all(&work);
        return None;
    }
    let _ = std::fs::remove_dir_all(&dest);
    if std::fs::rename(&work, &dest).is_err() || std::fs::write(&done, b"").is_err() {
        eprintln!(
            "xtask deps: cannot move the install into {}",
            dest.display()
        );
        return None;
    }
    Some(dest)
}

/// Makes `link` a symlink to `target` (unless it already is one).
pub fn link(link: &Path, target: &Path) -> bool {
    if std::fs::read_link(link).ok().as_deref() == Some(target) {
        return true;
    }
    let _ = std::fs::remove_file(link);
    #[cfg(unix)]
    if let Err(e) = std::os::unix::fs::symlink(target, link) {
        eprintln!("xtask deps: cannot link {}: {e}", link.display());
        return false;
    }
    true
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_key_follows_every_byte_of_the_pin_file() {
        assert_eq!(super::key(b""), "cbf29ce484222325");
        assert_ne!(super::key(b"{\"a\":1}"), super::key(b"{\"a\":2}"));
    }
}
