//! Every X display a run starts (`--virtual-display`) is private to the
//! run: another local user can neither connect to it, nor read its
//! pixels, nor inject XTEST input, while the run's own clients (ui-qa,
//! the terminal window, the application, the session bus) work.
//!
//! The attack runs as uid 65534 (`setpriv`) while the run is live: the
//! flow waits for a file the test creates only after the attack, and the
//! program tells the test it is up through another file. The attacker is
//! this test binary itself (a copy every user can run), re-run with
//! [`ATTACK`] set, speaking X11 with x11rb over the display's filesystem
//! socket (with no authority, and with a forged cookie), its abstract
//! socket and `x11rb::connect` with `XAUTHORITY` naming nothing. As a
//! control, the same user given the run's real cookie gets in: the
//! socket is reachable, the cookie is what keeps others out.

#![cfg(target_os = "linux")]

mod common;

use common::{bin, proc_stat, wait_until, write};
use serde_json::{json, Value};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The display number the attacker process attacks (set only for it).
const ATTACK: &str = "UI_QA_TEST_X_ATTACK";
/// For the control only: the run's cookie, hex.
const COOKIE: &str = "UI_QA_TEST_X_COOKIE";
/// The run's authority file, which the attacker tries to read.
const AUTH_FILE: &str = "UI_QA_TEST_X_AUTH_FILE";
/// The line the attacker prints its findings on.
const REPORT: &str = "X-ATTACK-REPORT ";

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .and_then(|l| l.split_whitespace().nth(2).map(|u| u == "0"))
        .unwrap_or(false)
}

fn cmdline(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .unwrap_or_default()
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect()
}

fn environ(pid: u32) -> Vec<(String, String)> {
    std::fs::read(format!("/proc/{pid}/environ"))
        .unwrap_or_default()
        .split(|b| *b == 0)
        .filter_map(|p| {
            let s = String::from_utf8_lossy(p);
            let (k, v) = s.split_once('=')?;
            Some((k.to_string(), v.to_string()))
        })
        .collect()
}

/// The socket inodes `pid` holds.
fn socket_inodes(pid: u32) -> Vec<String> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| {
            d.flatten()
                .filter_map(|e| std::fs::read_link(e.path()).ok())
                .filter_map(|l| {
                    let l = l.to_string_lossy().into_owned();
                    Some(l.strip_prefix("socket:[")?.strip_suffix(']')?.to_string())
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The inodes of the sockets in `/proc/net/<table>` (column `col`).
fn table_inodes(table: &str, col: usize) -> Vec<(String, String)> {
    std::fs::read_to_string(format!("/proc/net/{table}"))
        .unwrap_or_default()
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some((
                f.get(col)?.to_string(),
                f.get(col + 1).unwrap_or(&"").to_string(),
            ))
        })
        .collect()
}

/// The run's Xvfb: its pid, display number (from the sockets it listens
/// on), and the authority file it was given (`-auth`), if any.
struct RunXvfb {
    pid: u32,
    display: u32,
    auth: Option<PathBuf>,
}

fn find_xvfb(ui_qa: u32) -> Option<RunXvfb> {
    let pid = common::descendants(ui_qa)
        .into_iter()
        .find(|p| proc_stat(*p).is_some_and(|(c, _, _)| c == "Xvfb"))?;
    let mine = socket_inodes(pid);
    // /proc/net/unix: Num RefCount Protocol Flags Type St Inode Path
    let display = table_inodes("unix", 6)
        .into_iter()
        .filter(|(inode, _)| mine.contains(inode))
        .find_map(|(_, path)| {
            path.trim_start_matches('@')
                .strip_prefix("/tmp/.X11-unix/X")?
                .parse()
                .ok()
        })?;
    let argv = cmdline(pid);
    let auth = argv
        .iter()
        .position(|a| a == "-auth")
        .and_then(|i| argv.get(i + 1))
        .map(PathBuf::from);
    Some(RunXvfb { pid, display, auth })
}

/// What happened to each way in, as uid 65534.
fn attack_as_nobody(dir: &Path, x: &RunXvfb, cookie: Option<&[u8]>) -> Value {
    // A copy of this test binary every user can run.
    let attacker = dir.join("attacker");
    if !attacker.exists() {
        std::fs::copy(std::env::current_exe().unwrap(), &attacker).unwrap();
        std::fs::set_permissions(&attacker, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let mut c = Command::new("setpriv");
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&attacker)
        .args(["--exact", "x_client_of_another_user", "--nocapture"])
        .args(["--test-threads", "1"])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env(ATTACK, x.display.to_string())
        .env("XAUTHORITY", "/nonexistent/Xauthority")
        .stdin(Stdio::null());
    if let Some(a) = &x.auth {
        c.env(AUTH_FILE, a);
    }
    if let Some(k) = cookie {
        c.env(COOKIE, hex(k));
    }
    let o = c.output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let line = out
        .lines()
        .find_map(|l| Some(&l[l.find(REPORT)? + REPORT.len()..]))
        .unwrap_or_else(|| {
            panic!(
                "the attacker reported nothing: {out}\n{}",
                String::from_utf8_lossy(&o.stderr)
            )
        });
    serde_json::from_str(line).unwrap()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// The attacker (only when run by [`attack_as_nobody`], as uid 65534):
/// tries every way onto the display and prints what it got.
#[test]
fn x_client_of_another_user() {
    let Ok(n) = std::env::var(ATTACK) else {
        return;
    };
    let n: u32 = n.parse().unwrap();
    let mut report = serde_json::Map::new();
    if let Ok(cookie) = std::env::var(COOKIE) {
        // The control: the real cookie on the socket every user reaches.
        let r = attacker::session(attacker::socket(n), Some(&unhex(&cookie)), false);
        report.insert("control".into(), r);
    } else {
        report.insert(
            "socket".into(),
            attacker::session(attacker::socket(n), None, true),
        );
        report.insert(
            "abstract".into(),
            attacker::session(attacker::abstract_socket(n), None, true),
        );
        report.insert(
            "forged-cookie".into(),
            attacker::session(attacker::socket(n), Some(&[0u8; 16]), true),
        );
        report.insert("x11rb-connect".into(), attacker::default_connect(n));
        report.insert(
            "auth-file".into(),
            match std::env::var(AUTH_FILE) {
                Ok(f) => match std::fs::read(&f) {
                    Ok(b) => json!({ "read": b.len() }),
                    Err(e) => json!({ "refused": e.to_string() }),
                },
                Err(_) => json!({ "refused": "no authority file" }),
            },
        );
    }
    println!("{REPORT}{}", Value::Object(report));
}

/// The attacker's X11 client.
mod attacker {
    use serde_json::{json, Value};
    use std::os::unix::net::UnixStream;
    use x11rb::connection::Connection;
    use x11rb::protocol::xproto::{
        ConnectionExt as _, ImageFormat, KEY_PRESS_EVENT, KEY_RELEASE_EVENT,
    };
    use x11rb::protocol::xtest::ConnectionExt as _;
    use x11rb::rust_connection::{DefaultStream, RustConnection};

    /// The display's filesystem socket (every user may connect to it).
    pub(super) fn socket(n: u32) -> std::io::Result<UnixStream> {
        UnixStream::connect(format!("/tmp/.X11-unix/X{n}"))
    }

    /// The display's abstract socket (no file permission at all).
    pub(super) fn abstract_socket(n: u32) -> std::io::Result<UnixStream> {
        use std::os::linux::net::SocketAddrExt;
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(
            format!("/tmp/.X11-unix/X{n}").as_bytes(),
        )?;
        UnixStream::connect_addr(&addr)
    }

    /// Connects over `stream` (with `cookie`, else no authority) and, if
    /// let in, reads root-window pixels and (with `inject`) sends XTEST
    /// key presses.
    pub(super) fn session(
        stream: std::io::Result<UnixStream>,
        cookie: Option<&[u8]>,
        inject: bool,
    ) -> Value {
        let stream = match stream.and_then(DefaultStream::from_unix_stream) {
            Ok((s, _)) => s,
            Err(e) => return json!({ "unreachable": e.to_string() }),
        };
        let (name, data) = match cookie {
            Some(c) => (b"MIT-MAGIC-COOKIE-1".to_vec(), c.to_vec()),
            None => (Vec::new(), Vec::new()),
        };
        match RustConnection::connect_to_stream_with_auth_info(stream, 0, name, data) {
            Ok(conn) => use_display(&conn, inject),
            Err(e) => json!({ "refused": e.to_string() }),
        }
    }

    /// `x11rb::connect` as any client would (`XAUTHORITY` names nothing).
    pub(super) fn default_connect(n: u32) -> Value {
        match x11rb::connect(Some(&format!(":{n}"))) {
            Ok((conn, _)) => use_display(&conn, true),
            Err(e) => json!({ "refused": e.to_string() }),
        }
    }

    fn use_display(conn: &RustConnection, inject: bool) -> Value {
        let screen = &conn.setup().roots[0];
        let (w, h) = (
            screen.width_in_pixels.min(256),
            screen.height_in_pixels.min(256),
        );
        let pixels = conn
            .get_image(ImageFormat::Z_PIXMAP, screen.root, 0, 0, w, h, !0)
            .map_err(|e| e.to_string())
            .and_then(|c| c.reply().map_err(|e| e.to_string()))
            .map(|r| r.data.len());
        let mut v = json!({ "connected": true, "pixels": format!("{pixels:?}") });
        if inject {
            let xtest = conn
                .xtest_get_version(2, 2)
                .map_err(|e| e.to_string())
                .and_then(|c| c.reply().map_err(|e| e.to_string()))
                .and_then(|_| {
                    // 'x' on a US layout, pressed and released.
                    for t in [KEY_PRESS_EVENT, KEY_RELEASE_EVENT] {
                        conn.xtest_fake_input(t, 53, 0, screen.root, 0, 0, 0)
                            .map_err(|e| e.to_string())?;
                    }
                    conn.get_input_focus()
                        .map_err(|e| e.to_string())?
                        .reply()
                        .map_err(|e| e.to_string())?;
                    Ok(())
                });
            v["xtest"] = json!(format!("{xtest:?}"));
        }
        v
    }
}

/// What one live run showed.
struct Findings {
    /// The attack's report (uid 65534 without the cookie).
    attack: Value,
    /// The control's report (uid 65534 with the run's cookie).
    control: Value,
    /// Everything else found wrong (authority file, listeners, programs
    /// on the display without the authority).
    problems: Vec<String>,
    /// The run's result.
    result: Value,
    /// The run's exit code.
    code: Option<i32>,
}

/// This process's uid (from /proc).
fn my_uid() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap()
}

/// What is wrong with the live run's display besides the attack: network
/// sockets, the authority file's modes, programs on the display without
/// the run's authority.
fn inspect(ui_qa: u32, x: &RunXvfb) -> Vec<String> {
    let mut problems = Vec::new();
    let mine = socket_inodes(x.pid);
    for (table, col) in [("tcp", 9), ("tcp6", 9), ("udp", 9), ("udp6", 9)] {
        let net: Vec<String> = table_inodes(table, col)
            .into_iter()
            .map(|(i, _)| i)
            .filter(|i| mine.contains(i))
            .collect();
        if !net.is_empty() {
            problems.push(format!("Xvfb has {table} sockets: {net:?}"));
        }
    }
    let Some(auth) = &x.auth else {
        problems.push("Xvfb was started without -auth".into());
        return problems;
    };
    for p in common::descendants(ui_qa) {
        let env = environ(p);
        if env.iter().any(|(k, _)| k == "DISPLAY") {
            let xa = env.iter().find(|(k, _)| k == "XAUTHORITY").map(|(_, v)| v);
            if xa.map(PathBuf::from).as_ref() != Some(auth) {
                problems.push(format!(
                    "{p} {:?} has DISPLAY without the run's XAUTHORITY ({xa:?})",
                    cmdline(p)
                ));
            }
        }
    }
    match std::fs::metadata(auth) {
        Ok(m) if m.mode() & 0o777 == 0o600 && m.uid() == my_uid() => {}
        other => problems.push(format!("{auth:?}: {other:?}")),
    }
    match std::fs::metadata(auth.parent().unwrap()) {
        Ok(m) if m.mode() & 0o777 == 0o700 => {}
        other => problems.push(format!("{:?}: {other:?}", auth.parent())),
    }
    problems
}

/// Starts `ui-qa run --virtual-display` on `flow`; waits for `ready`
/// (the program is up), attacks the run's display as uid 65534, looks at
/// the run's processes, then creates `go` (the flow can finish) and waits
/// for the result.
fn attack_a_live_run(dir: &Path, flow: &Path) -> Findings {
    let ready = dir.join("ready");
    let mut child = Command::new(bin())
        .args(["run", "--json", "--virtual-display", "--video", "off"])
        .arg("--workspace")
        .arg(dir.join("ws"))
        .arg(flow)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .env_remove("XAUTHORITY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let ui_qa = child.id();
    // Lets the flow finish, whatever happens in between.
    struct Go(PathBuf);
    impl Drop for Go {
        fn drop(&mut self) {
            let _ = std::fs::write(&self.0, "go");
        }
    }
    let go = Go(dir.join("go"));

    assert!(
        wait_until(Duration::from_secs(90), || ready.exists()),
        "the program never started"
    );
    let x = find_xvfb(ui_qa).expect("the run's Xvfb and its display socket");
    let attack = attack_as_nobody(dir, &x, None);
    // The control: the same user with the run's cookie (the last 16
    // bytes of the file).
    let control = match x.auth.as_ref().and_then(|a| std::fs::read(a).ok()) {
        Some(b) if b.len() >= 16 => attack_as_nobody(dir, &x, Some(&b[b.len() - 16..])),
        _ => json!({ "control": "no authority file" }),
    };
    let mut problems = inspect(ui_qa, &x);

    drop(go);
    let mut out = String::new();
    use std::io::Read;
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let code = child.wait().unwrap().code();
    let result: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    if let Some(a) = &x.auth {
        if a.exists() {
            problems.push(format!("{a:?} outlived the run"));
        }
    }
    Findings {
        attack,
        control,
        problems,
        result,
        code,
    }
}

/// Every way in was refused by the X server for want of the authority
/// (not by an unreachable socket), the file was not readable, the control
/// with the cookie got in and read pixels, nothing else was wrong, and the
/// run passed (its own clients had the authority).
fn assert_private(f: &Findings) {
    let (attack, control) = (&f.attack, &f.control);
    for way in ["socket", "abstract", "forged-cookie", "x11rb-connect"] {
        let r = &attack[way];
        let why = r["refused"]
            .as_str()
            .unwrap_or_else(|| panic!("uid 65534 was not refused over {way}: {attack:#}"));
        assert!(
            why.contains("uthoriz") || why.contains("MIT-MAGIC-COOKIE"),
            "{way}: refused for another reason than the authority: {why}"
        );
    }
    assert!(
        attack["auth-file"]["refused"].is_string(),
        "uid 65534 read the authority file: {attack:#}"
    );
    let c = &control["control"];
    assert_eq!(c["connected"], true, "the control was refused: {control:#}");
    assert!(
        c["pixels"].as_str().unwrap().starts_with("Ok("),
        "{control:#}"
    );
    assert!(f.problems.is_empty(), "{:#?}", f.problems);
    assert_eq!(f.code, Some(0), "{:#}", f.result);
    assert_eq!(f.result["status"], "PASSED", "{:#}", f.result);
}

#[test]
fn another_user_cannot_use_a_native_terminal_runs_display() {
    if !is_root() {
        eprintln!("skipped: acting as uid 65534 needs root (setpriv)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let script = format!(
        "printf 'private pixels\\n'; : > {ready}; until [ -e {go} ]; do sleep 0.1; done; echo DONE",
        ready = dir.path().join("ready").display(),
        go = dir.path().join("go").display(),
    );
    let flow = write(
        dir.path(),
        "terminal.jsonc",
        &format!(
            r#"{{"timeoutMs":120000,
                "target":{{"command":{{"argv":["/bin/sh","-c",{script:?}],"presentation":"native-terminal","terminal":"xterm"}}}},
                "steps":[{{"action":"waitForText","text":"DONE","timeoutMs":110000}}]}}"#
        ),
    );
    assert_private(&attack_a_live_run(dir.path(), &flow));
}

#[test]
fn another_user_cannot_use_a_desktop_runs_display() {
    if !is_root() {
        eprintln!("skipped: acting as uid 65534 needs root (setpriv)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let app = common::root().join("tests/fixtures/desktop/fixture_app.py");
    // The fixture sets its label to each line it reads: "done" once the
    // test creates `go`; it prints READY once its window is up.
    let script = format!(
        "{{ until [ -e {go} ]; do sleep 0.1; done; echo done; }} | /usr/bin/python3 {app} | {{ read l; : > {ready}; cat > /dev/null; }}",
        ready = dir.path().join("ready").display(),
        go = dir.path().join("go").display(),
        app = app.display(),
    );
    let flow = write(
        dir.path(),
        "desktop.jsonc",
        &format!(
            r#"{{"timeoutMs":120000,
                "target":{{"application":{{"launch":{{"argv":["/bin/sh","-c",{script:?}],"env":{{"UI_QA_FIXTURE_READY":"1"}}}}}}}},
                "steps":[{{"action":"waitForWindow","title":{{"equals":"ui-qa fixture"}}}},
                         {{"action":"assertText","locator":{{"automationId":"echo-label"}},"equals":"done","timeoutMs":110000}}]}}"#
        ),
    );
    assert_private(&attack_a_live_run(dir.path(), &flow));
}
