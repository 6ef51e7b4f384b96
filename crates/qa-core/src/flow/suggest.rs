//! "Did you mean …?": the closest known word to a misspelt one.

/// The candidate closest to `word` (case-insensitive Jaro–Winkler, at least
/// 0.8 similar), if any.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let w = word.to_lowercase();
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(&w, &c.to_lowercase()), c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// `; did you mean "x"?` or nothing.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    match closest(word, candidates) {
        Some(c) => format!("; did you mean {c:?}?"),
        None => String::new(),
    }
}

/// What to write in a `kind` flow in place of `action`, an action of
/// another kind (`sendKeys` in a browser flow: `press`), if the format has
/// an equivalent.
pub fn equivalent_action(kind: super::TargetKind, action: &str) -> Option<&'static str> {
    use super::TargetKind as K;
    Some(match (kind, action) {
        (K::Browser, "sendKeys" | "pressKey") => {
            r#"use "press" with one key per step: {"action": "press", "key": "Enter"} (optional "locator" to focus first)"#
        }
        (K::Browser, "sendText" | "inputText" | "setValue") => {
            r#"use "fill" with a locator: {"action": "fill", "locator": {"label": "Name"}, "value": "…"}"#
        }
        (K::Browser, "activate") => r#"use "click" with a locator"#,
        (K::Browser, "waitForText") => {
            r#"use "assertText" with a locator and a matcher (it retries until the step deadline), or "waitFor" with {"locator": {"text": "…"}}"#
        }
        (K::Browser, "capture") => r#"use "screenshot""#,
        (K::Terminal, "press" | "pressKey") => {
            r#"use "sendKeys" with a list of keys: {"action": "sendKeys", "keys": ["Enter"]}"#
        }
        (K::Terminal, "fill" | "inputText" | "setValue") => {
            r#"use "sendText": {"action": "sendText", "text": "…"}"#
        }
        (K::Terminal, "screenshot") => r#"use "capture""#,
        (K::Desktop, "press" | "sendKeys") => {
            r#"use "pressKey" with one key per step: {"action": "pressKey", "key": "Enter"}"#
        }
        (K::Desktop, "fill" | "sendText") => {
            r#"use "inputText" ({"action": "inputText", "text": "…"}, optional "locator" to focus first) or "setValue" (locator, value)"#
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_words_are_suggested_far_ones_are_not() {
        assert_eq!(closest("clik", ["click", "fill", "hover"]), Some("click"));
        assert_eq!(closest("buton", ["button", "link"]), Some("button"));
        assert_eq!(closest("pushbutton", ["button", "link"]), Some("button"));
        assert_eq!(closest("zzz", ["click", "fill"]), None);
        assert_eq!(
            did_you_mean("Clikc", ["click"]),
            "; did you mean \"click\"?"
        );
    }

    #[test]
    fn an_action_of_another_kind_names_its_equivalent() {
        use crate::flow::{Action, TargetKind as K};
        let press = equivalent_action(K::Browser, "sendKeys").unwrap();
        assert!(press.starts_with(r#"use "press""#), "{press}");
        // Every suggested action exists in the flow's kind, and every
        // suggestion is for an action the kind lacks.
        for kind in [K::Browser, K::Terminal, K::Desktop] {
            let own = Action::names_for(kind);
            for other in [K::Browser, K::Terminal, K::Desktop] {
                for name in Action::names_for(other) {
                    let Some(hint) = equivalent_action(kind, name) else {
                        continue;
                    };
                    assert!(!own.contains(name), "{name} is a {kind:?} action");
                    let suggested = hint.split('"').nth(1).unwrap();
                    assert!(own.contains(&suggested), "{hint}");
                }
            }
        }
    }
}
