//! Acting through control patterns, on the COM thread: the plan comes from
//! [`crate::patterns`], the live element from the registry, and every
//! write is read back before the step is told it worked.

use super::com::Uia;
use super::tree::UiaElement;
use crate::patterns::{self, ActivatePlan, ValuePlan, ValueRefusal};
use qa_core::DriverError;
use qa_desktop::{Activated, DesktopCode};
use uiautomation::patterns::{
    UIExpandCollapsePattern, UIInvokePattern, UILegacyIAccessiblePattern, UIRangeValuePattern,
    UISelectionItemPattern, UITogglePattern, UIValuePattern,
};
use uiautomation::UIElement;

fn live(u: &Uia, e: &UiaElement, code: DesktopCode) -> Result<UIElement, DriverError> {
    u.elements.get(&e.key).ok_or_else(|| {
        DriverError::new(
            code,
            "the element is no longer known to UI Automation (the tree changed since it was found)",
        )
    })
}

fn failed(code: DesktopCode, what: &str, e: uiautomation::Error) -> DriverError {
    DriverError::new(code, format!("{what} failed: {e}"))
}

/// Runs the element's default action through the first pattern that
/// has one ([`patterns::activate`]).
pub(crate) fn activate(u: &Uia, e: &UiaElement) -> Result<Activated, DriverError> {
    let plan = patterns::activate(e.patterns, e.expansion, e.default_action);
    if plan == ActivatePlan::Click {
        return Ok(Activated::NoAction);
    }
    let el = live(u, e, DesktopCode::ActivateFailed)?;
    let code = DesktopCode::ActivateFailed;
    let what = plan.describe();
    let r = match plan {
        ActivatePlan::Invoke => el.get_pattern::<UIInvokePattern>().and_then(|p| p.invoke()),
        ActivatePlan::Toggle => el.get_pattern::<UITogglePattern>().and_then(|p| p.toggle()),
        ActivatePlan::Select => el
            .get_pattern::<UISelectionItemPattern>()
            .and_then(|p| p.select()),
        ActivatePlan::Expand => el
            .get_pattern::<UIExpandCollapsePattern>()
            .and_then(|p| p.expand()),
        ActivatePlan::Collapse => el
            .get_pattern::<UIExpandCollapsePattern>()
            .and_then(|p| p.collapse()),
        ActivatePlan::DefaultAction => el
            .get_pattern::<UILegacyIAccessiblePattern>()
            .and_then(|p| p.do_default_action()),
        ActivatePlan::Click => unreachable!("handled above"),
    };
    r.map_err(|err| failed(code, what, err))?;
    Ok(Activated::Action(format!("pattern {what}")))
}

/// Selects the element through its SelectionItem pattern, confirmed by
/// reading `IsSelected` back.
pub(crate) fn select(u: &Uia, e: &UiaElement) -> Result<String, DriverError> {
    if !patterns::can_select(e.patterns) {
        return Err(DriverError::new(
            DesktopCode::SelectUnsupported,
            "the element has no SelectionItem pattern: it is not an item of a selectable container",
        )
        .with_remediation(
            "select the list item, tab item or radio button itself, or use activate",
        ));
    }
    let el = live(u, e, DesktopCode::SelectUnsupported)?;
    let p = el
        .get_pattern::<UISelectionItemPattern>()
        .map_err(|err| failed(DesktopCode::SelectUnsupported, "SelectionItem", err))?;
    p.select()
        .map_err(|err| failed(DesktopCode::SelectUnsupported, "SelectionItem.Select", err))?;
    match p.is_selected() {
        Ok(true) => Ok("selected through SelectionItem.Select (IsSelected read back)".into()),
        Ok(false) => Err(DriverError::new(
            DesktopCode::SelectUnsupported,
            "SelectionItem.Select returned, but the element does not report itself selected",
        )),
        Err(err) => Err(failed(
            DesktopCode::SelectUnsupported,
            "reading IsSelected back",
            err,
        )),
    }
}

/// Writes the element's value ([`patterns::set_value`]) and reads it back.
pub(crate) fn set_value(u: &Uia, e: &UiaElement, value: &str) -> Result<String, DriverError> {
    let plan = patterns::set_value(e.patterns, e.value_read_only, e.range_read_only, value)
        .map_err(|r| match r {
            ValueRefusal::ReadOnly => DriverError::new(
                DesktopCode::SetValueReadOnly,
                "the element's value is read-only",
            ),
            ValueRefusal::NotANumber => DriverError::new(
                DesktopCode::SetValueNotANumber,
                format!("the element is a range control and {value:?} is not a number"),
            ),
            ValueRefusal::Unsupported => DriverError::new(
                DesktopCode::SetValueUnsupported,
                "the element has neither a Value nor a RangeValue pattern",
            )
            .with_remediation("focus it and type with inputText instead"),
        })?;
    let el = live(u, e, DesktopCode::SetValueFailed)?;
    let code = DesktopCode::SetValueFailed;
    match plan {
        ValuePlan::Text => {
            let p = el
                .get_pattern::<UIValuePattern>()
                .map_err(|err| failed(code, "Value", err))?;
            p.set_value(value)
                .map_err(|err| failed(code, "Value.SetValue", err))?;
            let now = p
                .get_value()
                .map_err(|err| failed(code, "reading the value back", err))?;
            // Edit controls store line breaks as \r\n.
            if now.replace("\r\n", "\n") != value.replace("\r\n", "\n") {
                return Err(DriverError::new(
                    DesktopCode::SetValueUnchanged,
                    "Value.SetValue returned, but the element's value is not what was written",
                ));
            }
            Ok("Value.SetValue (read back)".into())
        }
        ValuePlan::Number(n) => {
            let p = el
                .get_pattern::<UIRangeValuePattern>()
                .map_err(|err| failed(code, "RangeValue", err))?;
            p.set_value(n)
                .map_err(|err| failed(code, "RangeValue.SetValue", err))?;
            let now = p
                .get_value()
                .map_err(|err| failed(code, "reading the value back", err))?;
            if (now - n).abs() > f64::EPSILON * n.abs().max(1.0) {
                return Err(DriverError::new(
                    DesktopCode::SetValueUnchanged,
                    format!("RangeValue.SetValue({n}) returned, but the value is {now} (clamped to its range?)"),
                ));
            }
            Ok(format!("RangeValue.SetValue({n}) (read back)"))
        }
    }
}

/// Gives the element the keyboard focus.
pub(crate) fn focus(u: &Uia, e: &UiaElement) -> Result<(), DriverError> {
    let el = live(u, e, DesktopCode::FocusFailed)?;
    el.set_focus()
        .map_err(|err| failed(DesktopCode::FocusFailed, "SetFocus", err))
}
