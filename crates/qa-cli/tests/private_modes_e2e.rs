//! Everything ui-qa writes is private whatever the umask, and a run id is a
//! plain name (letters, digits, `-`, `_`, `.`) — never one a terminal would
//! interpret.
#![cfg(unix)]

mod common;

use common::{bin, write};
use std::os::unix::fs::PermissionsExt;
use std::process::Command;

fn mode(p: &std::path::Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn under_umask_000_everything_written_is_private() {
    let dir = tempfile::tempdir().unwrap();
    let flow = write(
        dir.path(),
        "ok.jsonc",
        r#"{"target":{"command":{"argv":["sh","-c","echo hello"]}},
            "steps":[{"action":"waitForText","text":"hello","timeoutMs":60000},{"action":"capture"}]}"#,
    );
    let ws = dir.path().join("new/ws");
    let junit = dir.path().join("report.xml");
    let st = Command::new("sh")
        .arg("-c")
        .arg("umask 000; exec \"$0\" run --workspace \"$1\" --junit \"$2\" \"$3\"")
        .arg(bin())
        .arg(&ws)
        .arg(&junit)
        .arg(&flow)
        .output()
        .unwrap();
    assert_eq!(
        st.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    assert_eq!(mode(&ws), 0o700, "workspace root");
    assert_eq!(mode(&junit), 0o600, "JUnit report");
    let mut stack = vec![ws.clone()];
    let mut seen = 0;
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            seen += 1;
            if e.file_type().unwrap().is_symlink() {
                // Only `runs/latest`: a relative link to a sibling run
                // (a symlink has no mode of its own; its target is checked).
                assert_eq!(p.file_name().unwrap(), "latest", "{}", p.display());
                let target = std::fs::read_link(&p).unwrap();
                assert_eq!(target.components().count(), 1, "{}", target.display());
                continue;
            }
            if e.file_type().unwrap().is_dir() {
                assert_eq!(mode(&p), 0o700, "{}", p.display());
                stack.push(p);
            } else {
                assert_eq!(mode(&p), 0o600, "{}", p.display());
            }
        }
    }
    assert!(seen >= 5, "the run wrote its files");
}

#[test]
fn run_ids_with_control_characters_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let flow = write(
        dir.path(),
        "ok.jsonc",
        r#"{"target":{"command":{"argv":["true"]}},"steps":[{"action":"assertProcessExited"}]}"#,
    );
    for bad in ["a\nb", "a\u{1b}[31mb", "a b", ".hidden", "a/b"] {
        let o = Command::new(bin())
            .args(["run", "--workspace"])
            .arg(dir.path().join("ws"))
            .args(["--run-id", bad])
            .arg(&flow)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains('\u{1b}'), "the id is echoed escaped: {err:?}");
        assert!(!dir.path().join("ws/runs").join(bad).exists());
    }
}
