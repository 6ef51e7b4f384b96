//! `cargo xtask imports`: the import graph inside every crate must be
//! acyclic.
//!
//! For each crate's `src/`, every file is a module (`lib.rs`/`main.rs` the
//! root, `a.rs` or `a/mod.rs` the module `a`, `a/b.rs` the module `a::b`).
//! Every `crate::…`, `super::…` and `self::…` path in code (not in
//! comments or strings) is resolved to the deepest module file it names.
//! A reference from module `m` to module `t` is an edge between the two
//! *siblings* under their closest common ancestor that contain `m` and `t`
//! — so `steps::pointer` using `page::Page` is the edge `steps → page`. A
//! parent using its child (or a child its parent) is not a sibling edge.
//! Any strongly connected component of two or more siblings is a cycle,
//! reported with one file:line witness per edge.
//!
//! It also enforces edges that must never exist, in the spirit of
//! Chromium's and Playwright's `DEPS` lists ([`NEVER_CRATES`],
//! [`NEVER_MODULES`]): a crate that depends on one it must not (read from
//! each crate's `Cargo.toml`, dev-dependencies aside), and a module that
//! names one it must not (qa-runner's report naming its runner). Each
//! violation is reported with its reason and a witness.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// A module path inside a crate (`[]` is the crate root).
type ModPath = Vec<String>;

/// One reference: where it is written and what it names.
#[derive(Debug, Clone)]
struct Reference {
    from: ModPath,
    to: Vec<String>,
    file: PathBuf,
    line: usize,
}

/// The module a source file defines.
fn module_of(src: &Path, file: &Path) -> Option<ModPath> {
    let rel = file.strip_prefix(src).ok()?;
    let mut parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop()?;
    let stem = last.strip_suffix(".rs")?;
    match stem {
        "lib" | "main" if parts.is_empty() => {}
        "mod" => {}
        s => parts.push(s.to_string()),
    }
    Some(parts)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            // `src/bin/*` are separate crates.
            if p.file_name().is_some_and(|n| n == "bin") && p.parent() == Some(dir) {
                continue;
            }
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Code with comments, string and char literals blanked (newlines kept, so
/// line numbers stay right).
fn strip(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(b[i]));
                    i += 1;
                }
            }
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && !ident_before(&b, i) {
            // Raw string r"…" or r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            while j < b.len() {
                if b[j] == '"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            for ch in &b[i..j.min(b.len())] {
                out.push(blank(*ch));
            }
            i = j;
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < b.len() {
                    out.push(blank(b[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' {
            // A char literal ('a', '\n', '\u{1F600}') — not a lifetime.
            let lit_len = if next == Some('\\') {
                b[i + 1..].iter().position(|&x| x == '\'').map(|p| p + 2)
            } else if b.get(i + 2) == Some(&'\'') {
                Some(3)
            } else {
                None
            };
            match lit_len {
                Some(n) => {
                    for _ in 0..n {
                        out.push(' ');
                    }
                    i += n;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident_before(b: &[char], i: usize) -> bool {
    i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_')
}

/// Expands a `use` tree (`crate::{a::X, b::{c, d}}`) into paths.
fn expand_use(tree: &str) -> Vec<String> {
    // Drop renames (`X as Y`), then all whitespace.
    let mut kept = String::new();
    let mut words = tree.split_whitespace();
    while let Some(w) = words.next() {
        if w == "as" {
            if let Some(alias) = words.next() {
                kept.extend(
                    alias
                        .chars()
                        .filter(|c| !(c.is_alphanumeric() || *c == '_')),
                );
            }
        } else {
            kept.push_str(w);
        }
    }
    let tree = kept;
    let mut out = Vec::new();
    expand_into("", &tree, &mut out);
    out
}

fn expand_into(prefix: &str, tree: &str, out: &mut Vec<String>) {
    if let Some(open) = tree.find('{') {
        let head = &tree[..open];
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let base = format!("{prefix}{head}");
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand_into(&base, &inner[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        if start < inner.len() {
            expand_into(&base, &inner[start..], out);
        }
    } else if !tree.is_empty() {
        out.push(format!("{prefix}{tree}"));
    }
}

/// The references one file makes, with inline modules (`mod tests { … }`)
/// tracked so `super::` resolves from where it is written.
fn references(file: &Path, module: &ModPath, text: &str) -> Vec<Reference> {
    let code = strip(text);
    let chars: Vec<char> = code.chars().collect();
    let mut refs = Vec::new();
    // Inline module stack: (name, brace depth at which it closes).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut line = 1;
    let mut i = 0;
    let mut pending_mod: Option<String> = None;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
        }
        if c == '{' {
            depth += 1;
            if let Some(name) = pending_mod.take() {
                inline.push((name, depth));
            }
            i += 1;
            continue;
        }
        if c == '}' {
            if inline.last().is_some_and(|(_, d)| *d == depth) {
                inline.pop();
            }
            depth = depth.saturating_sub(1);
            i += 1;
            continue;
        }
        if c == ';' {
            pending_mod = None;
        }
        if (c.is_alphabetic() || c == '_') && !ident_before(&chars, i) {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let here = || {
                let mut m = module.clone();
                m.extend(inline.iter().map(|(n, _)| n.clone()));
                m
            };
            match word.as_str() {
                "mod" => {
                    let rest: String = chars[i..].iter().take(200).collect();
                    let name: String = rest
                        .trim_start()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() {
                        pending_mod = Some(name);
                    }
                }
                "use" => {
                    let end = chars[i..].iter().position(|&x| x == ';').map(|p| i + p);
                    if let Some(end) = end {
                        let tree: String = chars[i..end].iter().collect();
                        for p in expand_use(&tree) {
                            if let Some(to) = resolve(&here(), &p) {
                                refs.push(Reference {
                                    from: module.clone(),
                                    to,
                                    file: file.to_path_buf(),
                                    line,
                                });
                            }
                        }
                        line += tree.matches('\n').count();
                        i = end;
                    }
                }
                "crate" | "super" | "self" => {
                    // A path in expression or type position: word(::ident)+.
                    let mut j = i;
                    let mut path = word.clone();
                    while chars.get(j) == Some(&':') && chars.get(j + 1) == Some(&':') {
                        let s = j + 2;
                        let mut e = s;
                        while e < chars.len() && (chars[e].is_alphanumeric() || chars[e] == '_') {
                            e += 1;
                        }
                        if e == s {
                            break;
                        }
                        path.push_str("::");
                        path.extend(&chars[s..e]);
                        j = e;
                    }
                    if path.contains("::") {
                        if let Some(to) = resolve(&here(), &path) {
                            refs.push(Reference {
                                from: module.clone(),
                                to,
                                file: file.to_path_buf(),
                                line,
                            });
                        }
                    }
                    i = j;
                }
                _ => {}
            }
            continue;
        }
        i += 1;
    }
    refs
}

/// An absolute module-ish path for `crate::…`, `super::…`, `self::…`
/// written inside module `here`; `None` for external paths.
fn resolve(here: &ModPath, path: &str) -> Option<Vec<String>> {
    let mut segs = path.split("::").filter(|s| !s.is_empty());
    let first = segs.next()?;
    let mut base: Vec<String> = match first {
        "crate" => Vec::new(),
        "self" => here.clone(),
        "super" => {
            let mut b = here.clone();
            b.pop()?;
            b
        }
        _ => return None,
    };
    for s in segs {
        if s == "super" {
            base.pop()?;
        } else if s == "self" || s == "*" {
            continue;
        } else {
            base.push(s.to_string());
        }
    }
    Some(base)
}

/// The cycles among sibling modules of one crate, each as a list of
/// `a → b (file:line)` edges.
pub fn crate_cycles(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut modules: BTreeSet<ModPath> = BTreeSet::new();
    let mut texts = Vec::new();
    for f in &files {
        if let (Some(m), Ok(t)) = (module_of(src, f), std::fs::read_to_string(f)) {
            modules.insert(m.clone());
            texts.push((f.clone(), m, t));
        }
    }
    // Sibling edges grouped by parent: parent → (a, b) → witness.
    let mut edges: BTreeMap<ModPath, BTreeMap<(String, String), String>> = BTreeMap::new();
    for (file, module, text) in &texts {
        for r in references(file, module, text) {
            // The deepest module file the path names.
            let mut target = r.to.clone();
            while !target.is_empty() && !modules.contains(&target) {
                target.pop();
            }
            let common = r
                .from
                .iter()
                .zip(&target)
                .take_while(|(a, b)| a == b)
                .count();
            if common >= r.from.len() || common >= target.len() {
                continue; // same module, or an ancestor/descendant
            }
            let parent = r.from[..common].to_vec();
            let a = r.from[common].clone();
            let b = target[common].clone();
            // Witnesses are shown from the workspace root (`crates/x/src/…`).
            let root = src.ancestors().find(|a| a.join("Cargo.lock").exists());
            let rel = root
                .and_then(|root| r.file.strip_prefix(root).ok())
                .unwrap_or(&r.file);
            edges
                .entry(parent)
                .or_default()
                .entry((a, b))
                .or_insert_with(|| format!("{}:{}", rel.display(), r.line));
        }
    }
    let mut cycles = Vec::new();
    for (parent, group) in &edges {
        let graph: HashMap<&str, Vec<&str>> = group.keys().fold(HashMap::new(), |mut g, (a, b)| {
            g.entry(a.as_str()).or_default().push(b.as_str());
            g
        });
        for scc in strongly_connected(&graph) {
            if scc.len() < 2 {
                continue;
            }
            let set: BTreeSet<&str> = scc.iter().copied().collect();
            let witnesses: Vec<String> = group
                .iter()
                .filter(|((a, b), _)| set.contains(a.as_str()) && set.contains(b.as_str()))
                .map(|((a, b), w)| format!("{a} → {b} ({w})"))
                .collect();
            let at = if parent.is_empty() {
                "crate root".to_string()
            } else {
                parent.join("::")
            };
            cycles.push(format!(
                "cycle among {{{}}} in {at}:\n    {}",
                set.into_iter().collect::<Vec<_>>().join(", "),
                witnesses.join("\n    ")
            ));
        }
    }
    cycles
}

/// Tarjan's algorithm.
fn strongly_connected<'a>(graph: &HashMap<&'a str, Vec<&'a str>>) -> Vec<Vec<&'a str>> {
    struct State<'a> {
        index: HashMap<&'a str, usize>,
        low: HashMap<&'a str, usize>,
        on_stack: BTreeSet<&'a str>,
        stack: Vec<&'a str>,
        next: usize,
        out: Vec<Vec<&'a str>>,
    }
    fn visit<'a>(v: &'a str, g: &HashMap<&'a str, Vec<&'a str>>, s: &mut State<'a>) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        for &w in g.get(v).map(Vec::as_slice).unwrap_or(&[]) {
            if !s.index.contains_key(w) {
                visit(w, g, s);
                let lw = s.low[w];
                let lv = s.low[v];
                s.low.insert(v, lv.min(lw));
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low[v];
                s.low.insert(v, lv.min(iw));
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                comp.push(w);
                if w == v {
                    break;
                }
            }
            s.out.push(comp);
        }
    }
    let mut s = State {
        index: HashMap::new(),
        low: HashMap::new(),
        on_stack: BTreeSet::new(),
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    let mut nodes: Vec<&str> = graph.keys().copied().collect();
    nodes.sort();
    for v in nodes {
        if !s.index.contains_key(v) {
            visit(v, graph, &mut s);
        }
    }
    s.out
}

/// The driver crates: none depends on another, nor on the binary.
const DRIVERS: &[&str] = &["qa-web", "qa-tui", "qa-linux", "qa-windows", "qa-macos"];

/// `(crate, dependency, why)`: a dependency that must never exist (`*`:
/// any workspace crate). Dev-dependencies are not edges of the product.
const NEVER_CRATES: &[(&str, &str, &str)] = &[
    (
        "qa-core",
        "*",
        "the contract depends on no driver and no tool: drivers read it in an afternoon",
    ),
    (
        "*driver",
        "*driver",
        "drivers never depend on each other: what two share belongs in the contract",
    ),
    (
        "*driver",
        "qa-cli",
        "a driver never depends on the binary that wires it",
    ),
    (
        "*driver",
        "qa-runner",
        "a driver never depends on the runner (the conformance kit comes in as a dev-dependency)",
    ),
    (
        "qa-desktop",
        "*driver",
        "the desktop layer is what drivers share; it never knows one of them",
    ),
    (
        "qa-desktop",
        "qa-runner",
        "the desktop layer is part of what drivers read, not of the tool",
    ),
    (
        "qa-runner",
        "*driver",
        "the runner drives every surface through the contract; the binary wires the drivers in",
    ),
];

/// `(crate, from module, to module, why)`: module edges that must never
/// exist.
const NEVER_MODULES: &[(&str, &str, &str, &str)] = &[(
    "qa-runner",
    "report",
    "runner",
    "the report renders a finished result; it never runs anything",
)];

/// The workspace crates a crate's `Cargo.toml` depends on (normal and
/// build dependencies, every target), with the line naming each.
fn crate_dependencies(manifest: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut in_deps = false;
    for (i, line) in manifest.lines().enumerate() {
        let t = line.trim();
        if t.starts_with('[') {
            let section = t.trim_matches(|c| c == '[' || c == ']');
            in_deps = (section.ends_with("dependencies") || section.contains("dependencies."))
                && !section.contains("dev-dependencies");
            continue;
        }
        if !in_deps {
            continue;
        }
        let name: String = t
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        if name.starts_with("qa-") {
            out.push((name, i + 1));
        }
    }
    out
}

/// Whether `name` fits `pattern` (`*`, `*driver`, or a crate name).
fn crate_fits(pattern: &str, name: &str) -> bool {
    match pattern {
        "*" => name.starts_with("qa-"),
        "*driver" => DRIVERS.contains(&name),
        p => p == name,
    }
}

/// Whether module `m` (its first component) is the top-level module
/// `pattern`.
fn module_fits(pattern: &str, m: &ModPath) -> bool {
    m.first().is_some_and(|top| top == pattern)
}

/// Every "never" edge present in the workspace at `root`, each with its
/// reason and witness.
pub fn never_edges(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for src in workspace_sources(root) {
        let Some(dir) = src.parent() else { continue };
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let manifest = dir.join("Cargo.toml");
        let rel = |p: &Path| p.strip_prefix(root).unwrap_or(p).display().to_string();
        if let Ok(text) = std::fs::read_to_string(&manifest) {
            for (dep, line) in crate_dependencies(&text) {
                if dep == name {
                    continue;
                }
                for (from, to, why) in NEVER_CRATES {
                    if crate_fits(from, &name) && crate_fits(to, &dep) {
                        out.push(format!(
                            "{name} must never depend on {dep} ({}:{line}): {why}",
                            rel(&manifest)
                        ));
                    }
                }
            }
        }
        let rules: Vec<_> = NEVER_MODULES.iter().filter(|r| r.0 == name).collect();
        if rules.is_empty() {
            continue;
        }
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        let modules: BTreeSet<ModPath> = files.iter().filter_map(|f| module_of(&src, f)).collect();
        let mut seen = BTreeSet::new();
        for f in &files {
            let (Some(m), Ok(text)) = (module_of(&src, f), std::fs::read_to_string(f)) else {
                continue;
            };
            for r in references(f, &m, &text) {
                let mut target = r.to.clone();
                while !target.is_empty() && !modules.contains(&target) {
                    target.pop();
                }
                for (_, from, to, why) in &rules {
                    if module_fits(from, &r.from)
                        && module_fits(to, &target)
                        && r.from.first() != target.first()
                        && seen.insert((r.from[0].clone(), target[0].clone()))
                    {
                        out.push(format!(
                            "{name}: {} must never name {} ({}:{}): {why}",
                            r.from.join("::"),
                            target.join("::"),
                            rel(&r.file),
                            r.line
                        ));
                    }
                }
            }
        }
    }
    out
}

/// Every crate's `src/` in the workspace.
pub fn workspace_sources(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(root.join("crates")) {
        for e in rd.flatten() {
            let src = e.path().join("src");
            if src.is_dir() {
                out.push(src);
            }
        }
    }
    out.push(root.join("xtask/src"));
    out.sort();
    out
}

/// Checks every crate; prints the cycles and "never" edges found.
pub fn check(root: &Path) -> bool {
    let mut ok = true;
    for src in workspace_sources(root) {
        for c in crate_cycles(&src) {
            ok = false;
            eprintln!("xtask imports: {}: {c}", src.display());
        }
    }
    for e in never_edges(root) {
        ok = false;
        eprintln!("xtask imports: {e}");
    }
    if ok {
        println!(
            "xtask imports: no import cycles inside any crate, and no edge that must never exist"
        );
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, rel: &str, text: &str) {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("xtask-imports-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn finds_a_sibling_cycle_and_ignores_parents_tests_and_comments() {
        let d = temp("cycle");
        write(&d, "src/lib.rs", "mod a;\nmod b;\nmod c;\n");
        write(&d, "src/a.rs", "use crate::b::B;\npub struct A;\n");
        write(
            &d,
            "src/b.rs",
            "pub struct B;\nfn f() -> crate::a::A { crate::a::A }\n",
        );
        // c uses its parent and mentions a in a comment and a string only.
        write(
            &d,
            "src/c.rs",
            "// crate::a::A\nconst S: &str = \"crate::a::A\";\n#[cfg(test)]\nmod tests { use super::*; }\n",
        );
        let cycles = crate_cycles(&d.join("src"));
        assert_eq!(cycles.len(), 1, "{cycles:?}");
        assert!(cycles[0].contains("{a, b}"), "{}", cycles[0]);
        assert!(cycles[0].contains("a.rs:1"), "{}", cycles[0]);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn nested_siblings_and_use_trees() {
        let d = temp("nested");
        write(&d, "src/lib.rs", "mod steps;\nmod page;\n");
        write(&d, "src/page.rs", "pub struct Page;\n");
        write(
            &d,
            "src/steps/mod.rs",
            "mod pointer;\nmod input;\nuse crate::page::Page;\n",
        );
        write(
            &d,
            "src/steps/pointer.rs",
            "use super::{input::type_text, super::page::Page};\n",
        );
        write(
            &d,
            "src/steps/input.rs",
            "pub fn type_text() { super::pointer::click() }\n",
        );
        let cycles = crate_cycles(&d.join("src"));
        assert_eq!(cycles.len(), 1, "{cycles:?}");
        assert!(
            cycles[0].contains("{input, pointer} in steps"),
            "{}",
            cycles[0]
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_never_edge_between_crates_or_modules_fails() {
        let d = temp("never");
        let krate = |name: &str, deps: &str| {
            write(
                &d,
                &format!("crates/{name}/Cargo.toml"),
                &format!("[package]\nname = \"{name}\"\n\n[dependencies]\n{deps}\n[dev-dependencies]\nqa-web.workspace = true\n"),
            );
            write(&d, &format!("crates/{name}/src/lib.rs"), "");
        };
        krate("qa-core", "serde.workspace = true\n");
        krate("qa-runner", "qa-core.workspace = true\n");
        krate("qa-tui", "qa-core.workspace = true\n");
        krate("qa-web", "qa-core.workspace = true\n");
        std::fs::create_dir_all(d.join("xtask/src")).unwrap();
        write(
            &d,
            "crates/qa-runner/src/lib.rs",
            "mod flow;\nmod report;\nmod runner;\n",
        );
        write(&d, "crates/qa-runner/src/flow.rs", "pub struct Flow;\n");
        write(
            &d,
            "crates/qa-runner/src/runner.rs",
            "use crate::flow::Flow;\n",
        );
        write(
            &d,
            "crates/qa-runner/src/report.rs",
            "use crate::flow::Flow;\n",
        );
        // Dev-dependencies and the runner's other edges are fine.
        assert_eq!(never_edges(&d), Vec::<String>::new());
        // A driver on another driver, the contract on the runner, the
        // report naming the runner: each fails with its reason.
        krate(
            "qa-tui",
            "qa-core.workspace = true\nqa-web = { path = \"../qa-web\" }\n",
        );
        krate(
            "qa-core",
            "serde.workspace = true\nqa-runner.workspace = true\n",
        );
        write(
            &d,
            "crates/qa-runner/src/report.rs",
            "use crate::runner::go;\n",
        );
        let found = never_edges(&d);
        assert_eq!(found.len(), 3, "{found:#?}");
        assert!(
            found.iter().any(|e| e
                .starts_with("qa-tui must never depend on qa-web (crates/qa-tui/Cargo.toml:6)")
                && e.contains("drivers never depend on each other")),
            "{found:#?}"
        );
        assert!(
            found.iter().any(|e| e.starts_with(
                "qa-core must never depend on qa-runner (crates/qa-core/Cargo.toml:6)"
            )),
            "{found:#?}"
        );
        assert!(
            found.iter().any(|e| e.starts_with(
                "qa-runner: report must never name runner (crates/qa-runner/src/report.rs:1)"
            )),
            "{found:#?}"
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn the_workspace_has_no_never_edges() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let found = never_edges(root);
        assert!(found.is_empty(), "never edges:\n{}", found.join("\n"));
    }

    #[test]
    fn the_workspace_has_no_import_cycles() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let all: Vec<String> = workspace_sources(root)
            .iter()
            .flat_map(|src| crate_cycles(src))
            .collect();
        assert!(all.is_empty(), "import cycles:\n{}", all.join("\n"));
    }
}
