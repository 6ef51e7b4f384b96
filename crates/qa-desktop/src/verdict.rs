//! One fresh verdict per assertion: a window exists, an element's (or any
//! element's) text matches, an element is in a state or holds a value.
//! Everything a verdict reports as observed is redacted and bounded.

use crate::node::Fields;
use crate::platform::{DesktopPlatform, TopWindow};
use crate::resolve::{resolve_once, Resolved, LOCATE_CAP};
use qa_core::flow::{Locator, Matcher, StateAssert};
use qa_core::{DriverError, Mismatch, Secrets, Verdict};

/// Characters of an observed text or value kept in a verdict.
const OBSERVED_CHARS: usize = 200;

/// Window names listed when `waitForWindow` does not hold yet.
const OBSERVED_WINDOWS: usize = 10;

fn redact(secrets: &Secrets, s: &str) -> String {
    secrets.redact(s).into_owned()
}

/// `waitForWindow` over the windows `wins`: a showing top-level window
/// (whose title matches).
pub fn window(wins: &[TopWindow], title: Option<&Matcher>, secrets: &Secrets) -> Verdict {
    if wins
        .iter()
        .any(|x| x.showing && title.is_none_or(|m| m.matches(&x.name)))
    {
        return Verdict::Holds;
    }
    let names: Vec<String> = wins
        .iter()
        .take(OBSERVED_WINDOWS)
        .map(|x| {
            format!(
                "{:?}{}",
                redact(secrets, &x.name),
                if x.showing { "" } else { " (not showing)" }
            )
        })
        .collect();
    Verdict::NotYet {
        observed: format!("windows: [{}]", names.join(", ")),
        mismatch: Some(Box::new(Mismatch::new(
            match title {
                Some(m) => format!("a showing window whose title {}", m.describe()),
                None => "a showing window".into(),
            },
            format!("windows [{}]", names.join(", ")),
        ))),
    }
}

/// `waitForText` / `assertText`: the located element's text matches, or
/// (without a locator) any element's text, value or name does.
pub async fn text<P: DesktopPlatform + ?Sized>(
    p: &P,
    loc: Option<&Locator>,
    m: &Matcher,
    secrets: &Secrets,
) -> Result<Verdict, DriverError> {
    let Some(l) = loc else {
        let f = Fields {
            content: true,
            ..Fields::default()
        };
        let (nodes, _) = p.walk(&p.root(), f, LOCATE_CAP).await;
        let found = nodes.iter().any(|n| n.texts().iter().any(|t| m.matches(t)));
        return Ok(if found {
            Verdict::Holds
        } else {
            Verdict::NotYet {
                observed: format!("no text {} among {} elements", m.describe(), nodes.len()),
                mismatch: Some(Box::new(Mismatch::new(
                    format!("an element whose text {}", m.describe()),
                    format!("none among {} elements", nodes.len()),
                ))),
            }
        });
    };
    Ok(match resolve_once(p, l).await? {
        Resolved::None(m) => Verdict::NotYet {
            observed: format!("no element matches {}", l.describe()),
            mismatch: Some(m),
        },
        Resolved::One(n) => {
            let t = n.text();
            if m.matches(&t) {
                Verdict::Holds
            } else {
                let seen = format!("{:?}", secrets.redact_then_clip_chars(&t, OBSERVED_CHARS));
                Verdict::NotYet {
                    observed: format!("text is {seen}"),
                    mismatch: Some(Box::new(
                        Mismatch::new(format!("text {}", m.describe()), seen).at(l.describe()),
                    )),
                }
            }
        }
    })
}

/// `assertState`: the located element is in a state, or its value matches.
pub async fn state<P: DesktopPlatform + ?Sized>(
    p: &P,
    s: &StateAssert,
    secrets: &Secrets,
) -> Result<Verdict, DriverError> {
    let n = match resolve_once(p, &s.locator).await? {
        Resolved::None(m) => {
            return Ok(Verdict::NotYet {
                observed: format!("no element matches {}", s.locator.describe()),
                mismatch: Some(m),
            })
        }
        Resolved::One(n) => n,
    };
    Ok(match (s.state, &s.value) {
        (Some(want), _) => {
            let st = n.states.clone().unwrap_or_default();
            if st.is(want) {
                Verdict::Holds
            } else {
                let names = st.native.join(", ");
                Verdict::NotYet {
                    observed: format!("states: [{names}]"),
                    mismatch: Some(Box::new(
                        Mismatch::new(
                            format!("state {want:?}").to_lowercase(),
                            format!("states [{names}]"),
                        )
                        .at(s.locator.describe()),
                    )),
                }
            }
        }
        (None, value) => {
            let v = n.value_text().unwrap_or_default();
            // Parsing guarantees a value matcher here; without one nothing matches.
            if value.as_ref().is_some_and(|m| m.matches(&v)) {
                Verdict::Holds
            } else {
                let seen = format!("{:?}", secrets.redact_then_clip_chars(&v, OBSERVED_CHARS));
                Verdict::NotYet {
                    observed: format!("value is {seen}"),
                    mismatch: Some(Box::new(
                        Mismatch::new(
                            format!(
                                "value {}",
                                value
                                    .as_ref()
                                    .map_or_else(|| "matches nothing".into(), |m| m.describe())
                            ),
                            seen,
                        )
                        .at(s.locator.describe()),
                    )),
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(name: &str, showing: bool) -> TopWindow {
        TopWindow {
            name: name.into(),
            showing,
            active: false,
        }
    }

    #[test]
    fn a_window_verdict_lists_what_is_there_redacted() {
        let secrets = Secrets::new();
        secrets.add("hunter22");
        assert_eq!(window(&[w("Main", true)], None, &secrets), Verdict::Holds);
        let m = Matcher {
            equals: None,
            includes: Some("Prefs".into()),
            regex: None,
        };
        match window(
            &[w("Main", true), w("Prefs hunter22", false)],
            Some(&m),
            &secrets,
        ) {
            Verdict::NotYet { observed, .. } => {
                assert!(observed.contains("(not showing)"), "{observed}");
                assert!(!observed.contains("hunter22"), "{observed}");
            }
            v => panic!("{v:?}"),
        }
    }
}
