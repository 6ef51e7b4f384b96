//! The accessibility-first actions: default action, set value (re-read to
//! confirm), select, focus.

use super::bus::{accessible, proxy};
use super::objref::ObjRef;
use super::tree::{read_text, read_value, Node};
use atspi::proxy::action::ActionProxy;
use atspi::proxy::component::ComponentProxy;
use atspi::proxy::editable_text::EditableTextProxy;
use atspi::proxy::selection::SelectionProxy;
use atspi::proxy::value::ValueProxy;
use atspi::Interface;
use qa_core::{Cadence, Deadline, DriverError};
use qa_desktop::locate::describe;
use qa_desktop::node::format_value;
use qa_desktop::{Activated, DesktopCode, State};

fn ifaces(n: &Node) -> atspi::InterfaceSet {
    n.element.interfaces()
}

fn call_err(code: DesktopCode, n: &Node, e: impl std::fmt::Display) -> DriverError {
    DriverError::new(code, format!("{}: {e}", describe(&n.view)))
}

/// Invokes the element's default action (Action index 0).
pub(crate) async fn activate(conn: &zbus::Connection, n: &Node) -> Result<Activated, DriverError> {
    if !ifaces(n).contains(Interface::Action) {
        return Ok(Activated::NoAction);
    }
    let a: ActionProxy = proxy(conn, &n.element.obj)
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
    let c: ComponentProxy = proxy(conn, &n.element.obj)
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
    let a = accessible(conn, &n.element.obj)
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
    let confirm = Deadline::after_ms(1000).min(deadline);
    let numeric = value.trim().parse::<f64>().ok();
    // A number for an element that has a value (a spin button): set the
    // value itself, which the toolkit commits; its text follows. Setting
    // only the text leaves a GTK 4 spin button's value where it was.
    let by_value = ifs.contains(Interface::Value) && numeric.is_some();
    if ifs.contains(Interface::EditableText) && !by_value {
        if !n.has(State::Editable) {
            return Err(DriverError::new(
                DesktopCode::SetValueReadOnly,
                format!("{} is not editable", describe(&n.view)),
            ));
        }
        let e: EditableTextProxy = proxy(conn, &n.element.obj)
            .await
            .map_err(|e| call_err(DesktopCode::SetValueFailed, n, e))?;
        let ok = e
            .set_text_contents(value)
            .await
            .map_err(|e| call_err(DesktopCode::SetValueFailed, n, e))?;
        let mut cadence = Cadence::new();
        loop {
            if read_text(conn, &n.element.obj).await.as_deref() == Some(value) {
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
        let p: ValueProxy = proxy(conn, &n.element.obj)
            .await
            .map_err(|e| call_err(DesktopCode::SetValueFailed, n, e))?;
        p.set_current_value(v)
            .await
            .map_err(|e| call_err(DesktopCode::SetValueFailed, n, e))?;
        let mut cadence = Cadence::new();
        loop {
            if read_value(conn, &n.element.obj)
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
    match read_value(conn, &n.element.obj).await {
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
