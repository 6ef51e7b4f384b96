//! The application driven: its processes (the launched or attached one and
//! its descendants) and their top-level windows, read with Win32 — never
//! through UI Automation, so a window is found even while the UI thread of
//! the application is busy.

use super::win32::{self, Hwnd, TopLevel};
use crate::procs::{self, Candidate};
use qa_core::DriverError;
use qa_desktop::DesktopCode;
use std::sync::Mutex;

/// The application.
pub(crate) struct App {
    /// Its name (the program's file name, or what the flow attached by).
    pub name: String,
    /// The launched or attached process.
    pub pid: u32,
    /// The window the flow names (`application.window.title`).
    pub window_title: Option<String>,
    /// The window the session used last (the video follows it).
    pub picked: Mutex<Option<Hwnd>>,
}

impl App {
    /// The application's processes now: its process and every descendant.
    pub fn pids(&self) -> Vec<u32> {
        procs::descendants(self.pid, &win32::process_table(), &win32::started)
    }

    /// Its visible top-level windows, front to back.
    pub fn windows(&self) -> Vec<TopLevel> {
        let pids = self.pids();
        win32::top_levels()
            .into_iter()
            .filter(|w| pids.contains(&w.pid))
            .collect()
    }

    /// The window a step uses ([`procs::pick_window`]), remembered for the
    /// video.
    pub fn pick(&self) -> Result<TopLevel, DriverError> {
        let windows = self.windows();
        let fg = win32::foreground();
        let cands: Vec<Candidate<'_>> = windows
            .iter()
            .map(|w| Candidate {
                title: &w.title,
                area: w.rect.2.max(0) as u64 * w.rect.3.max(0) as u64,
                foreground: w.hwnd == fg,
            })
            .collect();
        let Some(i) = procs::pick_window(&cands, self.window_title.as_deref()) else {
            return Err(match &self.window_title {
                Some(t) => DriverError::new(
                    DesktopCode::WindowTitleNotFound,
                    format!(
                        "no window of the application is titled {t:?} (its windows: {})",
                        titles(&windows)
                    ),
                ),
                None => DriverError::new(
                    DesktopCode::CaptureNoWindow,
                    "the application shows no top-level window",
                ),
            });
        };
        let w = windows[i].clone();
        *self.picked.lock().unwrap_or_else(|p| p.into_inner()) = Some(w.hwnd);
        Ok(w)
    }

    /// The window the session used last, if it is still there.
    pub fn last_picked(&self) -> Option<Hwnd> {
        let h = (*self.picked.lock().unwrap_or_else(|p| p.into_inner()))?;
        win32::is_window(h).then_some(h)
    }
}

/// Window titles for a message.
pub(crate) fn titles(ws: &[TopLevel]) -> String {
    if ws.is_empty() {
        return "none".into();
    }
    ws.iter()
        .map(|w| format!("{:?}", w.title))
        .collect::<Vec<_>>()
        .join(", ")
}
