//! Playwright-grade actionability: resolve exactly one element, then check
//! attached, visible, stable (two animation frames), enabled, editable (for
//! fill) and that it receives events at the click point. Retried on the
//! shared cadence until the step deadline.

use crate::codes::WebCode;
use crate::page::{
    to_page, ActKind, ActReply, Check, DomOp, EvalError, Intent, Page, Placed, Unfit,
};
use qa_core::flow::Locator;
use qa_core::{Cadence, Deadline, DriverError, Mismatch};

/// The stable error code for a failed check.
pub(crate) fn check_code(check: Check) -> WebCode {
    match check {
        Check::Attached => WebCode::ActionabilityNotAttached,
        Check::Visible => WebCode::ActionabilityNotVisible,
        Check::Stable => WebCode::ActionabilityNotStable,
        Check::Enabled => WebCode::ActionabilityNotEnabled,
        Check::Editable => WebCode::ActionabilityNotEditable,
        Check::ReceivesEvents => WebCode::ActionabilityCovered,
        Check::OptionPresent => WebCode::SelectNoOption,
        Check::OptionEnabled => WebCode::SelectOptionDisabled,
        Check::Other => WebCode::ActionabilityFailed,
    }
}

/// The stable error code for an element the action cannot apply to.
pub(crate) fn unfit_code(code: Option<Unfit>) -> WebCode {
    match code {
        Some(Unfit::NotFileInput) => WebCode::UploadNotFileInput,
        Some(Unfit::NotMultiple) => WebCode::UploadNotMultiple,
        Some(Unfit::Other) | None => WebCode::ActionUnsupportedElement,
    }
}

/// Resolves `locator` and runs the checks for `kind` until they pass or
/// `deadline`; answers the kind's `ok` payload `T` (in a frame, in the
/// page's coordinates). `action` names the step in messages.
pub(crate) async fn actionable<T: Placed>(
    page: &Page,
    locator: &Locator,
    action: &str,
    kind: ActKind<'_>,
    deadline: Deadline,
) -> Result<T, DriverError> {
    let what = locator.describe();
    let mut cadence = Cadence::new();
    let mut last = String::from("the page did not answer");
    let mut last_code = WebCode::LocatorNotFound;
    // In a frame, what receives events is checked in the page too (not for
    // a wheel, like in the helper).
    let hit = !matches!(kind, ActKind::Wheel);
    let intent = Intent::of(&kind);
    let op = DomOp::Act(locator, kind);
    loop {
        match page.dom::<ActReply<T>>(&op, deadline).await {
            Ok(ActReply::Ok(mut v)) => match to_page(page, &mut v, hit, deadline).await {
                Ok(None) => return Ok(v),
                Ok(Some(cover)) => {
                    last_code = check_code(Check::ReceivesEvents);
                    last = format!(
                        "element does not receive events at its click point: {cover} covers it"
                    );
                }
                // A call cut by the deadline keeps what was last seen.
                Err(EvalError::Transient(m)) if !deadline.expired() => last = m,
                Err(EvalError::Transient(_)) => {}
                Err(EvalError::Fatal(e)) => return Err(e.into()),
                Err(EvalError::Reply(m)) => return Err(crate::page::reply_error(m)),
            },
            Ok(ActReply::Ambiguous { count }) => {
                return Err(DriverError::new(
                    WebCode::LocatorAmbiguous,
                    format!("{action}: {what} matched {count} elements; a locator must match exactly one (add exact, nth or a more specific locator)"),
                )
                .with_mismatch(page.ambiguous(locator, count).await));
            }
            Ok(ActReply::None { total }) => {
                last_code = WebCode::LocatorNotFound;
                last = if total > 0 && locator.nth.is_some() {
                    format!("the locator matched {total} element(s), fewer than nth+1")
                } else {
                    "the locator matched no element".into()
                };
            }
            Ok(ActReply::Check { check, cover }) => {
                last_code = check_code(check);
                last = match cover {
                    Some(c) => {
                        format!("element does not receive events at its click point: {c} covers it")
                    }
                    None => format!("element is not {}", check.as_str()),
                };
            }
            Ok(ActReply::Error { code, error }) => {
                return Err(DriverError::new(
                    unfit_code(code),
                    format!("{action}: {what}: {error}"),
                ));
            }
            Err(EvalError::Transient(m)) => {
                if crate::page::invalid_selector(&m) {
                    return Err(DriverError::new(
                        WebCode::LocatorInvalid,
                        format!("{what} is not a valid CSS selector"),
                    ));
                }
                // A call cut by the deadline keeps what was last seen.
                if !deadline.expired() {
                    last = "the document was being replaced".into();
                }
            }
            Err(EvalError::Fatal(e)) => return Err(e.into()),
            Err(EvalError::Reply(m)) => return Err(crate::page::reply_error(m)),
        }
        if !cadence.wait(deadline).await {
            let e = DriverError::new(
                last_code,
                format!("{action}: {what}: {last} (actionability retried until the step deadline)"),
            );
            return Err(if last_code == WebCode::LocatorNotFound {
                e.with_mismatch(page.not_found(locator, intent).await)
            } else {
                e.with_mismatch(
                    Mismatch::new(format!("{what} to be actionable for {action}"), last)
                        .at(what.clone()),
                )
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_name_the_check() {
        assert_eq!(check_code(Check::Enabled), WebCode::ActionabilityNotEnabled);
        assert_eq!(
            check_code(Check::ReceivesEvents),
            WebCode::ActionabilityCovered
        );
        assert_eq!(unfit_code(None), WebCode::ActionUnsupportedElement);
    }
}
