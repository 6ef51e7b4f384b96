//! The windows of programs another driver owns (the terminal driver's
//! native terminal): qa-core's [`WindowHost`] on X11. The display is the
//! host's own (`DISPLAY`) or, with `--virtual-display`, an owned Xvfb
//! alone (no session bus: nothing here reads an accessibility tree). A
//! window is found by `_NET_WM_PID` among the processes of the program
//! that owns it and captured exactly as the desktop driver's windows are.

use super::capture::{CaptureError, XWindow, X11};
use super::display::{display_missing, missing, private_dir, start_xvfb, XAuth};
use super::{procs, video};
use async_trait::async_trait;
use qa_core::host::which;
use qa_core::window::{WindowHost, WindowPicture, WindowRecording, WindowScreen};
use qa_core::{
    Capability, Deadline, DriverError, MissingCapability, Note, RunOptions, SessionContext,
};
use qa_desktop::video::WindowVideo;
use qa_desktop::DesktopCode;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// How often a window is looked for while waiting for one.
const LOOK_EVERY: Duration = Duration::from_millis(50);

/// X11 displays for programs that are not the desktop driver's.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct X11Host;

#[async_trait]
impl WindowHost for X11Host {
    fn probe(&self, options: &RunOptions) -> Result<Capability, Vec<MissingCapability>> {
        let m = display_missing(options.virtual_display);
        if !m.is_empty() {
            return Err(m);
        }
        Ok(Capability {
            id: "display".into(),
            detail: if options.virtual_display {
                "an owned Xvfb (--virtual-display)".into()
            } else {
                format!(
                    "X11 display {}",
                    std::env::var("DISPLAY").unwrap_or_default()
                )
            },
        })
    }

    async fn open(
        &self,
        ctx: &SessionContext,
        deadline: Deadline,
    ) -> Result<Box<dyn WindowScreen>, DriverError> {
        if let Some(m) = display_missing(ctx.options.virtual_display)
            .into_iter()
            .next()
        {
            return Err(DriverError::blocked(DesktopCode::HostMissing, m));
        }
        let mut screen = Screen {
            display: String::new(),
            x11: None,
            dir: None,
            xauth: None,
            _children: Vec::new(),
        };
        if ctx.options.virtual_display {
            let dir = private_dir().map_err(|e| {
                DriverError::new(
                    DesktopCode::VirtualDisplayIo,
                    format!("private directory: {e}"),
                )
            })?;
            screen.dir = Some(dir.clone());
            let xvfb = which("Xvfb").expect("checked");
            let (display, xauth) =
                start_xvfb(ctx, deadline, &xvfb, &dir, &mut screen._children).await?;
            screen.display = display;
            screen.xauth = Some(xauth);
        } else {
            screen.display = std::env::var("DISPLAY").unwrap_or_default();
        }
        let display = screen.display.clone();
        let cookie = screen.xauth.as_ref().map(|a| a.cookie().to_vec());
        let x11 = tokio::task::spawn_blocking(move || X11::connect(&display, cookie.as_deref()))
            .await
            .map_err(|e| DriverError::new(DesktopCode::CaptureFailed, e.to_string()))?
            .map_err(|e| {
                DriverError::blocked(
                    DesktopCode::HostMissing,
                    missing(
                        "display",
                        format!("the X display {} cannot be opened: {e}", screen.display),
                        "run with --virtual-display, or set DISPLAY to a display this user may open",
                    ),
                )
            })?;
        screen.x11 = Some(Arc::new(x11));
        Ok(Box::new(screen))
    }
}

/// One session's display and the connection that finds and captures
/// windows on it.
struct Screen {
    display: String,
    x11: Option<Arc<X11>>,
    /// The owned Xvfb's private directory (its log), removed at the end.
    dir: Option<PathBuf>,
    /// The owned Xvfb's authority (its file goes with the run's scratch).
    xauth: Option<XAuth>,
    /// The owned Xvfb (its pipe stays open while the screen lives; the
    /// run's process owner ends it).
    _children: Vec<tokio::process::Child>,
}

impl Drop for Screen {
    fn drop(&mut self) {
        if let Some(d) = &self.dir {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

impl Screen {
    fn x11(&self) -> Arc<X11> {
        self.x11.clone().expect("connected at open")
    }

    /// The largest window of `root`'s processes, looked up now.
    async fn window_of(&self, root: u32) -> Option<XWindow> {
        let x = self.x11();
        tokio::task::spawn_blocking(move || {
            let pids = procs::members_now(root);
            x.windows_of(&pids)
                .into_iter()
                .max_by_key(|w| u64::from(w.width) * u64::from(w.height))
        })
        .await
        .ok()
        .flatten()
    }
}

#[async_trait]
impl WindowScreen for Screen {
    fn env(&self) -> Vec<(String, String)> {
        let mut v = vec![("DISPLAY".to_string(), self.display.clone())];
        match &self.xauth {
            // The run's own display: only with its cookie.
            Some(a) => v.push(("XAUTHORITY".into(), a.file.display().to_string())),
            // The host's display may need its authority file.
            None => {
                if let Ok(a) = std::env::var("XAUTHORITY") {
                    v.push(("XAUTHORITY".into(), a));
                }
            }
        }
        v
    }

    async fn wait_window(&self, root: u32, deadline: Deadline) -> Result<String, DriverError> {
        loop {
            if let Some(w) = self.window_of(root).await {
                return Ok(format!("window 0x{:x}", w.id));
            }
            if deadline.expired() {
                return Err(DriverError::new(
                    DesktopCode::CaptureNoWindow,
                    format!(
                        "process {root} showed no window on display {} before the deadline",
                        self.display
                    ),
                ));
            }
            tokio::time::sleep(LOOK_EVERY.min(deadline.remaining())).await;
        }
    }

    async fn capture(&self, root: u32) -> Result<WindowPicture, DriverError> {
        let Some(w) = self.window_of(root).await else {
            return Err(DriverError::new(
                DesktopCode::CaptureNoWindow,
                format!("process {root} shows no window to capture"),
            ));
        };
        let x = self.x11();
        let id = w.id;
        let frame = tokio::task::spawn_blocking(move || {
            x.capture_window(id, &mut || procs::members_now(root))
        })
        .await
        .map_err(|e| DriverError::new(DesktopCode::CaptureFailed, e.to_string()))?
        .map_err(|e| match e {
            CaptureError::Covered => DriverError::new(
                DesktopCode::CaptureCovered,
                format!("{}; no picture was taken", e.message()),
            ),
            CaptureError::Failed(e) => DriverError::new(DesktopCode::CaptureFailed, e),
        })?;
        let png = frame
            .png()
            .map_err(|e| DriverError::new(DesktopCode::CaptureFailed, e))?;
        Ok(WindowPicture {
            png,
            window: format!("window 0x{:x}", w.id),
            pid: w.pid,
            width: frame.width,
            height: frame.height,
        })
    }

    fn record(&self, ctx: &SessionContext, root: u32) -> Box<dyn WindowRecording> {
        // Nothing ever picks another window: the sender is dropped.
        let (_, picked) = watch::channel(None);
        Box::new(Recording(video::start(
            ctx,
            video::Target {
                x11: self.x11(),
                bus_pid: root,
                launched_pid: Some(root),
                title: None,
                picked,
                early: None,
            },
        )))
    }
}

/// The window's video.
struct Recording(WindowVideo);

#[async_trait]
impl WindowRecording for Recording {
    fn records(&self) -> bool {
        self.0.records()
    }

    async fn ready(&self, length: Duration, deadline: Deadline) -> bool {
        self.0.ready(length, deadline).await
    }

    async fn hold(&self, length: Duration, deadline: Deadline) {
        self.0.hold(length, deadline).await
    }

    async fn finish(self: Box<Self>, deadline: Deadline) -> Vec<Note> {
        self.0.finish(deadline).await
    }
}
