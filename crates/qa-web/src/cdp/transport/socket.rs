//! DevTools over a WebSocket: a browser ui-qa did not start (its
//! `--remote-debugging-port`, a remote browser service). One thread of its
//! own runs the socket on a small runtime: a reader hands each message to
//! the same dispatch the pipe uses, a writer drains the bounded queue, so a
//! peer that stops reading never blocks a caller. The connection and its
//! handshake are bounded; the socket closes when the connection is closed
//! or dropped (a browser context created with `disposeOnDetach` then goes
//! with it, even when the run fails).

use super::{handle_message, Book, Cdp, CdpEvent, Outbox, Pending, Queue, MAX_MESSAGE, MAX_QUEUED};
use futures_util::{SinkExt, StreamExt};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;

/// A connection made: the transport, its events, and the two ends of the
/// TCP connection (ours, the browser's).
pub struct Connected {
    /// The transport.
    pub cdp: Arc<Cdp>,
    /// Its events.
    pub events: mpsc::UnboundedReceiver<CdpEvent>,
    /// Our end of the connection.
    pub local: SocketAddr,
    /// The browser's (or the service's) end.
    pub peer: SocketAddr,
}

impl Cdp {
    /// Speaks DevTools over the WebSocket at `url` (`ws://` or `wss://`), connecting and
    /// shaking hands within `within`. `Err` says why, without the URL (it
    /// may carry a token).
    pub async fn over_websocket(url: &str, within: Duration) -> Result<Connected, String> {
        let (ready_tx, ready_rx) = oneshot::channel();
        let url = url.to_string();
        let pending: Pending = Arc::new(Mutex::new(Book::default()));
        let open = Arc::new(AtomicBool::new(true));
        let events_in = Arc::new(AtomicU64::new(0));
        let waiting = Arc::new(AtomicUsize::new(0));
        let (out_tx, out_rx) = mpsc::channel::<Vec<u8>>(MAX_QUEUED);
        let (ev_tx, ev_rx) = mpsc::unbounded_channel();
        let cdp = Arc::new(Cdp {
            writer: Mutex::new(Some(Outbox {
                tx: Queue::Socket(out_tx),
                waiting: waiting.clone(),
            })),
            pending: pending.clone(),
            next_id: AtomicU64::new(1),
            open: open.clone(),
            events_in: events_in.clone(),
        });
        std::thread::Builder::new()
            .name("qa-web-cdp-socket".into())
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(format!("no runtime for the connection: {e}")));
                        return;
                    }
                };
                rt.block_on(async move {
                    let ws = match tokio::time::timeout(within, connect(&url)).await {
                        Ok(Ok(ws)) => ws,
                        Ok(Err(e)) => {
                            let _ = ready_tx.send(Err(e));
                            return;
                        }
                        Err(_) => {
                            let _ = ready_tx.send(Err(format!(
                                "no connection within {} ms",
                                within.as_millis()
                            )));
                            return;
                        }
                    };
                    let (local, peer) = (ws.1, ws.2);
                    let (mut sink, mut stream) = ws.0.split();
                    if ready_tx.send(Ok((local, peer))).is_err() {
                        return;
                    }
                    let reader = {
                        let pending = pending.clone();
                        async move {
                            while let Some(Ok(m)) = stream.next().await {
                                match m {
                                    Message::Text(t) => {
                                        handle_message(t.as_bytes(), &pending, &ev_tx, &events_in)
                                    }
                                    Message::Binary(b) => {
                                        handle_message(&b, &pending, &ev_tx, &events_in)
                                    }
                                    Message::Close(_) => break,
                                    _ => {}
                                }
                            }
                        }
                    };
                    let writer = async move {
                        let mut out_rx = out_rx;
                        while let Some(m) = out_rx.recv().await {
                            let len = m.len();
                            let text = String::from_utf8(m).unwrap_or_default();
                            let ok = sink.send(Message::text(text)).await.is_ok();
                            waiting.fetch_sub(len, Ordering::SeqCst);
                            if !ok {
                                return;
                            }
                        }
                        // Closed by us: say goodbye, briefly.
                        let _ = tokio::time::timeout(Duration::from_secs(2), sink.close()).await;
                    };
                    tokio::select! {
                        _ = reader => {}
                        _ = writer => {}
                    }
                    open.store(false, Ordering::SeqCst);
                    pending.lock().expect("pending lock").waiters.clear();
                });
            })
            .map_err(|e| e.to_string())?;
        let ends = tokio::time::timeout(within + Duration::from_secs(1), ready_rx)
            .await
            .map_err(|_| format!("no connection within {} ms", within.as_millis()))?
            .map_err(|_| "the connection's thread ended".to_string())??;
        Ok(Connected {
            cdp,
            events: ev_rx,
            local: ends.0,
            peer: ends.1,
        })
    }
}

type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<TcpStream>>;

/// Connects and shakes hands; the socket and the connection's two ends.
async fn connect(url: &str) -> Result<(Socket, SocketAddr, SocketAddr), String> {
    let u = url::Url::parse(url).map_err(|e| format!("not a WebSocket URL: {e}"))?;
    if !matches!(u.scheme(), "ws" | "wss") {
        return Err(format!("{}:// is not a WebSocket", u.scheme()));
    }
    let host = u.host_str().ok_or("the endpoint names no host")?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port = u.port_or_known_default().unwrap_or(80);
    let tcp = TcpStream::connect((host, port))
        .await
        .map_err(|e| format!("cannot connect to {host}:{port}: {e}"))?;
    let _ = tcp.set_nodelay(true);
    let local = tcp.local_addr().map_err(|e| e.to_string())?;
    let peer = tcp.peer_addr().map_err(|e| e.to_string())?;
    let config = WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE));
    // The parsed URL: its path is never empty (`ws://h:p?token=…` asks for
    // `/?token=…`; a request line without a path is refused). `wss://`: TLS
    // with the platform's trusted roots, the certificate checked against
    // the URL's host.
    let (ws, _) =
        tokio_tungstenite::client_async_tls_with_config(u.as_str(), tcp, Some(config), None)
            .await
            .map_err(|e| match e {
                tokio_tungstenite::tungstenite::Error::Http(r) => format!(
                    "the endpoint refused the WebSocket (HTTP {})",
                    r.status().as_u16()
                ),
                tokio_tungstenite::tungstenite::Error::Tls(t) => {
                    format!("the TLS handshake failed: {t}")
                }
                other => format!("the WebSocket handshake failed: {other}"),
            })?;
    Ok((ws, local, peer))
}
