//! Snapshots of what a person reads: help text and flow errors, produced by
//! the real binary.

use std::process::Command;

fn ui_qa(args: &[&str]) -> (Option<i32>, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_ui-qa"))
        .args(args)
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn help_teaches_the_commands() {
    let (code, out, _) = ui_qa(&["--help"]);
    assert_eq!(code, Some(0));
    insta::assert_snapshot!("help", out);
    let (code, out, _) = ui_qa(&["run", "--help"]);
    assert_eq!(code, Some(0));
    insta::assert_snapshot!("run_help", out);
}

#[test]
fn check_errors_name_field_position_and_fix() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bad.jsonc");
    std::fs::write(
        &f,
        "{\n  // a terminal flow with two mistakes; the first is reported\n  \"target\": { \"command\": { \"argv\": [\"bash\"] } },\n  \"steps\": [\n    { \"action\": \"sendKeys\", \"keys\": [\"Enter\", \"Hyper+x\"] }\n  ]\n}\n",
    )
    .unwrap();
    let (code, out, err) = ui_qa(&["check", f.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(out.is_empty());
    let err = err.replace(f.to_str().unwrap(), "bad.jsonc");
    insta::assert_snapshot!("check_error", err);
}

/// `check` reports every mistake it can (each step's, bounded), suggests
/// the nearest valid name, and warns about what parses but never matches.
#[test]
fn check_reports_every_mistake_with_a_suggestion() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, body: &str| {
        let f = dir.path().join(name);
        std::fs::write(&f, body).unwrap();
        f
    };
    let mut report = String::new();
    for (name, body) in [
        (
            "steps.jsonc",
            "{\n  \"target\": { \"url\": \"http://127.0.0.1:8000/\" },\n  \"steps\": [\n    { \"action\": \"clik\", \"locator\": { \"role\": \"button\" } },\n    { \"action\": \"fill\", \"locator\": { \"label\": \"Name\" } }\n  ]\n}\n",
        ),
        (
            "mixed.jsonc",
            "{\n  \"target\": { \"url\": \"http://127.0.0.1:8000/\" },\n  \"steps\": [\n    { \"action\": \"click\", \"locator\": { \"role\": \"buton\" } },\n    { \"action\": \"clik\", \"locator\": { \"role\": \"button\" } }\n  ]\n}\n",
        ),
        (
            "roles.jsonc",
            "{\n  \"target\": { \"url\": \"http://127.0.0.1:8000/\" },\n  \"steps\": [\n    { \"action\": \"click\", \"locator\": { \"role\": \"buton\" } },\n    { \"action\": \"click\", \"locator\": { \"role\": \"push button\", \"name\": \"OK\" } }\n  ]\n}\n",
        ),
        (
            "desktop.jsonc",
            "{\n  \"target\": { \"application\": { \"launch\": { \"argv\": [\"gtk4-demo\"] } } },\n  \"steps\": [\n    { \"action\": \"activate\", \"locator\": { \"role\": \"push button\", \"name\": \"Run\" } },\n    { \"action\": \"activate\", \"locator\": { \"role\": \"push buton\", \"name\": \"Run\" } }\n  ]\n}\n",
        ),
        (
            "terminal.jsonc",
            "{\n  \"target\": { \"command\": { \"argv\": [\"sqlite3\"] } },\n  \"steps\": [\n    { \"action\": \"sendKeys\", \"keys\": [\"Meta+a\"] }\n  ]\n}\n",
        ),
        (
            "argv.jsonc",
            "{\n  \"target\": { \"command\": { \"argv\": \"bc -q\" } },\n  \"steps\": [ { \"action\": \"waitForText\", \"text\": \"0\" } ]\n}\n",
        ),
        (
            "space.jsonc",
            "{\n  \"target\": { \"command\": { \"argv\": [\"sqlite3\"] } },\n  \"steps\": [ { \"action\": \"waitForText\", \"text\": \"sqlite> \" } ]\n}\n",
        ),
    ] {
        let f = write(name, body);
        let (code, out, err) = ui_qa(&["check", f.to_str().unwrap()]);
        assert!(out.is_empty());
        let err = err.replace(dir.path().to_str().unwrap(), "");
        report.push_str(&format!("$ ui-qa check {name}  (exit {})\n{err}\n", code.unwrap()));
    }
    insta::assert_snapshot!("check_mistakes", report);
}

/// Each message names its fix (issue 45 item 7): a missing target, a URL
/// without its scheme, a terminal action in a browser flow, and a regex
/// whose caret stands under the offending character.
#[test]
fn check_messages_name_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let mut report = String::new();
    for (name, body) in [
        (
            "no-target.jsonc",
            "{\n  \"steps\": [ { \"action\": \"waitForText\", \"text\": \"ready\" } ]\n}\n",
        ),
        (
            "no-scheme.jsonc",
            "{\n  \"target\": { \"url\": \"localhost:8000/admin\" },\n  \"steps\": [ { \"action\": \"assertURL\", \"includes\": \"admin\" } ]\n}\n",
        ),
        (
            "bare-host.jsonc",
            "{\n  \"target\": { \"url\": \"example.com\" },\n  \"steps\": [ { \"action\": \"assertURL\", \"includes\": \"example\" } ]\n}\n",
        ),
        (
            "send-keys.jsonc",
            "{\n  \"target\": { \"url\": \"http://127.0.0.1:8000/\" },\n  \"steps\": [ { \"action\": \"sendKeys\", \"keys\": [\"Enter\"] } ]\n}\n",
        ),
        (
            "regex.jsonc",
            "{\n  \"target\": { \"command\": { \"argv\": [\"sh\"] } },\n  \"steps\": [ { \"action\": \"waitForText\", \"regex\": \"total: (\\\\d+\" } ]\n}\n",
        ),
    ] {
        let f = dir.path().join(name);
        std::fs::write(&f, body).unwrap();
        let (code, out, err) = ui_qa(&["check", f.to_str().unwrap()]);
        assert_eq!(code, Some(2), "{err}");
        assert!(out.is_empty());
        let err = err.replace(dir.path().to_str().unwrap(), "");
        report.push_str(&format!("$ ui-qa check {name}  (exit 2)\n{err}\n"));
    }
    // The caret is under the unclosed `(`, on the line after the pattern.
    let lines: Vec<&str> = report.lines().collect();
    let at = lines.iter().position(|l| l.contains("total: (")).unwrap();
    assert_eq!(lines[at].find('('), lines[at + 1].find('^'), "{report}");
    insta::assert_snapshot!("check_fixes", report);
}
