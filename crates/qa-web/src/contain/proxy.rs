//! The network layer of containment: an owned loopback forward proxy.
//!
//! Chromium is launched with `--proxy-server=http://127.0.0.1:<port>` and
//! `--proxy-bypass-list=<-loopback>` (which removes Chromium's implicit
//! loopback bypass), so every http(s)/ws(s) connection of every target —
//! pages, frames, dedicated/shared/service workers, the browser process
//! itself — arrives here, whatever the in-browser layers (Fetch
//! interception, the WebSocket guard) saw or missed. The proxy applies the
//! same exact-origin [`Allowlist`]:
//!
//! - `CONNECT host:port` is a blind tunnel (no TLS interception). Chromium
//!   156 tunnels `https`, `wss` **and plain `ws`** through `CONNECT`, so a
//!   tunnel is allowed when `https://host:port` or `http://host:port` is an
//!   allowed origin (the same rule [`Allowlist::decide`] applies to `wss`/`ws`).
//!   A refused tunnel is answered `403` and counted under the authority
//!   `host:port` (the proxy cannot tell which of the three schemes it was).
//! - Absolute-form `http://` requests are checked against `http://host:port`
//!   (`ws://host:port` when they carry `Upgrade: websocket`), then sent to
//!   that host:port in origin form with `Proxy-*` headers dropped and
//!   `Connection: close` forced on both request and response, so a client
//!   connection carries exactly one checked request; the bytes that follow
//!   only ever go to the host:port that was checked.
//!
//! Bounded: 64 KiB heads, 10 s upstream connect, 30 s to send a head, 5 min
//! idle per spliced connection, 512 concurrent connections. Dropping the
//! [`Proxy`] ends the listener and every connection.

use super::allowlist::{
    browser_service, Allowlist, BlockedRequests, BlockedSink, Decision, TUNNEL_KEY,
};
use super::peer::from_user;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

/// Largest request or response head accepted.
pub const MAX_HEAD: usize = 64 * 1024;
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const IDLE_TIMEOUT: Duration = Duration::from_secs(300);
const MAX_CONNECTIONS: usize = 512;
const BLOCKED_BODY: &str = "blocked by ui-qa origin containment\n";

/// The running proxy; dropping it stops the listener and every connection.
pub struct Proxy {
    port: u16,
    own: BlockedSink,
    task: JoinHandle<()>,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy").field("port", &self.port).finish()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

struct Ctx {
    /// The user whose connections are served (`None`: this process's).
    browser_uid: Option<u32>,
    allow: Allowlist,
    sink: BlockedSink,
    own: BlockedSink,
}

impl Ctx {
    /// Counts a blocked attempt. Chromium's own service traffic (only this
    /// proxy ever sees it) is kept out of the run's per-step counts and
    /// reported once, at close, as the browser's.
    fn block(&self, key: &str) {
        if !browser_service(key) {
            self.sink.lock().expect("blocked lock").record(key);
        }
        self.own.lock().expect("blocked lock").record(key);
    }
}

impl Proxy {
    /// Binds 127.0.0.1 on a free port and serves until dropped, to
    /// connections from processes of `browser_uid` (`None`: this
    /// process's user) only. Blocked attempts are recorded in `sink` (and
    /// in [`Proxy::blocked_here`]).
    pub async fn start(
        allow: Allowlist,
        sink: BlockedSink,
        browser_uid: Option<u32>,
    ) -> std::io::Result<Proxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let own = BlockedSink::default();
        let cx = Arc::new(Ctx {
            browser_uid,
            allow,
            sink,
            own: own.clone(),
        });
        let task = tokio::spawn(accept_loop(listener, cx));
        Ok(Proxy { port, own, task })
    }

    /// The listening port.
    #[cfg(test)]
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:<port>`, for `--proxy-server`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// What this layer blocked (requests the in-browser layers let out).
    pub fn blocked_here(&self) -> BlockedRequests {
        self.own.lock().expect("blocked lock").clone()
    }
}

async fn accept_loop(listener: TcpListener, cx: Arc<Ctx>) {
    // Owned by this task: aborting it drops the set, which aborts every
    // connection task.
    let mut conns: JoinSet<()> = JoinSet::new();
    loop {
        tokio::select! {
            r = listener.accept() => match r {
                Ok((s, peer)) if conns.len() < MAX_CONNECTIONS => {
                    let cx = cx.clone();
                    conns.spawn(async move {
                        // Only the run's browser (its user's processes)
                        // may use the proxy; anyone else is hung up on.
                        if s.local_addr().is_ok_and(|l| from_user(l, peer, cx.browser_uid)) {
                            handle(s, &cx).await;
                        }
                    });
                }
                Ok(_) => {} // over the cap: dropped (Chromium retries)
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
}

/// Reads from `s` into `buf` until `buf` holds a complete head; returns the
/// head's length (through the blank line). `Ok(None)`: closed first.
async fn read_head(s: &mut TcpStream, buf: &mut Vec<u8>) -> Result<Option<usize>, u16> {
    let mut scanned = 0;
    loop {
        if let Some(i) = buf[scanned..].windows(4).position(|w| w == b"\r\n\r\n") {
            return Ok(Some(scanned + i + 4));
        }
        scanned = buf.len().saturating_sub(3);
        if buf.len() >= MAX_HEAD {
            return Err(431);
        }
        let mut chunk = [0u8; 8192];
        match s.read(&mut chunk).await {
            Ok(0) | Err(_) => return Ok(None),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// A parsed head: the first line's three parts and the header lines (raw).
struct Head<'a> {
    parts: [&'a str; 3],
    headers: Vec<&'a [u8]>,
}

fn parse_head(head: &[u8]) -> Option<Head<'_>> {
    let mut lines = head
        .strip_suffix(b"\r\n\r\n")?
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let first = std::str::from_utf8(lines.next()?).ok()?;
    let mut it = first.splitn(3, ' ');
    let parts = [it.next()?, it.next()?, it.next()?];
    let headers: Vec<&[u8]> = lines.collect();
    if headers.iter().any(|h| !h.contains(&b':')) {
        return None;
    }
    Some(Head { parts, headers })
}

fn header_name(line: &[u8]) -> String {
    let end = line.iter().position(|&b| b == b':').unwrap_or(line.len());
    String::from_utf8_lossy(&line[..end])
        .trim()
        .to_ascii_lowercase()
}

fn header_value(line: &[u8]) -> String {
    let start = line
        .iter()
        .position(|&b| b == b':')
        .map_or(line.len(), |i| i + 1);
    String::from_utf8_lossy(&line[start..]).trim().to_string()
}

async fn respond(s: &mut TcpStream, code: u16, body: &str) {
    let reason = match code {
        400 => "Bad Request",
        403 => "Forbidden",
        408 => "Request Timeout",
        431 => "Request Header Fields Too Large",
        _ => "Bad Gateway",
    };
    let msg = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = s.write_all(msg.as_bytes()).await;
    let _ = s.shutdown().await;
}

async fn handle(mut client: TcpStream, cx: &Ctx) {
    let _ = client.set_nodelay(true);
    let mut buf = Vec::with_capacity(4096);
    let end = match tokio::time::timeout(HEAD_TIMEOUT, read_head(&mut client, &mut buf)).await {
        Err(_) => return respond(&mut client, 408, "").await,
        Ok(Err(code)) => return respond(&mut client, code, "").await,
        Ok(Ok(None)) => return, // an unused pre-connected socket
        Ok(Ok(Some(end))) => end,
    };
    let rest = buf[end..].to_vec();
    let Some(head) = parse_head(&buf[..end]) else {
        return respond(&mut client, 400, "").await;
    };
    if head.parts[0].eq_ignore_ascii_case("CONNECT") {
        connect(client, cx, head.parts[1], &rest).await
    } else {
        forward(client, cx, &head, &rest).await
    }
}

/// The `host[:port]` of an absolute URL's authority, and where it ends.
fn authority(target: &str, scheme_len: usize) -> (&str, usize) {
    let after = &target[scheme_len..];
    let end = after.find(['/', '?', '#']).unwrap_or(after.len());
    (&after[..end], scheme_len + end)
}

fn upstream_addr(u: &url::Url) -> Option<(String, u16)> {
    let host = u.host_str()?.trim_start_matches('[').trim_end_matches(']');
    Some((host.to_string(), u.port_or_known_default()?))
}

async fn dial(host: &str, port: u16) -> Option<TcpStream> {
    match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect((host, port))).await {
        Ok(Ok(s)) => {
            let _ = s.set_nodelay(true);
            Some(s)
        }
        _ => None,
    }
}

async fn connect(mut client: TcpStream, cx: &Ctx, target: &str, rest: &[u8]) {
    let clean = !target.is_empty() && !target.contains(['/', '@', '?', '#', '\\']);
    let parsed = url::Url::parse(&format!("https://{target}/")).ok();
    let (Some(u), true) = (parsed, clean) else {
        return respond(&mut client, 400, "").await;
    };
    let Some((host, port)) = upstream_addr(&u) else {
        return respond(&mut client, 400, "").await;
    };
    let hp = format!("{}:{port}", u.host_str().unwrap_or(""));
    // https/wss need an allowed https origin; Chromium's ws:// tunnels need
    // an allowed http origin (decide() maps ws → http).
    let ok = [format!("https://{hp}/"), format!("ws://{hp}/")]
        .iter()
        .any(|x| cx.allow.decide(x) == Decision::Allow);
    if !ok {
        cx.block(&format!("{}{hp}", TUNNEL_KEY));
        return respond(&mut client, 403, BLOCKED_BODY).await;
    }
    let Some(mut up) = dial(&host, port).await else {
        return respond(&mut client, 502, "").await;
    };
    if client
        .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        .await
        .is_err()
        || up.write_all(rest).await.is_err()
    {
        return;
    }
    splice(client, up).await;
}

async fn forward(mut client: TcpStream, cx: &Ctx, head: &Head<'_>, rest: &[u8]) {
    let [method, target, version] = head.parts;
    let lower = target.get(..7).map(str::to_ascii_lowercase);
    if lower.as_deref() != Some("http://") {
        // Not a proxy request (origin-form or another scheme): refuse.
        if let Decision::Block(o) = cx.allow.decide(target) {
            if target.contains("://") {
                cx.block(&o);
                return respond(&mut client, 403, BLOCKED_BODY).await;
            }
        }
        return respond(&mut client, 400, "").await;
    }
    let (auth, path_at) = authority(target, 7);
    let upgrade = head.headers.iter().any(|h| {
        header_name(h) == "upgrade" && header_value(h).to_ascii_lowercase().contains("websocket")
    });
    let scheme = if upgrade { "ws" } else { "http" };
    let Ok(u) = url::Url::parse(&format!("{scheme}://{auth}/")) else {
        return respond(&mut client, 400, "").await;
    };
    if let Decision::Block(o) = cx.allow.decide(u.as_str()) {
        cx.block(&o);
        return respond(&mut client, 403, BLOCKED_BODY).await;
    }
    let Some((host, port)) = upstream_addr(&u) else {
        return respond(&mut client, 400, "").await;
    };
    let path = match &target[path_at..] {
        "" => "/".to_string(),
        p if p.starts_with('/') => p.to_string(),
        p => format!("/{p}"),
    };
    let path = path.split('#').next().unwrap_or("/");
    let mut out = format!("{method} {path} {version}\r\n").into_bytes();
    for h in &head.headers {
        let n = header_name(h);
        let hop = matches!(n.as_str(), "proxy-connection" | "proxy-authorization")
            || (!upgrade && matches!(n.as_str(), "connection" | "keep-alive"));
        if !hop {
            out.extend_from_slice(h);
            out.extend_from_slice(b"\r\n");
        }
    }
    if !upgrade {
        out.extend_from_slice(b"Connection: close\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(rest);
    let Some(mut up) = dial(&host, port).await else {
        return respond(&mut client, 502, "").await;
    };
    if up.write_all(&out).await.is_err() {
        return respond(&mut client, 502, "").await;
    }
    if !upgrade && !relay_response_head(&mut up, &mut client).await {
        return;
    }
    splice(client, up).await;
}

/// Copies the upstream response head(s) to the client with `Connection:
/// close` on the final one, so Chromium never reuses this connection for a
/// request that was not checked. Interim `1xx` heads pass unchanged.
async fn relay_response_head(up: &mut TcpStream, client: &mut TcpStream) -> bool {
    let mut buf = Vec::with_capacity(4096);
    loop {
        let end = match tokio::time::timeout(IDLE_TIMEOUT, read_head(up, &mut buf)).await {
            Ok(Ok(Some(end))) => end,
            Ok(Ok(None)) if buf.is_empty() => {
                respond(client, 502, "").await;
                return false;
            }
            _ => {
                // Not a well-formed head: pass through what came, then splice.
                return client.write_all(&buf).await.is_ok();
            }
        };
        let Some(h) = parse_head(&buf[..end]) else {
            return client.write_all(&buf).await.is_ok();
        };
        let status: u16 = h.parts[1].parse().unwrap_or(0);
        if (100..200).contains(&status) && status != 101 {
            if client.write_all(&buf[..end]).await.is_err() {
                return false;
            }
            buf.drain(..end);
            continue;
        }
        let mut out = format!("{} {} {}\r\n", h.parts[0], h.parts[1], h.parts[2]).into_bytes();
        for line in &h.headers {
            if !matches!(
                header_name(line).as_str(),
                "connection" | "keep-alive" | "proxy-connection"
            ) {
                out.extend_from_slice(line);
                out.extend_from_slice(b"\r\n");
            }
        }
        out.extend_from_slice(b"Connection: close\r\n\r\n");
        out.extend_from_slice(&buf[end..]);
        return client.write_all(&out).await.is_ok();
    }
}

/// Copies bytes both ways; an EOF on one side half-closes the other; ends
/// when both are closed, on an error, or after [`IDLE_TIMEOUT`] of silence.
async fn splice(a: TcpStream, b: TcpStream) {
    let (mut ar, mut aw) = a.into_split();
    let (mut br, mut bw) = b.into_split();
    let mut x = vec![0u8; 16 * 1024];
    let mut y = vec![0u8; 16 * 1024];
    let (mut a_open, mut b_open) = (true, true);
    while a_open || b_open {
        tokio::select! {
            r = ar.read(&mut x), if a_open => match r {
                Ok(0) | Err(_) => { a_open = false; let _ = bw.shutdown().await; }
                Ok(n) => if bw.write_all(&x[..n]).await.is_err() { return },
            },
            r = br.read(&mut y), if b_open => match r {
                Ok(0) | Err(_) => { b_open = false; let _ = aw.shutdown().await; }
                Ok(n) => if aw.write_all(&y[..n]).await.is_err() { return },
            },
            _ = tokio::time::sleep(IDLE_TIMEOUT) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A one-shot upstream that records what it received and answers `reply`.
    async fn upstream(reply: &'static [u8]) -> (u16, Arc<Mutex<Vec<u8>>>) {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = l.local_addr().unwrap().port();
        let got = Arc::new(Mutex::new(Vec::new()));
        let g = got.clone();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = l.accept().await {
                let mut buf = Vec::new();
                let end = read_head(&mut s, &mut buf).await.ok().flatten();
                g.lock().unwrap().extend_from_slice(&buf);
                let _ = s.write_all(reply).await;
                if !reply.is_empty() {
                    continue; // a plain HTTP exchange: close after the reply
                }
                let _ = s.write_all(&buf[end.unwrap_or(buf.len())..]).await;
                // Echo whatever else arrives (tunnels), until EOF.
                let mut b = [0u8; 1024];
                while let Ok(n) = s.read(&mut b).await {
                    if n == 0 || s.write_all(&b[..n]).await.is_err() {
                        break;
                    }
                }
            }
        });
        (port, got)
    }

    async fn exchange(proxy: u16, send: &[u8]) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", proxy)).await.unwrap();
        s.write_all(send).await.unwrap();
        let mut out = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut out)).await;
        String::from_utf8_lossy(&out).into_owned()
    }

    async fn proxy_for(origins: &[String]) -> (Proxy, BlockedSink) {
        let sink = BlockedSink::default();
        let p = Proxy::start(Allowlist::new(origins.to_vec()), sink.clone(), None)
            .await
            .unwrap();
        (p, sink)
    }

    const OK: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nhi";

    #[tokio::test]
    async fn allowed_request_is_forwarded_in_origin_form_with_connection_close() {
        let (port, got) = upstream(OK).await;
        let (p, sink) = proxy_for(&[format!("http://127.0.0.1:{port}")]).await;
        let req = format!("GET http://127.0.0.1:{port}/a?b=1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nProxy-Connection: keep-alive\r\nProxy-Authorization: x\r\nConnection: keep-alive\r\n\r\n");
        let resp = exchange(p.port(), req.as_bytes()).await;
        assert!(resp.starts_with("HTTP/1.1 200 OK\r\n"), "{resp}");
        assert!(resp.contains("Connection: close\r\n") && !resp.contains("keep-alive"));
        assert!(resp.ends_with("hi"));
        let sent = String::from_utf8(got.lock().unwrap().clone()).unwrap();
        assert!(sent.starts_with("GET /a?b=1 HTTP/1.1\r\n"), "{sent}");
        assert!(sent.contains("Connection: close\r\n"));
        assert!(!sent.to_ascii_lowercase().contains("proxy-"));
        assert!(!sent.contains("keep-alive"));
        assert_eq!(sink.lock().unwrap().total(), 0);
    }

    #[tokio::test]
    async fn disallowed_request_and_websocket_upgrade_are_refused_and_counted() {
        let (port, got) = upstream(OK).await;
        let (p, sink) = proxy_for(&["http://127.0.0.1:1".to_string()]).await;
        let get = format!("GET http://127.0.0.1:{port}/x HTTP/1.1\r\nHost: h\r\n\r\n");
        assert!(exchange(p.port(), get.as_bytes())
            .await
            .starts_with("HTTP/1.1 403"));
        let ws = format!("GET http://127.0.0.1:{port}/ws HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n");
        assert!(exchange(p.port(), ws.as_bytes())
            .await
            .starts_with("HTTP/1.1 403"));
        let tunnel = format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n");
        assert!(exchange(p.port(), tunnel.as_bytes())
            .await
            .starts_with("HTTP/1.1 403"));
        assert!(got.lock().unwrap().is_empty(), "nothing reached upstream");
        let obs: Vec<String> = sink
            .lock()
            .unwrap()
            .observations()
            .iter()
            .map(|l| l.split(": not an origin").next().unwrap().to_string())
            .collect();
        assert_eq!(
            obs,
            [
                format!("blocked request to http://127.0.0.1:{port} (1 time)"),
                format!("blocked tunnel (https, wss or ws) to 127.0.0.1:{port} (1 time)"),
                format!("blocked request to ws://127.0.0.1:{port} (1 time)"),
            ]
        );
        // A refused WebSocket names the origin that allows it.
        assert!(sink.lock().unwrap().observations()[2].ends_with(&format!(
            "add \"http://127.0.0.1:{port}\" to target.allowedOrigins"
        )));
        assert_eq!(p.blocked_here().total(), 3);
    }

    #[tokio::test]
    async fn tunnel_to_an_allowed_host_port_is_blind() {
        let (port, got) = upstream(b"").await;
        // An http origin allows Chromium's ws:// tunnel to the same host:port.
        let (p, sink) = proxy_for(&[format!("http://127.0.0.1:{port}")]).await;
        let mut s = TcpStream::connect(("127.0.0.1", p.port())).await.unwrap();
        let req = format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: x\r\n\r\n");
        s.write_all(req.as_bytes()).await.unwrap();
        let mut b = [0u8; 39];
        s.read_exact(&mut b).await.unwrap();
        assert_eq!(&b, b"HTTP/1.1 200 Connection Established\r\n\r\n");
        s.write_all(b"RAW BYTES\r\n\r\nping").await.unwrap();
        let mut e = [0u8; 4];
        s.read_exact(&mut e).await.unwrap();
        assert_eq!(&e, b"ping");
        assert!(String::from_utf8_lossy(&got.lock().unwrap()).starts_with("RAW BYTES"));
        assert_eq!(sink.lock().unwrap().total(), 0);
    }

    #[tokio::test]
    async fn oversized_and_malformed_heads_are_refused() {
        let (p, sink) = proxy_for(&["http://127.0.0.1:1".to_string()]).await;
        // Exactly MAX_HEAD bytes and no blank line: all read, then refused.
        let mut big = b"GET http://127.0.0.1:1/ HTTP/1.1\r\nX: ".to_vec();
        big.resize(MAX_HEAD, b'a');
        assert!(exchange(p.port(), &big).await.starts_with("HTTP/1.1 431"));
        assert!(exchange(p.port(), b"GET / HTTP/1.1\r\n\r\n")
            .await
            .starts_with("HTTP/1.1 400"));
        assert!(exchange(p.port(), b"CONNECT u@h:1/x HTTP/1.1\r\n\r\n")
            .await
            .starts_with("HTTP/1.1 400"));
        assert_eq!(sink.lock().unwrap().total(), 0);
    }
}
