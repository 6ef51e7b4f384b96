//! The application's elements for `ui-qa inspect --app`: its accessibility
//! tree reduced to what one acts on (buttons, fields, check boxes, …, each
//! with a reference) and what orients (windows, dialogs, labels, menus), in
//! tree order, each with its states, its box and a flow locator the driver
//! resolves to exactly that element.

use super::actions::{resolve_once, Resolved};
use super::app::App;
use super::artifacts::SNAPSHOT_CAP;
use super::tree::{format_value, state_names, walk, Fields, Node};
use crate::codes::DesktopCode;
use qa_core::observe::{
    suggest_locator_for, Bounds, LocatorStyle, Observation, ObservedElement, MAX_ELEMENTS,
};
use qa_core::{Deadline, DriverError};

/// AT-SPI roles one acts on: they get a reference.
const ACTIONABLE: &[&str] = &[
    "push button",
    "toggle button",
    "check box",
    "radio button",
    "text",
    "entry",
    "password text",
    "spin button",
    "combo box",
    "menu item",
    "check menu item",
    "radio menu item",
    "page tab",
    "slider",
    "link",
    "list item",
    "tree item",
    "switch",
];

/// AT-SPI roles shown for orientation, without a reference.
const CONTEXT: &[&str] = &[
    "frame",
    "window",
    "dialog",
    "alert",
    "label",
    "heading",
    "menu bar",
    "menu",
    "tool bar",
    "page tab list",
    "status bar",
];

/// Lists the application's elements.
pub(crate) async fn elements(app: &App, deadline: Deadline) -> Result<Observation, DriverError> {
    let Some((nodes, truncated_walk)) = deadline
        .run(walk(app.conn(), &app.root, Fields::ALL, SNAPSHOT_CAP))
        .await
    else {
        return Err(DriverError::new(
            DesktopCode::SnapshotTimeout,
            "the accessibility tree could not be read in time",
        ));
    };
    // Tree order (the walk lists nodes breadth-first).
    let mut order: Vec<(usize, usize, bool)> = Vec::new();
    let mut truncated = truncated_walk;
    if !nodes.is_empty() {
        visit(&nodes, 0, 0, &mut order, &mut truncated);
    }
    let ids: Vec<Option<String>> = order
        .iter()
        .map(|(i, _, _)| nodes[*i].view.id.clone().filter(|s| !s.is_empty()))
        .collect();
    let roles: Vec<(String, String)> = order
        .iter()
        .map(|(i, _, _)| (nodes[*i].view.role.clone(), nodes[*i].view.name.clone()))
        .collect();
    let mut out = Vec::with_capacity(order.len());
    let mut next_ref = 1;
    for (k, (i, depth, actionable)) in order.iter().enumerate() {
        let n: &Node = &nodes[*i];
        let suggested = suggest_locator_for(LocatorStyle::Desktop, &ids, &roles, k);
        let locator = if deadline.expired() {
            None
        } else {
            match resolve_once(app.conn(), &app.root, &suggested).await {
                Ok(Resolved::One(r)) if r.obj == n.obj => Some(suggested),
                _ => None,
            }
        };
        let reference = actionable.then(|| {
            let s = format!("@e{next_ref}");
            next_ref += 1;
            s
        });
        out.push(ObservedElement {
            reference,
            depth: *depth,
            role: n.view.role.clone(),
            name: n.view.name.clone(),
            value: n
                .value
                .map(format_value)
                .or_else(|| n.text.clone().filter(|t| !t.is_empty() && *actionable)),
            states: n
                .states
                .map(|s| {
                    state_names(s)
                        .into_iter()
                        .filter(|s| {
                            matches!(
                                *s,
                                "checked" | "focused" | "selected" | "expanded" | "editable"
                            )
                        })
                        .map(str::to_string)
                        .chain(
                            (!s.contains(atspi::State::Sensitive)).then(|| "disabled".to_string()),
                        )
                        .collect()
                })
                .unwrap_or_default(),
            bounds: n.bounds.map(|(x, y, w, h)| Bounds {
                x: f64::from(x),
                y: f64::from(y),
                width: f64::from(w),
                height: f64::from(h),
            }),
            locator,
        });
    }
    Ok(Observation {
        id: String::new(),
        elements: out,
        truncated,
        screen: None,
    })
}

fn visit(
    nodes: &[Node],
    i: usize,
    depth: usize,
    out: &mut Vec<(usize, usize, bool)>,
    truncated: &mut bool,
) {
    let role = nodes[i].view.role.as_str();
    let actionable = ACTIONABLE.contains(&role);
    let shown = actionable || CONTEXT.contains(&role);
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
