//! The driven application: its accessible top-level windows, the processes
//! that belong to it, and the X window steps capture, focus and type into.

use super::bus::A11y;
use super::capture::{XWindow, X11};
use super::display::missing;
use super::objref::ObjRef;
use super::procs;
use super::tree::{children, Reads};
use qa_core::DriverError;
use qa_desktop::{DesktopCode, Fields, State, TopWindow};
use std::sync::Arc;
use x11rb::protocol::xproto::Window;

/// Most top-level windows read from the accessibility bus at once.
const WINDOW_CAP: usize = 64;

/// The application one session drives.
pub(crate) struct App {
    /// The accessibility bus it is registered on.
    pub a11y: A11y,
    /// The run's X display.
    pub x11: Arc<X11>,
    /// Its root accessible.
    pub root: ObjRef,
    /// How its properties are read (by its toolkit).
    pub reads: Reads,
    /// Its accessible name.
    pub name: String,
    /// The process owning its accessibility-bus connection (0: unknown).
    pub pid: u32,
    /// The launched process (`None` when attached: never signalled).
    pub launched_pid: Option<u32>,
    /// The window title the flow names (`application.window.title`).
    pub window_title: Option<String>,
    /// The X display name (`:N`), for messages.
    pub display: String,
    /// The X window [`App::x_window`] picked last (the window video follows it).
    pub picked: tokio::sync::watch::Sender<Option<Window>>,
}

impl App {
    /// The accessibility bus connection.
    pub(crate) fn conn(&self) -> &zbus::Connection {
        &self.a11y.conn
    }

    /// Its top-level accessible windows (the application root's children).
    pub(crate) async fn windows(&self) -> Vec<TopWindow> {
        let f = Fields {
            states: true,
            ..Fields::default()
        };
        children(self.conn(), self.reads, &self.root, f, WINDOW_CAP)
            .await
            .into_iter()
            .map(|n| TopWindow {
                showing: n.has(State::Showing),
                active: n.has(State::Active),
                name: n.view.name,
            })
            .collect()
    }

    /// The processes whose X windows are the application's: the bus
    /// connection's process, plus every process of the launched one.
    pub(crate) fn pids(&self) -> Vec<u32> {
        procs::window_pids(self.pid, self.launched_pid)
    }

    /// Runs blocking X11 work off the async runtime; a task that fails to
    /// finish is a `code` error.
    pub(crate) async fn with_x11<R: Send + 'static>(
        &self,
        code: DesktopCode,
        f: impl FnOnce(&X11) -> R + Send + 'static,
    ) -> Result<R, DriverError> {
        let x = self.x11.clone();
        tokio::task::spawn_blocking(move || f(&x))
            .await
            .map_err(|e| DriverError::new(code, e.to_string()))
    }

    /// The application's viewable X windows.
    pub(crate) async fn x_windows(&self) -> Vec<XWindow> {
        let (x, pids) = (self.x11.clone(), self.pids());
        // A failed lookup task finds no window (the caller reports that).
        tokio::task::spawn_blocking(move || x.windows_of(&pids))
            .await
            .unwrap_or_default()
    }

    /// The X window to capture / type into: the flow's window title, else the
    /// active accessible window, else the first showing one, else the largest.
    pub(crate) async fn x_window(&self) -> Result<XWindow, DriverError> {
        let w = self.pick_window().await?;
        self.picked.send_if_modified(|p| {
            let changed = *p != Some(w.id);
            *p = Some(w.id);
            changed
        });
        Ok(w)
    }

    async fn pick_window(&self) -> Result<XWindow, DriverError> {
        let wins = self.windows().await;
        let want = self.window_title.clone().or_else(|| {
            wins.iter()
                .find(|w| w.active)
                .or_else(|| wins.iter().find(|w| w.showing))
                .map(|w| w.name.clone())
        });
        let xs = self.x_windows().await;
        // A title the flow names must match: never another window instead.
        if let Some(t) = &self.window_title {
            return match xs.iter().find(|w| &w.title == t) {
                Some(w) => Ok(w.clone()),
                None => {
                    let titles: Vec<String> = xs
                        .iter()
                        .map(|w| format!("{:?}", w.title))
                        .take(10)
                        .collect();
                    Err(DriverError::new(
                        DesktopCode::WindowTitleNotFound,
                        format!(
                            "no window of the application is titled {t:?}; its windows: [{}]",
                            titles.join(", ")
                        ),
                    )
                    .with_remediation(
                        "write one of the listed titles in application.window.title, or drop it",
                    ))
                }
            };
        }
        let by_title = want.and_then(|t| xs.iter().find(|w| w.title == t).cloned());
        let largest = || {
            xs.iter()
                .max_by_key(|w| w.width as u64 * w.height as u64)
                .cloned()
        };
        by_title.or_else(largest).ok_or_else(|| {
            DriverError::blocked(
                DesktopCode::CaptureNoWindow,
                missing(
                    "window-capture",
                    format!("no viewable X window carries _NET_WM_PID {} on display {}", self.pid, self.display),
                    "the application must run on this X display (not Wayland) and set _NET_WM_PID (GTK and Qt do)",
                ),
            )
        })
    }

    /// Raises the window [`App::x_window`] picks and gives it the keyboard focus.
    pub(crate) async fn focus_window(&self) -> Result<XWindow, DriverError> {
        let w = self.x_window().await?;
        let id = w.id;
        self.with_x11(DesktopCode::InputFailed, move |x| x.raise_and_focus(id))
            .await?
            .map_err(|e| DriverError::new(DesktopCode::InputFailed, e))?;
        Ok(w)
    }
}
