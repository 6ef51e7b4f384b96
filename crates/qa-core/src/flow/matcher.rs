//! String matchers, parsed once: a [`Matcher`] is exactly one of `equals`,
//! `includes` or `regex`, and a regex is compiled when the flow is parsed
//! ([`Pattern`]), never per check.
//!
//! One semantics on every surface: a regex is Rust `regex` syntax in
//! multi-line mode, so `^` and `$` match at the start and end of every line
//! as well as of the whole text (a terminal screen, a multi-line element
//! text); `.` does not match a newline. Use `\A` and `\z` to anchor to the
//! whole text.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::fmt;

/// Upper bound on a compiled regex (bytes of its program), so a hostile
/// pattern cannot exhaust memory.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// A regular expression compiled once, when the flow is parsed. It
/// serializes as the pattern text.
#[derive(Clone)]
pub struct Pattern {
    text: String,
    re: regex::Regex,
}

impl Pattern {
    /// Compiles a pattern with the shared semantics (multi-line mode).
    pub fn new(text: &str) -> Result<Pattern, regex::Error> {
        let re = regex::RegexBuilder::new(text)
            .multi_line(true)
            .size_limit(REGEX_SIZE_LIMIT)
            .build()?;
        Ok(Pattern {
            text: text.to_string(),
            re,
        })
    }

    /// The pattern as written in the flow.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the pattern matches anywhere in `hay`.
    pub fn is_match(&self, hay: &str) -> bool {
        self.re.is_match(hay)
    }
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "/{}/", self.text)
    }
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Pattern) -> bool {
        self.text == other.text
    }
}

impl Serialize for Pattern {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Pattern {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Pattern, D::Error> {
        let text = String::deserialize(d)?;
        Pattern::new(&text).map_err(|e| serde::de::Error::custom(regex_error_message(&e)))
    }
}

/// The message of a pattern that does not compile: `invalid regex: WHAT`
/// on the first line, then the regex crate's own notation of the pattern
/// with `^` under the offending characters (its lines as they are, so the
/// caret stays under the character when the message is printed).
pub(crate) fn regex_error_message(e: &regex::Error) -> String {
    let text = e.to_string();
    let lines: Vec<&str> = text.lines().collect();
    match (lines.first(), lines.last()) {
        (Some(&"regex parse error:"), Some(last)) if lines.len() > 2 => {
            match last.strip_prefix("error: ") {
                Some(what) => format!(
                    "{INVALID_REGEX}: {what}\n{}",
                    lines[1..lines.len() - 1].join("\n")
                ),
                None => format!("{INVALID_REGEX}: {text}"),
            }
        }
        _ => format!("{INVALID_REGEX}: {text}"),
    }
}

/// The prefix of the deserialization error for a pattern that does not
/// compile (the flow parser maps it to `flow.invalid_regex`).
pub(crate) const INVALID_REGEX: &str = "invalid regex";

impl JsonSchema for Pattern {
    fn schema_name() -> Cow<'static, str> {
        "String".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        String::json_schema(generator)
    }
}

/// A string matcher: exactly one of `equals`, `includes`, `regex`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Matcher {
    /// The whole string equals this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub equals: Option<String>,
    /// The string contains this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub includes: Option<String>,
    /// The string matches this regular expression (Rust `regex` syntax,
    /// multi-line mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub regex: Option<Pattern>,
}

impl Matcher {
    /// Builds a matcher from the three optional fields of a step (the
    /// compiled pattern is shared, not recompiled).
    pub fn from_parts(
        equals: &Option<String>,
        includes: &Option<String>,
        regex: &Option<Pattern>,
    ) -> Matcher {
        Matcher {
            equals: equals.clone(),
            includes: includes.clone(),
            regex: regex.clone(),
        }
    }

    /// How many of the three fields are set.
    pub fn count_set(&self) -> usize {
        [
            self.equals.is_some(),
            self.includes.is_some(),
            self.regex.is_some(),
        ]
        .iter()
        .filter(|b| **b)
        .count()
    }

    /// Whether `actual` satisfies the matcher (seen with secrets redacted
    /// under [`redacted_view`]).
    pub fn matches(&self, actual: &str) -> bool {
        judge(actual, |actual| {
            if let Some(e) = &self.equals {
                return actual == e;
            }
            if let Some(i) = &self.includes {
                return actual.contains(i.as_str());
            }
            if let Some(r) = &self.regex {
                return r.is_match(actual);
            }
            false
        })
    }

    /// A description of the expectation in the flow's own words.
    pub fn describe(&self) -> String {
        if let Some(e) = &self.equals {
            return format!("equals {e:?}");
        }
        if let Some(i) = &self.includes {
            return format!("includes {i:?}");
        }
        if let Some(r) = &self.regex {
            return format!("matches /{}/", r.as_str());
        }
        "matches nothing".into()
    }
}

/// A text-or-regex query (terminal `waitForText` / `assertText`): exactly
/// one is set. Text is a substring; a regex follows the module's semantics.
/// Under [`redacted_view`], the text is seen with secrets redacted.
pub fn text_or_regex_matches(text: &Option<String>, regex: &Option<Pattern>, hay: &str) -> bool {
    judge(hay, |hay| match (text, regex) {
        (Some(t), _) => hay.contains(t.as_str()),
        (None, Some(r)) => r.is_match(hay),
        (None, None) => false,
    })
}

tokio::task_local! {
    /// The view matchers of the current step have, when it is redacted.
    static VIEW: View;
}

/// A redacted view: the secrets, and whether an expectation held on the
/// raw text but not on what the view shows.
#[derive(Clone)]
struct View {
    secrets: std::sync::Arc<crate::secrets::Secrets>,
    only_in_secret: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

/// Runs `f` (a step) with every [`Matcher::matches`] and
/// [`text_or_regex_matches`] in it seeing text with `secrets` redacted —
/// drivers need not know. Also answers whether some expectation held only
/// where a secret is shown (it failed in the view).
pub async fn redacted_view<F: std::future::Future>(
    secrets: std::sync::Arc<crate::secrets::Secrets>,
    f: F,
) -> (F::Output, bool) {
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let view = View {
        secrets,
        only_in_secret: flag.clone(),
    };
    let out = VIEW.scope(view, f).await;
    (out, flag.load(std::sync::atomic::Ordering::Relaxed))
}

/// `test(actual)`, through the current task's redacted view if any.
fn judge(actual: &str, test: impl Fn(&str) -> bool) -> bool {
    let Ok(view) = VIEW.try_with(View::clone) else {
        return test(actual);
    };
    let seen = view.secrets.redact(actual);
    let holds = test(&seen);
    if !holds && matches!(seen, std::borrow::Cow::Owned(_)) && test(actual) {
        view.only_in_secret
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }
    holds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matcher_kinds() {
        let m = Matcher {
            equals: None,
            includes: Some("ell".into()),
            regex: None,
        };
        assert!(m.matches("hello"));
        assert!(!m.matches("help"));
        let r = Matcher {
            equals: None,
            includes: None,
            regex: Some(Pattern::new("^h.l+o$").unwrap()),
        };
        assert!(r.matches("hello"));
        assert!(!r.matches("ahello"));
    }

    #[test]
    fn regex_is_multi_line_everywhere() {
        let p = Pattern::new("^total: \\d+$").unwrap();
        assert!(p.is_match("items\ntotal: 3\ndone"));
        let whole = Pattern::new("\\Atotal\\z").unwrap();
        assert!(!whole.is_match("total\nmore"));
    }

    #[test]
    fn pattern_round_trips_as_text() {
        let m: Matcher = serde_json::from_str(r#"{"regex":"a+b"}"#).unwrap();
        assert_eq!(serde_json::to_string(&m).unwrap(), r#"{"regex":"a+b"}"#);
        let bad = serde_json::from_str::<Matcher>(r#"{"regex":"("}"#).unwrap_err();
        assert!(bad.to_string().starts_with(INVALID_REGEX), "{bad}");
    }

    #[test]
    fn a_regex_error_puts_the_caret_under_the_offending_character() {
        let e = Pattern::new("ab[z-a]c").unwrap_err();
        let msg = regex_error_message(&e);
        let lines: Vec<&str> = msg.lines().collect();
        assert_eq!(
            lines[0], "invalid regex: invalid character class range, the start must be <= the end",
            "{msg}"
        );
        // The pattern, then the caret line, both in the same columns.
        let col = lines[1].find("ab[").unwrap() + "ab[".len();
        assert_eq!(lines[2].find('^'), Some(col), "{msg}");
        assert!(!msg.contains("\\n"), "{msg}");
    }
}
