//! A run of an app that embeds Chromium (`target.app`): its display comes
//! from the window host the program gave the driver, the app is launched
//! and connected to (`host::app`), and the run drives the one page its
//! window shows as an existing page (`attach`), in the app's own context.
//! The window's pictures and video are the desktop side's: exactly that
//! window's pixels.

use crate::attach::Attached;
use crate::cdp::Cdp;
use crate::codes::WebCode;
use crate::contain::PortGuard;
use crate::host;
use qa_core::flow::{DevToolsChannel, EmbeddedApp};
use qa_core::window::{WindowHost, WindowRecording, WindowScreen};
use qa_core::{
    Artifact, ArtifactGroup, Deadline, DriverError, Flow, MissingCapability, Note, NoteKind,
    SessionContext,
};
use std::sync::Arc;
use std::time::Duration;

/// Longest wait for the app's window and page after its DevTools answer.
const PAGE_WAIT: Duration = Duration::from_secs(15);

/// What the session keeps of the app.
pub(crate) struct AppRun {
    /// Its process (reaped at close).
    pub child: tokio::process::Child,
    /// Its pid.
    pub pid: u32,
    /// The watch on its DevTools port.
    pub guard: Option<PortGuard>,
    /// Its display.
    pub screen: Box<dyn WindowScreen>,
    /// Whether its window was found (pictures and video need it).
    pub window: bool,
    /// The window's video.
    pub video: Option<Box<dyn WindowRecording>>,
    /// The video's first frame was taken.
    pub readied: bool,
}

/// What a probe finds for `app`: the program, and the display.
pub(crate) fn probe(
    app: &EmbeddedApp,
    flow: &Flow,
    windows: Option<&Arc<dyn WindowHost>>,
    options: &qa_core::RunOptions,
) -> (Vec<qa_core::Capability>, Vec<MissingCapability>) {
    let (mut present, mut missing) = (Vec::new(), Vec::new());
    match host::app::program(app, &flow.base_dir) {
        Ok(p) => present.push(qa_core::Capability {
            id: "application".into(),
            detail: p.display().to_string(),
        }),
        Err(m) => missing.push(m),
    }
    match windows {
        Some(w) => match w.probe(options) {
            Ok(c) => present.push(c),
            Err(m) => missing.extend(m),
        },
        None => missing.push(no_window_host()),
    }
    (present, missing)
}

fn no_window_host() -> MissingCapability {
    MissingCapability {
        id: "display".into(),
        reason: "target.app shows the app's window on a display, and this program gave the browser driver no window host (ui-qa has one on Linux with X11)".into(),
        remediation: "run the flow with the ui-qa binary on Linux (X11, or --virtual-display), or give the driver a window host with WebDriver::with_window_host".into(),
    }
}

/// Opens the display, launches the app and finds the page it shows.
pub(crate) async fn open(
    app: &EmbeddedApp,
    flow: &Flow,
    ctx: &SessionContext,
    windows: Option<&Arc<dyn WindowHost>>,
    deadline: Deadline,
) -> Result<(Attached, AppRun), DriverError> {
    let host =
        windows.ok_or_else(|| DriverError::blocked(WebCode::AppNoDevtools, no_window_host()))?;
    let screen = host
        .open(ctx, Deadline::after_ms(10_000).min(deadline))
        .await?;
    let launched = host::app::launch(app, &flow.base_dir, ctx, screen.env(), deadline).await?;
    let page_deadline = Deadline::after(PAGE_WAIT).min(deadline);
    let tripped = launched.guard.as_ref().map(PortGuard::watch);
    let page = match wait_page(&launched.cdp, app.page_url.as_deref(), page_deadline).await {
        Ok(p) => p,
        Err(e) => {
            return Err(match tripped.and_then(|t| t.what()) {
                Some(what) => because(foreign(what), e),
                None => e,
            })
        }
    };
    let name = std::path::Path::new(&app.launch.argv[0])
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut notes = launched.notes;
    notes.insert(
        0,
        Note::new(
            NoteKind::Environment,
            format!(
                "the run launched the app {name:?} (pid {}) and drives the page its window shows ({}), in the app's own context, over DevTools ({}); the app and everything it started end with the run",
                launched.pid,
                crate::contain::split_url(&page.1).0,
                match app.devtools {
                    DevToolsChannel::Pipe => "pipe",
                    DevToolsChannel::Port => "loopback port",
                }
            ),
        ),
    );
    notes.push(Note::new(
        NoteKind::Environment,
        "containment: the app's own context has no proxy of the run's; the page's requests are stopped by interception inside the app only",
    ));
    let window = match screen.wait_window(launched.pid, page_deadline).await {
        Ok(w) => {
            notes.push(Note::new(
                NoteKind::Environment,
                format!("the app's window: {w}; its pictures and video are that window's pixels"),
            ));
            true
        }
        Err(e) => {
            notes.push(Note::new(
                NoteKind::Evidence,
                format!(
                    "the app showed no window ui-qa could find ({}): no window pictures or video",
                    e.message
                ),
            ));
            false
        }
    };
    let video = window.then(|| screen.record(ctx, launched.pid));
    let attached = Attached {
        cdp: launched.cdp,
        events: launched.events,
        context: None,
        existing: Some(page),
        proxy: None,
        local: true,
        notes,
    };
    Ok((
        attached,
        AppRun {
            child: launched.child,
            pid: launched.pid,
            guard: launched.guard,
            screen,
            window,
            video,
            readied: false,
        },
    ))
}

/// Waits, within `deadline`, until the app shows exactly one page (whose
/// URL includes `page_url`, when given): its target id and URL.
async fn wait_page(
    cdp: &Arc<Cdp>,
    page_url: Option<&str>,
    deadline: Deadline,
) -> Result<(String, String), DriverError> {
    let want = page_url.unwrap_or_default();
    loop {
        let bound = deadline.remaining().max(Duration::from_millis(1));
        let mut pages = crate::attach::pages_matching(cdp, want, bound).await?;
        match pages.len() {
            1 => return Ok(pages.remove(0)),
            0 if !deadline.expired() => tokio::time::sleep(Duration::from_millis(100)).await,
            0 => {
                return Err(DriverError::new(
                    WebCode::ConnectNoPage,
                    match page_url {
                        Some(u) => format!("the app showed no page whose URL includes {u:?}"),
                        None => "the app showed no page".to_string(),
                    },
                )
                .with_remediation(
                    "check that the app opens a web page at start (its argv names the URL), and name it with pageUrl",
                ))
            }
            many => {
                return Err(DriverError::new(
                    WebCode::ConnectNoPage,
                    format!(
                        "the app shows {many} pages{}; pageUrl must name one",
                        page_url
                            .map(|u| format!(" whose URL includes {u:?}"))
                            .unwrap_or_default()
                    ),
                )
                .with_remediation("set target.app.pageUrl to text of the URL of the page to drive"))
            }
        }
    }
}

/// `why` the run cannot go on, with what the failing call said (`e`) and
/// its notes.
pub(crate) fn because(mut why: DriverError, e: DriverError) -> DriverError {
    why.message = format!("{} ({})", why.message, e.message);
    why.notes.extend(e.notes);
    why
}

/// The run's failure when another client reached the app's DevTools port.
pub(crate) fn foreign(what: String) -> DriverError {
    DriverError::new(WebCode::AppForeignConnection, what).with_remediation(
        "use \"devtools\": \"pipe\" where the app supports it; otherwise find the process that connected to the app's DevTools port (any local user can)",
    )
}

impl AppRun {
    /// Why the run cannot go on, if the app is gone or its port was
    /// reached by another client.
    pub(crate) fn explain(&self, cdp_open: bool) -> Option<DriverError> {
        if let Some(what) = self.guard.as_ref().and_then(PortGuard::tripped) {
            return Some(foreign(what));
        }
        (!cdp_open).then(|| {
            DriverError::new(
                WebCode::AppExited,
                "the app ended (or closed its DevTools) mid-run",
            )
            .with_remediation("check the app's output; run its argv by hand to see why it stops")
        })
    }

    /// Before the first step: the video starts with the window as it was.
    pub(crate) async fn video_ready(&mut self, deadline: Deadline) {
        if std::mem::replace(&mut self.readied, true) {
            return;
        }
        if let Some(v) = self.video.as_ref().filter(|v| v.records()) {
            let hold = Duration::from_millis(qa_core::recording::DEFAULT_VIDEO_HOLD_MS);
            v.ready(hold, Deadline::after_ms(5_000).min(deadline)).await;
        }
    }

    /// After a performed step: its result, held on screen in the video.
    pub(crate) async fn video_hold(&self, hold: Duration, deadline: Deadline) {
        if let Some(v) = self.video.as_ref().filter(|v| v.records()) {
            v.hold(hold, Deadline::after_ms(3_000).min(deadline)).await;
        }
    }

    /// The window's picture, `BASE-window.png`, beside a screenshot or a
    /// failure's page picture (none while the run has secret values: a
    /// window's pixels cannot be masked).
    pub(crate) async fn window_picture(
        &self,
        ctx: &SessionContext,
        base: &str,
        step: usize,
    ) -> Vec<Artifact> {
        if !self.window || !ctx.secrets.is_empty() {
            return Vec::new();
        }
        let Ok(pic) = self.screen.capture(self.pid).await else {
            return Vec::new();
        };
        let ev = &ctx.evidence;
        let name = ev.unique_name(ArtifactGroup::Screenshots, &format!("{base}-window"), "png");
        ev.write(ArtifactGroup::Screenshots, &name, &pic.png, Some(step))
            .ok()
            .flatten()
            .into_iter()
            .collect()
    }

    /// Finishes the window's video (before the app ends).
    pub(crate) async fn finish(&mut self, deadline: Deadline) -> Vec<Note> {
        match self.video.take() {
            Some(v) => v.finish(deadline).await,
            None => Vec::new(),
        }
    }
}
