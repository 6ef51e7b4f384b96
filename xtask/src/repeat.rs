//! `cargo xtask test --repeat N`: the suite N times in a row, then every test
//! that failed in any run with its failure count. A flake shows up as a test
//! that failed in some runs and not in others; nothing is retried.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::Command;

/// What one run of `cargo test` reported.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct RunReport {
    /// Failed tests as `binary::test` (the binary from cargo's `Running`
    /// line, or `doctests crate`).
    pub failed: Vec<String>,
    /// Test binaries that ended without a result line (crashed, killed).
    pub aborted: Vec<String>,
    /// Tests that passed.
    pub passed: usize,
}

/// The test binary a cargo `Running`/`Doc-tests` line names.
fn binary_of(line: &str) -> Option<String> {
    let t = line.trim();
    if let Some(rest) = t.strip_prefix("Running ") {
        // `Running tests/web_e2e.rs (target/debug/deps/web_e2e-0123abcd)`
        let src = rest.split_whitespace().next().unwrap_or(rest);
        let krate = rest
            .rsplit('/')
            .next()
            .and_then(|s| s.trim_end_matches(')').rsplit_once('-'))
            .map(|(name, _)| name.to_string())
            .unwrap_or_default();
        return Some(format!("{krate} ({src})"));
    }
    t.strip_prefix("Doc-tests ")
        .map(|k| format!("doctests {}", k.trim()))
}

/// Reads one run's combined output (cargo's stderr and the test binaries'
/// stdout, in order).
pub fn parse(output: &str) -> RunReport {
    let mut r = RunReport::default();
    let mut current: Option<String> = None;
    let mut has_result = true;
    for line in output.lines() {
        if let Some(b) = binary_of(line) {
            if !has_result {
                if let Some(prev) = current.take() {
                    r.aborted.push(prev);
                }
            }
            current = Some(b);
            has_result = false;
            continue;
        }
        let t = line.trim_end();
        if t.starts_with("test result:") {
            has_result = true;
            continue;
        }
        if let Some(rest) = t.strip_prefix("test ") {
            let bin = current.clone().unwrap_or_else(|| "?".into());
            if let Some(name) = rest.strip_suffix(" ... FAILED") {
                r.failed.push(format!("{bin}: {name}"));
            } else if rest.ends_with(" ... ok") {
                r.passed += 1;
            }
        }
    }
    if !has_result {
        if let Some(prev) = current {
            r.aborted.push(prev);
        }
    }
    r
}

/// Runs `cmd` (a `cargo test` command) `n` times, echoing its output, and
/// prints the failure table. `true` when every run passed.
pub fn repeat(n: usize, mut cmd: impl FnMut() -> Command) -> bool {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut green = 0;
    for i in 1..=n {
        eprintln!("xtask test: run {i} of {n}");
        let mut c = cmd();
        let (reader, writer) = match std::io::pipe() {
            Ok(p) => p,
            Err(e) => {
                eprintln!("xtask test: cannot make a pipe: {e}");
                return false;
            }
        };
        let Ok(w2) = writer.try_clone() else {
            return false;
        };
        c.stdout(writer).stderr(w2);
        let mut child = match c.spawn() {
            Ok(ch) => ch,
            Err(e) => {
                eprintln!("xtask test: cannot run {c:?}: {e}");
                return false;
            }
        };
        // The command holds the only writers now.
        drop(c);
        let mut all = String::new();
        let out = std::io::stdout();
        for line in BufReader::new(reader).lines() {
            let Ok(line) = line else { break };
            let _ = writeln!(out.lock(), "{line}");
            all.push_str(&line);
            all.push('\n');
        }
        let ok = child.wait().map(|s| s.success()).unwrap_or(false);
        let report = parse(&all);
        for t in report.failed.iter().chain(report.aborted.iter()) {
            *counts.entry(t.clone()).or_insert(0) += 1;
        }
        let clean = ok && report.failed.is_empty() && report.aborted.is_empty();
        if clean {
            green += 1;
        }
        eprintln!(
            "xtask test: run {i} of {n}: {} ({} passed, {} failed{})",
            if clean { "green" } else { "RED" },
            report.passed,
            report.failed.len(),
            if report.aborted.is_empty() {
                String::new()
            } else {
                format!(", {} binaries ended without a result", report.aborted.len())
            }
        );
    }
    println!();
    println!("xtask test --repeat {n}: {green} of {n} runs green");
    if counts.is_empty() {
        println!("no test failed in any run");
    } else {
        println!("failures (test: runs failed of {n}):");
        for (t, c) in &counts {
            println!("  {t}: {c} of {n}");
        }
    }
    green == n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_named_with_their_binary() {
        let out = "\
   Compiling x
     Running tests/web_e2e.rs (target/debug/deps/web_e2e-0123abcd)

running 2 tests
test a ... ok
test b::c ... FAILED

test result: FAILED. 1 passed; 1 failed; 0 ignored
     Running unittests src/lib.rs (target/debug/deps/qa_core-feedbeef)
test d ... ok
error: test failed, to rerun pass `-p qa-core --lib`
   Doc-tests qa_web
test crates/qa-web/src/lib.rs - (line 10) ... FAILED
test result: FAILED. 0 passed; 1 failed
";
        let r = parse(out);
        assert_eq!(
            r.failed,
            vec![
                "web_e2e (tests/web_e2e.rs): b::c".to_string(),
                "doctests qa_web: crates/qa-web/src/lib.rs - (line 10)".to_string(),
            ]
        );
        assert_eq!(r.aborted, vec!["qa_core (unittests)".to_string()]);
        assert_eq!(r.passed, 2);
    }

    #[test]
    fn a_clean_run_reports_nothing() {
        let r = parse("     Running tests/a.rs (target/debug/deps/a-1)\ntest x ... ok\ntest result: ok. 1 passed\n");
        assert!(r.failed.is_empty() && r.aborted.is_empty());
        assert_eq!(r.passed, 1);
    }
}
