//! What a surface shows, element by element: a typed, bounded observation
//! with a reference (`@e1`, `@e2`, …) for each element one can act on and
//! the flow locator that finds it. `ui-qa inspect` prints it; interactive
//! sessions build on it.

use crate::flow::Locator;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The most elements an observation lists.
pub const MAX_ELEMENTS: usize = 500;

/// A rectangle in CSS pixels (browser) or screen pixels (desktop). Whole
/// numbers are written without a fraction (`366`, not `366.0`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Bounds {
    /// Left.
    #[serde(serialize_with = "compact_number")]
    pub x: f64,
    /// Top.
    #[serde(serialize_with = "compact_number")]
    pub y: f64,
    /// Width.
    #[serde(serialize_with = "compact_number")]
    pub width: f64,
    /// Height.
    #[serde(serialize_with = "compact_number")]
    pub height: f64,
}

/// Whether a depth is the top level (left out of the JSON).
fn is_top(depth: &usize) -> bool {
    *depth == 0
}

/// `v` as an integer when it is a whole number that fits one.
fn compact_number<S: serde::Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        s.serialize_i64(*v as i64)
    } else {
        s.serialize_f64(*v)
    }
}

/// One element of an observation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObservedElement {
    /// `@eN` for an element one can act on; absent for context (headings,
    /// landmarks, alerts).
    #[serde(rename = "ref", skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// Depth in the observation's tree (0: top level; left out at 0).
    #[serde(default, skip_serializing_if = "is_top")]
    pub depth: usize,
    /// Role (ARIA role on the web).
    pub role: String,
    /// Accessible name (redacted like everything else).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Current value (inputs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// States such as `disabled`, `checked`, `focused`, `level=2`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub states: Vec<String>,
    /// Where it is, when it has a box.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bounds: Option<Bounds>,
    /// For a control without a name: the text of the list item, row or
    /// group around it (`buy milk` for an item's unnamed checkbox), so the
    /// controls of a list can be told apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// The flow locator that finds exactly this element (`testId`, else
    /// `role` + `name`, with `nth` only when nothing else tells it apart);
    /// checked by the driver to match exactly one element, absent when no
    /// such locator was found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locator: Option<Locator>,
}

/// What a terminal shows: the screen, its cursor and modes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScreenObservation {
    /// Columns.
    pub cols: usize,
    /// Rows.
    pub rows: usize,
    /// Each visible row, trailing blanks trimmed; a cell showing a secret
    /// is masked.
    pub lines: Vec<String>,
    /// Cursor row (0-based).
    pub cursor_row: usize,
    /// Cursor column (0-based).
    pub cursor_col: usize,
    /// Active modes (`alt-screen`, `bracketed-paste`, …).
    pub modes: Vec<String>,
}

/// What a surface shows: elements in document order (browser, desktop) or
/// a screen (terminal), bounded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Observation {
    /// The observation's id; refs belong to it.
    pub id: String,
    /// The page's URL (browser).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The page's or window's title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The elements.
    pub elements: Vec<ObservedElement>,
    /// Whether elements were left out: past [`MAX_ELEMENTS`], or past
    /// the part of a very big page's tree that was read.
    pub truncated: bool,
    /// A terminal's screen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen: Option<ScreenObservation>,
}

/// Which backend's locator vocabulary a suggestion uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocatorStyle {
    /// Browser: `testId`, `nth`, names matched as substrings.
    Web,
    /// Desktop: `automationId`, `occurrence`, names matched exactly.
    Desktop,
}

/// The locator for `elements[i]`: its test id (`automationId` on desktop)
/// when unique among them, else its role and name, with `nth`
/// (`occurrence` on desktop, 0-based) when several share both.
pub fn suggest_locator(
    test_ids: &[Option<String>],
    roles: &[(String, String)],
    i: usize,
) -> Locator {
    suggest_locator_for(LocatorStyle::Web, test_ids, roles, i)
}

/// [`suggest_locator`] in the vocabulary of `style`.
pub fn suggest_locator_for(
    style: LocatorStyle,
    test_ids: &[Option<String>],
    roles: &[(String, String)],
    i: usize,
) -> Locator {
    if let Some(t) = &test_ids[i] {
        if test_ids.iter().filter(|x| x.as_ref() == Some(t)).count() == 1 {
            return match style {
                LocatorStyle::Web => Locator {
                    test_id: Some(t.clone()),
                    ..Default::default()
                },
                LocatorStyle::Desktop => Locator {
                    automation_id: Some(t.clone()),
                    ..Default::default()
                },
            };
        }
    }
    let (role, name) = &roles[i];
    // What the locator will match: without a name, every element of the
    // role (named ones too), so `nth` counts among all of them.
    let same: Vec<usize> = roles
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            if name.is_empty() {
                &r.0 == role
            } else {
                *r == &roles[i]
            }
        })
        .map(|(j, _)| j)
        .collect();
    let pick = (same.len() > 1).then(|| same.iter().position(|j| *j == i).unwrap_or(0) as u32);
    if style == LocatorStyle::Desktop {
        // Desktop names compare exactly by default.
        return Locator {
            role: Some(role.clone()),
            name: (!name.is_empty()).then(|| name.clone()),
            occurrence: pick,
            ..Default::default()
        };
    }
    Locator {
        role: Some(role.clone()),
        name: (!name.is_empty()).then(|| name.clone()),
        // Names match as case-insensitive substrings unless `exact`: it is
        // set when another element's name of the same role contains this one.
        exact: (!name.is_empty()
            && roles.iter().any(|(r, n)| {
                r == role && n != name && n.to_lowercase().contains(&name.to_lowercase())
            }))
        .then_some(true),
        nth: pick,
        ..Default::default()
    }
}

/// The locator as flow JSON text (one line).
pub fn locator_text(l: &Locator) -> String {
    serde_json::to_string(l).unwrap_or_default()
}

#[cfg(test)]
mod tests {

    /// An unnamed element's locator has no name, so it matches every
    /// element of its role: its `nth` counts the named ones too (an item's
    /// checkbox after a "toggle all" checkbox is not `nth: 0`).
    #[test]
    fn an_unnamed_elements_nth_counts_every_element_of_its_role() {
        let roles: Vec<(String, String)> = [
            ("checkbox", "Mark all as complete"),
            ("checkbox", ""),
            ("button", ""),
            ("checkbox", ""),
        ]
        .iter()
        .map(|(r, n)| (r.to_string(), n.to_string()))
        .collect();
        let ids = vec![None; roles.len()];
        let l = suggest_locator(&ids, &roles, 1);
        assert_eq!((l.name.as_deref(), l.nth), (None, Some(1)));
        assert_eq!(suggest_locator(&ids, &roles, 3).nth, Some(2));
        assert_eq!(suggest_locator(&ids, &roles, 2).nth, None);
        let named = suggest_locator(&ids, &roles, 0);
        assert_eq!(
            (named.name.as_deref(), named.nth),
            (Some("Mark all as complete"), None)
        );
    }

    /// An observation survives its JSON (redaction goes through it, and
    /// withholds what does not come back).
    #[test]
    fn an_observation_round_trips_through_json() {
        let o = Observation {
            id: "o1".into(),
            url: Some("http://127.0.0.1:8080/".into()),
            title: Some("Todos".into()),
            elements: vec![
                ObservedElement {
                    reference: Some("@e1".into()),
                    depth: 0,
                    role: "button".into(),
                    name: String::new(),
                    value: None,
                    states: vec![],
                    bounds: None,
                    context: Some("buy milk".into()),
                    locator: Some(Locator::role_only("button")),
                },
                ObservedElement {
                    reference: None,
                    depth: 1,
                    role: "heading".into(),
                    name: "Title".into(),
                    value: Some("v".into()),
                    states: vec!["level=1".into()],
                    bounds: None,
                    context: None,
                    locator: None,
                },
            ],
            truncated: false,
            screen: None,
        };
        let v = serde_json::to_value(&o).unwrap();
        let back: Observation = serde_json::from_value(v).unwrap();
        assert_eq!(back, o);
    }

    use super::*;

    #[test]
    fn test_ids_win_then_role_and_name_then_nth() {
        let ids = vec![
            Some("save".to_string()),
            None,
            None,
            Some("x".into()),
            Some("x".into()),
        ];
        let roles: Vec<(String, String)> = [
            ("button", "Save"),
            ("button", "Cancel"),
            ("button", "Cancel"),
            ("link", "Help"),
            ("link", "Help me"),
        ]
        .iter()
        .map(|(r, n)| (r.to_string(), n.to_string()))
        .collect();
        assert_eq!(
            suggest_locator(&ids, &roles, 0).test_id.as_deref(),
            Some("save")
        );
        let c = suggest_locator(&ids, &roles, 2);
        assert_eq!(
            (c.role.as_deref(), c.name.as_deref(), c.nth),
            (Some("button"), Some("Cancel"), Some(1))
        );
        // "Help" is a substring of "Help me": exact keeps it to one match.
        let h = suggest_locator(&ids, &roles, 3);
        assert_eq!((h.name.as_deref(), h.exact), (Some("Help"), Some(true)));
        assert_eq!(
            locator_text(&suggest_locator(&ids, &roles, 1)),
            r#"{"role":"button","name":"Cancel","nth":0}"#
        );
    }
}
