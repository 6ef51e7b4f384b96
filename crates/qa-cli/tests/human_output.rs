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
