//! Files ui-qa writes outside a run directory (JUnit reports, index
//! reports, merged report folders): readable by their owner only (files
//! 0600, directories 0700, whatever the umask), and never through a
//! symlink.

use std::io::{self, Write};
use std::path::Path;

/// Refuses `p` when it is a symlink.
fn refuse_symlink(p: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(p) {
        Ok(m) if m.file_type().is_symlink() => Err(io::Error::other(format!(
            "{} is a symlink; ui-qa never writes through one",
            p.display()
        ))),
        _ => Ok(()),
    }
}

/// Creates the directory `p` (0700); fails if it exists.
pub fn create_dir(p: &Path) -> io::Result<()> {
    #[cfg(unix)]
    let b = {
        use std::os::unix::fs::DirBuilderExt;
        let mut b = std::fs::DirBuilder::new();
        b.mode(0o700);
        b
    };
    #[cfg(not(unix))]
    let b = std::fs::DirBuilder::new();
    b.create(p)
}

/// Makes sure `p` is a directory that is not a symlink, creating it (0700)
/// when missing. Its parent must exist.
pub fn ensure_dir(p: &Path) -> io::Result<()> {
    refuse_symlink(p)?;
    match create_dir(p) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            refuse_symlink(p)?;
            if p.is_dir() {
                Ok(())
            } else {
                Err(io::Error::other(format!(
                    "{} exists and is not a directory",
                    p.display()
                )))
            }
        }
        Err(e) => Err(e),
    }
}

/// Writes a new file (0600) that must not exist; never follows a symlink.
pub fn write_new(p: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = qa_core::evidence::create_private_file(p).map_err(io::Error::other)?;
    f.write_all(bytes)
}

/// Writes `path` readable by its owner only (0600 whatever the umask; an
/// existing file is truncated and made private); a symlink at `path` is
/// refused, never followed.
pub fn write_replacing(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    let mut f = o.open(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    f.write_all(bytes)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn files_and_directories_are_private_and_symlinks_refused() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("d");
        ensure_dir(&d).unwrap();
        ensure_dir(&d).unwrap();
        assert_eq!(
            std::fs::metadata(&d).unwrap().permissions().mode() & 0o777,
            0o700
        );
        write_new(&d.join("a"), b"x").unwrap();
        assert!(write_new(&d.join("a"), b"y").is_err(), "never overwritten");
        assert_eq!(
            std::fs::metadata(d.join("a")).unwrap().permissions().mode() & 0o777,
            0o600
        );
        write_replacing(&d.join("a"), b"z").unwrap();
        assert_eq!(std::fs::read(d.join("a")).unwrap(), b"z");

        std::os::unix::fs::symlink(t.path(), t.path().join("link")).unwrap();
        assert!(ensure_dir(&t.path().join("link")).is_err());
        std::os::unix::fs::symlink(d.join("a"), t.path().join("flink")).unwrap();
        assert!(write_replacing(&t.path().join("flink"), b"w").is_err());
        assert!(write_new(&t.path().join("flink"), b"w").is_err());
        assert_eq!(std::fs::read(d.join("a")).unwrap(), b"z");
    }
}
