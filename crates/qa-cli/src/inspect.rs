//! `ui-qa inspect URL | -- COMMAND…`: open a page or a terminal program,
//! print what it shows — for a page each element one can act on with a
//! reference and the flow locator to use for every element; for a terminal
//! the screen, cursor and modes — then end everything that was started.

use crate::exit;
use qa_core::driver::RunOptions;
use qa_core::observe::{locator_text, Observation, ObservedElement};
use qa_core::recording::RecordMode;
use qa_core::result::RunStatus;
use qa_core::Secrets;
use qa_runner::runner::interactive::{Interactive, On, SessionConfig, SessionError};

/// How long opening and reading the page may take.
const INSPECT_TIMEOUT_MS: u64 = 60_000;

/// How long an application's tree may take to settle after its window
/// shows.
const APP_SETTLE: std::time::Duration = std::time::Duration::from_secs(5);

/// How to inspect: the kind of command, the output, and what to do before
/// reading the target.
pub struct How {
    /// The command is a desktop application.
    pub app: bool,
    /// The page opens in a browser ui-qa did not start (its DevTools
    /// endpoint).
    pub connect: Option<String>,
    /// Print JSON.
    pub json: bool,
    /// Text to wait for before reading.
    pub wait_for: Option<String>,
    /// Flow steps to run first, in order.
    pub steps: Vec<serde_json::Value>,
}

/// Runs `ui-qa inspect`; returns the exit code.
pub async fn run(url: Option<&str>, command: &[String], how: How, options: RunOptions) -> u8 {
    let How {
        app,
        connect,
        json,
        wait_for,
        steps,
    } = how;
    let wait = |text: &str| serde_json::json!({ "action": "waitForText", "text": text, "timeoutMs": 15000 });
    let (target, mut first) = match (url, command.is_empty()) {
        (None, false) if app => (
            serde_json::json!({ "application": { "launch": { "argv": command } } }),
            vec![serde_json::json!({ "action": "waitForWindow", "timeoutMs": 15000 })],
        ),
        (Some(u), true) if !app => {
            let mut t = serde_json::json!({ "url": u });
            if let Some(c) = &connect {
                t["browser"] = serde_json::json!({ "connect": c });
            }
            (t, Vec::new())
        }
        (None, false) => (
            serde_json::json!({ "command": { "argv": command } }),
            // A program that draws late (a cold start): its text, when
            // given, rather than the first quiet half second.
            vec![match &wait_for {
                Some(t) => wait(t),
                None => {
                    serde_json::json!({ "action": "waitForStable", "stableMs": 500, "timeoutMs": 15000 })
                }
            }],
        ),
        _ => {
            eprintln!(
                "error: give a URL, or a terminal program after `--` (ui-qa inspect -- htop)"
            );
            return exit::INVALID;
        }
    };
    first.extend(steps);
    if let (Some(t), Some(_)) = (&wait_for, url) {
        // In a page: an element whose text holds it.
        first.push(serde_json::json!({ "action": "waitFor", "locator": { "text": t }, "timeoutMs": 15000 }));
    } else if let (Some(t), true) = (&wait_for, app) {
        first.push(serde_json::json!({ "action": "waitFor", "locator": { "name": t, "exact": false }, "timeoutMs": 15000 }));
    }
    // A private scratch workspace: inspecting keeps no run.
    let ws =
        std::env::temp_dir().join(format!("ui-qa-inspect-{}", qa_runner::runner::new_run_id()));
    let mut config = SessionConfig::new(&ws);
    config.options = RunOptions {
        video: Some(RecordMode::Off),
        trace: Some(RecordMode::Off),
        ..options
    };
    config.timeout_ms = INSPECT_TIMEOUT_MS;
    let code = inspect(target, first, json, config).await;
    let _ = std::fs::remove_dir_all(&ws);
    code
}

/// Opens the target as an interactive session, waits for it (a terminal
/// program's stable screen, an application's window), prints one
/// observation and aborts the session (ending what it started).
async fn inspect(
    target: serde_json::Value,
    first: Vec<serde_json::Value>,
    json: bool,
    config: SessionConfig,
) -> u8 {
    let secrets = config.secrets.clone();
    let drivers = crate::drivers::all();
    let app = target.get("application").is_some();
    let mut session = match Interactive::start(&drivers, target, config).await {
        Ok(s) => s,
        Err(SessionError::NotOpened(r)) => {
            let blocked = r.status == RunStatus::Blocked;
            eprintln!(
                "{}: {}: {}",
                if blocked { "BLOCKED" } else { "error" },
                r.reason_code.as_deref().unwrap_or("run"),
                r.reason
                    .as_deref()
                    .unwrap_or("the target could not be opened")
            );
            if let Some(h) = &r.blocked_handoff {
                eprintln!("  fix: {}", h.remediation);
            }
            return if blocked { exit::BLOCKED } else { exit::FAILED };
        }
        Err(e) => {
            eprintln!(
                "error: this cannot be inspected: {}",
                secrets.redact(&e.to_string())
            );
            return exit::INVALID;
        }
    };
    for (i, step) in first.into_iter().enumerate() {
        let action = step["action"].as_str().unwrap_or("").to_string();
        match session.act(On::Nothing, step).await {
            Ok(o) if o.status == qa_core::result::StepStatus::Passed => {}
            // The first wait of a terminal or an application is a best
            // effort: what is there is printed anyway.
            Ok(_) if i == 0 && matches!(action.as_str(), "waitForStable" | "waitForWindow") => {}
            Ok(o) => {
                let _ = session.abort().await;
                eprintln!(
                    "error: {action} did not pass: {}",
                    secrets.redact(o.reason.as_deref().unwrap_or("no reason given"))
                );
                return exit::FAILED;
            }
            Err(e) => {
                let _ = session.abort().await;
                eprintln!("error: --step {action}: {}", secrets.redact(&e.to_string()));
                return exit::INVALID;
            }
        }
    }
    let mut observed = session.observe().await;
    if app {
        // An application fills its tree after its window shows (GTK 4
        // registers a window's buttons after its labels): read again until
        // two reads in a row list as many elements, for at most a few
        // seconds.
        let until = std::time::Instant::now() + APP_SETTLE;
        while std::time::Instant::now() < until {
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            let again = session.observe().await;
            let same = matches!((&observed, &again), (Ok(a), Ok(b)) if a.elements.len() == b.elements.len());
            observed = again;
            if same {
                break;
            }
        }
    }
    let _ = session.abort().await;
    match observed {
        Ok(mut o) => {
            o.id = "inspect".into();
            renumber(&mut o);
            print(&o, json, &secrets, app);
            exit::PASSED
        }
        Err(e) => {
            eprintln!("error: {}", secrets.redact(&e.to_string()));
            exit::FAILED
        }
    }
}

/// The number of a reference (`@e12` → 12).
fn ref_number(r: &str) -> Option<u64> {
    r.strip_prefix("@e").and_then(|n| n.parse().ok())
}

/// The session numbers references across its reads; what is printed is
/// one observation, numbered from `@e1` in the order the driver gave
/// (a desktop driver numbers buttons first).
fn renumber(o: &mut Observation) {
    let mut numbered: Vec<(u64, usize)> = o
        .elements
        .iter()
        .enumerate()
        .filter_map(|(k, e)| Some((ref_number(e.reference.as_deref()?)?, k)))
        .collect();
    numbered.sort_unstable();
    for (n, (_, k)) in numbered.into_iter().enumerate() {
        o.elements[k].reference = Some(format!("@e{}", n + 1));
    }
}

/// One element as a line: reference, role, name, value, states, context
/// and, with `locator`, the flow locator that finds it.
fn element_line(e: &ObservedElement, indent: usize, locator: bool) -> String {
    let mut line = "  ".repeat(indent);
    if let Some(r) = &e.reference {
        line.push_str(r);
        line.push(' ');
    }
    line.push_str(&e.role);
    if !e.name.is_empty() {
        line.push_str(&format!(" {:?}", e.name));
    }
    if let Some(v) = &e.value {
        line.push_str(&format!(" = {v:?}"));
    }
    if !e.states.is_empty() {
        line.push_str(&format!(" [{}]", e.states.join(", ")));
    }
    if let Some(c) = &e.context {
        line.push_str(&format!(" (in {c:?})"));
    }
    if !locator {
        return line;
    }
    match &e.locator {
        Some(l) => line.push_str(&format!("  {}", locator_text(l))),
        None if e.reference.is_some() || !e.name.is_empty() => {
            line.push_str("  (no locator finds only this element)")
        }
        // An unnamed list, item or paragraph only orients.
        None => {}
    }
    line
}

/// An application: every element one acts on, by reference (buttons
/// first), with its locator; then the window as a tree, where those
/// elements appear by reference among the labels and menus around them.
fn print_app(o: &Observation, secrets: &Secrets) {
    let mut acting: Vec<(u64, &ObservedElement)> = o
        .elements
        .iter()
        .filter_map(|e| Some((ref_number(e.reference.as_deref()?)?, e)))
        .collect();
    acting.sort_unstable_by_key(|(n, _)| *n);
    let mut out = String::new();
    if !acting.is_empty() {
        out.push_str(&format!(
            "{} element(s) to act on, buttons first:\n",
            acting.len()
        ));
        for (_, e) in &acting {
            out.push_str(&element_line(e, 1, true));
            out.push('\n');
        }
        out.push_str("the window, in tree order:\n");
    }
    for e in &o.elements {
        let acts = e.reference.is_some();
        out.push_str(&element_line(e, e.depth, !acts));
        out.push('\n');
    }
    crate::console::write(format_args!("{}", secrets.redact(&out)));
}

fn print(o: &Observation, json: bool, secrets: &Secrets, app: bool) {
    if json {
        let mut v = serde_json::to_value(o).expect("observation serializes");
        secrets.redact_json(&mut v);
        crate::console::write(format_args!(
            "{}\n",
            serde_json::to_string_pretty(&v).expect("json")
        ));
        return;
    }
    if let Some(sc) = &o.screen {
        let shown = sc
            .lines
            .iter()
            .rposition(|l| !l.is_empty())
            .map_or(0, |i| i + 1);
        let mut out = format!(
            "terminal {}x{}, cursor row {} col {}, modes: {}\n",
            sc.cols,
            sc.rows,
            sc.cursor_row,
            sc.cursor_col,
            if sc.modes.is_empty() {
                "none".to_string()
            } else {
                sc.modes.join(", ")
            }
        );
        for l in &sc.lines[..shown] {
            out.push_str(&format!("│{l}\n"));
        }
        if shown < sc.rows {
            out.push_str(&format!("({} empty row(s) below)\n", sc.rows - shown));
        }
        out.push_str("flow steps: waitForText / assertText with text from the screen; assertCursor { row, col }\n");
        crate::console::write(format_args!("{}", secrets.redact(&out)));
        return;
    }
    if app {
        print_app(o, secrets);
    } else {
        print_page(o, secrets);
    }
    if o.truncated {
        crate::console::write(format_args!(
            "… more elements than these (left out; at most {} are listed, and of a very big page only its top is read)\n",
            qa_core::observe::MAX_ELEMENTS
        ));
    }
    if o.elements.is_empty() {
        crate::console::write(format_args!("(no element to act on or orient by)\n"));
    }
}

/// A page: its elements and text in tree order.
fn print_page(o: &Observation, secrets: &Secrets) {
    if let Some(u) = &o.url {
        let title = o.title.as_deref().unwrap_or("");
        crate::console::write(format_args!(
            "{}\n",
            secrets.redact(&format!("page {u} {title:?}"))
        ));
    }
    for e in &o.elements {
        // Text the page shows: the words only.
        let line = if e.role == "text" && e.reference.is_none() {
            format!("{}{:?}", "  ".repeat(e.depth), e.name)
        } else {
            element_line(e, e.depth, true)
        };
        crate::console::write(format_args!("{}\n", secrets.redact(&line)));
    }
}
