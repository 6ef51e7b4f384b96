//! Resolving a locator to exactly one element: once (for verdicts) or
//! waiting on the shared cadence (for actions).

use crate::codes::DesktopCode;
use crate::locate::{candidate, closest, describe_candidates, find, needs_ids, NodeView};
use crate::node::{views, Fields, Node, State};
use crate::platform::DesktopPlatform;
use qa_core::flow::Locator;
use qa_core::mismatch::MAX_CANDIDATES;
use qa_core::{Cadence, Deadline, DriverError, Mismatch};

/// Node cap when resolving locators.
pub const LOCATE_CAP: usize = 10_000;

/// How resolving a locator ended.
pub enum Resolved<E> {
    /// Exactly one element, with every field.
    One(Box<Node<E>>),
    /// Nothing matches (yet): what was expected, with the closest elements.
    None(Box<Mismatch>),
    /// The tree read nothing at all: the application's root did not answer
    /// (so nothing can be said about what matches).
    Unanswered,
}

/// The "no element matches" mismatch of `loc` over `vs`, with the closest
/// elements as candidates.
pub fn not_found(vs: &[NodeView], loc: &Locator) -> Box<Mismatch> {
    let (idx, total) = closest(vs, loc, MAX_CANDIDATES);
    Box::new(
        Mismatch::new(
            format!("one element matching {}", loc.describe()),
            "no element matches",
        )
        .at(loc.describe())
        .with_candidates(
            idx.iter().map(|&i| candidate(&vs[i])).collect(),
            total as u64,
        ),
    )
}

/// The ambiguity error of `loc` matching every node in `hits`.
fn ambiguous(vs: &[NodeView], loc: &Locator, hits: &[usize]) -> DriverError {
    let m = Mismatch::new(
        format!("one element matching {}", loc.describe()),
        format!("{} elements match", hits.len()),
    )
    .at(loc.describe())
    .with_candidates(
        hits.iter().map(|&i| candidate(&vs[i])).collect(),
        hits.len() as u64,
    );
    DriverError::new(
        DesktopCode::LocatorAmbiguous,
        format!(
            "{} matches {} elements: {}",
            loc.describe(),
            hits.len(),
            describe_candidates(vs, hits, 8)
        ),
    )
    .with_remediation(
        "add a role, an exact name, an automationId, a path, or an explicit occurrence",
    )
    .with_mismatch(m)
}

/// Picks the element a locator names among its matches `hits` (in tree
/// order), where `showing[k]` says whether `hits[k]` is showing: hidden
/// matches are ignored when at least one is showing; `occurrence` picks one
/// of several; more than one left without it is ambiguous.
pub fn pick(
    vs: &[NodeView],
    loc: &Locator,
    hits: &[usize],
    showing: &[bool],
) -> Result<Option<usize>, DriverError> {
    let shown: Vec<usize> = hits
        .iter()
        .zip(showing)
        .filter(|(_, s)| **s)
        .map(|(i, _)| *i)
        .collect();
    let hits = if hits.len() > 1 && !shown.is_empty() {
        shown
    } else {
        hits.to_vec()
    };
    match loc.occurrence {
        Some(k) => Ok(hits.get(k as usize).copied()),
        None if hits.len() == 1 => Ok(Some(hits[0])),
        None if hits.is_empty() => Ok(None),
        None => Err(ambiguous(vs, loc, &hits)),
    }
}

/// Resolves a locator once under the application's root.
pub async fn resolve_once<P: DesktopPlatform + ?Sized>(
    p: &P,
    loc: &Locator,
) -> Result<Resolved<P::Element>, DriverError> {
    let f = Fields {
        id: needs_ids(loc),
        ..Fields::default()
    };
    let (nodes, _) = p.walk(&p.root(), f, LOCATE_CAP).await;
    if nodes.is_empty() {
        return Ok(Resolved::Unanswered);
    }
    let vs = views(&nodes);
    let hits = find(&vs, loc);
    if hits.is_empty() {
        return Ok(Resolved::None(not_found(&vs, loc)));
    }
    let showing = if hits.len() > 1 {
        let states = Fields {
            states: true,
            ..Fields::default()
        };
        futures_util::future::join_all(hits.iter().map(|&i| p.fetch(&nodes[i].element, states)))
            .await
            .into_iter()
            .map(|n| n.is_some_and(|n| n.has(State::Showing)))
            .collect()
    } else {
        vec![true]
    };
    let Some(i) = pick(&vs, loc, &hits, &showing)? else {
        return Ok(Resolved::None(not_found(&vs, loc)));
    };
    Ok(match p.fetch(&nodes[i].element, Fields::ALL).await {
        Some(mut n) => {
            n.view = nodes[i].view.clone();
            Resolved::One(Box::new(n))
        }
        None => Resolved::None(not_found(&vs, loc)),
    })
}

/// Resolves a locator for an action: waits on the shared cadence until it
/// matches or the deadline passes.
pub async fn resolve_wait<P: DesktopPlatform + ?Sized>(
    p: &P,
    loc: &Locator,
    deadline: Deadline,
) -> Result<Node<P::Element>, DriverError> {
    let mut cadence = Cadence::new();
    let mut last = None;
    loop {
        if let Some(r) = deadline.run(resolve_once(p, loc)).await {
            match r? {
                Resolved::One(n) => return Ok(*n),
                Resolved::None(m) => last = Some(m),
                Resolved::Unanswered => {}
            }
        }
        if !cadence.wait(deadline).await {
            let e = DriverError::new(
                DesktopCode::LocatorNotFound,
                format!(
                    "no element matches {} before the step deadline",
                    loc.describe()
                ),
            )
            .with_remediation(
                "check the name and role in an accessibility snapshot (snapshotAccessibility)",
            );
            return Err(match last {
                Some(m) => e.with_mismatch(*m),
                None => e,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::tests::node;

    fn tree() -> Vec<NodeView> {
        views(&[
            node("application", "app", None, &[]),
            node("frame", "Main", Some(0), &[0]),
            node("push button", "OK", Some(1), &[0, 0]),
            node("push button", "OK", Some(1), &[0, 1]),
        ])
    }

    fn ok() -> Locator {
        Locator {
            role: Some("button".into()),
            name: Some("OK".into()),
            ..Default::default()
        }
    }

    #[test]
    fn one_showing_match_among_hidden_ones_is_picked() {
        let vs = tree();
        assert_eq!(pick(&vs, &ok(), &[2, 3], &[false, true]).unwrap(), Some(3));
        assert_eq!(pick(&vs, &ok(), &[2], &[false]).unwrap(), Some(2));
    }

    #[test]
    fn two_showing_matches_are_ambiguous_unless_an_occurrence_picks() {
        let vs = tree();
        let e = pick(&vs, &ok(), &[2, 3], &[true, true]).unwrap_err();
        assert_eq!(e.code, "desktop.locator.ambiguous");
        assert!(e.message.contains("matches 2 elements"), "{}", e.message);
        assert_eq!(e.mismatch.as_ref().unwrap().candidates.len(), 2);
        let second = Locator {
            occurrence: Some(1),
            ..ok()
        };
        assert_eq!(pick(&vs, &second, &[2, 3], &[true, true]).unwrap(), Some(3));
        let third = Locator {
            occurrence: Some(2),
            ..ok()
        };
        assert_eq!(pick(&vs, &third, &[2, 3], &[true, true]).unwrap(), None);
    }

    #[test]
    fn nothing_found_names_the_closest_elements() {
        let vs = tree();
        let l = Locator {
            role: Some("button".into()),
            name: Some("Ok!".into()),
            ..Default::default()
        };
        let m = not_found(&vs, &l);
        assert_eq!(m.received.as_deref(), Some("no element matches"));
        assert_eq!(m.candidates.len(), 2);
        assert_eq!(m.candidates[0].role.as_deref(), Some("push button"));
    }
}
