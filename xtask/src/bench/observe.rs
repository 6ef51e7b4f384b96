//! What an agent receives, side by side: the size of ui-qa's MCP
//! observation and of Playwright MCP's snapshot of the same page — the npm
//! `todomvc` package's vanillajs example with two items added — each server
//! driven through the official MCP TypeScript SDK client
//! (`xtask/bench/peers/observe-bytes.mjs`). Part of `cargo xtask bench web`.
//! Fails when ui-qa's observation lacks the items' text or does not name
//! each item's checkbox after its item.

use super::{chromium, server, Ctx};
use std::process::Command;

/// Measures once and prints the line; false when a side could not run or
/// ui-qa's observation misses what it must show.
pub fn run(ctx: &Ctx) -> bool {
    let page = ctx
        .peers
        .node_dir
        .join("node_modules/todomvc/examples/vanillajs");
    if !page.join("index.html").is_file() {
        eprintln!(
            "xtask bench observe: the todomvc package is missing from {}",
            ctx.peers.node_dir.display()
        );
        return false;
    }
    let origin = match server::start(page) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("xtask bench observe: cannot serve TodoMVC: {e}");
            return false;
        }
    };
    let out = Command::new("node")
        .current_dir(&ctx.peers.node_dir)
        .arg("observe-bytes.mjs")
        .arg(&ctx.ui_qa)
        .arg(chromium())
        .arg(format!("{origin}/index.html"))
        .output();
    let out = match out {
        Ok(o) if o.status.success() => o,
        Ok(o) => {
            eprintln!(
                "xtask bench observe: the comparison failed: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            return false;
        }
        Err(e) => {
            eprintln!("xtask bench observe: cannot run node: {e}");
            return false;
        }
    };
    let line = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = match serde_json::from_str(line.trim()) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("xtask bench observe: unreadable answer ({e}): {line}");
            return false;
        }
    };
    let checks = &v["checks"];
    let shown = checks["itemsText"] == true && checks["checkboxesNamedByItem"] == true;
    println!(
        "\nobservation of TodoMVC with two items (bytes an agent receives):\n  ui-qa observe          {:>6}\n  Playwright MCP         {:>6}   (browser_snapshot)\n  ratio                  {:>6}×  items' text: {}, checkboxes named by their item: {}",
        v["uiQaBytes"],
        v["playwrightMcpBytes"],
        v["ratio"],
        if checks["itemsText"] == true { "yes" } else { "NO" },
        if checks["checkboxesNamedByItem"] == true { "yes" } else { "NO" },
    );
    shown
}
