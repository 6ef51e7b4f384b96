//! The evidence store: one private run directory per run, artifacts created
//! fresh inside it, hashed, scanned for secrets and published.
//!
//! Layout: `<workspace>/runs/<run-id>/{flow.jsonc, result.json,
//! progress.jsonl, artifacts/<group>/<file>, work/<scratch>}`. Directories
//! are 0700 and files 0600 on POSIX. No path component inside the workspace
//! may be a symlink, names may not contain `/` or `..`, and no file is ever
//! overwritten.

use crate::secrets::Secrets;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
mod beneath;
mod home;
pub use home::HOME_VARS;
#[cfg(unix)]
mod helper;
#[cfg(unix)]
pub use helper::traversable_dir;

use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The user a helper process runs as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HelperUser {
    /// Its user id.
    pub uid: u32,
    /// Its group id.
    pub gid: u32,
}

/// What a helper does in a scratch directory made for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HelperAccess {
    /// It writes there (a profile, downloads): the directory is its own,
    /// 0700. Open what it leaves without following symlinks.
    Writes,
    /// It only reads files ui-qa puts there (uploads): the directory stays
    /// root's, 0711, and ui-qa hands each file to the helper (0600, owned
    /// by it), so the helper can never move an entry under ui-qa.
    Reads,
}

/// Typed artifact groups of the result document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ArtifactGroup {
    /// PNG screenshots.
    Screenshots,
    /// Videos and terminal replays (asciicast).
    Videos,
    /// Performance traces and summaries.
    Traces,
    /// Terminal screen captures (text).
    TerminalCaptures,
    /// Accessibility snapshots (JSON).
    AccessibilitySnapshots,
    /// Observation documents.
    Observations,
    /// Downloads kept from the page.
    Downloads,
    /// Console and network logs.
    Logs,
}

impl ArtifactGroup {
    /// Every group, in result order.
    pub const ALL: [ArtifactGroup; 8] = [
        ArtifactGroup::Screenshots,
        ArtifactGroup::Videos,
        ArtifactGroup::Traces,
        ArtifactGroup::TerminalCaptures,
        ArtifactGroup::AccessibilitySnapshots,
        ArtifactGroup::Observations,
        ArtifactGroup::Downloads,
        ArtifactGroup::Logs,
    ];

    /// Directory name under `artifacts/`.
    pub fn dir(self) -> &'static str {
        match self {
            ArtifactGroup::Screenshots => "screenshots",
            ArtifactGroup::Videos => "videos",
            ArtifactGroup::Traces => "traces",
            ArtifactGroup::TerminalCaptures => "terminal",
            ArtifactGroup::AccessibilitySnapshots => "accessibility",
            ArtifactGroup::Observations => "observations",
            ArtifactGroup::Downloads => "downloads",
            ArtifactGroup::Logs => "logs",
        }
    }
}

/// One published artifact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    /// Its group.
    #[serde(skip)]
    pub group: Option<ArtifactGroup>,
    /// Absolute path.
    pub path: String,
    /// `file:` URI of the path.
    pub uri: String,
    /// Size in bytes.
    pub bytes: u64,
    /// SHA-256 of the contents, lowercase hex.
    pub sha256: String,
    /// 1-based index of the step that produced it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<usize>,
    /// For a recording (video, replay): when its first frame was taken, in
    /// milliseconds after the run started, so a viewer can place the steps
    /// (`steps[].startedMs`) on its timeline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_ms: Option<u64>,
    /// For a video: where its timeline was paused to keep a result on
    /// screen (see [`VideoHold`]), in order. A moment `t` of the run
    /// (`steps[].startedMs`) is shown at `t - startedMs` plus the lengths
    /// of the holds at or before `t`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub holds: Vec<VideoHold>,
}

/// A pause in a video's timeline: the frame shown at `at_ms` stays for
/// `ms` more while the run went on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VideoHold {
    /// When, in milliseconds after the run started.
    pub at_ms: u64,
    /// How long the frame is held, in milliseconds.
    pub ms: u64,
}

impl Artifact {
    /// Where the moment `at_ms` of the run (milliseconds after it started)
    /// is in this recording, in milliseconds after its first frame
    /// (`None`: not a recording). A moment before the recording is at 0.
    pub fn recording_ms(&self, at_ms: u64) -> Option<u64> {
        let origin = self.started_ms?;
        let held: u64 = self
            .holds
            .iter()
            .filter(|h| h.at_ms <= at_ms)
            .map(|h| h.ms)
            .sum();
        Some(at_ms.saturating_sub(origin) + if at_ms >= origin { held } else { 0 })
    }
}

/// An artifact withheld because it contained a secret (its file is deleted).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WithheldArtifact {
    /// The file name that was withheld.
    pub name: String,
    /// Why.
    pub reason: String,
}

/// Evidence store errors.
#[derive(Debug, thiserror::Error)]
pub enum EvidenceError {
    /// A name with a separator, `..`, or an absolute path.
    #[error("evidence.unsafe_name: {0:?} is not a plain file name")]
    UnsafeName(String),
    /// A path component inside the workspace is a symlink.
    #[error("evidence.symlink: {0} is a symlink; evidence is never written through symlinks")]
    Symlink(PathBuf),
    /// The file (or run directory) already exists.
    #[error("evidence.exists: {0} already exists; evidence is never overwritten")]
    Exists(PathBuf),
    /// The run directory, or a directory or file in it, was replaced while
    /// the run went (for example by a symlink to somewhere else): the path
    /// no longer names what ui-qa wrote.
    #[error("evidence.swapped: {0} was replaced during the run; its evidence cannot be trusted")]
    Swapped(PathBuf),
    /// The workspace (or the project it would be made in) belongs to
    /// another user than the one ui-qa runs as: that user could redirect or
    /// read evidence there, so it is never adopted.
    #[error("evidence.owner: {path} belongs to {owner}, not to {me} that ui-qa runs as; evidence is never written in another user's directory. Pass --workspace DIR with a directory of your own")]
    ForeignOwner {
        /// The directory.
        path: PathBuf,
        /// Its owner (`uid N (name)`).
        owner: String,
        /// The user ui-qa runs as, the same way.
        me: String,
    },
    /// Any other I/O error.
    #[error("evidence.io: {path}: {source}")]
    Io {
        /// Where.
        path: PathBuf,
        /// What.
        source: io::Error,
    },
}

impl EvidenceError {
    /// The stable code.
    pub fn code(&self) -> crate::codes::CoreCode {
        use crate::codes::CoreCode;
        match self {
            EvidenceError::UnsafeName(_) => CoreCode::EvidenceUnsafeName,
            EvidenceError::Symlink(_) => CoreCode::EvidenceSymlink,
            EvidenceError::Exists(_) => CoreCode::EvidenceExists,
            EvidenceError::Swapped(_) => CoreCode::EvidenceSwapped,
            EvidenceError::ForeignOwner { .. } => CoreCode::EvidenceForeignOwner,
            EvidenceError::Io { .. } => CoreCode::EvidenceIo,
        }
    }
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> EvidenceError + '_ {
    move |source| {
        #[cfg(unix)]
        let link = matches!(
            source.raw_os_error(),
            Some(libc::ELOOP) | Some(libc::EXDEV) | Some(libc::ENOTDIR)
        );
        #[cfg(not(unix))]
        let link = false;
        if source.kind() == io::ErrorKind::AlreadyExists {
            EvidenceError::Exists(path.to_path_buf())
        } else if link {
            EvidenceError::Symlink(path.to_path_buf())
        } else {
            EvidenceError::Io {
                path: path.to_path_buf(),
                source,
            }
        }
    }
}

/// Checks that `name` is one plain path component made only of ASCII
/// letters, digits, `-`, `_` and `.` (not starting with `.`), at most 200
/// bytes: no separators, no control characters, nothing a terminal would
/// interpret when the name is printed.
pub fn check_name(name: &str) -> Result<(), EvidenceError> {
    let p = Path::new(name);
    let mut comps = p.components();
    let ok = matches!(
        (comps.next(), comps.next()),
        (Some(Component::Normal(_)), None)
    ) && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && name.len() <= 200;
    if ok {
        Ok(())
    } else {
        Err(EvidenceError::UnsafeName(name.to_string()))
    }
}

fn refuse_symlink(p: &Path) -> Result<(), EvidenceError> {
    match fs::symlink_metadata(p) {
        Ok(m) if m.file_type().is_symlink() => Err(EvidenceError::Symlink(p.to_path_buf())),
        _ => Ok(()),
    }
}

/// Creates one private directory (0700); fails if it exists.
fn create_private_dir(p: &Path) -> Result<(), EvidenceError> {
    #[cfg(unix)]
    let b = {
        use std::os::unix::fs::DirBuilderExt;
        let mut b = fs::DirBuilder::new();
        b.mode(0o700);
        b
    };
    #[cfg(not(unix))]
    let b = fs::DirBuilder::new();
    b.create(p).map_err(io_err(p))
}

/// Creates a new private file (0600) that must not exist; never follows a symlink.
pub fn create_private_file(p: &Path) -> Result<File, EvidenceError> {
    let mut o = OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    o.open(p).map_err(io_err(p))
}

/// The file in `work/` that names the process owning a run's scratch.
const OWNER_FILE: &str = ".owner";

/// The user ui-qa runs as (its effective uid).
#[cfg(unix)]
fn my_uid() -> u32 {
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    #[allow(unsafe_code)]
    unsafe {
        libc::geteuid()
    }
}

/// `uid N (name)`, the name from the user database when it has one.
#[cfg(unix)]
fn user_label(uid: u32) -> String {
    let mut pw = std::mem::MaybeUninit::<libc::passwd>::uninit();
    let mut buf = vec![0 as libc::c_char; 4096];
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: getpwuid_r fills `pw` and `buf` (its length given) and sets
    // `out` to `pw` on success; the name is read only then, while `buf`
    // lives.
    #[allow(unsafe_code)]
    let name = unsafe {
        let r = libc::getpwuid_r(uid, pw.as_mut_ptr(), buf.as_mut_ptr(), buf.len(), &mut out);
        if r == 0 && !out.is_null() && !(*out).pw_name.is_null() {
            Some(
                std::ffi::CStr::from_ptr((*out).pw_name)
                    .to_string_lossy()
                    .into_owned(),
            )
        } else {
            None
        }
    };
    match name {
        Some(n) => format!("uid {uid} ({n})"),
        None => format!("uid {uid}"),
    }
}

/// Fails with [`EvidenceError::ForeignOwner`] unless `owner` is the user
/// ui-qa runs as.
#[cfg(unix)]
fn check_owner(path: &Path, owner: u32) -> Result<(), EvidenceError> {
    let me = my_uid();
    if owner == me {
        Ok(())
    } else {
        Err(EvidenceError::ForeignOwner {
            path: path.to_path_buf(),
            owner: user_label(owner),
            me: user_label(me),
        })
    }
}

/// Checks the directory a default workspace (`<root>/.ui-qa`) would be
/// made or found in: the project root must belong to the user ui-qa runs
/// as, and a `.ui-qa` there must be a directory of that user, not a
/// symlink. Answers the workspace path. A project of another user is
/// refused with [`EvidenceError::ForeignOwner`] (which names the owner and
/// `--workspace`), never adopted. Not on Unix: no check.
pub fn default_workspace(root: &Path) -> Result<PathBuf, EvidenceError> {
    let ws = root.join(".ui-qa");
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let m = fs::metadata(root).map_err(io_err(root))?;
        check_owner(root, m.uid())?;
        if let Ok(m) = fs::symlink_metadata(&ws) {
            if m.file_type().is_symlink() {
                return Err(EvidenceError::Symlink(ws));
            }
            check_owner(&ws, m.uid())?;
        }
    }
    Ok(ws)
}

/// Opens the workspace, creating it (0700, with any missing parent) when it
/// does not exist, and answers its canonical path. Its parent is resolved
/// (a symlink there is the caller's choice); the workspace itself is
/// opened beneath that without following a symlink at any component, must
/// be a directory (a symlink is refused with [`EvidenceError::Symlink`])
/// and must belong to the user ui-qa runs as
/// ([`EvidenceError::ForeignOwner`]).
pub fn open_workspace(workspace: &Path) -> Result<PathBuf, EvidenceError> {
    workspace_dir(workspace).map(|(p, _)| p)
}

/// [`open_workspace`], with the workspace held open.
fn workspace_dir(workspace: &Path) -> Result<(PathBuf, beneath::Dir), EvidenceError> {
    let abs = if workspace.is_absolute() {
        workspace.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(io_err(workspace))?
            .join(workspace)
    };
    // A path ending in `..` (or `/`) has no name of its own: resolve it.
    let abs = match abs.file_name() {
        Some(_) => abs,
        None => abs.canonicalize().map_err(io_err(workspace))?,
    };
    let (Some(parent), Some(name)) = (abs.parent(), abs.file_name()) else {
        return Err(EvidenceError::UnsafeName(workspace.display().to_string()));
    };
    if !parent.exists() {
        // Private whatever the umask: the mode is 0700 before the umask
        // can only take bits away.
        let mut b = fs::DirBuilder::new();
        b.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            b.mode(0o700);
        }
        b.create(parent).map_err(io_err(parent))?;
    }
    let parent = parent.canonicalize().map_err(io_err(parent))?;
    let ws = parent.join(name);
    let above = beneath::Dir::open_no_symlinks(&parent).map_err(io_err(&parent))?;
    let dir = above.ensure_dir(Path::new(name)).map_err(io_err(&ws))?;
    #[cfg(unix)]
    check_owner(&ws, dir.owner().map_err(io_err(&ws))?)?;
    Ok((ws, dir))
}

/// What an owner file (`.owner`: `<pid> <start time>`) names, when it is
/// one ui-qa wrote: a regular file (not a symlink) of the user ui-qa runs
/// as, not writable by anyone else, a few bytes long.
fn read_owner_file(p: &Path) -> Option<(u32, u64)> {
    let mut o = OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let f = o.open(p).ok()?;
    let m = f.metadata().ok()?;
    if !m.is_file() || m.len() > 64 {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if m.uid() != my_uid() || m.mode() & 0o022 != 0 {
            return None;
        }
    }
    let mut text = String::new();
    f.take(64).read_to_string(&mut text).ok()?;
    let mut words = text.split_whitespace().map(str::parse::<u64>);
    let (Some(Ok(pid)), Some(Ok(start)), None) = (words.next(), words.next(), words.next()) else {
        return None;
    };
    Some((u32::try_from(pid).ok()?, start))
}

/// Writes the owner file `p` naming this process, when it has an identity
/// (Linux): created fresh, 0600, never through a symlink.
fn write_owner_file(p: &Path) -> Result<(), EvidenceError> {
    if let Some((pid, start)) = crate::process::self_identity() {
        let mut f = create_private_file(p)?;
        let _ = writeln!(f, "{pid} {start}");
    }
    Ok(())
}

/// Whether `p` (not followed) is a directory of the user ui-qa runs as
/// that no one else may write in.
fn own_private_dir(p: &Path) -> bool {
    let Ok(m) = fs::symlink_metadata(p) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if m.uid() != my_uid() || m.mode() & 0o022 != 0 {
            return false;
        }
    }
    m.is_dir()
}

/// How often one process sweeps the same workspace at most.
const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(30);

/// Whether this process should sweep `runs` now: the first time it creates
/// a run there, then at most every [`SWEEP_EVERY`]. Scratch left by a dead
/// process is found by the first run of the next one; sweeping before every
/// run of a suite cost each run a look at every earlier run of the suite
/// (a 500-flow terminal suite went from 20 ms to 26 ms a flow).
fn sweep_due(runs: &Path) -> bool {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    use std::time::Instant;
    static LAST: OnceLock<Mutex<HashMap<PathBuf, Instant>>> = OnceLock::new();
    let mut last = LAST
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let now = Instant::now();
    match last.get(runs) {
        Some(t) if now.duration_since(*t) < SWEEP_EVERY => false,
        _ => {
            last.insert(runs.to_path_buf(), now);
            true
        }
    }
}

/// Removes the `work/` scratch of earlier runs in this workspace whose
/// owning process is gone (killed before it could clean up, and with no
/// watchdog left to do it): a browser profile or other run state is never
/// left at rest. Only what this user's runs made and can be proved dead is
/// removed: the run directory, its `work/` and the owner file in it must
/// be this user's (not symlinks, not writable by others), and the owner
/// file must name a process that is no longer running. A helper's scratch
/// base linked from `work/` goes only when its own owner file names that
/// same dead process (a link to another run's base is just unlinked).
/// Symlinks are never followed.
fn sweep_orphaned_scratch(runs: &Path) {
    let Ok(entries) = fs::read_dir(runs) else {
        return;
    };
    for e in entries.flatten() {
        let run = e.path();
        let work = run.join("work");
        if !own_private_dir(&run) || !own_private_dir(&work) {
            continue;
        }
        let Some((pid, start)) = read_owner_file(&work.join(OWNER_FILE)) else {
            continue;
        };
        if crate::process::identity_running(pid, start) {
            continue;
        }
        // A helper's scratch outside the run, linked from `work/`.
        #[cfg(unix)]
        for entry in fs::read_dir(&work).into_iter().flatten().flatten() {
            if let Some(base) = helper::base_of_link(&entry.path()) {
                if helper::base_owner(&base) == Some((pid, start)) {
                    let _ = helper::remove_base(&base);
                }
            }
        }
        let _ = fs::remove_dir_all(&work);
    }
    // Helper bases whose runs' workspaces are gone.
    #[cfg(unix)]
    helper::sweep_orphaned_bases();
}

/// The `file:` URI of an absolute path.
pub fn file_uri(p: &Path) -> String {
    url::Url::from_file_path(p)
        .map(|u| u.to_string())
        .unwrap_or_else(|_| format!("file://{}", p.display()))
}

/// The run directory and everything published into it.
#[derive(Debug)]
pub struct Evidence {
    run_dir: PathBuf,
    /// The run directory, held open: every file is created beneath it.
    root: beneath::Dir,
    /// Its `(device, inode)` when the run began.
    root_id: beneath::Identity,
    secrets: Arc<Secrets>,
    published: Mutex<Vec<Artifact>>,
    withheld: Mutex<Vec<WithheldArtifact>>,
    names: Mutex<HashSet<PathBuf>>,
    /// Published artifacts kept only when the run does not pass
    /// (`retain-on-failure` recordings).
    conditional: Mutex<HashSet<PathBuf>>,
    /// When the store (and so the run) was created.
    started: Instant,
    /// The base of the scratch shared with a helper user, once made.
    #[cfg(unix)]
    helper_base: Mutex<Option<PathBuf>>,
}

impl Evidence {
    /// Creates `<workspace>/runs/<run_id>/` fresh. The run id must be a plain
    /// name; the run directory must not exist; no component inside the
    /// workspace may be a symlink.
    pub fn create(
        workspace: &Path,
        run_id: &str,
        secrets: Arc<Secrets>,
    ) -> Result<Evidence, EvidenceError> {
        check_name(run_id)?;
        let (ws, ws_dir) = workspace_dir(workspace)?;
        let runs = ws.join("runs");
        let runs_dir = ws_dir
            .ensure_dir(Path::new("runs"))
            .map_err(io_err(&runs))?;
        #[cfg(unix)]
        check_owner(&runs, runs_dir.owner().map_err(io_err(&runs))?)?;
        if sweep_due(&runs) {
            sweep_orphaned_scratch(&runs);
        }
        let run_dir = runs.join(run_id);
        let root = runs_dir
            .create_dir(Path::new(run_id))
            .map_err(io_err(&run_dir))
            .map_err(|e| match (e, refuse_symlink(&run_dir)) {
                (EvidenceError::Exists(_), Err(link)) => link,
                (e, _) => e,
            })?;
        let root_id = root.identity().map_err(io_err(&run_dir))?;
        let e = Evidence {
            run_dir,
            root,
            root_id,
            secrets,
            published: Mutex::new(Vec::new()),
            withheld: Mutex::new(Vec::new()),
            names: Mutex::new(HashSet::new()),
            conditional: Mutex::new(HashSet::new()),
            started: Instant::now(),
            #[cfg(unix)]
            helper_base: Mutex::new(None),
        };
        e.root
            .ensure_dir(Path::new("artifacts"))
            .map_err(io_err(&e.run_dir.join("artifacts")))?;
        Ok(e)
    }

    /// When the run started (the store is created first).
    pub fn started(&self) -> Instant {
        self.started
    }

    /// Milliseconds from the run's start to `t` (0 before it).
    pub fn offset_ms(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.started).as_millis() as u64
    }

    /// The absolute run directory.
    pub fn run_dir(&self) -> &Path {
        &self.run_dir
    }

    /// The secrets used to scan artifacts.
    pub fn secrets(&self) -> &Arc<Secrets> {
        &self.secrets
    }

    /// A fresh private scratch directory `work/<name>` (for example a browser
    /// profile). Scratch files are not published.
    pub fn scratch_dir(&self, name: &str) -> Result<PathBuf, EvidenceError> {
        check_name(name)?;
        let work = self.work_dir()?;
        let d = work.join(name);
        refuse_symlink(&d)?;
        create_private_dir(&d)?;
        Ok(d)
    }

    /// `work/`, created (with its owner file, guarded by the watchdog) on
    /// first use.
    fn work_dir(&self) -> Result<PathBuf, EvidenceError> {
        let work = self.run_dir.join("work");
        self.check_root()?;
        refuse_symlink(&work)?;
        match create_private_dir(&work) {
            Ok(()) => {
                // Who owns it, for the sweep of a later run; and the
                // watchdog removes it if this process dies first.
                write_owner_file(&work.join(OWNER_FILE))?;
                crate::process::guard_scratch(&work);
            }
            Err(EvidenceError::Exists(_)) => refuse_symlink(&work)?,
            Err(e) => return Err(e),
        }
        Ok(work)
    }

    /// A fresh scratch directory `name` that a helper process running as
    /// `user` can use as `access` says (the browser, when ui-qa is root), in
    /// the system's temporary directory, because the run directory is not
    /// reachable by another user. `work/<name>` in the run is a symlink to
    /// it; it is removed with the rest of the scratch. See the `helper`
    /// module for the layout.
    #[cfg(unix)]
    pub fn scratch_dir_for(
        &self,
        name: &str,
        user: HelperUser,
        access: HelperAccess,
    ) -> Result<PathBuf, EvidenceError> {
        check_name(name)?;
        let work = self.work_dir()?;
        let link = work.join(name);
        if fs::symlink_metadata(&link).is_ok() {
            return Err(EvidenceError::Exists(link));
        }
        let base = {
            let mut b = self.helper_base.lock().expect("helper base lock");
            match &*b {
                Some(base) => base.clone(),
                None => {
                    let base = helper::create_base()?;
                    *b = Some(base.clone());
                    base
                }
            }
        };
        let leaf = helper::create_leaf(&base, name, user, access)?;
        std::os::unix::fs::symlink(&leaf, &link).map_err(io_err(&link))?;
        Ok(leaf)
    }

    /// Deletes every scratch directory (`work/`). Scratch is never
    /// published and may hold sensitive state (a browser profile with
    /// cookies), so the runner removes it when the run ends. Symlinks inside
    /// are removed, never followed.
    pub fn remove_scratch(&self) -> Result<(), EvidenceError> {
        #[cfg(unix)]
        if let Some(base) = self.helper_base.lock().expect("helper base lock").take() {
            helper::remove_base(&base)?;
        }
        let work = self.run_dir.join("work");
        refuse_symlink(&work)?;
        let r = match remove_tree(&work) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io_err(&work)(e)),
        };
        if r.is_ok() {
            crate::process::release_scratch(&work);
        }
        r
    }

    /// A path for a new file in the run root itself (`result.json`, …).
    pub fn root_file(&self, name: &str) -> Result<(PathBuf, File), EvidenceError> {
        check_name(name)?;
        let p = self.run_dir.join(name);
        let f = self.root.create_file(Path::new(name)).map_err(io_err(&p))?;
        Ok((p, f))
    }

    /// Fails with [`EvidenceError::Swapped`] if the run directory's path no
    /// longer names the directory this store holds open.
    fn check_root(&self) -> Result<(), EvidenceError> {
        match beneath::identity_of(&self.run_dir) {
            Ok(id) if id == self.root_id => Ok(()),
            _ => Err(EvidenceError::Swapped(self.run_dir.clone())),
        }
    }

    /// Fails with [`EvidenceError::Swapped`] unless `path` (absolute, in
    /// this run directory) still names, when followed as a person would,
    /// the very file reached beneath the held run directory.
    fn check_path(&self, path: &Path) -> Result<File, EvidenceError> {
        self.check_root()?;
        let rel = path
            .strip_prefix(&self.run_dir)
            .map_err(|_| EvidenceError::UnsafeName(path.display().to_string()))?;
        let f = self
            .root
            .open_file(rel)
            .map_err(|e| match io_err(path)(e) {
                EvidenceError::Symlink(p) => EvidenceError::Swapped(p),
                other => other,
            })?;
        let held = beneath::identity_of_file(&f).map_err(io_err(path))?;
        match beneath::identity_of(path) {
            Ok(id) if id == held => Ok(f),
            _ => Err(EvidenceError::Swapped(path.to_path_buf())),
        }
    }

    /// Checks that the run directory and every published artifact are still
    /// where the result says (nothing was swapped for a symlink). Returns
    /// what no longer is.
    pub fn verify(&self) -> Vec<EvidenceError> {
        let mut bad = Vec::new();
        if let Err(e) = self.check_root() {
            bad.push(e);
            return bad;
        }
        for a in self.artifacts() {
            if let Err(e) = self.check_path(Path::new(&a.path)) {
                bad.push(e);
            }
        }
        bad
    }

    /// Picks a free file name in a group: `base.ext`, then `base-2.ext`, …
    pub fn unique_name(&self, group: ArtifactGroup, base: &str, ext: &str) -> String {
        let dir = self.run_dir.join("artifacts").join(group.dir());
        let names = self.names.lock().expect("names lock");
        for i in 1.. {
            let n = if i == 1 {
                format!("{base}.{ext}")
            } else {
                format!("{base}-{i}.{ext}")
            };
            let p = dir.join(&n);
            if !names.contains(&p) && !p.exists() {
                return n;
            }
        }
        unreachable!()
    }

    /// Creates a new, empty artifact file `artifacts/<group>/<name>`.
    pub fn new_file(
        &self,
        group: ArtifactGroup,
        name: &str,
    ) -> Result<(PathBuf, File), EvidenceError> {
        check_name(name)?;
        let rel_dir = Path::new("artifacts").join(group.dir());
        let dir = self.run_dir.join(&rel_dir);
        self.root.ensure_dir(&rel_dir).map_err(io_err(&dir))?;
        let p = dir.join(name);
        let f = self
            .root
            .create_file(&rel_dir.join(name))
            .map_err(io_err(&p))?;
        self.names.lock().expect("names lock").insert(p.clone());
        Ok((p, f))
    }

    /// Writes a whole artifact and publishes it. `None` when it was withheld
    /// because it contained a secret.
    pub fn write(
        &self,
        group: ArtifactGroup,
        name: &str,
        bytes: &[u8],
        step: Option<usize>,
    ) -> Result<Option<Artifact>, EvidenceError> {
        let (p, mut f) = self.new_file(group, name)?;
        f.write_all(bytes).map_err(io_err(&p))?;
        f.sync_all().ok();
        drop(f);
        self.publish(group, &p, step)
    }

    /// Writes a whole recording (a terminal replay) whose time 0 was
    /// `started_ms` after the run started, and publishes it (see
    /// [`Evidence::publish_recording`]).
    pub fn write_recording(
        &self,
        group: ArtifactGroup,
        name: &str,
        bytes: &[u8],
        started_ms: u64,
    ) -> Result<Option<Artifact>, EvidenceError> {
        let (p, mut f) = self.new_file(group, name)?;
        f.write_all(bytes).map_err(io_err(&p))?;
        f.sync_all().ok();
        drop(f);
        self.publish_recording(group, &p, None, started_ms, Vec::new())
    }

    /// Hashes, scans and publishes a file created with [`Evidence::new_file`].
    /// A file containing a secret is deleted and reported as withheld.
    pub fn publish(
        &self,
        group: ArtifactGroup,
        path: &Path,
        step: Option<usize>,
    ) -> Result<Option<Artifact>, EvidenceError> {
        let inside = path.starts_with(self.run_dir.join("artifacts"));
        if !inside {
            return Err(EvidenceError::UnsafeName(path.display().to_string()));
        }
        // Read what was written beneath the held run directory, and only if
        // the path still names it.
        let mut f = self.check_path(path)?;
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; 64 * 1024];
        let mut total = 0u64;
        let mut all = Vec::new();
        loop {
            let n = f.read(&mut buf).map_err(io_err(path))?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
            total += n as u64;
            all.extend_from_slice(&buf[..n]);
        }
        if self.secrets.found_in(&all) {
            if let Ok(rel) = path.strip_prefix(&self.run_dir) {
                let _ = self.root.remove_file(rel);
            }
            self.withheld
                .lock()
                .expect("withheld lock")
                .push(WithheldArtifact {
                    name: path
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    reason: "contained a secret value; the file was deleted".into(),
                });
            return Ok(None);
        }
        let a = Artifact {
            group: Some(group),
            path: path.display().to_string(),
            uri: file_uri(path),
            bytes: total,
            sha256: hex::encode(hasher.finalize()),
            step,
            started_ms: None,
            holds: Vec::new(),
        };
        self.published
            .lock()
            .expect("published lock")
            .push(a.clone());
        Ok(Some(a))
    }

    /// Hashes, scans and publishes a recording whose first frame was taken
    /// `started_ms` after the run started (see [`Artifact::started_ms`]),
    /// with the pauses in its timeline ([`Artifact::holds`]).
    pub fn publish_recording(
        &self,
        group: ArtifactGroup,
        path: &Path,
        step: Option<usize>,
        started_ms: u64,
        holds: Vec<VideoHold>,
    ) -> Result<Option<Artifact>, EvidenceError> {
        let a = self.publish(group, path, step)?;
        let Some(mut a) = a else { return Ok(None) };
        a.started_ms = Some(started_ms);
        a.holds = holds;
        let mut list = self.published.lock().expect("published lock");
        if let Some(last) = list.iter_mut().rev().find(|x| x.path == a.path) {
            last.started_ms = Some(started_ms);
            last.holds = a.holds.clone();
        }
        Ok(Some(a))
    }

    /// Marks a published artifact as kept only if the run does not pass
    /// (`retain-on-failure`); [`Evidence::discard_conditional`] removes it.
    pub fn keep_only_on_failure(&self, path: &Path) {
        self.conditional
            .lock()
            .expect("conditional lock")
            .insert(path.to_path_buf());
    }

    /// Deletes every artifact marked with [`Evidence::keep_only_on_failure`]
    /// and drops it from the published list; returns how many went. The
    /// runner calls it when a run passed.
    pub fn discard_conditional(&self) -> usize {
        let marked: Vec<PathBuf> = self
            .conditional
            .lock()
            .expect("conditional lock")
            .drain()
            .collect();
        let mut list = self.published.lock().expect("published lock");
        let mut n = 0;
        for p in marked {
            if let Ok(rel) = p.strip_prefix(&self.run_dir) {
                if self.root.remove_file(rel).is_ok() {
                    n += 1;
                }
            }
            let s = p.display().to_string();
            list.retain(|a| a.path != s);
        }
        n
    }

    /// Everything published so far.
    pub fn artifacts(&self) -> Vec<Artifact> {
        self.published.lock().expect("published lock").clone()
    }

    /// Records an artifact that was never written because it would have
    /// shown a secret (for example a screenshot that could not be masked).
    pub fn withhold(&self, name: &str, reason: &str) {
        self.withheld
            .lock()
            .expect("withheld lock")
            .push(WithheldArtifact {
                name: name.to_string(),
                reason: reason.to_string(),
            });
    }

    /// Everything withheld so far.
    pub fn withheld(&self) -> Vec<WithheldArtifact> {
        self.withheld.lock().expect("withheld lock").clone()
    }
}

/// Removes a scratch tree. A program of the run that was just ended may
/// still be leaving files there for a moment (a browser killed while
/// writing its profile, its helpers going down after it): a removal that
/// finds a directory not empty tries again, for at most
/// [`SCRATCH_SETTLE`], so a clean run never reports scratch it did remove.
fn remove_tree(path: &Path) -> io::Result<()> {
    let until = std::time::Instant::now() + SCRATCH_SETTLE;
    loop {
        match fs::remove_dir_all(path) {
            Err(e)
                if e.kind() == io::ErrorKind::DirectoryNotEmpty
                    && std::time::Instant::now() < until =>
            {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            r => return r,
        }
    }
}

/// How long [`remove_tree`] keeps trying while files still appear.
const SCRATCH_SETTLE: std::time::Duration = std::time::Duration::from_secs(3);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moment_of_the_run_is_placed_after_the_holds_before_it() {
        let mut a = Artifact {
            group: None,
            path: String::new(),
            uri: String::new(),
            bytes: 0,
            sha256: String::new(),
            step: None,
            started_ms: None,
            holds: vec![
                VideoHold {
                    at_ms: 1_200,
                    ms: 500,
                },
                VideoHold {
                    at_ms: 2_000,
                    ms: 300,
                },
            ],
        };
        assert_eq!(a.recording_ms(1_500), None, "not a recording");
        a.started_ms = Some(1_000);
        assert_eq!(a.recording_ms(900), Some(0), "before the first frame");
        assert_eq!(a.recording_ms(1_100), Some(100));
        assert_eq!(a.recording_ms(1_200), Some(700), "a hold at t is before t");
        assert_eq!(a.recording_ms(1_999), Some(1_499));
        assert_eq!(a.recording_ms(3_000), Some(2_800));
    }

    fn store() -> (tempfile::TempDir, Evidence) {
        let t = tempfile::tempdir().unwrap();
        let e = Evidence::create(t.path(), "run1", Arc::new(Secrets::new())).unwrap();
        (t, e)
    }

    #[test]
    fn refuses_unsafe_names() {
        let (_t, e) = store();
        for bad in ["../x", "a/b", "/etc/passwd", "..", "."] {
            assert!(
                matches!(
                    e.new_file(ArtifactGroup::Screenshots, bad),
                    Err(EvidenceError::UnsafeName(_))
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn never_overwrites_and_names_are_unique() {
        let (_t, e) = store();
        let a = e
            .write(ArtifactGroup::Logs, "x.txt", b"1", None)
            .unwrap()
            .unwrap();
        assert!(matches!(
            e.write(ArtifactGroup::Logs, "x.txt", b"2", None),
            Err(EvidenceError::Exists(_))
        ));
        assert_eq!(e.unique_name(ArtifactGroup::Logs, "x", "txt"), "x-2.txt");
        assert_eq!(a.bytes, 1);
        assert_eq!(
            a.sha256,
            "6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b"
        );
        assert!(a.uri.starts_with("file:///"));
    }

    #[cfg(unix)]
    #[test]
    fn refuses_symlinked_run_dir() {
        let t = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        fs::create_dir_all(t.path().join("runs")).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), t.path().join("runs").join("r")).unwrap();
        let err = Evidence::create(t.path(), "r", Arc::new(Secrets::new())).unwrap_err();
        assert!(matches!(err, EvidenceError::Symlink(_)), "{err}");
        // And a symlinked `runs` directory.
        let t2 = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), t2.path().join("runs")).unwrap();
        let err = Evidence::create(t2.path(), "r", Arc::new(Secrets::new())).unwrap_err();
        assert!(matches!(err, EvidenceError::Symlink(_)), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn private_modes() {
        use std::os::unix::fs::PermissionsExt;
        let (_t, e) = store();
        let a = e
            .write(ArtifactGroup::Logs, "m.txt", b"x", None)
            .unwrap()
            .unwrap();
        let fm = fs::metadata(&a.path).unwrap().permissions().mode() & 0o777;
        let dm = fs::metadata(e.run_dir()).unwrap().permissions().mode() & 0o777;
        assert_eq!(fm, 0o600);
        assert_eq!(dm, 0o700);
    }

    /// Whether the tests run as root (and so may hand files to another uid).
    #[cfg(unix)]
    fn root() -> bool {
        my_uid() == 0
    }

    #[cfg(unix)]
    #[test]
    fn a_workspace_that_is_a_symlink_or_another_users_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let elsewhere = t.path().join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        let link = t.path().join("ws");
        std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
        let err = Evidence::create(&link, "r", Arc::new(Secrets::new())).unwrap_err();
        assert!(matches!(err, EvidenceError::Symlink(_)), "{err}");
        assert!(fs::read_dir(&elsewhere).unwrap().next().is_none());
        if !root() {
            return;
        }
        let theirs = t.path().join("theirs");
        fs::create_dir(&theirs).unwrap();
        std::os::unix::fs::lchown(&theirs, Some(65534), Some(65534)).unwrap();
        let err = Evidence::create(&theirs, "r", Arc::new(Secrets::new())).unwrap_err();
        assert!(matches!(err, EvidenceError::ForeignOwner { .. }), "{err}");
        let msg = err.to_string();
        assert!(
            msg.contains("uid 65534") && msg.contains("--workspace"),
            "{msg}"
        );
        assert!(fs::read_dir(&theirs).unwrap().next().is_none());
        // The default workspace of a project of theirs is refused up front.
        let err = default_workspace(&theirs).unwrap_err();
        assert!(matches!(err, EvidenceError::ForeignOwner { .. }), "{err}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_sweep_takes_only_what_this_user_made_and_can_prove_dead() {
        use std::os::unix::fs::symlink;
        // A live run's helper base (this process owns it).
        let live = helper::create_base().unwrap();
        fs::create_dir(live.join("work/profile")).unwrap();
        let ws = tempfile::tempdir().unwrap();
        let runs = ws.path().join("runs");
        fs::create_dir(&runs).unwrap();
        // A run of ours whose owner is dead, linking to the live base: its
        // own scratch goes, the live base stays.
        let dead = runs.join("dead/work");
        fs::DirBuilder::new().recursive(true).create(&dead).unwrap();
        for d in [runs.join("dead"), dead.clone()] {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&d, fs::Permissions::from_mode(0o700)).unwrap();
        }
        let mut f = create_private_file(&dead.join(OWNER_FILE)).unwrap();
        writeln!(f, "999999999 1").unwrap();
        symlink(live.join("work/profile"), dead.join("profile")).unwrap();
        sweep_orphaned_scratch(&runs);
        assert!(!dead.exists(), "a dead run's scratch is swept");
        assert!(live.join("work/profile").is_dir(), "a live base is kept");
        if root() {
            // Another user's planted run: never swept, never followed.
            let planted = runs.join("planted/work");
            fs::DirBuilder::new()
                .recursive(true)
                .create(&planted)
                .unwrap();
            fs::write(planted.join(OWNER_FILE), "999999999 1\n").unwrap();
            symlink(live.join("work/profile"), planted.join("profile")).unwrap();
            for p in [
                runs.join("planted"),
                planted.clone(),
                planted.join(OWNER_FILE),
                planted.join("profile"),
            ] {
                std::os::unix::fs::lchown(&p, Some(65534), Some(65534)).unwrap();
            }
            sweep_orphaned_scratch(&runs);
            assert!(planted.join(OWNER_FILE).exists());
            assert!(live.join("work/profile").is_dir());
        }
        helper::remove_base(&live).unwrap();
    }

    #[test]
    fn withholds_secret_artifacts() {
        let t = tempfile::tempdir().unwrap();
        let s = Arc::new(Secrets::new());
        s.add("s3cr3t-value");
        let e = Evidence::create(t.path(), "r", s).unwrap();
        let r = e
            .write(ArtifactGroup::Logs, "leak.txt", b"token=s3cr3t-value", None)
            .unwrap();
        assert!(r.is_none());
        assert_eq!(e.withheld().len(), 1);
        assert!(!e.run_dir().join("artifacts/logs/leak.txt").exists());
    }
}
