//! What UI Automation reports, read into ui-qa's portable terms: control
//! types into roles of the [`UIA`] table and cached property values into
//! [`States`]. Pure functions; the Windows walk (`imp::tree`) feeds them.

use qa_desktop::{NativeRole, State, States, UIA};

/// `UIA_ButtonControlTypeId`: the first control type id. A control type's
/// index in the [`UIA`] table is its id minus this.
pub const FIRST_CONTROL_TYPE: i32 = 50_000;

/// The role of a control type id (`UIA_*ControlTypeId`); an id the table
/// does not know (newer than it, or unreadable) is `Unknown`.
pub fn role_of(control_type: i32) -> NativeRole {
    usize::try_from(control_type - FIRST_CONTROL_TYPE)
        .ok()
        .filter(|&i| i < UIA.names.len() - 1)
        .and_then(|i| NativeRole::from_id(&UIA, i))
        .unwrap_or_else(|| UIA.native_or_unknown(UIA.unknown))
}

/// `ToggleState`: what a Toggle pattern reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Toggle {
    /// `ToggleState_Off`.
    Off,
    /// `ToggleState_On`.
    On,
    /// `ToggleState_Indeterminate`.
    Indeterminate,
}

impl Toggle {
    /// From the `ToggleToggleState` property's value.
    pub fn from_raw(v: i32) -> Option<Toggle> {
        match v {
            0 => Some(Toggle::Off),
            1 => Some(Toggle::On),
            2 => Some(Toggle::Indeterminate),
            _ => None,
        }
    }
}

/// `ExpandCollapseState`: what an ExpandCollapse pattern reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expansion {
    /// `ExpandCollapseState_Collapsed`.
    Collapsed,
    /// `ExpandCollapseState_Expanded`.
    Expanded,
    /// `ExpandCollapseState_PartiallyExpanded`.
    PartiallyExpanded,
    /// `ExpandCollapseState_LeafNode`: nothing to expand.
    Leaf,
}

impl Expansion {
    /// From the `ExpandCollapseExpandCollapseState` property's value.
    pub fn from_raw(v: i32) -> Option<Expansion> {
        match v {
            0 => Some(Expansion::Collapsed),
            1 => Some(Expansion::Expanded),
            2 => Some(Expansion::PartiallyExpanded),
            3 => Some(Expansion::Leaf),
            _ => None,
        }
    }
}

/// The state-bearing properties one element's cache holds (`None`: the
/// element does not support the pattern, or the property was not read).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RawStates {
    /// `IsEnabled`.
    pub enabled: bool,
    /// `HasKeyboardFocus`.
    pub focused: bool,
    /// `IsKeyboardFocusable`.
    pub focusable: bool,
    /// `IsOffscreen`.
    pub offscreen: bool,
    /// `IsPassword`.
    pub password: bool,
    /// `ToggleToggleState`.
    pub toggle: Option<Toggle>,
    /// `SelectionItemIsSelected`.
    pub selected: Option<bool>,
    /// `ExpandCollapseExpandCollapseState`.
    pub expansion: Option<Expansion>,
    /// `ValueIsReadOnly` (`Some` only when the Value pattern is there).
    pub value_read_only: Option<bool>,
    /// Whether the element is the foreground window.
    pub active: bool,
}

/// The portable states and UIA's own names for them (as Inspect shows the
/// properties: `IsEnabled`, `HasKeyboardFocus`, …).
pub fn states(r: &RawStates) -> States {
    let mut has = Vec::new();
    let mut native = Vec::new();
    let mut put = |on: bool, portable: &[State], name: &'static str| {
        if on {
            has.extend_from_slice(portable);
            native.push(name);
        }
    };
    put(r.enabled, &[State::Enabled], "IsEnabled");
    put(r.focused, &[State::Focused], "HasKeyboardFocus");
    put(r.focusable, &[], "IsKeyboardFocusable");
    // UIA has no separate "mapped" state: an element that is not off
    // screen is both showing and visible.
    put(!r.offscreen, &[State::Visible, State::Showing], "OnScreen");
    put(r.offscreen, &[], "IsOffscreen");
    put(r.password, &[], "IsPassword");
    put(
        r.toggle == Some(Toggle::On),
        &[State::Checked],
        "ToggleState.On",
    );
    put(
        r.toggle == Some(Toggle::Indeterminate),
        &[],
        "ToggleState.Indeterminate",
    );
    put(r.selected == Some(true), &[State::Selected], "IsSelected");
    put(
        matches!(
            r.expansion,
            Some(Expansion::Expanded | Expansion::PartiallyExpanded)
        ),
        &[State::Expanded],
        "Expanded",
    );
    put(
        r.expansion == Some(Expansion::Collapsed),
        &[State::Collapsed],
        "Collapsed",
    );
    put(
        r.value_read_only == Some(false),
        &[State::Editable],
        "Editable",
    );
    put(r.value_read_only == Some(true), &[], "IsReadOnly");
    put(r.active, &[State::Active], "Active");
    States::new(has, native)
}

#[cfg(test)]
mod tests {
    use super::*;
    use qa_desktop::Role;

    #[test]
    fn control_type_ids_map_to_their_uia_names_and_portable_roles() {
        for (id, name) in [
            (50_000, "Button"),
            (50_002, "CheckBox"),
            (50_004, "Edit"),
            (50_011, "MenuItem"),
            (50_019, "TabItem"),
            (50_020, "Text"),
            (50_030, "Document"),
            (50_031, "SplitButton"),
            (50_032, "Window"),
            (50_033, "Pane"),
            (50_040, "AppBar"),
        ] {
            assert_eq!(role_of(id).name(), name, "control type {id}");
        }
        assert!(role_of(50_000).is(Role::Button));
        assert!(role_of(50_031).is(Role::Button));
        assert!(role_of(50_004).is(Role::Textbox));
        assert!(role_of(50_002).is(Role::Checkbox));
        assert!(role_of(50_032).is(Role::Window));
        assert!(!role_of(50_033).is(Role::Window));
    }

    #[test]
    fn unknown_control_types_are_unknown_never_a_neighbour() {
        for id in [0, -1, 49_999, 50_041, 50_100, i32::MAX] {
            assert_eq!(role_of(id).name(), "Unknown", "control type {id}");
        }
    }

    #[test]
    fn cached_properties_become_portable_states() {
        let s = states(&RawStates {
            enabled: true,
            focused: true,
            toggle: Some(Toggle::On),
            value_read_only: Some(false),
            expansion: Some(Expansion::Collapsed),
            ..RawStates::default()
        });
        for st in [
            State::Enabled,
            State::Focused,
            State::Checked,
            State::Editable,
            State::Collapsed,
            State::Visible,
            State::Showing,
        ] {
            assert!(s.has(st), "{st:?}");
        }
        assert!(!s.has(State::Selected) && !s.has(State::Expanded));
        assert!(s.native.contains(&"ToggleState.On"));

        let off = states(&RawStates {
            offscreen: true,
            toggle: Some(Toggle::Indeterminate),
            value_read_only: Some(true),
            expansion: Some(Expansion::Leaf),
            selected: Some(true),
            ..RawStates::default()
        });
        assert!(!off.has(State::Enabled) && !off.has(State::Visible));
        assert!(!off.has(State::Checked), "indeterminate is not checked");
        assert!(!off.has(State::Editable) && !off.has(State::Collapsed));
        assert!(off.has(State::Selected));
        assert!(off.native.contains(&"IsReadOnly"));
    }

    #[test]
    fn raw_pattern_values_are_read_exactly() {
        assert_eq!(Toggle::from_raw(1), Some(Toggle::On));
        assert_eq!(Toggle::from_raw(0), Some(Toggle::Off));
        assert_eq!(Toggle::from_raw(3), None);
        assert_eq!(Expansion::from_raw(1), Some(Expansion::Expanded));
        assert_eq!(Expansion::from_raw(3), Some(Expansion::Leaf));
        assert_eq!(Expansion::from_raw(4), None);
    }
}
