//! Assertions: one fresh verdict per call, from the element's state, the
//! page's URL and metrics, the console and network logs — and
//! `authRejectedIf`, which BLOCKS the run when the signed-in session was
//! rejected.

use super::expect::find_request;
use crate::codes::WebCode;
use crate::page::{
    reply_error, Counted, DomOp, ElementState, Metrics, OneElement, Page, PageInfo, Read,
};
use qa_core::flow::{
    AttributeAssert, AuthRejectedIf, ConsoleAssert, CountAssert, DomMetric, DomMetricAssert,
    ElementAssert, ElementTextAssert, Locator, MatcherOnly, NetworkAssert, WaitFor, WaitState,
};
use qa_core::{Deadline, DriverError, Mismatch, MissingCapability, Verdict};

/// The state an element assertion checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ElementCheck {
    /// `assertVisible`.
    Visible,
    /// `assertHidden` (hidden or absent).
    Hidden,
    /// `assertEnabled`.
    Enabled,
    /// `assertDisabled`.
    Disabled,
    /// `assertChecked`.
    Checked,
    /// `assertUnchecked`.
    Unchecked,
}

/// Holds when `b`; otherwise not yet, expected `expected`, received
/// `received`, at `l` when there is a locator.
fn holds_or(b: bool, l: Option<&Locator>, expected: String, received: String) -> Verdict {
    if b {
        return Verdict::Holds;
    }
    let m = Mismatch::new(expected, received);
    Verdict::differs(match l {
        Some(l) => m.at(l.describe()),
        None => m,
    })
}

/// Not yet: the locator matches nothing (with the closest elements).
async fn no_match(page: &Page, l: &Locator) -> Verdict {
    let m = page.not_found(l, None).await;
    Verdict::NotYet {
        observed: format!("no element matches {}", l.describe()),
        mismatch: Some(Box::new(m)),
    }
}

async fn ambiguous(page: &Page, l: &Locator, n: u64) -> DriverError {
    DriverError::new(
        WebCode::LocatorAmbiguous,
        format!("{} matched {n} elements; a locator must match exactly one (add exact, nth or a more specific locator)", l.describe()),
    )
    .with_mismatch(page.ambiguous(l, n).await)
}

/// `s` quoted for a message.
fn quoted(s: &str) -> String {
    format!("{s:?}")
}

async fn state(
    page: &Page,
    l: &Locator,
    read: Read<'_>,
    deadline: Deadline,
) -> Result<ElementState, DriverError> {
    page.read(&DomOp::State(l, read), deadline).await
}

/// The one element, or an ambiguity error (`Ok(None)`: no match).
async fn single(
    page: &Page,
    l: &Locator,
    s: ElementState,
) -> Result<Option<OneElement>, DriverError> {
    if s.count > 1 {
        return Err(ambiguous(page, l, s.count).await);
    }
    Ok(s.one)
}

/// `waitFor`.
pub(super) async fn wait_for(
    page: &Page,
    w: &WaitFor,
    deadline: Deadline,
) -> Result<Verdict, DriverError> {
    let s = state(page, &w.locator, Read::Nothing, deadline).await?;
    let n = s.count;
    let st = w.state.unwrap_or_default();
    if n > 1 && st != WaitState::Detached {
        return Err(ambiguous(page, &w.locator, n).await);
    }
    if n == 0 && matches!(st, WaitState::Visible | WaitState::Attached) {
        return Ok(no_match(page, &w.locator).await);
    }
    let vis = s.one.as_ref().is_some_and(|o| o.visible);
    let l = Some(&w.locator);
    Ok(match st {
        WaitState::Visible => holds_or(vis, l, "visible".into(), "not visible".into()),
        WaitState::Hidden => holds_or(n == 0 || !vis, l, "hidden".into(), "visible".into()),
        WaitState::Attached => Verdict::Holds,
        WaitState::Detached => holds_or(
            n == 0,
            l,
            "detached (no match)".into(),
            format!("{n} match(es) attached"),
        ),
    })
}

/// `assertVisible`, `assertHidden`, `assertEnabled`, `assertDisabled`,
/// `assertChecked`, `assertUnchecked`.
pub(super) async fn element(
    page: &Page,
    a: &ElementAssert,
    check: ElementCheck,
    deadline: Deadline,
) -> Result<Verdict, DriverError> {
    let s = state(page, &a.locator, Read::Nothing, deadline).await?;
    let one = single(page, &a.locator, s).await?;
    let l = Some(&a.locator);
    let check_state = |o: &OneElement| match o.checked {
        Some(true) => "checked",
        Some(false) => "unchecked",
        None => "not checkable",
    };
    let is = |want: &str, ok: bool, got: &str| holds_or(ok, l, want.into(), got.into());
    Ok(match (check, one) {
        (ElementCheck::Hidden, one) => is("hidden", one.is_none_or(|o| !o.visible), "visible"),
        (ElementCheck::Visible, Some(o)) => is("visible", o.visible, "not visible"),
        (ElementCheck::Enabled, Some(o)) => is("enabled", o.enabled, "disabled"),
        (ElementCheck::Disabled, Some(o)) => is("disabled", !o.enabled, "enabled"),
        (ElementCheck::Checked, Some(o)) => is("checked", o.checked == Some(true), check_state(&o)),
        (ElementCheck::Unchecked, Some(o)) => {
            is("unchecked", o.checked == Some(false), check_state(&o))
        }
        (
            ElementCheck::Visible
            | ElementCheck::Enabled
            | ElementCheck::Disabled
            | ElementCheck::Checked
            | ElementCheck::Unchecked,
            None,
        ) => no_match(page, &a.locator).await,
    })
}

/// `assertText`, `assertTextContent`, `assertValue` (`field` names what
/// `read` reads, for the observation).
pub(super) async fn text(
    page: &Page,
    t: &ElementTextAssert,
    read: Read<'_>,
    field: &str,
    deadline: Deadline,
) -> Result<Verdict, DriverError> {
    let s = state(page, &t.locator, read, deadline).await?;
    let Some(one) = single(page, &t.locator, s).await? else {
        return Ok(no_match(page, &t.locator).await);
    };
    // An element without a value (neither a form field nor editable)
    // reads as empty.
    let actual = one.read().map_err(reply_error)?.unwrap_or("");
    let m = t.matcher();
    Ok(holds_or(
        m.matches(actual),
        Some(&t.locator),
        format!("{field} {}", m.describe()),
        quoted(actual),
    ))
}

/// `assertAttribute`.
pub(super) async fn attribute(
    page: &Page,
    a: &AttributeAssert,
    deadline: Deadline,
) -> Result<Verdict, DriverError> {
    let s = state(page, &a.locator, Read::Attribute(&a.attribute), deadline).await?;
    let Some(one) = single(page, &a.locator, s).await? else {
        return Ok(no_match(page, &a.locator).await);
    };
    let m = a.matcher();
    let expected = format!("attribute {} {}", a.attribute, m.describe());
    Ok(match one.read().map_err(reply_error)? {
        Some(v) => holds_or(m.matches(v), Some(&a.locator), expected, quoted(v)),
        None => holds_or(
            false,
            Some(&a.locator),
            expected,
            format!("no attribute {}", a.attribute),
        ),
    })
}

/// `assertCount`.
pub(super) async fn count(
    page: &Page,
    c: &CountAssert,
    deadline: Deadline,
) -> Result<Verdict, DriverError> {
    let n = state(page, &c.locator, Read::Nothing, deadline)
        .await?
        .count;
    Ok(holds_or(
        n == u64::from(c.count),
        Some(&c.locator),
        format!("{} match(es)", c.count),
        format!("{n} match(es)"),
    ))
}

/// `assertURL`.
pub(super) async fn url(
    page: &Page,
    m: &MatcherOnly,
    deadline: Deadline,
) -> Result<Verdict, DriverError> {
    let p: PageInfo = page.read(&DomOp::PageInfo, deadline).await?;
    let m = m.matcher();
    Ok(holds_or(
        m.matches(&p.url),
        None,
        format!("URL {}", m.describe()),
        quoted(&p.url),
    ))
}

/// `assertDOMMetric`: of the document, or of the elements a locator
/// matches (`count`, `visibleCount`).
pub(super) async fn dom_metric(
    page: &Page,
    d: &DomMetricAssert,
    deadline: Deadline,
) -> Result<Verdict, DriverError> {
    let Some(cmp) = d.comparison() else {
        return Ok(Verdict::Fails {
            reason: "no comparison".into(),
        });
    };
    let value = match &d.locator {
        Some(l) => {
            let c: Counted = page.read(&DomOp::CountVisible(l), deadline).await?;
            match d.metric {
                DomMetric::Count => Some(c.count as f64),
                DomMetric::VisibleCount => Some(c.visible as f64),
                _ => None,
            }
        }
        None => {
            let m: Metrics = page.read(&DomOp::Metrics, deadline).await?;
            m.get(d.metric)
        }
    };
    Ok(match value {
        Some(x) => holds_or(
            cmp.holds(x),
            d.locator.as_ref(),
            format!("{} {}", d.metric.as_str(), cmp.describe()),
            format!("{} is {x}", d.metric.as_str()),
        ),
        None => Verdict::Fails {
            reason: format!(
                "DOM metric {} is not measured {}",
                d.metric.as_str(),
                if d.locator.is_some() {
                    "on a locator's elements"
                } else {
                    "on the document"
                }
            ),
        },
    })
}

/// `assertNoConsoleErrors`: fails at once (errors stay logged).
pub(super) fn no_console_errors(page: &Page) -> Verdict {
    let n = page.sh.st().console_errors();
    if n == 0 {
        Verdict::Holds
    } else {
        Verdict::Fails {
            reason: format!("{n} console error(s) were logged (see the console log artifact)"),
        }
    }
}

/// `assertConsole`: a message (not caused by containment) at the level.
pub(super) fn console(page: &Page, c: &ConsoleAssert) -> Verdict {
    let m = c.matcher();
    let found = page
        .sh
        .st()
        .console
        .iter()
        .any(|e| !e.containment && c.level.is_none_or(|l| e.level.is(l)) && m.matches(&e.text));
    holds_or(
        found,
        None,
        format!(
            "a console message{} that {}",
            c.level
                .map(|l| format!(" at level {}", l.as_str()))
                .unwrap_or_default(),
            m.describe()
        ),
        format!(
            "none among {} message(s)",
            page.sh
                .st()
                .console
                .iter()
                .filter(|e| !e.containment)
                .count()
        ),
    )
}

/// `assertNetworkRequest`: a finished request matches.
pub(super) fn network_request(page: &Page, n: &NetworkAssert) -> Verdict {
    let found = find_request(page, &n.path, n.method.as_deref(), n.status) == Some(true);
    holds_or(
        found,
        None,
        format!("a finished request to {:?}", n.path),
        "no finished request matches (see the network log)".into(),
    )
}

/// `authRejectedIf`: holds while the declared rejection signal is absent;
/// when it is present the signed-in session was rejected and the run is
/// BLOCKED, never FAILED: `auth.update_required` naming the flow's auth
/// profile (whose cached state is dropped), or missing capability
/// `auth-session` for a flow without one.
pub(super) async fn auth_rejected_if(
    page: &Page,
    a: &AuthRejectedIf,
    deadline: Deadline,
) -> Result<Verdict, DriverError> {
    let (present, what) = if let Some(s) = &a.url_includes {
        let p: PageInfo = page.read(&DomOp::PageInfo, deadline).await?;
        (
            p.url.contains(s.as_str()),
            format!("the URL includes {s:?}"),
        )
    } else if let Some(l) = &a.locator {
        let c: Counted = page.read(&DomOp::CountVisible(l), deadline).await?;
        (c.visible > 0, format!("{} is visible", l.describe()))
    } else {
        return Ok(Verdict::Fails {
            reason: "authRejectedIf needs urlIncludes or locator".into(),
        });
    };
    if !present {
        return Ok(Verdict::Holds);
    }
    if let Some(profile) = page.sh.auth.get() {
        // The profile's session was rejected: its cached state goes, and a
        // person (or the next form login) renews it.
        profile.discard_state();
        return Err(DriverError::from_auth(profile.update_required(&format!(
            "the page shows the flow's authRejectedIf signal ({what}): the signed-in session was rejected or has expired"
        ))));
    }
    Err(DriverError::blocked(
        WebCode::AuthRejected,
        MissingCapability {
            id: "auth-session".into(),
            reason: format!(
                "the page shows the declared auth-rejection signal ({what}): the signed-in session was rejected"
            ),
            remediation: "refresh the auth profile (sign in again or re-export the session), then rerun".into(),
        },
    ))
}
