//! What another local user can reach of a running browser flow: nothing.
//! The browser speaks DevTools over a pipe (no listening socket of its
//! own), and the run's listeners — the containment proxy and the
//! `target.serve` server — hang up on every process of another user; the
//! served directory never hands out hidden or private files, not even to
//! the run's own user.
//!
//! The flow waits on an event the test makes (a file the page polls for),
//! so the attacks happen while the run is live, however slow the machine.

#![cfg(target_os = "linux")]

mod common;

use common::{bin, proc_stat, wait_until};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// The real uid of `pid`.
fn uid_of(pid: u32) -> Option<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find(|l| l.starts_with("Uid:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// `(port, pid)` of every listening TCP socket (`ss -ltnpH`).
fn listeners() -> Vec<(u16, u32)> {
    let o = Command::new("ss").args(["-ltnpH"]).output().unwrap();
    assert!(
        o.status.success(),
        "ss: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut out = Vec::new();
    for line in String::from_utf8_lossy(&o.stdout).lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let Some(port) = f.get(3).and_then(|a| a.rsplit(':').next()?.parse().ok()) else {
            continue;
        };
        for part in line.split("pid=").skip(1) {
            if let Ok(pid) = part.split(',').next().unwrap_or("").parse() {
                out.push((port, pid));
            }
        }
    }
    out
}

/// `curl`'s body and whether it got an HTTP answer, run as `uid` (None:
/// this user); `proxy`: through that proxy port.
fn curl(uid: Option<u32>, url: &str, proxy: Option<u16>) -> (bool, String) {
    let mut c = match uid {
        Some(u) => {
            let mut c = Command::new("setpriv");
            c.arg(format!("--reuid={u}"))
                .arg(format!("--regid={u}"))
                .args(["--clear-groups", "curl"]);
            c
        }
        None => Command::new("curl"),
    };
    c.args(["-s", "-m", "10", "-o", "-", "-w", "\n%{http_code}"]);
    if let Some(p) = proxy {
        c.args(["-x", &format!("http://127.0.0.1:{p}")]);
    }
    let o = c.arg(url).stdin(Stdio::null()).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", &text));
    (code != "000", format!("{code} {body}"))
}

#[test]
fn another_local_user_reaches_neither_the_browser_nor_the_served_files() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let site = dir.path().join("site");
    std::fs::create_dir_all(site.join(".git")).unwrap();
    std::fs::write(site.join(".git/config"), "[core] secret-git-7").unwrap();
    std::fs::write(site.join(".env"), "TOKEN=secret-env-7").unwrap();
    std::fs::write(
        site.join("index.html"),
        r#"<h1 id="s">waiting</h1><script>
async function poll() {
  const r = await fetch('/done.txt', { cache: 'no-store' });
  if (r.ok) document.getElementById('s').textContent = 'done';
  else setTimeout(poll, 1000);
}
setTimeout(poll, 1000);
</script>"#,
    )
    .unwrap();
    // The served tree lets other users read it: only ui-qa's own checks
    // stand between them and the files.
    for p in [dir.path(), site.as_path()] {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let flow = dir.path().join("wait.jsonc");
    std::fs::write(
        &flow,
        r#"{"timeoutMs":120000,"target":{"serve":"site","url":"/index.html"},
            "steps":[{"action":"assertText","locator":{"role":"heading"},"equals":"done","timeoutMs":110000}]}"#,
    )
    .unwrap();
    let child = Command::new(bin())
        .args(["run", "--json", "--video", "off", "--workspace"])
        .arg(&ws)
        .arg(&flow)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let ui_qa = child.id();

    // The run is live once its page loaded from the static server.
    let static_port = std::cell::Cell::new(0u16);
    let live = wait_until(Duration::from_secs(90), || {
        listeners()
            .into_iter()
            .filter(|(_, pid)| *pid == ui_qa)
            .any(|(port, _)| {
                let (_, body) = curl(None, &format!("http://127.0.0.1:{port}/index.html"), None);
                let ok = body.starts_with("200") && body.contains("waiting");
                if ok {
                    static_port.set(port);
                }
                ok
            })
    });
    assert!(live, "the run's static server never answered");
    let static_port = static_port.get();
    let own_ports: Vec<u16> = listeners()
        .into_iter()
        .filter(|(_, pid)| *pid == ui_qa)
        .map(|(p, _)| p)
        .collect();
    let proxy_port = *own_ports
        .iter()
        .find(|p| **p != static_port)
        .expect("the containment proxy listens");

    // No process of the browser listens on any socket.
    let browser = common::descendants(ui_qa);
    assert!(
        browser
            .iter()
            .any(|p| proc_stat(*p).is_some_and(|(c, _, _)| c.contains("chrom"))),
        "no browser under ui-qa: {browser:?}"
    );
    let browser_listens: Vec<(u16, u32)> = listeners()
        .into_iter()
        .filter(|(_, pid)| browser.contains(pid))
        .collect();
    assert!(browser_listens.is_empty(), "{browser_listens:?}");

    // The run's own user: hidden files are never served.
    let url = |p: &str| format!("http://127.0.0.1:{static_port}{p}");
    for p in ["/.env", "/.git/config", "/%2eenv"] {
        let (_, body) = curl(None, &url(p), None);
        assert!(body.starts_with("404"), "{p}: {body}");
    }

    // Another user gets no answer, directly or through the proxy.
    let root = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .and_then(|l| l.split_whitespace().nth(2).map(|u| u == "0"))
        .unwrap_or(false);
    if root {
        // As root, the browser runs as a user of its own, sandboxed: a
        // taken-over browser holds neither root's files nor its rights.
        let chromium: Vec<u32> = browser
            .iter()
            .copied()
            .filter(|p| proc_stat(*p).is_some_and(|(c, _, _)| c.contains("chrom")))
            .collect();
        let uids: std::collections::BTreeSet<u32> =
            chromium.iter().filter_map(|p| uid_of(*p)).collect();
        assert_eq!(uids.len(), 1, "browser processes' uids: {uids:?}");
        let browser_uid = *uids.iter().next().unwrap();
        assert!(browser_uid != 0 && browser_uid != 65534, "{browser_uid}");
        for p in &chromium {
            let cmd = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
            assert!(
                !String::from_utf8_lossy(&cmd).contains("--no-sandbox"),
                "Chromium runs without its sandbox: {}",
                String::from_utf8_lossy(&cmd)
            );
        }
        // Neither root's other processes nor another user reach the run's
        // listeners.
        for (who, uid) in [("root", None), ("another user", Some(65534))] {
            let (answered, body) = curl(uid, &url("/index.html"), Some(proxy_port));
            assert!(!answered, "{who} was answered through the proxy: {body}");
        }
        let (answered, body) = curl(Some(65534), &url("/index.html"), None);
        assert!(!answered, "another user was answered directly: {body}");
        // The same request as the browser's user is answered (the refusal
        // is about who asks).
        let (answered, body) = curl(Some(browser_uid), &url("/index.html"), Some(proxy_port));
        assert!(answered && body.starts_with("200"), "{body}");
    } else {
        eprintln!("not root: the other-user requests are checked only as root (CI runs as root)");
    }

    std::fs::write(site.join("done.txt"), "done").unwrap();
    let out = child.wait_with_output().unwrap();
    let r: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(r["status"], "PASSED", "{r:#}");
    assert!(Path::new(&ws).join("runs").is_dir());
}

/// A host where Chromium's sandbox cannot work (no user namespaces, no
/// setuid helper: Chromium says "No usable sandbox" and exits) still runs
/// the flow: the browser starts again without the sandbox — as its own
/// unprivileged user when ui-qa is root — and the result says so.
///
/// The refusal is Chromium's own message, replayed by a wrapper in front of
/// the real browser, because this host's sandbox does work.
#[test]
fn without_a_usable_sandbox_the_browser_runs_unsandboxed_and_the_result_says_so() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("tools");
    std::fs::create_dir(&tools).unwrap();
    let chromium = ["/usr/bin/chromium", "/usr/lib/chromium/chromium"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("Chromium is installed (cargo xtask deps)");
    let wrapper = tools.join("chromium-without-sandbox");
    std::fs::write(
        &wrapper,
        format!(
            r#"#!/bin/sh
for a in "$@"; do
  if [ "$a" = --no-sandbox ]; then
    id -u > {log}
    exec {chromium} "$@"
  fi
done
echo "[1:1:FATAL:zygote_host_impl_linux.cc(128)] No usable sandbox! (replayed by the test)" >&2
exit 1
"#,
            log = tools.join("uid").display()
        ),
    )
    .unwrap();
    // The browser's user (as root, not this one) runs the wrapper and
    // leaves its uid beside it.
    for (p, mode) in [
        (dir.path(), 0o755),
        (tools.as_path(), 0o777),
        (wrapper.as_path(), 0o755),
    ] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let site = dir.path().join("site");
    std::fs::create_dir(&site).unwrap();
    std::fs::write(site.join("index.html"), "<h1>hello</h1>").unwrap();
    let flow = dir.path().join("hello.jsonc");
    std::fs::write(
        &flow,
        r#"{"target":{"serve":"site","url":"/index.html"},
            "steps":[{"action":"assertText","locator":{"role":"heading"},"equals":"hello"}]}"#,
    )
    .unwrap();
    let wrapper_arg = wrapper.display().to_string();
    let (_, r) = common::run_json(
        &flow,
        &dir.path().join("ws"),
        &["--video", "off", "--browser", &wrapper_arg],
        |c| {
            c.stdin(Stdio::null());
        },
    );
    assert_eq!(r["status"], "PASSED", "{r:#}");
    let said = r["observations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["message"].as_str())
        .find(|m| m.contains("sandbox cannot work on this host"))
        .unwrap_or_else(|| panic!("no note about the sandbox: {r:#}"))
        .to_string();
    let uid: u32 = std::fs::read_to_string(tools.join("uid"))
        .expect("the browser started with --no-sandbox")
        .trim()
        .parse()
        .unwrap();
    let root = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"));
    if root {
        assert!(uid != 0, "the unsandboxed browser ran as root");
        assert!(said.contains(&format!("uid {uid}")), "{said}");
    }
}
