//! `ui-qa check`: parse and admit a flow; launch nothing.

use crate::{drivers, exit, output};
use qa_core::flow::{Flow, FlowError};
use qa_runner::select;
use std::path::Path;

/// Parses and admits a flow file with `--var` values (the one check the
/// CLI and MCP share); returns every problem, each placed in the text.
pub(crate) fn check_flow(
    path: &Path,
    vars: &qa_core::flow::vars::Vars,
) -> Result<(Flow, String), Vec<FlowError>> {
    select::check_file(&drivers::all(), path, vars)
}

/// Prints a flow's errors, one line each with its place.
pub(crate) fn print_flow_errors(path: &Path, errors: &[FlowError]) {
    print_flow_problems(path, errors, "error");
}

/// Prints problems (`error` or `warning`), one line each with its place.
pub(crate) fn print_flow_problems(path: &Path, errors: &[FlowError], what: &str) {
    use output::clean;
    let file = path.display().to_string();
    for e in errors {
        let pos = match (e.line, e.column) {
            (Some(l), Some(c)) => format!("{}:{l}:{c}", clean(&file)),
            _ => clean(&file).into_owned(),
        };
        let ptr = if e.pointer.is_empty() {
            "(document)".into()
        } else {
            clean(&e.pointer)
        };
        // A regex error is the pattern's notation over several lines with
        // a caret under the offending character: printed as lines, so the
        // caret stays under it. Every other message is one line.
        let lines = if e.code == "flow.invalid_regex" {
            output::clean_lines(&e.message)
        } else {
            vec![clean(&e.message).into_owned()]
        };
        eprintln!("{what}[{}]: {pos}: at {ptr}: {}", e.code, lines[0]);
        for l in &lines[1..] {
            eprintln!("{l}");
        }
    }
}

/// `ui-qa check`.
pub(crate) fn run(path: &Path, json: bool, vars: &[(String, String)]) -> u8 {
    match check_flow(path, &vars.iter().cloned().collect()) {
        Ok((flow, text)) => {
            let warnings = select::warnings(&flow, &text);
            // A terminal flow: what its presentation gives, and when the
            // other one suits the program better.
            let presentation = match &flow.target {
                qa_core::flow::Target::Terminal(t) => {
                    let p = t.presentation.unwrap_or_default();
                    Some((p, qa_tui::native::presentation_advice(p)))
                }
                _ => None,
            };
            if json {
                let mut v = serde_json::json!({"valid": true, "kind": flow.kind().as_str(), "steps": flow.steps.len(), "errors": [], "warnings": warnings});
                if let Some((p, advice)) = presentation {
                    v["presentation"] = serde_json::json!({ "name": p, "advice": advice });
                }
                println!("{v}");
            } else {
                print_flow_problems(path, &warnings, "warning");
                let d = select::admission_driver(&drivers::all(), &flow)
                    .map(|d| d.id().to_string())
                    .unwrap_or_default();
                eprintln!(
                    "ok: {} is a valid {} flow with {} step(s) for {d}",
                    output::clean(&path.display().to_string()),
                    flow.kind().as_str(),
                    flow.steps.len()
                );
                if let Some((_, advice)) = presentation {
                    eprintln!("  {advice}");
                }
            }
            exit::PASSED
        }
        Err(errors) => {
            if json {
                println!("{}", serde_json::json!({"valid": false, "errors": errors}));
            } else {
                print_flow_errors(path, &errors);
            }
            exit::INVALID
        }
    }
}
