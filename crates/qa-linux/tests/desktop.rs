//! Real applications under the driver's own Xvfb + private session bus.
//! Every test also proves that nothing the run started is left behind.
#![cfg(target_os = "linux")]

mod common;

use common::{assert_nothing_left, fixtures, read_artifact, require, run, run_until};
use std::time::Duration;

fn fixture_flow(steps: &str) -> String {
    format!(
        r#"{{ "target": {{ "application": {{ "launch": {{ "argv": ["/usr/bin/python3", "fixture_app.py"], "cwd": "." }} }} }},
           "timeoutMs": 60000,
           "steps": [ {{ "action": "waitForWindow", "title": {{ "equals": "ui-qa fixture" }} }}, {steps} ] }}"#
    )
}

fn png_size(bytes: &[u8]) -> (u32, u32) {
    let d = png::Decoder::new(std::io::Cursor::new(bytes.to_vec()));
    let r = d.read_info().unwrap();
    (r.info().width, r.info().height)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calculator_adds_two_and_three() {
    require("gnome-calculator");
    let r = run(r#"{ "target": { "application": { "launch": { "argv": ["gnome-calculator"] } } },
      "timeoutMs": 60000,
      "steps": [
        { "action": "waitForWindow", "title": { "equals": "Calculator" } },
        { "action": "activate", "locator": { "role": "button", "name": "2 2" } },
        { "action": "activate", "locator": { "role": "button", "name": "+ +" } },
        { "action": "activate", "locator": { "role": "button", "name": "3 3" } },
        { "action": "activate", "locator": { "role": "button", "name": "= =" } },
        { "action": "assertText", "locator": { "role": "textbox", "name": "GtkSourceView" }, "equals": "5" },
        { "action": "capture", "name": "result" } ] }"#)
    .await;
    assert!(r.error.is_none(), "{:?}", r.error);
    let png = r
        .artifacts
        .iter()
        .find(|a| a.path.ends_with("result.png"))
        .expect("png");
    let snap = r
        .artifacts
        .iter()
        .find(|a| a.path.ends_with("result.json"))
        .expect("snapshot");
    let doc: serde_json::Value = serde_json::from_slice(&read_artifact(snap)).unwrap();
    let win = &doc["tree"]["children"][0];
    assert_eq!(win["name"], "Calculator");
    // GTK 4 reports window-relative extents without its resize margins, so
    // the X window is a few pixels larger than the accessible frame.
    let (w, h) = png_size(&read_artifact(png));
    let (bw, bh) = (
        win["bounds"]["width"].as_i64().unwrap(),
        win["bounds"]["height"].as_i64().unwrap(),
    );
    assert!(
        (w as i64 - bw).abs() <= 16 && (h as i64 - bh).abs() <= 16,
        "png {w}x{h} vs window {bw}x{bh}"
    );
    assert_nothing_left(&r);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zenity_entry_through_a_wrapper_script() {
    require("zenity");
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("answer.txt");
    let flow = format!(
        r#"{{ "target": {{ "application": {{ "launch": {{ "argv": ["sh", "-c", "zenity --entry --title=Ask --text='Your name?' > \"$1\"", "sh", "{}"] }} }} }},
          "timeoutMs": 60000,
          "steps": [
            {{ "action": "waitForWindow", "title": {{ "equals": "Ask" }} }},
            {{ "action": "inputText", "locator": {{ "role": "textbox" }}, "text": "Ada Lovelace" }},
            {{ "action": "assertText", "locator": {{ "role": "textbox" }}, "equals": "Ada Lovelace" }},
            {{ "action": "pressKey", "key": "Enter" }} ] }}"#,
        file.display()
    );
    // zenity writes the answer as it exits after Enter; closing the run
    // ends it, so wait for the answer (not a fixed time) before closing.
    let written = file.clone();
    let answered = move || std::fs::read_to_string(&written).is_ok_and(|t| !t.trim().is_empty());
    let r = run_until(&flow, answered, Duration::from_secs(30)).await;
    assert!(r.error.is_none(), "{:?}", r.error);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap().trim(),
        "Ada Lovelace"
    );
    assert_nothing_left(&r);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_entry_button_label_and_checkbox() {
    let r = run(&fixture_flow(
        r#"
        { "action": "setValue", "locator": { "automationId": "name-entry" }, "value": "hello" },
        { "action": "activate", "locator": { "role": "button", "name": "Copy" } },
        { "action": "assertText", "locator": { "automationId": "echo-label" }, "equals": "hello" },
        // Focusing a GTK entry selects its text, so typing replaces it.
        { "action": "inputText", "locator": { "role": "textbox", "name": "Name" }, "text": " World!" },
        { "action": "assertState", "locator": { "automationId": "name-entry" }, "value": { "equals": " World!" } },
        { "action": "assertState", "locator": { "role": "checkbox", "name": "Subscribe" }, "state": "unchecked" },
        { "action": "activate", "locator": { "path": [ { "role": "window", "name": "ui-qa fixture" }, { "role": "checkbox" } ] } },
        { "action": "assertState", "locator": { "automationId": "subscribe-check" }, "state": "checked" },
        { "action": "waitForText", "equals": "on" },
        { "action": "capture", "name": "fixture" }"#,
    ))
    .await;
    assert!(r.error.is_none(), "{:?}", r.error);
    let png = r
        .artifacts
        .iter()
        .find(|a| a.path.ends_with("fixture.png"))
        .expect("png");
    let snap = r
        .artifacts
        .iter()
        .find(|a| a.path.ends_with("fixture.json"))
        .expect("snapshot");
    let doc: serde_json::Value = serde_json::from_slice(&read_artifact(snap)).unwrap();
    let b = &doc["tree"]["children"][0]["bounds"];
    // GTK 3 without a window manager: the PNG is exactly the frame's bounds.
    assert_eq!(
        png_size(&read_artifact(png)),
        (
            b["width"].as_u64().unwrap() as u32,
            b["height"].as_u64().unwrap() as u32
        )
    );
    assert_nothing_left(&r);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ambiguous_locator_names_candidates() {
    let r = run(&fixture_flow(
        r#"{ "action": "activate", "locator": { "role": "label" } }"#,
    ))
    .await;
    let e = r.error.clone().expect("ambiguity is an error");
    assert_eq!(e.code, "desktop.locator.ambiguous", "{e}");
    assert!(e.message.contains("label"), "{e}");
    assert_nothing_left(&r);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gtk_demos_snapshot() {
    for (bin, expect) in [
        ("gtk3-demo", "Application Class"),
        ("gtk4-demo", "GTK Demo"),
    ] {
        require(bin);
        // The window can be there before the toolkit has filled it (GTK 4
        // builds the demo list after the window shows): snapshot once an
        // element the snapshot must hold is on the bus.
        let r = run(&format!(
            r#"{{ "target": {{ "application": {{ "launch": {{ "argv": ["{bin}"] }} }} }}, "timeoutMs": 60000,
               "steps": [ {{ "action": "waitForWindow" }},
                          {{ "action": "waitForText", "includes": "{expect}", "timeoutMs": 30000 }},
                          {{ "action": "snapshotAccessibility" }} ] }}"#
        ))
        .await;
        assert!(r.error.is_none(), "{bin}: {:?}", r.error);
        let snap = &r.artifacts[0];
        let doc: serde_json::Value = serde_json::from_slice(&read_artifact(snap)).unwrap();
        let text = doc.to_string();
        let nodes = doc["nodeCount"].as_u64().unwrap();
        eprintln!("{bin}: {nodes} nodes in {} ms", doc["elapsedMs"]);
        assert!(nodes > 50, "{bin}: {nodes} nodes");
        assert!(text.contains(expect), "{bin} snapshot lacks {expect:?}");
        assert!(text.contains("\"bounds\""));
        assert_nothing_left(&r);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_at_bridge_is_blocked_with_the_cause() {
    let flow = format!(
        r#"{{ "target": {{ "application": {{ "launch": {{ "argv": ["/usr/bin/python3", "{}/fixture_app.py"], "env": {{ "NO_AT_BRIDGE": "1" }} }} }} }},
           "timeoutMs": 120000, "steps": [ {{ "action": "waitForWindow" }} ] }}"#,
        fixtures().display()
    );
    let r = run(&flow).await;
    let e = r.error.clone().expect("blocked");
    assert!(e.is_blocked(), "{e}");
    assert_eq!(e.code, "desktop.app.not_accessible");
    assert!(e.message.contains("NO_AT_BRIDGE"), "{e}");
    // Blocked by the driver's own bounded registration wait (at most 15 s
    // after start-up), far below the 120 s flow deadline: 45 s leaves a
    // cold machine room and still catches a run that waits the flow out.
    assert!(r.elapsed.as_secs() < 45, "took {:?}", r.elapsed);
    assert_nothing_left(&r);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn xterm_is_blocked() {
    require("xterm");
    let r = run(
        r#"{ "target": { "application": { "launch": { "argv": ["xterm"] } } }, "timeoutMs": 120000,
                     "steps": [ { "action": "waitForWindow" } ] }"#,
    )
    .await;
    let e = r.error.clone().expect("blocked");
    assert!(e.is_blocked(), "{e}");
    assert_eq!(e.code, "desktop.app.not_accessible");
    // Blocked by the driver's own bounded registration wait (at most 15 s
    // after start-up), far below the 120 s flow deadline: 45 s leaves a
    // cold machine room and still catches a run that waits the flow out.
    assert!(r.elapsed.as_secs() < 45, "took {:?}", r.elapsed);
    assert_nothing_left(&r);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_program_is_blocked_like_a_missing_terminal_program() {
    let text = r#"{ "target": { "application": { "launch": { "argv": ["no-such-program-ui-qa"] } } },
                     "steps": [ { "action": "waitForWindow" } ] }"#;
    let r = run(text).await;
    let e = r.error.clone().expect("error");
    // The probe finds it missing before anything starts (open would say
    // the same, desktop.launch.not_found, also BLOCKED).
    assert!(e.is_blocked(), "BLOCKED, not FAILED: {e:?}");
    assert!(e.missing.iter().any(|m| m.id == "application"), "{e:?}");
    assert_nothing_left(&r);
    // The probe says so before anything starts.
    let flow = qa_core::Flow::parse(text, std::path::Path::new(".")).unwrap();
    let p = qa_core::SurfaceDriver::probe(
        &qa_linux::LinuxDesktopDriver::new(),
        &flow,
        &qa_core::Host::current(),
        &qa_core::RunOptions::default(),
    )
    .await;
    assert!(
        p.missing.iter().any(|m| m.id == "application"),
        "{:?}",
        p.missing
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn activate_without_action_clicks_with_the_pointer() {
    let r = run(&fixture_flow(
        r#"
        { "action": "assertText", "locator": { "automationId": "click-label" }, "equals": "not clicked" },
        { "action": "activate", "locator": { "automationId": "click-area" } },
        { "action": "assertText", "locator": { "automationId": "click-label" }, "equals": "clicked 1" },
        { "action": "activate", "locator": { "role": "label", "name": "Click me" } },
        { "action": "assertText", "locator": { "automationId": "click-label" }, "equals": "clicked 2" },
        { "action": "activate", "locator": { "role": "button", "name": "Copy" } }"#,
    ))
    .await;
    assert!(r.error.is_none(), "{:?}", r.error);
    let clicks: Vec<&String> = r
        .details
        .iter()
        .filter(|d| d.starts_with("pointer click at"))
        .collect();
    assert_eq!(clicks.len(), 2, "{:?}", r.details);
    // The window sits at (120,80) on the root: the click landed inside it.
    assert!(clicks[0].contains("(300,"), "{:?}", r.details);
    // Elements with an action still use it.
    assert!(
        r.details.last().unwrap().starts_with("action "),
        "{:?}",
        r.details
    );
    assert_nothing_left(&r);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn select_picks_a_list_row_and_click_uses_the_pointer() {
    let r = run(&fixture_flow(
        r#"
        { "action": "assertText", "locator": { "automationId": "picked-label" }, "equals": "none picked" },
        { "action": "select", "locator": { "role": "listitem", "name": "Banana" } },
        { "action": "assertText", "locator": { "automationId": "picked-label" }, "equals": "picked Banana" },
        { "action": "assertState", "locator": { "role": "listitem", "name": "Banana" }, "state": "selected" },
        { "action": "click", "locator": { "automationId": "copy-button" } },
        { "action": "click", "locator": { "automationId": "click-area" } },
        { "action": "assertText", "locator": { "automationId": "click-label" }, "equals": "clicked 1" }"#,
    ))
    .await;
    assert!(r.error.is_none(), "{:?}", r.error);
    assert!(
        r.details
            .iter()
            .any(|d| d == "selected item 1 of its container"),
        "{:?}",
        r.details
    );
    assert!(
        r.details
            .iter()
            .filter(|d| d.starts_with("pointer click at"))
            .count()
            == 2,
        "a button with an action is still clicked with the pointer: {:?}",
        r.details
    );
    // A label is no item of a selectable container.
    let r = run(&fixture_flow(
        r#"{ "action": "select", "locator": { "automationId": "picked-label" }, "timeoutMs": 3000 }"#,
    ))
    .await;
    assert_eq!(
        r.error.as_ref().map(|e| e.code),
        Some("desktop.select.unsupported"),
        "{:?}",
        r.error
    );
    assert_nothing_left(&r);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_window_title_that_matches_nothing_is_an_error_not_another_window() {
    let r = run(
        r#"{ "target": { "application": { "launch": { "argv": ["/usr/bin/python3", "fixture_app.py"], "cwd": "." },
                                          "window": { "title": "No such window" } } },
             "timeoutMs": 60000,
             "steps": [ { "action": "waitForWindow", "title": { "equals": "ui-qa fixture" } },
                        { "action": "screenshot" } ] }"#,
    )
    .await;
    let e = r.error.clone().expect("the named window is not there");
    assert_eq!(e.code, "desktop.window.title_not_found", "{e:?}");
    assert!(
        e.message.contains("\"ui-qa fixture\""),
        "the titles there are: {}",
        e.message
    );
    assert!(
        r.artifacts.iter().all(|a| !a.path.ends_with(".png")),
        "no picture of another window: {:?}",
        r.artifacts
    );
    assert_nothing_left(&r);
}

/// gtk4-demo must be there (`cargo xtask deps` installs it): a missing
/// program fails the test, as the Qt and terminal tests do, never passes it.
fn require_gtk4_demo() {
    assert!(
        qa_core::host::which("gtk4-demo").is_some(),
        "gtk4-demo is missing: apt-get install -y gtk-4-examples (cargo xtask deps)"
    );
}

/// A GTK 4 spin button: a number is set through Value (which the toolkit
/// commits), and text it does not commit is a failure, never a pass.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gtk4_spin_button_values_commit_or_fail() {
    require_gtk4_demo();
    let r = run(
        r#"{ "target": { "application": { "launch": { "argv": ["gtk4-demo", "--run", "spinbutton"] } } }, "timeoutMs": 60000,
             "steps": [ { "action": "waitForWindow", "title": { "includes": "Spin" } },
                        { "action": "setValue", "locator": { "role": "spinbutton", "name": "Numeric" }, "value": "42" },
                        { "action": "assertState", "locator": { "role": "spinbutton", "name": "Numeric" }, "value": { "equals": "42" } },
                        { "action": "setValue", "locator": { "role": "spinbutton", "name": "Month" }, "value": "March" } ] }"#,
    )
    .await;
    assert!(
        r.details.iter().any(|d| d == "Value.SetCurrentValue"),
        "{:?}",
        r.details
    );
    let e = r
        .error
        .clone()
        .expect("a month name the spin button does not commit");
    assert_eq!(e.code, "desktop.set_value.unchanged", "{e:?}");
    assert!(e.message.contains("did not commit"), "{e:?}");
    assert_nothing_left(&r);
}

/// GTK 4 (4.8) refuses GrabFocus and gives its entries no extents: the step
/// says so in words and how to move the focus, not a raw D-Bus error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gtk4_input_text_that_cannot_focus_says_how_to() {
    require_gtk4_demo();
    let r = run(
        r#"{ "target": { "application": { "launch": { "argv": ["gtk4-demo"] } } }, "timeoutMs": 60000,
             "steps": [ { "action": "waitForWindow" },
                        { "action": "inputText", "locator": { "role": "search box" }, "text": "button", "timeoutMs": 10000 },
                        { "action": "assertState", "locator": { "role": "search box" }, "value": { "equals": "button" } } ] }"#,
    )
    .await;
    match r.error.clone() {
        // A GTK 4 that lets the entry be focused (or clicked) types into
        // it: the entry then holds the text (the flow's last step).
        None => {}
        Some(e) => {
            assert_eq!(e.code, "desktop.focus.unsupported", "{e:?}");
            assert!(
                e.message
                    .contains("fix: move the keyboard focus there with pressKey"),
                "{e:?}"
            );
            assert!(!e.message.starts_with("org.freedesktop"), "{e:?}");
        }
    }
    assert_nothing_left(&r);
}

/// Qt 5 widgets (Debian's `qtbase5-examples` calculator): registers on the
/// a11y bus with `QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1` (set by the driver)
/// and is driven like GTK (`cargo xtask deps` installs it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qt_calculator_adds_two_and_three() {
    let bin = "/usr/lib/x86_64-linux-gnu/qt5/examples/widgets/widgets/calculator/calculator";
    assert!(
        std::path::Path::new(bin).is_file(),
        "{bin} is missing: apt-get install -y qtbase5-examples"
    );
    let r = run(&format!(
        r#"{{ "target": {{ "application": {{ "launch": {{ "argv": ["{bin}"] }} }} }}, "timeoutMs": 60000,
           "steps": [
             {{ "action": "waitForWindow", "title": {{ "equals": "Calculator" }} }},
             {{ "action": "activate", "locator": {{ "role": "button", "name": "2" }} }},
             {{ "action": "activate", "locator": {{ "role": "button", "name": "+" }} }},
             {{ "action": "activate", "locator": {{ "role": "button", "name": "3" }} }},
             {{ "action": "activate", "locator": {{ "role": "button", "name": "=" }} }},
             {{ "action": "assertText", "locator": {{ "role": "textbox" }}, "equals": "5" }},
             {{ "action": "capture", "name": "qt" }} ] }}"#
    ))
    .await;
    assert!(r.error.is_none(), "{:?}", r.error);
    assert!(
        r.details.iter().all(|d| !d.starts_with("pointer click")),
        "{:?}",
        r.details
    );
    let snap = r
        .artifacts
        .iter()
        .find(|a| a.path.ends_with("qt.json"))
        .expect("snapshot");
    let doc: serde_json::Value = serde_json::from_slice(&read_artifact(snap)).unwrap();
    assert_eq!(doc["application"]["name"], "calculator");
    assert_nothing_left(&r);
}

/// GTK 4 names a push button's role `button` where GTK 3 and at-spi2-core
/// say `push button`: every name `check` accepts for it (the portable role,
/// AT-SPI's name, the atspi crate's) finds the same element, because roles
/// are compared as numbers on the bus, never as the toolkit's text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gtk4_push_buttons_answer_to_every_role_name_check_accepts() {
    use qa_core::SurfaceDriver;
    require_gtk4_demo();
    let driver = qa_linux::LinuxDesktopDriver::new();
    for role in ["button", "push button", "push_button", "PushButton"] {
        assert!(driver.check_role(role).is_ok(), "{role}");
    }
    assert!(driver.check_role("push buton").is_err());
    let r = run(
        r#"{ "target": { "application": { "launch": { "argv": ["gtk4-demo"] } } }, "timeoutMs": 60000,
             "steps": [ { "action": "waitForWindow", "title": { "equals": "GTK Demo" } },
                        { "action": "assertState", "locator": { "role": "push button", "name": "Expand", "occurrence": 0 }, "state": "enabled" },
                        { "action": "assertState", "locator": { "role": "PushButton", "name": "Expand", "occurrence": 0 }, "state": "enabled" },
                        { "action": "assertState", "locator": { "role": "button", "name": "Expand", "occurrence": 0 }, "state": "enabled" },
                        { "action": "assertState", "locator": { "role": "search box" }, "state": "enabled" },
                        { "action": "snapshotAccessibility", "name": "gtk4" } ] }"#,
    )
    .await;
    assert!(r.error.is_none(), "{:?}", r.error);
    let snap = r
        .artifacts
        .iter()
        .find(|a| a.path.ends_with("gtk4.json"))
        .expect("snapshot");
    let text = String::from_utf8(read_artifact(snap)).unwrap();
    assert!(
        text.contains(r#""role": "push button""#) || text.contains(r#""role":"push button""#),
        "the snapshot names roles as at-spi2-core does"
    );
    assert_nothing_left(&r);
}
