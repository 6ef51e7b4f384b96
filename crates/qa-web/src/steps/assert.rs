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
    AttributeAssert, AuthRejectedIf, ConsoleAssert, CountAssert, DomMetricAssert, ElementAssert,
    ElementTextAssert, Locator, MatcherOnly, NetworkAssert, WaitFor, WaitState,
};
use qa_core::{Deadline, DriverError, MissingCapability, Verdict};

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

fn holds(b: bool, observed: impl Into<String>) -> Verdict {
    if b {
        Verdict::Holds
    } else {
        Verdict::NotYet {
            observed: observed.into(),
        }
    }
}

fn no_match() -> Verdict {
    Verdict::NotYet {
        observed: "no match".into(),
    }
}

fn ambiguous(l: &Locator, n: u64) -> DriverError {
    DriverError::new(
        WebCode::LocatorAmbiguous,
        format!("{} matched {n} elements; a locator must match exactly one (add exact, nth or a more specific locator)", l.describe()),
    )
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
fn single(l: &Locator, s: ElementState) -> Result<Option<OneElement>, DriverError> {
    if s.count > 1 {
        return Err(ambiguous(l, s.count));
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
        return Err(ambiguous(&w.locator, n));
    }
    let vis = s.one.as_ref().is_some_and(|o| o.visible);
    Ok(match st {
        WaitState::Visible => holds(
            n == 1 && vis,
            if n == 0 { "no match" } else { "not visible" },
        ),
        WaitState::Hidden => holds(n == 0 || !vis, "visible"),
        WaitState::Attached => holds(n == 1, "no match"),
        WaitState::Detached => holds(n == 0, format!("{n} match(es) attached")),
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
    let one = single(&a.locator, s)?;
    Ok(match (check, one) {
        (ElementCheck::Hidden, one) => holds(one.is_none_or(|o| !o.visible), "visible"),
        (ElementCheck::Visible, Some(o)) => holds(o.visible, "not visible"),
        (ElementCheck::Enabled, Some(o)) => holds(o.enabled, "disabled"),
        (ElementCheck::Disabled, Some(o)) => holds(!o.enabled, "enabled"),
        (ElementCheck::Checked, Some(o)) => holds(o.checked == Some(true), "unchecked"),
        (ElementCheck::Unchecked, Some(o)) => holds(o.checked == Some(false), "checked"),
        (
            ElementCheck::Visible
            | ElementCheck::Enabled
            | ElementCheck::Disabled
            | ElementCheck::Checked
            | ElementCheck::Unchecked,
            None,
        ) => no_match(),
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
    let Some(one) = single(&t.locator, s)? else {
        return Ok(no_match());
    };
    // An element without a value (neither a form field nor editable)
    // reads as empty.
    let actual = one.read().map_err(reply_error)?.unwrap_or("");
    let m = t.matcher();
    Ok(holds(
        m.matches(actual),
        format!("{field} does not match {}", m.describe()),
    ))
}

/// `assertAttribute`.
pub(super) async fn attribute(
    page: &Page,
    a: &AttributeAssert,
    deadline: Deadline,
) -> Result<Verdict, DriverError> {
    let s = state(page, &a.locator, Read::Attribute(&a.attribute), deadline).await?;
    let Some(one) = single(&a.locator, s)? else {
        return Ok(no_match());
    };
    Ok(match one.read().map_err(reply_error)? {
        Some(v) => holds(
            a.matcher().matches(v),
            format!("attribute {} does not match", a.attribute),
        ),
        None => Verdict::NotYet {
            observed: format!("attribute {} absent", a.attribute),
        },
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
    Ok(holds(n == u64::from(c.count), format!("{n} match(es)")))
}

/// `assertURL`.
pub(super) async fn url(
    page: &Page,
    m: &MatcherOnly,
    deadline: Deadline,
) -> Result<Verdict, DriverError> {
    let p: PageInfo = page.read(&DomOp::PageInfo, deadline).await?;
    let m = m.matcher();
    Ok(holds(
        m.matches(&p.url),
        format!("URL does not match {}", m.describe()),
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
            match d.metric.as_str() {
                "count" => Some(c.count as f64),
                "visibleCount" => Some(c.visible as f64),
                _ => None,
            }
        }
        None => {
            let m: Metrics = page.read(&DomOp::Metrics, deadline).await?;
            m.get(&d.metric)
        }
    };
    Ok(match value {
        Some(x) => holds(cmp.holds(x), format!("{} is {x}", d.metric)),
        None => Verdict::Fails {
            reason: format!("unknown DOM metric {:?}", d.metric),
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
    let found = page.sh.st().console.iter().any(|e| {
        !e.containment && c.level.as_deref().is_none_or(|l| e.level.is(l)) && m.matches(&e.text)
    });
    holds(
        found,
        format!("no console message matches {}", m.describe()),
    )
}

/// `assertNetworkRequest`: a finished request matches.
pub(super) fn network_request(page: &Page, n: &NetworkAssert) -> Verdict {
    let found = find_request(page, &n.path, n.method.as_deref(), n.status) == Some(true);
    holds(
        found,
        format!("no finished request to {:?} matches", n.path),
    )
}

/// `authRejectedIf`: holds while the declared rejection signal is absent;
/// when it is present the signed-in session was rejected and the run is
/// BLOCKED (missing capability `auth-session`), never FAILED.
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
