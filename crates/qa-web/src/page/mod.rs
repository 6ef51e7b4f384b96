//! A page the session drives — the main page, a popup's page, or a
//! same-origin frame of one ([`scope`]): in-page evaluation through the
//! typed helper protocol ([`dom`]), input dispatch ([`input`]), navigation
//! and the post-action settle.

mod dom;
mod input;
mod scope;

pub(crate) use dom::{
    ActKind, ActReply, Candidates, Check, ClickPoint, Counted, DomOp, ElementRect, ElementState,
    Filled, Intent, MaskHidden, MaskShown, Metrics, Nothing, OneElement, PageInfo, Placed, Pointed,
    Read, Resolved, Unfit, Unmaskable, DOM_JS,
};
pub(crate) use scope::{enter, popup_closed, popup_page, target_gone, to_page, Entered};

use crate::cdp::commands::{
    BringToFront, Command, Evaluate, Evaluated, Navigate, Reload as ReloadCommand,
};
use crate::cdp::CdpError;
use crate::codes::WebCode;
use crate::shared::Shared;
use crate::state::FrameRef;
use qa_core::flow::Locator;
use qa_core::{Cadence, Deadline, DriverError, Mismatch};
use serde::de::DeserializeOwned;
use std::sync::Arc;
use std::time::Duration;

/// Requests older than this at settle time count as long-lived (polling,
/// streaming) and no longer hold the page busy.
pub(crate) const LONG_LIVED_REQUEST_MS: u64 = 5_000;

/// Why an evaluation did not produce a value.
#[derive(Debug)]
pub(crate) enum EvalError {
    /// The document changed under us (navigation); retry.
    Transient(String),
    /// The connection or the target is gone, or the call timed out.
    Fatal(CdpError),
    /// The helper answered in a shape the driver does not expect.
    Reply(String),
}

impl std::fmt::Display for EvalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EvalError::Transient(m) | EvalError::Reply(m) => f.write_str(m),
            EvalError::Fatal(e) => write!(f, "{e}"),
        }
    }
}

/// A page of the session, as a step sees it.
#[derive(Clone)]
pub(crate) struct Page {
    /// Shared state.
    pub sh: Arc<Shared>,
    /// The page's flat session id.
    pub session: String,
    /// Quiet window after actions.
    pub settle_ms: u64,
    /// A same-origin frame of the page the step runs in (`None`: the
    /// page's main frame).
    pub frame: Option<FrameRef>,
}

fn no_frame_document() -> CdpError {
    CdpError::Protocol {
        code: -32000,
        message: "the frame has no document yet".into(),
    }
}

fn bound(deadline: Deadline) -> Duration {
    deadline
        .remaining()
        .clamp(Duration::from_millis(50), Duration::from_secs(60))
}

/// A DOM reply error as a step error.
pub(crate) fn reply_error(message: String) -> DriverError {
    DriverError::new(WebCode::DomReply, message)
}

impl Page {
    /// A typed call on the page session.
    pub async fn send<C: Command>(&self, cmd: &C) -> Result<C::Response, CdpError> {
        self.sh.cdp.call_typed(Some(&self.session), cmd).await
    }

    /// A typed call on the page session, bounded by `deadline` (at least
    /// 50 ms, at most 60 s).
    pub async fn send_until<C: Command>(
        &self,
        cmd: &C,
        deadline: Deadline,
    ) -> Result<C::Response, CdpError> {
        self.sh
            .cdp
            .call_typed_with_timeout(Some(&self.session), cmd, bound(deadline))
            .await
    }

    /// Whether this page is a popup (any page but the session's main one).
    pub fn is_popup(&self) -> bool {
        self.sh.st().main_session.as_deref() != Some(self.session.as_str())
    }

    /// Brings this page to the front unless it is known to be there: a
    /// background page gets no animation frames (the stability check) and
    /// no screenshots. A page that is gone fails with its own code.
    pub async fn ensure_front(&self) -> Result<(), DriverError> {
        if self.sh.st().front.as_deref() == Some(self.session.as_str()) {
            return Ok(());
        }
        match self.send(&BringToFront {}).await {
            Ok(_) => {
                self.sh.st().front = Some(self.session.clone());
                Ok(())
            }
            Err(e @ CdpError::Protocol { .. }) => {
                Err(DriverError::new(WebCode::PageFront, e.to_string()))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The same page with its main frame as scope.
    pub fn top(&self) -> Page {
        Page {
            frame: None,
            ..self.clone()
        }
    }

    /// Load events of this page so far.
    pub fn load_count(&self) -> u64 {
        self.sh.st().loads.get(&self.session).copied().unwrap_or(0)
    }

    /// `cmd` scoped to this page: in a frame, its current default execution
    /// context (it changes when the frame navigates; `None` while the frame
    /// has no document).
    fn scoped(&self, mut cmd: Evaluate) -> Option<Evaluate> {
        if let Some(f) = &self.frame {
            let st = self.sh.st();
            let id = st
                .frame_contexts
                .get(&(self.session.clone(), f.id.clone()))?;
            cmd.context_id = Some(*id);
        }
        Some(cmd)
    }

    /// `Runtime.evaluate` in this scope (the frame's document in a frame).
    pub async fn evaluate(&self, cmd: Evaluate) -> Result<Evaluated, CdpError> {
        let cmd = self.scoped(cmd).ok_or_else(no_frame_document)?;
        self.send(&cmd).await
    }

    /// Runs one helper operation in this scope and reads its answer as `R`.
    pub async fn dom<R: DeserializeOwned>(
        &self,
        op: &DomOp<'_>,
        deadline: Deadline,
    ) -> Result<R, EvalError> {
        let cmd = Evaluate {
            expression: op.expression(),
            await_promise: Some(true),
            return_by_value: Some(true),
            context_id: None,
        };
        let cmd = self
            .scoped(cmd)
            .ok_or_else(|| EvalError::Transient("the frame has no document yet".into()))?;
        match self.send_until(&cmd, deadline).await {
            Ok(r) => {
                if let Some(ex) = &r.exception_details {
                    let text = ex.describe().unwrap_or("exception");
                    // A helper exception is usually a bad CSS selector or a
                    // document being replaced; report it as transient once.
                    return Err(EvalError::Transient(
                        text.lines().next().unwrap_or("").to_string(),
                    ));
                }
                let v = r.result.value.unwrap_or_default();
                dom::reply(op, v).map_err(EvalError::Reply)
            }
            Err(CdpError::Protocol { message, .. }) => Err(EvalError::Transient(message)),
            // Bounded by the step deadline and out of time: the caller's
            // retry loop ends with what it last observed (not a hang).
            Err(CdpError::Timeout { .. }) if deadline.remaining() < Duration::from_millis(50) => {
                Err(EvalError::Transient(
                    "the page did not answer before the step deadline".into(),
                ))
            }
            Err(e) => Err(EvalError::Fatal(e)),
        }
    }

    /// What `l` matched (several elements) or the closest elements (none;
    /// those that can take `intent` first), as the candidates of a
    /// failure; none when the page cannot say within a second.
    async fn candidates(&self, l: &Locator, intent: Option<Intent>) -> Option<Candidates> {
        self.dom::<Candidates>(&DomOp::Candidates(l, intent), Deadline::after_ms(1000))
            .await
            .ok()
    }

    /// The mismatch of a locator that matched nothing: the closest
    /// elements as candidates, those that can take `intent` (what the step
    /// meant to do) first.
    pub async fn not_found(&self, l: &Locator, intent: Option<Intent>) -> Mismatch {
        let expected = format!("one element matching {}", l.describe());
        match self.candidates(l, intent).await {
            Some(c) => {
                // With `nth`, the elements matched but too few of them.
                let received = if c.matched {
                    format!("{} element(s) match, fewer than nth+1", c.total)
                } else {
                    "no element matches".into()
                };
                Mismatch::new(expected, received)
                    .at(l.describe())
                    .with_candidates(
                        c.list.into_iter().map(|x| x.into_candidate()).collect(),
                        c.total,
                    )
            }
            None => Mismatch::new(expected, "no element matches").at(l.describe()),
        }
    }

    /// The mismatch of a locator that matched `count` elements: those
    /// elements as candidates.
    pub async fn ambiguous(&self, l: &Locator, count: u64) -> Mismatch {
        let m = Mismatch::new(
            format!("one element matching {}", l.describe()),
            format!("{count} elements match"),
        )
        .at(l.describe());
        match self.candidates(l, None).await {
            Some(c) => m.with_candidates(
                c.list.into_iter().map(|x| x.into_candidate()).collect(),
                c.total,
            ),
            None => m,
        }
    }

    /// [`Page::dom`] retried on the shared cadence while the document is
    /// being replaced, until `deadline`.
    pub async fn read<R: DeserializeOwned>(
        &self,
        op: &DomOp<'_>,
        deadline: Deadline,
    ) -> Result<R, DriverError> {
        let mut cadence = Cadence::new();
        loop {
            match self.dom(op, deadline).await {
                Ok(v) => return Ok(v),
                Err(EvalError::Fatal(e)) => return Err(e.into()),
                Err(EvalError::Reply(m)) => return Err(reply_error(m)),
                Err(EvalError::Transient(m)) => {
                    if invalid_selector(&m) {
                        return Err(DriverError::new(
                            WebCode::LocatorInvalid,
                            "the CSS selector is not valid",
                        ));
                    }
                    if !cadence.wait(deadline).await {
                        return Err(DriverError::new(
                            WebCode::PageUnavailable,
                            "the page did not answer before the step deadline",
                        ));
                    }
                }
            }
        }
    }

    /// A remote object id for the one element `locator` matches now
    /// (`None` if it does not match exactly one). Release it with
    /// `Runtime.releaseObject`.
    pub async fn element_object(&self, locator: &Locator) -> Result<Option<String>, DriverError> {
        let cmd = Evaluate {
            expression: DomOp::Element(locator).expression(),
            await_promise: Some(true),
            return_by_value: Some(false),
            context_id: None,
        };
        let r = self
            .evaluate(cmd)
            .await
            .map_err(|e| DriverError::new(WebCode::CdpFailed, e.to_string()))?;
        Ok(match r.result.subtype.as_deref() {
            Some("node") => r.result.object_id,
            _ => None,
        })
    }

    /// Waits for any state change (event) or `max`, whichever first.
    pub async fn changed_or(&self, max: Duration, deadline: Deadline) {
        let mut rx = self.sh.changed.subscribe();
        let until = Deadline::after(max).min(deadline);
        let _ = until.run(rx.changed()).await;
    }

    /// Navigates and waits for the load event, then settles.
    pub async fn navigate(&self, url: &str, deadline: Deadline) -> Result<(), DriverError> {
        let (load0, seq0) = (self.load_count(), self.sh.st().net_seq);
        let r = self
            .send_until(&Navigate { url: url.into() }, deadline)
            .await
            .map_err(|e| DriverError::new(WebCode::NavigationFailed, e.to_string()))?;
        if let Some(err) = r.error_text {
            if err.contains("BLOCKED_BY_CLIENT") {
                return Err(DriverError::new(
                    WebCode::NavigationBlocked,
                    format!("navigation failed: {err}"),
                ));
            }
            // Chromium names a refused connection in many ways
            // (ERR_HTTP_RESPONSE_CODE_FAILURE under interception): ask the
            // network directly.
            return Err(match unreachable(url).await {
                Some(why) => DriverError::new(WebCode::TargetUnreachable, why).with_remediation(
                    "start the server first, or let the flow start it with target.server",
                ),
                None => DriverError::new(
                    WebCode::NavigationFailed,
                    format!("navigation failed: {err}"),
                ),
            });
        }
        if r.loader_id.is_some() {
            self.wait_load(load0, deadline).await?;
        }
        self.settle(seq0, deadline).await?;
        self.note_error_status(seq0);
        Ok(())
    }

    /// Navigates and waits for the load event only (a document the
    /// interception answers itself has nothing to settle).
    pub async fn navigate_loaded(&self, url: &str, deadline: Deadline) -> Result<(), DriverError> {
        let load0 = self.load_count();
        let r = self
            .send_until(&Navigate { url: url.into() }, deadline)
            .await
            .map_err(|e| DriverError::new(WebCode::NavigationFailed, e.to_string()))?;
        if let Some(err) = r.error_text {
            return Err(DriverError::new(
                WebCode::NavigationFailed,
                format!("navigation failed: {err}"),
            ));
        }
        self.wait_load(load0, deadline).await
    }

    /// A note when the document a navigation loaded answered HTTP 400 or
    /// more: the page is an error page, whatever a later step says.
    fn note_error_status(&self, seq0: u64) {
        let bad = {
            let st = self.sh.st();
            st.network
                .iter()
                .filter(|e| e.seq > seq0 && e.kind == "Document")
                .find_map(|e| e.status.filter(|s| *s >= 400).map(|s| (e.url.clone(), s)))
        };
        if let Some((url, status)) = bad {
            self.sh.note(qa_core::Note::info(format!(
                "{url} answered HTTP {status}: the page shown is the server's error page"
            )));
        }
    }

    /// Reloads and waits for the load event, then settles.
    pub async fn reload(&self, seq0: u64, deadline: Deadline) -> Result<(), DriverError> {
        let load0 = self.load_count();
        self.send(&ReloadCommand {})
            .await
            .map_err(|e| DriverError::new(WebCode::NavigationFailed, e.to_string()))?;
        self.wait_load(load0, deadline).await?;
        self.settle(seq0, deadline).await
    }

    /// Waits until this page fired a load event after `load0` (see
    /// [`Page::load_count`]).
    pub async fn wait_load(&self, load0: u64, deadline: Deadline) -> Result<(), DriverError> {
        let mut rx = self.sh.changed.subscribe();
        loop {
            {
                let st = self.sh.st();
                if st.loads.get(&self.session).copied().unwrap_or(0) > load0 {
                    return Ok(());
                }
                if st.crashed {
                    return Err(DriverError::new(WebCode::PageCrashed, "the page crashed"));
                }
            }
            if deadline.run(rx.changed()).await.is_none() {
                return Err(DriverError::new(
                    WebCode::NavigationTimeout,
                    "the page did not finish loading before the step deadline",
                ));
            }
        }
    }

    /// Post-action readiness: document complete, requests started since
    /// `since_seq` finished (WebSocket/EventSource and long-lived requests
    /// excluded), no visible busy marker, then a quiet window of `settle_ms`
    /// with no DOM mutation and no network activity. The recording
    /// visualizer's marks are not waited for (the video holds them; see
    /// [`Page::marks_gone`] for pictures).
    pub async fn settle(&self, since_seq: u64, deadline: Deadline) -> Result<(), DriverError> {
        let mut last_busy: Option<String> = None;
        loop {
            let pending = self.pending_requests(since_seq);
            // A popup may close itself (its evaluations then go unanswered):
            // ask it in short slices.
            let popup = self.is_popup();
            let slice = if popup {
                Deadline::after_ms(1000).min(deadline)
            } else {
                deadline
            };
            let s: Option<dom::Settled> = match self.dom(&DomOp::Settle, slice).await {
                Ok(v) => Some(v),
                Err(_) if self.closed() => return Ok(()),
                Err(EvalError::Transient(_)) => None,
                Err(EvalError::Fatal(_)) if popup && !deadline.expired() => None,
                Err(EvalError::Fatal(e)) => return Err(e.into()),
                Err(EvalError::Reply(m)) => return Err(reply_error(m)),
            };
            let mut waiting = pending > 0;
            match &s {
                Some(s) => {
                    if s.ready != "complete" {
                        waiting = true;
                        last_busy = Some("document not ready".into());
                    }
                    if let Some(b) = &s.busy {
                        waiting = true;
                        last_busy = Some(format!("visible busy marker {b}"));
                    }
                }
                None => waiting = true,
            }
            if pending > 0 {
                last_busy = Some(format!(
                    "{pending} request(s) started by the step still in flight"
                ));
            }
            if let (false, Some(s)) = (waiting, &s) {
                let m0 = s.mutations;
                let n0 = self.sh.st().net_seq;
                let quiet = Deadline::after_ms(self.settle_ms);
                if deadline.instant() < quiet.instant() {
                    return Ok(()); // no time left for a full quiet window
                }
                // Browser and runner are idle now: the page's video
                // encoder loads here rather than on a busy step.
                if let Some(rec) = self.sh.video.get() {
                    rec.start_encoder(&self.session);
                }
                quiet.sleep().await;
                let again = self.dom::<dom::Settled>(&DomOp::Settle, deadline).await;
                if let Ok(a) = again {
                    if a.mutations == m0
                        && self.sh.st().net_seq == n0
                        && a.busy.is_none()
                        && a.ready == "complete"
                    {
                        return Ok(());
                    }
                }
                continue;
            }
            if deadline.expired() {
                return Err(DriverError::new(
                    WebCode::SettleBusy,
                    format!(
                        "the page stayed busy until the step deadline: {}",
                        last_busy.unwrap_or_else(|| "document not ready".into())
                    ),
                ));
            }
            self.changed_or(Duration::from_millis(100), deadline).await;
        }
    }

    /// Waits (until `deadline`) for the recording visualizer's marks to
    /// clear (each lives at most 650 ms), so a picture shows the page and not the
    /// last action's marks. Without video there are none; a page that
    /// cannot be asked, or still shows marks at the deadline, is taken as
    /// it is.
    pub async fn marks_gone(&self, deadline: Deadline) {
        if self.sh.video.get().is_none() {
            return;
        }
        while !deadline.expired() {
            match self.dom::<dom::Settled>(&DomOp::Settle, deadline).await {
                Ok(s) if s.marks > 0 => self.changed_or(Duration::from_millis(50), deadline).await,
                _ => return,
            }
        }
    }

    /// A popup page that closed (the step closed it): nothing to settle.
    fn closed(&self) -> bool {
        let st = self.sh.st();
        st.main_session.as_deref() != Some(self.session.as_str())
            && !st.ready.contains(&self.session)
    }

    fn pending_requests(&self, since_seq: u64) -> usize {
        let st = self.sh.st();
        let now = self.sh.now_ms();
        st.inflight
            .values()
            .filter(|&&i| {
                let e = &st.network[i];
                e.seq > since_seq
                    && !e.browser_own
                    && e.kind != "EventSource"
                    && e.kind != "WebSocket"
                    && now.saturating_sub(e.start_ms) < LONG_LIVED_REQUEST_MS
            })
            .count()
    }
}

/// Whether a helper exception says the CSS selector is invalid.
pub(crate) fn invalid_selector(message: &str) -> bool {
    message.contains("SyntaxError") || message.contains("not a valid selector")
}

/// Why `url`'s server cannot be reached, when a TCP connection to it fails
/// (`None`: something answers there).
async fn unreachable(url: &str) -> Option<String> {
    let u = url::Url::parse(url).ok()?;
    let host = u.host_str()?.to_string();
    let port = u.port_or_known_default()?;
    let connect = tokio::net::TcpStream::connect((host.as_str(), port));
    match tokio::time::timeout(Duration::from_secs(2), connect).await {
        Ok(Ok(_)) => None,
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => Some(format!(
            "nothing is listening at {host}:{port} (connection refused) for {}",
            u.origin().ascii_serialization()
        )),
        Ok(Err(e)) => Some(format!("{host}:{port} cannot be reached: {e}")),
        Err(_) => Some(format!(
            "{host}:{port} did not accept a connection within 2 s"
        )),
    }
}
