//! Warnings about flows that parse but will not do what their author
//! expects: `check` and `run` print them; they never stop a run.

use super::{Action, Flow, FlowError, FlowErrorCode, TerminalAction};

/// The flow's warnings, each with its JSON pointer.
pub fn lint(flow: &Flow) -> Vec<FlowError> {
    let mut out = Vec::new();
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

#[cfg(test)]
mod tests {
    use super::*;

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
