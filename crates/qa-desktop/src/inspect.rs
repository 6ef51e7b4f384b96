//! The application's elements for `ui-qa inspect --app` and MCP
//! observations: its tree reduced to what one acts on (buttons, fields,
//! check boxes, …, each with a reference) and what orients (windows,
//! dialogs, labels, menus), in tree order, each with its states, its box
//! and a flow locator checked to resolve to exactly that element.
//! References are numbered buttons first (see [`action_rank`]), so `@e1`
//! is the first button of the window, not whatever control the toolkit
//! registered first.

use crate::codes::DesktopCode;
use crate::node::{format_value, Fields, Node, State};
use crate::platform::DesktopPlatform;
use crate::resolve::{resolve_once, Resolved};
use crate::roles::{NativeRole, Role};
use qa_core::observe::{
    suggest_locator_for, Bounds, LocatorStyle, Observation, ObservedElement, MAX_ELEMENTS,
};
use qa_core::{Deadline, DriverError};

/// Node cap of accessibility snapshots and inspection.
pub const SNAPSHOT_CAP: usize = 2_000;

/// The portable states an observation lists, in this order, by name.
const LISTED: &[(State, &str)] = &[
    (State::Checked, "checked"),
    (State::Editable, "editable"),
    (State::Expanded, "expanded"),
    (State::Focused, "focused"),
    (State::Selected, "selected"),
];

/// What an observation says about one node's states.
fn listed_states<E>(n: &Node<E>) -> Vec<String> {
    let Some(s) = &n.states else {
        return Vec::new();
    };
    LISTED
        .iter()
        .filter(|(st, _)| s.has(*st))
        .map(|(_, name)| name.to_string())
        .chain((!s.has(State::Enabled)).then(|| "disabled".to_string()))
        .collect()
}

/// Where an actionable role comes in the numbering of references:
/// buttons first, then what toggles (check boxes, radio buttons,
/// switches), what takes a value (fields, spin buttons, combo boxes,
/// sliders), what navigates (menu items, tabs, links), and the items of
/// lists, trees and tables last.
pub fn action_rank(role: NativeRole) -> u8 {
    const RANKS: &[&[Role]] = &[
        &[Role::Button, Role::Toggle],
        &[Role::Checkbox, Role::Radio, Role::Switch],
        &[
            Role::Textbox,
            Role::SpinButton,
            Role::Combobox,
            Role::Slider,
        ],
        &[Role::MenuItem, Role::Tab, Role::Link],
        &[Role::ListItem, Role::TreeItem, Role::Cell],
    ];
    RANKS
        .iter()
        .position(|roles| roles.iter().any(|r| role.is(*r)))
        .unwrap_or(RANKS.len()) as u8
}

/// The reference number (from 1) of each shown node that is actionable:
/// ordered by [`action_rank`], then by tree order.
fn reference_numbers<E>(nodes: &[Node<E>], order: &[(usize, usize, bool)]) -> Vec<Option<usize>> {
    let mut acting: Vec<usize> = (0..order.len()).filter(|k| order[*k].2).collect();
    acting.sort_by_key(|k| (action_rank(nodes[order[*k].0].view.role), *k));
    let mut numbers = vec![None; order.len()];
    for (n, k) in acting.into_iter().enumerate() {
        numbers[k] = Some(n + 1);
    }
    numbers
}

/// The shown nodes in tree order: `(index, depth, actionable)`; and whether
/// [`MAX_ELEMENTS`] cut it short.
pub fn shown<E>(nodes: &[Node<E>]) -> (Vec<(usize, usize, bool)>, bool) {
    let mut out = Vec::new();
    let mut truncated = false;
    if !nodes.is_empty() {
        visit(nodes, 0, 0, &mut out, &mut truncated);
    }
    (out, truncated)
}

fn visit<E>(
    nodes: &[Node<E>],
    i: usize,
    depth: usize,
    out: &mut Vec<(usize, usize, bool)>,
    truncated: &mut bool,
) {
    let role = nodes[i].view.role;
    let names = role.table();
    let actionable = names.actionable.contains(&role.name());
    let shown = actionable || names.orienting.contains(&role.name());
    let mut child_depth = depth;
    if shown {
        if out.len() >= MAX_ELEMENTS {
            *truncated = true;
            return;
        }
        out.push((i, depth, actionable));
        child_depth += 1;
    }
    for &c in &nodes[i].child_idx {
        visit(nodes, c, child_depth, out, truncated);
    }
}

/// Lists the application's elements within `deadline`; a suggested locator
/// is kept only when it resolves to exactly its element (none is checked
/// once the deadline has passed).
pub async fn elements<P: DesktopPlatform + ?Sized>(
    p: &P,
    deadline: Deadline,
) -> Result<Observation, DriverError> {
    let Some((nodes, truncated_walk)) = deadline
        .run(p.walk(&p.root(), Fields::ALL, SNAPSHOT_CAP))
        .await
    else {
        return Err(DriverError::new(
            DesktopCode::SnapshotTimeout,
            "the accessibility tree could not be read in time",
        ));
    };
    let (order, cut) = shown(&nodes);
    let ids: Vec<Option<String>> = order
        .iter()
        .map(|(i, _, _)| nodes[*i].view.id.clone().filter(|s| !s.is_empty()))
        .collect();
    let roles: Vec<(String, String)> = order
        .iter()
        .map(|(i, _, _)| {
            (
                nodes[*i].view.role.name().to_string(),
                nodes[*i].view.name.clone(),
            )
        })
        .collect();
    let numbers = reference_numbers(&nodes, &order);
    let mut out = Vec::with_capacity(order.len());
    for (k, (i, depth, actionable)) in order.iter().enumerate() {
        let n = &nodes[*i];
        let suggested = suggest_locator_for(LocatorStyle::Desktop, &ids, &roles, k);
        let locator = if deadline.expired() {
            None
        } else {
            match resolve_once(p, &suggested).await {
                Ok(Resolved::One(r)) if r.element == n.element => Some(suggested),
                _ => None,
            }
        };
        let reference = numbers[k].map(|n| format!("@e{n}"));
        out.push(ObservedElement {
            reference,
            depth: *depth,
            role: n.view.role.name().to_string(),
            name: n.view.name.clone(),
            value: n
                .value
                .map(format_value)
                .or_else(|| n.text.clone().filter(|t| !t.is_empty() && *actionable)),
            states: listed_states(n),
            bounds: n.bounds.map(|(x, y, w, h)| Bounds {
                x: f64::from(x),
                y: f64::from(y),
                width: f64::from(w),
                height: f64::from(h),
            }),
            context: None,
            locator,
        });
    }
    Ok(Observation {
        id: String::new(),
        url: None,
        title: None,
        elements: out,
        truncated: truncated_walk || cut,
        screen: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::tests::node;
    use crate::node::States;

    #[test]
    fn controls_get_references_and_containers_fold_away() {
        let mut nodes = vec![
            node("application", "app", None, &[]),
            node("frame", "Main", Some(0), &[0]),
            node("panel", "", Some(1), &[0, 0]),
            node("push button", "OK", Some(2), &[0, 0, 0]),
            node("label", "Name", Some(2), &[0, 0, 1]),
        ];
        nodes[0].child_idx = vec![1];
        nodes[1].child_idx = vec![2];
        nodes[2].child_idx = vec![3, 4];
        let (order, cut) = shown(&nodes);
        assert!(!cut);
        // The frame orients; the panel folds away; the button acts.
        assert_eq!(order, [(1, 0, false), (3, 1, true), (4, 1, false)]);
        nodes[3].states = Some(States::new([State::Focused], vec!["focused"]));
        assert_eq!(listed_states(&nodes[3]), ["focused", "disabled"]);
    }

    #[test]
    fn references_are_numbered_buttons_first_then_in_tree_order() {
        let mut nodes = vec![
            node("frame", "Main", None, &[]),
            node("list item", "Apple", Some(0), &[0]),
            node("text", "Name", Some(0), &[1]),
            node("check box", "Subscribe", Some(0), &[2]),
            node("push button", "Copy", Some(0), &[3]),
            node("label", "Hint", Some(0), &[4]),
            node("toggle button", "Bold", Some(0), &[5]),
            node("menu item", "Open", Some(0), &[6]),
        ];
        nodes[0].child_idx = (1..8).collect();
        let (order, _) = shown(&nodes);
        let numbers = reference_numbers(&nodes, &order);
        let by_name: Vec<(&str, Option<usize>)> = order
            .iter()
            .zip(&numbers)
            .map(|((i, _, _), n)| (nodes[*i].view.name.as_str(), *n))
            .collect();
        assert_eq!(
            by_name,
            [
                ("Main", None),
                ("Apple", Some(6)),
                ("Name", Some(4)),
                ("Subscribe", Some(3)),
                ("Copy", Some(1)),
                ("Hint", None),
                ("Bold", Some(2)),
                ("Open", Some(5)),
            ]
        );
    }
}
