//! Scratch for a helper process that runs as another user.
//!
//! When ui-qa is root it starts the browser as an unprivileged user of its
//! own (see `qa-web`). That user cannot reach the run directory (it lives
//! in the workspace, 0700 root), so its scratch — the profile, uploads,
//! downloads — lives in a directory of the system's temporary directory:
//!
//! ```text
//! <tmp>/ui-qa-<random>/          root, 0711 (nothing to list)
//!                      work/     root, 0711
//!                           .owner    root, 0600: the ui-qa process (pid, start time)
//!                           <name>/   the helper user, 0700
//! ```
//!
//! `<tmp>` is `/dev/shm` when it is a memory file system with room to
//! spare (see [`memory_root`]): a browser profile is a few hundred small
//! files, and removing them from a disk mounted with online discard takes
//! 0.4–0.7 s (measured on the development machine), from memory nothing.
//!
//! Only root creates entries in the two upper directories, so the helper
//! can never redirect one of ui-qa's writes; each leaf is reachable by the
//! helper user and root only. The run's own `work/<name>` is a symlink to
//! the leaf, so a person (or a later run's sweep) finds it where every other
//! scratch directory is. It is removed with the run's scratch, by the
//! watchdog if the runner dies, and by the sweep of a later run if both die:
//! the sweep of a run in the same workspace, or of any later run of the same
//! user (which looks in the shared roots), once the process its `.owner`
//! names is gone — so a profile never outlives a workspace that was deleted.

use super::{io_err, EvidenceError, HelperAccess, HelperUser};
use std::fs;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The prefix of a helper scratch base directory's name.
const PREFIX: &str = "ui-qa-";

/// The directory the helper bases are made in: [`memory_root`] when there
/// is one, else [`temp_root`].
pub(super) fn shared_root() -> PathBuf {
    memory_root().unwrap_or_else(temp_root)
}

/// The system's temporary directory when every other user can traverse it
/// (and each of its ancestors), else `/tmp`.
fn temp_root() -> PathBuf {
    let t = std::env::temp_dir();
    if traversable_by_all(&t) {
        t
    } else {
        PathBuf::from("/tmp")
    }
}

/// Whether `p` is absolute and it and each of its ancestors is a directory
/// every user may traverse.
fn traversable_by_all(p: &Path) -> bool {
    p.is_absolute()
        && p.ancestors().all(|a| {
            fs::metadata(a).is_ok_and(|m| m.is_dir() && m.permissions().mode() & 0o001 != 0)
        })
}

/// The memory file system every user shares, where helper bases go when it
/// is usable: `/dev/shm`, when it is a tmpfs, sticky and traversable by
/// every user (like `/tmp`), with at least [`MEMORY_ROOM`] free (a
/// container's default 64 MB is not enough for a browser's cache).
#[cfg(target_os = "linux")]
// statfs's field types differ between architectures.
#[allow(clippy::unnecessary_cast)]
fn memory_root() -> Option<PathBuf> {
    let p = Path::new(MEMORY_DIR);
    let sticky = fs::metadata(p).is_ok_and(|m| m.permissions().mode() & 0o1000 != 0);
    if !(sticky && traversable_by_all(p)) {
        return None;
    }
    let c = std::ffi::CString::new(MEMORY_DIR).ok()?;
    let mut st = std::mem::MaybeUninit::<libc::statfs>::uninit();
    // SAFETY: `c` is a NUL-terminated path and `st` a buffer of the size
    // statfs(2) fills; it is read only when the call succeeded.
    #[allow(unsafe_code)]
    let st = unsafe {
        if libc::statfs(c.as_ptr(), st.as_mut_ptr()) != 0 {
            return None;
        }
        st.assume_init()
    };
    // TMPFS_MAGIC, statfs(2).
    let tmpfs = st.f_type as u64 == 0x0102_1994;
    let free = (st.f_bavail as u64).saturating_mul(st.f_bsize as u64);
    (tmpfs && free >= MEMORY_ROOM).then(|| p.to_path_buf())
}

/// No shared memory file system is used off Linux.
#[cfg(not(target_os = "linux"))]
fn memory_root() -> Option<PathBuf> {
    None
}

/// Where [`memory_root`] looks.
const MEMORY_DIR: &str = "/dev/shm";

/// The free space [`memory_root`] asks for: 1 GiB.
#[cfg(target_os = "linux")]
const MEMORY_ROOM: u64 = 1 << 30;

/// Every directory a base may have been made in (by this run or an earlier
/// one, whichever root was usable then).
fn known_roots() -> Vec<PathBuf> {
    let mut r = vec![temp_root()];
    if cfg!(target_os = "linux") {
        r.push(PathBuf::from(MEMORY_DIR));
    }
    r
}

/// Creates a directory only its creator writes and anyone may traverse
/// (0711; the mode is set after creation, so the umask cannot narrow it).
pub fn traversable_dir(p: &Path) -> Result<(), EvidenceError> {
    fs::DirBuilder::new()
        .mode(0o700)
        .create(p)
        .map_err(io_err(p))?;
    fs::set_permissions(p, fs::Permissions::from_mode(0o711)).map_err(io_err(p))
}

/// Creates a fresh base `<root>/ui-qa-<random>/work` and returns the base.
pub(super) fn create_base() -> Result<PathBuf, EvidenceError> {
    let root = shared_root();
    let mut last = None;
    for _ in 0..8 {
        let mut rnd = [0u8; 12];
        getrandom::fill(&mut rnd)
            .map_err(|e| io_err(&root)(std::io::Error::other(format!("no randomness: {e}"))))?;
        let base = root.join(format!("{PREFIX}{}", hex::encode(rnd)));
        match traversable_dir(&base) {
            Ok(()) => {
                traversable_dir(&base.join("work"))?;
                crate::process::guard_scratch(&base.join("work"));
                super::write_owner_file(&base.join("work").join(super::OWNER_FILE))?;
                return Ok(base);
            }
            Err(e @ EvidenceError::Exists(_)) => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or(EvidenceError::Exists(root)))
}

/// Creates `<base>/work/<name>` for `user` to use as `access` says.
pub(super) fn create_leaf(
    base: &Path,
    name: &str,
    user: HelperUser,
    access: HelperAccess,
) -> Result<PathBuf, EvidenceError> {
    let leaf = base.join("work").join(name);
    if access == HelperAccess::Reads {
        traversable_dir(&leaf)?;
        return Ok(leaf);
    }
    fs::DirBuilder::new()
        .mode(0o700)
        .create(&leaf)
        .map_err(io_err(&leaf))?;
    // Root alone writes in `work/`: the leaf is still the directory just
    // made when it is handed over.
    std::os::unix::fs::lchown(&leaf, Some(user.uid), Some(user.gid)).map_err(io_err(&leaf))?;
    Ok(leaf)
}

/// Removes a base and everything in it (symlinks are removed, never
/// followed) and drops its watchdog registration.
pub(super) fn remove_base(base: &Path) -> Result<(), EvidenceError> {
    match super::remove_tree(base) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io_err(base)(e)),
    }
    crate::process::release_scratch(&base.join("work"));
    Ok(())
}

/// The process a base's owner file (`work/.owner`) names, when ui-qa wrote
/// it (see `read_owner_file`).
pub(super) fn base_owner(base: &Path) -> Option<(u32, u64)> {
    super::read_owner_file(&base.join("work").join(super::OWNER_FILE))
}

/// Whether `name` has the shape of a base's name: `ui-qa-<24 hex digits>`.
fn base_name(name: &str) -> bool {
    name.strip_prefix(PREFIX)
        .is_some_and(|h| h.len() == 24 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Removes the bases in the shared roots that this user's runs made and
/// whose process is gone (its watchdog killed too, and its workspace
/// deleted, so no other sweep finds them): a directory named like a base,
/// not a symlink, of this user and writable by no one else, with an owner
/// file of ui-qa's naming a process that is no longer running. Anything
/// else — another user's base, one without an owner file, one whose
/// process still runs — is left alone.
pub(super) fn sweep_orphaned_bases() {
    for root in known_roots() {
        let Ok(entries) = fs::read_dir(&root) else {
            continue;
        };
        for e in entries.flatten() {
            if !e.file_name().to_str().is_some_and(base_name) {
                continue;
            }
            let base = e.path();
            if !super::own_private_dir(&base) || !super::own_private_dir(&base.join("work")) {
                continue;
            }
            if let Some((pid, start)) = base_owner(&base) {
                if !crate::process::identity_running(pid, start) {
                    let _ = remove_base(&base);
                }
            }
        }
    }
}

/// The base a run's `work/<entry>` symlink points into, when it is one of
/// ours: `<a known root>/ui-qa-<hex>/work/<name>`, the base a real directory
/// owned by this process's user.
pub(super) fn base_of_link(link: &Path) -> Option<PathBuf> {
    let meta = fs::symlink_metadata(link).ok()?;
    if !meta.file_type().is_symlink() {
        return None;
    }
    let target = fs::read_link(link).ok()?;
    let work = target.parent()?;
    let base = work.parent()?;
    let name = base.file_name()?.to_str()?;
    let ours = work.file_name()? == "work"
        && known_roots()
            .iter()
            .any(|r| Some(r.as_path()) == base.parent())
        && base_name(name);
    if !ours {
        return None;
    }
    super::own_private_dir(base).then(|| base.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_names_a_base_only_in_the_shared_root_with_our_name_shape() {
        let base = create_base().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good");
        std::os::unix::fs::symlink(base.join("work/profile"), &good).unwrap();
        assert_eq!(base_of_link(&good), Some(base.clone()));
        // Elsewhere, or another name: never ours to remove.
        let elsewhere = dir.path().join("elsewhere");
        std::os::unix::fs::symlink(dir.path().join("ui-qa-00/work/x"), &elsewhere).unwrap();
        assert_eq!(base_of_link(&elsewhere), None);
        let other = dir.path().join("other");
        std::os::unix::fs::symlink(shared_root().join("not-ours/work/x"), &other).unwrap();
        assert_eq!(base_of_link(&other), None);
        // The base is traversable, not listable, by other users.
        let mode = fs::metadata(&base).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o711);
        remove_base(&base).unwrap();
        assert!(!base.exists());
    }

    #[test]
    fn a_base_in_either_root_is_recognised_whichever_root_is_in_use_now() {
        // A base an earlier run made in the temporary directory (when the
        // memory root was full, say) is still found by a later sweep.
        let root = temp_root();
        let base = root.join(format!("{PREFIX}{}", hex::encode([7u8; 12])));
        traversable_dir(&base).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(base.join("work/profile"), &link).unwrap();
        let found = base_of_link(&link);
        fs::remove_dir(&base).unwrap();
        assert_eq!(found, Some(base));
        // The shared root is one of the known ones.
        assert!(known_roots().contains(&shared_root()));
    }
}
