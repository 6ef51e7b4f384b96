//! Test harness: a loopback fixture server that records every request, and
//! flows driven through `qa_runner::conformance::drive` (the runner's own
//! step semantics).
#![allow(dead_code)]

use qa_core::process::ProcessOwner;
use qa_core::{
    Artifact, CloseResult, Deadline, DriverError, Evidence, Flow, Note, RunOptions, Secrets,
    SessionContext,
};
use qa_runner::conformance::{self, describe_end, end_error, Drive, DriveOptions, Next};
use qa_runner::runner::StepEnd;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A loopback HTTP server on its own port that records every request line.
pub struct Recorder {
    pub origin: String,
    pub seen: Arc<Mutex<Vec<String>>>,
}

impl Recorder {
    /// Serves files from `root` (if any) and `/redirect?to=URL` (302).
    pub fn start(root: Option<PathBuf>) -> Recorder {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let origin = format!("http://{}", l.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s2 = seen.clone();
        std::thread::spawn(move || {
            for c in l.incoming().flatten() {
                let seen = s2.clone();
                let root = root.clone();
                std::thread::spawn(move || serve(c, root, seen));
            }
        });
        Recorder { origin, seen }
    }

    pub fn requests(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

fn serve(mut c: TcpStream, root: Option<PathBuf>, seen: Arc<Mutex<Vec<String>>>) {
    c.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .ok();
    let mut buf = Vec::new();
    let mut b = [0u8; 4096];
    loop {
        let Ok(n) = c.read(&mut b) else { return };
        if n == 0 {
            return;
        }
        buf.extend_from_slice(&b[..n]);
        if buf.windows(4).any(|w| w == b"\r\n\r\n") {
            break;
        }
    }
    let head = String::from_utf8_lossy(&buf).to_string();
    let line = head.lines().next().unwrap_or("").to_string();
    seen.lock().unwrap().push(line.clone());
    let target = line.split_whitespace().nth(1).unwrap_or("/").to_string();
    let resp = if let Some(to) = target.strip_prefix("/redirect?to=") {
        let to = url_decode(to);
        format!("HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").into_bytes()
    } else if let Some(root) = &root {
        let path = target
            .split('?')
            .next()
            .unwrap_or("/")
            .trim_start_matches('/');
        let p = root.join(if path.is_empty() { "index.html" } else { path });
        match std::fs::read(&p) {
            Ok(body) if !path.contains("..") => {
                let ct = match p.extension().and_then(|e| e.to_str()) {
                    Some("html") => "text/html",
                    Some("js") => "text/javascript",
                    Some("json") => "application/json",
                    _ => "application/octet-stream",
                };
                let mut r = format!("HTTP/1.1 200 OK\r\nContent-Type: {ct}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len()).into_bytes();
                r.extend(body);
                r
            }
            _ => {
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_vec()
            }
        }
    } else {
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok".to_vec()
    };
    let _ = c.write_all(&resp);
}

fn url_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) =
                u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("zz"), 16)
            {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses a test's flow. With `UI_QA_TEST_ATTACH=1` a browser flow is
/// pointed at a Chromium the test process started and ui-qa did not
/// (`target.browser.connect`): the containment, popup and secret suites
/// run again against an attached browser (`cargo xtask test` does both).
pub fn parse_flow(text: &str, base_dir: &Path) -> Flow {
    let mut flow = Flow::parse(text, base_dir).expect("flow parses");
    if let (Some(endpoint), qa_core::flow::Target::Browser(t)) =
        (attach_endpoint(), &mut flow.target)
    {
        t.browser = Some(qa_core::flow::BrowserConnection {
            connect: endpoint,
            allow_insecure: false,
            page: None,
            page_url: None,
        });
    }
    flow
}

/// The endpoint of the test process's own Chromium when
/// `UI_QA_TEST_ATTACH=1` (started once, on a thread that never ends, and
/// killed by the kernel when the test process exits: `PR_SET_PDEATHSIG`).
#[cfg(target_os = "linux")]
pub fn attach_endpoint() -> Option<String> {
    static ENDPOINT: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    ENDPOINT
        .get_or_init(|| {
            if std::env::var("UI_QA_TEST_ATTACH").ok().as_deref() != Some("1") {
                return None;
            }
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                use std::os::unix::process::CommandExt;
                let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("attach-profiles");
                let _ = std::fs::remove_dir_all(&base);
                let profile = base.join(std::process::id().to_string());
                std::fs::create_dir_all(&profile).unwrap();
                let mut cmd = std::process::Command::new("/usr/bin/chromium");
                cmd.args([
                    "--headless",
                    "--no-sandbox",
                    "--remote-debugging-address=127.0.0.1",
                    "--remote-debugging-port=0",
                    "--no-first-run",
                ])
                .arg(format!("--user-data-dir={}", profile.display()))
                .arg("about:blank")
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null());
                // SAFETY: prctl(2) in the child before exec; it touches no
                // memory of the parent.
                #[allow(unsafe_code)]
                unsafe {
                    cmd.pre_exec(|| {
                        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                        Ok(())
                    });
                }
                let mut child = cmd.spawn().expect("chromium starts");
                let file = profile.join("DevToolsActivePort");
                let t = std::time::Instant::now();
                let port = loop {
                    if let Some(p) = std::fs::read_to_string(&file)
                        .ok()
                        .and_then(|t| t.lines().next().and_then(|l| l.trim().parse::<u16>().ok()))
                    {
                        break p;
                    }
                    assert!(
                        t.elapsed().as_secs() < 120,
                        "Chromium wrote no DevToolsActivePort"
                    );
                    std::thread::sleep(std::time::Duration::from_millis(50));
                };
                tx.send(format!("http://127.0.0.1:{port}")).unwrap();
                // This thread lives as long as the browser (its death
                // signal is tied to the thread that started it).
                let _ = child.wait();
            });
            Some(rx.recv().expect("the attach browser started"))
        })
        .clone()
}

/// No attached browser off Linux.
#[cfg(not(target_os = "linux"))]
pub fn attach_endpoint() -> Option<String> {
    None
}

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

pub struct Run {
    pub _dir: tempfile::TempDir,
    pub ctx: SessionContext,
    pub processes: Arc<ProcessOwner>,
}

pub fn context() -> Run {
    let dir = tempfile::tempdir().unwrap();
    let secrets = Arc::new(Secrets::new());
    let evidence = Arc::new(Evidence::create(dir.path(), "run", secrets.clone()).unwrap());
    let processes = Arc::new(ProcessOwner::new());
    let ctx = SessionContext::new(
        evidence,
        processes.clone(),
        Deadline::after_ms(60_000),
        RunOptions::default(),
        None,
    )
    // Video is tested where it is asked for; the other tests skip its cost.
    .with_recording(qa_core::recording::Recording {
        video: qa_core::recording::RecordMode::Off,
        trace: qa_core::recording::RecordMode::Off,
        ..Default::default()
    });
    Run {
        _dir: dir,
        ctx,
        processes,
    }
}

/// What one step produced: its outcome, and the artifacts it wrote to the
/// run's evidence store.
#[derive(Debug, Clone, Default)]
pub struct Done {
    /// The step's detail.
    pub detail: Option<String>,
    /// The step's notes.
    pub notes: Vec<Note>,
    /// Artifacts the step published (its failure capture excluded).
    pub artifacts: Vec<Artifact>,
}

/// The note messages of a list of notes.
pub fn messages(notes: &[Note]) -> Vec<String> {
    notes.iter().map(|n| n.message.clone()).collect()
}

/// What running a flow produced.
pub struct Outcome {
    /// Per step: Ok(detail) or Err(code: message). A step listed in
    /// [`run_flow_expecting`] that failed as expected is `Ok` with the
    /// failure as its detail (and in `expected_failures`).
    pub steps: Vec<Result<Done, String>>,
    /// Per step: how many times the driver was called (its last attempt).
    pub verifies: Vec<u32>,
    /// `(step index, code: message)` of every step that failed as expected.
    pub expected_failures: Vec<(usize, String)>,
    /// Every note, in order: the steps' and the close's.
    pub observations: Vec<String>,
    /// What closing did.
    pub close: CloseResult,
    /// Artifacts not tied to a step (the logs written at close).
    pub close_artifacts: Vec<Artifact>,
    /// `<run>/work/chromium-profile`.
    pub profile_dir: PathBuf,
    /// The directory the profile really is (the same, or, when the browser
    /// runs as its own user, where `work/chromium-profile` links to).
    pub real_profile_dir: PathBuf,
    /// The drive itself (keeps the run directory alive while the test
    /// inspects artifacts).
    pub drive: Drive,
}

impl Outcome {
    /// `<run>/work`: the run's scratch directories.
    pub fn work_dir(&self) -> PathBuf {
        self.profile_dir.parent().unwrap().to_path_buf()
    }

    /// The first unexpected failure, as `code: message`.
    pub fn failure(&self) -> Option<&String> {
        self.steps.iter().find_map(|s| s.as_ref().err())
    }
}

/// Runs a flow through `conformance::drive` (the runner's own step
/// semantics: actions once, assertions on the cadence); stops at the first
/// failure.
pub async fn run_flow(flow_text: &str, base_dir: &Path) -> Outcome {
    run_flow_expecting(flow_text, base_dir, &[]).await
}

/// A step that must fail with `code` (a prefix of `code: message`). The
/// step is run again on the cadence until it does — it waits for an event
/// (say, a popup's target going away) instead of sleeping: the codes in
/// `transient` are retried; holding, any other failure or the step deadline
/// end the run there like a failure.
pub struct Expect<'a> {
    /// 0-based step index.
    pub step: usize,
    /// The code it must fail with.
    pub code: &'a str,
    /// Codes that may be seen while the event is still under way.
    pub transient: &'a [&'a str],
}

/// How a step listed in [`Expect`] ended.
fn judge(x: &Expect<'_>, end: &StepEnd) -> Result<String, String> {
    match describe_end(end) {
        Err(e) if e.starts_with(x.code) => Ok(e),
        Err(e) => Err(format!("expected {}, got {e}", x.code)),
        Ok(_) => Err(format!("expected {}, but the step passed", x.code)),
    }
}

/// [`run_flow`], with steps whose failure is the expected outcome: the run
/// goes on after them (see [`Expect`]).
pub async fn run_flow_expecting(
    flow_text: &str,
    base_dir: &Path,
    expect: &[Expect<'_>],
) -> Outcome {
    let flow = parse_flow(flow_text, base_dir);
    let driver = qa_web::WebDriver::new();
    let opts = DriveOptions {
        flow_timeout: Some(std::time::Duration::from_secs(120)),
        ..Default::default()
    };
    let drive = conformance::drive(&driver, &flow, opts, |step, run| {
        let Some(x) = expect.iter().find(|x| x.step == step.index) else {
            return conformance::stop_on_failure(step, run);
        };
        match (judge(x, &run.end), end_error(&run.end)) {
            (Ok(_), _) => Next::Continue,
            (Err(_), Some(e)) if x.transient.iter().any(|t| e.code.starts_with(t)) => Next::Retry,
            (Err(_), _) => Next::Stop,
        }
    })
    .await;
    let failure_capture: Vec<&str> = drive
        .failure_evidence
        .iter()
        .map(|a| a.path.as_str())
        .collect();
    let all = drive.artifacts();
    let mut steps = Vec::new();
    let mut verifies = Vec::new();
    let mut expected_failures = Vec::new();
    if let Some(e) = &drive.open_error {
        steps.push(Err(describe_open(e)));
        verifies.push(0);
    }
    for s in &drive.steps {
        let artifacts: Vec<Artifact> = all
            .iter()
            .filter(|a| a.step == Some(s.index + 1) && !failure_capture.contains(&a.path.as_str()))
            .cloned()
            .collect();
        let r = match expect.iter().find(|x| x.step == s.index) {
            Some(x) => judge(x, &s.run.end).map(|e| {
                expected_failures.push((s.index, e.clone()));
                Some(e)
            }),
            None => describe_end(&s.run.end).map(|d| (!d.is_empty()).then_some(d)),
        };
        steps.push(r.map(|detail| Done {
            detail,
            notes: s.run.notes.clone(),
            artifacts,
        }));
        verifies.push(s.run.calls);
    }
    Outcome {
        steps,
        verifies,
        expected_failures,
        observations: drive.notes(),
        close: drive.close.clone(),
        close_artifacts: all.iter().filter(|a| a.step.is_none()).cloned().collect(),
        profile_dir: drive.run_dir().join("work/chromium-profile"),
        real_profile_dir: real_path(&drive.run_dir().join("work/chromium-profile")),
        drive,
    }
}

fn describe_open(e: &DriverError) -> String {
    let blocked: Vec<&str> = e.missing.iter().map(|m| m.id.as_str()).collect();
    if blocked.is_empty() {
        format!("{}: {}", e.code, e.message)
    } else {
        format!(
            "{}: {} [blocked: {}]",
            e.code,
            e.message,
            blocked.join(", ")
        )
    }
}

/// Where `p` really is: the target of a scratch link (a directory made for
/// the browser's own user), else `p`.
pub fn real_path(p: &Path) -> PathBuf {
    std::fs::read_link(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Pids whose command line mentions `needle`.
#[cfg(not(target_os = "linux"))]
pub fn processes_mentioning(needle: &Path) -> Vec<u32> {
    let n = needle.display().to_string();
    #[cfg(windows)]
    let out = std::process::Command::new("powershell")
        .args([
            "-NoProfile",
            "-NonInteractive",
            "-Command",
            &format!(
                "Get-CimInstance Win32_Process | Where-Object {{ $_.ProcessId -ne $PID -and $_.CommandLine -and $_.CommandLine.Contains('{}') }} | ForEach-Object {{ $_.ProcessId }}",
                n.replace('\'', "''")
            ),
        ])
        .output()
        .expect("PowerShell lists processes");
    #[cfg(not(windows))]
    let out = std::process::Command::new("ps")
        .args(["-axww", "-o", "pid=,command="])
        .output()
        .expect("ps lists processes");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines()
        .filter(|l| cfg!(windows) || l.contains(&n))
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .filter(|&pid| pid != std::process::id())
        .collect()
}

/// Pids whose command line mentions `needle`.
#[cfg(target_os = "linux")]
pub fn processes_mentioning(needle: &Path) -> Vec<u32> {
    let n = needle.display().to_string();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if let Ok(c) = std::fs::read(format!("/proc/{pid}/cmdline")) {
            let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map(|s| {
                    s.rsplit(')')
                        .next()
                        .unwrap_or("")
                        .trim_start()
                        .starts_with('Z')
                })
                .unwrap_or(true);
            if String::from_utf8_lossy(&c).contains(&n) && !zombie {
                out.push(pid);
            }
        }
    }
    out
}

/// Runs a flow against the web fixtures and checks that closing left no
/// process behind (the cleanup report and `/proc` agree).
pub async fn run(flow: &str) -> Outcome {
    run_expecting(flow, &[]).await
}

/// [`run`] with steps whose failure is expected (see [`Expect`]).
pub async fn run_expecting(flow: &str, expect: &[Expect<'_>]) -> Outcome {
    let o = run_flow_expecting(flow, &fixtures(), expect).await;
    assert!(
        o.close.cleanup.left.is_empty(),
        "cleanup left processes: {:?}",
        o.close.cleanup.left
    );
    assert!(
        processes_mentioning(&o.real_profile_dir).is_empty(),
        "a Chromium process outlived close"
    );
    o
}
