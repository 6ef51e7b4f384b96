//! One fresh verdict per assertion: a window exists, an element's (or any
//! element's) text matches, an element is in a state or holds a value.
//! Everything a verdict reports as observed is redacted and bounded.

use super::actions::{element_text, element_value, has_state, resolve_once, Resolved, LOCATE_CAP};
use super::app::App;
use super::tree::{node_texts, state_names, walk, Fields};
use crate::locate::truncate;
use qa_core::flow::{Locator, Matcher, StateAssert};
use qa_core::{DriverError, Mismatch, Secrets, Verdict};

/// Characters of an observed text or value kept in a verdict.
const OBSERVED_CHARS: usize = 200;

/// Window names listed when `waitForWindow` does not hold yet.
const OBSERVED_WINDOWS: usize = 10;

fn redact(secrets: &Secrets, s: &str) -> String {
    secrets.redact(s).into_owned()
}

/// `waitForWindow`: a showing top-level window (whose title matches).
pub(crate) async fn window(app: &App, title: Option<&Matcher>, secrets: &Secrets) -> Verdict {
    let wins = app.windows().await;
    let ok = wins
        .iter()
        .any(|x| x.showing && title.is_none_or(|m| m.matches(&x.name)));
    if ok {
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
pub(crate) async fn text(
    app: &App,
    loc: Option<&Locator>,
    m: &Matcher,
    secrets: &Secrets,
) -> Result<Verdict, DriverError> {
    let Some(l) = loc else {
        let f = Fields {
            content: true,
            ..Fields::default()
        };
        let (nodes, _) = walk(app.conn(), &app.root, f, LOCATE_CAP).await;
        let found = nodes
            .iter()
            .any(|n| node_texts(n).iter().any(|t| m.matches(t)));
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
    Ok(match resolve_once(app.conn(), &app.root, l).await? {
        Resolved::None(m) => Verdict::NotYet {
            observed: format!("no element matches {}", l.describe()),
            mismatch: Some(m),
        },
        Resolved::One(n) => {
            let t = element_text(&n);
            if m.matches(&t) {
                Verdict::Holds
            } else {
                let seen = format!("{:?}", redact(secrets, &truncate(&t, OBSERVED_CHARS)));
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
pub(crate) async fn state(
    app: &App,
    s: &StateAssert,
    secrets: &Secrets,
) -> Result<Verdict, DriverError> {
    let n = match resolve_once(app.conn(), &app.root, &s.locator).await? {
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
            let st = n.states.unwrap_or_else(atspi::StateSet::empty);
            if has_state(st, want) {
                Verdict::Holds
            } else {
                let seen = format!("states [{}]", state_names(st).join(", "));
                Verdict::NotYet {
                    observed: format!("states: [{}]", state_names(st).join(", ")),
                    mismatch: Some(Box::new(
                        Mismatch::new(format!("state {want:?}").to_lowercase(), seen)
                            .at(s.locator.describe()),
                    )),
                }
            }
        }
        (None, value) => {
            let v = element_value(&n).unwrap_or_default();
            // Parsing guarantees a value matcher here; without one nothing matches.
            if value.as_ref().is_some_and(|m| m.matches(&v)) {
                Verdict::Holds
            } else {
                let seen = format!("{:?}", redact(secrets, &truncate(&v, OBSERVED_CHARS)));
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
