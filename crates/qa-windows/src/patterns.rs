//! Which UI Automation control pattern each step uses, decided from the
//! patterns an element reports (its cached `Is*PatternAvailable`
//! properties). Pure: the Windows side (`imp::actions`) carries the plan
//! out and reads the result back.

use crate::uia::Expansion;

/// A control pattern ui-qa acts through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum Pattern {
    /// `InvokePattern`: buttons, menu items, links.
    Invoke = 1 << 0,
    /// `TogglePattern`: check boxes, toggle buttons.
    Toggle = 1 << 1,
    /// `ValuePattern`: text fields, combo boxes' edit part.
    Value = 1 << 2,
    /// `RangeValuePattern`: sliders, spinners, progress bars.
    RangeValue = 1 << 3,
    /// `SelectionItemPattern`: list items, tab items, radio buttons.
    SelectionItem = 1 << 4,
    /// `ExpandCollapsePattern`: menus, tree items, combo boxes.
    ExpandCollapse = 1 << 5,
    /// `ScrollItemPattern`: an item a container can scroll into view.
    ScrollItem = 1 << 6,
    /// `TextPattern`: documents and rich text.
    Text = 1 << 7,
    /// `LegacyIAccessiblePattern`: MSAA's default action, for controls
    /// with no other pattern.
    LegacyIAccessible = 1 << 8,
}

impl Pattern {
    /// Every pattern, in the order snapshots list them.
    pub const ALL: [Pattern; 9] = [
        Pattern::Invoke,
        Pattern::Toggle,
        Pattern::Value,
        Pattern::RangeValue,
        Pattern::SelectionItem,
        Pattern::ExpandCollapse,
        Pattern::ScrollItem,
        Pattern::Text,
        Pattern::LegacyIAccessible,
    ];

    /// Its name as Inspect and FlaUI show it.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Invoke => "Invoke",
            Pattern::Toggle => "Toggle",
            Pattern::Value => "Value",
            Pattern::RangeValue => "RangeValue",
            Pattern::SelectionItem => "SelectionItem",
            Pattern::ExpandCollapse => "ExpandCollapse",
            Pattern::ScrollItem => "ScrollItem",
            Pattern::Text => "Text",
            Pattern::LegacyIAccessible => "LegacyIAccessible",
        }
    }
}

/// The patterns one element supports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Patterns(u16);

impl Patterns {
    /// The set of `has`.
    pub fn of(has: impl IntoIterator<Item = Pattern>) -> Patterns {
        Patterns(has.into_iter().fold(0, |b, p| b | p as u16))
    }

    /// Whether it supports `p`.
    pub fn has(self, p: Pattern) -> bool {
        self.0 & p as u16 != 0
    }

    /// Adds `p`.
    pub fn insert(&mut self, p: Pattern) {
        self.0 |= p as u16;
    }

    /// The names of the patterns it supports.
    pub fn names(self) -> Vec<&'static str> {
        Pattern::ALL
            .into_iter()
            .filter(|&p| self.has(p))
            .map(Pattern::name)
            .collect()
    }
}

/// How `activate` runs an element's default action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActivatePlan {
    /// `Invoke()`.
    Invoke,
    /// `Toggle()`.
    Toggle,
    /// `Select()` on a selection item.
    Select,
    /// `Expand()` (it is collapsed).
    Expand,
    /// `Collapse()` (it is expanded).
    Collapse,
    /// MSAA's `DoDefaultAction()` (it names one).
    DefaultAction,
    /// No pattern acts: the session clicks it with the pointer.
    Click,
}

impl ActivatePlan {
    /// The step detail's word for it.
    pub fn describe(self) -> &'static str {
        match self {
            ActivatePlan::Invoke => "Invoke",
            ActivatePlan::Toggle => "Toggle",
            ActivatePlan::Select => "SelectionItem.Select",
            ActivatePlan::Expand => "ExpandCollapse.Expand",
            ActivatePlan::Collapse => "ExpandCollapse.Collapse",
            ActivatePlan::DefaultAction => "LegacyIAccessible.DoDefaultAction",
            ActivatePlan::Click => "a pointer click",
        }
    }
}

/// The pattern `activate` uses: Invoke, else Toggle, else selecting a
/// selection item, else expanding or collapsing, else MSAA's default
/// action when it names one, else a real click.
pub fn activate(p: Patterns, expansion: Option<Expansion>, default_action: bool) -> ActivatePlan {
    if p.has(Pattern::Invoke) {
        ActivatePlan::Invoke
    } else if p.has(Pattern::Toggle) {
        ActivatePlan::Toggle
    } else if p.has(Pattern::SelectionItem) {
        ActivatePlan::Select
    } else if p.has(Pattern::ExpandCollapse) && expansion != Some(Expansion::Leaf) {
        match expansion {
            Some(Expansion::Expanded | Expansion::PartiallyExpanded) => ActivatePlan::Collapse,
            _ => ActivatePlan::Expand,
        }
    } else if p.has(Pattern::LegacyIAccessible) && default_action {
        ActivatePlan::DefaultAction
    } else {
        ActivatePlan::Click
    }
}

/// How `setValue` writes a value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ValuePlan {
    /// `ValuePattern.SetValue(text)`.
    Text,
    /// `RangeValuePattern.SetValue(number)`.
    Number(f64),
}

/// Why a value cannot be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueRefusal {
    /// The element's value is read-only.
    ReadOnly,
    /// A range control was given text that is not a number.
    NotANumber,
    /// It has neither a Value nor a RangeValue pattern.
    Unsupported,
}

/// The pattern `setValue` uses: a writable Value pattern takes the text
/// as is; a RangeValue pattern takes it as a number.
pub fn set_value(
    p: Patterns,
    value_read_only: Option<bool>,
    range_read_only: Option<bool>,
    value: &str,
) -> Result<ValuePlan, ValueRefusal> {
    if p.has(Pattern::Value) && value_read_only != Some(true) {
        return Ok(ValuePlan::Text);
    }
    if p.has(Pattern::RangeValue) && range_read_only != Some(true) {
        return qa_desktop::node::parse_number(value)
            .map(ValuePlan::Number)
            .ok_or(ValueRefusal::NotANumber);
    }
    if p.has(Pattern::Value) || p.has(Pattern::RangeValue) {
        return Err(ValueRefusal::ReadOnly);
    }
    Err(ValueRefusal::Unsupported)
}

/// Whether `selectOption` can select the element: only through its
/// SelectionItem pattern (a click would toggle a multi-select list).
pub fn can_select(p: Patterns) -> bool {
    p.has(Pattern::SelectionItem)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(ps: &[Pattern]) -> Patterns {
        Patterns::of(ps.iter().copied())
    }

    #[test]
    fn activate_prefers_invoke_then_toggle_then_selection_then_expansion() {
        use Pattern::*;
        assert_eq!(
            activate(of(&[Invoke, Toggle]), None, true),
            ActivatePlan::Invoke
        );
        assert_eq!(
            activate(of(&[Toggle, SelectionItem]), None, true),
            ActivatePlan::Toggle
        );
        assert_eq!(
            activate(of(&[SelectionItem, ExpandCollapse]), None, true),
            ActivatePlan::Select
        );
        assert_eq!(
            activate(of(&[ExpandCollapse]), Some(Expansion::Collapsed), true),
            ActivatePlan::Expand
        );
        assert_eq!(
            activate(of(&[ExpandCollapse]), Some(Expansion::Expanded), true),
            ActivatePlan::Collapse
        );
        assert_eq!(
            activate(
                of(&[ExpandCollapse, LegacyIAccessible]),
                Some(Expansion::Leaf),
                true
            ),
            ActivatePlan::DefaultAction
        );
        assert_eq!(
            activate(of(&[LegacyIAccessible]), None, false),
            ActivatePlan::Click,
            "an MSAA element without a default action is clicked"
        );
        assert_eq!(
            activate(of(&[Text, ScrollItem]), None, true),
            ActivatePlan::Click
        );
    }

    #[test]
    fn set_value_writes_text_or_numbers_and_refuses_the_rest() {
        use Pattern::*;
        assert_eq!(
            set_value(of(&[Value]), Some(false), None, "abc"),
            Ok(ValuePlan::Text)
        );
        assert_eq!(
            set_value(of(&[Value]), None, None, "abc"),
            Ok(ValuePlan::Text)
        );
        assert_eq!(
            set_value(of(&[RangeValue]), None, Some(false), " 42.5 "),
            Ok(ValuePlan::Number(42.5))
        );
        assert_eq!(
            set_value(of(&[RangeValue]), None, None, "forty"),
            Err(ValueRefusal::NotANumber)
        );
        assert_eq!(
            set_value(of(&[RangeValue]), None, None, "NaN"),
            Err(ValueRefusal::NotANumber)
        );
        assert_eq!(
            set_value(of(&[Value, RangeValue]), Some(true), Some(false), "3"),
            Ok(ValuePlan::Number(3.0)),
            "a read-only text with a writable range takes the number"
        );
        assert_eq!(
            set_value(of(&[Value]), Some(true), None, "x"),
            Err(ValueRefusal::ReadOnly)
        );
        assert_eq!(
            set_value(of(&[Invoke]), None, None, "x"),
            Err(ValueRefusal::Unsupported)
        );
    }

    #[test]
    fn pattern_sets_list_their_names_in_order() {
        let p = of(&[Pattern::Text, Pattern::Invoke]);
        assert_eq!(p.names(), ["Invoke", "Text"]);
        assert!(can_select(of(&[Pattern::SelectionItem])));
        assert!(!can_select(of(&[Pattern::Invoke])));
    }
}
