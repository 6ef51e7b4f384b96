//! `target.serve` (a static directory on 127.0.0.1) and `target.server`
//! (a command the run starts, owns and stops).

use crate::codes::WebCode;
use crate::contain::same_user;
use qa_core::flow::ServerSpec;
use qa_core::{Deadline, DriverError};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A running static server; dropping the handle stops it.
pub struct StaticServer {
    /// `http://127.0.0.1:PORT`.
    pub origin: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for StaticServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Content type by extension.
pub fn content_type(path: &Path) -> &'static str {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase())
        .as_deref()
    {
        Some("html") | Some("htm") => "text/html; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("js") | Some("mjs") => "text/javascript; charset=utf-8",
        Some("json") => "application/json",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("jpg") | Some("jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        Some("ico") => "image/x-icon",
        Some("txt") => "text/plain; charset=utf-8",
        Some("wasm") => "application/wasm",
        Some("woff2") => "font/woff2",
        Some("woff") => "font/woff",
        Some("xml") => "application/xml",
        _ => "application/octet-stream",
    }
}

/// What the static server never serves, whatever its root: the run's
/// workspace where ui-qa keeps what is private (runs and their evidence,
/// the auth file and cached auth state) — all of the workspace when the
/// served directory holds it.
#[derive(Debug, Clone, Default)]
pub struct Private {
    /// The workspace (canonical), if known.
    workspace: Option<PathBuf>,
}

impl Private {
    /// The private parts of `workspace`.
    pub fn workspace(workspace: &Path) -> Private {
        Private {
            workspace: workspace.canonicalize().ok(),
        }
    }

    /// Whether `file` (canonical) under `root` (canonical) is private.
    fn holds(&self, root: &Path, file: &Path) -> bool {
        let Some(ws) = &self.workspace else {
            return false;
        };
        if !file.starts_with(ws) {
            return false;
        }
        if !root.starts_with(ws) {
            // The served directory holds the workspace: none of it.
            return true;
        }
        ["runs", qa_core::auth::AUTH_FILE, qa_core::auth::STATE_DIR]
            .iter()
            .any(|p| file.starts_with(ws.join(p)))
    }
}

/// Whether a path component is hidden (`.git`, `.env`, `.ui-qa`, …).
fn hidden(c: Component<'_>) -> bool {
    matches!(c, Component::Normal(s) if s.as_encoded_bytes().first() == Some(&b'.'))
}

/// Maps a request path to a file under `root`, refusing traversal, hidden
/// paths (a component starting with `.`, also where a symlink leads) and
/// what `private` holds.
pub fn resolve(root: &Path, request_path: &str, private: &Private) -> Option<PathBuf> {
    let path = request_path.split(['?', '#']).next().unwrap_or("/");
    let decoded = percent_decode(path)?;
    let mut out = root.to_path_buf();
    for c in Path::new(decoded.trim_start_matches('/')).components() {
        match c {
            Component::Normal(_) if hidden(c) => return None,
            Component::Normal(s) => out.push(s),
            Component::CurDir => {}
            _ => return None,
        }
    }
    if decoded.ends_with('/') || out.is_dir() {
        out.push("index.html");
    }
    // Refuse symlinks that leave the root or lead to a hidden path.
    let canon = out.canonicalize().ok()?;
    let root = root.canonicalize().ok()?;
    let inside = canon.strip_prefix(&root).ok()?;
    if inside.components().any(hidden) || private.holds(&root, &canon) {
        return None;
    }
    Some(canon)
}

fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let h = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(h, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    let s = String::from_utf8(out).ok()?;
    (!s.contains('\0') && !s.contains('\\')).then_some(s)
}

/// Serves `root` on 127.0.0.1 with a free port (GET and HEAD only), to
/// this user's processes only (the run's browser), never a hidden or
/// `private` path.
pub async fn serve_static(root: &Path, private: Private) -> Result<StaticServer, DriverError> {
    if !root.is_dir() {
        return Err(DriverError::new(
            WebCode::ServeMissingDir,
            format!("target.serve directory {} does not exist", root.display()),
        ));
    }
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| DriverError::new(WebCode::ServeBind, format!("cannot bind 127.0.0.1: {e}")))?;
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let served = Arc::new((root.to_path_buf(), private));
    let task = tokio::spawn(async move {
        while let Ok((sock, peer)) = listener.accept().await {
            let served = served.clone();
            tokio::spawn(async move {
                if sock.local_addr().is_ok_and(|l| same_user(l, peer)) {
                    let _ = handle(sock, &served.0, &served.1).await;
                }
            });
        }
    });
    Ok(StaticServer {
        origin: format!("http://127.0.0.1:{port}"),
        task,
    })
}

async fn handle(mut sock: TcpStream, root: &Path, private: &Private) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(2048);
    loop {
        let mut chunk = [0u8; 2048];
        let n = tokio::time::timeout(Duration::from_secs(30), sock.read(&mut chunk))
            .await
            .map_err(|_| std::io::Error::other("timeout"))??;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = find_head_end(&buf) {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            buf.drain(..end + 4);
            let mut first = head.lines().next().unwrap_or("").split_whitespace();
            let method = first.next().unwrap_or("").to_string();
            let target = first.next().unwrap_or("/").to_string();
            let (status, ctype, body) = if method != "GET" && method != "HEAD" {
                (
                    "405 Method Not Allowed",
                    "text/plain",
                    b"method not allowed".to_vec(),
                )
            } else {
                match resolve(root, &target, private)
                    .and_then(|p| std::fs::read(&p).ok().map(|b| (p, b)))
                {
                    Some((p, b)) => ("200 OK", content_type(&p), b),
                    None => ("404 Not Found", "text/plain", b"not found".to_vec()),
                }
            };
            let hdr = format!(
                "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: keep-alive\r\n\r\n",
                body.len()
            );
            sock.write_all(hdr.as_bytes()).await?;
            if method != "HEAD" {
                sock.write_all(&body).await?;
            }
            if buf.len() > 64 * 1024 {
                return Ok(());
            }
        } else if buf.len() > 64 * 1024 {
            return Ok(());
        }
    }
}

fn find_head_end(b: &[u8]) -> Option<usize> {
    b.windows(4).position(|w| w == b"\r\n\r\n")
}

/// Output of `target.server` kept at most (its last part).
pub const MAX_SERVER_LOG: u64 = 1024 * 1024;

/// The run's `target.server`: its process and the file its output goes to.
pub struct TargetServer {
    child: tokio::process::Child,
    log: PathBuf,
}

impl TargetServer {
    /// How it ended, once it has.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Its output so far (the last [`MAX_SERVER_LOG`] bytes).
    pub fn output(&self) -> Vec<u8> {
        let Ok(bytes) = std::fs::read(&self.log) else {
            return Vec::new();
        };
        let cut = bytes.len().saturating_sub(MAX_SERVER_LOG as usize);
        bytes[cut..].to_vec()
    }

    /// The last `n` non-empty lines of its output, `" | "`-joined.
    pub fn tail(&self, n: usize) -> String {
        let out = self.output();
        let text = String::from_utf8_lossy(&out);
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim_end)
            .filter(|l| !l.is_empty())
            .collect();
        lines[lines.len().saturating_sub(n)..].join(" | ")
    }

    /// Why the run cannot go on when the server has exited: `e` becomes
    /// `web.server.exited`, naming the exit and the server's last output.
    pub fn explain(&mut self, e: DriverError) -> DriverError {
        let Some(st) = self.exited() else {
            return e;
        };
        let tail = self.tail(5);
        let mut m = format!(
            "target.server exited ({st}) while the run needed it; {}",
            e.message
        );
        if !tail.is_empty() {
            m.push_str(&format!("; its last output: {tail}"));
        }
        DriverError {
            code: crate::codes::WebCode::ServerExited.as_str(),
            message: m,
            remediation: Some(
                "keep the server running for the whole flow (see artifacts/logs/server.log); a server that reads its input gets an open, empty stdin".into(),
            ),
            ..e
        }
    }

    /// Reaps it if it has exited.
    pub fn reap(&mut self) {
        let _ = self.child.try_wait();
    }
}

/// Starts `target.server` through the process owner, its stdout and stderr
/// into `log_dir/server.log` and its stdin an open pipe (a server that
/// quits at the end of its input keeps running), and waits until its
/// `readyUrl` answers with any HTTP status.
pub async fn start_server(
    spec: &ServerSpec,
    base_dir: &Path,
    processes: &qa_core::process::ProcessOwner,
    log_dir: &Path,
    deadline: Deadline,
) -> Result<TargetServer, DriverError> {
    let log = log_dir.join("server.log");
    let out = std::fs::File::create(&log).map_err(|e| {
        DriverError::new(
            WebCode::ServerSpawn,
            format!("cannot create the server log: {e}"),
        )
    })?;
    let err = out.try_clone().map_err(|e| {
        DriverError::new(
            WebCode::ServerSpawn,
            format!("cannot create the server log: {e}"),
        )
    })?;
    let mut cmd = tokio::process::Command::new(&spec.command[0]);
    cmd.args(&spec.command[1..])
        .current_dir(match &spec.cwd {
            Some(c) => base_dir.join(c),
            None => base_dir.to_path_buf(),
        })
        .envs(&spec.env)
        .stdin(std::process::Stdio::piped())
        .stdout(out)
        .stderr(err);
    let child = processes.spawn(cmd, "target-server").map_err(|e| {
        DriverError::new(
            WebCode::ServerSpawn,
            format!("could not start target.server {:?}: {e}", spec.command[0]),
        )
    })?;
    let mut server = TargetServer { child, log };
    let ready = url::Url::parse(&spec.ready_url)
        .map_err(|e| DriverError::new(WebCode::ServerReadyUrl, e.to_string()))?;
    let wait = Deadline::after_ms(spec.ready_timeout_ms.unwrap_or(30_000)).min(deadline);
    let host = ready.host_str().unwrap_or("127.0.0.1").to_string();
    let port = ready.port_or_known_default().unwrap_or(80);
    let path = match ready.query() {
        Some(q) => format!("{}?{q}", ready.path()),
        None => ready.path().to_string(),
    };
    let mut cadence = qa_core::Cadence::new();
    loop {
        if probe_http(&host, port, &path).await {
            return Ok(server);
        }
        if let Some(st) = server.exited() {
            let tail = server.tail(5);
            return Err(DriverError::new(
                WebCode::ServerExited,
                if tail.is_empty() {
                    format!("target.server exited before readyUrl answered ({st})")
                } else {
                    format!("target.server exited before readyUrl answered ({st}); its last output: {tail}")
                },
            ));
        }
        if !cadence.wait(wait).await {
            return Err(DriverError::new(
                WebCode::ServerNotReady,
                format!(
                    "target.server readyUrl {} did not answer before readyTimeoutMs",
                    spec.ready_url
                ),
            ));
        }
    }
}

async fn probe_http(host: &str, port: u16, path: &str) -> bool {
    let fut = async {
        let mut s = TcpStream::connect((host, port)).await.ok()?;
        let req =
            format!("GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n");
        s.write_all(req.as_bytes()).await.ok()?;
        let mut b = [0u8; 12];
        let n = s.read(&mut b).await.ok()?;
        Some(b[..n].starts_with(b"HTTP/"))
    };
    matches!(
        tokio::time::timeout(Duration::from_secs(2), fut).await,
        Ok(Some(true))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_traversal() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.html"), "x").unwrap();
        let p = Private::default();
        assert!(resolve(d.path(), "/a.html", &p).is_some());
        assert!(resolve(d.path(), "/../etc/passwd", &p).is_none());
        assert!(resolve(d.path(), "/%2e%2e/etc/passwd", &p).is_none());
        assert!(resolve(d.path(), "/..%2fetc", &p).is_none());
        assert!(resolve(d.path(), "/missing", &p).is_none());
    }

    #[cfg(unix)]
    #[test]
    fn never_serves_hidden_or_private_paths() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        for f in [".env", ".git/config", "site/.secret", "site/ok.html"] {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "x").unwrap();
        }
        // A workspace inside the served directory, and a symlink into it.
        let ws = root.join("qa-ws");
        for f in [
            "auth.jsonc",
            "runs/r1/result.json",
            "auth-state/p.json",
            "flows/f.jsonc",
        ] {
            let p = ws.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "x").unwrap();
        }
        std::os::unix::fs::symlink(root.join(".env"), root.join("site/env.txt")).unwrap();
        let private = Private::workspace(&ws);
        let get = |path: &str| resolve(root, path, &private).is_some();
        assert!(get("/site/ok.html"));
        for path in [
            "/.env",
            "/%2eenv",
            "/.git/config",
            "/site/.secret",
            "/site/env.txt",
            "/qa-ws/auth.jsonc",
            "/qa-ws/runs/r1/result.json",
            "/qa-ws/flows/f.jsonc",
        ] {
            assert!(!get(path), "{path} was served");
        }
        // Serving a directory inside the workspace: only ui-qa's private
        // parts are refused.
        let inner = ws.join("flows");
        assert!(resolve(&inner, "/f.jsonc", &private).is_some());
        std::os::unix::fs::symlink(ws.join("auth.jsonc"), inner.join("a.txt")).unwrap();
        assert!(resolve(&inner, "/a.txt", &private).is_none());
    }

    #[test]
    fn content_types() {
        assert_eq!(
            content_type(Path::new("x.html")),
            "text/html; charset=utf-8"
        );
        assert_eq!(
            content_type(Path::new("x.JS")),
            "text/javascript; charset=utf-8"
        );
        assert_eq!(content_type(Path::new("x.bin")), "application/octet-stream");
    }
}
