//! One element as the Accessibility API reported it — the values of one
//! batched read ([`crate::ax::attributes`]) — turned into what qa-desktop
//! reads: the role through the AX role table, the name, the portable
//! states, the text or number it holds and its frame. Pure; the macOS side
//! does the read.

use crate::ax;
use qa_desktop::node::{Extents, TEXT_CAP};
use qa_desktop::{NativeRole, State, States, AX};

/// One attribute's value, as far as the driver reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A string (`CFString`).
    Text(String),
    /// A number (`CFNumber`).
    Number(f64),
    /// A boolean (`CFBoolean`).
    Bool(bool),
    /// A point (`AXValue` of `kAXValueTypeCGPoint`).
    Point(f64, f64),
    /// A size (`AXValue` of `kAXValueTypeCGSize`).
    Size(f64, f64),
}

/// What one read returned for an element; `None`: the attribute is
/// unsupported or has no value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Raw {
    /// `AXRole`.
    pub role: Option<String>,
    /// `AXSubrole`.
    pub subrole: Option<String>,
    /// `AXTitle`.
    pub title: Option<String>,
    /// `AXDescription`.
    pub description: Option<String>,
    /// `AXValue`.
    pub value: Option<Value>,
    /// `AXIdentifier`.
    pub identifier: Option<String>,
    /// `AXEnabled`.
    pub enabled: Option<bool>,
    /// `AXFocused`.
    pub focused: Option<bool>,
    /// `AXSelected`.
    pub selected: Option<bool>,
    /// `AXExpanded`.
    pub expanded: Option<bool>,
    /// `AXPosition`.
    pub position: Option<(f64, f64)>,
    /// `AXSize`.
    pub size: Option<(f64, f64)>,
}

impl Raw {
    /// The values of one read: `names[i]` answered `values[i]`.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, Option<Value>)>) -> Raw {
        let mut r = Raw::default();
        for (name, v) in pairs {
            let text = |v: &Option<Value>| match v {
                Some(Value::Text(s)) => Some(s.clone()),
                _ => None,
            };
            let flag = |v: &Option<Value>| match v {
                Some(Value::Bool(b)) => Some(*b),
                Some(Value::Number(n)) => Some(*n != 0.0),
                _ => None,
            };
            match name {
                ax::ROLE => r.role = text(&v),
                ax::SUBROLE => r.subrole = text(&v),
                ax::TITLE => r.title = text(&v),
                ax::DESCRIPTION => r.description = text(&v),
                ax::IDENTIFIER => r.identifier = text(&v),
                ax::ENABLED => r.enabled = flag(&v),
                ax::FOCUSED => r.focused = flag(&v),
                ax::SELECTED => r.selected = flag(&v),
                ax::EXPANDED => r.expanded = flag(&v),
                ax::POSITION => {
                    if let Some(Value::Point(x, y)) = v {
                        r.position = Some((x, y));
                    }
                }
                ax::SIZE => {
                    if let Some(Value::Size(w, h)) = v {
                        r.size = Some((w, h));
                    }
                }
                ax::VALUE => r.value = v,
                _ => {}
            }
        }
        r
    }

    /// Its role in the AX role table (`AXUnknown` for a role the table
    /// does not know).
    pub fn role(&self) -> NativeRole {
        AX.native_or_unknown(self.role.as_deref().unwrap_or("AXUnknown"))
    }

    /// Whether it is a password field, whose value is never read into
    /// evidence.
    pub fn secure(&self) -> bool {
        self.subrole.as_deref() == Some("AXSecureTextField")
    }

    /// Its accessible name ([`ax::accessible_name`]).
    pub fn name(&self) -> String {
        let value = match &self.value {
            Some(Value::Text(s)) => Some(s.as_str()),
            _ => None,
        };
        ax::accessible_name(
            self.role.as_deref().unwrap_or(""),
            self.title.as_deref(),
            self.description.as_deref(),
            value,
        )
    }

    /// Whether its value is an on/off state (a check box, a radio button,
    /// a toggle button): `AXValue` 1 is checked.
    fn toggles(&self) -> bool {
        matches!(
            self.role.as_deref(),
            Some("AXCheckBox" | "AXRadioButton" | "AXMenuItem")
        ) || self.subrole.as_deref() == Some("AXToggle")
    }

    /// The portable states and their AX names.
    ///
    /// - `enabled` is `AXEnabled` (an element without it is enabled);
    /// - `focused`, `selected` are `AXFocused`, `AXSelected`;
    /// - `checked` is `AXValue` 1 of a check box, radio button, menu item
    ///   or toggle button (2, mixed, is not checked);
    /// - `expanded`/`collapsed` are `AXExpanded` where it exists;
    /// - `visible` and `showing`: the element has a non-empty `AXSize`
    ///   (when the size was read) — the API has no visibility attribute;
    /// - `editable`: a text field, text area or combo box that is enabled.
    pub fn states(&self) -> States {
        let mut has = Vec::new();
        let mut native = Vec::new();
        let enabled = self.enabled.unwrap_or(true);
        if enabled {
            has.push(State::Enabled);
            native.push("enabled");
        }
        if self.focused == Some(true) {
            has.push(State::Focused);
            native.push("focused");
        }
        if self.selected == Some(true) {
            has.push(State::Selected);
            native.push("selected");
        }
        if self.toggles() && matches!(self.value, Some(Value::Number(n)) if n == 1.0) {
            has.push(State::Checked);
            native.push("checked");
        }
        match self.expanded {
            Some(true) => {
                has.push(State::Expanded);
                native.push("expanded");
            }
            Some(false) => {
                has.push(State::Collapsed);
                native.push("collapsed");
            }
            None => {}
        }
        let sized = self.size.is_none_or(|(w, h)| w > 0.0 && h > 0.0);
        if sized {
            has.extend([State::Visible, State::Showing]);
            native.push("visible");
        }
        if enabled
            && matches!(
                self.role.as_deref(),
                Some("AXTextField" | "AXTextArea" | "AXComboBox")
            )
        {
            has.push(State::Editable);
            native.push("editable");
        }
        States::new(has, native)
    }

    /// Its text content and numeric value: text of a field or static text
    /// (never of a password field), the number of a slider, stepper or
    /// progress indicator; on/off values are states, not values.
    pub fn content(&self) -> (Option<String>, Option<f64>) {
        match &self.value {
            Some(Value::Text(s)) if !self.secure() => {
                (Some(s.chars().take(TEXT_CAP).collect()), None)
            }
            Some(Value::Number(n)) if !self.toggles() => (None, Some(*n)),
            _ => (None, None),
        }
    }

    /// Its frame on the screen in points (top-left origin), when both
    /// `AXPosition` and a non-empty `AXSize` were read.
    pub fn bounds(&self) -> Option<Extents> {
        let (x, y) = self.position?;
        let (w, h) = self.size?;
        (w >= 1.0 && h >= 1.0).then(|| {
            (
                x.round() as i32,
                y.round() as i32,
                w.round() as i32,
                h.round() as i32,
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qa_core::flow::ElementState;

    fn raw(role: &str) -> Raw {
        Raw {
            role: Some(role.into()),
            ..Raw::default()
        }
    }

    #[test]
    fn a_read_is_sorted_into_its_attributes() {
        let r = Raw::from_pairs([
            (ax::ROLE, Some(Value::Text("AXButton".into()))),
            (ax::TITLE, Some(Value::Text("Save".into()))),
            (ax::ENABLED, Some(Value::Bool(false))),
            (ax::POSITION, Some(Value::Point(10.4, 20.0))),
            (ax::SIZE, Some(Value::Size(30.0, 12.6))),
            (ax::IDENTIFIER, None),
            ("AXSomethingElse", Some(Value::Bool(true))),
        ]);
        assert_eq!(r.role().name(), "AXButton");
        assert_eq!(r.name(), "Save");
        assert_eq!(r.enabled, Some(false));
        assert_eq!(r.bounds(), Some((10, 20, 30, 13)));
        let s = r.states();
        assert!(s.is(ElementState::Disabled));
        assert!(!s.has(State::Editable));
        assert_eq!(raw("AXNoSuchRole").role().name(), "AXUnknown");
    }

    #[test]
    fn check_boxes_are_checked_by_their_value_and_fields_hold_text() {
        let mut c = raw("AXCheckBox");
        c.value = Some(Value::Number(1.0));
        assert!(c.states().is(ElementState::Checked));
        assert_eq!(c.content(), (None, None), "on/off is a state");
        c.value = Some(Value::Number(2.0));
        assert!(
            c.states().is(ElementState::Unchecked),
            "mixed is not checked"
        );
        let mut t = raw("AXButton");
        t.subrole = Some("AXToggle".into());
        t.value = Some(Value::Number(1.0));
        assert!(t.states().is(ElementState::Checked));

        let mut f = raw("AXTextField");
        f.value = Some(Value::Text("typed".into()));
        assert_eq!(f.content(), (Some("typed".into()), None));
        assert!(f.states().has(State::Editable));
        assert_eq!(f.name(), "", "a field's text is not its name");
        f.subrole = Some("AXSecureTextField".into());
        assert_eq!(f.content(), (None, None), "a password is never read");

        let mut s = raw("AXSlider");
        s.value = Some(Value::Number(42.0));
        assert_eq!(s.content(), (None, Some(42.0)));
    }

    #[test]
    fn expansion_focus_selection_and_visibility() {
        let mut r = raw("AXRow");
        r.expanded = Some(false);
        r.selected = Some(true);
        r.focused = Some(true);
        let s = r.states();
        assert!(s.is(ElementState::Collapsed) && !s.is(ElementState::Expanded));
        assert!(s.is(ElementState::Selected) && s.is(ElementState::Focused));
        assert!(s.is(ElementState::Visible), "no size read: not hidden");
        r.size = Some((0.0, 0.0));
        assert!(!r.states().is(ElementState::Visible));
        assert_eq!(r.bounds(), None);
        assert!(r.states().native.contains(&"collapsed"));
    }
}
