//! The application driven: its AX application element and its windows
//! (`kAXWindowsAttribute`), which one a step uses, and raising it.
//! Blocking calls: run off the async executor.

use super::ffi::{Attr, AxElement};
use super::objc;
use crate::ax;
use crate::element::Value;
use crate::window::{self, AxWindow, Rect};
use qa_core::DriverError;
use qa_desktop::DesktopCode;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// `kAXWindowsAttribute`.
const WINDOWS: &str = "AXWindows";
/// `kAXMainAttribute`.
const MAIN: &str = "AXMain";
/// `kAXMinimizedAttribute`.
const MINIMIZED: &str = "AXMinimized";
/// `kAXFrontmostAttribute`.
const FRONTMOST: &str = "AXFrontmost";
/// `kAXRaiseAction`.
const RAISE: &str = "AXRaise";

/// How long raising may take to show (the application is frontmost).
const RAISE_MS: u64 = 1_500;

/// The application.
pub(crate) struct App {
    /// Its name (the program's, or what the flow attached by).
    pub name: String,
    /// Its process.
    pub pid: i32,
    /// Its AX application element.
    pub ax: AxElement,
    /// The window the flow names (`application.window.title`).
    pub window_title: Option<String>,
    /// The window the session used last (the video follows it).
    pub picked: Mutex<Option<AxElement>>,
}

/// One of its windows.
#[derive(Debug, Clone)]
pub(crate) struct Win {
    /// Its element.
    pub element: AxElement,
    /// What was read of it.
    pub info: AxWindow,
}

fn window_info(w: &AxElement) -> Option<AxWindow> {
    let names = [
        ax::TITLE,
        MAIN,
        ax::FOCUSED,
        MINIMIZED,
        ax::POSITION,
        ax::SIZE,
    ];
    let values = w.read(&names).ok()?;
    let mut info = AxWindow {
        title: String::new(),
        main: false,
        focused: false,
        minimized: false,
        frame: None,
    };
    let (mut pos, mut size) = (None, None);
    for (name, v) in names.iter().zip(values) {
        let Some(Attr::Value(v)) = v else { continue };
        match (*name, v) {
            (ax::TITLE, Value::Text(t)) => info.title = t,
            (MAIN, Value::Bool(b)) => info.main = b,
            (ax::FOCUSED, Value::Bool(b)) => info.focused = b,
            (MINIMIZED, Value::Bool(b)) => info.minimized = b,
            (ax::POSITION, Value::Point(x, y)) => pos = Some((x, y)),
            (ax::SIZE, Value::Size(w, h)) => size = Some((w, h)),
            _ => {}
        }
    }
    if let (Some((x, y)), Some((width, height))) = (pos, size) {
        info.frame = Some(Rect {
            x,
            y,
            width,
            height,
        });
    }
    Some(info)
}

impl App {
    /// Its windows, as `kAXWindowsAttribute` lists them (front to back).
    pub fn windows(&self) -> Vec<Win> {
        let Ok(Some(Attr::Elements(ws))) = self.ax.attribute(WINDOWS) else {
            return Vec::new();
        };
        ws.into_iter()
            .filter_map(|element| window_info(&element).map(|info| Win { element, info }))
            .collect()
    }

    /// Whether it is the frontmost application.
    pub fn frontmost(&self) -> bool {
        self.ax.flag(FRONTMOST).ok().flatten().unwrap_or(false)
    }

    /// The window a step uses ([`window::pick`]), remembered for the video.
    pub fn pick(&self) -> Result<Win, DriverError> {
        let ws = self.windows();
        let infos: Vec<AxWindow> = ws.iter().map(|w| w.info.clone()).collect();
        let Some(i) = window::pick(&infos, self.window_title.as_deref()) else {
            return Err(match &self.window_title {
                Some(t) => DriverError::new(
                    DesktopCode::WindowTitleNotFound,
                    format!(
                        "no window of the application is titled {t:?} (its windows: {})",
                        titles(&infos)
                    ),
                ),
                None => DriverError::new(
                    DesktopCode::CaptureNoWindow,
                    "the application shows no window (kAXWindowsAttribute is empty)",
                ),
            });
        };
        let w = ws[i].clone();
        *self.picked.lock().unwrap_or_else(|p| p.into_inner()) = Some(w.element.clone());
        Ok(w)
    }

    /// The window the session used last, if the application still lists
    /// it.
    pub fn last_picked(&self) -> Option<Win> {
        let last = self
            .picked
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()?;
        self.windows().into_iter().find(|w| w.element == last)
    }

    /// Raises `w` (`AXRaise`, `AXMain`) and makes the application
    /// frontmost (`AXFrontmost`, else NSRunningApplication's activate),
    /// confirmed by reading `AXFrontmost` back.
    pub fn raise(&self, w: &Win) -> Result<(), String> {
        let _ = w.element.perform(RAISE);
        let _ = w.element.set_flag(MAIN, true);
        if self.frontmost() {
            return Ok(());
        }
        if self.ax.set_flag(FRONTMOST, true).is_err() {
            objc::activate(self.pid);
        }
        let until = Instant::now() + Duration::from_millis(RAISE_MS);
        let mut asked_appkit = false;
        while Instant::now() < until {
            if self.frontmost() {
                let _ = w.element.perform(RAISE);
                return Ok(());
            }
            if !asked_appkit && Instant::now() + Duration::from_millis(RAISE_MS / 2) > until {
                asked_appkit = true;
                objc::activate(self.pid);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(format!(
            "the application (pid {}) did not become frontmost within {RAISE_MS} ms (AXFrontmost stayed false)",
            self.pid
        ))
    }
}

/// Window titles for a message.
pub(crate) fn titles(ws: &[AxWindow]) -> String {
    if ws.is_empty() {
        return "none".into();
    }
    ws.iter()
        .map(|w| format!("{:?}", w.title))
        .collect::<Vec<_>>()
        .join(", ")
}
