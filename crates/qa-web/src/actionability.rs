//! Playwright-grade actionability: resolve exactly one element, then check
//! attached, visible, stable (two animation frames), enabled, editable (for
//! fill) and that it receives events at the click point. Retried on the
//! shared cadence until the step deadline.

use crate::page::{locator_spec, EvalError, Page};
use qa_core::flow::Locator;
use qa_core::{Cadence, Deadline, DriverError};
use serde_json::Value;

/// An element ready for the action.
#[derive(Debug, Clone)]
pub struct Ready {
    /// The helper's answer (`x`, `y`, `noop`, …).
    pub value: Value,
}

/// The stable error code for a failed check.
pub fn check_code(check: &str) -> &'static str {
    match check {
        "attached" => "web.actionability.not_attached",
        "visible" => "web.actionability.not_visible",
        "stable" => "web.actionability.not_stable",
        "enabled" => "web.actionability.not_enabled",
        "editable" => "web.actionability.not_editable",
        "receives events" => "web.actionability.covered",
        "option present" => "web.select.no_option",
        "option enabled" => "web.select.option_disabled",
        _ => "web.actionability.failed",
    }
}

/// The stable error code for an element the action cannot apply to.
pub fn error_code(code: &str) -> &'static str {
    match code {
        "not_file_input" => "web.upload.not_file_input",
        "not_multiple" => "web.upload.not_multiple",
        _ => "web.action.unsupported_element",
    }
}

/// Resolves `locator` and runs the checks for `kind` (`click`, `fill`,
/// `check`, `hover`, `dblclick`, `wheel`, `select`, `focus`, `rect`, `file`) until
/// they pass or `deadline`; `arg` adds kind-specific fields.
pub async fn actionable(
    page: &Page,
    locator: &Locator,
    action: &str,
    arg: Value,
    deadline: Deadline,
) -> Result<Ready, DriverError> {
    let spec = locator_spec(locator);
    let what = locator.describe();
    let mut cadence = Cadence::new();
    let mut last = String::from("the locator matched no element");
    let mut last_code = "web.locator.not_found";
    // In a frame, what receives events is checked in the page too (not for
    // a wheel, like in the helper).
    let hit = arg["kind"] != "wheel";
    loop {
        match page.eval("act", &spec, &arg, deadline).await {
            Ok(mut v) if v["status"] == "ok" && page.frame.is_some() => {
                match crate::scope::to_page(page, &mut v, hit, deadline).await {
                    Ok(None) => return Ok(Ready { value: v }),
                    Ok(Some(cover)) => {
                        last_code = check_code("receives events");
                        last = format!(
                            "element does not receive events at its click point: {cover} covers it"
                        );
                    }
                    Err(EvalError::Transient(m)) => last = m,
                    Err(EvalError::Fatal(e)) => return Err(e.into()),
                }
            }
            Ok(v) => match v["status"].as_str().unwrap_or("") {
                "ok" => return Ok(Ready { value: v }),
                "ambiguous" => {
                    let n = v["count"].as_u64().unwrap_or(2);
                    return Err(DriverError::new(
                        "web.locator.ambiguous",
                        format!("{action}: {what} matched {n} elements; a locator must match exactly one (add exact, nth or a more specific locator)"),
                    ));
                }
                "none" => {
                    last_code = "web.locator.not_found";
                    last = match v["total"].as_u64() {
                        Some(t) if t > 0 && locator.nth.is_some() => {
                            format!("the locator matched {t} element(s), fewer than nth+1")
                        }
                        _ => "the locator matched no element".into(),
                    };
                }
                "check" => {
                    let check = v["check"].as_str().unwrap_or("");
                    last_code = check_code(check);
                    last = match v["cover"].as_str() {
                        Some(c) => format!(
                            "element does not receive events at its click point: {c} covers it"
                        ),
                        None => format!("element is not {check}"),
                    };
                }
                "error" => {
                    return Err(DriverError::new(
                        error_code(v["code"].as_str().unwrap_or("")),
                        format!(
                            "{action}: {what}: {}",
                            v["error"].as_str().unwrap_or("error")
                        ),
                    ));
                }
                _ => {}
            },
            Err(EvalError::Transient(m)) => {
                if m.contains("SyntaxError") || m.contains("not a valid selector") {
                    return Err(DriverError::new(
                        "web.locator.invalid",
                        format!("{what} is not a valid CSS selector"),
                    ));
                }
                last = "the document was being replaced".into();
            }
            Err(EvalError::Fatal(e)) => return Err(e.into()),
        }
        if !cadence.wait(deadline).await {
            return Err(DriverError::new(
                last_code,
                format!("{action}: {what}: {last} (actionability retried until the step deadline)"),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_name_the_check() {
        assert_eq!(check_code("enabled"), "web.actionability.not_enabled");
        assert_eq!(check_code("receives events"), "web.actionability.covered");
    }
}
