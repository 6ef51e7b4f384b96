//! Windows: starting a program that receives C-runtime descriptors beyond
//! 0–2 (see [`super::crt_fds`]) — Chromium's DevTools pipe is descriptors
//! 3 and 4 — into the run's job.
//!
//! `std::process::Command` cannot pass such descriptors, so this calls
//! `CreateProcessW` itself:
//!
//! - The handles meant for the program are duplicated as inheritable just
//!   for the call, and `PROC_THREAD_ATTRIBUTE_HANDLE_LIST` names exactly
//!   them, so the program inherits nothing else of the runner's. The
//!   duplicates are closed right after the call, under the same lock that
//!   [`super::ProcessOwner::spawn`] holds, so no other program the run
//!   starts can inherit one of them in between.
//! - The program starts suspended, is put in the job, then runs (as with
//!   [`super::ProcessOwner::spawn`]).
//! - Its environment and working directory are the runner's; its standard
//!   input and output are closed; its standard error is the given pipe.

use super::crt_fds;
use super::win_cmdline::command_line;
use std::ffi::OsStr;
use std::os::windows::ffi::OsStrExt;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle, RawHandle};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;
use windows_sys::Win32::Foundation::{
    DuplicateHandle, DUPLICATE_SAME_ACCESS, HANDLE, WAIT_OBJECT_0, WAIT_TIMEOUT,
};
use windows_sys::Win32::System::Pipes::CreatePipe;
use windows_sys::Win32::System::Threading::{
    CreateProcessW, DeleteProcThreadAttributeList, GetCurrentProcess, GetExitCodeProcess,
    InitializeProcThreadAttributeList, ResumeThread, TerminateProcess, UpdateProcThreadAttribute,
    WaitForSingleObject, CREATE_SUSPENDED, EXTENDED_STARTUPINFO_PRESENT,
    LPPROC_THREAD_ATTRIBUTE_LIST, PROCESS_INFORMATION, PROC_THREAD_ATTRIBUTE_HANDLE_LIST,
    STARTF_USESTDHANDLES, STARTUPINFOEXW,
};

/// Held while a program is created with inheritable handles of ours, so
/// two spawns of this process never inherit each other's.
pub(super) static SPAWN_LOCK: Mutex<()> = Mutex::new(());

/// How often [`OwnedChild::wait`] looks whether the program has ended.
const POLL: Duration = Duration::from_millis(20);

/// A program to start with extra C-runtime descriptors.
#[derive(Debug)]
pub struct FdCommand {
    program: PathBuf,
    args: Vec<String>,
    stderr: Option<OwnedHandle>,
    fds: Vec<OwnedHandle>,
}

impl FdCommand {
    /// `program` (an absolute path) with no arguments, closed standard
    /// handles and no extra descriptors.
    pub fn new(program: &Path) -> FdCommand {
        FdCommand {
            program: program.to_path_buf(),
            args: Vec::new(),
            stderr: None,
            fds: Vec::new(),
        }
    }

    /// Adds arguments after the program name.
    pub fn args<I: IntoIterator<Item = S>, S: AsRef<str>>(mut self, args: I) -> FdCommand {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_string()));
        self
    }

    /// The program's standard error (descriptor 2): a pipe's write end.
    pub fn stderr(mut self, pipe: OwnedHandle) -> FdCommand {
        self.stderr = Some(pipe);
        self
    }

    /// The pipe ends the program finds as descriptors 3, 4, … in order.
    pub fn fds(mut self, pipes: Vec<OwnedHandle>) -> FdCommand {
        self.fds = pipes;
        self
    }
}

/// An anonymous pipe `(read end, write end)`; neither end is inheritable.
#[allow(unsafe_code)]
pub fn pipe() -> std::io::Result<(OwnedHandle, OwnedHandle)> {
    let (mut r, mut w): (HANDLE, HANDLE) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: two out-pointers; null attributes make both ends
    // non-inheritable; 0 is the default buffer size.
    if unsafe { CreatePipe(&mut r, &mut w, std::ptr::null(), 0) } == 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both handles were just created and are owned by nobody else.
    Ok(unsafe {
        (
            OwnedHandle::from_raw_handle(r),
            OwnedHandle::from_raw_handle(w),
        )
    })
}

/// A program started by [`super::ProcessOwner::spawn_with_fds`]: its pid
/// and process handle (the job, not this handle, ends it).
#[derive(Debug)]
pub struct OwnedChild {
    pid: u32,
    process: OwnedHandle,
}

impl OwnedChild {
    pub(super) fn new(pid: u32, process: OwnedHandle) -> OwnedChild {
        OwnedChild { pid, process }
    }

    /// Its process id.
    pub fn id(&self) -> u32 {
        self.pid
    }

    /// Its exit status, if it has ended.
    #[allow(unsafe_code)]
    pub fn try_wait(&mut self) -> std::io::Result<Option<std::process::ExitStatus>> {
        use std::os::windows::process::ExitStatusExt;
        let h = self.process.as_raw_handle() as HANDLE;
        // SAFETY: our process handle; a zero timeout only polls.
        match unsafe { WaitForSingleObject(h, 0) } {
            WAIT_TIMEOUT => Ok(None),
            WAIT_OBJECT_0 => {
                let mut code = 0u32;
                // SAFETY: our process handle and an out-pointer.
                if unsafe { GetExitCodeProcess(h, &mut code) } == 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(Some(std::process::ExitStatus::from_raw(code)))
            }
            _ => Err(std::io::Error::last_os_error()),
        }
    }

    /// Waits until it has ended (bound it with a timeout).
    pub async fn wait(&mut self) -> std::io::Result<std::process::ExitStatus> {
        loop {
            if let Some(s) = self.try_wait()? {
                return Ok(s);
            }
            tokio::time::sleep(POLL).await;
        }
    }
}

/// Starts `cmd` suspended with its descriptors; the caller puts it in the
/// job and lets it run ([`Suspended::resume`]).
#[allow(unsafe_code)]
pub(super) fn start_suspended(cmd: FdCommand) -> std::io::Result<Suspended> {
    let program = cmd.program.to_string_lossy().into_owned();
    let mut argv = vec![program];
    argv.extend(cmd.args);
    let line = command_line(&argv)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()))?;
    let mut line = wide(OsStr::new(&line))?;
    let application = wide(cmd.program.as_os_str())?;

    let _guard = SPAWN_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let stderr = cmd.stderr.as_ref().map(inheritable).transpose()?;
    let fds = cmd
        .fds
        .iter()
        .map(inheritable)
        .collect::<std::io::Result<Vec<_>>>()?;
    let raw = |h: &OwnedHandle| h.as_raw_handle() as usize;
    let mut slots = vec![None, None, stderr.as_ref().map(raw)];
    slots.extend(fds.iter().map(|h| Some(raw(h))));
    let mut block = crt_fds::block(&slots).ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "too many descriptors for the C runtime's block",
        )
    })?;
    let mut inherited: Vec<HANDLE> = stderr
        .iter()
        .chain(fds.iter())
        .map(|h| h.as_raw_handle() as HANDLE)
        .collect();
    let mut attributes = AttributeList::with_handles(&mut inherited)?;

    let mut startup = STARTUPINFOEXW::default();
    startup.StartupInfo.cb = std::mem::size_of::<STARTUPINFOEXW>() as u32;
    startup.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
    startup.StartupInfo.hStdError = stderr
        .as_ref()
        .map_or(std::ptr::null_mut(), |h| h.as_raw_handle() as HANDLE);
    startup.StartupInfo.cbReserved2 = block.len() as u16;
    startup.StartupInfo.lpReserved2 = block.as_mut_ptr();
    startup.lpAttributeList = attributes.as_mut_ptr();
    let mut info = PROCESS_INFORMATION::default();
    // SAFETY: the strings are NUL-terminated UTF-16 that outlive the call
    // and the command line is mutable, as CreateProcessW requires; the
    // startup info is an initialised STARTUPINFOEXW whose size is in `cb`
    // (EXTENDED_STARTUPINFO_PRESENT); its attribute list, handle array and
    // descriptor block live until after the call; a null environment and
    // directory are the runner's. Handles are inherited only when the
    // attribute list names them.
    let inherit = i32::from(!inherited.is_empty());
    let ok = unsafe {
        CreateProcessW(
            application.as_ptr(),
            line.as_mut_ptr(),
            std::ptr::null(),
            std::ptr::null(),
            inherit,
            EXTENDED_STARTUPINFO_PRESENT | CREATE_SUSPENDED,
            std::ptr::null(),
            std::ptr::null(),
            &startup.StartupInfo,
            &mut info,
        )
    };
    let created = if ok == 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    };
    drop(attributes);
    // The inheritable duplicates close here, still under the lock.
    drop((stderr, fds));
    drop(_guard);
    created?;
    // SAFETY: both handles were just returned to us and are owned by
    // nobody else.
    let (process, thread) = unsafe {
        (
            OwnedHandle::from_raw_handle(info.hProcess as RawHandle),
            OwnedHandle::from_raw_handle(info.hThread as RawHandle),
        )
    };
    Ok(Suspended::new(info.dwProcessId, process, thread))
}

/// A program created with `CREATE_SUSPENDED` that has not run yet (also
/// the terminal driver's program on a pseudoconsole).
pub struct Suspended {
    /// Its process id.
    pub pid: u32,
    process: OwnedHandle,
    thread: OwnedHandle,
}

impl Suspended {
    /// The process and primary thread `CreateProcessW` returned.
    pub fn new(pid: u32, process: OwnedHandle, thread: OwnedHandle) -> Suspended {
        Suspended {
            pid,
            process,
            thread,
        }
    }

    /// Lets it run; hands back its process handle. If it cannot run, it is
    /// ended through its handle (ours, and it never ran).
    #[allow(unsafe_code)]
    pub fn resume(self) -> std::io::Result<OwnedHandle> {
        // SAFETY: the primary thread handle of a process we created.
        if unsafe { ResumeThread(self.thread.as_raw_handle() as HANDLE) } == u32::MAX {
            let e = std::io::Error::last_os_error();
            // SAFETY: the handle of the process we created.
            unsafe { TerminateProcess(self.process.as_raw_handle() as HANDLE, 1) };
            return Err(e);
        }
        Ok(self.process)
    }
}

/// An inheritable duplicate of `h`.
#[allow(unsafe_code)]
fn inheritable(h: &OwnedHandle) -> std::io::Result<OwnedHandle> {
    let mut dup: HANDLE = std::ptr::null_mut();
    // SAFETY: our own open handle duplicated within this process, with the
    // same access, inheritable; the out-pointer receives the new handle.
    let ok = unsafe {
        DuplicateHandle(
            GetCurrentProcess(),
            h.as_raw_handle() as HANDLE,
            GetCurrentProcess(),
            &mut dup,
            0,
            1,
            DUPLICATE_SAME_ACCESS,
        )
    };
    if ok == 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a new handle owned by nobody else.
    Ok(unsafe { OwnedHandle::from_raw_handle(dup as RawHandle) })
}

/// `s` as NUL-terminated UTF-16; refused when it contains NUL.
fn wide(s: &OsStr) -> std::io::Result<Vec<u16>> {
    let mut w: Vec<u16> = s.encode_wide().collect();
    if w.contains(&0) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "a path or argument contains NUL",
        ));
    }
    w.push(0);
    Ok(w)
}

/// A process-thread attribute list (`STARTUPINFOEXW.lpAttributeList`):
/// the handles a program inherits here, the pseudoconsole it runs on in the
/// terminal driver. Deleted on drop.
pub struct AttributeList {
    /// The list's memory (`usize` words, so it is pointer-aligned).
    memory: Vec<usize>,
}

impl AttributeList {
    /// An initialised list with room for `count` attributes.
    #[allow(unsafe_code)]
    pub fn new(count: u32) -> std::io::Result<AttributeList> {
        let mut size: usize = 0;
        // SAFETY: a null list asks for the size only (the call "fails"
        // with ERROR_INSUFFICIENT_BUFFER and sets `size`).
        unsafe { InitializeProcThreadAttributeList(std::ptr::null_mut(), count, 0, &mut size) };
        if size == 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut list = AttributeList {
            memory: vec![0usize; size.div_ceil(std::mem::size_of::<usize>())],
        };
        // SAFETY: `memory` holds at least `size` bytes, pointer-aligned.
        if unsafe { InitializeProcThreadAttributeList(list.as_mut_ptr(), count, 0, &mut size) } == 0
        {
            // Not initialised: nothing to delete.
            list.memory.clear();
            return Err(std::io::Error::last_os_error());
        }
        Ok(list)
    }

    /// Sets `attribute` (a `PROC_THREAD_ATTRIBUTE_*` value) to the `size`
    /// bytes at `value`.
    ///
    /// # Safety
    ///
    /// `value` must be what the attribute takes (for a pseudoconsole the
    /// `HPCON` itself, for a handle list a pointer to the handles) and stay
    /// valid, unmoved, until the list has been used by `CreateProcessW`.
    #[allow(unsafe_code)]
    pub unsafe fn set(
        &mut self,
        attribute: usize,
        value: *const std::ffi::c_void,
        size: usize,
    ) -> std::io::Result<()> {
        // SAFETY: an initialised list; the caller vouches for `value`.
        let ok = unsafe {
            UpdateProcThreadAttribute(
                self.as_mut_ptr(),
                0,
                attribute,
                value,
                size,
                std::ptr::null_mut(),
                std::ptr::null(),
            )
        };
        if ok == 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// A list naming the handles a program inherits (none set when
    /// `handles` is empty: Windows refuses an empty list, and the program
    /// then inherits nothing, see `start_suspended`). `handles` must
    /// outlive the list's use in `CreateProcessW`.
    #[allow(unsafe_code)]
    fn with_handles(handles: &mut [HANDLE]) -> std::io::Result<AttributeList> {
        let mut list = AttributeList::new(1)?;
        if !handles.is_empty() {
            // SAFETY: the handle-list attribute takes a pointer to the
            // handles and their size in bytes; the caller keeps them.
            unsafe {
                list.set(
                    PROC_THREAD_ATTRIBUTE_HANDLE_LIST as usize,
                    handles.as_mut_ptr().cast(),
                    std::mem::size_of_val(handles),
                )?;
            }
        }
        Ok(list)
    }

    /// The list, for `STARTUPINFOEXW.lpAttributeList`.
    pub fn as_mut_ptr(&mut self) -> LPPROC_THREAD_ATTRIBUTE_LIST {
        self.memory.as_mut_ptr().cast()
    }
}

impl Drop for AttributeList {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        if !self.memory.is_empty() {
            // SAFETY: an initialised list, deleted once.
            unsafe { DeleteProcThreadAttributeList(self.as_mut_ptr()) };
        }
    }
}
