//! Files and directories created relative to a held directory handle, so
//! the program under test cannot redirect evidence by swapping a directory
//! for a symlink mid-run.
//!
//! On Linux every lookup goes through `openat2` with `RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS` (no `..`, no symlink anywhere on the way); on a
//! kernel without it (before 5.6) or another Unix, the path is walked one
//! component at a time with `O_NOFOLLOW | O_DIRECTORY`. Elsewhere the plain
//! path functions are used after a symlink check.

use std::fs::File;
use std::io;
use std::path::{Component, Path};

/// A directory held open.
#[derive(Debug)]
pub(super) struct Dir {
    /// The open directory (on Unix every lookup starts from it; elsewhere
    /// it is only held, and the plain-path fallback uses `path`).
    #[cfg_attr(not(unix), allow(dead_code))]
    file: File,
    #[cfg(not(unix))]
    path: std::path::PathBuf,
}

/// `(device, inode)` of an open file or a path.
pub(super) type Identity = (u64, u64);

fn plain_components(rel: &Path) -> io::Result<Vec<&std::ffi::OsStr>> {
    let mut out = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => out.push(n),
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "not a plain relative path",
                ))
            }
        }
    }
    if out.is_empty() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty path"));
    }
    Ok(out)
}

#[cfg(unix)]
mod imp {
    use super::*;
    use std::ffi::CString;
    use std::os::fd::{AsRawFd, FromRawFd};
    use std::os::unix::ffi::OsStrExt;

    fn cstr(s: &std::ffi::OsStr) -> io::Result<CString> {
        CString::new(s.as_bytes()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
    }

    fn check(fd: libc::c_int) -> io::Result<File> {
        if fd < 0 {
            Err(io::Error::last_os_error())
        } else {
            #[allow(unsafe_code)]
            // SAFETY: `fd` is a fresh descriptor we own.
            Ok(unsafe { File::from_raw_fd(fd) })
        }
    }

    /// `openat2(dir, rel, flags, mode, BENEATH|NO_SYMLINKS)`; `None` when
    /// the kernel has no openat2.
    #[cfg(target_os = "linux")]
    fn openat2(dir: &File, rel: &Path, flags: libc::c_int, mode: u32) -> Option<io::Result<File>> {
        let path = match cstr(rel.as_os_str()) {
            Ok(p) => p,
            Err(e) => return Some(Err(e)),
        };
        #[allow(unsafe_code)]
        // SAFETY: open_how is plain data; zeroed is a valid value.
        let mut how: libc::open_how = unsafe { std::mem::zeroed() };
        how.flags = (flags | libc::O_CLOEXEC) as u64;
        how.mode = u64::from(mode);
        how.resolve =
            libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS;
        #[allow(unsafe_code)]
        // SAFETY: openat2 with a valid dirfd, NUL-terminated path and open_how.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                dir.as_raw_fd(),
                path.as_ptr(),
                &how as *const libc::open_how,
                std::mem::size_of::<libc::open_how>(),
            )
        };
        if fd < 0 {
            let e = io::Error::last_os_error();
            if matches!(e.raw_os_error(), Some(libc::ENOSYS) | Some(libc::EPERM)) {
                return None; // no openat2 here (or filtered): walk instead
            }
            return Some(Err(e));
        }
        Some(check(fd as libc::c_int))
    }

    #[cfg(not(target_os = "linux"))]
    fn openat2(_: &File, _: &Path, _: libc::c_int, _: u32) -> Option<io::Result<File>> {
        None
    }

    /// Opens `name` (one component) in `dir` without following a symlink.
    fn openat(
        dir: &File,
        name: &std::ffi::OsStr,
        flags: libc::c_int,
        mode: u32,
    ) -> io::Result<File> {
        let n = cstr(name)?;
        #[allow(unsafe_code)]
        // SAFETY: openat with a valid dirfd and a NUL-terminated name.
        let fd = unsafe {
            libc::openat(
                dir.as_raw_fd(),
                n.as_ptr(),
                flags | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                mode as libc::c_uint,
            )
        };
        check(fd)
    }

    /// Walks to the parent of `rel` component by component.
    fn walk_parent<'a>(dir: &File, rel: &'a Path) -> io::Result<(File, &'a std::ffi::OsStr)> {
        let comps = plain_components(rel)?;
        let (last, parents) = comps.split_last().expect("non-empty");
        let mut cur = dir.try_clone()?;
        for c in parents {
            cur = openat(&cur, c, libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
        }
        Ok((cur, last))
    }

    impl Dir {
        /// Opens the directory at `path` — absolute and canonical — without
        /// following a symlink at any component: `openat2` from `/` with
        /// `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`, else one component at a
        /// time with `O_NOFOLLOW | O_DIRECTORY`. A symlink on the way (one
        /// swapped in after the path was resolved) fails with `ELOOP`.
        pub(in crate::evidence) fn open_no_symlinks(path: &Path) -> io::Result<Dir> {
            if !path.is_absolute() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "not an absolute path",
                ));
            }
            let root = File::open("/")?;
            let rel = path.strip_prefix("/").unwrap_or(path);
            if rel.as_os_str().is_empty() {
                return Ok(Dir { file: root });
            }
            let comps = plain_components(rel)?;
            let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW;
            if let Some(r) = openat2(&root, rel, flags, 0) {
                return r.map(|file| Dir { file });
            }
            let mut cur = root;
            for c in comps {
                cur = openat(&cur, c, libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
            }
            Ok(Dir { file: cur })
        }

        /// The user owning the directory.
        pub(in crate::evidence) fn owner(&self) -> io::Result<u32> {
            use std::os::unix::fs::MetadataExt;
            Ok(self.file.metadata()?.uid())
        }

        /// Creates the new directory `name` (one component, 0700) beneath
        /// this one and opens it; fails if anything is there.
        pub(in crate::evidence) fn create_dir(&self, name: &Path) -> io::Result<Dir> {
            let (parent, last) = walk_parent(&self.file, name)?;
            let n = cstr(last)?;
            #[allow(unsafe_code)]
            // SAFETY: mkdirat with a valid dirfd and a NUL-terminated name.
            let r = unsafe { libc::mkdirat(parent.as_raw_fd(), n.as_ptr(), 0o700) };
            if r != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(Dir {
                file: openat(&parent, last, libc::O_RDONLY | libc::O_DIRECTORY, 0)?,
            })
        }

        /// The handle's `(device, inode)`.
        pub(in crate::evidence) fn identity(&self) -> io::Result<Identity> {
            use std::os::unix::fs::MetadataExt;
            let m = self.file.metadata()?;
            Ok((m.dev(), m.ino()))
        }

        /// Opens `rel` beneath this directory (no `..`, no symlinks).
        pub(in crate::evidence) fn open_file(&self, rel: &Path) -> io::Result<File> {
            plain_components(rel)?;
            if let Some(r) = openat2(&self.file, rel, libc::O_RDONLY | libc::O_NOFOLLOW, 0) {
                return r;
            }
            let (parent, last) = walk_parent(&self.file, rel)?;
            openat(&parent, last, libc::O_RDONLY, 0)
        }

        /// Creates the new file `rel` (0600) beneath this directory; fails
        /// if it exists.
        pub(in crate::evidence) fn create_file(&self, rel: &Path) -> io::Result<File> {
            plain_components(rel)?;
            let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
            if let Some(r) = openat2(&self.file, rel, flags, 0o600) {
                return r;
            }
            let (parent, last) = walk_parent(&self.file, rel)?;
            openat(
                &parent,
                last,
                libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL,
                0o600,
            )
        }

        /// Removes the file `rel` beneath this directory (never through a
        /// symlink).
        pub(in crate::evidence) fn remove_file(&self, rel: &Path) -> io::Result<()> {
            let (parent, last) = walk_parent(&self.file, rel)?;
            let n = cstr(last)?;
            #[allow(unsafe_code)]
            // SAFETY: unlinkat with a valid dirfd and a NUL-terminated name.
            let r = unsafe { libc::unlinkat(parent.as_raw_fd(), n.as_ptr(), 0) };
            if r == 0 {
                Ok(())
            } else {
                Err(io::Error::last_os_error())
            }
        }

        /// Creates the directory `rel` (0700) beneath this one if missing
        /// (its parent must exist) and opens it; a symlink there is refused.
        pub(in crate::evidence) fn ensure_dir(&self, rel: &Path) -> io::Result<Dir> {
            let (parent, last) = walk_parent(&self.file, rel)?;
            let n = cstr(last)?;
            #[allow(unsafe_code)]
            // SAFETY: mkdirat with a valid dirfd and a NUL-terminated name.
            let r = unsafe { libc::mkdirat(parent.as_raw_fd(), n.as_ptr(), 0o700) };
            if r != 0 {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::AlreadyExists {
                    return Err(e);
                }
            }
            Ok(Dir {
                file: openat(&parent, last, libc::O_RDONLY | libc::O_DIRECTORY, 0)?,
            })
        }
    }
}

#[cfg(not(unix))]
mod imp {
    //! Without directory handles: plain paths, refusing symlinks first.
    use super::*;

    fn refuse_links(root: &Path, rel: &Path) -> io::Result<std::path::PathBuf> {
        let mut p = root.to_path_buf();
        for c in plain_components(rel)? {
            p.push(c);
            if std::fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(io::Error::new(io::ErrorKind::InvalidInput, "symlink"));
            }
        }
        Ok(p)
    }

    /// Opens a directory as a file. Windows refuses a directory to a plain
    /// open; `FILE_FLAG_BACKUP_SEMANTICS` is the flag that allows it (the
    /// handle keeps the directory from being removed or renamed while held).
    fn open_dir(path: &Path) -> io::Result<File> {
        #[cfg(windows)]
        {
            use std::os::windows::fs::OpenOptionsExt;
            /// `FILE_FLAG_BACKUP_SEMANTICS`.
            const BACKUP_SEMANTICS: u32 = 0x0200_0000;
            std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(BACKUP_SEMANTICS)
                .open(path)
        }
        #[cfg(not(windows))]
        {
            File::open(path)
        }
    }

    impl Dir {
        pub(in crate::evidence) fn open(path: &Path) -> io::Result<Dir> {
            Ok(Dir {
                file: open_dir(path)?,
                path: path.to_path_buf(),
            })
        }
        pub(in crate::evidence) fn open_no_symlinks(path: &Path) -> io::Result<Dir> {
            let mut p = std::path::PathBuf::new();
            for c in path.components() {
                p.push(c);
                if std::fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink()) {
                    return Err(io::Error::new(io::ErrorKind::InvalidInput, "symlink"));
                }
            }
            Dir::open(path)
        }
        pub(in crate::evidence) fn create_dir(&self, name: &Path) -> io::Result<Dir> {
            let p = refuse_links(&self.path, name)?;
            std::fs::create_dir(&p)?;
            Dir::open(&p)
        }
        pub(in crate::evidence) fn identity(&self) -> io::Result<Identity> {
            Ok((0, 0))
        }
        pub(in crate::evidence) fn open_file(&self, rel: &Path) -> io::Result<File> {
            File::open(refuse_links(&self.path, rel)?)
        }
        pub(in crate::evidence) fn create_file(&self, rel: &Path) -> io::Result<File> {
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(refuse_links(&self.path, rel)?)
        }
        pub(in crate::evidence) fn remove_file(&self, rel: &Path) -> io::Result<()> {
            std::fs::remove_file(refuse_links(&self.path, rel)?)
        }
        pub(in crate::evidence) fn ensure_dir(&self, rel: &Path) -> io::Result<Dir> {
            let p = refuse_links(&self.path, rel)?;
            match std::fs::create_dir(&p) {
                Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
                _ => {}
            }
            Dir::open(&p)
        }
    }
}

/// `(device, inode)` of what `path` names now, following symlinks — what a
/// person opening the path would get.
pub(super) fn identity_of(path: &Path) -> io::Result<Identity> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path)?;
        Ok((m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        std::fs::metadata(path).map(|_| (0, 0))
    }
}

/// `(device, inode)` of an open file.
pub(super) fn identity_of_file(f: &File) -> io::Result<Identity> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let m = f.metadata()?;
        Ok((m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        f.metadata().map(|_| (0, 0))
    }
}
