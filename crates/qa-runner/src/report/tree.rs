//! Accessibility snapshots ([`AxSnapshot`]) as collapsible trees
//! (`<details>`): a node reads `button "Save" = value [focused]` and opens to
//! its children; what the snapshot says about itself (the application, how
//! many nodes, whether it was cut short) is one line above. Bounded by
//! [`MAX_TREE_NODES`] over the whole report.

use super::files;
use super::html::escape;
use super::{MAX_TREE_FILE_BYTES, MAX_TREE_NODES};
use qa_core::result::RunResult;
use qa_core::snapshot::{AxNode, AxSnapshot};
use std::fmt::Write as _;
use std::path::Path;

/// Nesting drawn at most.
const MAX_DEPTH: usize = 64;

/// Levels open when the page loads.
const OPEN_LEVELS: usize = 3;

/// A string in a tree label is cut after this many characters.
const MAX_LABEL_CHARS: usize = 200;

/// The accessibility section: one tree per snapshot.
pub(crate) fn snapshots(out: &mut String, r: &RunResult, run_dir: &Path) {
    let snaps = &r.artifacts.accessibility_snapshots;
    if snaps.is_empty() {
        return;
    }
    out.push_str("<section id=\"accessibility\">\n<h2>Accessibility snapshots</h2>\n");
    let mut budget = MAX_TREE_NODES;
    for a in snaps {
        let Some(p) = files::place(r, a) else {
            let _ = writeln!(
                out,
                "<p>{} (outside the run directory)</p>",
                escape(&files::file_name(a))
            );
            continue;
        };
        let step = a.step.map(|s| format!(" · step {s}")).unwrap_or_default();
        let _ = writeln!(
            out,
            "<details class=\"snapshot\" open>\n<summary><a href=\"{}\">{}</a>{}</summary>",
            p.href,
            escape(&p.name),
            escape(&step)
        );
        match files::read(run_dir, &p, MAX_TREE_FILE_BYTES) {
            Ok(bytes) => match serde_json::from_slice::<AxSnapshot>(&bytes) {
                Ok(snap) => {
                    let facts = facts(&snap);
                    if !facts.is_empty() {
                        let _ = writeln!(out, "<p class=\"facts\">{}</p>", escape(&facts));
                    }
                    out.push_str("<ul class=\"tree\">\n");
                    for n in snap.roots() {
                        node(out, n, 0, &mut budget);
                    }
                    out.push_str("</ul>\n");
                    if budget == 0 {
                        out.push_str("<p class=\"unshown\">more nodes than a report draws; open the file</p>\n");
                    }
                }
                Err(_) => out.push_str(
                    "<p class=\"unshown\">not an accessibility snapshot; open the file</p>\n",
                ),
            },
            Err(why) => {
                let _ = writeln!(out, "<p class=\"unshown\">{}</p>", why.says());
            }
        }
        out.push_str("</details>\n");
    }
    out.push_str("</section>\n");
}

fn clip(s: &str) -> String {
    match s.char_indices().nth(MAX_LABEL_CHARS) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// What a snapshot says about itself: `calculator (pid 41) · 96 of at most
/// 2000 nodes · 45 ms · cut short`.
fn facts(s: &AxSnapshot) -> String {
    let mut parts = Vec::new();
    if let Some(a) = &s.application {
        parts.push(format!("{} (pid {})", clip(&a.name), a.pid));
    }
    match (s.node_count, s.node_cap) {
        (Some(n), Some(cap)) => parts.push(format!("{n} of at most {cap} nodes")),
        (Some(n), None) => parts.push(format!("{n} nodes")),
        _ => {}
    }
    if let Some(ms) = s.elapsed_ms {
        parts.push(format!("{ms} ms"));
    }
    if s.truncated {
        parts.push("cut short".into());
    }
    parts.join(" · ")
}

/// `button "Save" = "3" text "…" [focused, disabled] #save`.
fn node_label(n: &AxNode) -> String {
    let mut l = n.role.clone();
    if let Some(name) = n.name.as_deref().filter(|s| !s.is_empty()) {
        let _ = write!(l, " \"{}\"", clip(name));
    }
    if let Some(v) = n.value.as_deref().filter(|s| !s.is_empty()) {
        let _ = write!(l, " = \"{}\"", clip(v));
    }
    if let Some(t) = n.text.as_deref().filter(|s| !s.is_empty()) {
        let _ = write!(l, " text \"{}\"", clip(t));
    }
    if let Some(states) = n.states.as_ref().filter(|s| !s.is_empty()) {
        let _ = write!(l, " [{}]", states.join(", "));
    }
    if let Some(id) = n.id.as_deref().filter(|s| !s.is_empty()) {
        let _ = write!(l, " #{}", clip(id));
    }
    l
}

/// One node as a list item, opening to its children.
fn node(out: &mut String, n: &AxNode, depth: usize, budget: &mut usize) {
    if *budget == 0 {
        return;
    }
    *budget -= 1;
    let label = escape(&node_label(n));
    if n.children.is_empty() || depth >= MAX_DEPTH {
        let _ = writeln!(out, "<li><span class=\"node\">{label}</span></li>");
        return;
    }
    let open = if depth < OPEN_LEVELS { " open" } else { "" };
    let _ = writeln!(
        out,
        "<li><details{open}><summary><span class=\"node\">{label}</span> <span class=\"n\">({})</span></summary><ul>",
        n.children.len()
    );
    for k in &n.children {
        node(out, k, depth + 1, budget);
    }
    out.push_str("</ul></details></li>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draw(s: &AxSnapshot, budget: usize) -> String {
        let mut out = String::new();
        let mut b = budget;
        for n in s.roots() {
            node(&mut out, n, 0, &mut b);
        }
        out
    }

    fn parse(v: serde_json::Value) -> AxSnapshot {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn nodes_read_as_role_name_value_and_states() {
        let s = parse(
            serde_json::json!({"nodes": [{"role": "RootWebArea", "name": "Shop", "children": [
            {"role": "button", "name": "Save <now>", "states": ["focused", "disabled"]},
            {"role": "textbox", "name": "Qty", "value": "3", "id": "qty"}
        ]}], "truncated": false}),
        );
        let html = draw(&s, 100);
        assert!(html.contains("RootWebArea &quot;Shop&quot;"), "{html}");
        assert!(
            html.contains("button &quot;Save &lt;now&gt;&quot; [focused, disabled]"),
            "{html}"
        );
        assert!(
            html.contains("textbox &quot;Qty&quot; = &quot;3&quot; #qty"),
            "{html}"
        );
        assert_eq!(
            html.matches("<details").count(),
            html.matches("</details>").count()
        );
        assert_eq!(facts(&s), "");
    }

    #[test]
    fn a_desktop_snapshot_says_what_it_read() {
        let s = parse(
            serde_json::json!({"application": {"name": "calc", "pid": 41}, "nodeCount": 96,
            "nodeCap": 2000, "truncated": true, "elapsedMs": 45,
            "tree": {"role": "application", "name": "calc", "children": [{"role": "frame", "name": "Calculator"}]}}),
        );
        assert_eq!(
            facts(&s),
            "calc (pid 41) · 96 of at most 2000 nodes · 45 ms · cut short"
        );
        assert!(draw(&s, 10).contains("frame &quot;Calculator&quot;"));
    }

    #[test]
    fn drawing_is_bounded() {
        let kids: Vec<AxNode> = (0..100)
            .map(|i| AxNode {
                role: "cell".into(),
                name: Some(format!("c{i}")),
                ..Default::default()
            })
            .collect();
        let table = AxSnapshot {
            tree: Some(AxNode {
                role: "table".into(),
                children: kids,
                ..Default::default()
            }),
            ..Default::default()
        };
        let html = draw(&table, 10);
        assert_eq!(html.matches("<li>").count(), 10, "{html}");
        // Deep nesting stops at MAX_DEPTH.
        let mut deep = AxNode {
            role: "leaf".into(),
            ..Default::default()
        };
        for _ in 0..500 {
            deep = AxNode {
                role: "group".into(),
                children: vec![deep],
                ..Default::default()
            };
        }
        let deep = AxSnapshot {
            tree: Some(deep),
            ..Default::default()
        };
        let html = draw(&deep, 10_000);
        assert!(html.matches("<details").count() <= MAX_DEPTH + 1);
    }
}
