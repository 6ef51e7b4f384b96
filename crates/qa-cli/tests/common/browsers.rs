//! Browsers the end-to-end tests start themselves, as a user would: a
//! Chromium with a DevTools port on loopback (the "user's" browser), a
//! remote browser service (browserless 2.x), and a loopback site whose
//! pages can wait for each other.
#![cfg(unix)]

use serde_json::Value;
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// A command whose program is killed when the test that started it ends,
/// even by SIGKILL (Linux: `PR_SET_PDEATHSIG`), so a killed test run never
/// leaves its browser or service behind for the next run to find.
trait DieWithTest {
    fn die_with_test(&mut self) -> &mut Self;
}

impl DieWithTest for Command {
    fn die_with_test(&mut self) -> &mut Self {
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::process::CommandExt;
            #[allow(unsafe_code)]
            // SAFETY: prctl(2) is async-signal-safe and touches no memory.
            unsafe {
                self.pre_exec(|| {
                    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        self
    }
}

/// A Chromium the test starts (the "user's" browser), ended with its whole
/// process group when dropped.
pub struct UserChromium {
    pub child: Child,
    pub port: u16,
    _profile: tempfile::TempDir,
}

impl UserChromium {
    pub fn start() -> UserChromium {
        use std::os::unix::process::CommandExt;
        let profile = tempfile::tempdir().unwrap();
        let exe = ["/usr/bin/chromium", "/usr/lib/chromium/chromium"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .expect("chromium is installed");
        let child = Command::new(exe)
            .args([
                "--headless",
                "--no-sandbox",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                "--no-first-run",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .die_with_test()
            .spawn()
            .unwrap();
        // Chromium writes the port it took into the profile.
        let file = profile.path().join("DevToolsActivePort");
        let mut port = 0;
        assert!(
            super::wait_until(Duration::from_secs(60), || {
                port = std::fs::read_to_string(&file)
                    .ok()
                    .and_then(|t| t.lines().next().and_then(|l| l.trim().parse().ok()))
                    .unwrap_or(0);
                port != 0
            }),
            "Chromium wrote no DevToolsActivePort"
        );
        UserChromium {
            child,
            port,
            _profile: profile,
        }
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// `METHOD path` on the DevTools HTTP endpoint; the body.
    pub fn http(&self, method: &str, path: &str) -> String {
        http(self.port, method, path)
    }

    /// The page tabs: (id, url).
    pub fn tabs(&self) -> HashSet<(String, String)> {
        let list: Value = serde_json::from_str(&self.http("GET", "/json/list")).unwrap();
        list.as_array()
            .unwrap()
            .iter()
            .filter(|t| t["type"] == "page")
            .map(|t| {
                (
                    t["id"].as_str().unwrap().to_string(),
                    t["url"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }
}

impl Drop for UserChromium {
    fn drop(&mut self) {
        // SAFETY: kill(2) on the process group this test started.
        #[allow(unsafe_code)]
        unsafe {
            libc::kill(-(self.child.id() as i32), libc::SIGKILL);
        }
        let _ = self.child.wait();
    }
}

pub fn http(port: u16, method: &str, path: &str) -> String {
    http_body(port, method, path, "")
}

/// `METHOD path` with a JSON `body` (none when empty); the answer's body.
pub fn http_body(port: u16, method: &str, path: &str, body: &str) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let kind = if body.is_empty() {
        String::new()
    } else {
        format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        )
    };
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{kind}Connection: close\r\n\r\n{body}"
    )
    .unwrap();
    // Chromium keeps the connection open: read the head, then the body's
    // length.
    let mut r = BufReader::new(s);
    let mut length = 0;
    loop {
        let mut h = String::new();
        r.read_line(&mut h).unwrap();
        if h == "\r\n" || h.is_empty() {
            break;
        }
        if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    r.read_exact(&mut body).unwrap();
    String::from_utf8(body).unwrap()
}

/// A site on loopback whose pages can wait for each other: `/set/NAME`
/// raises a flag, `/wait/NAME` answers once it is raised (so two flows run
/// side by side in a known order), `/page` is the storage page.
pub struct FlagSite {
    pub port: u16,
    flags: Flags,
}

type Flags = Arc<(Mutex<HashSet<String>>, Condvar)>;

const STORAGE_PAGE: &str = r#"<!doctype html><html><head><title>Storage</title></head><body>
<p data-testid="out">working</p>
<script>
(async () => {
  const p = new URLSearchParams(location.search);
  const me = p.get('me');
  if (p.get('order') === 'wait-first') await fetch('/wait/' + p.get('wait'));
  const before = localStorage.getItem('who') || 'none';
  localStorage.setItem('who', me);
  document.cookie = 'who=' + me + '; path=/';
  await fetch('/set/' + p.get('set'));
  if (p.get('order') !== 'wait-first') await fetch('/wait/' + p.get('wait'));
  document.querySelector('[data-testid=out]').textContent =
    'before=' + before + '; after=' + localStorage.getItem('who') + '; cookie=' + document.cookie;
})();
</script></body></html>"#;

/// A button that raises a flag (`/raise?name=NAME`), and a line that never
/// changes.
const RAISE_PAGE: &str = r#"<!doctype html><html><head><title>Raise</title></head><body>
<button onclick="fetch('/set/NAME').then(() => document.title = 'raised')">Raise</button>
<p data-testid="out">waiting</p>
</body></html>"#;

impl FlagSite {
    pub fn start() -> FlagSite {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let flags: Flags = Arc::default();
        let mine = flags.clone();
        std::thread::spawn(move || {
            for s in l.incoming().flatten() {
                let flags = flags.clone();
                std::thread::spawn(move || serve(s, &flags));
            }
        });
        FlagSite { port, flags: mine }
    }

    /// Waits until a page raised `name` (`false` after `limit`).
    pub fn wait(&self, name: &str, limit: Duration) -> bool {
        let set = self.flags.0.lock().unwrap();
        let (set, _) = self
            .flags
            .1
            .wait_timeout_while(set, limit, |s| !s.contains(name))
            .unwrap();
        set.contains(name)
    }
}

fn serve(mut s: TcpStream, flags: &(Mutex<HashSet<String>>, Condvar)) {
    let mut line = String::new();
    let mut r = BufReader::new(s.try_clone().unwrap());
    if r.read_line(&mut line).is_err() {
        return;
    }
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
            break;
        }
    }
    let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
    let (kind, body) = if let Some(name) = path.strip_prefix("/set/") {
        flags.0.lock().unwrap().insert(name.to_string());
        flags.1.notify_all();
        ("text/plain", "ok".to_string())
    } else if let Some(name) = path.strip_prefix("/wait/") {
        let set = flags.0.lock().unwrap();
        let _ = flags
            .1
            .wait_timeout_while(set, Duration::from_secs(120), |s| !s.contains(name))
            .unwrap();
        ("text/plain", "ok".to_string())
    } else if let Some(name) = path.strip_prefix("/raise?name=") {
        ("text/html", RAISE_PAGE.replace("NAME", name))
    } else {
        ("text/html", STORAGE_PAGE.to_string())
    };
    let _ = write!(
        s,
        "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}

/// A loopback site for containment checks: `form.html` (the web fixture)
/// and `leak.html`, which tries to reach the returned listener on
/// 127.0.0.2 (an origin no flow allows) and then shows `done: stopped` or
/// `done: reached`.
pub fn leak_site() -> (super::Served, TcpListener, tempfile::TempDir) {
    let leak = TcpListener::bind("127.0.0.2:0").unwrap();
    leak.set_nonblocking(true).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        super::root().join("tests/fixtures/web/form.html"),
        dir.path().join("form.html"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("leak.html"),
        format!(
            r#"<!doctype html><title>Leak</title><p data-testid="leak">trying</p><script>
fetch('http://{}/leak').then(() => 'reached', () => 'stopped')
  .then(r => document.querySelector('[data-testid=leak]').textContent = 'done: ' + r);
</script>"#,
            leak.local_addr().unwrap()
        ),
    )
    .unwrap();
    (super::serve_dir(dir.path()), leak, dir)
}

/// Nothing connected to the leak listener.
pub fn nothing_reached(leak: &TcpListener) -> bool {
    matches!(leak.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
}

/// browserless 2.x (installed by `cargo xtask deps` into
/// `tests/fixtures/browserless/node_modules`) on loopback with a token,
/// launching the system Chromium for each connection. Ended with every
/// process it started when dropped or killed.
pub struct Browserless {
    child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
    _dir: tempfile::TempDir,
}

impl Browserless {
    pub fn start(token: &str) -> Browserless {
        use std::os::unix::process::CommandExt;
        let install = super::root().join("tests/fixtures/browserless");
        let pkg = install.join("node_modules/@browserless.io/browserless");
        assert!(
            pkg.join("build/index.js").exists(),
            "browserless is not installed: run cargo xtask deps (it installs tests/fixtures/browserless)"
        );
        let dir = tempfile::tempdir().unwrap();
        // Only the Chromium and management routes (the others need
        // browsers this machine does not have).
        let routes = dir.path().join("routes");
        std::fs::create_dir(&routes).unwrap();
        for r in ["chromium", "management"] {
            std::os::unix::fs::symlink(pkg.join("build/routes").join(r), routes.join(r)).unwrap();
        }
        // It has no setting for the browser's path: the path Playwright
        // expects links to the system Chromium.
        let pw = dir.path().join("pw");
        let o = Command::new("node")
            .args([
                "-e",
                "console.log(require('playwright-core').chromium.executablePath())",
            ])
            .current_dir(&install)
            .env("PLAYWRIGHT_BROWSERS_PATH", &pw)
            .output()
            .unwrap();
        let exe = String::from_utf8_lossy(&o.stdout).trim().to_string();
        assert!(
            exe.starts_with(pw.to_str().unwrap()),
            "playwright-core said {exe:?}"
        );
        std::fs::create_dir_all(Path::new(&exe).parent().unwrap()).unwrap();
        std::os::unix::fs::symlink("/usr/bin/chromium", &exe).unwrap();
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut child = Command::new("node")
            .arg(pkg.join("build/index.js"))
            .current_dir(&install)
            .env("HOST", "127.0.0.1")
            .env("PORT", port.to_string())
            .env("TOKEN", token)
            .env("CONCURRENT", "2")
            .env("ROUTES", &routes)
            .env("PLAYWRIGHT_BROWSERS_PATH", &pw)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0)
            .die_with_test()
            .spawn()
            .unwrap();
        // Ready when it says it listens (its log is on stderr); the log is
        // drained after that.
        let mut out = BufReader::new(child.stderr.take().unwrap());
        let mut seen = String::new();
        loop {
            let mut line = String::new();
            if out.read_line(&mut line).unwrap_or(0) == 0 {
                panic!("browserless exited before it listened:\n{seen}");
            }
            seen.push_str(&line);
            if line.contains("HTTP Server is listening") {
                break;
            }
        }
        std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
        Browserless {
            child,
            port,
            _dir: dir,
        }
    }

    /// Kills the service and every process it started, at once.
    pub fn kill(&mut self) {
        let pid = self.child.id();
        let mut all = super::descendants(pid);
        all.push(pid);
        for p in all {
            // SAFETY: kill(2) on processes this test started.
            #[allow(unsafe_code)]
            unsafe {
                libc::kill(p as i32, libc::SIGKILL);
            }
        }
        let _ = self.child.wait();
    }
}

impl Drop for Browserless {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A TLS front before a DevTools port (`tests/fixtures/tls/proxy.py`), as
/// a remote browser service has: a certificate for `localhost` and
/// 127.0.0.1 signed by a CA of the test's own (`ca`, trusted only where a
/// test points `SSL_CERT_FILE` at it). Stopped when dropped.
pub struct TlsFront {
    child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// The CA's certificate (PEM).
    pub ca: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl TlsFront {
    /// Fronts 127.0.0.1:`target`.
    pub fn start(target: u16) -> TlsFront {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let openssl = |args: &[&str]| {
            let o = Command::new("openssl")
                .args(args)
                .current_dir(d)
                .output()
                .expect("openssl runs");
            assert!(
                o.status.success(),
                "openssl {args:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        };
        openssl(&[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=ui-qa test CA",
        ]);
        openssl(&[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "leaf.key",
            "-out",
            "leaf.csr",
            "-subj",
            "/CN=localhost",
        ]);
        std::fs::write(
            d.join("ext"),
            "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
        )
        .unwrap();
        openssl(&[
            "x509",
            "-req",
            "-in",
            "leaf.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "leaf.pem",
            "-days",
            "2",
            "-extfile",
            "ext",
        ]);
        let mut child = Command::new("python3")
            .die_with_test()
            .arg(super::root().join("tests/fixtures/tls/proxy.py"))
            .arg(d.join("leaf.pem"))
            .arg(d.join("leaf.key"))
            .arg(target.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("proxy.py said {line:?}"));
        TlsFront {
            child,
            port,
            ca: d.join("ca.pem"),
            _dir: dir,
        }
    }
}

impl Drop for TlsFront {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Debian's chromedriver (`chromium-driver`) on a free loopback port, with a
/// session whose Chromium it started (headless): the browser a Selenium
/// grid gives. Ended, session and all, when dropped.
pub struct ChromeDriver {
    child: Child,
    /// chromedriver's port.
    pub port: u16,
    /// The session's id.
    pub session: String,
    /// The session browser's DevTools endpoint (`http://127.0.0.1:PORT`),
    /// from `goog:chromeOptions.debuggerAddress`.
    pub endpoint: String,
}

impl ChromeDriver {
    pub fn start() -> ChromeDriver {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .die_with_test()
            .spawn()
            .expect("chromedriver (Debian chromium-driver; cargo xtask deps installs it)");
        assert!(
            super::wait_until(Duration::from_secs(60), || {
                TcpStream::connect(("127.0.0.1", port)).is_ok()
                    && http(port, "GET", "/status").contains("\"ready\":true")
            }),
            "chromedriver never became ready"
        );
        let caps = serde_json::json!({ "capabilities": { "alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": { "binary": "/usr/bin/chromium", "args": ["--headless", "--no-sandbox"] }
        } } });
        let answer: Value =
            serde_json::from_str(&http_body(port, "POST", "/session", &caps.to_string())).unwrap();
        let session = answer["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {answer}"))
            .to_string();
        let address = answer["value"]["capabilities"]["goog:chromeOptions"]["debuggerAddress"]
            .as_str()
            .unwrap_or_else(|| panic!("no debuggerAddress: {answer}"));
        // chromedriver says `localhost`; Chromium listens on 127.0.0.1 only.
        let endpoint = format!("http://{}", address.replace("localhost", "127.0.0.1"));
        ChromeDriver {
            child,
            port,
            session,
            endpoint,
        }
    }

    /// The session's current URL, as chromedriver reads it.
    pub fn url(&self) -> String {
        let v: Value = serde_json::from_str(&http(
            self.port,
            "GET",
            &format!("/session/{}/url", self.session),
        ))
        .unwrap();
        v["value"].as_str().unwrap_or_default().to_string()
    }
}

impl Drop for ChromeDriver {
    fn drop(&mut self) {
        let _ = http(self.port, "DELETE", &format!("/session/{}", self.session));
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
