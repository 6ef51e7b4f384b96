//! # qa-web — ui-qa's browser driver (`browser/cdp`)
//!
//! Drives a real Chromium over the DevTools protocol: finds Chromium on the
//! host, launches it headless in its own process group with a fresh profile,
//! confines every request to the target's exact origin plus
//! `allowedOrigins`, resolves locators against the live DOM, waits like
//! Playwright (actionability before, settle after each action), and keeps
//! PNG screenshots, accessibility snapshots and console/network logs.
//!
//! ```no_run
//! use qa_core::{Deadline, Evidence, Flow, RunOptions, Secrets, SessionContext, SurfaceDriver};
//! use qa_core::process::ProcessOwner;
//! use std::sync::Arc;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let flow = Flow::parse(r#"{
//!   "target": { "serve": "site", "url": "/index.html" },
//!   "steps": [
//!     { "action": "fill", "locator": { "label": "Name" }, "value": "Ada" },
//!     { "action": "click", "locator": { "role": "button", "name": "Send" } },
//!     { "action": "assertText", "locator": { "testId": "result" }, "includes": "Ada" }
//!   ]
//! }"#, std::path::Path::new("examples"))?;
//! let secrets = Arc::new(Secrets::new());
//! let ctx = SessionContext::new(
//!     Arc::new(Evidence::create(std::path::Path::new(".ui-qa/runs"), "demo", secrets)?),
//!     Arc::new(ProcessOwner::new()),
//!     Deadline::after_ms(60_000),
//!     RunOptions::default(),
//!     flow.evidence.as_ref(),
//! );
//! let driver = qa_web::WebDriver::new();
//! let mut session = driver.open(&flow, ctx).await?;
//! session.perform(&flow.steps[0], Deadline::after_ms(15_000)).await?;
//! session.perform(&flow.steps[1], Deadline::after_ms(15_000)).await?;
//! // assertions are verified on the runner's retry cadence
//! let _ = session.verify(&flow.steps[2], Deadline::after_ms(15_000)).await?;
//! let closed = session.close(Deadline::after_ms(10_000)).await;
//! assert!(closed.cleanup.left.is_empty());
//! # Ok(()) }
//! ```
//!
//! The CDP transport is a small client of its own over Chromium's DevTools
//! pipe (no port), or over a WebSocket for a browser ui-qa did not start
//! (`target.browser.connect`: a context of the run's own, never the
//! browser's other tabs; `docs/decisions/0009-attach-endpoint.md`); see
//! `docs/decisions/0001-cdp-transport.md` for why it is not
//! `headless_chrome`'s. Stable error codes are [`WebCode`].

#![warn(missing_docs)]

// Layers, imports flowing one way (each module uses only those above it):
// codes; cdp (transport, typed commands, events); contain (allowlist,
// proxy); host (launch, server); state (plain data); shared (state behind
// a lock, taps); attach (a browser ui-qa did not start); embedded (an
// app that embeds Chromium, launched by the run); pump (events →
// state); page (scopes, the dom.js protocol,
// input); actionability; artifacts; steps; session.
mod actionability;
mod artifacts;
mod attach;
mod cdp;
mod codes;
mod contain;
mod embedded;
mod host;
mod page;
mod pump;
mod record;
mod recorders;
mod session;
mod shared;
mod signin;
mod state;
mod steps;

pub use codes::WebCode;

use async_trait::async_trait;
use qa_core::flow::{Action, BrowserAction, LocatorKind, TargetKind};
use qa_core::window::WindowHost;
use qa_core::{
    Backend, Capability, DriverError, DriverId, DriverInfo, Flow, Host, Platform, Probe,
    RunOptions, SessionContext, StepSupport, SurfaceDriver, SurfaceSession,
};
use std::sync::Arc;

/// The driver's identity: `browser/cdp`.
const DRIVER_ID: DriverId = DriverId {
    backend: Backend::Browser,
    name: "cdp",
};

/// The Chromium-over-CDP driver.
pub struct WebDriver {
    info: DriverInfo,
    /// Where an app of `target.app` shows its window (its display, the
    /// window's pictures and video).
    windows: Option<Arc<dyn WindowHost>>,
}

impl Default for WebDriver {
    fn default() -> Self {
        WebDriver::new()
    }
}

impl WebDriver {
    /// A driver.
    pub fn new() -> WebDriver {
        WebDriver {
            info: DriverInfo {
                id: DRIVER_ID,
                kind: TargetKind::Browser,
                // Chromium runs wherever ui-qa does.
                platform: Platform::current(),
                guide_topic: DRIVER_ID.name,
                support: StepSupport {
                    actions: steps::supported_actions(),
                    locators: vec![
                        LocatorKind::TestId,
                        LocatorKind::Role,
                        LocatorKind::Label,
                        LocatorKind::Placeholder,
                        LocatorKind::Text,
                        LocatorKind::Css,
                    ],
                    step_targets: true,
                },
            },
            windows: None,
        }
    }

    /// The driver with a window host: `target.app` (an app that embeds
    /// Chromium) shows its window there, and its pictures and video are
    /// that window's pixels. Without one, such flows are BLOCKED.
    pub fn with_window_host(mut self, host: Arc<dyn WindowHost>) -> WebDriver {
        self.windows = Some(host);
        self
    }
}

#[async_trait]
impl SurfaceDriver for WebDriver {
    fn info(&self) -> &DriverInfo {
        &self.info
    }

    /// Roles are WAI-ARIA role names, as the page's accessibility tree has them.
    fn check_role(&self, role: &str) -> Result<(), String> {
        qa_core::flow::roles::check_aria_role(role)
    }

    async fn probe(&self, flow: &Flow, _host: &Host, options: &RunOptions) -> Probe {
        let mut probe = Probe {
            driver: DRIVER_ID,
            present: Vec::new(),
            missing: Vec::new(),
            presentation: Some("headless".into()),
        };
        let (connect, app) = match &flow.target {
            qa_core::flow::Target::Browser(t) => (t.browser.as_ref(), t.app.as_ref()),
            _ => (None, None),
        };
        if let Some(app) = app {
            probe.presentation = Some("app".into());
            let (present, missing) = embedded::probe(app, flow, self.windows.as_ref(), options);
            probe.present.extend(present);
            probe.missing.extend(missing);
        }
        match connect.filter(|_| app.is_none()) {
            // A browser ui-qa did not start: nothing to find here (the
            // endpoint is contacted only when the run opens).
            Some(b) => {
                probe.presentation = Some("attached".into());
                probe.present.push(Capability {
                    id: "browser-endpoint".into(),
                    detail: host::endpoint::shown(&b.connect),
                })
            }
            None if app.is_some() => {}
            None => match host::launch::find_chromium(options.browser.as_deref()) {
                Ok(p) => probe.present.push(Capability {
                    id: "chromium".into(),
                    detail: p.display().to_string(),
                }),
                Err(m) => probe.missing.push(m),
            },
        }
        let lighthouse = flow
            .steps
            .iter()
            .any(|s| matches!(&s.action, Action::Browser(BrowserAction::Lighthouse(_))));
        if lighthouse {
            probe.missing.push(steps::lighthouse_missing());
        }
        probe
    }

    async fn open(
        &self,
        flow: &Flow,
        ctx: SessionContext,
    ) -> Result<Box<dyn SurfaceSession>, DriverError> {
        let processes = ctx.processes.clone();
        match session::open(flow, ctx, self.windows.as_ref()).await {
            Ok(s) => Ok(Box::new(s)),
            Err(e) => {
                // Nothing launched may outlive a failed open.
                let _ = processes
                    .end_all(
                        qa_core::process::DEFAULT_GRACE,
                        qa_core::Deadline::after_ms(5_000),
                    )
                    .await;
                Err(e)
            }
        }
    }
}

/// Internals the crate's own integration tests drive directly (the raw
/// DevTools connection, finding and launching Chromium). Not an API.
#[doc(hidden)]
pub mod testing {
    /// The raw DevTools connection.
    pub mod cdp {
        pub use crate::cdp::{Cdp, CdpError};
    }
    /// Finding and launching Chromium.
    pub mod launch {
        pub use crate::host::launch::{chromium_args, find_chromium, launch, BrowserChild};
    }
}
