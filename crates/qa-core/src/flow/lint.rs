//! Warnings about flows that parse but will not do what their author
//! expects: `check` and `run` print them; they never stop a run.

use super::{Action, Flow, FlowError, FlowErrorCode, Target, TerminalAction, EMULATED_TERM};

/// The flow's warnings, each with its JSON pointer.
pub fn lint(flow: &Flow) -> Vec<FlowError> {
    let mut out = Vec::new();
    if let Some(w) = no_assertion(flow) {
        out.push(w);
    }
    if let Target::Terminal(t) = &flow.target {
        if let (Some(app), false) = (
            t.terminal,
            t.presentation == Some(super::Presentation::NativeTerminal),
        ) {
            out.push(FlowError::new(
                FlowErrorCode::TerminalUnused,
                "/target/command/terminal",
                format!(
                    "terminal {:?} only chooses the window of presentation \"native-terminal\"; this flow runs in a PTY without a window, so it is ignored; add \"presentation\": \"native-terminal\" or drop terminal",
                    serde_json::to_value(app).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default()
                ),
            ));
        }
        if let Some(term) = t.env.get("TERM").filter(|v| *v != EMULATED_TERM) {
            out.push(FlowError::new(
                FlowErrorCode::TermOverride,
                "/target/command/env/TERM",
                format!(
                    "ui-qa's terminal emulates {EMULATED_TERM}; TERM={term:?} makes the program send another terminal's sequences (or refuse to start when it has no terminfo entry for it), which the screen model may not draw as that terminal would; drop TERM from env unless the program needs it"
                ),
            ));
        }
    }
    for step in &flow.steps {
        let text = match &step.action {
            Action::Terminal(TerminalAction::WaitForText(q)) => q.text.as_deref(),
            Action::Terminal(TerminalAction::AssertText(a) | TerminalAction::AssertNotText(a)) => {
                a.text.as_deref()
            }
            _ => None,
        };
        if let Some(t) = text.filter(|t| t.ends_with(' ') && !t.trim().is_empty()) {
            out.push(FlowError::new(
                FlowErrorCode::TrailingSpace,
                format!("/steps/{}/text", step.index),
                format!(
                    "{t:?} ends with a space, but terminal screen lines carry no trailing spaces, so it never matches; write {:?}",
                    t.trim_end()
                ),
            ));
        }
    }
    out
}

/// The warning for a flow that checks nothing, if it does.
pub fn no_assertion(flow: &Flow) -> Option<FlowError> {
    (!flow.checks_anything()).then(|| {
        FlowError::new(
            FlowErrorCode::NoAssertion,
            "/steps",
            "no step checks anything (no assert* or waitFor* step): the run would PASS whenever the steps run, which proves nothing; add an assertion such as assertText or assertVisible after the step whose effect you expect",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_term_other_than_the_emulated_one_is_warned() {
        let parse = |env: &str| {
            Flow::parse(
                &format!(r#"{{"target":{{"command":{{"argv":["mc"],"env":{env}}}}},"steps":[{{"action":"waitForText","text":"Left"}}]}}"#),
                std::path::Path::new("."),
            )
            .unwrap()
        };
        let w = lint(&parse(r#"{"TERM":"screen-256color"}"#));
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].code, "flow.term_override");
        assert_eq!(w[0].pointer, "/target/command/env/TERM");
        assert!(
            w[0].message.contains("emulates xterm-256color"),
            "{}",
            w[0].message
        );
        assert!(lint(&parse(r#"{"TERM":"xterm-256color","LANG":"C"}"#)).is_empty());
    }

    #[test]
    fn a_terminal_without_its_window_is_warned() {
        let parse = |command: &str| {
            Flow::parse(
                &format!(r#"{{"target":{{"command":{command}}},"steps":[{{"action":"waitForText","text":"x"}}]}}"#),
                std::path::Path::new("."),
            )
            .unwrap()
        };
        let w = lint(&parse(r#"{"argv":["vim"],"terminal":"kitty"}"#));
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].code, "flow.terminal_unused");
        assert_eq!(w[0].pointer, "/target/command/terminal");
        assert!(w[0].message.contains("\"kitty\""), "{}", w[0].message);
        assert!(lint(&parse(
            r#"{"argv":["vim"],"terminal":"kitty","presentation":"native-terminal"}"#
        ))
        .is_empty());
        assert!(Flow::parse(
            r#"{"target":{"command":{"argv":["vim"],"terminal":"konsole"}},"steps":[]}"#,
            std::path::Path::new(".")
        )
        .is_err());
    }

    #[test]
    fn a_flow_that_checks_nothing_is_warned() {
        let parse = |steps: &str| {
            Flow::parse(
                &format!(r#"{{"target":{{"url":"https://example.test/"}},"steps":[{steps}]}}"#),
                std::path::Path::new("."),
            )
            .unwrap()
        };
        let none = parse(r#"{"action":"click","locator":{"text":"Go"}},{"action":"screenshot"}"#);
        let w = lint(&none);
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].code, "flow.no_assertion");
        assert_eq!(w[0].pointer, "/steps");
        assert!(!none.checks_anything());
        for checked in [
            r#"{"action":"click","locator":{"text":"Go"}},{"action":"assertText","locator":{"text":"Done"},"includes":"Done"}"#,
            r#"{"action":"click","locator":{"text":"Go"}},{"action":"waitFor","locator":{"text":"Done"}}"#,
        ] {
            let f = parse(checked);
            assert!(f.checks_anything(), "{checked}");
            assert!(lint(&f).is_empty(), "{checked}");
        }
    }

    #[test]
    fn terminal_text_ending_in_a_space_is_warned() {
        let f = Flow::parse(
            r#"{"target":{"command":{"argv":["sqlite3"]}},"steps":[
                {"action":"waitForText","text":"sqlite> "},
                {"action":"waitForText","text":"sqlite>"}]}"#,
            std::path::Path::new("."),
        )
        .unwrap();
        let w = lint(&f);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].pointer, "/steps/0/text");
        assert_eq!(w[0].code, "flow.trailing_space");
        assert!(w[0].message.contains("write \"sqlite>\""));
    }
}
