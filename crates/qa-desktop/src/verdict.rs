//! One fresh verdict per assertion: a window exists, an element's (or any
//! element's) text matches, an element is in a state or holds a value.
//! Everything a verdict reports as observed is redacted and bounded.
//!
//! A verdict that reads the tree tells a read the tree answered from one it
//! did not ([`Read`]), and the attempts at one step remember the last
//! answered read ([`Attempts`]): the reason a step fails says the text was
//! never there (with what was seen) whenever any attempt read the tree, and
//! that the tree did not answer only when no attempt ever did.

use crate::node::Fields;
use crate::platform::{DesktopPlatform, TopWindow};
use crate::resolve::{resolve_once, Resolved, LOCATE_CAP};
use qa_core::flow::{Locator, Matcher, StateAssert};
use qa_core::{Deadline, DriverError, Mismatch, Secrets, Verdict};
use std::future::Future;

/// Why an attempt read nothing: its read was still running at the step
/// deadline.
pub const NO_ANSWER: &str = "the accessibility tree did not answer before the step deadline";

/// Why an attempt read nothing: the application's root answered no read.
pub const EMPTY_TREE: &str =
    "the accessibility tree did not answer: the application's root returned nothing";

/// One attempt at an assertion that reads the tree.
#[derive(Debug, Clone, PartialEq)]
pub enum Read {
    /// The tree answered; the verdict on what it said.
    Answered(Verdict),
    /// The tree did not answer (why), so the attempt says nothing about
    /// the text or state it looked for.
    Unanswered(&'static str),
}

/// The attempts at one assertion step (the step's index and deadline: the
/// runner asks again with the same ones until the verdict holds or the
/// deadline passes): the last verdict the tree answered.
#[derive(Debug, Default)]
pub struct Attempts {
    step: Option<(usize, Deadline)>,
    answered: Option<Verdict>,
}

impl Attempts {
    /// The verdict of the attempt `read` at `step`. An answered read is
    /// its own verdict (and is remembered). An unanswered one — cut off by
    /// the step deadline, or an empty tree — repeats the last answered
    /// verdict of the same step, so the step's reason is what the tree
    /// last showed; only when no attempt of the step was answered is the
    /// reason that the tree did not answer.
    pub fn decide(&mut self, step: (usize, Deadline), read: Read) -> Verdict {
        if self.step != Some(step) {
            self.step = Some(step);
            self.answered = None;
        }
        match read {
            Read::Answered(v) => {
                self.answered = Some(v.clone());
                v
            }
            Read::Unanswered(why) => self
                .answered
                .clone()
                .unwrap_or_else(|| Verdict::not_yet(why)),
        }
    }
}

/// One attempt at step `step`: `read` under `deadline` (an attempt still
/// reading then is [`NO_ANSWER`]), decided by `attempts`.
pub async fn attempt<F>(
    attempts: &mut Attempts,
    step: (usize, Deadline),
    deadline: Deadline,
    read: F,
) -> Result<Verdict, DriverError>
where
    F: Future<Output = Result<Read, DriverError>>,
{
    let read = match deadline.run(read).await {
        Some(r) => r?,
        None => Read::Unanswered(NO_ANSWER),
    };
    Ok(attempts.decide(step, read))
}

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
) -> Result<Read, DriverError> {
    let Some(l) = loc else {
        let f = Fields {
            content: true,
            ..Fields::default()
        };
        let (nodes, _) = p.walk(&p.root(), f, LOCATE_CAP).await;
        if nodes.is_empty() {
            return Ok(Read::Unanswered(EMPTY_TREE));
        }
        let found = nodes.iter().any(|n| n.texts().iter().any(|t| m.matches(t)));
        return Ok(Read::Answered(if found {
            Verdict::Holds
        } else {
            Verdict::NotYet {
                observed: format!("no text {} among {} elements", m.describe(), nodes.len()),
                mismatch: Some(Box::new(Mismatch::new(
                    format!("an element whose text {}", m.describe()),
                    format!("none among {} elements", nodes.len()),
                ))),
            }
        }));
    };
    Ok(Read::Answered(match resolve_once(p, l).await? {
        Resolved::Unanswered => return Ok(Read::Unanswered(EMPTY_TREE)),
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
    }))
}

/// `assertState`: the located element is in a state, or its value matches.
pub async fn state<P: DesktopPlatform + ?Sized>(
    p: &P,
    s: &StateAssert,
    secrets: &Secrets,
) -> Result<Read, DriverError> {
    let n = match resolve_once(p, &s.locator).await? {
        Resolved::Unanswered => return Ok(Read::Unanswered(EMPTY_TREE)),
        Resolved::None(m) => {
            return Ok(Read::Answered(Verdict::NotYet {
                observed: format!("no element matches {}", s.locator.describe()),
                mismatch: Some(m),
            }))
        }
        Resolved::One(n) => n,
    };
    Ok(Read::Answered(match (s.state, &s.value) {
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
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::Node;
    use crate::scripted::{app, status_label, Scripted};

    fn includes(s: &str) -> Matcher {
        Matcher {
            equals: None,
            includes: Some(s.into()),
            regex: None,
        }
    }

    /// Runs the attempts of one `waitForText` step (at `locator`, when
    /// given) over the scripted walks: each answered walk under a generous
    /// deadline, each unanswered one cut off by a short one. The verdicts.
    async fn attempts(
        walks: Vec<Option<Vec<Node<String>>>>,
        locator: Option<Locator>,
    ) -> Vec<Verdict> {
        let n = walks.len();
        let answered: Vec<bool> = walks.iter().map(Option::is_some).collect();
        let p = Scripted::new(walks);
        let secrets = Secrets::new();
        let m = includes("Ready");
        let step = (3, Deadline::after_ms(600_000));
        let mut memory = Attempts::default();
        let mut out = Vec::new();
        for a in answered.into_iter().take(n) {
            let until = if a { step.1 } else { Deadline::after_ms(20) };
            let read = text(&p, locator.as_ref(), &m, &secrets);
            out.push(attempt(&mut memory, step, until, read).await.unwrap());
        }
        out
    }

    fn observed(v: &Verdict) -> &str {
        match v {
            Verdict::NotYet { observed, .. } => observed,
            v => panic!("{v:?}"),
        }
    }

    /// Issue 45 item 8: the last attempt was cut off by the step deadline
    /// while the earlier ones read the tree: the step's reason is the text
    /// last seen, not that the tree did not answer.
    #[tokio::test]
    async fn a_cut_off_attempt_keeps_the_text_the_tree_last_showed() {
        for locator in [Some(status_label()), None] {
            let v = attempts(
                vec![Some(app("Idle")), Some(app("Busy")), None],
                locator.clone(),
            )
            .await;
            let last = observed(&v[2]);
            assert!(!last.contains("did not answer"), "{last}");
            assert_eq!(v[2], v[1], "the last answered verdict stands");
            if locator.is_some() {
                assert_eq!(last, r#"text is "Busy""#);
            } else {
                assert!(last.starts_with("no text includes"), "{last}");
            }
        }
        // An empty tree (the root did not answer) is no answer either.
        let v = attempts(
            vec![Some(app("Idle")), Some(Vec::new())],
            Some(status_label()),
        )
        .await;
        assert_eq!(observed(&v[1]), r#"text is "Idle""#);
        // And the text appearing still passes.
        let v = attempts(vec![None, Some(app("Ready"))], Some(status_label())).await;
        assert_eq!(v[1], Verdict::Holds);
    }

    /// Only when no attempt of the step was answered is the reason that
    /// the tree did not answer.
    #[tokio::test]
    async fn the_tree_did_not_answer_only_when_no_attempt_was_answered() {
        let v = attempts(vec![None, None], Some(status_label())).await;
        assert_eq!(observed(&v[1]), NO_ANSWER);
        let v = attempts(vec![None, Some(Vec::new())], None).await;
        assert_eq!(observed(&v[1]), EMPTY_TREE);
        // What an earlier step read is not this step's.
        let mut memory = Attempts::default();
        let d = Deadline::after_ms(600_000);
        memory.decide((1, d), Read::Answered(Verdict::not_yet("text is \"Idle\"")));
        assert_eq!(
            memory.decide((2, d), Read::Unanswered(NO_ANSWER)),
            Verdict::not_yet(NO_ANSWER)
        );
        assert_eq!(
            memory.decide((2, Deadline::after_ms(1)), Read::Unanswered(NO_ANSWER)),
            Verdict::not_yet(NO_ANSWER)
        );
    }

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
