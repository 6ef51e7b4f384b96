//! A browser ui-qa did not start (`target.browser.connect`): the run
//! connects to the one endpoint the flow names, makes a browser context of
//! its own (`disposeOnDetach`: it goes with the connection, even when the
//! run fails), attaches only to that context's pages (discovery, never
//! auto-attach, which would attach to the user's tabs too), and at the end
//! disposes the context and closes the connection — never the browser.
//!
//! Containment holds as on an owned browser: every page of the context is
//! intercepted (Fetch) before the run navigates it, and a browser on this
//! machine sends every connection of the context through the run's proxy
//! (answering only the browser's user). A browser elsewhere cannot reach
//! that proxy: the in-browser layer is then the only one, and the result
//! says so.

use crate::cdp::commands::{
    AttachToTarget, CloseTarget, CreateBrowserContext, CreateTarget, DisposeBrowserContext,
    GetTargets, SetDiscoverTargets, SetDownloadBehavior, SetTimezoneOverride,
};
use crate::cdp::{Cdp, CdpEvent};
use crate::codes::WebCode;
use crate::contain::{far_end_uid, Allowlist, BlockedSink, Proxy};
use crate::host::endpoint;
use crate::shared::Shared;
use qa_core::flow::BrowserConnection;
use qa_core::{Deadline, DriverError, Note, NoteKind};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// A connection to a browser the run did not start, with its context.
pub(crate) struct Attached {
    /// The connection.
    pub cdp: Arc<Cdp>,
    /// Its events.
    pub events: mpsc::UnboundedReceiver<CdpEvent>,
    /// The run's own browser context (`None`: it drives an existing page).
    pub context: Option<String>,
    /// The existing page it drives: its target id and URL.
    pub existing: Option<(String, String)>,
    /// The network layer of containment (a browser on this machine).
    pub proxy: Option<Proxy>,
    /// Whether the browser runs on this machine (it can reach loopback).
    pub local: bool,
    /// What the result says about the connection.
    pub notes: Vec<Note>,
}

/// Ends the run's part of an attached browser when dropped: the connection
/// closes, and the browser disposes the context with every page in it.
pub(crate) struct Detach(Option<Arc<Cdp>>);

impl Detach {
    /// Guards `cdp`.
    pub fn new(cdp: Arc<Cdp>) -> Detach {
        Detach(Some(cdp))
    }

    /// Lets the connection live on (its owner closes it).
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for Detach {
    fn drop(&mut self) {
        if let Some(c) = self.0.take() {
            c.close();
        }
    }
}

/// Connects to `b` within `deadline` and makes the run's context.
pub(crate) async fn connect(
    b: &BrowserConnection,
    allow: Allowlist,
    blocked: BlockedSink,
    deadline: Deadline,
) -> Result<Attached, DriverError> {
    let ws = endpoint::websocket_url(&b.connect, deadline).await?;
    let within = deadline.remaining().min(Duration::from_secs(15));
    let c = Cdp::over_websocket(&ws, within)
        .await
        .map_err(|why| endpoint::unreachable(&b.connect, &why))?;
    let guard = Detach::new(c.cdp.clone());
    let local = endpoint::is_loopback(c.peer);
    let mut notes = vec![Note::new(
        NoteKind::Environment,
        format!(
            "the run drives a browser ui-qa did not start ({}), in a browser context of its own; the browser and its other tabs are left as they were",
            endpoint::shown(&b.connect)
        ),
    )];
    if b.existing() {
        let page = find_existing(&c.cdp, b, deadline).await?;
        notes[0] = Note::new(
            NoteKind::Environment,
            format!(
                "the run drives a page the browser at {} already shows, in the browser's own context (\"page\": \"existing\"); it is left open, and the browser and its other tabs as they were",
                endpoint::shown(&b.connect)
            ),
        );
        notes.push(Note::new(
            NoteKind::Environment,
            "containment: the browser's own context has no proxy of the run's; the page's requests are stopped by interception inside the browser only",
        ));
        guard.disarm();
        return Ok(Attached {
            cdp: c.cdp,
            events: c.events,
            context: None,
            existing: Some(page),
            proxy: None,
            local,
            notes,
        });
    }
    let proxy = if local {
        let uid = far_end_uid(c.local, c.peer);
        Some(
            Proxy::start(allow, blocked, uid)
                .await
                .map_err(|e| DriverError::new(WebCode::ProxyStart, e.to_string()))?,
        )
    } else {
        notes.push(Note::new(
            NoteKind::Environment,
            "containment: the browser is on another machine and cannot reach ui-qa's network proxy; requests are stopped by interception inside the browser only",
        ));
        None
    };
    let make = CreateBrowserContext {
        dispose_on_detach: true,
        proxy_server: proxy.as_ref().map(Proxy::url),
        proxy_bypass_list: proxy.as_ref().map(|_| "<-loopback>".to_string()),
    };
    let bound = deadline.remaining().min(Duration::from_secs(10));
    let made = c
        .cdp
        .call_typed_with_timeout(None, &make, bound)
        .await
        .map_err(|e| {
            DriverError::new(
                WebCode::ConnectNoContext,
                format!(
                    "the browser at {} did not make a browser context for the run ({e}); ui-qa never drives a browser's own tabs without one",
                    endpoint::shown(&b.connect)
                ),
            )
            .with_remediation(
                "drive the page it already shows instead: \"browser\": { \"connect\": …, \"page\": \"existing\", \"pageUrl\": \"text of its URL\" } (an app's only context), or attach to a Chromium that allows browser contexts",
            )
        })?;
    if made.browser_context_id.is_empty() {
        return Err(DriverError::new(
            WebCode::ConnectNoContext,
            "the browser answered Target.createBrowserContext without a context",
        ));
    }
    guard.disarm();
    Ok(Attached {
        cdp: c.cdp,
        events: c.events,
        context: Some(made.browser_context_id),
        existing: None,
        proxy,
        local,
        notes,
    })
}

/// The pages (target id, URL) whose URL includes `want`, asked within
/// `bound`.
pub(crate) async fn pages_matching(
    cdp: &Arc<Cdp>,
    want: &str,
    bound: Duration,
) -> Result<Vec<(String, String)>, DriverError> {
    let all = cdp
        .call_typed_with_timeout(None, &GetTargets {}, bound)
        .await
        .map_err(|e| DriverError::new(WebCode::CdpAttach, e.to_string()))?;
    Ok(all
        .target_infos
        .into_iter()
        .filter(|t| t.kind == "page" && t.url.contains(want))
        .map(|t| (t.target_id, t.url))
        .collect())
}

/// The one page whose URL includes `pageUrl`: its target id and URL. Never
/// lists the other pages (they are the user's): it says how many matched.
async fn find_existing(
    cdp: &Arc<Cdp>,
    b: &BrowserConnection,
    deadline: Deadline,
) -> Result<(String, String), DriverError> {
    let want = b.page_url.as_deref().unwrap_or_default();
    let bound = deadline.remaining().min(Duration::from_secs(10));
    let mut pages = pages_matching(cdp, want, bound).await?;
    match pages.len() {
        1 => Ok(pages.remove(0)),
        0 => Err(DriverError::new(
            WebCode::ConnectNoPage,
            format!("the browser at {} shows no page whose URL includes {want:?}", endpoint::shown(&b.connect)),
        )
        .with_remediation("open the page first, or name it with pageUrl: text its URL includes")),
        many => Err(DriverError::new(
            WebCode::ConnectNoPage,
            format!(
                "{many} pages of the browser at {} have a URL that includes {want:?}; pageUrl must name one",
                endpoint::shown(&b.connect)
            ),
        )
        .with_remediation("give pageUrl more of the page's URL")),
    }
}

/// Starts the run's pages: downloads denied in its context, discovery of
/// its targets (each of the context's pages is attached and contained as
/// it appears), then the main page, blank.
pub(crate) async fn start(sh: &Arc<Shared>, deadline: Deadline) -> Result<(), DriverError> {
    let bound = deadline.remaining().min(Duration::from_secs(10));
    let failed = |e: crate::cdp::CdpError| DriverError::new(WebCode::CdpAttach, e.to_string());
    if let Some(page) = sh.existing.get().cloned() {
        // The page itself, then (discovery) the windows it opens.
        sh.st().attaching.insert(page.clone());
        let discover = SetDiscoverTargets { discover: true };
        let attach = AttachToTarget {
            target_id: page,
            flatten: true,
        };
        sh.cdp
            .call_typed_with_timeout(None, &attach, bound)
            .await
            .map_err(failed)?;
        sh.cdp
            .call_typed_with_timeout(None, &discover, bound)
            .await
            .map_err(failed)?;
        return Ok(());
    }
    let Some(context) = sh.context.get().cloned() else {
        return Ok(());
    };
    let deny = SetDownloadBehavior {
        browser_context_id: Some(context.clone()),
        ..SetDownloadBehavior::deny()
    };
    let discover = SetDiscoverTargets { discover: true };
    let (a, b) = tokio::join!(
        sh.cdp.call_typed_with_timeout(None, &deny, bound),
        sh.cdp.call_typed_with_timeout(None, &discover, bound),
    );
    a.and(b).map_err(failed)?;
    let blank = CreateTarget {
        url: "about:blank".into(),
        browser_context_id: Some(context),
    };
    sh.cdp
        .call_typed_with_timeout(None, &blank, bound)
        .await
        .map_err(failed)?;
    Ok(())
}

/// Ends the run's part of the browser within `bound`: its context is
/// disposed (every page of it closes); with an existing page, the windows
/// the run's pages opened are closed and the page itself is left open.
pub(crate) async fn dispose(sh: &Shared, bound: Duration) {
    if let Some(context) = sh.context.get() {
        let d = DisposeBrowserContext {
            browser_context_id: context.clone(),
        };
        let _ = sh.cdp.call_typed_with_timeout(None, &d, bound).await;
    } else if let Some(page) = sh.existing.get() {
        // Chromium before ~M90 (QtWebEngine 5.15: 87) keeps a page's
        // timezone override after the session that set it detached, and
        // no later session can replace or clear it ("Timezone override is
        // already in effect"): the session that set it clears it.
        let main = sh.st().main_session.clone();
        if let Some(session) = main {
            let clear = SetTimezoneOverride {
                timezone_id: String::new(),
            };
            let _ = sh
                .cdp
                .call_typed_with_timeout(Some(&session), &clear, bound)
                .await;
        }
        let opened: Vec<String> = {
            let st = sh.st();
            st.sessions
                .iter()
                .filter(|(t, s)| {
                    *t != page && st.session_type.get(*s).map(String::as_str) == Some("page")
                })
                .map(|(t, _)| t.clone())
                .collect()
        };
        for target_id in opened {
            let _ = sh
                .cdp
                .call_typed_with_timeout(None, &CloseTarget { target_id }, bound)
                .await;
        }
    }
}

/// Whether a browser's user agent is one whose renderer rejects every
/// DevTools key event and then answers no input at all: Qt WebEngine 5
/// (Chromium 87; measured on 5.15.13).
fn rejects_key_events(user_agent: &str) -> bool {
    user_agent.contains("QtWebEngine/5.")
}

/// Asks a browser ui-qa did not start (or an app) what it is, within
/// `bound`; where DevTools key events would cut its page's input, `press`
/// is refused from now on, and the result says so.
pub(crate) async fn check_input(sh: &Shared, bound: Duration) {
    let Ok(v) = sh
        .cdp
        .call_with_timeout(None, "Browser.getVersion", serde_json::json!({}), bound)
        .await
    else {
        return;
    };
    let ua = v.get("userAgent").and_then(|u| u.as_str()).unwrap_or("");
    if rejects_key_events(ua) {
        let product = v.get("product").and_then(|p| p.as_str()).unwrap_or("");
        let _ = sh.no_key_events.set(format!("Qt WebEngine 5 ({product})"));
        sh.note(Note::new(
            NoteKind::Environment,
            "the page is in Qt WebEngine 5, whose renderer rejects DevTools key events and then answers no input at all: `press` is refused; `fill` and `click` work",
        ));
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_qt_webengine_5_rejects_key_events() {
        let qt5 = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) QtWebEngine/5.15.13 Chrome/87.0.4280.144 Safari/537.36";
        let qt6 = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) QtWebEngine/6.11.0 Chrome/140.0.0.0 Safari/537.36";
        let chromium = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36";
        assert!(super::rejects_key_events(qt5));
        assert!(!super::rejects_key_events(qt6));
        assert!(!super::rejects_key_events(chromium));
    }
}
