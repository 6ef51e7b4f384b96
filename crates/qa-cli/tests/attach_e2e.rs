//! End to end through the `ui-qa` binary against a browser ui-qa did not
//! start (`target.browser.connect`): a real Chromium the test launches with
//! a DevTools port on loopback, as a person debugging by hand would.
#![cfg(unix)]

mod common;

use common::{alive, run_json, write};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// A Chromium the test starts (the "user's" browser), ended with its whole
/// process group when dropped.
struct UserChromium {
    child: Child,
    port: u16,
    _profile: tempfile::TempDir,
}

impl UserChromium {
    fn start() -> UserChromium {
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
            .spawn()
            .unwrap();
        // Chromium writes the port it took into the profile.
        let file = profile.path().join("DevToolsActivePort");
        let mut port = 0;
        assert!(
            common::wait_until(Duration::from_secs(60), || {
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

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// `METHOD path` on the DevTools HTTP endpoint; the body.
    fn http(&self, method: &str, path: &str) -> String {
        http(self.port, method, path)
    }

    /// The page tabs: (id, url).
    fn tabs(&self) -> HashSet<(String, String)> {
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

fn http(port: u16, method: &str, path: &str) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
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
struct FlagSite {
    port: u16,
}

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

impl FlagSite {
    fn start() -> FlagSite {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let flags: Arc<(Mutex<HashSet<String>>, Condvar)> = Arc::default();
        std::thread::spawn(move || {
            for s in l.incoming().flatten() {
                let flags = flags.clone();
                std::thread::spawn(move || serve(s, &flags));
            }
        });
        FlagSite { port }
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
    } else {
        ("text/html", STORAGE_PAGE.to_string())
    };
    let _ = write!(
        s,
        "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}

/// A flow attaches to a running Chromium, drives a page with fill, click,
/// assertText and a screenshot (and a video), passes, and leaves the
/// browser running with exactly the tabs it had — the user's tab
/// included, never closed or navigated.
#[test]
fn a_flow_attaches_to_a_running_chromium_and_leaves_it_as_it_was() {
    let user = UserChromium::start();
    // The site: the form fixture, and a page that tries to reach an origin
    // the flow does not allow (a listener of the test's own).
    let leak = TcpListener::bind("127.0.0.2:0").unwrap();
    leak.set_nonblocking(true).unwrap();
    let site_dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        common::root().join("tests/fixtures/web/form.html"),
        site_dir.path().join("form.html"),
    )
    .unwrap();
    std::fs::write(
        site_dir.path().join("leak.html"),
        format!(
            r#"<!doctype html><title>Leak</title><p data-testid="leak">trying</p><script>
fetch('http://{}/leak').then(() => 'reached', () => 'stopped')
  .then(r => document.querySelector('[data-testid=leak]').textContent = 'done: ' + r);
</script>"#,
            leak.local_addr().unwrap()
        ),
    )
    .unwrap();
    let site = common::serve_dir(site_dir.path());
    // The user's own tab, open before the run.
    user.http("PUT", &format!("/json/new?{}/form.html", site.base));
    let before = user.tabs();
    assert!(before.len() >= 2, "{before:?}");
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let secret = "Ada-Lovelace-9zQ";
    let flow = json!({
        "target": {
            "url": format!("{}/form.html", site.base),
            "browser": { "connect": user.endpoint() }
        },
        "steps": [
            { "action": "fill", "locator": { "label": "Name" }, "value": "${secret.ATTACH_NAME}" },
            { "action": "click", "locator": { "role": "button", "name": "Send" } },
            { "action": "assertText", "locator": { "testId": "result" }, "includes": "Hello" },
            { "action": "screenshot", "name": "sent" },
            { "action": "goto", "url": format!("{}/leak.html", site.base) },
            { "action": "assertText", "locator": { "testId": "leak" }, "includes": "done: stopped" }
        ]
    });
    let f = write(dir.path(), "attach.json", &flow.to_string());
    let (code, r) = run_json(&f, ws.path(), &["--video", "on"], |c| {
        c.env("UI_QA_SECRET_ATTACH_NAME", secret);
    });
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["status"], "PASSED", "{r:#}");
    assert_eq!(
        r["selection"]["presentation"], "attached",
        "{:#}",
        r["selection"]
    );
    let shots = r["artifacts"]["screenshots"].as_array().unwrap();
    assert!(
        shots
            .iter()
            .any(|s| s["path"].as_str().unwrap().contains("sent")),
        "{shots:?}"
    );
    assert_eq!(
        r["artifacts"]["videos"].as_array().unwrap().len(),
        1,
        "{:#}",
        r["artifacts"]
    );
    for a in shots
        .iter()
        .chain(r["artifacts"]["videos"].as_array().unwrap())
    {
        assert!(a["bytes"].as_u64().unwrap() > 0, "{a}");
    }
    // Containment held in the browser ui-qa did not start.
    assert!(
        matches!(leak.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "a request reached an origin the flow does not allow"
    );
    assert!(
        r.to_string().contains("127.0.0.2"),
        "no blocked request reported: {r:#}"
    );
    // The secret is in no file of the run, in any encoding.
    let run_dir = Path::new(r["evidenceDir"].as_str().unwrap());
    for file in common::walk(run_dir) {
        let bytes = std::fs::read(&file).unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes);
        for enc in common::encodings_of(secret) {
            assert!(
                !text.contains(&enc),
                "{} holds the secret as {enc:?}",
                file.display()
            );
        }
    }
    // The run ended only what it started (its encoder), never the browser.
    assert_eq!(r["cleanup"]["status"], "clean", "{:#}", r["cleanup"]);
    assert!(
        alive(user.child.id() as u64),
        "the user's browser was ended"
    );
    assert!(user
        .http("GET", "/json/version")
        .contains("webSocketDebuggerUrl"));
    assert_eq!(user.tabs(), before, "the run left the user's tabs changed");
    let ended = r["cleanup"]["ended"].to_string();
    assert!(!ended.contains("chromium"), "{ended}");
}

/// Two flows run side by side against the same browser, in a known order
/// (the second reads storage only after the first wrote its own): neither
/// sees the other's storage or cookies.
#[test]
fn flows_side_by_side_in_one_browser_never_share_storage() {
    let user = UserChromium::start();
    let site = FlagSite::start();
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let flow = |me: &str, q: &str| {
        json!({
            "target": {
                "url": format!("http://127.0.0.1:{}/page?me={me}&{q}", site.port),
                "browser": { "connect": user.endpoint() }
            },
            "steps": [
                { "action": "assertText", "locator": { "testId": "out" },
                  "includes": format!("before=none; after={me}; cookie=who={me}"), "timeoutMs": 90000 }
            ]
        })
        .to_string()
    };
    let a = write(dir.path(), "a.json", &flow("A", "set=a-marked&wait=b-done"));
    let b = write(
        dir.path(),
        "b.json",
        &flow("B", "order=wait-first&wait=a-marked&set=b-done"),
    );
    // Two ui-qa processes at once, as two CI shards or two agents would.
    let t = Instant::now();
    let (mut ca, ra) = common::start_json(&[], ws.path(), &a, |_| {});
    let (mut cb, rb) = common::start_json(&[], ws.path(), &b, |_| {});
    let (_, _) = (ca.wait().unwrap(), cb.wait().unwrap());
    for out in [ra.join().unwrap(), rb.join().unwrap()] {
        let r: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        assert_eq!(r["status"], "PASSED", "{r:#}");
        assert_eq!(r["cleanup"]["status"], "clean", "{:#}", r["cleanup"]);
    }
    assert!(t.elapsed() < Duration::from_secs(600));
    assert!(alive(user.child.id() as u64));
}

/// An endpoint that is not there leaves the run BLOCKED with a handoff
/// that says how to start the browser; nothing else on the machine is
/// contacted.
#[test]
fn an_endpoint_that_does_not_answer_is_blocked_with_a_handoff() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let flow = json!({
        "target": { "url": "http://127.0.0.1:9/", "browser": { "connect": format!("http://127.0.0.1:{port}") } },
        "steps": [ { "action": "assertURL", "includes": "x" } ]
    });
    let f = write(dir.path(), "gone.json", &flow.to_string());
    let (code, r) = run_json(&f, ws.path(), &[], |_| {});
    assert_eq!(r["status"], "BLOCKED", "{r:#}");
    assert_ne!(code, 0);
    assert_eq!(r["reasonCode"], "web.connect.unreachable", "{r:#}");
    let handoff = r["blockedHandoff"].to_string();
    assert!(handoff.contains("--remote-debugging-port"), "{handoff}");
}

/// A DevTools endpoint off this machine without TLS is refused before
/// anything runs (exit 2, the pointer of the field), unless the flow opts in.
#[test]
fn a_plain_endpoint_off_loopback_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let flow = json!({
        "target": { "url": "https://example.com/", "browser": { "connect": "ws://192.0.2.1:9222/devtools/browser/x" } },
        "steps": [ { "action": "assertURL", "includes": "x" } ]
    });
    let f = write(dir.path(), "far.json", &flow.to_string());
    let o = Command::new(common::bin())
        .args(["check", "--json"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("/target/browser/connect"), "{out}");
    assert!(out.contains("allowInsecure"), "{out}");
    let _ = ws;
}
