//! A program on a pseudoconsole: [`spawn`] and the four ends the session
//! uses ([`Output`], [`Input`], [`Child`], [`Line`]).

use super::chunks::Chunks;
use super::conpty::{self, Console};
use super::drain::{wait_before_close, OutputWatch, END_WAIT};
use super::envblock::environment_block;
use super::errors::launch_error;
use super::pipes::{self, Writer};
use super::process::{self, Launch};
use crate::codes::TuiCode;
use crate::launch::LaunchPlan;
use crate::pty::{Ended, Spawned, LABEL};
use qa_core::process::win_cmdline::command_line;
use qa_core::process::ProcessOwner;
use qa_core::{Capability, DriverError, Host, MissingCapability};
use std::ffi::OsStr;
use std::os::windows::ffi::OsStrExt;
use std::os::windows::io::OwnedHandle;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::oneshot;
use windows_sys::Win32::Foundation::WAIT_OBJECT_0;
use windows_sys::Win32::System::Threading::{GetExitCodeProcess, WaitForSingleObject, INFINITE};

fn missing() -> MissingCapability {
    MissingCapability {
        id: "pty".into(),
        reason: "this Windows has no ConPTY (CreatePseudoConsole needs Windows 10 version 1809 or later)".into(),
        remediation: "run terminal flows on Windows 10 1809 (build 17763) or later, Windows Server 2019 or later, Linux or macOS".into(),
    }
}

/// Whether this Windows has ConPTY.
pub(crate) fn probe(_host: &Host) -> Result<Capability, MissingCapability> {
    if conpty::available() {
        Ok(Capability {
            id: "pty".into(),
            detail: "ConPTY (CreatePseudoConsole, kernel32.dll)".into(),
        })
    } else {
        Err(missing())
    }
}

/// NUL-terminated UTF-16 of `s`, or `None` if it contains NUL.
fn wide(s: &OsStr) -> Option<Vec<u16>> {
    let mut w: Vec<u16> = s.encode_wide().collect();
    if w.contains(&0) {
        return None;
    }
    w.push(0);
    Some(w)
}

/// What `CreateProcessW` needs, from the plan and the owner's marker.
fn launch_text(plan: &LaunchPlan, owner: &ProcessOwner) -> Result<Launch, DriverError> {
    let invalid = |what: String| DriverError::new(TuiCode::LaunchFailed, what);
    let line = command_line(&plan.argv).map_err(|e| invalid(e.to_string()))?;
    // The Windows owner has no marker (its job holds every descendant);
    // an empty one is not set.
    let (marker_key, marker_value) = owner.marker();
    let mut vars: Vec<(&str, &str)> = plan
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    if !marker_value.is_empty() {
        vars.push((marker_key, marker_value.as_str()));
    }
    let environment = environment_block(vars).map_err(|e| invalid(e.to_string()))?;
    let program = wide(plan.program.as_os_str())
        .ok_or_else(|| invalid(format!("the program path {:?} contains NUL", plan.program)))?;
    let cwd = wide(plan.cwd.as_os_str())
        .ok_or_else(|| invalid(format!("the working directory {:?} contains NUL", plan.cwd)))?;
    Ok(Launch {
        program,
        command_line: wide(OsStr::new(&line)).unwrap_or_default(),
        environment,
        cwd,
    })
}

fn open_failed(e: std::io::Error) -> DriverError {
    DriverError::new(
        TuiCode::PtyOpenFailed,
        format!("could not open a pseudoconsole: {e}"),
    )
    .with_remediation("check that this Windows supports ConPTY (Windows 10 1809 or later) and that the runner may create pipes and processes")
}

/// Opens a pseudoconsole of the planned size and starts the planned
/// program on it, in the run's Job Object.
pub(crate) async fn spawn(plan: &LaunchPlan, owner: &ProcessOwner) -> Result<Spawned, DriverError> {
    if !conpty::available() {
        return Err(DriverError::blocked(
            TuiCode::PlatformUnsupported,
            missing(),
        ));
    }
    let mut launch = launch_text(plan, owner)?;
    let pipes = pipes::create().map_err(open_failed)?;
    let console = Console::create(
        plan.cols,
        plan.rows,
        pipes::raw(&pipes.console_input),
        pipes::raw(&pipes.console_output),
    )
    .map_err(open_failed)?;
    let console = Arc::new(console);
    // The host holds its own copies; ours would keep the output pipe from
    // ever ending.
    drop(pipes.console_input);
    drop(pipes.console_output);
    let watch = Arc::new(OutputWatch::default());
    let output = pipes::start_reader(pipes.output, watch.clone()).map_err(open_failed)?;
    let writer = Writer::start(pipes.input).map_err(open_failed)?;
    let suspended = process::start_suspended(&mut launch, &console)
        .map_err(|e| launch_error(&plan.argv[0], &e))?;
    let pid = suspended.pid;
    // In the job before its first instruction.
    owner.register(pid, LABEL);
    let process = suspended.resume().map_err(|e| {
        DriverError::new(
            TuiCode::LaunchFailed,
            format!("the program was created but could not be started: {e}"),
        )
    })?;
    let (exit_tx, exit_rx) = oneshot::channel();
    let watched = console.clone();
    std::thread::Builder::new()
        .name("ui-qa-conpty-exit".into())
        .spawn(move || watch_exit(process, exit_tx, &watch, &watched))
        .map_err(|e| {
            // Without a watcher nobody would see the exit: end the program now.
            console.close_in_background();
            DriverError::new(
                TuiCode::LaunchFailed,
                format!("could not start the exit watcher: {e}"),
            )
        })?;
    Ok(Spawned {
        pid,
        output: Output(output),
        input: Input {
            writer,
            console: console.clone(),
        },
        child: Child(exit_rx),
        line: Line(console),
    })
}

/// Waits for the program's end; closes the console once its last output
/// had time to arrive; reports the end once the output ended (bounded, see
/// `drain`).
#[allow(unsafe_code)]
fn watch_exit(
    process: OwnedHandle,
    report: oneshot::Sender<Ended>,
    output: &OutputWatch,
    console: &Console,
) {
    let h = pipes::raw(&process);
    // SAFETY: the process handle we own, valid until `process` drops.
    let waited = unsafe { WaitForSingleObject(h, INFINITE) };
    let mut code: u32 = 0;
    // SAFETY: as above; `code` is written on success.
    let known = waited == WAIT_OBJECT_0 && unsafe { GetExitCodeProcess(h, &mut code) } != 0;
    let exited = Instant::now();
    while let Some(wait) = wait_before_close(exited, output.last(), Instant::now()) {
        std::thread::sleep(wait);
    }
    // From a thread of its own: before Windows 11 24H2 the close waits
    // until the reader took the last frame, and it must never hold up the
    // report below for longer than END_WAIT.
    console.close_in_background();
    output.wait_for_end(END_WAIT);
    let _ = report.send(Ended {
        // Windows exit codes are 32-bit; NTSTATUS values read as negative,
        // as `std::process::ExitStatus::code` reads them.
        code: known.then_some(code as i32),
        signal: None,
    });
}

/// What the program writes, as the console host rendered it.
pub(crate) struct Output(Chunks);

impl Output {
    /// Reads what is there (waiting for at least one byte); `Ok(0)` once
    /// the console host closed its end. Cancel-safe.
    pub(crate) async fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf).await
    }
}

/// The program's input, and the console's size.
pub(crate) struct Input {
    writer: Writer,
    console: Arc<Console>,
}

impl Input {
    /// Writes all of `bytes` (VT input; the host turns it into console
    /// input events).
    pub(crate) async fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.writer.write(bytes).await
    }

    /// Resizes the console; ConPTY repaints it.
    pub(crate) fn resize(&mut self, cols: u16, rows: u16) -> std::io::Result<()> {
        self.console.resize(cols, rows)
    }
}

/// The started program.
pub(crate) struct Child(oneshot::Receiver<Ended>);

impl Child {
    /// Waits for the program to end.
    pub(crate) async fn wait(self) -> Ended {
        self.0.await.unwrap_or(Ended {
            code: None,
            signal: None,
        })
    }
}

/// The pseudoconsole, to hang it up.
pub(crate) struct Line(Arc<Console>);

impl Line {
    /// Hangs up: closes the pseudoconsole (from a thread of its own), which
    /// sends the programs attached to it `CTRL_CLOSE_EVENT` and then ends
    /// them — only processes on this run's console. Returns whether it was
    /// still open.
    pub(crate) fn hang_up(&self, _owner: &ProcessOwner) -> bool {
        self.0.close_in_background()
    }
}
