//! The CDP seam: one WebSocket connection to the browser endpoint, raw JSON
//! calls (`call(session, method, params) -> Value`) and one stream of events.
//!
//! Every protocol call the driver makes goes through [`Cdp::call`], so the
//! transport can be swapped without touching the logic above it (see
//! `docs/decisions/0001-cdp-transport.md`). Sessions are flat
//! (`Target.setAutoAttach{flatten:true}`): a call or event carries its
//! `sessionId` at the top level.
//!
//! I/O runs on two plain threads (a reader blocked on the socket and writes
//! done under a mutex on a cloned socket), never on the tokio runtime.

use serde_json::{json, Value};
use std::collections::HashMap;
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tungstenite::protocol::{Role, WebSocketConfig};
use tungstenite::{Message, WebSocket};

/// One protocol event.
#[derive(Debug, Clone)]
pub struct CdpEvent {
    /// The flat session it came from (`None`: the browser session).
    pub session: Option<String>,
    /// Method name, e.g. `Fetch.requestPaused`.
    pub method: String,
    /// Event parameters.
    pub params: Value,
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
    /// No answer in time.
    Timeout,
}

impl std::fmt::Display for CdpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CdpError::Protocol { code, message } => write!(f, "protocol error {code}: {message}"),
            CdpError::Closed => f.write_str("the DevTools connection is closed"),
            CdpError::Timeout => f.write_str("no answer from the browser in time"),
        }
    }
}

impl std::error::Error for CdpError {}

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Value, CdpError>>>>>;

/// The connection.
pub struct Cdp {
    writer: Mutex<WebSocket<TcpStream>>,
    pending: Pending,
    next_id: AtomicU64,
    open: Arc<AtomicBool>,
    shutdown: TcpStream,
    events_in: Arc<AtomicU64>,
}

impl std::fmt::Debug for Cdp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cdp").finish_non_exhaustive()
    }
}

fn config() -> WebSocketConfig {
    WebSocketConfig::default()
        .max_frame_size(None)
        .max_message_size(Some(512 << 20))
}

impl Cdp {
    /// Connects to a browser WebSocket endpoint (`ws://127.0.0.1:PORT/devtools/browser/ID`).
    /// Blocking: call it from `spawn_blocking`. Events go to the returned receiver.
    pub fn connect(
        ws_url: &str,
        timeout: Duration,
    ) -> Result<(Arc<Cdp>, mpsc::UnboundedReceiver<CdpEvent>), String> {
        let url = url::Url::parse(ws_url).map_err(|e| format!("bad DevTools URL: {e}"))?;
        let host = url.host_str().ok_or("DevTools URL has no host")?;
        let port = url.port().ok_or("DevTools URL has no port")?;
        let addr = format!("{host}:{port}");
        let sock_addr = std::net::ToSocketAddrs::to_socket_addrs(&addr)
            .map_err(|e| e.to_string())?
            .next()
            .ok_or("DevTools address does not resolve")?;
        let stream = TcpStream::connect_timeout(&sock_addr, timeout).map_err(|e| e.to_string())?;
        stream.set_nodelay(true).ok();
        stream.set_read_timeout(Some(timeout)).ok();
        let (reader, _resp) =
            tungstenite::client::client_with_config(ws_url, stream, Some(config()))
                .map_err(|e| format!("DevTools WebSocket handshake failed: {e}"))?;
        reader.get_ref().set_read_timeout(None).ok();
        let write_stream = reader.get_ref().try_clone().map_err(|e| e.to_string())?;
        let shutdown = reader.get_ref().try_clone().map_err(|e| e.to_string())?;
        let writer = WebSocket::from_raw_socket(write_stream, Role::Client, Some(config()));
        let pending: Pending = Arc::new(Mutex::new(HashMap::new()));
        let open = Arc::new(AtomicBool::new(true));
        let (tx, rx) = mpsc::unbounded_channel();
        let events_in = Arc::new(AtomicU64::new(0));
        let counter = events_in.clone();
        let cdp = Arc::new(Cdp {
            writer: Mutex::new(writer),
            pending: pending.clone(),
            next_id: AtomicU64::new(1),
            open: open.clone(),
            shutdown,
            events_in,
        });
        std::thread::Builder::new()
            .name("qa-web-cdp-reader".into())
            .spawn(move || read_loop(reader, pending, open, tx, counter))
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
    /// returns the raw `result`. Bounded by `timeout`.
    pub async fn call_with_timeout(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, CdpError> {
        if !self.is_open() {
            return Err(CdpError::Closed);
        }
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = session {
            msg["sessionId"] = Value::String(s.to_string());
        }
        let (tx, rx) = oneshot::channel();
        self.pending.lock().expect("pending lock").insert(id, tx);
        let text = msg.to_string();
        let sent = {
            let mut w = self.writer.lock().expect("writer lock");
            w.send(Message::text(text))
        };
        if sent.is_err() {
            self.pending.lock().expect("pending lock").remove(&id);
            self.open.store(false, Ordering::SeqCst);
            return Err(CdpError::Closed);
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(r)) => r,
            Ok(Err(_)) => Err(CdpError::Closed),
            Err(_) => {
                self.pending.lock().expect("pending lock").remove(&id);
                Err(CdpError::Timeout)
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

    /// Closes the connection (the reader thread ends).
    pub fn close(&self) {
        self.open.store(false, Ordering::SeqCst);
        if let Ok(mut w) = self.writer.lock() {
            let _ = w.close(None);
            let _ = w.flush();
        }
        let _ = self.shutdown.shutdown(std::net::Shutdown::Both);
    }
}

fn read_loop(
    mut ws: WebSocket<TcpStream>,
    pending: Pending,
    open: Arc<AtomicBool>,
    events: mpsc::UnboundedSender<CdpEvent>,
    events_in: Arc<AtomicU64>,
) {
    loop {
        let msg = match ws.read() {
            Ok(m) => m,
            Err(_) => break,
        };
        let text = match msg {
            Message::Text(t) => t,
            Message::Close(_) => break,
            _ => continue,
        };
        let Ok(mut v) = serde_json::from_str::<Value>(text.as_str()) else {
            continue;
        };
        if let Some(id) = v.get("id").and_then(Value::as_u64) {
            let tx = pending.lock().expect("pending lock").remove(&id);
            if let Some(tx) = tx {
                let r = if let Some(e) = v.get("error") {
                    Err(CdpError::Protocol {
                        code: e.get("code").and_then(Value::as_i64).unwrap_or(0),
                        message: e
                            .get("message")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                    })
                } else {
                    Ok(v.get_mut("result").map(Value::take).unwrap_or(Value::Null))
                };
                let _ = tx.send(r);
            }
        } else if let Some(method) = v.get("method").and_then(Value::as_str) {
            let ev = CdpEvent {
                session: v
                    .get("sessionId")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                method: method.to_string(),
                params: v.get_mut("params").map(Value::take).unwrap_or(Value::Null),
            };
            events_in.fetch_add(1, Ordering::SeqCst);
            let _ = events.send(ev);
        }
    }
    open.store(false, Ordering::SeqCst);
    // Fail every waiting call at once.
    pending.lock().expect("pending lock").clear();
}
