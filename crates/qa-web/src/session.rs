//! Opening, running and closing one browser session.

use crate::cdp::Cdp;
use crate::containment::{origin_of, Allowlist, BlockedRequests};
use crate::events::{spawn_pump, Shared};
use crate::launch;
use crate::page::Page;
use crate::proxy::{BlockedSink, Proxy};
use crate::server::{self, StaticServer};
use crate::steps;
use async_trait::async_trait;
use qa_core::flow::{BrowserTarget, ColorScheme, ReducedMotion, Target};
use qa_core::{
    CloseResult, Deadline, DriverError, Flow, MissingCapability, Observation, SessionContext, Step,
    StepOutcome, SurfaceSession, Verdict,
};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// One open browser session.
pub struct WebSession {
    page: Page,
    base: url::Url,
    ctx: SessionContext,
    _static: Option<StaticServer>,
    children: Vec<tokio::process::Child>,
    proxy: Option<Proxy>,
    reported_obs: usize,
    reported_blocked: BlockedRequests,
}

/// The auth vault is not implemented yet.
pub fn auth_missing() -> MissingCapability {
    MissingCapability {
        id: "auth-vault".into(),
        reason: "target.profile needs the auth vault, which ui-qa does not implement yet".into(),
        remediation: "remove target.profile and sign in with explicit steps, or wait for auth profile support".into(),
    }
}

fn env_values(flow: &Flow) -> (u32, u32, String, String, &'static str, &'static str, u64) {
    let vp = flow.viewport.unwrap_or_default();
    let env = flow.environment.clone().unwrap_or_default();
    let scheme = match env.color_scheme {
        Some(ColorScheme::Dark) => "dark",
        _ => "light",
    };
    let motion = match env.reduced_motion {
        Some(ReducedMotion::NoPreference) => "no-preference",
        _ => "reduce",
    };
    (
        vp.width.unwrap_or(1280),
        vp.height.unwrap_or(720),
        env.locale.unwrap_or_else(|| "en-US".into()),
        env.timezone_id.unwrap_or_else(|| "UTC".into()),
        scheme,
        motion,
        env.settle_ms.unwrap_or(100),
    )
}

/// Opens a session: servers, Chromium, connection, containment, emulation,
/// first navigation.
pub async fn open(flow: &Flow, ctx: SessionContext) -> Result<WebSession, DriverError> {
    let Target::Browser(t) = &flow.target else {
        return Err(DriverError::new("web.target.kind", "not a browser target"));
    };
    if t.profile.is_some() {
        return Err(DriverError::blocked("web.auth.unavailable", auth_missing()));
    }
    let exe = launch::find_chromium(ctx.options.browser.as_deref())
        .map_err(|m| DriverError::blocked("web.chromium.missing", m))?;
    let deadline = ctx.flow_deadline;
    let mut children = Vec::new();
    let mut static_server = None;
    let base = base_url(flow, t, &ctx, &mut children, &mut static_server, deadline).await?;
    let start = steps::resolve_url(&base, None, Some(t.url.as_deref().unwrap_or(base.as_str())))?;
    let mut origins = vec![origin_of(&start), origin_of(&base)];
    origins.extend(t.allowed_origins.iter().cloned());
    let allow = Allowlist::new(origins);

    let (w, h, locale, tz, scheme, motion, settle_ms) = env_values(flow);
    let profile = ctx
        .evidence
        .scratch_dir("chromium-profile")
        .map_err(|e| DriverError::new("web.launch.profile", e.to_string()))?;
    let host = qa_core::Host::current();
    // The network layer of containment starts first: Chromium is launched
    // to send every connection through it.
    let blocked = BlockedSink::default();
    let proxy = Proxy::start(allow.clone(), blocked.clone())
        .await
        .map_err(|e| DriverError::new("web.proxy.start", e.to_string()))?;
    let args = launch::chromium_args(&profile, host.is_root, &locale, &proxy.url());
    let launch_deadline = Deadline::after_ms(30_000).min(deadline);
    let launched = launch::launch(&exe, &args, &profile, &ctx.processes, launch_deadline).await?;
    children.push(launched.child);
    let ws = launched.ws_url.clone();
    let (cdp, rx) = tokio::task::spawn_blocking(move || Cdp::connect(&ws, Duration::from_secs(10)))
        .await
        .map_err(|e| DriverError::new("web.cdp.connect", e.to_string()))?
        .map_err(|e| DriverError::new("web.cdp.connect", e))?;
    let sh = Shared::new(cdp.clone(), allow, blocked);
    spawn_pump(sh.clone(), rx);
    cdp.call(
        None,
        "Target.setAutoAttach",
        json!({ "autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true }),
    )
    .await
    .map_err(|e| DriverError::new("web.cdp.attach", e.to_string()))?;
    // Downloads are denied unless a `download` step asks for one (then
    // they go to a scratch directory of the run, never the user's folder).
    cdp.call(
        None,
        "Browser.setDownloadBehavior",
        json!({ "behavior": "deny" }),
    )
    .await
    .map_err(|e| DriverError::new("web.cdp.attach", e.to_string()))?;
    let session = wait_main(&sh, Deadline::after_ms(10_000).min(deadline)).await?;
    let page = Page {
        sh: sh.clone(),
        session,
        settle_ms,
        frame: None,
    };
    let s = Some(page.session.as_str());
    let (a, b, c, d) = tokio::join!(
        cdp.call(
            s,
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": w, "height": h, "deviceScaleFactor": 1, "mobile": false })
        ),
        cdp.call(
            s,
            "Emulation.setLocaleOverride",
            json!({ "locale": locale })
        ),
        cdp.call(
            s,
            "Emulation.setTimezoneOverride",
            json!({ "timezoneId": tz })
        ),
        cdp.call(
            s,
            "Emulation.setEmulatedMedia",
            json!({ "features": [
            { "name": "prefers-color-scheme", "value": scheme },
            { "name": "prefers-reduced-motion", "value": motion } ] })
        ),
    );
    for (what, r) in [
        ("viewport", a),
        ("locale", b),
        ("timezone", c),
        ("media", d),
    ] {
        if let Err(e) = r {
            return Err(DriverError::new(
                "web.emulation.failed",
                format!("{what}: {e}"),
            ));
        }
    }
    sh.st().observations.push(format!(
        "browser environment: viewport {w}x{h}, locale {locale}, timezone {tz}, colorScheme {scheme}, reducedMotion {motion}, settleMs {settle_ms}; allowed origins: {}",
        sh.allow.origins().join(", ")
    ));
    let session = WebSession {
        page,
        base,
        ctx,
        _static: static_server,
        children,
        proxy: Some(proxy),
        reported_obs: 0,
        reported_blocked: BlockedRequests::default(),
    };
    let nav_deadline = Deadline::after_ms(qa_core::flow::DEFAULT_STEP_TIMEOUT_MS).min(deadline);
    session.page.navigate(start.as_str(), nav_deadline).await?;
    Ok(session)
}

async fn base_url(
    flow: &Flow,
    t: &BrowserTarget,
    ctx: &SessionContext,
    children: &mut Vec<tokio::process::Child>,
    static_server: &mut Option<StaticServer>,
    deadline: Deadline,
) -> Result<url::Url, DriverError> {
    let bad = |e: url::ParseError| DriverError::new("web.target.url", e.to_string());
    if let Some(dir) = &t.serve {
        let s = server::serve_static(&flow.base_dir.join(dir)).await?;
        let u = url::Url::parse(&format!("{}/", s.origin)).map_err(bad)?;
        *static_server = Some(s);
        return Ok(u);
    }
    if let Some(spec) = &t.server {
        let child = server::start_server(spec, &flow.base_dir, &ctx.processes, deadline).await?;
        children.push(child);
        let b = t.base_url.as_deref().unwrap_or(&spec.ready_url);
        return url::Url::parse(b).map_err(bad);
    }
    match (&t.base_url, &t.url) {
        (Some(b), _) => url::Url::parse(b).map_err(bad),
        (None, Some(u)) => url::Url::parse(u).map_err(bad),
        (None, None) => Err(DriverError::new(
            "web.target.url",
            "target needs url, baseUrl, serve or server",
        )),
    }
}

async fn wait_main(sh: &Arc<Shared>, deadline: Deadline) -> Result<String, DriverError> {
    let mut rx = sh.changed.subscribe();
    let mut created = false;
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
                    "web.launch.no_page",
                    "Chromium opened no page to drive",
                ));
            }
            if !created {
                created = true;
                let _ = sh
                    .cdp
                    .call(None, "Target.createTarget", json!({ "url": "about:blank" }))
                    .await;
            }
        }
    }
}

/// A popup step whose page closed under it (its target detached while the
/// step ran) fails the way a step on an already closed popup does.
fn popup_gone(step: &Step, e: DriverError) -> DriverError {
    match &step.target {
        Some(t)
            if t.kind == qa_core::flow::StepTargetKind::Popup
                && e.code.starts_with("web.cdp.target_") =>
        {
            DriverError::new(
                "web.target.popup_closed",
                format!("the popup {:?} has closed", t.name.as_deref().unwrap_or("")),
            )
        }
        _ => e,
    }
}

impl WebSession {
    fn take_observations(&mut self) -> Vec<String> {
        let blocked = self.page.sh.blocked();
        let st = self.page.sh.st();
        let mut out: Vec<String> = st.observations[self.reported_obs..].to_vec();
        self.reported_obs = st.observations.len();
        out.extend(blocked.since(&self.reported_blocked).observations());
        self.reported_blocked = blocked;
        out
    }

    /// Every blocked request so far.
    pub fn blocked_observations(&self) -> Vec<String> {
        self.page.sh.blocked().observations()
    }
}

#[async_trait]
impl SurfaceSession for WebSession {
    async fn observe(&mut self) -> Result<Observation, DriverError> {
        let d = Deadline::after_ms(5000);
        let v = self
            .page
            .eval("page", &json!({}), &json!({}), d)
            .await
            .map_err(|e| DriverError::new("web.observe.failed", format!("{e:?}")))?;
        let blocked = self.page.sh.blocked().total();
        let st = self.page.sh.st();
        let errors = st
            .console
            .iter()
            .filter(|e| crate::events::counts_as_error(e))
            .count();
        Ok(Observation {
            summary: format!(
                "page {} ({} console errors, {} blocked requests)",
                v["ready"].as_str().unwrap_or("?"),
                errors,
                blocked
            ),
            detail: json!({ "url": crate::events::split_url(v["url"].as_str().unwrap_or("")).0, "readyState": v["ready"], "consoleErrors": errors, "blockedRequests": blocked }),
        })
    }

    async fn perform(
        &mut self,
        step: &Step,
        deadline: Deadline,
    ) -> Result<StepOutcome, DriverError> {
        let r = match crate::scope::enter(&self.page, step, true, deadline).await {
            Ok(crate::scope::Entered::Ready(scope)) => {
                steps::perform(&scope.page, &self.base, &self.ctx.evidence, step, deadline).await
            }
            Ok(crate::scope::Entered::NotYet(why)) => {
                Err(DriverError::new("web.target.frame_not_found", why))
            }
            Err(e) => Err(e),
        };
        let r = r.map_err(|e| popup_gone(step, e));
        let obs = self.take_observations();
        match r {
            Ok(mut o) => {
                o.observations.extend(obs);
                Ok(o)
            }
            Err(mut e) => {
                if !obs.is_empty() {
                    e.message = format!("{} [{}]", e.message, obs.join("; "));
                }
                Err(e)
            }
        }
    }

    async fn verify(&mut self, step: &Step, deadline: Deadline) -> Result<Verdict, DriverError> {
        let r = match crate::scope::enter(&self.page, step, false, deadline).await? {
            crate::scope::Entered::Ready(scope) => steps::verify(&scope.page, step, deadline).await,
            crate::scope::Entered::NotYet(observed) => Ok(Verdict::NotYet { observed }),
        };
        r.map_err(|e| popup_gone(step, e))
    }

    async fn capture_failure(&mut self, step: &Step) -> Vec<qa_core::Artifact> {
        let mut named = step.clone();
        named.name = Some(format!("failure-step{}", step.index + 1));
        // A step in a popup leaves the popup's picture; a step in a frame
        // (or a closed popup) the page's.
        let popup = match &step.target {
            Some(t) if t.kind == qa_core::flow::StepTargetKind::Popup => {
                crate::scope::popup_page(&self.page, t.name.as_deref().unwrap_or("")).ok()
            }
            _ => None,
        };
        let page = popup.as_ref().unwrap_or(&self.page);
        let _ = page.ensure_front().await;
        let shot = crate::artifacts::screenshot(
            page,
            &self.ctx.evidence,
            &named,
            None,
            false,
            Deadline::after_ms(4000),
        )
        .await
        .unwrap_or_default();
        shot
    }

    async fn close(mut self: Box<Self>, deadline: Deadline) -> CloseResult {
        let mut result = CloseResult {
            observations: self.take_observations(),
            ..Default::default()
        };
        result.artifacts = crate::artifacts::write_logs(&self.page.sh, &self.ctx.evidence);
        let cdp = self.page.sh.cdp.clone();
        let _ = tokio::time::timeout(
            Duration::from_millis(500),
            cdp.call(None, "Browser.close", json!({})),
        )
        .await;
        cdp.close();
        result.cleanup = self
            .ctx
            .processes
            .end_all(qa_core::process::DEFAULT_GRACE, deadline)
            .await;
        for mut c in self.children.drain(..) {
            let _ = c.try_wait();
        }
        // The browser is gone: stop the proxy (and every connection) and say
        // what only the network layer caught.
        if let Some(proxy) = self.proxy.take() {
            let here = proxy.blocked_here();
            drop(proxy);
            if !here.is_empty() {
                result.observations.push(format!(
                    "of these, blocked at the network proxy (not seen by in-browser interception): {}",
                    here.observations()
                        .iter()
                        .map(|l| l.trim_start_matches("blocked ").to_string())
                        .collect::<Vec<_>>()
                        .join("; ")
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
