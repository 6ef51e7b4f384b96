//! Issue 45 item 10: a launched program gets a fresh home in the run's
//! scratch by default (`HOME` and the XDG base directories), so what it
//! saves never lands in the user's home; `"home": "inherit"` gives it the
//! user's. Real programs through the `ui-qa` binary: a shell in a PTY, and
//! a GTK application under an owned Xvfb and private session bus. The
//! `ui-qa` process itself runs with `HOME` set to a temporary directory, so
//! the machine's own home is never touched.

#![cfg(unix)]

mod common;

#[cfg(target_os = "linux")]
use common::root;
use common::{run_json, write};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A shell line that writes `$HOME/marker`, then prints where its home and
/// XDG directories are and what the marker holds.
const MARK: &str = r#"echo x > \"$HOME/marker\"; echo \"HOME=$HOME\"; echo \"CONFIG=$XDG_CONFIG_HOME\"; echo \"DATA=$XDG_DATA_HOME\"; echo \"CACHE=$XDG_CACHE_HOME\"; echo \"STATE=$XDG_STATE_HOME\"; echo \"marker=$(cat \"$HOME/marker\")\""#;

/// Runs `flow` with `HOME` (of `ui-qa` itself) set to `home`.
fn run(flow: &Path, ws: &Path, home: &Path, extra: &[&str]) -> (i32, Value) {
    run_json(flow, ws, extra, |c| {
        c.env("HOME", home)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_DATA_HOME")
            .env_remove("XDG_CACHE_HOME")
            .env_remove("XDG_STATE_HOME");
    })
}

/// The text of the first artifact of `group` whose path contains `part`.
fn artifact_text(r: &Value, group: &str, part: &str) -> String {
    let items = r["artifacts"][group].as_array().unwrap();
    let a = items
        .iter()
        .find(|a| a["path"].as_str().unwrap().contains(part))
        .unwrap_or_else(|| panic!("no {part} in {group}: {r:#}"));
    std::fs::read_to_string(a["path"].as_str().unwrap()).unwrap()
}

/// The value printed after `key=` on a line of `text` (a terminal line is
/// padded with spaces).
fn printed(text: &str, key: &str) -> String {
    let at = text
        .find(&format!("{key}="))
        .unwrap_or_else(|| panic!("no {key}= in {text}"));
    let rest = &text[at + key.len() + 1..];
    rest[..rest.find(['\n', ' ', '|']).unwrap_or(rest.len())].to_string()
}

/// Checks what the program printed: its home is the run's scratch home,
/// the XDG directories are in it (`CACHE` is the flow's own), the marker
/// was written there, and the scratch is gone after the run.
fn assert_scratch_home(r: &Value, text: &str, cache: &Path) {
    let run_dir = PathBuf::from(r["evidenceDir"].as_str().unwrap());
    let home = PathBuf::from(printed(text, "HOME"));
    assert_eq!(home, run_dir.join("work/home"), "{text}");
    assert_eq!(PathBuf::from(printed(text, "CONFIG")), home.join(".config"));
    assert_eq!(
        PathBuf::from(printed(text, "DATA")),
        home.join(".local/share")
    );
    assert_eq!(
        PathBuf::from(printed(text, "STATE")),
        home.join(".local/state")
    );
    // The flow's own env wins over the fresh home.
    assert_eq!(PathBuf::from(printed(text, "CACHE")), cache);
    assert_eq!(printed(text, "marker"), "x");
    // The scratch (and the marker with it) went with the run.
    assert!(
        !run_dir.join("work").exists(),
        "the scratch was not removed"
    );
}

#[test]
fn a_terminal_program_gets_a_fresh_home_unless_the_flow_inherits() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("user-home");
    std::fs::create_dir(&home).unwrap();
    let cache = dir.path().join("flow-cache");
    let flow = |home_field: &str| {
        format!(
            r#"{{"target":{{"command":{{"argv":["sh","-c","{MARK}; echo done; exec sleep 600"],
                 "env":{{"XDG_CACHE_HOME":{cache:?}}}{home_field}}}}},
                 "steps":[{{"action":"waitForText","text":"done"}},{{"action":"capture","name":"env"}}]}}"#,
            cache = cache.display().to_string()
        )
    };

    // Default: a fresh home in the run's scratch.
    let f = write(dir.path(), "fresh.jsonc", &flow(""));
    let (code, r) = run(&f, &dir.path().join("ws"), &home, &[]);
    assert_eq!(code, 0, "{r:#}");
    let text = artifact_text(&r, "terminalCaptures", "env");
    assert_scratch_home(&r, &text, &cache);
    assert!(
        std::fs::read_dir(&home).unwrap().next().is_none(),
        "the program wrote into the user's home"
    );

    // Opted out: the user's home.
    let f = write(dir.path(), "inherit.jsonc", &flow(r#","home":"inherit""#));
    let (code, r) = run(&f, &dir.path().join("ws"), &home, &[]);
    assert_eq!(code, 0, "{r:#}");
    let text = artifact_text(&r, "terminalCaptures", "env");
    assert_eq!(PathBuf::from(printed(&text, "HOME")), home);
    assert_eq!(std::fs::read_to_string(home.join("marker")).unwrap(), "x\n");
}

#[cfg(target_os = "linux")]
#[test]
fn a_desktop_application_gets_a_fresh_home_unless_the_flow_inherits() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("user-home");
    std::fs::create_dir(&home).unwrap();
    let cache = dir.path().join("flow-cache");
    let app = root().join("tests/fixtures/desktop/fixture_app.py");
    let flow = |home_field: &str| {
        format!(
            r#"{{"timeoutMs":60000,
                 "target":{{"application":{{"launch":{{"argv":["sh","-c","{MARK}; exec /usr/bin/python3 \"$0\"",{app:?}],
                   "env":{{"XDG_CACHE_HOME":{cache:?}}}{home_field}}}}}}},
                 "steps":[{{"action":"waitForWindow","title":{{"equals":"ui-qa fixture"}}}},
                          {{"action":"assertOutput","includes":"marker=x"}}]}}"#,
            app = app.display().to_string(),
            cache = cache.display().to_string()
        )
    };
    let run = |f: &Path| {
        run_json(f, &dir.path().join("ws"), &["--virtual-display"], |c| {
            c.env("HOME", &home)
                .env_remove("DISPLAY")
                .env_remove("WAYLAND_DISPLAY")
                .env_remove("DBUS_SESSION_BUS_ADDRESS")
                .env_remove("XDG_CONFIG_HOME")
                .env_remove("XDG_DATA_HOME")
                .env_remove("XDG_CACHE_HOME")
                .env_remove("XDG_STATE_HOME");
        })
    };

    // Default: a fresh home in the run's scratch.
    let f = write(dir.path(), "fresh.jsonc", &flow(""));
    let (code, r) = run(&f);
    assert_eq!(code, 0, "{r:#}");
    let text = artifact_text(&r, "logs", "app-stdout");
    assert_scratch_home(&r, &text, &cache);
    assert!(
        !home.join("marker").exists(),
        "the application wrote into the user's home"
    );

    // Opted out: the user's home.
    let f = write(dir.path(), "inherit.jsonc", &flow(r#","home":"inherit""#));
    let (code, r) = run(&f);
    assert_eq!(code, 0, "{r:#}");
    let text = artifact_text(&r, "logs", "app-stdout");
    assert_eq!(PathBuf::from(printed(&text, "HOME")), home);
    assert_eq!(std::fs::read_to_string(home.join("marker")).unwrap(), "x\n");
}
