//! What the driver asks the Accessibility API for and how it acts, decided
//! from what an element reports. Pure: the macOS side carries the plans
//! out with `AXUIElementCopyMultipleAttributeValues`,
//! `AXUIElementPerformAction` and `AXUIElementSetAttributeValue`, and reads
//! the result back.
//!
//! - [`attributes`]: one batched read per element, only the attributes the
//!   step needs (a tree walk that reads attribute by attribute is what
//!   makes peers slow on deep trees).
//! - [`accessible_name`]: the name a person (and VoiceOver) gives the
//!   element.
//! - [`activate`], [`set_value`], [`select`]: the action or attribute each
//!   step uses, or a real click where the element offers none.

use qa_desktop::node::{parse_number, Fields};

/// `kAXRoleAttribute`.
pub const ROLE: &str = "AXRole";
/// `kAXSubroleAttribute`.
pub const SUBROLE: &str = "AXSubrole";
/// `kAXTitleAttribute`.
pub const TITLE: &str = "AXTitle";
/// `kAXDescriptionAttribute`.
pub const DESCRIPTION: &str = "AXDescription";
/// `kAXChildrenAttribute`.
pub const CHILDREN: &str = "AXChildren";
/// `kAXIdentifierAttribute` (the flow's `automationId`).
pub const IDENTIFIER: &str = "AXIdentifier";
/// `kAXEnabledAttribute`.
pub const ENABLED: &str = "AXEnabled";
/// `kAXFocusedAttribute`.
pub const FOCUSED: &str = "AXFocused";
/// `kAXSelectedAttribute`.
pub const SELECTED: &str = "AXSelected";
/// `kAXExpandedAttribute`.
pub const EXPANDED: &str = "AXExpanded";
/// `kAXValueAttribute` (a check box's state, a field's text, a slider's
/// number).
pub const VALUE: &str = "AXValue";
/// `kAXPositionAttribute`.
pub const POSITION: &str = "AXPosition";
/// `kAXSizeAttribute`.
pub const SIZE: &str = "AXSize";
/// `kAXHelpAttribute` (the tooltip).
pub const HELP: &str = "AXHelp";
/// `kAXPlaceholderValueAttribute`.
pub const PLACEHOLDER: &str = "AXPlaceholderValue";

/// `kAXPressAction`.
pub const PRESS: &str = "AXPress";
/// `kAXConfirmAction`.
pub const CONFIRM: &str = "AXConfirm";
/// `kAXPickAction` (a menu item in an open menu).
pub const PICK: &str = "AXPick";
/// `kAXShowMenuAction`.
pub const SHOW_MENU: &str = "AXShowMenu";
/// `kAXIncrementAction`.
pub const INCREMENT: &str = "AXIncrement";
/// `kAXDecrementAction`.
pub const DECREMENT: &str = "AXDecrement";

/// The attributes one batched read fetches for `fields`, in a fixed order:
/// role, subrole, the three name sources and the children always; then
/// the id, the states (with the size: an element of no size is not
/// visible) and the detail the step needs.
pub fn attributes(fields: Fields) -> Vec<&'static str> {
    let mut v = vec![ROLE, SUBROLE, TITLE, DESCRIPTION, CHILDREN];
    if fields.id {
        v.push(IDENTIFIER);
    }
    if fields.states {
        v.extend([ENABLED, FOCUSED, SELECTED, EXPANDED]);
    }
    if fields.states || fields.detail || fields.content {
        v.push(VALUE);
    }
    if fields.states || fields.detail {
        v.push(SIZE);
    }
    if fields.detail {
        v.extend([POSITION, HELP, PLACEHOLDER]);
    }
    v
}

/// The element's accessible name: its title, else its description, else —
/// for static text, whose words are its value — its value.
pub fn accessible_name(
    role: &str,
    title: Option<&str>,
    description: Option<&str>,
    value: Option<&str>,
) -> String {
    let some = |s: Option<&str>| s.map(str::trim).filter(|s| !s.is_empty()).map(String::from);
    some(title)
        .or_else(|| some(description))
        .or_else(|| (role == "AXStaticText").then(|| some(value)).flatten())
        .unwrap_or_default()
}

/// How `activate` acts on an element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActivatePlan {
    /// Perform this action.
    Action(&'static str),
    /// Set `AXSelected` to true (a row or cell that offers no action).
    Select,
    /// Perform `AXShowMenu`: the only action of an element that opens a
    /// menu and does nothing else.
    ShowMenu,
    /// No action acts: a real click at the element's centre (CGEvent).
    Click,
}

/// The action `activate` uses: `AXPress`, else `AXConfirm`, else `AXPick`,
/// else selecting an element whose `AXSelected` is settable, else
/// `AXShowMenu`, else a real click.
pub fn activate(actions: &[&str], selected_settable: bool) -> ActivatePlan {
    for a in [PRESS, CONFIRM, PICK] {
        if actions.contains(&a) {
            return ActivatePlan::Action(a);
        }
    }
    if selected_settable {
        ActivatePlan::Select
    } else if actions.contains(&SHOW_MENU) {
        ActivatePlan::ShowMenu
    } else {
        ActivatePlan::Click
    }
}

/// How `setValue` writes a value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ValuePlan {
    /// Set `AXValue` to the text.
    Text,
    /// Set `AXValue` to the number (a slider or a stepper's field).
    Number(f64),
}

/// Why a value cannot be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueRefusal {
    /// `AXValue` is not settable.
    ReadOnly,
    /// A slider or stepper was given text that is not a number.
    NotANumber,
}

/// How `setValue` writes `value` to an element of `role` whose `AXValue`
/// is settable or not: sliders and steppers take numbers, everything else
/// text.
pub fn set_value(role: &str, settable: bool, value: &str) -> Result<ValuePlan, ValueRefusal> {
    if !settable {
        return Err(ValueRefusal::ReadOnly);
    }
    match role {
        "AXSlider" | "AXIncrementor" => parse_number(value)
            .map(ValuePlan::Number)
            .ok_or(ValueRefusal::NotANumber),
        _ => Ok(ValuePlan::Text),
    }
}

/// Whether `selectOption` can select the element: only by setting its
/// `AXSelected` (a click would toggle a multi-selection).
pub fn select(selected_settable: bool) -> bool {
    selected_settable
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_read_fetches_only_what_the_step_needs() {
        let base = Fields::default();
        assert_eq!(
            attributes(base),
            [ROLE, SUBROLE, TITLE, DESCRIPTION, CHILDREN]
        );
        let states = attributes(Fields {
            states: true,
            ..base
        });
        for a in [ENABLED, FOCUSED, SELECTED, EXPANDED, VALUE] {
            assert!(states.contains(&a), "{a}");
        }
        assert!(states.contains(&SIZE), "visibility needs the size");
        assert!(!states.contains(&POSITION));
        let all = attributes(Fields::ALL);
        for a in [IDENTIFIER, POSITION, SIZE, HELP, PLACEHOLDER] {
            assert!(all.contains(&a), "{a}");
        }
        let mut unique = all.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), all.len(), "an attribute is asked twice");
    }

    #[test]
    fn the_name_is_the_title_then_the_description_then_static_text() {
        assert_eq!(
            accessible_name("AXButton", Some("Save"), Some("saves"), None),
            "Save"
        );
        assert_eq!(
            accessible_name("AXButton", Some(" "), Some("Close"), None),
            "Close"
        );
        assert_eq!(
            accessible_name("AXStaticText", None, None, Some("Total: 4")),
            "Total: 4"
        );
        assert_eq!(
            accessible_name("AXTextField", None, None, Some("typed text")),
            "",
            "a field's value is its content, not its name"
        );
    }

    #[test]
    fn activate_presses_then_confirms_then_picks_then_selects_then_clicks() {
        assert_eq!(
            activate(&[SHOW_MENU, PRESS], true),
            ActivatePlan::Action(PRESS)
        );
        assert_eq!(
            activate(&[CONFIRM, PICK], false),
            ActivatePlan::Action(CONFIRM)
        );
        assert_eq!(activate(&[PICK], false), ActivatePlan::Action(PICK));
        assert_eq!(activate(&[SHOW_MENU], true), ActivatePlan::Select);
        assert_eq!(activate(&[SHOW_MENU], false), ActivatePlan::ShowMenu);
        assert_eq!(activate(&[], false), ActivatePlan::Click);
        assert_eq!(
            activate(&[INCREMENT, DECREMENT], false),
            ActivatePlan::Click
        );
    }

    #[test]
    fn set_value_writes_text_or_numbers_and_refuses_the_rest() {
        assert_eq!(set_value("AXTextField", true, "abc"), Ok(ValuePlan::Text));
        assert_eq!(
            set_value("AXSlider", true, " 42.5 "),
            Ok(ValuePlan::Number(42.5))
        );
        assert_eq!(
            set_value("AXIncrementor", true, "NaN"),
            Err(ValueRefusal::NotANumber)
        );
        assert_eq!(
            set_value("AXTextField", false, "abc"),
            Err(ValueRefusal::ReadOnly)
        );
        assert!(select(true));
        assert!(!select(false));
    }
}
