//! Element resolution and the accessibility-first actions and readings:
//! default action, set value (re-read to confirm), focus, text and state.

use super::bus::{accessible, proxy};
use super::objref::ObjRef;
use super::tree::{fetch, format_value, read_text, read_value, views, walk, Fields, Node};
use crate::codes::DesktopCode;
use crate::locate::{candidate, closest, describe, describe_candidates, find, needs_ids, NodeView};
use atspi::proxy::action::ActionProxy;
use atspi::proxy::component::ComponentProxy;
use atspi::proxy::editable_text::EditableTextProxy;
use atspi::proxy::selection::SelectionProxy;
use atspi::proxy::value::ValueProxy;
use atspi::{Interface, State, StateSet};
use qa_core::flow::{ElementState, Locator};
use qa_core::mismatch::MAX_CANDIDATES;
use qa_core::{Cadence, Deadline, DriverError, Mismatch};

/// Node cap when resolving locators.
pub(crate) const LOCATE_CAP: usize = 10_000;

/// How resolving a locator ended.
pub(crate) enum Resolved {
    /// Exactly one element.
    One(Box<Node>),
    /// Nothing matches (yet): what was expected, with the closest elements.
    None(Box<Mismatch>),
}

/// The "no element matches" mismatch of `loc` over `nodes`, with the
/// closest elements as candidates.
fn not_found(vs: &[NodeView], loc: &Locator) -> Box<Mismatch> {
    let (idx, total) = closest(vs, loc, MAX_CANDIDATES);
    Box::new(
        Mismatch::new(
            format!("one element matching {}", loc.describe()),
            "no element matches",
        )
        .at(loc.describe())
        .with_candidates(
            idx.iter().map(|&i| candidate(&vs[i])).collect(),
            total as u64,
        ),
    )
}

/// Resolves a locator once under `root`. Hidden matches are ignored when at
/// least one match is showing; more than one remaining match without
/// `occurrence` is an ambiguity error naming the candidates.
pub(crate) async fn resolve_once(
    conn: &zbus::Connection,
    root: &ObjRef,
    loc: &Locator,
) -> Result<Resolved, DriverError> {
    let f = Fields {
        id: needs_ids(loc),
        ..Fields::default()
    };
    let (nodes, _) = walk(conn, root, f, LOCATE_CAP).await;
    let vs = views(&nodes);
    let mut hits = find(&vs, loc);
    if hits.is_empty() {
        return Ok(Resolved::None(not_found(&vs, loc)));
    }
    if hits.len() > 1 {
        let nodes_ref = &nodes;
        let states = futures_util::future::join_all(hits.iter().map(|&i| async move {
            let p = accessible(conn, &nodes_ref[i].obj).await.ok()?;
            p.get_state().await.ok()
        }))
        .await;
        let showing: Vec<usize> = hits
            .iter()
            .zip(states)
            .filter(|(_, s)| s.is_some_and(|s| s.contains(State::Showing)))
            .map(|(i, _)| *i)
            .collect();
        if !showing.is_empty() {
            hits = showing;
        }
    }
    let pick = match loc.occurrence {
        Some(k) => match hits.get(k as usize) {
            Some(&i) => i,
            None => return Ok(Resolved::None(not_found(&vs, loc))),
        },
        None if hits.len() == 1 => hits[0],
        None => {
            let m = Mismatch::new(
                format!("one element matching {}", loc.describe()),
                format!("{} elements match", hits.len()),
            )
            .at(loc.describe())
            .with_candidates(
                hits.iter().map(|&i| candidate(&vs[i])).collect(),
                hits.len() as u64,
            );
            return Err(DriverError::new(
                DesktopCode::LocatorAmbiguous,
                format!(
                    "{} matches {} elements: {}",
                    loc.describe(),
                    hits.len(),
                    describe_candidates(&vs, &hits, 8)
                ),
            )
            .with_remediation(
                "add a role, an exact name, an automationId, a path, or an explicit occurrence",
            )
            .with_mismatch(m));
        }
    };
    let full = fetch(conn, nodes[pick].obj.clone(), Fields::ALL).await;
    Ok(match full {
        Some(mut n) => {
            n.view = nodes[pick].view.clone();
            Resolved::One(Box::new(n))
        }
        None => Resolved::None(not_found(&vs, loc)),
    })
}

/// Resolves a locator for an action: waits on the shared cadence until it
/// matches or the deadline passes.
pub(crate) async fn resolve_wait(
    conn: &zbus::Connection,
    root: &ObjRef,
    loc: &Locator,
    deadline: Deadline,
) -> Result<Node, DriverError> {
    let mut cadence = Cadence::new();
    let mut last = None;
    loop {
        let r = deadline.run(resolve_once(conn, root, loc)).await;
        if let Some(r) = r {
            match r? {
                Resolved::One(n) => return Ok(*n),
                Resolved::None(m) => last = Some(m),
            }
        }
        if !cadence.wait(deadline).await {
            let e = DriverError::new(
                DesktopCode::LocatorNotFound,
                format!(
                    "no element matches {} before the step deadline",
                    loc.describe()
                ),
            )
            .with_remediation(
                "check the name and role in an accessibility snapshot (snapshotAccessibility)",
            );
            return Err(match last {
                Some(m) => e.with_mismatch(*m),
                None => e,
            });
        }
    }
}

fn ifaces(n: &Node) -> atspi::InterfaceSet {
    n.interfaces.unwrap_or_else(atspi::InterfaceSet::empty)
}

fn call_err(code: DesktopCode, n: &Node, e: impl std::fmt::Display) -> DriverError {
    DriverError::new(code, format!("{}: {e}", describe(&n.view)))
}

/// How `activate` went through the accessibility layer.
pub(crate) enum Activated {
    /// The default action ran (its name).
    Action(String),
    /// The element has no Action interface or no actions: the caller clicks
    /// it with the pointer instead.
    NoAction,
}

/// Invokes the element's default action (Action index 0).
pub(crate) async fn activate(conn: &zbus::Connection, n: &Node) -> Result<Activated, DriverError> {
    if !ifaces(n).contains(Interface::Action) {
        return Ok(Activated::NoAction);
    }
    let a: ActionProxy = proxy(conn, &n.obj)
        .await
        .map_err(|e| call_err(DesktopCode::ActivateFailed, n, e))?;
    if a.n_actions().await.is_ok_and(|c| c < 1) {
        return Ok(Activated::NoAction);
    }
    let name = a.get_name(0).await.unwrap_or_default();
    let ok = a
        .do_action(0)
        .await
        .map_err(|e| call_err(DesktopCode::ActivateFailed, n, e))?;
    if !ok {
        return Err(DriverError::new(
            DesktopCode::ActivateRefused,
            format!("{} refused its default action {name:?}", describe(&n.view)),
        ));
    }
    Ok(Activated::Action(format!("action {name:?}")))
}

/// Gives the element keyboard focus (Component.GrabFocus).
pub(crate) async fn focus(conn: &zbus::Connection, n: &Node) -> Result<(), DriverError> {
    if !ifaces(n).contains(Interface::Component) {
        return Err(DriverError::new(
            DesktopCode::FocusUnsupported,
            format!(
                "{} cannot take focus (no Component interface)",
                describe(&n.view)
            ),
        ));
    }
    let c: ComponentProxy = proxy(conn, &n.obj)
        .await
        .map_err(|e| call_err(DesktopCode::FocusFailed, n, e))?;
    c.grab_focus()
        .await
        .map_err(|e| call_err(DesktopCode::FocusFailed, n, e))?;
    Ok(())
}

/// Selects `n` in its container through the container's Selection
/// interface, then re-reads to confirm. Returns the step detail.
pub(crate) async fn select(conn: &zbus::Connection, n: &Node) -> Result<String, DriverError> {
    let fail = |why: String| {
        DriverError::new(
            DesktopCode::SelectUnsupported,
            format!("{} cannot be selected: {why}", describe(&n.view)),
        )
        .with_remediation(
            "locate the row or item itself (its container must offer Selection), or click it",
        )
    };
    let a = accessible(conn, &n.obj)
        .await
        .map_err(|e| fail(e.to_string()))?;
    let index = a
        .get_index_in_parent()
        .await
        .map_err(|e| fail(e.to_string()))?;
    let parent = a.parent().await.map_err(|e| fail(e.to_string()))?;
    let parent = ObjRef::from_owned(&parent).ok_or_else(|| fail("it has no parent".into()))?;
    let sel: SelectionProxy = proxy(conn, &parent)
        .await
        .map_err(|e| fail(e.to_string()))?;
    let done = sel.select_child(index).await.map_err(|e| {
        fail(format!(
            "its container has no usable Selection interface ({e})"
        ))
    })?;
    let selected = sel.is_child_selected(index).await.unwrap_or(false);
    if !done || !selected {
        return Err(fail(format!(
            "the container reported {} and the item is {}selected",
            if done { "success" } else { "failure" },
            if selected { "" } else { "not " }
        )));
    }
    Ok(format!("selected item {index} of its container"))
}

/// Sets text (EditableText) or a number (Value), then re-reads to confirm.
pub(crate) async fn set_value(
    conn: &zbus::Connection,
    n: &Node,
    value: &str,
    deadline: Deadline,
) -> Result<String, DriverError> {
    let ifs = ifaces(n);
    let states = n.states.unwrap_or_else(StateSet::empty);
    let confirm = Deadline::after_ms(1000).min(deadline);
    let numeric = value.trim().parse::<f64>().ok();
    // A number for an element that has a value (a spin button): set the
    // value itself, which the toolkit commits; its text follows. Setting
    // only the text leaves a GTK 4 spin button's value where it was.
    let by_value = ifs.contains(Interface::Value) && numeric.is_some();
    if ifs.contains(Interface::EditableText) && !by_value {
        if !states.contains(State::Editable) {
            return Err(DriverError::new(
                DesktopCode::SetValueReadOnly,
                format!("{} is not editable", describe(&n.view)),
            ));
        }
        let e: EditableTextProxy = proxy(conn, &n.obj)
            .await
            .map_err(|e| call_err(DesktopCode::SetValueFailed, n, e))?;
        let ok = e
            .set_text_contents(value)
            .await
            .map_err(|e| call_err(DesktopCode::SetValueFailed, n, e))?;
        let mut cadence = Cadence::new();
        loop {
            if read_text(conn, &n.obj).await.as_deref() == Some(value) {
                return committed(conn, n, value).await;
            }
            if !cadence.wait(confirm).await {
                break;
            }
        }
        return Err(DriverError::new(
            DesktopCode::SetValueUnchanged,
            format!(
                "{}: SetTextContents reported {ok} but the text did not change to the requested value",
                describe(&n.view)
            ),
        ));
    }
    if ifs.contains(Interface::Value) {
        let v: f64 = value.trim().parse().map_err(|_| {
            DriverError::new(
                DesktopCode::SetValueNotANumber,
                format!(
                    "{} takes a number (Value interface); {value:?} is not one",
                    describe(&n.view)
                ),
            )
        })?;
        let p: ValueProxy = proxy(conn, &n.obj)
            .await
            .map_err(|e| call_err(DesktopCode::SetValueFailed, n, e))?;
        p.set_current_value(v)
            .await
            .map_err(|e| call_err(DesktopCode::SetValueFailed, n, e))?;
        let mut cadence = Cadence::new();
        loop {
            if read_value(conn, &n.obj)
                .await
                .is_some_and(|x| (x - v).abs() < 1e-9)
            {
                return Ok("Value.SetCurrentValue".into());
            }
            if !cadence.wait(confirm).await {
                break;
            }
        }
        return Err(DriverError::new(
            DesktopCode::SetValueUnchanged,
            format!(
                "{}: SetCurrentValue did not change the value to {v}",
                describe(&n.view)
            ),
        ));
    }
    Err(DriverError::new(
        DesktopCode::SetValueUnsupported,
        format!("{} has neither EditableText nor Value", describe(&n.view)),
    )
    .with_remediation("use inputText to type into it instead"))
}

/// After new text was confirmed: an element that also has a value (a spin
/// button given a month name) must have committed it — text that changed
/// while the value stayed is not a set value.
async fn committed(conn: &zbus::Connection, n: &Node, value: &str) -> Result<String, DriverError> {
    let done = || Ok("EditableText.SetTextContents".to_string());
    let (Some(before), true) = (n.value, ifaces(n).contains(Interface::Value)) else {
        return done();
    };
    if n.text.as_deref() == Some(value) {
        return done();
    }
    match read_value(conn, &n.obj).await {
        Some(after) if (after - before).abs() < 1e-9 => Err(DriverError::new(
            DesktopCode::SetValueUnchanged,
            format!(
                "{}: the text reads {value:?} but the value is still {}: the toolkit did not commit it",
                describe(&n.view),
                format_value(before)
            ),
        )
        .with_remediation("give the value as a number, or type it with inputText and press Enter")),
        _ => done(),
    }
}

/// The element's text: its Text content, else its value, else its name.
pub(crate) fn element_text(n: &Node) -> String {
    if let Some(t) = &n.text {
        return t.clone();
    }
    if let Some(v) = n.value {
        return format_value(v);
    }
    n.view.name.clone()
}

/// The element's value for `assertState value`: Value, else text content.
pub(crate) fn element_value(n: &Node) -> Option<String> {
    n.value.map(format_value).or_else(|| n.text.clone())
}

/// Whether an element is in a state.
pub(crate) fn has_state(s: StateSet, want: ElementState) -> bool {
    let enabled = s.contains(State::Enabled) || s.contains(State::Sensitive);
    let checked = s.contains(State::Checked) || s.contains(State::Pressed);
    match want {
        ElementState::Enabled => enabled,
        ElementState::Disabled => !enabled,
        ElementState::Checked => checked,
        ElementState::Unchecked => !checked,
        ElementState::Focused => s.contains(State::Focused),
        ElementState::Selected => s.contains(State::Selected),
        ElementState::Visible => s.contains(State::Showing) && s.contains(State::Visible),
        ElementState::Expanded => s.contains(State::Expanded),
        ElementState::Collapsed => {
            s.contains(State::Collapsed)
                || (s.contains(State::Expandable) && !s.contains(State::Expanded))
        }
    }
}
