//! The auth file and the auth-state cache on disk: every path is checked
//! for symlinks (every component, from the file system root down), files are
//! opened without following links, must be regular, owned by the user
//! running ui-qa and private (no group or other permission bits). New files
//! are created exclusively with mode 0600 in 0700 directories.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

/// The largest auth or state file read (bytes).
pub const MAX_FILE_BYTES: u64 = 4 << 20;

/// Why a private file was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// A component of the path is a symlink.
    Symlink(PathBuf),
    /// The file is not a regular file.
    NotRegular,
    /// Group or others may read or write it.
    Mode(u32),
    /// Another user owns it.
    Owner,
    /// It is larger than [`MAX_FILE_BYTES`].
    TooLarge,
    /// An I/O error.
    Io(String),
}

impl Refusal {
    /// What is wrong, naming the file.
    pub fn describe(&self, file: &Path) -> String {
        match self {
            Refusal::Symlink(p) => format!(
                "{} is refused: {} is a symbolic link (no symlink may be on the path of a private file)",
                file.display(),
                p.display()
            ),
            Refusal::NotRegular => format!("{} is refused: it is not a regular file", file.display()),
            Refusal::Mode(m) => format!(
                "{} is refused: its mode is {m:04o}; only its owner may read or write it (0600)",
                file.display()
            ),
            Refusal::Owner => format!(
                "{} is refused: it belongs to another user",
                file.display()
            ),
            Refusal::TooLarge => format!(
                "{} is refused: it is larger than {MAX_FILE_BYTES} bytes",
                file.display()
            ),
            Refusal::Io(e) => format!("{} could not be read: {e}", file.display()),
        }
    }

    /// How a person fixes it.
    pub fn fix(&self, file: &Path) -> String {
        match self {
            Refusal::Symlink(p) => format!(
                "replace the symbolic link {} with a real directory or file inside the project",
                p.display()
            ),
            Refusal::NotRegular => format!("make {} a regular file", file.display()),
            Refusal::Mode(_) => format!("run: chmod 600 {}", file.display()),
            Refusal::Owner => "the file must belong to the user who runs ui-qa: chown it, or recreate it as that user with mode 0600".to_string(),
            Refusal::TooLarge => "keep only the profiles you need in the file".to_string(),
            Refusal::Io(_) => format!("check that {} is readable by its owner", file.display()),
        }
    }
}

/// `p` made absolute (against the current directory) and lexically
/// normalized (no `.`; `..` removes the component before it).
pub fn absolute(p: &Path) -> PathBuf {
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(p)
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The first component of `p` (absolute) that is a symlink. Components that
/// do not exist end the check (nothing below them can be a link).
pub fn symlink_on_path(p: &Path) -> Option<PathBuf> {
    let mut cur = PathBuf::new();
    for c in p.components() {
        cur.push(c.as_os_str());
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => return Some(cur),
            Ok(_) => {}
            Err(_) => return None,
        }
    }
    None
}

/// Whether `p` exists (without following a final symlink).
pub fn exists(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok()
}

/// Reads a private file: no symlink on its path, regular, owned by this
/// user, no group/other bits, bounded.
pub fn read_private(p: &Path) -> Result<String, Refusal> {
    let p = absolute(p);
    if let Some(link) = symlink_on_path(&p) {
        return Err(Refusal::Symlink(link));
    }
    let mut f = open_nofollow(&p).map_err(|e| match e.raw_os_error() {
        Some(code) if code == libc_eloop() => Refusal::Symlink(p.clone()),
        _ => Refusal::Io(e.kind().to_string()),
    })?;
    let meta = f
        .metadata()
        .map_err(|e| Refusal::Io(e.kind().to_string()))?;
    if !meta.is_file() {
        return Err(Refusal::NotRegular);
    }
    check_private(&meta)?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(Refusal::TooLarge);
    }
    let mut s = String::new();
    f.read_to_string(&mut s)
        .map_err(|e| Refusal::Io(e.kind().to_string()))?;
    Ok(s)
}

#[cfg(unix)]
fn check_private(meta: &std::fs::Metadata) -> Result<(), Refusal> {
    use std::os::unix::fs::MetadataExt;
    let mode = meta.mode() & 0o7777;
    if mode & 0o077 != 0 {
        return Err(Refusal::Mode(mode));
    }
    #[allow(unsafe_code)]
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Err(Refusal::Owner);
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_private(_meta: &std::fs::Metadata) -> Result<(), Refusal> {
    Ok(())
}

#[cfg(unix)]
fn libc_eloop() -> i32 {
    libc::ELOOP
}

#[cfg(not(unix))]
fn libc_eloop() -> i32 {
    -1
}

#[cfg(unix)]
fn open_nofollow(p: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(p)
}

#[cfg(not(unix))]
fn open_nofollow(p: &Path) -> std::io::Result<File> {
    File::open(p)
}

/// Creates `dir` (and missing parents) with mode 0700 for what it creates;
/// refuses a symlink on the way.
pub fn private_dir(dir: &Path) -> Result<(), Refusal> {
    let dir = absolute(dir);
    if let Some(link) = symlink_on_path(&dir) {
        return Err(Refusal::Symlink(link));
    }
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(&dir)
        .map_err(|e| Refusal::Io(e.kind().to_string()))?;
    if let Some(link) = symlink_on_path(&dir) {
        return Err(Refusal::Symlink(link));
    }
    Ok(())
}

/// Creates a new private file (0600) with `contents`; fails if anything
/// exists at `p`.
pub fn create_private(p: &Path, contents: &[u8]) -> Result<(), Refusal> {
    let p = absolute(p);
    if let Some(parent) = p.parent() {
        private_dir(parent)?;
    }
    let mut o = OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
    }
    let mut f = o.open(&p).map_err(|e| Refusal::Io(e.kind().to_string()))?;
    f.write_all(contents)
        .and_then(|_| f.sync_all())
        .map_err(|e| Refusal::Io(e.kind().to_string()))
}

/// Replaces the private file `p` with `contents` atomically (a fresh 0600
/// file beside it, renamed over it).
pub fn replace_private(p: &Path, contents: &[u8]) -> Result<(), Refusal> {
    let p = absolute(p);
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = p.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    create_private(&tmp, contents)?;
    std::fs::rename(&tmp, &p).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Refusal::Io(e.kind().to_string())
    })
}
