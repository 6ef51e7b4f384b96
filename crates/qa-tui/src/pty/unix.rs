//! Unix: a kernel PTY through `pty-process`. The program leads a new
//! session whose controlling terminal is the PTY; the owner's marker is in
//! its environment and its pid is registered with the run's owner.

use super::{Ended, Spawned, LABEL};
use crate::codes::TuiCode;
use crate::launch::LaunchPlan;
use qa_core::process::ProcessOwner;
use qa_core::{Capability, DriverError, Host, MissingCapability};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Whether this host can open a PTY (`/dev/ptmx`).
pub(crate) fn probe(host: &Host) -> Result<Capability, MissingCapability> {
    if std::path::Path::new("/dev/ptmx").exists() {
        Ok(Capability {
            id: "pty".into(),
            detail: "/dev/ptmx".into(),
        })
    } else {
        Err(MissingCapability {
            id: "pty".into(),
            reason: format!("no pseudo-terminal support on this host ({})", host.os),
            remediation: "run terminal flows on Linux or macOS with /dev/ptmx available".into(),
        })
    }
}

/// Opens a PTY of the planned size and spawns the planned program on it,
/// in a new session, registered with `owner`.
pub(crate) async fn spawn(plan: &LaunchPlan, owner: &ProcessOwner) -> Result<Spawned, DriverError> {
    let (pty, pts) = pty_process::open().map_err(|e| {
        DriverError::new(TuiCode::PtyOpenFailed, format!("could not open a PTY: {e}"))
            .with_remediation("check that /dev/ptmx and /dev/pts are available to this user")
    })?;
    pty.resize(pty_process::Size::new(plan.rows, plan.cols))
        .map_err(|e| {
            DriverError::new(
                TuiCode::PtyResizeFailed,
                format!("could not size the PTY: {e}"),
            )
        })?;
    // The owner's marker lets cleanup claim orphans that escaped early.
    let (marker_key, marker_value) = owner.marker();
    let mut cmd = pty_process::Command::new(&plan.program)
        .args(plan.argv.iter().skip(1))
        .env_clear()
        .envs(&plan.env)
        .env(marker_key, marker_value)
        .current_dir(&plan.cwd);
    if let Some(a0) = plan.argv.first() {
        cmd = cmd.arg0(a0);
    }
    let starting = owner.spawning();
    let child = cmd.spawn(pts).map_err(|e| spawn_error(&plan.argv[0], e))?;
    let pid = child.id().ok_or_else(|| {
        DriverError::new(
            TuiCode::LaunchFailed,
            "the program exited before its pid was known",
        )
    })?;
    owner.register(pid, LABEL);
    drop(starting);
    let (read, write) = pty.into_split();
    Ok(Spawned {
        pid,
        output: Output(read),
        input: Input(write),
        child: Child(child),
        line: Line(pid),
    })
}

/// The PTY's read half.
pub(crate) struct Output(pty_process::OwnedReadPty);

impl Output {
    /// Reads what is there (waiting for at least one byte); `Ok(0)` at end
    /// of output. An error (EIO once no process holds the PTY open) ends
    /// output too. Cancel-safe.
    pub(crate) async fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf).await
    }
}

/// The PTY's write half, which also sizes it.
pub(crate) struct Input(pty_process::OwnedWritePty);

impl Input {
    /// Writes and flushes all of `bytes`.
    pub(crate) async fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.0.write_all(bytes).await?;
        self.0.flush().await
    }

    /// Resizes the PTY (the kernel sends SIGWINCH).
    pub(crate) fn resize(&mut self, cols: u16, rows: u16) -> std::io::Result<()> {
        self.0
            .resize(pty_process::Size::new(rows, cols))
            .map_err(|e| std::io::Error::other(e.to_string()))
    }
}

/// The spawned program.
pub(crate) struct Child(tokio::process::Child);

impl Child {
    /// Waits for the program to end.
    pub(crate) async fn wait(mut self) -> Ended {
        match self.0.wait().await {
            Ok(s) => Ended {
                code: s.code(),
                signal: std::os::unix::process::ExitStatusExt::signal(&s),
            },
            Err(_) => Ended {
                code: None,
                signal: None,
            },
        }
    }
}

/// The terminal line of a session led by the program.
pub(crate) struct Line(u32);

impl Line {
    /// Hangs up: SIGHUP to the program's process group, only through the
    /// owner's checks (registered, session leader, same process). Returns
    /// whether the signal was sent.
    pub(crate) fn hang_up(&self, owner: &ProcessOwner) -> bool {
        owner.hang_up(self.0)
    }
}

fn spawn_error(argv0: &str, e: pty_process::Error) -> DriverError {
    let msg = e.to_string();
    let io_kind = match &e {
        pty_process::Error::Io(io) => Some((io.kind(), io.raw_os_error())),
        _ => None,
    };
    match io_kind {
        Some((std::io::ErrorKind::NotFound, _)) => DriverError::new(
            TuiCode::LaunchNotFound,
            format!("program {argv0:?} could not be started: {msg}"),
        ),
        Some((std::io::ErrorKind::PermissionDenied, _)) => DriverError::new(
            TuiCode::LaunchNotExecutable,
            format!("program {argv0:?} is not executable: {msg}"),
        ),
        Some((_, Some(code))) if code == libc::ENOEXEC => DriverError::new(
            TuiCode::LaunchNotExecutable,
            format!("{argv0:?} is not a program the system can run (no interpreter line or wrong format)"),
        )
        .with_remediation("add a #! line or run it through its interpreter, e.g. [\"sh\", \"script.sh\"]"),
        _ => DriverError::new(TuiCode::LaunchFailed, format!("starting {argv0:?} failed: {msg}")),
    }
}
