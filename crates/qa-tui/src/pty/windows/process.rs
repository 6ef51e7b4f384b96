//! Starting the program on the pseudoconsole: `CreateProcessW` with an
//! extended startup info whose attribute list names the console, created
//! suspended so it can be put in the run's Job Object before it runs a
//! single instruction (and so before it can start a child outside it).

use super::conpty::Console;
use qa_core::process::windows_spawn::{AttributeList, Suspended};
use std::os::windows::io::{FromRawHandle, OwnedHandle};
use windows_sys::Win32::System::Console::HPCON;
use windows_sys::Win32::System::Threading::{
    CreateProcessW, CREATE_SUSPENDED, CREATE_UNICODE_ENVIRONMENT, EXTENDED_STARTUPINFO_PRESENT,
    PROCESS_INFORMATION, PROC_THREAD_ATTRIBUTE_PSEUDOCONSOLE, STARTF_USESTDHANDLES, STARTUPINFOEXW,
};

/// What to start: all text already in the form `CreateProcessW` takes.
pub(super) struct Launch {
    /// The program's absolute path, NUL-terminated UTF-16.
    pub(super) program: Vec<u16>,
    /// The command line (see `qa_core::process::win_cmdline`), NUL-terminated UTF-16.
    pub(super) command_line: Vec<u16>,
    /// The environment block (see `envblock`).
    pub(super) environment: Vec<u16>,
    /// The working directory, NUL-terminated UTF-16.
    pub(super) cwd: Vec<u16>,
}

/// Starts `launch` suspended, attached to `console`, with no standard
/// handles of ours: with `STARTF_USESTDHANDLES` and null handles the
/// program's standard handles are the console's, even when the runner's
/// own output is redirected (which it is under CI or MCP); without it such
/// a program writes to the runner's redirected handles instead
/// (microsoft/terminal#11276). node-pty and alacritty start programs the
/// same way. Wine 8.0 does not give such a program the console's handles
/// (measured here), so this backend does not work under that Wine.
#[allow(unsafe_code)]
pub(super) fn start_suspended(
    launch: &mut Launch,
    console: &Console,
) -> std::io::Result<Suspended> {
    let handle = console.handle().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::BrokenPipe,
            "the pseudoconsole is closed",
        )
    })?;
    let mut attributes = with_console(handle)?;
    let mut startup = STARTUPINFOEXW::default();
    startup.StartupInfo.cb = std::mem::size_of::<STARTUPINFOEXW>() as u32;
    startup.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
    startup.lpAttributeList = attributes.as_mut_ptr();
    let mut info = PROCESS_INFORMATION::default();
    // SAFETY: every string is NUL-terminated UTF-16 that outlives the
    // call; the command line is mutable as CreateProcessW requires; the
    // environment is a complete Unicode block (CREATE_UNICODE_ENVIRONMENT);
    // the startup info is an initialised STARTUPINFOEXW whose size is in
    // `cb` (EXTENDED_STARTUPINFO_PRESENT) and whose attribute list lives
    // until after the call; no handles are inherited.
    let ok = unsafe {
        CreateProcessW(
            launch.program.as_ptr(),
            launch.command_line.as_mut_ptr(),
            std::ptr::null(),
            std::ptr::null(),
            0,
            EXTENDED_STARTUPINFO_PRESENT | CREATE_UNICODE_ENVIRONMENT | CREATE_SUSPENDED,
            launch.environment.as_ptr().cast(),
            launch.cwd.as_ptr(),
            &startup.StartupInfo,
            &mut info,
        )
    };
    if ok == 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both handles were just returned to us and are owned by
    // nobody else.
    let (process, thread) = unsafe {
        (
            OwnedHandle::from_raw_handle(info.hProcess),
            OwnedHandle::from_raw_handle(info.hThread),
        )
    };
    Ok(Suspended::new(info.dwProcessId, process, thread))
}

/// A process-thread attribute list with one attribute: the pseudoconsole.
#[allow(unsafe_code)]
fn with_console(console: HPCON) -> std::io::Result<AttributeList> {
    let mut list = AttributeList::new(1)?;
    // SAFETY: the pseudoconsole attribute's value is the HPCON itself (not
    // a pointer to it), of the size of an HPCON; the console outlives the
    // process creation.
    unsafe {
        list.set(
            PROC_THREAD_ATTRIBUTE_PSEUDOCONSOLE as usize,
            console as *const std::ffi::c_void,
            std::mem::size_of::<HPCON>(),
        )?;
    }
    Ok(list)
}
