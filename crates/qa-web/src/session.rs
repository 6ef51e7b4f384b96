//! Opening, running and closing one browser session: the target's server,
//! the containment proxy, Chromium, the DevTools connection and its event
//! pump, emulation, the first navigation; then each step in its target
//! (page, popup or frame) and, at the end, the logs and a clean close.

use crate::artifacts;
use crate::attach;
use crate::cdp::commands::{
    BrowserClose, CreateTarget, MediaFeature, SetAutoAttach, SetDeviceMetricsOverride,
    SetDownloadBehavior, SetEmulatedMedia, SetLocaleOverride, SetTimezoneOverride,
};
use crate::codes::WebCode;
use crate::contain::{origin_of, split_url, Allowlist, BlockedRequests, BlockedSink, Proxy};
use crate::embedded;
use crate::host::server::{self, StaticServer, TargetServer};
use crate::host::{self, launch};
use crate::page::{self, DomOp, Entered, Page, PageInfo};
use crate::pump::spawn_pump;
use crate::record;
use crate::recorders::Recorders;
use crate::shared::Shared;
use crate::steps;
use async_trait::async_trait;
use qa_core::flow::{
    Action, BrowserAction, BrowserTarget, ColorScheme, ReducedMotion, StepTargetKind, Target,
};
use qa_core::{
    Artifact, CloseResult, Deadline, DriverError, Flow, Note, NoteKind, SessionContext, Step,
    StepOutcome, SurfaceSession, SurfaceState, Verdict,
};
use std::sync::Arc;
use std::time::Duration;

/// One open browser session.
pub(crate) struct WebSession {
    page: Page,
    base: url::Url,
    ctx: SessionContext,
    _static: Option<StaticServer>,
    server: Option<TargetServer>,
    children: Vec<launch::BrowserChild>,
    proxy: Option<Proxy>,
    /// An attached browser's connection, closed when the session goes.
    _detach: Option<attach::Detach>,
    reported_notes: usize,
    reported_blocked: BlockedRequests,
    /// Whether a step has started (the video's timeline begins then).
    begun: bool,
    /// The step trace, when the run keeps one.
    trace: Option<record::trace::Trace>,
    /// The app of `target.app`, launched by the run.
    app: Option<embedded::AppRun>,
    /// How long each performed step's result is held in a window video.
    video_hold: Duration,
}

/// The emulated environment of the flow (defaults filled in).
struct Environment {
    width: u32,
    height: u32,
    locale: String,
    timezone: String,
    scheme: &'static str,
    motion: &'static str,
    settle_ms: u64,
    /// How long each performed step's result is held in the video
    /// (`videoSettleMs`).
    video_hold_ms: u64,
    /// The page keeps the size of the app window that shows it (an app of
    /// `target.app`, and the flow names no viewport).
    window_sized: bool,
}

impl Environment {
    /// The flow's environment. Video never lengthens the run: the
    /// post-action quiet window is the flow's `settleMs` with or without
    /// it, and a recording holds each result for `videoSettleMs` (default
    /// 500) in its own timeline instead.
    fn of(flow: &Flow) -> Environment {
        let vp = flow.viewport.unwrap_or_default();
        let env = flow.environment.clone().unwrap_or_default();
        let app = matches!(&flow.target, Target::Browser(t) if t.app.is_some());
        let scheme = match env.color_scheme {
            Some(ColorScheme::Dark) => "dark",
            _ => "light",
        };
        let motion = match env.reduced_motion {
            Some(ReducedMotion::NoPreference) => "no-preference",
            _ => "reduce",
        };
        Environment {
            width: vp.width.unwrap_or(1280),
            height: vp.height.unwrap_or(720),
            locale: env.locale.unwrap_or_else(|| "en-US".into()),
            timezone: env.timezone_id.unwrap_or_else(|| "UTC".into()),
            scheme,
            motion,
            settle_ms: env.settle_ms.unwrap_or(100),
            video_hold_ms: env.video_settle_ms.unwrap_or(500),
            window_sized: app && vp.width.is_none() && vp.height.is_none(),
        }
    }
}

/// Opens a session: servers, Chromium, connection, containment, emulation,
/// first navigation.
pub(crate) async fn open(
    flow: &Flow,
    ctx: SessionContext,
    windows: Option<&Arc<dyn qa_core::window::WindowHost>>,
) -> Result<WebSession, DriverError> {
    let mut guard = None;
    match open_inner(flow, ctx, windows, &mut guard).await {
        Ok(s) => Ok(s),
        // An app whose port another client reached: that is why.
        Err(e) => match guard.and_then(|g: crate::contain::Tripped| g.what()) {
            Some(what) => Err(embedded::because(embedded::foreign(what), e)),
            None => Err(e),
        },
    }
}

/// [`open`]; `guard` is set to the app's port watch once it runs.
async fn open_inner(
    flow: &Flow,
    ctx: SessionContext,
    windows: Option<&Arc<dyn qa_core::window::WindowHost>>,
    guard: &mut Option<crate::contain::Tripped>,
) -> Result<WebSession, DriverError> {
    let Target::Browser(t) = &flow.target else {
        return Err(DriverError::new(
            WebCode::TargetKind,
            "not a browser target",
        ));
    };
    // Found before anything starts: a host without Chromium is BLOCKED
    // before the target's server runs.
    let exe = match (&t.browser, &t.app) {
        (None, None) => Some(
            launch::find_chromium(ctx.options.browser.as_deref())
                .map_err(|m| DriverError::blocked(WebCode::ChromiumMissing, m))?,
        ),
        _ => None,
    };
    let deadline = ctx.flow_deadline;
    let mut static_server = None;
    let mut target_server = None;
    // An existing page is found first: without a URL of the flow's, its
    // own is where the run starts (and what it may reach).
    let mut app_run = None;
    let mut existing = match (&t.browser, &t.app) {
        (None, Some(app)) => {
            let (a, run) = embedded::open(app, flow, &ctx, windows, deadline).await?;
            *guard = run.guard.as_ref().map(crate::contain::PortGuard::watch);
            app_run = Some(run);
            Some(a)
        }
        (Some(b), _) if b.existing() => {
            check_connect_limit(&ctx, b)?;
            Some(
                attach::connect(
                    b,
                    Allowlist::new(Vec::new()),
                    BlockedSink::default(),
                    deadline,
                )
                .await?,
            )
        }
        _ => None,
    };
    let page_named =
        t.url.is_some() || t.base_url.is_some() || t.serve.is_some() || t.server.is_some();
    let base = match existing.as_ref().and_then(|a| a.existing.as_ref()) {
        Some((_, url)) if !page_named => url::Url::parse(url)
            .map_err(|e| DriverError::new(WebCode::TargetUrl, format!("the page's URL: {e}")))?,
        _ => {
            base_url(
                flow,
                t,
                &ctx,
                &mut target_server,
                &mut static_server,
                deadline,
            )
            .await?
        }
    };
    let start = steps::resolve_url(&base, None, Some(t.url.as_deref().unwrap_or(base.as_str())))?;
    let mut origins = vec![origin_of(&start), origin_of(&base)];
    origins.extend(t.allowed_origins.iter().cloned());
    // An auth profile's origins are reachable (its state goes only there).
    if let Some(a) = &ctx.auth {
        origins.extend(a.allowed_origins.iter().cloned());
    }
    if let Some(limit) = &ctx.options.origin_limit {
        let own = static_server.as_ref().map(|s| s.origin.as_str());
        check_limit(&origins, own, limit)?;
    }
    let allow = Allowlist::new(origins);

    let env = Environment::of(flow);
    // Each page's recording starts when the page attaches; its encoder in the
    // page's first quiet window (see `Recorders::new`).
    // An app's video is its window's (`embedded`).
    let recorders = (ctx.recording.video.records() && t.app.is_none()).then(|| {
        Arc::new(Recorders::new(
            ctx.evidence.clone(),
            ctx.processes.clone(),
            ctx.recording.video,
            ctx.recording.bounds,
            (env.width, env.height),
            std::time::Duration::from_millis(env.video_hold_ms),
        ))
    });
    let blocked = BlockedSink::default();
    let attached = match (existing.take(), &t.browser) {
        (Some(a), _) => Some(a),
        (None, Some(b)) => {
            check_connect_limit(&ctx, b)?;
            Some(attach::connect(b, allow.clone(), blocked.clone(), deadline).await?)
        }
        (None, None) => None,
    };
    let browser = match attached {
        Some(a) => {
            let remote = t
                .browser
                .as_ref()
                .filter(|_| !a.local && is_loopback_url(&start));
            if let Some(b) = remote {
                a.cdp.close();
                return Err(DriverError::new(
                    WebCode::ConnectUnreachable,
                    format!(
                        "the flow's page ({}) is on this machine, and the browser at {} is not: it cannot reach it",
                        origin_of(&start),
                        host::endpoint::shown(&b.connect)
                    ),
                )
                .with_remediation("serve the page where the browser can reach it (and name that URL), or attach to a browser on this machine"));
            }
            Browser {
                detach: Some(attach::Detach::new(a.cdp.clone())),
                cdp: a.cdp,
                events: a.events,
                children: Vec::new(),
                proxy: a.proxy,
                user: None,
                notes: a.notes,
                context: a.context,
                existing: a.existing.map(|(id, _)| id),
                setup: Ok(()),
            }
        }
        None => own_browser(&ctx, exe, &env, allow.clone(), blocked.clone(), deadline).await?,
    };
    let Browser {
        detach,
        cdp,
        events: rx,
        children,
        proxy,
        user,
        notes: sandbox_notes,
        context,
        existing: existing_page,
        setup,
    } = browser;
    let sh = Shared::new(cdp.clone(), allow, blocked, user);
    for n in sandbox_notes {
        sh.note(n);
    }
    if let Some(r) = recorders {
        let _ = sh.video.set(r);
    }
    if let Some(c) = context {
        let _ = sh.context.set(c);
    }
    if let Some(p) = existing_page {
        let _ = sh.existing.set(p);
    }
    spawn_pump(sh.clone(), rx);
    setup.map_err(|e| DriverError::new(WebCode::CdpAttach, e.to_string()))?;
    attach::start(&sh, deadline).await?;
    if sh.attached() {
        attach::check_input(&sh, Duration::from_secs(5).min(deadline.remaining())).await;
    }
    let session = wait_main(&sh, Deadline::after_ms(10_000).min(deadline)).await?;
    let page = Page {
        sh: sh.clone(),
        session,
        settle_ms: env.settle_ms,
        frame: None,
    };
    emulate(&page, &env).await?;
    sh.note(Note::new(
        NoteKind::Environment,
        format!(
            "browser environment: viewport {}, locale {}, timezone {}, colorScheme {}, reducedMotion {}, settleMs {}; allowed origins: {}",
            match env.window_sized {
                true => "the app window's own size".to_string(),
                false => format!("{}x{}", env.width, env.height),
            },
            env.locale,
            env.timezone,
            env.scheme,
            env.motion,
            env.settle_ms,
            sh.allow.origins().join(", ")
        ),
    ));
    if let Some(profile) = &ctx.auth {
        // Before the flow's first page, without video or trace: the frames
        // and trace start with the first step.
        let notes =
            crate::signin::apply(&page, profile, &ctx.evidence, &ctx.secrets, deadline).await?;
        for n in notes {
            sh.note(n);
        }
    }
    let ctx_trace = ctx
        .recording
        .trace
        .records()
        .then(|| record::trace::Trace::new(ctx.recording.trace));
    let mut session = WebSession {
        page,
        base,
        ctx,
        _static: static_server,
        server: target_server,
        children,
        proxy,
        _detach: detach,
        reported_notes: 0,
        reported_blocked: BlockedRequests::default(),
        begun: false,
        trace: ctx_trace,
        app: app_run,
        video_hold: Duration::from_millis(env.video_hold_ms),
    };
    let nav_deadline = Deadline::after_ms(qa_core::flow::DEFAULT_STEP_TIMEOUT_MS).min(deadline);
    // An existing page stays where it is unless the flow names a page.
    let stay = session.page.sh.existing.get().is_some() && !page_named;
    if stay {
        session.masked_frame(&session.page.clone()).await;
        return Ok(session);
    }
    if let Err(e) = session.page.navigate(start.as_str(), nav_deadline).await {
        // The session will not be closed: keep the server's output now.
        let e = session.explain(e);
        session.publish_server_log();
        return Err(e);
    }
    session.masked_frame(&session.page.clone()).await;
    Ok(session)
}

/// The browser of a session: launched by the run, or one it attached to.
struct Browser {
    /// Closes an attached browser's connection if the open fails.
    detach: Option<attach::Detach>,
    cdp: Arc<crate::cdp::Cdp>,
    events: tokio::sync::mpsc::UnboundedReceiver<crate::cdp::CdpEvent>,
    children: Vec<launch::BrowserChild>,
    proxy: Option<Proxy>,
    user: Option<qa_core::evidence::HelperUser>,
    notes: Vec<Note>,
    /// The run's own context in a browser it did not start.
    context: Option<String>,
    /// The existing page (target id) it drives instead.
    existing: Option<String>,
    /// The answer to the setup sent behind the browser's first command.
    setup: Result<(), crate::cdp::CdpError>,
}

/// Refuses a browser endpoint beyond the run's limit (`ui-qa mcp
/// --allow-connect`), before it is contacted.
fn check_connect_limit(
    ctx: &SessionContext,
    b: &qa_core::flow::BrowserConnection,
) -> Result<(), DriverError> {
    let Some(limit) = &ctx.options.connect_limit else {
        return Ok(());
    };
    let key = qa_core::flow::endpoint_key(&b.connect).unwrap_or_default();
    if limit.contains(&key) {
        return Ok(());
    }
    Err(DriverError::new(
        WebCode::OriginNotAllowed,
        format!(
            "the flow attaches to the browser at {}, which this run may not reach; allowed endpoints: {}",
            host::endpoint::shown(&b.connect),
            if limit.is_empty() { "none".to_string() } else { limit.join(", ") }
        ),
    )
    .with_remediation(format!(
        "allow it where the limit is set (ui-qa mcp --allow-connect http://{key})"
    )))
}

/// Whether `u` names this machine (the run's own servers are there).
fn is_loopback_url(u: &url::Url) -> bool {
    match u.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(a)) => a.is_loopback(),
        Some(url::Host::Ipv6(a)) => a.is_loopback(),
        None => false,
    }
}

/// Launches the run's own Chromium behind the containment proxy.
async fn own_browser(
    ctx: &SessionContext,
    exe: Option<std::path::PathBuf>,
    env: &Environment,
    allow: Allowlist,
    blocked: BlockedSink,
    deadline: Deadline,
) -> Result<Browser, DriverError> {
    let exe = exe.ok_or_else(|| DriverError::new(WebCode::ChromiumMissing, "no Chromium"))?;
    // As root, Chromium runs as a user of its own (host::user), its
    // profile in scratch that user can reach.
    let user = host::user::pick();
    let profile = match user {
        #[cfg(unix)]
        Some(u) => ctx.evidence.scratch_dir_for(
            "chromium-profile",
            u,
            qa_core::evidence::HelperAccess::Writes,
        ),
        _ => ctx.evidence.scratch_dir("chromium-profile"),
    }
    .map_err(|e| DriverError::new(WebCode::LaunchProfile, e.to_string()))?;
    let host = qa_core::Host::current();
    // The network layer of containment starts first: Chromium is launched
    // to send every connection through it, and it answers only the
    // browser's user.
    let proxy = Proxy::start(allow, blocked, user.map(|u| u.uid))
        .await
        .map_err(|e| DriverError::new(WebCode::ProxyStart, e.to_string()))?;
    // Root without a user of the browser's own (no id to give it here)
    // cannot use Chromium's sandbox.
    let root_itself = host.is_root && user.is_none();
    let mut sandbox_notes = Vec::new();
    if root_itself {
        sandbox_notes.push(Note::new(
            NoteKind::Environment,
            "Chromium runs as root without its sandbox: this host gives ui-qa no unprivileged user id to start it as (see docs/security.md)",
        ));
    }
    let args_for = |no_sandbox: bool| {
        let mut args = launch::chromium_args(&profile, no_sandbox, &env.locale, &proxy.url());
        if ctx.auth.is_some() {
            // Cookies bound to scheme, host and port: an auth cookie of one
            // origin is never sent to another port or scheme of the same
            // host.
            args.push("--enable-features=EnablePortBoundCookies,EnableSchemeBoundCookies".into());
        }
        args
    };
    // Sent right behind the browser's first command: auto-attach to every
    // new page (paused until contained) and deny downloads unless a
    // `download` step asks for one (then they go to a scratch directory of
    // the run, never the user's folder). The browser takes them in this
    // order.
    let launch_deadline = Deadline::after_ms(30_000).min(deadline);
    let setup = |cdp: Arc<crate::cdp::Cdp>| async move {
        let bound = launch_deadline
            .remaining()
            .max(std::time::Duration::from_millis(1));
        let (auto_attach, deny) = (SetAutoAttach::paused_flat(), SetDownloadBehavior::deny());
        let (attach, downloads) = tokio::join!(
            cdp.call_typed_with_timeout(None, &auto_attach, bound),
            cdp.call_typed_with_timeout(None, &deny, bound),
        );
        attach.and(downloads).map(|_| ())
    };
    let exe = exe.as_path();
    let first = launch::launch(
        exe,
        &args_for(root_itself),
        &profile,
        user,
        &ctx.processes,
        launch_deadline,
        setup,
    )
    .await;
    let launched = match first {
        Err(e) if !root_itself && launch::sandbox_refused(&e) => {
            // The host allows no sandbox (no user namespaces, no setuid
            // helper): run without it, still as the unprivileged user.
            sandbox_notes.push(Note::new(
                NoteKind::Environment,
                format!(
                    "Chromium's sandbox cannot work on this host (it said \"No usable sandbox\"); the browser runs without it{} (see docs/security.md)",
                    match user {
                        Some(u) => format!(", as its own unprivileged user (uid {})", u.uid),
                        None => String::new(),
                    }
                ),
            ));
            launch::launch(
                exe,
                &args_for(true),
                &profile,
                user,
                &ctx.processes,
                launch_deadline,
                setup,
            )
            .await?
        }
        r => r?,
    };
    Ok(Browser {
        detach: None,
        cdp: launched.cdp,
        events: launched.events,
        children: vec![launched.child],
        proxy: Some(proxy),
        user,
        notes: sandbox_notes,
        context: None,
        existing: None,
        setup: launched.setup.map(|_| ()),
    })
}

/// Viewport, locale, timezone and media features of the main page.
async fn emulate(page: &Page, env: &Environment) -> Result<(), DriverError> {
    let metrics = SetDeviceMetricsOverride {
        width: env.width,
        height: env.height,
        device_scale_factor: 1,
        mobile: false,
    };
    let locale = SetLocaleOverride {
        locale: env.locale.clone(),
    };
    let timezone = SetTimezoneOverride {
        timezone_id: env.timezone.clone(),
    };
    let media = SetEmulatedMedia {
        features: vec![
            MediaFeature {
                name: "prefers-color-scheme",
                value: env.scheme,
            },
            MediaFeature {
                name: "prefers-reduced-motion",
                value: env.motion,
            },
        ],
    };
    let sized = async {
        match env.window_sized {
            true => Ok(()),
            false => page.send(&metrics).await.map(|_| ()),
        }
    };
    let (a, b, c, d) = tokio::join!(
        sized,
        page.send(&locale),
        page.send(&timezone),
        page.send(&media),
    );
    for (what, r) in [
        ("viewport", a.err()),
        ("locale", b.err()),
        ("timezone", c.err()),
        ("media", d.err()),
    ] {
        if let Some(e) = r {
            return Err(DriverError::new(
                WebCode::EmulationFailed,
                format!("{what}: {e}"),
            ));
        }
    }
    Ok(())
}

/// Refuses a run whose resolved `origins` reach beyond `limit` (ui-qa's
/// own static server `own` aside).
fn check_limit(origins: &[String], own: Option<&str>, limit: &[String]) -> Result<(), DriverError> {
    let norm = |o: &str| {
        url::Url::parse(o)
            .map(|u| origin_of(&u))
            .unwrap_or_else(|_| o.to_string())
    };
    let limit: Vec<String> = limit.iter().map(|o| norm(o)).collect();
    for o in origins {
        let o = norm(o);
        if Some(o.as_str()) == own || limit.contains(&o) {
            continue;
        }
        let allowed = if limit.is_empty() {
            "none".to_string()
        } else {
            limit.join(", ")
        };
        return Err(DriverError::new(
            WebCode::OriginNotAllowed,
            format!(
                "the flow reaches {o} (its start URL, base URL, allowedOrigins or auth profile, once resolved), which this run may not reach; allowed: {allowed}"
            ),
        )
        .with_remediation(format!(
            "write the flow for an allowed origin, or allow {o} where the limit is set (ui-qa mcp --allow-origin {o})"
        )));
    }
    Ok(())
}

async fn base_url(
    flow: &Flow,
    t: &BrowserTarget,
    ctx: &SessionContext,
    target_server: &mut Option<TargetServer>,
    static_server: &mut Option<StaticServer>,
    deadline: Deadline,
) -> Result<url::Url, DriverError> {
    let bad = |e: url::ParseError| DriverError::new(WebCode::TargetUrl, e.to_string());
    if let Some(dir) = &t.serve {
        let private = ctx
            .evidence
            .run_dir()
            .parent()
            .and_then(std::path::Path::parent)
            .map(server::Private::workspace)
            .unwrap_or_default();
        let s = server::serve_static(&flow.base_dir.join(dir), private).await?;
        let u = url::Url::parse(&format!("{}/", s.origin)).map_err(bad)?;
        *static_server = Some(s);
        return Ok(u);
    }
    if let Some(spec) = &t.server {
        let log_dir = ctx.evidence.scratch_dir("target-server")?;
        let started =
            server::start_server(spec, &flow.base_dir, &ctx.processes, &log_dir, deadline).await;
        let s = match started {
            Ok(s) => s,
            Err(e) => {
                if let Ok(bytes) = std::fs::read(log_dir.join("server.log")) {
                    artifacts::server_log(&ctx.evidence, &bytes);
                }
                return Err(e);
            }
        };
        *target_server = Some(s);
        let b = t.base_url.as_deref().unwrap_or(&spec.ready_url);
        return url::Url::parse(b).map_err(bad);
    }
    match (&t.base_url, &t.url) {
        (Some(b), _) => url::Url::parse(b).map_err(bad),
        (None, Some(u)) => url::Url::parse(u).map_err(bad),
        (None, None) => Err(DriverError::new(
            WebCode::TargetUrl,
            "target needs url, baseUrl, serve or server",
        )),
    }
}

/// Waits for the main page to be attached and contained (asking for one
/// if Chromium attached no page at all within 2 s).
///
/// A page that attached but is still being contained is waited for, never
/// doubled: on a busy machine containment can take longer than 2 s, and a
/// second blank page made then raced the first for the main page (the
/// loser became a "popup" in front of it, and the start navigation was
/// aborted or its page closed under it).
async fn wait_main(sh: &Arc<Shared>, deadline: Deadline) -> Result<String, DriverError> {
    let mut rx = sh.changed.subscribe();
    // A run's own context in a browser it did not start has its page
    // made already (attach::start).
    let mut created = sh.attached();
    loop {
        {
            let st = sh.st();
            if let Some(m) = &st.main_session {
                if st.ready.contains(m) {
                    return Ok(m.clone());
                }
            }
        }
        let step = Deadline::after_ms(2000).min(deadline);
        if step.run(rx.changed()).await.is_none() {
            if deadline.expired() {
                return Err(DriverError::new(
                    WebCode::LaunchNoPage,
                    "Chromium opened no page to drive",
                ));
            }
            let page_attached = sh.st().session_type.values().any(|k| k == "page");
            if !created && !page_attached {
                created = true;
                let blank = CreateTarget {
                    url: "about:blank".into(),
                    browser_context_id: None,
                };
                let _ = sh.cdp.call_typed(None, &blank).await;
            }
        }
    }
}

/// The popup a step targets, by name (`None`: the step runs on the page
/// or in a frame).
fn popup_name(step: &Step) -> Option<&str> {
    match &step.target {
        Some(t) if t.kind == StepTargetKind::Popup => Some(t.name.as_deref().unwrap_or("")),
        Some(_) | None => None,
    }
}

/// A popup step whose page closed under it (its target detached while the
/// step ran) fails the way a step on an already closed popup does.
fn popup_gone(step: &Step, e: DriverError) -> DriverError {
    match popup_name(step) {
        Some(name) if page::target_gone(&e) => page::popup_closed(name),
        Some(_) | None => e,
    }
}

impl WebSession {
    /// Notes since the last call: the pages' own, then blocked requests.
    /// `e`, or why the run cannot go on when `target.server` has exited.
    fn explain(&mut self, e: DriverError) -> DriverError {
        if let Some(app) = &self.app {
            return match app.explain(self.page.sh.cdp.is_open()) {
                Some(why) => embedded::because(why, e),
                None => e,
            };
        }
        if self.page.sh.attached() && !self.page.sh.cdp.is_open() {
            // A browser the run did not start (or the service in front of
            // it) went away: that, not what the step saw last, is why.
            return DriverError::new(
                WebCode::ConnectLost,
                format!(
                    "the connection to the browser ui-qa did not start was lost mid-run ({})",
                    e.message
                ),
            )
            .with_remediation("check that the browser or browser service is still running and reachable, then run the flow again");
        }
        match self.server.as_mut() {
            Some(s) => s.explain(e),
            None => e,
        }
    }

    /// Publishes `target.server`'s output as `logs/server.log` (once).
    fn publish_server_log(&mut self) {
        if let Some(s) = self.server.as_ref() {
            artifacts::server_log(&self.ctx.evidence, &s.output());
        }
    }

    /// With secrets in a recorded run, the video's next frame: a masked
    /// capture of `page` (no frame when it cannot be masked).
    async fn masked_frame(&self, page: &Page) {
        let Some(rec) = self.page.sh.video.get() else {
            return;
        };
        if !rec.masked() {
            return;
        }
        let at = std::time::Instant::now();
        let d = Deadline::after_ms(3000);
        if let Some(jpeg) = artifacts::masked_video_frame(page, &self.ctx.evidence, d).await {
            rec.push(&page.session, jpeg, at);
        }
    }

    /// The first step starts: so does the video's timeline.
    async fn begin(&mut self, deadline: Deadline) {
        if !self.begun {
            self.begun = true;
            if let Some(rec) = self.page.sh.video.get() {
                rec.begin(std::time::Instant::now());
            }
            if let Some(app) = self.app.as_mut() {
                app.video_ready(deadline).await;
            }
        }
    }

    fn take_notes(&mut self) -> Vec<Note> {
        let blocked = self.page.sh.blocked();
        let st = self.page.sh.st();
        let mut out: Vec<Note> = st.notes[self.reported_notes..].to_vec();
        self.reported_notes = st.notes.len();
        out.extend(blocked.since(&self.reported_blocked).notes());
        self.reported_blocked = blocked;
        out
    }
}

#[async_trait]
impl SurfaceSession for WebSession {
    async fn observe(&mut self) -> Result<SurfaceState, DriverError> {
        let info: PageInfo = self
            .page
            .dom(&DomOp::PageInfo, Deadline::after_ms(4000))
            .await
            .map_err(|e| DriverError::new(WebCode::ObserveFailed, format!("{e:?}")))?;
        let blocked_requests = self.page.sh.blocked().total();
        let st = self.page.sh.st();
        Ok(SurfaceState::Page {
            url: split_url(&info.url).0,
            title: self.ctx.secrets.redact_then_clip(&info.title, 200),
            ready_state: info.ready,
            console_errors: u32::try_from(st.console_errors()).unwrap_or(u32::MAX),
            blocked_requests,
            popups: u32::try_from(st.popups.len()).unwrap_or(u32::MAX),
        })
    }

    async fn elements(
        &mut self,
        deadline: Deadline,
    ) -> Result<qa_core::observe::Observation, DriverError> {
        let secrets = &self.ctx.secrets;
        let (elements, truncated) = artifacts::elements(&self.page, secrets, deadline).await?;
        let info = self
            .page
            .dom::<PageInfo>(&DomOp::PageInfo, deadline.min(Deadline::after_ms(4000)))
            .await
            .ok();
        Ok(qa_core::observe::Observation {
            id: String::new(),
            url: info.as_ref().map(|i| split_url(&i.url).0),
            // Redacted whole, then cut: the cut never leaves part of a secret.
            title: info.map(|i| secrets.redact_then_clip(&i.title, 200)),
            elements,
            truncated,
            screen: None,
        })
    }

    async fn perform(
        &mut self,
        step: &Step,
        deadline: Deadline,
    ) -> Result<StepOutcome, DriverError> {
        self.begin(deadline).await;
        let r = match page::enter(&self.page, step, true, deadline).await {
            Ok(Entered::Ready(page)) => {
                if let Some(t) = self.trace.as_mut() {
                    t.begin(&page, &self.ctx.evidence, step).await;
                }
                let r = steps::perform(&page, &self.base, &self.ctx.evidence, step, deadline).await;
                self.masked_frame(&page).await;
                // The result (and the visualizer's marks) stays on screen
                // in the video while the run goes on.
                if let Some(rec) = self.page.sh.video.get() {
                    rec.hold(&page.session, std::time::Instant::now());
                }
                if let Some(app) = &self.app {
                    app.video_hold(self.video_hold, deadline).await;
                    let shot =
                        matches!(&step.action, Action::Browser(BrowserAction::Screenshot(_)));
                    if shot && r.is_ok() {
                        let base = step.evidence_name();
                        app.window_picture(&self.ctx, &base, step.index + 1).await;
                    }
                }
                if let Some(t) = self.trace.as_mut() {
                    let err = r.as_ref().err().map(|e| e.to_string());
                    t.end_action(&page, &self.ctx.evidence, err.as_deref())
                        .await;
                }
                r
            }
            Ok(Entered::NotYet(why)) => Err(DriverError::new(WebCode::TargetFrameNotFound, why)),
            Err(e) => Err(e),
        };
        let r = r
            .map_err(|e| popup_gone(step, e))
            .map_err(|e| self.explain(e));
        let notes = self.take_notes();
        match r {
            Ok(mut o) => {
                o.notes.extend(notes);
                Ok(o)
            }
            Err(mut e) => {
                e.notes.extend(notes);
                Err(e)
            }
        }
    }

    async fn verify(&mut self, step: &Step, deadline: Deadline) -> Result<Verdict, DriverError> {
        self.begin(deadline).await;
        let r = match page::enter(&self.page, step, false, deadline).await? {
            Entered::Ready(page) => {
                if let Some(t) = self.trace.as_mut() {
                    t.begin(&page, &self.ctx.evidence, step).await;
                }
                steps::verify(&page, step, deadline).await
            }
            Entered::NotYet(observed) => Ok(Verdict::not_yet(observed)),
        };
        r.map_err(|e| popup_gone(step, e))
            .map_err(|e| self.explain(e))
    }

    async fn capture_failure(&mut self, step: &Step) -> Vec<Artifact> {
        let mut named = step.clone();
        named.name = Some(format!("failure-step{}", step.index + 1));
        // A step in a popup leaves the popup's picture; a step in a frame
        // (or a closed popup) the page's.
        let popup = popup_name(step).and_then(|n| page::popup_page(&self.page, n).ok());
        let page = popup.as_ref().unwrap_or(&self.page);
        let _ = page.ensure_front().await;
        let mut out: Vec<Artifact> = artifacts::screenshot(
            page,
            &self.ctx.evidence,
            &named,
            None,
            false,
            Deadline::after_ms(4000),
        )
        .await
        .ok()
        .flatten()
        .into_iter()
        .collect();
        // The accessibility tree beside the picture: roles and names to
        // write a locator from.
        let ax = artifacts::ax_snapshot(
            page,
            &self.ctx.evidence,
            &named,
            None,
            Deadline::after_ms(2000),
        )
        .await;
        out.extend(ax.ok().flatten());
        if let Some(app) = &self.app {
            let base = named.name.clone().unwrap_or_default();
            out.extend(app.window_picture(&self.ctx, &base, step.index + 1).await);
        }
        out
    }

    async fn close(mut self: Box<Self>, deadline: Deadline) -> CloseResult {
        let mut result = CloseResult {
            notes: self.take_notes(),
            ..Default::default()
        };
        self.masked_frame(&self.page.clone()).await;
        // The videos get the cleanup deadline less the time ending the
        // browser needs, so an encoder that hangs never costs the cleanup.
        // Their last frames are taken now; the encoders finish while the
        // browser closes, and before the run's processes are ended (an
        // encoder is one of them).
        let videos = Deadline::after(deadline.remaining().saturating_sub(Duration::from_secs(3)));
        let stopped = record::stop_all(&self.page.sh).await;
        let encoding = tokio::spawn(record::finish(stopped, videos));
        if let Some(t) = self.trace.take() {
            t.finish(&self.page, &self.ctx.evidence);
        }
        artifacts::write_logs(&self.page.sh, &self.ctx.evidence);
        if let Some(app) = self.app.as_mut() {
            // The window's video ends before the app does.
            let v = Deadline::after(deadline.remaining().saturating_sub(Duration::from_secs(3)));
            result.notes.extend(app.finish(v).await);
            if let Some(what) = app.guard.take().and_then(|g| g.tripped()) {
                result.notes.push(Note::new(NoteKind::Environment, what));
            }
        }
        let cdp = self.page.sh.cdp.clone();
        if self.page.sh.attached() {
            // Not the run's browser: only its context (and every page of it)
            // goes.
            attach::dispose(
                &self.page.sh,
                Duration::from_secs(5).min(deadline.remaining()),
            )
            .await;
        } else {
            let _ = cdp
                .call_typed_with_timeout(None, &BrowserClose {}, Duration::from_millis(500))
                .await;
        }
        cdp.close();
        match encoding.await {
            Ok(notes) => result.notes.extend(notes),
            Err(e) => result.notes.push(Note::new(
                NoteKind::Evidence,
                format!("video: finishing the recordings failed ({e}); no video was written"),
            )),
        }
        result.cleanup = self
            .ctx
            .processes
            .end_all(qa_core::process::DEFAULT_GRACE, deadline)
            .await;
        for mut c in self.children.drain(..) {
            let _ = c.try_wait();
        }
        if let Some(app) = self.app.as_mut() {
            let _ = app.child.try_wait();
        }
        self.publish_server_log();
        if let Some(s) = self.server.as_mut() {
            s.reap();
        }
        // The browser is gone: stop the proxy (and every connection) and say
        // what only the network layer caught.
        if let Some(proxy) = self.proxy.take() {
            let (browser_own, here) = proxy.blocked_here().split_browser_service();
            drop(proxy);
            if !here.is_empty() {
                result.notes.push(Note::new(
                    NoteKind::BlockedRequest,
                    format!(
                        "of these, blocked at the network proxy (not seen by in-browser interception): {}",
                        here.summary()
                    ),
                ));
            }
            // Chromium's own traffic is a fact about the browser, not about
            // the app: kept in the result, left out of the human output.
            if !browser_own.is_empty() {
                result.notes.push(Note::new(
                    NoteKind::Environment,
                    format!(
                        "blocked at the network proxy: Chromium's own background traffic to its service hosts, not seen in any page: {} ({} connection(s))",
                        browser_own.hosts().join(", "),
                        browser_own.total()
                    ),
                ));
            }
        }
        // Ownership comes from what the run set up (its sessions, groups and
        // adopted children: qa_core::process), never from matching command
        // lines: a process that merely names this run's profile directory is
        // not the run's.
        result
    }
}
