//! Accessibility snapshots as collapsible trees (`<details>`): a node with
//! a `role` reads `button "Save" = value [focused]` and opens to its
//! `children`; any other JSON (the document around the nodes) is shown as
//! keys and values. Bounded by [`MAX_TREE_NODES`] over the whole report.

use super::files;
use super::html::escape;
use super::{MAX_TREE_FILE_BYTES, MAX_TREE_NODES};
use crate::result::RunResult;
use serde_json::Value;
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
            Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
                Ok(v) => {
                    out.push_str("<ul class=\"tree\">\n");
                    value(out, None, &v, 0, &mut budget);
                    out.push_str("</ul>\n");
                    if budget == 0 {
                        out.push_str("<p class=\"unshown\">more nodes than a report draws; open the file</p>\n");
                    }
                }
                Err(_) => out.push_str("<p class=\"unshown\">not JSON; open the file</p>\n"),
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

/// `button "Save" = 3 [focused, disabled] #save` for a node with a role.
fn node_label(o: &serde_json::Map<String, Value>) -> String {
    let mut l = o
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if let Some(n) = o
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
    {
        let _ = write!(l, " \"{}\"", clip(n));
    }
    match o.get("value") {
        Some(Value::String(v)) if !v.is_empty() => {
            let _ = write!(l, " = \"{}\"", clip(v));
        }
        Some(v @ (Value::Number(_) | Value::Bool(_))) => {
            let _ = write!(l, " = {v}");
        }
        _ => {}
    }
    if let Some(t) = o
        .get("text")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
    {
        let _ = write!(l, " text \"{}\"", clip(t));
    }
    if let Some(states) = o.get("states").and_then(Value::as_array) {
        let s: Vec<&str> = states.iter().filter_map(Value::as_str).collect();
        if !s.is_empty() {
            let _ = write!(l, " [{}]", s.join(", "));
        }
    }
    if let Some(id) = o
        .get("id")
        .and_then(Value::as_str)
        .filter(|i| !i.is_empty())
    {
        let _ = write!(l, " #{}", clip(id));
    }
    l
}

/// One JSON value as list items, `key` naming it in its parent.
fn value(out: &mut String, key: Option<&str>, v: &Value, depth: usize, budget: &mut usize) {
    if *budget == 0 {
        return;
    }
    *budget -= 1;
    let open = if depth < OPEN_LEVELS { " open" } else { "" };
    let key_html = key
        .map(|k| format!("<span class=\"k\">{}</span> ", escape(k)))
        .unwrap_or_default();
    match v {
        Value::Object(o) if o.get("role").is_some_and(Value::is_string) => {
            let label = escape(&node_label(o));
            let kids = o.get("children").and_then(Value::as_array);
            match kids.filter(|k| !k.is_empty() && depth < MAX_DEPTH) {
                Some(kids) => {
                    let _ = writeln!(
                        out,
                        "<li><details{open}><summary>{key_html}<span class=\"node\">{label}</span> <span class=\"n\">({})</span></summary><ul>",
                        kids.len()
                    );
                    for k in kids {
                        value(out, None, k, depth + 1, budget);
                    }
                    out.push_str("</ul></details></li>\n");
                }
                None => {
                    let _ = writeln!(
                        out,
                        "<li>{key_html}<span class=\"node\">{label}</span></li>"
                    );
                }
            }
        }
        Value::Object(o) if !o.is_empty() && depth < MAX_DEPTH => {
            let _ = writeln!(
                out,
                "<li><details{open}><summary>{key_html}<span class=\"n\">{{{}}}</span></summary><ul>",
                o.len()
            );
            for (k, x) in o {
                value(out, Some(k), x, depth + 1, budget);
            }
            out.push_str("</ul></details></li>\n");
        }
        Value::Array(a) if !a.is_empty() && depth < MAX_DEPTH => {
            let _ = writeln!(
                out,
                "<li><details{open}><summary>{key_html}<span class=\"n\">[{}]</span></summary><ul>",
                a.len()
            );
            for x in a {
                value(out, None, x, depth + 1, budget);
            }
            out.push_str("</ul></details></li>\n");
        }
        Value::String(s) => {
            let _ = writeln!(out, "<li>{key_html}\"{}\"</li>", escape(&clip(s)));
        }
        other => {
            let text = match other {
                Value::Object(_) => "{…}".to_string(),
                Value::Array(_) => "[…]".to_string(),
                v => v.to_string(),
            };
            let _ = writeln!(out, "<li>{key_html}{}</li>", escape(&text));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn draw(v: &Value, budget: usize) -> String {
        let mut out = String::new();
        let mut b = budget;
        value(&mut out, None, v, 0, &mut b);
        out
    }

    #[test]
    fn nodes_read_as_role_name_value_and_states() {
        let v = json!({"nodes": [{"role": "RootWebArea", "name": "Shop", "children": [
            {"role": "button", "name": "Save <now>", "states": ["focused", "disabled"]},
            {"role": "textbox", "name": "Qty", "value": "3", "id": "qty"}
        ]}], "truncated": false});
        let html = draw(&v, 100);
        assert!(html.contains("RootWebArea &quot;Shop&quot;"), "{html}");
        assert!(
            html.contains("button &quot;Save &lt;now&gt;&quot; [focused, disabled]"),
            "{html}"
        );
        assert!(
            html.contains("textbox &quot;Qty&quot; = &quot;3&quot; #qty"),
            "{html}"
        );
        assert!(
            html.contains("<span class=\"k\">truncated</span> false"),
            "{html}"
        );
        assert_eq!(
            html.matches("<details").count(),
            html.matches("</details>").count()
        );
    }

    #[test]
    fn drawing_is_bounded() {
        let kids: Vec<Value> = (0..100)
            .map(|i| json!({"role": "cell", "name": format!("c{i}")}))
            .collect();
        let v = json!({"role": "table", "children": kids});
        let html = draw(&v, 10);
        assert_eq!(html.matches("<li>").count(), 10, "{html}");
        // Deep nesting stops at MAX_DEPTH.
        let mut deep = json!({"role": "leaf"});
        for _ in 0..500 {
            deep = json!({"role": "group", "children": [deep]});
        }
        let html = draw(&deep, 10_000);
        assert!(html.matches("<details").count() <= MAX_DEPTH + 1);
    }
}
