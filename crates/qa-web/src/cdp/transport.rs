//! The CDP transport: the browser's DevTools pipe (`--remote-debugging-pipe`:
//! JSON messages ended by a NUL byte, written to the browser's fd 3 and read
//! from its fd 4), raw JSON calls (`call(session, method, params) -> Value`)
//! and one stream of events. A pipe has no address: no other process can
//! reach the browser through it (a DevTools TCP port is reachable by every
//! local user).
//!
//! Every protocol call the driver makes ends in [`Cdp::call_with_timeout`]
//! (typed commands too, see `super::commands`), so the transport can be
//! swapped without touching the logic above it (see
//! `docs/decisions/0001-cdp-transport.md`). Sessions are flat
//! (`Target.setAutoAttach{flatten:true}`): a call or event carries its
//! `sessionId` at the top level.
//!
//! I/O runs on plain threads, never on the tokio runtime: a reader blocked
//! on the pipe, and a writer fed by a bounded queue. A call only queues its
//! message, so a browser that stops reading (SIGSTOPped, hung) can never
//! block the caller: the call waits for its answer under its own bound, and
//! once the queue is full further calls fail at once
//! ([`CdpError::Stalled`]).

mod socket;

use super::events::{AttachedToTarget, DetachedFromTarget, Event, TargetCrashed};
use crate::codes::WebCode;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// One protocol event.
#[derive(Debug, Clone)]
pub struct CdpEvent {
    /// The flat session it came from (`None`: the browser session).
    pub session: Option<String>,
    /// Method name, e.g. `Fetch.requestPaused`.
    pub method: String,
    /// The event, when it is one the driver handles.
    pub event: Option<Event>,
    /// Event parameters.
    pub params: Value,
}

impl CdpEvent {
    /// The parameters as `T`; parameters of an unexpected shape read as
    /// `T::default()` (every field of the protocol is optional to us).
    pub fn params<T: DeserializeOwned + Default>(&self) -> T {
        T::deserialize(&self.params).unwrap_or_default()
    }
}

/// A failed call.
#[derive(Debug, Clone)]
pub enum CdpError {
    /// The browser answered with a protocol error.
    Protocol {
        /// Protocol error code.
        code: i64,
        /// Protocol error message.
        message: String,
    },
    /// The connection is gone.
    Closed,
    /// The target the call was addressed to detached, closed or crashed
    /// before it answered (or before the call was sent).
    TargetClosed {
        /// The method that was called.
        method: String,
        /// The target's kind (`page`, `iframe`, `worker`, …).
        kind: String,
        /// The target crashed (rather than closed or detached).
        crashed: bool,
    },
    /// The browser has not read what was already sent to it (the queue
    /// toward it is full): the call was not sent.
    Stalled {
        /// The method that was not sent.
        method: String,
        /// The target's kind (`browser` for the browser session).
        kind: String,
        /// Bytes waiting for the browser to read them.
        waiting: usize,
    },
    /// No answer before the call's bound.
    Timeout {
        /// The method that was called.
        method: String,
        /// The target's kind (`browser` for the browser session).
        kind: String,
        /// The bound that passed, in ms.
        after_ms: u64,
    },
}

impl CdpError {
    /// The stable error code for a [`qa_core::DriverError`] made from this.
    pub fn web_code(&self) -> WebCode {
        match self {
            CdpError::Protocol { .. } => WebCode::CdpProtocol,
            CdpError::Closed => WebCode::CdpClosed,
            CdpError::TargetClosed { crashed: true, .. } => WebCode::CdpTargetCrashed,
            CdpError::TargetClosed { .. } => WebCode::CdpTargetClosed,
            CdpError::Stalled { .. } | CdpError::Timeout { .. } => WebCode::CdpTimeout,
        }
    }

    /// [`CdpError::web_code`] as its wire string.
    pub fn code(&self) -> &'static str {
        self.web_code().as_str()
    }

    /// Whether the addressed target is gone (closed, detached or crashed).
    pub fn target_gone(&self) -> bool {
        matches!(self, CdpError::TargetClosed { .. })
    }
}

impl std::fmt::Display for CdpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CdpError::Protocol { code, message } => write!(f, "protocol error {code}: {message}"),
            CdpError::Closed => f.write_str("the DevTools connection is closed"),
            CdpError::TargetClosed {
                method,
                kind,
                crashed,
            } => write!(
                f,
                "the {kind} target {} before it answered {method}",
                if *crashed { "crashed" } else { "closed" }
            ),
            CdpError::Stalled {
                method,
                kind,
                waiting,
            } => write!(
                f,
                "the browser has not read the {waiting} bytes already sent to it (stopped or hung); {method} to the {kind} target was not sent"
            ),
            CdpError::Timeout {
                method,
                kind,
                after_ms,
            } => write!(
                f,
                "no answer to {method} from the {kind} target within {after_ms} ms"
            ),
        }
    }
}

impl std::error::Error for CdpError {}

impl From<CdpError> for qa_core::DriverError {
    fn from(e: CdpError) -> Self {
        qa_core::DriverError::new(e.web_code(), e.to_string())
    }
}

/// A call waiting for its answer.
struct Waiter {
    session: Option<String>,
    method: String,
    tx: oneshot::Sender<Result<Box<RawValue>, CdpError>>,
}

/// What the reader knows of the flat sessions: their kinds, and which are
/// gone (calls to those fail at once).
#[derive(Default)]
struct Sessions {
    kinds: HashMap<String, String>,
    /// Target id → session id (for `Target.targetCrashed`).
    targets: HashMap<String, String>,
    /// Sessions that detached or crashed → crashed?
    gone: HashMap<String, bool>,
}

/// Bound on remembered gone sessions (oldest forgotten first is not needed:
/// a run attaches far fewer targets than this).
const MAX_GONE: usize = 10_000;

#[derive(Default)]
struct Book {
    waiters: HashMap<u64, Waiter>,
    sessions: Sessions,
}

type Pending = Arc<Mutex<Book>>;

/// The queue toward the writer, which owns the browser's input (its fd 3,
/// or the WebSocket's sending half).
struct Outbox {
    tx: Queue,
    /// Bytes queued or being written.
    waiting: Arc<AtomicUsize>,
}

/// The channel toward the writer: a thread's for the pipe, a task's for a
/// WebSocket. Both refuse at once when full.
enum Queue {
    Pipe(SyncSender<Vec<u8>>),
    Socket(mpsc::Sender<Vec<u8>>),
}

/// Messages the queue toward the browser holds at most.
const MAX_QUEUED: usize = 4096;

/// Bytes the queue toward the browser holds at most (uploads are the
/// largest messages a flow sends).
const MAX_QUEUED_BYTES: usize = 256 << 20;

/// The connection.
pub struct Cdp {
    /// The queue toward the browser's input; `None` once closed.
    writer: Mutex<Option<Outbox>>,
    pending: Pending,
    next_id: AtomicU64,
    open: Arc<AtomicBool>,
    events_in: Arc<AtomicU64>,
}

/// The largest message read from the browser (a full-page screenshot in
/// base64 is the largest the driver asks for).
const MAX_MESSAGE: usize = 512 << 20;

impl std::fmt::Debug for Cdp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cdp").finish_non_exhaustive()
    }
}

impl Cdp {
    /// Speaks DevTools over the pipe of a browser started with
    /// `--remote-debugging-pipe`: `to` is the write end of its fd 3, `from`
    /// the read end of its fd 4. Events go to the returned receiver.
    pub fn over_pipe(
        to: File,
        from: File,
    ) -> Result<(Arc<Cdp>, mpsc::UnboundedReceiver<CdpEvent>), String> {
        let pending: Pending = Arc::new(Mutex::new(Book::default()));
        let open = Arc::new(AtomicBool::new(true));
        let (tx, rx) = mpsc::unbounded_channel();
        let events_in = Arc::new(AtomicU64::new(0));
        let counter = events_in.clone();
        let (out_tx, out_rx) = sync_channel(MAX_QUEUED);
        let waiting = Arc::new(AtomicUsize::new(0));
        let outbox = Outbox {
            tx: Queue::Pipe(out_tx),
            waiting: waiting.clone(),
        };
        let cdp = Arc::new(Cdp {
            writer: Mutex::new(Some(outbox)),
            pending: pending.clone(),
            next_id: AtomicU64::new(1),
            open: open.clone(),
            events_in,
        });
        std::thread::Builder::new()
            .name("qa-web-cdp-reader".into())
            .spawn(move || read_loop(BufReader::new(from), pending, open, tx, counter))
            .map_err(|e| e.to_string())?;
        let (pending, open) = (cdp.pending.clone(), cdp.open.clone());
        std::thread::Builder::new()
            .name("qa-web-cdp-writer".into())
            .spawn(move || write_loop(to, out_rx, waiting, pending, open))
            .map_err(|e| e.to_string())?;
        Ok((cdp, rx))
    }

    /// How many events the reader has handed to the event channel so far.
    /// Every event that arrived before a call's answer is counted by the
    /// time that call returns (one reader thread, in wire order).
    pub fn events_received(&self) -> u64 {
        self.events_in.load(Ordering::SeqCst)
    }

    /// Whether the connection is still open.
    pub fn is_open(&self) -> bool {
        self.open.load(Ordering::SeqCst)
    }

    /// Calls `method` with `params` on `session` (`None`: the browser) and
    /// returns the `result` as a JSON value. Bounded by `timeout`.
    pub async fn call_with_timeout(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, CdpError> {
        let raw = self.call_raw(session, method, params, timeout).await?;
        serde_json::from_str(raw.get()).map_err(|e| CdpError::Protocol {
            code: -32700,
            message: format!("unreadable answer to {method}: {e}"),
        })
    }

    /// [`Cdp::call_with_timeout`] with the `result` as its JSON text (`null`
    /// when the answer had none): a typed answer is read from the text
    /// itself, never built as a whole JSON tree first (an accessibility
    /// answer can hold tens of thousands of nodes).
    pub async fn call_raw(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Box<RawValue>, CdpError> {
        if !self.is_open() {
            return Err(CdpError::Closed);
        }
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = session {
            msg["sessionId"] = Value::String(s.to_string());
        }
        let (tx, rx) = oneshot::channel();
        let kind = {
            let mut book = self.pending.lock().expect("pending lock");
            if let Some(s) = session {
                if let Some(&crashed) = book.sessions.gone.get(s) {
                    return Err(CdpError::TargetClosed {
                        method: method.to_string(),
                        kind: book.sessions.kind_of(Some(s)),
                        crashed,
                    });
                }
            }
            book.waiters.insert(
                id,
                Waiter {
                    session: session.map(str::to_string),
                    method: method.to_string(),
                    tx,
                },
            );
            book.sessions.kind_of(session)
        };
        let bytes = msg.to_string().into_bytes();
        let sent = match self.writer.lock().expect("writer lock").as_ref() {
            Some(out) => out.queue(bytes),
            None => Err(Unsent::Closed),
        };
        if let Err(why) = sent {
            self.pending
                .lock()
                .expect("pending lock")
                .waiters
                .remove(&id);
            return Err(match why {
                Unsent::Closed => {
                    self.open.store(false, Ordering::SeqCst);
                    CdpError::Closed
                }
                Unsent::Full(waiting) => CdpError::Stalled {
                    method: method.to_string(),
                    kind,
                    waiting,
                },
            });
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(r)) => r,
            Ok(Err(_)) => Err(CdpError::Closed),
            Err(_) => {
                self.pending
                    .lock()
                    .expect("pending lock")
                    .waiters
                    .remove(&id);
                Err(CdpError::Timeout {
                    method: method.to_string(),
                    kind,
                    after_ms: timeout.as_millis() as u64,
                })
            }
        }
    }

    /// [`Cdp::call_with_timeout`] with a 30 s bound.
    pub async fn call(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, CdpError> {
        self.call_with_timeout(session, method, params, Duration::from_secs(30))
            .await
    }

    /// Closes the connection: the browser's input ends once what is queued
    /// was written (the reader thread ends when the browser's output does).
    pub fn close(&self) {
        self.open.store(false, Ordering::SeqCst);
        if let Ok(mut w) = self.writer.lock() {
            w.take();
        }
    }
}

/// Why a message was not queued.
enum Unsent {
    /// The connection is closed.
    Closed,
    /// The queue is full; this many bytes wait to be read.
    Full(usize),
}

impl Outbox {
    /// Queues one message without blocking.
    fn queue(&self, bytes: Vec<u8>) -> Result<(), Unsent> {
        let len = bytes.len();
        let before = self.waiting.fetch_add(len, Ordering::SeqCst);
        if before > 0 && before + len > MAX_QUEUED_BYTES {
            self.waiting.fetch_sub(len, Ordering::SeqCst);
            return Err(Unsent::Full(before));
        }
        let sent = match &self.tx {
            Queue::Pipe(tx) => tx.try_send(bytes).map_err(|e| match e {
                TrySendError::Full(_) => false,
                TrySendError::Disconnected(_) => true,
            }),
            Queue::Socket(tx) => tx.try_send(bytes).map_err(|e| match e {
                mpsc::error::TrySendError::Full(_) => false,
                mpsc::error::TrySendError::Closed(_) => true,
            }),
        };
        match sent {
            Ok(()) => Ok(()),
            Err(closed) => {
                self.waiting.fetch_sub(len, Ordering::SeqCst);
                Err(if closed {
                    Unsent::Closed
                } else {
                    Unsent::Full(self.waiting.load(Ordering::SeqCst))
                })
            }
        }
    }
}

/// Writes queued messages to the browser's input, one at a time; the only
/// place that may block on the browser. A failed write closes the
/// connection and fails every waiting call.
fn write_loop(
    mut to: File,
    queue: Receiver<Vec<u8>>,
    waiting: Arc<AtomicUsize>,
    pending: Pending,
    open: Arc<AtomicBool>,
) {
    for msg in queue {
        let ok = to
            .write_all(&msg)
            .and_then(|()| to.write_all(&[0]))
            .and_then(|()| to.flush())
            .is_ok();
        waiting.fetch_sub(msg.len(), Ordering::SeqCst);
        if !ok {
            open.store(false, Ordering::SeqCst);
            pending.lock().expect("pending lock").waiters.clear();
            return;
        }
    }
}

impl Sessions {
    fn kind_of(&self, session: Option<&str>) -> String {
        match session {
            None => "browser".into(),
            Some(s) => self.kinds.get(s).cloned().unwrap_or_else(|| "page".into()),
        }
    }
}

impl Book {
    /// Marks `session` gone and fails every call waiting on it at once.
    fn gone(&mut self, session: &str, crashed: bool) {
        if self.sessions.gone.len() < MAX_GONE {
            let e = self
                .sessions
                .gone
                .entry(session.to_string())
                .or_insert(false);
            *e |= crashed;
        }
        let kind = self.sessions.kind_of(Some(session));
        let ids: Vec<u64> = self
            .waiters
            .iter()
            .filter(|(_, w)| w.session.as_deref() == Some(session))
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            if let Some(w) = self.waiters.remove(&id) {
                let _ = w.tx.send(Err(CdpError::TargetClosed {
                    method: w.method,
                    kind: kind.clone(),
                    crashed,
                }));
            }
        }
    }

    /// Keeps the session table current from one event (before the event is
    /// handed on, so a call made after it sees the change).
    fn track(&mut self, ev: &CdpEvent) {
        let session = ev.session.as_deref();
        match ev.event {
            Some(Event::TargetAttachedToTarget) => {
                let a: AttachedToTarget = ev.params();
                if !a.session_id.is_empty() {
                    let kind = if a.target_info.kind.is_empty() {
                        "other".to_string()
                    } else {
                        a.target_info.kind
                    };
                    self.sessions.kinds.insert(a.session_id.clone(), kind);
                    if !a.target_info.target_id.is_empty() {
                        self.sessions
                            .targets
                            .insert(a.target_info.target_id, a.session_id.clone());
                    }
                    self.sessions.gone.remove(&a.session_id);
                }
            }
            Some(Event::TargetDetachedFromTarget) => {
                let d: DetachedFromTarget = ev.params();
                if !d.session_id.is_empty() {
                    self.gone(&d.session_id, false);
                }
            }
            Some(Event::TargetTargetCrashed) => {
                let c: TargetCrashed = ev.params();
                if let Some(s) = self.sessions.targets.get(&c.target_id).cloned() {
                    self.gone(&s, true);
                }
            }
            Some(Event::InspectorTargetCrashed) => {
                if let Some(s) = session {
                    self.gone(s, true);
                }
            }
            Some(Event::InspectorDetached) => {
                if let Some(s) = session {
                    self.gone(s, false);
                }
            }
            _ => {}
        }
    }
}

/// One message from the browser, its `result` and `params` left as text.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Envelope<'a> {
    id: Option<u64>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    error: Option<Value>,
    method: Option<&'a str>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
    session_id: Option<String>,
}

/// JSON `null`, as an answer without a `result`.
fn null() -> Box<RawValue> {
    RawValue::from_string("null".into()).expect("null is JSON")
}

/// The next NUL-ended message, without its NUL; `None` at the end of the
/// pipe, on a read error or past [`MAX_MESSAGE`].
fn next_message(r: &mut impl BufRead, buf: &mut Vec<u8>) -> Option<()> {
    buf.clear();
    let n = std::io::Read::take(&mut *r, MAX_MESSAGE as u64 + 1)
        .read_until(0, buf)
        .ok()?;
    if n == 0 || buf.last() != Some(&0) {
        return None;
    }
    buf.pop();
    Some(())
}

fn read_loop(
    mut from: BufReader<File>,
    pending: Pending,
    open: Arc<AtomicBool>,
    events: mpsc::UnboundedSender<CdpEvent>,
    events_in: Arc<AtomicU64>,
) {
    let mut buf = Vec::new();
    while next_message(&mut from, &mut buf).is_some() {
        handle_message(&buf, &pending, &events, &events_in);
    }
    open.store(false, Ordering::SeqCst);
    // Fail every waiting call at once.
    pending.lock().expect("pending lock").waiters.clear();
}

/// One message from the browser: an answer goes to its waiting call, an
/// event to the event channel (after the session table saw it).
fn handle_message(
    buf: &[u8],
    pending: &Pending,
    events: &mpsc::UnboundedSender<CdpEvent>,
    events_in: &AtomicU64,
) {
    // Only the envelope is parsed here: a command's answer stays JSON text
    // until its caller reads it as the type it expects.
    let Ok(m) = serde_json::from_slice::<Envelope>(buf) else {
        return;
    };
    if let Some(id) = m.id {
        let w = pending.lock().expect("pending lock").waiters.remove(&id);
        if let Some(w) = w {
            let r = if let Some(e) = &m.error {
                let message = e.get("message").and_then(Value::as_str).unwrap_or("");
                if w.session.is_some() && message.contains("Session with given id not found") {
                    let kind = pending
                        .lock()
                        .expect("pending lock")
                        .sessions
                        .kind_of(w.session.as_deref());
                    let _ = w.tx.send(Err(CdpError::TargetClosed {
                        method: w.method,
                        kind,
                        crashed: false,
                    }));
                    return;
                }
                Err(CdpError::Protocol {
                    code: e.get("code").and_then(Value::as_i64).unwrap_or(0),
                    message: message.to_string(),
                })
            } else {
                Ok(m.result.map(RawValue::to_owned).unwrap_or_else(null))
            };
            let _ = w.tx.send(r);
        }
    } else if let Some(method) = m.method {
        let ev = CdpEvent {
            session: m.session_id,
            method: method.to_string(),
            event: Event::parse(method),
            params: m
                .params
                .and_then(|p| serde_json::from_str(p.get()).ok())
                .unwrap_or(Value::Null),
        };
        pending.lock().expect("pending lock").track(&ev);
        events_in.fetch_add(1, Ordering::SeqCst);
        let _ = events.send(ev);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A call to a browser that stopped reading returns under its own bound
    /// (it never blocks in a write to the pipe), and a full queue refuses
    /// further calls at once.
    #[cfg(unix)]
    #[test]
    fn a_browser_that_stops_reading_never_blocks_a_call() {
        use std::os::fd::OwnedFd;
        // The browser's ends are held and never read or written: a stopped
        // browser.
        let (browser_in, to) = std::io::pipe().expect("pipe");
        let (from, browser_out) = std::io::pipe().expect("pipe");
        let (cdp, _events) = Cdp::over_pipe(
            File::from(OwnedFd::from(to)),
            File::from(OwnedFd::from(from)),
        )
        .expect("transport");
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build()
                .expect("runtime");
            // Each message is far larger than a pipe's buffer.
            let text = "x".repeat(1 << 20);
            let mut outcomes = Vec::new();
            for _ in 0..3 {
                outcomes.push(rt.block_on(cdp.call_with_timeout(
                    None,
                    "Input.insertText",
                    json!({ "text": text }),
                    Duration::from_millis(100),
                )));
            }
            let _ = done_tx.send(outcomes);
        });
        let outcomes = done_rx
            .recv_timeout(Duration::from_secs(120))
            .expect("a call blocked on a browser that does not read");
        for o in outcomes {
            assert!(matches!(o, Err(CdpError::Timeout { .. })), "{o:?}");
        }
        drop((browser_in, browser_out));
    }

    /// The queue toward the browser refuses a message once it holds
    /// [`MAX_QUEUED`] messages or [`MAX_QUEUED_BYTES`] bytes, and accepts
    /// again once they were written.
    #[test]
    fn a_full_queue_refuses_without_waiting() {
        let (tx, rx) = sync_channel(MAX_QUEUED);
        let out = Outbox {
            tx: Queue::Pipe(tx),
            waiting: Arc::new(AtomicUsize::new(0)),
        };
        for _ in 0..MAX_QUEUED {
            assert!(out.queue(vec![b'x'; 10]).is_ok());
        }
        assert!(matches!(
            out.queue(vec![b'x'; 10]),
            Err(Unsent::Full(w)) if w == MAX_QUEUED * 10
        ));
        // Drained (as the writer does), one large message fits, a second
        // that would pass the byte bound does not.
        while let Ok(m) = rx.try_recv() {
            out.waiting.fetch_sub(m.len(), Ordering::SeqCst);
        }
        assert!(out.queue(vec![b'x'; MAX_QUEUED_BYTES - 5]).is_ok());
        assert!(matches!(out.queue(vec![b'x'; 10]), Err(Unsent::Full(_))));
        drop(rx);
        assert!(out.queue(vec![b'x'; 1]).is_err());
    }
}
