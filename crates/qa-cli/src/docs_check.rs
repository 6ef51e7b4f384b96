//! Guides and docs say only what the code does: every error code, flow
//! action and `ui-qa` option they name must exist (agents read the guides
//! and act on them).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Every Markdown file a person or an agent reads: `README.md`, `docs/`
/// and `guides/`.
fn documents() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut out = vec![root.join("README.md")];
    let mut dirs = vec![root.join("docs"), root.join("guides")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).expect("a docs directory").flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Every `code` span of a Markdown text, and every line of its fenced blocks.
fn spans(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            out.push(line.to_string());
            continue;
        }
        let mut parts = line.split('`');
        parts.next();
        while let Some(code) = parts.next() {
            out.push(code.to_string());
            parts.next();
        }
    }
    out
}

/// Every code the binary and its drivers declare.
fn known_codes() -> BTreeSet<&'static str> {
    crate::codes::families()
        .into_iter()
        .flat_map(|(_, rows)| rows.into_iter().map(|r| r.code))
        .collect()
}

/// The error codes `span` names: `family.part[.part]` tokens whose family
/// is one of the code families (`web.locator.not_found`), with `a|b`
/// alternatives in the last part spelled out. File names (`flow.jsonc`),
/// calls (`driver.open(…)`) and fields (`step.startedMs`) are not codes.
fn codes_named(span: &str, families: &BTreeSet<&str>) -> Vec<String> {
    const FILE_EXTENSIONS: &[&str] = &[
        "json", "jsonc", "jsonl", "md", "html", "xml", "png", "webm", "mp4", "cast", "rs", "txt",
        "toml", "yml", "yaml", "log", "js", "css", "csv", "sh", "py", "ps1",
    ];
    static TOKEN: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let token = TOKEN.get_or_init(|| {
        regex::Regex::new(r"\b([a-z][a-z_]*(?:\.[A-Za-z0-9_|]+)+)(\(?)").expect("a valid pattern")
    });
    let lower = |p: &str| !p.is_empty() && p.chars().all(|c| c.is_ascii_lowercase() || c == '_');
    let mut out = Vec::new();
    for m in token.captures_iter(span) {
        let text = m[1].trim_end_matches(['.', '|']);
        let mut parts: Vec<&str> = text.split('.').collect();
        if m[2].len() == 1 || parts.len() < 2 || !families.contains(parts[0]) {
            continue;
        }
        let last = parts.pop().unwrap_or_default();
        if FILE_EXTENSIONS.contains(&last) || !parts.iter().all(|p| lower(p)) {
            continue;
        }
        let alts: Vec<&str> = last.split('|').collect();
        if !alts.iter().all(|a| lower(a)) {
            continue;
        }
        for alt in alts {
            out.push(format!("{}.{alt}", parts.join(".")));
        }
    }
    out
}

/// Every long option of `ui-qa` and its commands.
fn known_options() -> BTreeSet<String> {
    fn walk(c: &clap::Command, out: &mut BTreeSet<String>) {
        for a in c.get_arguments() {
            if let Some(l) = a.get_long() {
                out.insert(format!("--{l}"));
            }
        }
        for s in c.get_subcommands() {
            walk(s, out);
        }
    }
    let mut out = BTreeSet::from(["--help".to_string(), "--version".to_string()]);
    walk(
        &<crate::cli::Cli as clap::CommandFactory>::command(),
        &mut out,
    );
    out
}

/// The options a `ui-qa …` command line in `span` passes to ui-qa itself
/// (before a lone `--`, after which the arguments are the program's).
fn options_named(span: &str) -> Vec<String> {
    let Some(at) = span.find("ui-qa ") else {
        return Vec::new();
    };
    span[at..]
        .split_whitespace()
        .take_while(|w| *w != "--")
        .filter_map(|w| {
            let flag = w.split('=').next().unwrap_or(w);
            let flag = flag.trim_end_matches(|c: char| !(c.is_ascii_alphanumeric() || c == '-'));
            (flag.starts_with("--") && flag.len() > 2).then(|| flag.to_string())
        })
        .collect()
}

/// The actions `"action": "…"` in `span` names.
fn actions_named(span: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = span;
    while let Some(i) = rest.find("\"action\"") {
        rest = &rest[i + "\"action\"".len()..];
        let value = rest.trim_start().strip_prefix(':').map(str::trim_start);
        if let Some(v) = value.and_then(|v| v.strip_prefix('"')) {
            if let Some(end) = v.find('"') {
                out.push(v[..end].to_string());
            }
        }
    }
    out
}

#[test]
fn docs_and_guides_name_only_codes_actions_and_options_that_exist() {
    use qa_core::flow::{Action, TargetKind};
    let codes = known_codes();
    let families: BTreeSet<&str> = codes.iter().filter_map(|c| c.split('.').next()).collect();
    let options = known_options();
    let actions: BTreeSet<&str> = [
        TargetKind::Browser,
        TargetKind::Terminal,
        TargetKind::Desktop,
    ]
    .into_iter()
    .flat_map(|k| Action::names_for(k).iter().copied())
    .collect();
    let mut wrong = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).expect("a readable document");
        let name = doc.display().to_string();
        for span in spans(&text) {
            for c in codes_named(&span, &families) {
                if !codes.contains(c.as_str()) {
                    wrong.push(format!("{name}: error code `{c}` does not exist"));
                }
            }
            for o in options_named(&span) {
                if !options.contains(&o) {
                    wrong.push(format!("{name}: option `{o}` (in `{span}`) does not exist"));
                }
            }
            for a in actions_named(&span) {
                if !actions.contains(a.as_str()) {
                    wrong.push(format!("{name}: action `{a}` does not exist"));
                }
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_scanners_find_what_they_should() {
    let families = BTreeSet::from(["web", "flow", "driver"]);
    assert_eq!(
        codes_named("`web.auth.unavailable` and flow.jsonc", &families),
        ["web.auth.unavailable"]
    );
    assert_eq!(
        codes_named(
            "flow.schema.json, driver.open(flow), web.step.startedMs",
            &families
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        codes_named("web.actionability.not_attached|covered", &families),
        [
            "web.actionability.not_attached",
            "web.actionability.covered"
        ]
    );
    assert_eq!(
        options_named("ui-qa run --strict --junit=x.xml flow.jsonc -- --not-ours"),
        ["--strict", "--junit"]
    );
    assert_eq!(
        actions_named(r#"{ "action": "fill", "x": 1 }, {"action":"clik"}"#),
        ["fill", "clik"]
    );
    assert_eq!(spans("a `b` c `d e`\n```\nf g\n```"), ["b", "d e", "f g"]);
}

/// The dependency lines of a `[dependencies]` table, with each path
/// reduced to its `crates/NAME` tail (README.md points at a checkout
/// beside yours, the example at its own repository).
fn dependency_lines(toml: &str) -> Vec<String> {
    static PATH: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let path = PATH.get_or_init(|| {
        regex::Regex::new(r#"path = "[^"]*?(crates/[a-z-]+)""#).expect("a valid pattern")
    });
    let mut out: Vec<String> = toml
        .lines()
        .skip_while(|l| l.trim() != "[dependencies]")
        .skip(1)
        .take_while(|l| !l.trim_start().starts_with('['))
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| path.replace(l, r#"path = "$1""#).into_owned())
        .collect();
    out.sort();
    out
}

#[test]
fn the_readme_embedding_lines_are_the_example_crates() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let section = readme
        .split("## Embedding in Rust")
        .nth(1)
        .expect("README.md has an embedding section");
    let block = section
        .split("```toml")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("the embedding section has a toml block");
    let example = std::fs::read_to_string(root.join("examples/embed/Cargo.toml"))
        .expect("examples/embed/Cargo.toml");
    let lines = dependency_lines(block);
    assert!(lines.iter().any(|l| l.starts_with("tokio = ")), "{lines:?}");
    assert_eq!(lines, dependency_lines(&example));
}
