//! Acting through the Accessibility API: the plan comes from [`crate::ax`],
//! and every write is read back before the step is told it worked.
//! Blocking calls: run off the async executor.

use super::ffi::{AxElement, AxError};
use super::tree::Node;
use crate::ax::{self, ActivatePlan, ValuePlan, ValueRefusal};
use crate::element::Value;
use qa_core::DriverError;
use qa_desktop::node::parse_number;
use qa_desktop::{Activated, DesktopCode};
use std::time::{Duration, Instant};

/// How long a written value may take to read back.
const READ_BACK_MS: u64 = 1_000;
/// Most `AXIncrement`/`AXDecrement` steps one `setValue` takes.
const MAX_STEPS: usize = 500;

fn failed(code: DesktopCode, what: &str, e: AxError) -> DriverError {
    let mut err = DriverError::new(code, format!("{what} failed: {e}"));
    if e.gone() {
        err = err.with_remediation("the element disappeared since it was found; the step found it again by its locator next time");
    } else if e.timed_out() {
        err = err.with_remediation(
            "the application did not answer the accessibility call in time; check that it responds to input",
        );
    }
    err
}

/// Polls `ok` until it holds or the read-back bound passes.
fn settles(mut ok: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + Duration::from_millis(READ_BACK_MS);
    loop {
        if ok() {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

fn action_names(el: &AxElement, code: DesktopCode) -> Result<Vec<String>, DriverError> {
    el.actions()
        .map_err(|e| failed(code, "reading the element's actions", e))
}

/// Runs the element's default action ([`ax::activate`]).
pub(crate) fn activate(node: &Node) -> Result<Activated, DriverError> {
    let el = &node.element;
    let names = action_names(el, DesktopCode::ActivateFailed)?;
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    match ax::activate(&names, el.settable(ax::SELECTED)) {
        ActivatePlan::Action(a) => {
            el.perform(a)
                .map_err(|e| failed(DesktopCode::ActivateFailed, a, e))?;
            Ok(Activated::Action(format!("action {a}")))
        }
        ActivatePlan::ShowMenu => {
            el.perform(ax::SHOW_MENU)
                .map_err(|e| failed(DesktopCode::ActivateFailed, ax::SHOW_MENU, e))?;
            Ok(Activated::Action(format!("action {}", ax::SHOW_MENU)))
        }
        ActivatePlan::Select => {
            select_element(el, DesktopCode::ActivateFailed)?;
            Ok(Activated::Action(
                "AXSelected set to true (read back)".into(),
            ))
        }
        ActivatePlan::Click => Ok(Activated::NoAction),
    }
}

fn select_element(el: &AxElement, code: DesktopCode) -> Result<(), DriverError> {
    el.set_flag(ax::SELECTED, true)
        .map_err(|e| failed(code, "setting AXSelected", e))?;
    if settles(|| el.flag(ax::SELECTED).ok().flatten() == Some(true)) {
        Ok(())
    } else {
        Err(DriverError::new(
            code,
            "AXSelected was set, but the element does not report itself selected",
        ))
    }
}

/// Selects the element by setting `AXSelected`, read back.
pub(crate) fn select(node: &Node) -> Result<String, DriverError> {
    let el = &node.element;
    if !ax::select(el.settable(ax::SELECTED)) {
        return Err(DriverError::new(
            DesktopCode::SelectUnsupported,
            "the element's AXSelected cannot be set: it is not an item of a selectable container",
        )
        .with_remediation("select the row, cell or item itself, or use activate (a tab or radio button is pressed)"));
    }
    select_element(el, DesktopCode::SelectUnsupported)?;
    Ok("AXSelected set to true (read back)".into())
}

fn same_text(now: Option<Value>, want: &str) -> bool {
    matches!(now, Some(Value::Text(t)) if t.replace("\r\n", "\n") == want.replace("\r\n", "\n"))
}

fn same_number(now: Option<Value>, want: f64) -> bool {
    matches!(now, Some(Value::Number(n)) if (n - want).abs() <= f64::EPSILON * want.abs().max(1.0))
}

/// Writes the element's value ([`ax::set_value`]) and reads it back; a
/// slider or stepper whose value cannot be written is stepped with
/// `AXIncrement`/`AXDecrement` instead.
pub(crate) fn set_value(node: &Node, value: &str) -> Result<String, DriverError> {
    let el = &node.element;
    let role = node.view.role.name();
    let code = DesktopCode::SetValueFailed;
    let plan = match ax::set_value(role, el.settable(ax::VALUE), value) {
        Ok(p) => p,
        Err(ValueRefusal::NotANumber) => {
            return Err(DriverError::new(
                DesktopCode::SetValueNotANumber,
                format!("the element is a {role} and {value:?} is not a number"),
            ))
        }
        Err(ValueRefusal::ReadOnly) => return step_to(el, role, value),
    };
    match plan {
        ValuePlan::Text => {
            el.set_text(ax::VALUE, value)
                .map_err(|e| failed(code, "setting AXValue", e))?;
            if settles(|| same_text(el.value(ax::VALUE).ok().flatten(), value)) {
                return Ok("AXValue set (read back)".into());
            }
            let secure = matches!(
                el.value(ax::SUBROLE).ok().flatten(),
                Some(Value::Text(s)) if s == "AXSecureTextField"
            );
            if secure {
                return Ok("AXValue set (a password field: its value cannot be read back)".into());
            }
            Err(DriverError::new(
                DesktopCode::SetValueUnchanged,
                "AXValue was set, but the element's value is not what was written",
            ))
        }
        ValuePlan::Number(n) => {
            el.set_number(ax::VALUE, n)
                .map_err(|e| failed(code, "setting AXValue", e))?;
            if settles(|| same_number(el.value(ax::VALUE).ok().flatten(), n)) {
                return Ok(format!("AXValue set to {n} (read back)"));
            }
            Err(DriverError::new(
                DesktopCode::SetValueUnchanged,
                format!("AXValue was set to {n}, but the element reads back another value (clamped to its range?)"),
            ))
        }
    }
}

/// Steps a slider or stepper whose `AXValue` is read-only toward `value`
/// with `AXIncrement`/`AXDecrement`, reading the value after each step.
fn step_to(el: &AxElement, role: &str, value: &str) -> Result<String, DriverError> {
    let read_only = || {
        DriverError::new(
            DesktopCode::SetValueReadOnly,
            format!("the {role}'s AXValue cannot be written"),
        )
        .with_remediation("focus it and type with inputText, or use pressKey")
    };
    let names = action_names(el, DesktopCode::SetValueFailed)?;
    let has = |a: &str| names.iter().any(|n| n == a);
    let (Some(want), true) = (
        parse_number(value),
        has(ax::INCREMENT) && has(ax::DECREMENT),
    ) else {
        return Err(read_only());
    };
    let number = || match el.value(ax::VALUE).ok().flatten() {
        Some(Value::Number(n)) => Some(n),
        _ => None,
    };
    let mut steps = 0;
    while let Some(now) = number() {
        if (now - want).abs() <= f64::EPSILON * want.abs().max(1.0) {
            return Ok(format!(
                "{steps} AXIncrement/AXDecrement steps to {want} (read back)"
            ));
        }
        if steps >= MAX_STEPS {
            break;
        }
        let action = if now < want {
            ax::INCREMENT
        } else {
            ax::DECREMENT
        };
        el.perform(action)
            .map_err(|e| failed(DesktopCode::SetValueFailed, action, e))?;
        steps += 1;
        let after = number();
        // Overshot or stuck: the value cannot land on the number.
        let stuck = after == Some(now);
        let overshot = after.is_some_and(|a| (now < want && a > want) || (now > want && a < want));
        if stuck || overshot {
            return Err(DriverError::new(
                DesktopCode::SetValueUnchanged,
                format!("stepping the {role} toward {want} stopped at {} (its step does not land on that value, or it is at its limit)", after.unwrap_or(now)),
            ));
        }
    }
    Err(DriverError::new(
        DesktopCode::SetValueUnchanged,
        format!("the {role} did not reach {want} within {MAX_STEPS} steps"),
    ))
}

/// Gives the element the keyboard focus (`AXFocused`, read back).
pub(crate) fn focus(node: &Node) -> Result<(), DriverError> {
    let el = &node.element;
    if !el.settable(ax::FOCUSED) {
        return Err(DriverError::new(
            DesktopCode::FocusUnsupported,
            "the element's AXFocused cannot be set",
        ));
    }
    el.set_flag(ax::FOCUSED, true)
        .map_err(|e| failed(DesktopCode::FocusFailed, "setting AXFocused", e))?;
    if settles(|| el.flag(ax::FOCUSED).ok().flatten() == Some(true)) {
        Ok(())
    } else {
        Err(DriverError::new(
            DesktopCode::FocusFailed,
            "AXFocused was set, but the element does not report the focus",
        ))
    }
}
