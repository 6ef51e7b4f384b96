//! Every Win32 call the driver makes outside UI Automation, each behind a
//! small safe function: top-level windows, the foreground, the process
//! snapshot, the probe's session facts, `SendInput` and `PrintWindow`.
//! This module holds all of the crate's `unsafe`.

#![allow(unsafe_code)]

use crate::handoff::{InputDesktop, TargetAccess};
use crate::vk::KeyEvent;
use std::ffi::c_void;
use windows_sys::core::BOOL;
use windows_sys::Win32::Foundation::{
    CloseHandle, GetLastError, ERROR_ACCESS_DENIED, FILETIME, HANDLE, HWND, INVALID_HANDLE_VALUE,
    LPARAM, RECT,
};
use windows_sys::Win32::Graphics::Gdi::{
    CreateCompatibleBitmap, CreateCompatibleDC, DeleteDC, DeleteObject, GetDC, GetDIBits,
    ReleaseDC, SelectObject, BITMAPINFO, BITMAPINFOHEADER, BI_RGB, DIB_RGB_COLORS,
};
use windows_sys::Win32::Security::{
    GetTokenInformation, TokenElevation, TOKEN_ELEVATION, TOKEN_QUERY,
};
use windows_sys::Win32::Storage::Xps::PrintWindow;
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, Process32FirstW, Process32NextW, PROCESSENTRY32W, TH32CS_SNAPPROCESS,
};
use windows_sys::Win32::System::RemoteDesktop::ProcessIdToSessionId;
use windows_sys::Win32::System::StationsAndDesktops::{
    CloseDesktop, GetUserObjectInformationW, OpenInputDesktop, DESKTOP_READOBJECTS, UOI_NAME,
};
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, GetCurrentProcessId, GetProcessTimes, OpenProcess, OpenProcessToken,
    PROCESS_QUERY_LIMITED_INFORMATION,
};
use windows_sys::Win32::UI::Input::KeyboardAndMouse::{
    SendInput, VkKeyScanW, INPUT, INPUT_0, INPUT_KEYBOARD, INPUT_MOUSE, KEYBDINPUT,
    KEYEVENTF_EXTENDEDKEY, KEYEVENTF_KEYUP, KEYEVENTF_UNICODE, MOUSEEVENTF_ABSOLUTE,
    MOUSEEVENTF_LEFTDOWN, MOUSEEVENTF_LEFTUP, MOUSEEVENTF_MOVE, MOUSEEVENTF_VIRTUALDESK,
    MOUSEINPUT,
};
use windows_sys::Win32::UI::WindowsAndMessaging::{
    EnumWindows, GetForegroundWindow, GetSystemMetrics, GetWindowRect, GetWindowTextW,
    GetWindowThreadProcessId, IsIconic, IsWindow, IsWindowVisible, SetForegroundWindow, ShowWindow,
    PW_RENDERFULLCONTENT, SM_CXVIRTUALSCREEN, SM_CYVIRTUALSCREEN, SM_XVIRTUALSCREEN,
    SM_YVIRTUALSCREEN, SW_RESTORE,
};

/// A window handle as a plain number (what UI Automation's
/// `NativeWindowHandle` reports), so it can cross threads.
pub(crate) type Hwnd = isize;

fn hwnd(h: Hwnd) -> HWND {
    h as HWND
}

/// A visible top-level window (dialogs, which their main window owns,
/// included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TopLevel {
    /// Its handle.
    pub hwnd: Hwnd,
    /// The process that owns it.
    pub pid: u32,
    /// Its title.
    pub title: String,
    /// Its rectangle on the virtual screen.
    pub rect: (i32, i32, i32, i32),
}

fn title_of(h: HWND) -> String {
    let mut buf = [0u16; 512];
    // SAFETY: the buffer and its length match; the window may be gone (0).
    let n = unsafe { GetWindowTextW(h, buf.as_mut_ptr(), buf.len() as i32) };
    String::from_utf16_lossy(&buf[..n.max(0) as usize])
}

fn rect_of(h: HWND) -> Option<(i32, i32, i32, i32)> {
    let mut r = RECT {
        left: 0,
        top: 0,
        right: 0,
        bottom: 0,
    };
    // SAFETY: `r` is a valid RECT to fill.
    let ok = unsafe { GetWindowRect(h, &mut r) };
    (ok != 0).then_some((r.left, r.top, r.right - r.left, r.bottom - r.top))
}

unsafe extern "system" fn collect(h: HWND, data: LPARAM) -> BOOL {
    // SAFETY: `data` is the `Vec<HWND>` `top_levels` passed, alive for the
    // whole EnumWindows call.
    let out = unsafe { &mut *(data as *mut Vec<HWND>) };
    out.push(h);
    1
}

/// Every visible top-level window on the desktop with a size, front to
/// back.
pub(crate) fn top_levels() -> Vec<TopLevel> {
    let mut handles: Vec<HWND> = Vec::new();
    // SAFETY: the callback only pushes into the vector passed as LPARAM,
    // which outlives the call.
    unsafe { EnumWindows(Some(collect), &mut handles as *mut Vec<HWND> as LPARAM) };
    handles
        .into_iter()
        .filter_map(|h| {
            // SAFETY: a plain query on a handle EnumWindows gave; a window
            // that closed meanwhile answers 0.
            if unsafe { IsWindowVisible(h) } == 0 {
                return None;
            }
            let mut pid = 0u32;
            // SAFETY: `pid` is a valid out pointer.
            unsafe { GetWindowThreadProcessId(h, &mut pid) };
            let rect = rect_of(h).filter(|r| r.2 > 0 && r.3 > 0)?;
            Some(TopLevel {
                hwnd: h as Hwnd,
                pid,
                title: title_of(h),
                rect,
            })
        })
        .collect()
}

/// The foreground window (0: none).
pub(crate) fn foreground() -> Hwnd {
    // SAFETY: no arguments.
    unsafe { GetForegroundWindow() as Hwnd }
}

/// Whether the handle still names a window.
pub(crate) fn is_window(h: Hwnd) -> bool {
    // SAFETY: any value may be passed; a stale one answers 0.
    unsafe { IsWindow(hwnd(h)) != 0 }
}

/// The window's rectangle now.
pub(crate) fn window_rect(h: Hwnd) -> Option<(i32, i32, i32, i32)> {
    rect_of(hwnd(h))
}

/// Restores a minimized window and brings it to the foreground. Windows
/// lets a process take the foreground only if it sent the last input, so an
/// Alt press and release goes first (what automation tools do); whether
/// it worked is read back.
pub(crate) fn raise(h: Hwnd) -> Result<(), String> {
    let w = hwnd(h);
    // SAFETY: plain calls on a window handle; a stale one fails harmlessly.
    unsafe {
        if IsIconic(w) != 0 {
            ShowWindow(w, SW_RESTORE);
        }
    }
    if foreground() == h {
        return Ok(());
    }
    let alt = crate::vk::VK_MENU;
    send_keys(&[
        KeyEvent::Virtual {
            vk: alt,
            up: false,
            extended: false,
        },
        KeyEvent::Virtual {
            vk: alt,
            up: true,
            extended: false,
        },
    ])?;
    // SAFETY: as above.
    unsafe { SetForegroundWindow(w) };
    if foreground() == h {
        Ok(())
    } else {
        Err(format!(
            "Windows kept another window (0x{:x}) in the foreground",
            foreground()
        ))
    }
}

fn key_input(vk: u16, scan: u16, flags: u32) -> INPUT {
    INPUT {
        r#type: INPUT_KEYBOARD,
        Anonymous: INPUT_0 {
            ki: KEYBDINPUT {
                wVk: vk,
                wScan: scan,
                dwFlags: flags,
                time: 0,
                dwExtraInfo: 0,
            },
        },
    }
}

/// The inputs of one event. A layout character becomes its virtual key
/// with the modifiers the layout needs (`VkKeyScanW`), or Unicode input
/// when the layout has no key for it.
fn inputs_of(e: &KeyEvent) -> Vec<INPUT> {
    match *e {
        KeyEvent::Virtual { vk, up, extended } => {
            let mut flags = 0;
            if up {
                flags |= KEYEVENTF_KEYUP;
            }
            if extended {
                flags |= KEYEVENTF_EXTENDEDKEY;
            }
            vec![key_input(vk, 0, flags)]
        }
        KeyEvent::Unicode { unit, up } => {
            let flags = KEYEVENTF_UNICODE | if up { KEYEVENTF_KEYUP } else { 0 };
            vec![key_input(0, unit, flags)]
        }
        KeyEvent::Char { c, up } => {
            let mut buf = [0u16; 2];
            let units = c.encode_utf16(&mut buf);
            // SAFETY: a plain table lookup.
            let scan = if units.len() == 1 {
                unsafe { VkKeyScanW(units[0]) }
            } else {
                -1
            };
            if scan == -1 {
                return units
                    .iter()
                    .map(|&u| {
                        key_input(
                            0,
                            u,
                            KEYEVENTF_UNICODE | if up { KEYEVENTF_KEYUP } else { 0 },
                        )
                    })
                    .collect();
            }
            let vk = (scan as u16) & 0xff;
            let shift = (scan as u16 >> 8) & 1 != 0;
            let flags = if up { KEYEVENTF_KEYUP } else { 0 };
            let mut out = Vec::new();
            if shift && !up {
                out.push(key_input(crate::vk::VK_SHIFT, 0, 0));
            }
            out.push(key_input(vk, 0, flags));
            if shift && up {
                out.push(key_input(crate::vk::VK_SHIFT, 0, KEYEVENTF_KEYUP));
            }
            out
        }
    }
}

fn send(inputs: &[INPUT]) -> Result<(), String> {
    if inputs.is_empty() {
        return Ok(());
    }
    // SAFETY: the slice holds `len` initialized INPUTs of the size given.
    let sent = unsafe {
        SendInput(
            inputs.len() as u32,
            inputs.as_ptr(),
            std::mem::size_of::<INPUT>() as i32,
        )
    };
    if sent as usize == inputs.len() {
        Ok(())
    } else {
        Err(format!(
            "SendInput delivered {sent} of {} events ({}); input to a window of higher integrity (an elevated program) is blocked, as is input while the workstation is locked",
            inputs.len(),
            std::io::Error::last_os_error()
        ))
    }
}

/// Sends keyboard events as real input to the foreground window.
pub(crate) fn send_keys(events: &[KeyEvent]) -> Result<(), String> {
    let inputs: Vec<INPUT> = events.iter().flat_map(inputs_of).collect();
    send(&inputs)
}

fn mouse(dx: i32, dy: i32, flags: u32) -> INPUT {
    INPUT {
        r#type: INPUT_MOUSE,
        Anonymous: INPUT_0 {
            mi: MOUSEINPUT {
                dx,
                dy,
                mouseData: 0,
                dwFlags: flags,
                time: 0,
                dwExtraInfo: 0,
            },
        },
    }
}

/// Moves the real pointer to screen point `(x, y)` and clicks the left
/// button there.
pub(crate) fn click_at(x: i32, y: i32) -> Result<(), String> {
    // SAFETY: plain metric queries.
    let virt = unsafe {
        (
            GetSystemMetrics(SM_XVIRTUALSCREEN),
            GetSystemMetrics(SM_YVIRTUALSCREEN),
            GetSystemMetrics(SM_CXVIRTUALSCREEN),
            GetSystemMetrics(SM_CYVIRTUALSCREEN),
        )
    };
    let (ax, ay) = crate::pointer::absolute((x, y), virt)
        .ok_or_else(|| format!("({x}, {y}) is not on any screen"))?;
    let abs = MOUSEEVENTF_ABSOLUTE | MOUSEEVENTF_VIRTUALDESK;
    send(&[
        mouse(ax, ay, MOUSEEVENTF_MOVE | abs),
        mouse(ax, ay, MOUSEEVENTF_LEFTDOWN | abs),
        mouse(ax, ay, MOUSEEVENTF_LEFTUP | abs),
    ])
}

/// A window's own pixels, top-down RGBA, read with `PrintWindow` and
/// `PW_RENDERFULLCONTENT` (DirectComposition and GPU content included): the
/// window renders itself into a private bitmap, so a window over it never
/// shows, and nothing outside it is read.
pub(crate) fn capture(h: Hwnd) -> Result<(u32, u32, Vec<u8>), String> {
    let w = hwnd(h);
    let (_, _, width, height) = rect_of(w).ok_or("the window is gone")?;
    if width <= 0 || height <= 0 {
        return Err("the window has no size (minimized or hidden)".into());
    }
    // SAFETY: each GDI object is created, used with matching sizes, and
    // released exactly once below, whatever PrintWindow answers.
    unsafe {
        let screen = GetDC(std::ptr::null_mut());
        if screen.is_null() {
            return Err("no screen device context (no interactive desktop)".into());
        }
        let dc = CreateCompatibleDC(screen);
        let bmp = CreateCompatibleBitmap(screen, width, height);
        let old = SelectObject(dc, bmp);
        let printed = PrintWindow(w, dc, PW_RENDERFULLCONTENT);
        let mut info: BITMAPINFO = std::mem::zeroed();
        info.bmiHeader = BITMAPINFOHEADER {
            biSize: std::mem::size_of::<BITMAPINFOHEADER>() as u32,
            biWidth: width,
            // Negative: rows top-down.
            biHeight: -height,
            biPlanes: 1,
            biBitCount: 32,
            biCompression: BI_RGB,
            ..std::mem::zeroed()
        };
        let mut bgra = vec![0u8; width as usize * height as usize * 4];
        let rows = if printed != 0 {
            GetDIBits(
                dc,
                bmp,
                0,
                height as u32,
                bgra.as_mut_ptr() as *mut c_void,
                &mut info,
                DIB_RGB_COLORS,
            )
        } else {
            0
        };
        SelectObject(dc, old);
        DeleteObject(bmp);
        DeleteDC(dc);
        ReleaseDC(std::ptr::null_mut(), screen);
        if printed == 0 {
            return Err("PrintWindow failed: the window did not render itself".into());
        }
        if rows != height {
            return Err(format!("GetDIBits read {rows} of {height} rows"));
        }
        Ok((
            width as u32,
            height as u32,
            crate::pointer::bgra_to_rgba(bgra),
        ))
    }
}

struct Handle(HANDLE);

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: an owned handle, closed once.
        unsafe { CloseHandle(self.0) };
    }
}

/// Every process's `(pid, parent pid)`.
pub(crate) fn process_table() -> Vec<(u32, u32)> {
    // SAFETY: a snapshot of all processes; closed by `Handle`.
    let snap = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0) };
    if snap == INVALID_HANDLE_VALUE || snap.is_null() {
        return Vec::new();
    }
    let snap = Handle(snap);
    let mut out = Vec::new();
    // SAFETY: a zeroed entry with its size set is what the walk expects.
    let mut e: PROCESSENTRY32W = unsafe { std::mem::zeroed() };
    e.dwSize = std::mem::size_of::<PROCESSENTRY32W>() as u32;
    // SAFETY: a valid snapshot and entry.
    let mut ok = unsafe { Process32FirstW(snap.0, &mut e) };
    while ok != 0 {
        out.push((e.th32ProcessID, e.th32ParentProcessID));
        // SAFETY: as above.
        ok = unsafe { Process32NextW(snap.0, &mut e) };
    }
    out
}

fn open_query(pid: u32) -> Option<Handle> {
    // SAFETY: returns an owned handle or null.
    let h = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    (!h.is_null()).then_some(Handle(h))
}

/// When process `pid` was created (100-ns ticks since 1601), if readable.
pub(crate) fn started(pid: u32) -> Option<u64> {
    let p = open_query(pid)?;
    let zero = FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut created, mut exited, mut kernel, mut user) = (zero, zero, zero, zero);
    // SAFETY: a valid process handle and four out structures.
    let ok = unsafe { GetProcessTimes(p.0, &mut created, &mut exited, &mut kernel, &mut user) };
    (ok != 0)
        .then_some((u64::from(created.dwHighDateTime) << 32) | u64::from(created.dwLowDateTime))
}

/// Whether process `pid` exists (and can be queried).
pub(crate) fn process_exists(pid: u32) -> bool {
    open_query(pid).is_some() || process_table().iter().any(|&(p, _)| p == pid)
}

/// The Terminal Services session of this process.
pub(crate) fn own_session() -> Option<u32> {
    let mut s = 0u32;
    // SAFETY: `s` is a valid out pointer.
    let ok = unsafe { ProcessIdToSessionId(GetCurrentProcessId(), &mut s) };
    (ok != 0).then_some(s)
}

/// The desktop that receives input, by name.
pub(crate) fn input_desktop() -> InputDesktop {
    // SAFETY: returns an owned desktop handle or null.
    let d = unsafe { OpenInputDesktop(0, 0, DESKTOP_READOBJECTS) };
    if d.is_null() {
        return InputDesktop::Unavailable(std::io::Error::last_os_error().to_string());
    }
    let mut buf = [0u16; 256];
    let mut needed = 0u32;
    // SAFETY: the buffer's byte length is given; `d` is valid until closed.
    let ok = unsafe {
        GetUserObjectInformationW(
            d as HANDLE,
            UOI_NAME,
            buf.as_mut_ptr() as *mut c_void,
            (buf.len() * 2) as u32,
            &mut needed,
        )
    };
    // SAFETY: closed once.
    unsafe { CloseDesktop(d) };
    if ok == 0 {
        return InputDesktop::Unavailable(std::io::Error::last_os_error().to_string());
    }
    let end = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
    let name = String::from_utf16_lossy(&buf[..end]);
    if name.eq_ignore_ascii_case("Default") {
        InputDesktop::Default
    } else {
        InputDesktop::Other(name)
    }
}

fn token_elevated(process: HANDLE) -> Result<bool, u32> {
    let mut token: HANDLE = std::ptr::null_mut();
    // SAFETY: `token` is a valid out pointer; closed by `Handle`.
    if unsafe { OpenProcessToken(process, TOKEN_QUERY, &mut token) } == 0 {
        // SAFETY: no arguments.
        return Err(unsafe { GetLastError() });
    }
    let token = Handle(token);
    let mut e = TOKEN_ELEVATION { TokenIsElevated: 0 };
    let mut len = 0u32;
    // SAFETY: the structure and its size match the information class.
    let ok = unsafe {
        GetTokenInformation(
            token.0,
            TokenElevation,
            (&mut e as *mut TOKEN_ELEVATION).cast(),
            std::mem::size_of::<TOKEN_ELEVATION>() as u32,
            &mut len,
        )
    };
    if ok == 0 {
        // SAFETY: no arguments.
        return Err(unsafe { GetLastError() });
    }
    Ok(e.TokenIsElevated != 0)
}

/// Whether ui-qa can drive process `pid`: an elevated target is out of a
/// non-elevated runner's reach (its token cannot even be opened).
pub(crate) fn target_access(pid: u32) -> TargetAccess {
    // SAFETY: the pseudo-handle of this process needs no closing.
    if token_elevated(unsafe { GetCurrentProcess() }) == Ok(true) {
        return TargetAccess::Drivable;
    }
    let Some(p) = open_query(pid) else {
        return TargetAccess::Drivable;
    };
    match token_elevated(p.0) {
        Ok(true) | Err(ERROR_ACCESS_DENIED) => TargetAccess::ElevatedTarget,
        _ => TargetAccess::Drivable,
    }
}
