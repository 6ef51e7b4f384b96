//! The pseudoconsole: ConPTY's three functions, found at run time, and the
//! one handle a session owns.
//!
//! The functions are looked up in `kernel32.dll` when first needed instead
//! of being linked: Windows before 10 1809 (build 17763) does not export
//! them, and a binary that imports them would not start there at all. This
//! way only terminal flows are BLOCKED on such a host.
//!
//! Closing: `ClosePseudoConsole` ends the programs still attached to the
//! console (they get `CTRL_CLOSE_EVENT`, then are ended). The console host
//! may send a last painted frame to the output pipe while it closes, and
//! before Windows 11 24H2 the call blocks until that output is read: the
//! reader thread must keep reading until the pipe ends, and the close
//! happens on a thread of its own ([`Console::close_in_background`]) that
//! holds no lock while it waits.

use std::sync::{Mutex, OnceLock};
use windows_sys::core::HRESULT;
use windows_sys::Win32::Foundation::{HANDLE, S_OK};
use windows_sys::Win32::System::Console::{COORD, HPCON};
use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};

type CreateFn = unsafe extern "system" fn(COORD, HANDLE, HANDLE, u32, *mut HPCON) -> HRESULT;
type ResizeFn = unsafe extern "system" fn(HPCON, COORD) -> HRESULT;
type CloseFn = unsafe extern "system" fn(HPCON);

/// ConPTY's functions in this process.
struct Api {
    create: CreateFn,
    resize: ResizeFn,
    close: CloseFn,
}

/// The ConPTY functions, or `None` when this Windows has none.
fn api() -> Option<&'static Api> {
    static API: OnceLock<Option<Api>> = OnceLock::new();
    API.get_or_init(load).as_ref()
}

#[allow(unsafe_code)]
fn load() -> Option<Api> {
    let module: Vec<u16> = "kernel32.dll\0".encode_utf16().collect();
    // SAFETY: a NUL-terminated UTF-16 name; kernel32 is loaded in every
    // process, and the handle is not freed by anyone.
    let kernel32 = unsafe { GetModuleHandleW(module.as_ptr()) };
    if kernel32.is_null() {
        return None;
    }
    // SAFETY: NUL-terminated ASCII names on a valid module handle.
    let (create, resize, close) = unsafe {
        (
            GetProcAddress(kernel32, c"CreatePseudoConsole".as_ptr().cast())?,
            GetProcAddress(kernel32, c"ResizePseudoConsole".as_ptr().cast())?,
            GetProcAddress(kernel32, c"ClosePseudoConsole".as_ptr().cast())?,
        )
    };
    // SAFETY: these exports have exactly these signatures (consoleapi.h);
    // a function pointer is transmuted to a function pointer of the same size.
    unsafe {
        Some(Api {
            create: std::mem::transmute::<unsafe extern "system" fn() -> isize, CreateFn>(create),
            resize: std::mem::transmute::<unsafe extern "system" fn() -> isize, ResizeFn>(resize),
            close: std::mem::transmute::<unsafe extern "system" fn() -> isize, CloseFn>(close),
        })
    }
}

/// Whether this Windows has ConPTY.
pub(super) fn available() -> bool {
    api().is_some()
}

/// The console size for `cols`×`rows`, if it fits a `COORD`.
fn coord(cols: u16, rows: u16) -> std::io::Result<COORD> {
    match (i16::try_from(cols), i16::try_from(rows)) {
        (Ok(x), Ok(y)) if x > 0 && y > 0 => Ok(COORD { X: x, Y: y }),
        _ => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("a console cannot be {cols}x{rows}"),
        )),
    }
}

fn hresult(hr: HRESULT, what: &str) -> std::io::Result<()> {
    if hr == S_OK {
        Ok(())
    } else {
        Err(std::io::Error::other(format!(
            "{what} failed with HRESULT 0x{:08X}",
            hr as u32
        )))
    }
}

/// One pseudoconsole, closed once: by [`Console::close_in_background`],
/// or when its last owner drops it.
pub(super) struct Console {
    api: &'static Api,
    handle: Mutex<Option<HPCON>>,
}

impl Console {
    /// A pseudoconsole of `cols`×`rows` that reads its input from `input`
    /// (a pipe's read end) and writes its output to `output` (a pipe's
    /// write end). The console host duplicates both; the caller closes its
    /// copies afterwards, so the output pipe ends when the host does.
    #[allow(unsafe_code)]
    pub(super) fn create(
        cols: u16,
        rows: u16,
        input: HANDLE,
        output: HANDLE,
    ) -> std::io::Result<Console> {
        let api = api().ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "this Windows has no ConPTY (CreatePseudoConsole)",
            )
        })?;
        let size = coord(cols, rows)?;
        let mut handle: HPCON = 0;
        // SAFETY: valid pipe handles owned by the caller for the duration
        // of the call; flags 0 (no cursor inheritance, which would wait for
        // a cursor position report); `handle` is written on success.
        let hr = unsafe { (api.create)(size, input, output, 0, &mut handle) };
        hresult(hr, "CreatePseudoConsole")?;
        Ok(Console {
            api,
            handle: Mutex::new(Some(handle)),
        })
    }

    /// The handle, for the process attribute that attaches a program to
    /// the console; `None` once closed.
    pub(super) fn handle(&self) -> Option<HPCON> {
        *lock(&self.handle)
    }

    /// Resizes the console; ConPTY repaints it.
    #[allow(unsafe_code)]
    pub(super) fn resize(&self, cols: u16, rows: u16) -> std::io::Result<()> {
        let size = coord(cols, rows)?;
        let guard = lock(&self.handle);
        let Some(handle) = *guard else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "the pseudoconsole is closed",
            ));
        };
        // SAFETY: an open pseudoconsole (the lock keeps it from closing
        // during the call).
        let hr = unsafe { (self.api.resize)(handle, size) };
        hresult(hr, "ResizePseudoConsole")
    }

    /// Closes the console, ending the programs attached to it, from a
    /// thread of its own: before Windows 11 24H2 `ClosePseudoConsole` waits
    /// until its last frame was read from the output pipe (the reader
    /// thread does), and no caller — the async runtime, the exit watcher —
    /// may wait on that. Returns whether it was still open.
    pub(super) fn close_in_background(&self) -> bool {
        let Some(handle) = self.take() else {
            return false;
        };
        let api = self.api;
        let spawned = std::thread::Builder::new()
            .name("ui-qa-conpty-close".into())
            .spawn(move || close_now(api, handle));
        if spawned.is_err() {
            // No thread to spare: blocking beats leaving the console open.
            close_now(api, handle);
        }
        true
    }

    /// The open handle, taken out of its slot first, so a resize never
    /// waits for a blocked close and nothing closes it twice.
    fn take(&self) -> Option<HPCON> {
        lock(&self.handle).take()
    }
}

#[allow(unsafe_code)]
fn close_now(api: &Api, handle: HPCON) {
    // SAFETY: an open pseudoconsole that was taken out of its slot, so it
    // is closed exactly once.
    unsafe { (api.close)(handle) };
}

impl Drop for Console {
    fn drop(&mut self) {
        // The last owner is gone: whatever still runs on the console ends.
        // The reader thread owns the output pipe on its own and keeps
        // reading, so the close can finish.
        self.close_in_background();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
