//! Helpers shared by the end-to-end tests of the `ui-qa` binary.

#![allow(dead_code)]

#[cfg(unix)]
pub mod browsers;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The built `ui-qa` binary.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_ui-qa")
}

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Writes `text` to `dir/name` and returns the path.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// Runs `ui-qa run --json [extra] --workspace WS FLOW` and parses stdout.
pub fn run_json(
    flow: &Path,
    ws: &Path,
    extra: &[&str],
    configure: impl FnOnce(&mut Command),
) -> (i32, Value) {
    let mut c = Command::new(bin());
    c.args(["run", "--json"])
        .args(extra)
        .arg("--workspace")
        .arg(ws)
        .arg(flow);
    configure(&mut c);
    let o = c.output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {out}\n{}",
            String::from_utf8_lossy(&o.stderr)
        )
    });
    (o.status.code().unwrap_or(-1), v)
}

/// Starts `ui-qa run --json EXTRA --workspace WS FLOW` (stderr dropped),
/// its stdout read as it comes (a result can be larger than a pipe's
/// buffer); `configure` sets what else the command needs.
pub fn start_json(
    extra: &[&str],
    ws: &Path,
    flow: &Path,
    configure: impl FnOnce(&mut Command),
) -> (std::process::Child, std::thread::JoinHandle<String>) {
    use std::process::Stdio;
    let mut c = Command::new(bin());
    c.args(["run", "--json"])
        .args(extra)
        .arg("--workspace")
        .arg(ws)
        .arg(flow)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    configure(&mut c);
    let mut child = c.spawn().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut out).unwrap();
        out
    });
    (child, reader)
}

/// Whether `pid` is a live (non-zombie) process.
pub fn alive(pid: u64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            !matches!(
                s.rsplit(')')
                    .next()
                    .and_then(|r| r.split_whitespace().next()),
                Some("Z") | Some("X")
            )
        })
        .unwrap_or(false)
}

/// Polls `f` until it holds or `limit` passes; returns its last answer.
pub fn wait_until(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let t = Instant::now();
    while t.elapsed() < limit {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    f()
}

/// The run's cleanup is clean, every process it reported as ended is gone,
/// and every label in `must_include` was among them.
pub fn assert_clean(r: &Value, must_include: &[&str]) {
    assert_eq!(r["cleanup"]["status"], "clean", "{:#}", r["cleanup"]);
    let ended = r["cleanup"]["ended"].as_array().unwrap();
    let labels: Vec<&str> = ended.iter().map(|e| e["label"].as_str().unwrap()).collect();
    for want in must_include {
        assert!(
            labels.iter().any(|l| l.contains(want)),
            "no {want} in {labels:?}"
        );
    }
    for e in ended {
        let pid = e["pid"].as_u64().unwrap();
        assert!(
            wait_until(Duration::from_secs(15), || !alive(pid)),
            "{e} is still running"
        );
    }
}

/// Pids of live processes whose argv is exactly `argv`.
pub fn pids_with_argv(argv: &[&str]) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let parts: Vec<&[u8]> = cmd.split(|b| *b == 0).filter(|p| !p.is_empty()).collect();
        if parts.len() == argv.len()
            && parts.iter().zip(argv).all(|(a, b)| *a == b.as_bytes())
            && alive(pid as u64)
        {
            out.push(pid);
        }
    }
    out
}

/// A `sleep` duration unique to this test process — `<base>.<pid>`, still a
/// valid `sleep` argument — so tests that look for (and kill) `sleep
/// <marker>` processes never see another concurrent test run's.
pub fn unique_sleep(base: u32) -> String {
    format!("{base}.{}", std::process::id())
}

/// When dropped (also when a test fails half-way), SIGKILLs by pid every
/// live process whose argv is exactly `["sleep", marker]` for its markers —
/// processes only this test process starts (see [`unique_sleep`]).
pub struct KillSleepers(pub Vec<String>);

impl Drop for KillSleepers {
    fn drop(&mut self) {
        for m in &self.0 {
            for pid in pids_with_argv(&["sleep", m]) {
                let _ = Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
            }
        }
    }
}

/// Every file under `dir`, recursively (empty if `dir` is missing).
pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// `(comm, state, ppid)` of `pid` from `/proc/<pid>/stat`.
pub fn proc_stat(pid: u32) -> Option<(String, char, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (head, tail) = stat.rsplit_once(')')?;
    let comm = head.split_once('(')?.1.to_string();
    let mut f = tail.split_whitespace();
    let state = f.next()?.chars().next()?;
    let ppid = f.next()?.parse().ok()?;
    Some((comm, state, ppid))
}

/// Every pid in `/proc`.
pub fn all_pids() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse().ok())
        .collect()
}

/// The processes descending from `root` (by parent pid, read once from
/// `/proc`), nearest first.
pub fn descendants(root: u32) -> Vec<u32> {
    let parents: Vec<(u32, u32)> = all_pids()
        .into_iter()
        .filter_map(|p| proc_stat(p).map(|(_, _, pp)| (p, pp)))
        .collect();
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() {
        let p = out[i];
        out.extend(parents.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    out.remove(0);
    out
}

/// The watchdog of the `ui-qa` process `ui_qa` (its child named
/// `ui-qa-wd SESSIONS/PROCESSES`), with that name.
pub fn watchdog_of(ui_qa: u32) -> Option<(u32, String)> {
    all_pids().into_iter().find_map(|pid| {
        let (comm, _, ppid) = proc_stat(pid)?;
        (ppid == ui_qa && comm.starts_with("ui-qa-wd")).then_some((pid, comm))
    })
}

/// Base64 with the standard alphabet, padded; written here independently of
/// the code under test.
pub fn b64(bytes: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let b = [c[0], *c.get(1).unwrap_or(&0), *c.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= c.len() {
                out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

pub fn percent(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

pub fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

/// Every encoding of `secret` that must not appear anywhere: raw, JSON-
/// and HTML-escaped, URL-encoded (both hex cases), hex (both cases), and
/// base64 / base64url of it at each of the three alignments inside a longer
/// value (the characters that depend on the secret alone).
pub fn encodings_of(secret: &str) -> Vec<String> {
    let mut v = vec![
        secret.to_string(),
        serde_json::to_string(secret)
            .unwrap()
            .trim_matches('"')
            .to_string(),
        secret.replace('&', "&amp;"),
        percent(secret),
        percent(secret).to_lowercase(),
        hex(secret),
        hex(secret).to_uppercase(),
    ];
    let n = secret.len();
    for k in 0..3usize {
        let mut blob = vec![b'u'; k];
        blob.extend_from_slice(secret.as_bytes());
        let e = b64(&blob);
        let core = &e[(8 * k).div_ceil(6)..8 * (k + n) / 6];
        v.push(core.to_string());
        v.push(core.replace('+', "-").replace('/', "_"));
    }
    v
}

/// No file under `dir` holds `secret` in any of its encodings
/// ([`encodings_of`]).
pub fn assert_no_file_holds(dir: &Path, secret: &str) {
    let encodings = encodings_of(secret);
    for file in walk(dir) {
        let bytes = std::fs::read(&file).unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes);
        for enc in &encodings {
            assert!(
                !text.contains(enc.as_str()),
                "{} holds the secret as {enc:?}",
                file.display()
            );
        }
    }
}

/// The loopback fixture app (`tests/fixtures/auth-app/app.py`): origin A
/// (the app) and origin B (another port of the same host). Ends with the
/// test (its stdin closes).
pub struct App {
    child: std::process::Child,
    /// Origin A.
    pub a: String,
    /// Origin B.
    pub b: String,
    /// The app's request log (one JSON line per request).
    pub log: PathBuf,
}

impl Drop for App {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl App {
    /// Starts the app with `config` (its credentials; the log path is added).
    pub fn start(dir: &Path, mut config: Value) -> App {
        use std::io::{BufRead, BufReader};
        use std::process::Stdio;
        let log = dir.join("requests.jsonl");
        config["log"] = Value::String(log.display().to_string());
        let cfg_path = write(dir, "app-config.json", &config.to_string());
        let mut child = Command::new("python3")
            .arg(root().join("tests/fixtures/auth-app/app.py"))
            .arg(&cfg_path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs the fixture app (cargo xtask deps installs it)");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let ports: Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("the app printed {line:?}: {e}"));
        App {
            a: format!("http://127.0.0.1:{}", ports["a"]),
            b: format!("http://127.0.0.1:{}", ports["b"]),
            child,
            log,
        }
    }

    /// The requests the app logged: (server, path, cookie, authorization).
    pub fn requests(&self) -> Vec<(String, String, Option<String>, Option<String>)> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                let s = |k: &str| v[k].as_str().map(str::to_string);
                (
                    s("server").unwrap(),
                    s("path").unwrap(),
                    s("cookie"),
                    s("authorization"),
                )
            })
            .collect()
    }

    /// The session ids a form login produced (seen in requests to A).
    pub fn form_sessions(&self) -> Vec<String> {
        self.requests()
            .into_iter()
            .filter_map(|(_, _, c, _)| c)
            .flat_map(|c| {
                c.split(';')
                    .filter_map(|kv| kv.trim().strip_prefix("session=").map(str::to_string))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// A plain GET to the app (outside the browser).
    pub fn get(&self, path: &str) {
        use std::io::{Read, Write};
        let addr = self.a.trim_start_matches("http://");
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        assert!(out.starts_with("HTTP/1.0 200"), "{out}");
    }
}

/// A directory served over HTTP on loopback by Python's `http.server`
/// (a server ui-qa did not start), stopped when dropped.
pub struct Served {
    child: std::process::Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Serves `dir` on a free loopback port.
pub fn serve_dir(dir: &Path) -> Served {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new("python3")
        .args([
            "-u",
            "-m",
            "http.server",
            "0",
            "--bind",
            "127.0.0.1",
            "--directory",
        ])
        .arg(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    // "Serving HTTP on 127.0.0.1 port 40123 (http://127.0.0.1:40123/) ..."
    let port = line
        .split_whitespace()
        .skip_while(|w| *w != "port")
        .nth(1)
        .unwrap_or_else(|| panic!("http.server said {line:?}"))
        .to_string();
    Served {
        child,
        base: format!("http://127.0.0.1:{port}"),
    }
}

/// A video's duration in seconds, as `ffprobe` reads it.
pub fn video_seconds(path: &str) -> f64 {
    let o = Command::new("ffprobe")
        .args(["-v", "error", "-show_entries", "format=duration"])
        .args(["-of", "default=nw=1:nk=1", path])
        .output()
        .expect("ffprobe runs");
    let out = String::from_utf8_lossy(&o.stdout);
    out.trim()
        .parse()
        .unwrap_or_else(|_| panic!("ffprobe read no duration of {path}: {out}"))
}

/// Where each step that ran is on the video `video` (an artifact of the
/// result `r`), in milliseconds after its first frame, as `results.md`
/// says a viewer places it: `startedMs - video.startedMs` plus the holds
/// at or before the step's start (a step before the video is at 0).
/// `(index, action, ms)` in step order.
pub fn steps_on_video(r: &Value, video: &Value) -> Vec<(u64, String, u64)> {
    let origin = video["startedMs"].as_u64().expect("the video's startedMs");
    let holds: Vec<(u64, u64)> = video["holds"]
        .as_array()
        .map(|h| {
            h.iter()
                .map(|h| (h["atMs"].as_u64().unwrap(), h["ms"].as_u64().unwrap()))
                .collect()
        })
        .unwrap_or_default();
    r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| {
            let at = s["startedMs"].as_u64()?;
            let held: u64 = holds.iter().filter(|h| h.0 <= at).map(|h| h.1).sum();
            let ms = if at >= origin { at - origin + held } else { 0 };
            Some((
                s["index"].as_u64().unwrap(),
                s["action"].as_str().unwrap().to_string(),
                ms,
            ))
        })
        .collect()
}

/// The steps a report places on its first video (`video-1`): the
/// `data-seek-ms` of each marker button, in order.
pub fn report_video_markers(report_html: &str) -> Vec<u64> {
    let key = "data-seek=\"video-1\" data-seek-ms=\"";
    report_html
        .match_indices(key)
        .filter_map(|(i, _)| {
            let rest = &report_html[i + key.len()..];
            rest[..rest.find('"')?].parse().ok()
        })
        .collect()
}
