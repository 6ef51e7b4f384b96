//! `ui-qa inspect URL | -- COMMAND…`: open a page or a terminal program,
//! print what it shows — for a page each element one can act on with a
//! reference and the flow locator to use for every element; for a terminal
//! the screen, cursor and modes — then end everything that was started.

use crate::exit;
use qa_core::driver::{Host, RunOptions, SessionContext};
use qa_core::observe::{locator_text, Observation};
use qa_core::process::ProcessOwner;
use qa_core::recording::{RecordMode, Recording};
use qa_core::{Deadline, Evidence, Flow, Secrets};
use std::sync::Arc;

/// How long opening and reading the page may take.
const INSPECT_TIMEOUT_MS: u64 = 60_000;

/// Runs `ui-qa inspect`; returns the exit code.
pub async fn run(
    url: Option<&str>,
    command: &[String],
    app: bool,
    json: bool,
    options: RunOptions,
) -> u8 {
    let (target, first) = match (url, command.is_empty()) {
        (None, false) if app => (
            serde_json::json!({ "application": { "launch": { "argv": command } } }),
            serde_json::json!({ "action": "waitForWindow", "timeoutMs": 15000 }),
        ),
        (Some(u), true) if !app => (
            serde_json::json!({ "url": u }),
            serde_json::json!({ "action": "reload" }),
        ),
        (None, false) => (
            serde_json::json!({ "command": { "argv": command } }),
            serde_json::json!({ "action": "waitForStable", "stableMs": 500, "timeoutMs": 15000 }),
        ),
        _ => {
            eprintln!(
                "error: give a URL, or a terminal program after `--` (ui-qa inspect -- htop)"
            );
            return exit::INVALID;
        }
    };
    let text = serde_json::json!({ "target": target, "steps": [first] }).to_string();
    let flow = match Flow::parse(&text, std::path::Path::new(".")) {
        Ok(f) => f,
        Err(e) => {
            eprintln!(
                "error: this cannot be inspected: {} ({})",
                e.message, e.pointer
            );
            return exit::INVALID;
        }
    };
    let drivers = crate::drivers::all();
    let Some(sel) = qa_core::select::select(&drivers, &flow, &Host::current(), &options).await
    else {
        eprintln!("error: no driver handles browser targets in this build");
        return exit::INVALID;
    };
    if !sel.probe.available() {
        for m in &sel.probe.missing {
            eprintln!("BLOCKED: {} ({})\n  fix: {}", m.id, m.reason, m.remediation);
        }
        return exit::BLOCKED;
    }
    // A private scratch workspace: inspecting keeps no run.
    let ws = std::env::temp_dir().join(format!("ui-qa-inspect-{}", qa_core::runner::new_run_id()));
    let secrets = Arc::new(Secrets::from_env());
    let evidence = match Evidence::create(&ws, "inspect", secrets.clone()) {
        Ok(e) => Arc::new(e),
        Err(e) => {
            eprintln!("error: {e}");
            return exit::INVALID;
        }
    };
    let processes = Arc::new(ProcessOwner::new());
    let deadline = Deadline::after_ms(INSPECT_TIMEOUT_MS);
    let ctx = SessionContext {
        evidence: evidence.clone(),
        processes: processes.clone(),
        secrets: secrets.clone(),
        flow_deadline: deadline,
        options,
        recording: Recording {
            video: RecordMode::Off,
            trace: RecordMode::Off,
            ..Default::default()
        },
        auth: None,
    };
    let code = match sel.driver.open(&flow, ctx).await {
        Ok(mut session) => {
            // A terminal program is read once its screen is stable, an
            // application once it shows a window.
            let step = &flow.steps[0];
            if matches!(step.action_name(), "waitForStable" | "waitForWindow") {
                let _ = qa_core::runner::run_step(
                    session.as_mut(),
                    step,
                    Deadline::after_ms(step.step_timeout_ms()).min(deadline),
                )
                .await;
            }
            let observed = session.elements(deadline).await;
            let _ = session.close(Deadline::after_ms(15_000)).await;
            match observed {
                Ok(mut o) => {
                    o.id = "inspect".into();
                    print(&o, json, &secrets);
                    exit::PASSED
                }
                Err(e) => {
                    eprintln!("error: {}", secrets.redact(&e.to_string()));
                    exit::FAILED
                }
            }
        }
        Err(e) => {
            eprintln!(
                "{}: {}",
                if e.is_blocked() { "BLOCKED" } else { "error" },
                secrets.redact(&e.to_string())
            );
            if e.is_blocked() {
                exit::BLOCKED
            } else {
                exit::FAILED
            }
        }
    };
    let _ = processes
        .end_all(qa_core::process::DEFAULT_GRACE, Deadline::after_ms(10_000))
        .await;
    let _ = evidence.remove_scratch();
    let _ = std::fs::remove_dir_all(&ws);
    code
}

fn print(o: &Observation, json: bool, secrets: &Secrets) {
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
    for e in &o.elements {
        let mut line = "  ".repeat(e.depth);
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
        match &e.locator {
            Some(l) => line.push_str(&format!("  {}", locator_text(l))),
            None => line.push_str("  (no locator finds only this element)"),
        }
        crate::console::write(format_args!("{}\n", secrets.redact(&line)));
    }
    if o.truncated {
        crate::console::write(format_args!(
            "… more elements than {} (left out)\n",
            qa_core::observe::MAX_ELEMENTS
        ));
    }
    if o.elements.is_empty() {
        crate::console::write(format_args!("(no element to act on or orient by)\n"));
    }
}
