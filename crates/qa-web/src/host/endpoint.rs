//! A browser ui-qa did not start: its DevTools endpoint as the flow names
//! it (`target.browser.connect`). Only that endpoint is ever contacted —
//! nothing is scanned or guessed. An `http://` endpoint names the browser's
//! WebSocket at `/json/version`; that answer is read with a bound on time
//! and size, and its WebSocket is used at the host and port the flow named
//! (with the flow's query, such as a token, when the answer has none).

use crate::codes::WebCode;
use qa_core::{Deadline, DriverError, MissingCapability};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The largest `/json/version` answer read (a real one is under 1 KiB).
const MAX_VERSION_ANSWER: usize = 64 << 10;

/// The endpoint as notes and errors show it: scheme, host and port only
/// (a path or query may carry a token).
pub fn shown(connect: &str) -> String {
    match url::Url::parse(connect) {
        Ok(u) => format!(
            "{}://{}{}",
            u.scheme(),
            u.host_str().unwrap_or(""),
            u.port().map(|p| format!(":{p}")).unwrap_or_default()
        ),
        Err(_) => "the endpoint".into(),
    }
}

/// BLOCKED: the endpoint cannot be reached or used.
pub fn unreachable(connect: &str, why: &str) -> DriverError {
    DriverError::blocked(
        WebCode::ConnectUnreachable,
        MissingCapability {
            id: "browser-endpoint".into(),
            reason: format!(
                "the browser at {} did not answer as a DevTools endpoint: {why}",
                shown(connect)
            ),
            remediation: "start the browser with --remote-debugging-port=PORT (and --remote-debugging-address=127.0.0.1), or start the browser service, then run the flow again; target.browser.connect names http://HOST:PORT or the ws:// URL it prints".into(),
        },
    )
}

/// The WebSocket URL to open for `connect`.
pub async fn websocket_url(connect: &str, deadline: Deadline) -> Result<String, DriverError> {
    websocket_url_noting(connect, deadline, &mut Vec::new()).await
}

/// [`websocket_url`], adding to `ports` the local port of the connection it
/// made, if it made one (a port ui-qa watches tells its own from others').
pub async fn websocket_url_noting(
    connect: &str,
    deadline: Deadline,
    ports: &mut Vec<u16>,
) -> Result<String, DriverError> {
    let given = url::Url::parse(connect).map_err(|e| unreachable(connect, &e.to_string()))?;
    match given.scheme() {
        "ws" | "wss" => return Ok(connect.to_string()),
        "http" | "https" => {}
        other => {
            return Err(unreachable(
                connect,
                &format!("{other}:// is not a DevTools endpoint"),
            ))
        }
    }
    let within = deadline.remaining().min(Duration::from_secs(10));
    let body = tokio::time::timeout(within, get_version(&given, ports))
        .await
        .map_err(|_| {
            unreachable(
                connect,
                &format!(
                    "no answer to /json/version within {} ms",
                    within.as_millis()
                ),
            )
        })?
        .map_err(|e| unreachable(connect, &e))?;
    let v: serde_json::Value = serde_json::from_slice(&body)
        .map_err(|_| unreachable(connect, "/json/version is not JSON"))?;
    let ws = v
        .get("webSocketDebuggerUrl")
        .and_then(|w| w.as_str())
        .ok_or_else(|| unreachable(connect, "/json/version names no webSocketDebuggerUrl"))?;
    let mut ws = url::Url::parse(ws)
        .map_err(|_| unreachable(connect, "/json/version names no usable WebSocket"))?;
    if !matches!(ws.scheme(), "ws" | "wss") {
        return Err(unreachable(
            connect,
            "/json/version names no ws:// or wss:// WebSocket",
        ));
    }
    // TLS as the flow asked (a browser behind a TLS front names its own
    // plain WebSocket), at the flow's host and port, never another the
    // answer names.
    let _ = ws.set_scheme(match given.scheme() {
        "https" => "wss",
        _ => "ws",
    });
    let _ = ws.set_host(given.host_str());
    let _ = ws.set_port(given.port_or_known_default());
    if ws.query().is_none() {
        ws.set_query(given.query());
    }
    Ok(ws.to_string())
}

/// `GET /json/version` (HTTP/1.1, one request, the connection closed
/// after); the body of a 200 answer.
async fn get_version(given: &url::Url, ports: &mut Vec<u16>) -> Result<Vec<u8>, String> {
    let host = given.host_str().ok_or("no host")?;
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let port = given.port_or_known_default().unwrap_or(80);
    let tcp = TcpStream::connect((bare, port))
        .await
        .map_err(|e| format!("cannot connect: {e}"))?;
    if let Ok(a) = tcp.local_addr() {
        ports.push(a.port());
    }
    if given.scheme() != "https" {
        let mut tcp = tcp;
        return exchange(&mut tcp, given, host, port).await;
    }
    // The platform's trusted roots; the certificate must name the host.
    let tls = tokio_native_tls::native_tls::TlsConnector::new()
        .map_err(|e| format!("no TLS here: {e}"))?;
    let mut s = tokio_native_tls::TlsConnector::from(tls)
        .connect(bare, tcp)
        .await
        .map_err(|e| format!("the TLS handshake failed: {e}"))?;
    exchange(&mut s, given, host, port).await
}

/// Asks `/json/version` over `s` and reads the answer's body.
async fn exchange<S>(s: &mut S, given: &url::Url, host: &str, port: u16) -> Result<Vec<u8>, String>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let query = given.query().map(|q| format!("?{q}")).unwrap_or_default();
    let req = format!(
        "GET /json/version{query} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
    );
    s.write_all(req.as_bytes())
        .await
        .map_err(|e| format!("cannot send: {e}"))?;
    // Read until the answer is whole: Chromium keeps the connection open
    // whatever the request asks, so the end is the body's length.
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let body = &buf[end + 4..];
            let length = head.lines().find_map(|l| {
                l.strip_prefix("content-length:")
                    .and_then(|v| v.trim().parse::<usize>().ok())
            });
            let chunked = head
                .lines()
                .any(|l| l.starts_with("transfer-encoding:") && l.contains("chunked"));
            let whole = match length {
                Some(n) => body.len() >= n,
                None if chunked => body.windows(5).any(|w| w == b"0\r\n\r\n"),
                None => false,
            };
            if whole {
                let status = head.split_whitespace().nth(1).unwrap_or("").to_string();
                if status != "200" {
                    return Err(format!("/json/version answered HTTP {status}"));
                }
                return Ok(match length {
                    Some(n) => body[..n].to_vec(),
                    None => unchunk(body),
                });
            }
        }
        if buf.len() > MAX_VERSION_ANSWER {
            return Err("/json/version answered more than 64 KiB".into());
        }
        let n = s
            .read(&mut chunk)
            .await
            .map_err(|e| format!("cannot read: {e}"))?;
        if n == 0 {
            return Err("the connection closed before /json/version was answered".into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// A chunked body, joined (a malformed one ends where it breaks).
fn unchunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(i) = b.windows(2).position(|w| w == b"\r\n") {
        let size = std::str::from_utf8(&b[..i])
            .ok()
            .and_then(|l| usize::from_str_radix(l.split(';').next().unwrap_or("").trim(), 16).ok());
        let Some(n) = size.filter(|n| *n > 0) else {
            break;
        };
        let start = i + 2;
        let Some(chunk) = b.get(start..start + n) else {
            break;
        };
        out.extend_from_slice(chunk);
        b = b.get(start + n + 2..).unwrap_or(&[]);
    }
    out
}

/// Whether the connection's far end is on this machine.
pub fn is_loopback(peer: std::net::SocketAddr) -> bool {
    peer.ip().is_loopback()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_keeps_no_path_or_query() {
        assert_eq!(
            shown("ws://127.0.0.1:3000/chromium?token=s3cret"),
            "ws://127.0.0.1:3000"
        );
        assert_eq!(shown("http://localhost:9222"), "http://localhost:9222");
        assert_eq!(shown("not a url ?token=x"), "the endpoint");
    }

    /// A one-connection server that answers `answer` to whatever it is
    /// asked (and keeps the connection open, as Chromium does).
    fn serve_once(answer: Vec<u8>) -> u16 {
        use std::io::{Read, Write};
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        std::thread::spawn(move || {
            if let Ok((mut s, _)) = l.accept() {
                let mut buf = [0u8; 4096];
                let _ = s.read(&mut buf);
                let _ = s.write_all(&answer);
                std::thread::sleep(std::time::Duration::from_secs(30));
            }
        });
        port
    }

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    /// An endpoint that names a WebSocket on another host is used at the
    /// host and port the flow named, never the one it names; the flow's
    /// query (a token) goes along when the answer has none.
    #[test]
    fn the_websocket_is_opened_where_the_flow_said() {
        let body = br#"{"webSocketDebuggerUrl":"ws://evil.example:1/devtools/browser/abc"}"#;
        let mut answer = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        answer.extend_from_slice(body);
        let port = serve_once(answer);
        let connect = format!("http://127.0.0.1:{port}/?token=t0k");
        let ws = rt()
            .block_on(websocket_url(&connect, Deadline::after_ms(20_000)))
            .unwrap();
        assert_eq!(
            ws,
            format!("ws://127.0.0.1:{port}/devtools/browser/abc?token=t0k")
        );
    }

    /// An endless or oversized answer, and one that never comes, end in a
    /// BLOCKED error within their bounds.
    #[test]
    fn a_hostile_endpoint_cannot_hold_the_run() {
        let mut huge = b"HTTP/1.1 200 OK\r\nContent-Length: 999999999\r\n\r\n".to_vec();
        huge.extend(std::iter::repeat_n(b'x', 200 << 10));
        let port = serve_once(huge);
        let e = rt()
            .block_on(websocket_url(
                &format!("http://127.0.0.1:{port}"),
                Deadline::after_ms(20_000),
            ))
            .unwrap_err();
        assert!(e.message.contains("64 KiB"), "{}", e.message);
        assert!(e.is_blocked());
        // Accepts, never answers: the flow's deadline ends it.
        let port = serve_once(Vec::new());
        let t = std::time::Instant::now();
        let e = rt()
            .block_on(websocket_url(
                &format!("http://127.0.0.1:{port}"),
                Deadline::after_ms(1_000),
            ))
            .unwrap_err();
        assert!(e.message.contains("no answer"), "{}", e.message);
        assert!(t.elapsed() < std::time::Duration::from_secs(25));
    }

    #[test]
    fn chunked_bodies_are_joined() {
        assert_eq!(unchunk(b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"), b"abcde");
        assert_eq!(unchunk(b"zz\r\nabc"), b"");
    }
}
