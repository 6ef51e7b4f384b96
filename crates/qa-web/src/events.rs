//! The event pump: one task reads every CDP event of the run and keeps the
//! page state (network, console, dialogs, containment, loads) current.
//! Waiters watch a change counter instead of polling.

use crate::cdp::{Cdp, CdpEvent};
use crate::containment::{Allowlist, BlockedRequests, Decision};
use qa_core::flow::DialogExpectation;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::{mpsc, watch};

const MAX_LOG_ENTRIES: usize = 5000;

/// One console message.
#[derive(Debug, Clone)]
pub struct ConsoleEntry {
    /// ms since the session started.
    pub at_ms: u64,
    /// `log`, `info`, `warning`, `error`, `debug`.
    pub level: String,
    /// Message text (bounded).
    pub text: String,
    /// `console`, `exception`, `network`, … (origin of the entry).
    pub source: String,
    /// Caused by ui-qa's own containment (not counted as a page error).
    pub containment: bool,
}

/// One network request.
#[derive(Debug, Clone)]
pub struct NetEntry {
    /// Request id (per session).
    pub id: String,
    /// Session it ran in.
    pub session: String,
    /// HTTP method.
    pub method: String,
    /// Origin + path (never the query).
    pub url: String,
    /// Path + query, for matching only.
    pub path_query: String,
    /// Resource type.
    pub kind: String,
    /// Response status.
    pub status: Option<u16>,
    /// Start, ms since the session started.
    pub start_ms: u64,
    /// Duration once finished.
    pub duration_ms: Option<u64>,
    /// Failure text once failed.
    pub failed: Option<String>,
    /// Sequence number of the start.
    pub seq: u64,
}

/// A dialog that opened.
#[derive(Debug, Clone)]
pub struct DialogSeen {
    /// `alert`, `confirm`, `prompt`, `beforeunload`.
    pub kind: String,
    /// Message (kept for matching; never echoed).
    pub message: String,
    /// Whether an armed expectation handled it.
    pub expected: bool,
    /// Sequence number.
    pub seq: u64,
}

/// The whole mutable state.
#[derive(Debug, Default)]
pub struct PageState {
    /// Target id → flat session id.
    pub sessions: HashMap<String, String>,
    /// Sessions whose containment setup finished.
    pub ready: HashSet<String>,
    /// Target type per session.
    pub session_type: HashMap<String, String>,
    /// The main page session.
    pub main_session: Option<String>,
    /// Console log.
    pub console: Vec<ConsoleEntry>,
    /// Network log.
    pub network: Vec<NetEntry>,
    /// In-flight (session, request id) → index into `network`.
    pub inflight: HashMap<(String, String), usize>,
    /// Bumped on every request start and end.
    pub net_seq: u64,
    /// Main-frame load events.
    pub load_seq: u64,
    /// Dialog expectation armed before an interaction.
    pub armed_dialog: Option<DialogExpectation>,
    /// Dialogs seen.
    pub dialogs: Vec<DialogSeen>,
    /// Observations for the result.
    pub observations: Vec<String>,
    /// The page crashed.
    pub crashed: bool,
    /// Counter for dialog/other sequencing.
    pub seq: u64,
    /// Dropped log entries (bounds).
    pub dropped: u64,
    /// Blocked document (navigation) requests per session: a popup or page
    /// whose navigation left the allowlist.
    pub blocked_documents: HashMap<String, u32>,
    /// Popups adopted by `openPopup`, by step name.
    pub popups: HashMap<String, crate::steps_extra::Popup>,
    /// Load events per page session (the main page's are also `load_seq`).
    pub loads: HashMap<String, u64>,
    /// The default execution context of each frame: (session, frame id) →
    /// context id, from `Runtime.executionContextCreated`.
    pub frame_contexts: HashMap<(String, String), i64>,
    /// The page session believed to be in front (`None`: unknown). A new
    /// window or tab comes to the front when it opens and backgrounds its
    /// opener, whose animation frames and screenshots then stall; steps
    /// bring their page back first ([`crate::page::Page::ensure_front`]).
    pub front: Option<String>,
    /// Popup sessions closed because their document left the allowlist.
    pub closed_popups: HashSet<String>,
}

/// A subscription to raw events by method name (see [`Shared::tap`]).
struct Tap {
    id: u64,
    methods: &'static [&'static str],
    tx: mpsc::UnboundedSender<CdpEvent>,
}

/// Receives the tapped events; unsubscribes when dropped.
pub struct TapGuard {
    sh: Arc<Shared>,
    id: u64,
    /// The events, in wire order.
    pub rx: mpsc::UnboundedReceiver<CdpEvent>,
}

impl Drop for TapGuard {
    fn drop(&mut self) {
        self.sh
            .taps
            .lock()
            .expect("taps lock")
            .retain(|t| t.id != self.id);
    }
}

/// State shared by the session and the pump.
pub struct Shared {
    /// The connection.
    pub cdp: Arc<Cdp>,
    /// The allowlist.
    pub allow: Allowlist,
    /// Blocked requests per origin, from every layer (Fetch interception,
    /// the WebSocket guard and the network proxy).
    pub blocked: crate::proxy::BlockedSink,
    /// The state.
    pub state: Mutex<PageState>,
    /// Change counter for waiters.
    pub changed: watch::Sender<u64>,
    /// Session start.
    pub t0: Instant,
    taps: Mutex<Vec<Tap>>,
    next_tap: std::sync::atomic::AtomicU64,
    handled: watch::Sender<u64>,
}

impl Shared {
    /// Creates the shared state.
    pub fn new(cdp: Arc<Cdp>, allow: Allowlist, blocked: crate::proxy::BlockedSink) -> Arc<Shared> {
        let (changed, _) = watch::channel(0);
        Arc::new(Shared {
            cdp,
            allow,
            blocked,
            state: Mutex::new(PageState::default()),
            changed,
            t0: Instant::now(),
            taps: Mutex::new(Vec::new()),
            next_tap: std::sync::atomic::AtomicU64::new(1),
            handled: watch::channel(0).0,
        })
    }

    /// Subscribes to every event whose method is in `methods` (any
    /// session) from now on, until the guard is dropped.
    pub fn tap(self: &Arc<Self>, methods: &'static [&'static str]) -> TapGuard {
        let (tx, rx) = mpsc::unbounded_channel();
        let id = self
            .next_tap
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.taps
            .lock()
            .expect("taps lock")
            .push(Tap { id, methods, tx });
        TapGuard {
            sh: self.clone(),
            id,
            rx,
        }
    }

    fn forward(&self, ev: &CdpEvent) {
        let taps = self.taps.lock().expect("taps lock");
        for t in taps.iter() {
            if t.methods.contains(&ev.method.as_str()) {
                let _ = t.tx.send(ev.clone());
            }
        }
    }

    /// Waits until the pump has handled (and forwarded to taps) every event
    /// the connection received before this call. After a call returns, this
    /// makes every event sent before its answer visible. `false` on deadline.
    pub async fn caught_up(&self, deadline: qa_core::Deadline) -> bool {
        let target = self.cdp.events_received();
        let mut rx = self.handled.subscribe();
        loop {
            if *rx.borrow_and_update() >= target {
                return true;
            }
            if deadline.run(rx.changed()).await.is_none() {
                return false;
            }
        }
    }

    /// Every blocked request so far (a snapshot).
    pub fn blocked(&self) -> BlockedRequests {
        self.blocked.lock().expect("blocked lock").clone()
    }

    fn record_blocked(&self, origin: &str) {
        self.blocked.lock().expect("blocked lock").record(origin);
        self.bump();
    }

    /// Locks the state.
    pub fn st(&self) -> std::sync::MutexGuard<'_, PageState> {
        self.state.lock().expect("page state lock")
    }

    fn bump(&self) {
        self.changed.send_modify(|v| *v = v.wrapping_add(1));
    }

    fn now_ms(&self) -> u64 {
        self.t0.elapsed().as_millis() as u64
    }
}

/// Runs the pump until the connection closes.
pub fn spawn_pump(shared: Arc<Shared>, mut rx: mpsc::UnboundedReceiver<CdpEvent>) {
    tokio::spawn(async move {
        while let Some(ev) = rx.recv().await {
            shared.forward(&ev);
            handle(&shared, ev);
            shared.handled.send_modify(|v| *v += 1);
        }
        shared.st().crashed = true;
        shared.bump();
    });
}

fn bounded(s: &str, n: usize) -> String {
    if s.len() <= n {
        s.to_string()
    } else {
        let mut end = n;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &s[..end])
    }
}

fn push_bounded<T>(v: &mut Vec<T>, item: T, dropped: &mut u64) -> bool {
    if v.len() >= MAX_LOG_ENTRIES {
        *dropped += 1;
        false
    } else {
        v.push(item);
        true
    }
}

fn handle(sh: &Arc<Shared>, ev: CdpEvent) {
    let session = ev.session.clone().unwrap_or_default();
    let p = &ev.params;
    match ev.method.as_str() {
        "Fetch.requestPaused" => on_request_paused(sh, ev),
        "Target.attachedToTarget" => {
            if p["targetInfo"]["type"] == "page" {
                let mut st = sh.st();
                if st.main_session.is_some() {
                    // A new window or tab opens in front of its opener.
                    st.front = p["sessionId"].as_str().map(str::to_string);
                }
            }
            on_attached(sh, p.clone())
        }
        "Target.detachedFromTarget" => {
            if let Some(s) = p["sessionId"].as_str() {
                let mut st = sh.st();
                st.sessions.retain(|_, v| v != s);
                st.ready.remove(s);
                if st.front.as_deref() == Some(s) {
                    st.front = None;
                }
                drop(st);
                sh.bump();
            }
        }
        "Network.requestWillBeSent" => {
            let now = sh.now_ms();
            let id = p["requestId"].as_str().unwrap_or("").to_string();
            let mut st = sh.st();
            let key = (session.clone(), id.clone());
            if let Some(idx) = st.inflight.remove(&key) {
                // A redirect hop: close the previous entry.
                let status = p["redirectResponse"]["status"].as_u64().map(|s| s as u16);
                let e = &mut st.network[idx];
                e.status = status;
                e.duration_ms = Some(now.saturating_sub(e.start_ms));
            }
            let url = p["request"]["url"].as_str().unwrap_or("");
            let (clean, pq) = split_url(url);
            st.net_seq += 1;
            let seq = st.net_seq;
            let entry = NetEntry {
                id,
                session: session.clone(),
                method: p["request"]["method"].as_str().unwrap_or("GET").to_string(),
                url: clean,
                path_query: pq,
                kind: p["type"].as_str().unwrap_or("Other").to_string(),
                status: None,
                start_ms: now,
                duration_ms: None,
                failed: None,
                seq,
            };
            {
                let st = &mut *st;
                if push_bounded(&mut st.network, entry, &mut st.dropped) {
                    let idx = st.network.len() - 1;
                    st.inflight.insert(key, idx);
                }
            }
            drop(st);
            sh.bump();
        }
        "Network.responseReceived" => {
            let id = p["requestId"].as_str().unwrap_or("").to_string();
            let mut st = sh.st();
            if let Some(&idx) = st.inflight.get(&(session, id)) {
                st.network[idx].status = p["response"]["status"].as_u64().map(|s| s as u16);
            }
        }
        "Network.loadingFinished" | "Network.loadingFailed" => {
            let now = sh.now_ms();
            let id = p["requestId"].as_str().unwrap_or("").to_string();
            let mut st = sh.st();
            if let Some(idx) = st.inflight.remove(&(session, id)) {
                let e = &mut st.network[idx];
                e.duration_ms = Some(now.saturating_sub(e.start_ms));
                if ev.method == "Network.loadingFailed" {
                    e.failed = Some(bounded(p["errorText"].as_str().unwrap_or("failed"), 80));
                }
            }
            st.net_seq += 1;
            drop(st);
            sh.bump();
        }
        "Runtime.bindingCalled" if p["name"] == crate::containment::WS_BINDING => {
            let url = p["payload"].as_str().unwrap_or("");
            if let Decision::Block(o) = sh.allow.decide(url) {
                sh.record_blocked(&o);
            }
        }
        "Runtime.consoleAPICalled" => {
            let level = match p["type"].as_str().unwrap_or("log") {
                "error" | "assert" => "error",
                "warning" => "warning",
                "info" => "info",
                "debug" => "debug",
                _ => "log",
            };
            let text: Vec<String> = p["args"]
                .as_array()
                .map(|a| a.iter().map(remote_object_text).collect())
                .unwrap_or_default();
            push_console(sh, level, &text.join(" "), "console", false);
        }
        "Runtime.exceptionThrown" => {
            let d = &p["exceptionDetails"];
            let text = d["exception"]["description"]
                .as_str()
                .or(d["text"].as_str())
                .unwrap_or("uncaught exception");
            push_console(sh, "error", text, "exception", false);
        }
        "Log.entryAdded" => {
            let e = &p["entry"];
            let text = e["text"].as_str().unwrap_or("");
            let containment = text.contains("ERR_BLOCKED_BY_CLIENT");
            let level = match e["level"].as_str().unwrap_or("info") {
                "verbose" => "debug",
                l => l,
            };
            push_console(
                sh,
                level,
                text,
                e["source"].as_str().unwrap_or("other"),
                containment,
            );
        }
        "Page.loadEventFired" => {
            let mut st = sh.st();
            *st.loads.entry(session.clone()).or_insert(0) += 1;
            if st.main_session.as_deref() == Some(session.as_str()) {
                st.load_seq += 1;
            }
            drop(st);
            sh.bump();
        }
        "Runtime.executionContextCreated" => {
            let c = &p["context"];
            let aux = &c["auxData"];
            if let (Some(id), Some(frame), true) = (
                c["id"].as_i64(),
                aux["frameId"].as_str(),
                aux["isDefault"].as_bool().unwrap_or(false),
            ) {
                sh.st()
                    .frame_contexts
                    .insert((session, frame.to_string()), id);
                sh.bump();
            }
        }
        "Runtime.executionContextDestroyed" => {
            if let Some(id) = p["executionContextId"].as_i64() {
                sh.st()
                    .frame_contexts
                    .retain(|(s, _), c| !(*s == session && *c == id));
            }
        }
        "Runtime.executionContextsCleared" => {
            sh.st().frame_contexts.retain(|(s, _), _| *s != session);
        }
        "Page.javascriptDialogOpening" => on_dialog(sh, &session, p),
        "Inspector.targetCrashed" => {
            let mut st = sh.st();
            if st.main_session.as_deref() == Some(session.as_str()) {
                st.crashed = true;
                st.observations.push("the page crashed".into());
            }
            drop(st);
            sh.bump();
        }
        _ => {}
    }
}

/// Whether a console entry counts for `assertNoConsoleErrors`: errors from
/// the console API and uncaught exceptions; failed resource loads (source
/// `network`, e.g. the automatic favicon request) and ui-qa's own blocking
/// are logged but not counted.
pub fn counts_as_error(e: &ConsoleEntry) -> bool {
    e.level == "error" && !e.containment && e.source != "network"
}

fn push_console(sh: &Shared, level: &str, text: &str, source: &str, containment: bool) {
    let e = ConsoleEntry {
        at_ms: sh.now_ms(),
        level: level.to_string(),
        text: bounded(text, 2000),
        source: source.to_string(),
        containment,
    };
    {
        let mut guard = sh.st();
        let st = &mut *guard;
        push_bounded(&mut st.console, e, &mut st.dropped);
    }
    sh.bump();
}

fn remote_object_text(o: &Value) -> String {
    match &o["value"] {
        Value::String(s) => s.clone(),
        Value::Null => o["description"]
            .as_str()
            .or(o["unserializableValue"].as_str())
            .unwrap_or(o["type"].as_str().unwrap_or(""))
            .to_string(),
        v => v.to_string(),
    }
}

/// `(origin + path, path + query)`.
pub fn split_url(url: &str) -> (String, String) {
    match url::Url::parse(url) {
        Ok(u) if u.has_host() => {
            let pq = match u.query() {
                Some(q) => format!("{}?{q}", u.path()),
                None => u.path().to_string(),
            };
            (
                format!("{}{}", crate::containment::origin_of(&u), u.path()),
                pq,
            )
        }
        Ok(u) => (format!("{}:", u.scheme()), String::new()),
        Err(_) => (String::new(), String::new()),
    }
}

fn on_request_paused(sh: &Arc<Shared>, ev: CdpEvent) {
    let p = ev.params;
    let id = p["requestId"].as_str().unwrap_or("").to_string();
    let url = p["request"]["url"].as_str().unwrap_or("");
    let decision = sh.allow.decide(url);
    let (method, params) = match decision {
        Decision::Allow => ("Fetch.continueRequest", json!({ "requestId": id })),
        Decision::Block(origin) => {
            if p["resourceType"] == "Document" {
                let s = ev.session.clone().unwrap_or_default();
                *sh.st().blocked_documents.entry(s.clone()).or_insert(0) += 1;
                close_blocked_popup(sh, &s, p["frameId"].as_str().unwrap_or(""), &origin);
            }
            sh.record_blocked(&origin);
            (
                "Fetch.failRequest",
                json!({ "requestId": id, "errorReason": "BlockedByClient" }),
            )
        }
    };
    let cdp = sh.cdp.clone();
    tokio::spawn(async move {
        let _ = cdp.call(ev.session.as_deref(), method, params).await;
    });
}

/// A popup window (any page but the main one) whose own document was
/// blocked by containment is closed, so that it cannot hold the front or
/// keep a blank window around; the opener stays fully usable. Reported
/// once per popup.
fn close_blocked_popup(sh: &Arc<Shared>, session: &str, frame_id: &str, origin: &str) {
    let target = {
        let mut st = sh.st();
        let is_popup_page = st.session_type.get(session).map(String::as_str) == Some("page")
            && st.main_session.as_deref() != Some(session);
        let target = st
            .sessions
            .iter()
            .find(|(_, s)| s.as_str() == session)
            .map(|(t, _)| t.clone());
        // Only the popup's own document (its main frame id is its target
        // id); a blocked iframe inside it leaves the popup open.
        match target {
            Some(t) if is_popup_page && t == frame_id => {
                if !st.closed_popups.insert(session.to_string()) {
                    return;
                }
                st.observations.push(format!(
                    "a popup window to {origin} was blocked by containment and closed"
                ));
                t
            }
            _ => return,
        }
    };
    sh.bump();
    let cdp = sh.cdp.clone();
    tokio::spawn(async move {
        let _ = cdp
            .call(None, "Target.closeTarget", json!({ "targetId": target }))
            .await;
    });
}

/// Containment setup of one attached target: Fetch interception first, then
/// the other domains, auto-attach to its children, and only then resume it.
fn on_attached(sh: &Arc<Shared>, p: Value) {
    let sh = sh.clone();
    tokio::spawn(async move {
        let sid = p["sessionId"].as_str().unwrap_or("").to_string();
        let info = &p["targetInfo"];
        let tid = info["targetId"].as_str().unwrap_or("").to_string();
        let kind = info["type"].as_str().unwrap_or("other").to_string();
        {
            let mut st = sh.st();
            st.sessions.insert(tid.clone(), sid.clone());
            st.session_type.insert(sid.clone(), kind.clone());
        }
        let cdp = &sh.cdp;
        let s = Some(sid.as_str());
        let fetch = cdp
            .call(
                s,
                "Fetch.enable",
                json!({ "patterns": [ { "urlPattern": "*", "requestStage": "Request" } ] }),
            )
            .await;
        // Chromium 156 has no Fetch domain in dedicated workers: they run,
        // contained by the network proxy every connection goes through
        // (crate::proxy). Any other target we cannot intercept in is closed
        // (fail closed, defence in depth).
        if fetch.is_err() && !matches!(kind.as_str(), "browser" | "worker") {
            sh.st().observations.push(format!(
                "a {kind} target could not be contained and was closed"
            ));
            let _ = cdp
                .call(None, "Target.closeTarget", json!({ "targetId": tid }))
                .await;
            return;
        }
        let pageish = matches!(kind.as_str(), "page" | "iframe");
        let attach = json!({ "autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true });
        let ws = sh.allow.websocket_block_params();
        let guard = sh.allow.websocket_guard_script();
        let (a, b, c, d) = tokio::join!(
            cdp.call(s, "Network.enable", json!({})),
            cdp.call(s, "Runtime.enable", json!({})),
            cdp.call(s, "Target.setAutoAttach", attach),
            async {
                if pageish {
                    let _ = cdp.call(s, "Page.enable", json!({})).await;
                    let _ = cdp.call(s, "Log.enable", json!({})).await;
                }
            },
        );
        let _ = (b, c, d);
        if a.is_ok() {
            let (x, y) = tokio::join!(
                cdp.call(
                    s,
                    "Network.setBypassServiceWorker",
                    json!({ "bypass": true })
                ),
                cdp.call(s, "Network.setBlockedURLs", ws),
            );
            let _ = x;
            if y.is_err() {
                // Older protocol: block every WebSocket.
                let _ = cdp
                    .call(
                        s,
                        "Network.setBlockedURLs",
                        json!({ "urls": ["ws://*", "wss://*"] }),
                    )
                    .await;
            }
        }
        // Fetch never sees WebSocket handshakes and Network.setBlockedURLs
        // does not stop them on Chromium 156: guard the constructor in every
        // page, frame and worker before its first script runs.
        let _ = cdp
            .call(
                s,
                "Runtime.addBinding",
                json!({ "name": crate::containment::WS_BINDING }),
            )
            .await;
        if pageish {
            let _ = cdp
                .call(
                    s,
                    "Page.addScriptToEvaluateOnNewDocument",
                    json!({ "source": guard, "runImmediately": true }),
                )
                .await;
        }
        let _ = cdp
            .call(s, "Runtime.evaluate", json!({ "expression": guard }))
            .await;
        if p["waitingForDebugger"].as_bool().unwrap_or(false) {
            let _ = cdp
                .call(s, "Runtime.runIfWaitingForDebugger", json!({}))
                .await;
        }
        {
            let mut st = sh.st();
            if !st.sessions.values().any(|v| *v == sid) {
                // It detached (closed) while it was being set up.
                drop(st);
                sh.bump();
                return;
            }
            st.ready.insert(sid.clone());
            if kind == "page" && st.main_session.is_none() {
                st.main_session = Some(sid.clone());
                st.front = Some(sid.clone());
            } else if kind == "page" {
                st.observations
                    .push("a popup window opened (its requests are contained too)".into());
            }
        }
        sh.bump();
    });
}

fn on_dialog(sh: &Arc<Shared>, session: &str, p: &Value) {
    let kind = p["type"].as_str().unwrap_or("alert").to_string();
    let message = p["message"].as_str().unwrap_or("").to_string();
    let mut st = sh.st();
    st.seq += 1;
    let seq = st.seq;
    let armed = st.armed_dialog.take();
    let (accept, prompt, expected) = match &armed {
        Some(a) => (a.accept.unwrap_or(false), a.prompt_text.clone(), true),
        None => {
            st.observations
                .push(format!("dismissed an unexpected {kind} dialog"));
            (false, None, false)
        }
    };
    st.dialogs.push(DialogSeen {
        kind,
        message,
        expected,
        seq,
    });
    drop(st);
    sh.bump();
    let cdp = sh.cdp.clone();
    let session = session.to_string();
    tokio::spawn(async move {
        let mut params = json!({ "accept": accept });
        if let Some(t) = prompt {
            params["promptText"] = Value::String(t);
        }
        let _ = cdp
            .call(Some(&session), "Page.handleJavaScriptDialog", params)
            .await;
    });
}
