//! Pointer steps: `click`, `doubleClick`, `check`, `uncheck`, `hover`,
//! `wheel` and `dragTo` (HTML5 drag and drop replayed through Chromium's
//! drag interception, or a plain pointer drag).

use super::expect::interact;
use crate::actionability::actionable;
use crate::cdp::commands::{
    DispatchDragEvent, DispatchMouseEvent, DragEventType, Evaluate, MouseButton, MouseEventType,
    SetInterceptDrags,
};
use crate::cdp::events::DragIntercepted;
use crate::cdp::Event;
use crate::codes::WebCode;
use crate::page::{ActKind, ClickPoint, DomOp, ElementState, Page, Pointed, Read};
use qa_core::flow::{DragTo, Hover, Locator, Pointer, Position, Wheel};
use qa_core::{Deadline, DriverError, StepOutcome};
use serde_json::Value;

/// Intermediate pointer positions of a drag.
const DRAG_STEPS: u32 = 5;

/// The four pointer actions on one element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PointerAction {
    /// One click.
    Click,
    /// Two clicks.
    DoubleClick,
    /// Click unless already checked, then it must be checked.
    Check,
    /// Click unless already unchecked, then it must be unchecked.
    Uncheck,
}

/// `click`, `doubleClick`, `check`, `uncheck`.
pub(super) async fn pointer(
    page: &Page,
    step: &qa_core::Step,
    p: &Pointer,
    how: PointerAction,
    seq0: u64,
    deadline: Deadline,
) -> Result<StepOutcome, DriverError> {
    let (kind, want, clicks) = match how {
        PointerAction::Click => (ActKind::Click, None, 1),
        PointerAction::DoubleClick => (ActKind::Dblclick, None, 2),
        PointerAction::Check => (ActKind::Check { want: true }, Some(true), 1),
        PointerAction::Uncheck => (ActKind::Check { want: false }, Some(false), 1),
    };
    let at = match actionable(page, &p.locator, step.action_name(), kind, deadline).await? {
        Pointed::Noop { .. } => {
            return Ok(StepOutcome {
                detail: Some("already in the requested state".into()),
                ..Default::default()
            })
        }
        Pointed::At(at) => at,
    };
    interact(
        page,
        p.expect_response.as_ref(),
        p.expect_dialog.as_ref(),
        seq0,
        deadline,
        || async move { page.click_at(at.x, at.y, clicks).await },
    )
    .await?;
    if let Some(want) = want {
        let st: ElementState = page
            .read(&DomOp::State(&p.locator, Read::Nothing), deadline)
            .await?;
        if st.one.and_then(|o| o.checked) != Some(want) {
            return Err(DriverError::new(
                WebCode::CheckStateUnchanged,
                format!(
                    "{}: {} did not become {}",
                    step.action_name(),
                    p.locator.describe(),
                    if want { "checked" } else { "unchecked" }
                ),
            ));
        }
    }
    Ok(StepOutcome::default())
}

/// One click on the element `locator` resolves to (no expectations, no
/// settle): what opens a popup or starts a download.
pub(super) async fn click_once(
    page: &Page,
    locator: &Locator,
    action: &str,
    deadline: Deadline,
) -> Result<(), DriverError> {
    let at: ClickPoint = actionable(page, locator, action, ActKind::Click, deadline).await?;
    page.click_at(at.x, at.y, 1).await
}

/// `hover`.
pub(super) async fn hover(
    page: &Page,
    h: &Hover,
    seq0: u64,
    deadline: Deadline,
) -> Result<StepOutcome, DriverError> {
    let at: ClickPoint = actionable(page, &h.locator, "hover", ActKind::Hover, deadline).await?;
    page.input(&DispatchMouseEvent::at(MouseEventType::Moved, at.x, at.y))
        .await?;
    page.settle(seq0, deadline).await?;
    Ok(StepOutcome::default())
}

/// `wheel`: over the element, or near the viewport's top-left corner.
pub(super) async fn wheel(
    page: &Page,
    w: &Wheel,
    seq0: u64,
    deadline: Deadline,
) -> Result<StepOutcome, DriverError> {
    let (x, y) = match &w.locator {
        Some(l) => {
            let at: ClickPoint = actionable(page, l, "wheel", ActKind::Wheel, deadline).await?;
            (at.x, at.y)
        }
        None => (10.0, 10.0),
    };
    page.input(&DispatchMouseEvent {
        delta_x: Some(w.delta_x.unwrap_or(0.0)),
        delta_y: Some(w.delta_y.unwrap_or(0.0)),
        ..DispatchMouseEvent::at(MouseEventType::Wheel, x, y)
    })
    .await?;
    page.settle(seq0, deadline).await?;
    Ok(StepOutcome::default())
}

/// A mouse event of a drag (`buttons`: 1 while the left button is down).
async fn mouse(
    page: &Page,
    kind: MouseEventType,
    x: f64,
    y: f64,
    buttons: u8,
) -> Result<(), DriverError> {
    let button = if kind == MouseEventType::Moved && buttons == 0 {
        MouseButton::None
    } else {
        MouseButton::Left
    };
    page.input(&DispatchMouseEvent {
        button: Some(button),
        buttons: Some(buttons),
        click_count: (kind != MouseEventType::Moved).then_some(1),
        ..DispatchMouseEvent::at(kind, x, y)
    })
    .await
}

/// Where a drag grabs or drops: a position relative to the element's
/// top-left corner, or its center.
fn point(at: &ClickPoint, pos: Option<&Position>) -> (f64, f64) {
    match pos {
        Some(p) => (at.left + p.x, at.top + p.y),
        None => (at.x, at.y),
    }
}

const ARM_DRAG: &str = "(() => { const s = { started: false, ev: null }; \
  const f = (e) => { s.started = true; s.ev = e; }; addEventListener('dragstart', f, true); \
  window.__uiQaDrag = { s, f }; })()";
const CHECK_DRAG: &str = "(() => { const d = window.__uiQaDrag; if (!d) return false; \
  removeEventListener('dragstart', d.f, true); delete window.__uiQaDrag; \
  return d.s.started && !(d.s.ev && d.s.ev.defaultPrevented); })()";

/// `dragTo`.
pub(super) async fn drag_to(
    page: &Page,
    d: &DragTo,
    seq0: u64,
    deadline: Deadline,
) -> Result<StepOutcome, DriverError> {
    let hover = || ActKind::Hover;
    // Target first, then source, then target again: both end up in view
    // whenever they fit, with current coordinates.
    actionable::<ClickPoint>(page, &d.drop_target, "dragTo", hover(), deadline).await?;
    let src: ClickPoint = actionable(page, &d.locator, "dragTo", hover(), deadline).await?;
    let dst: ClickPoint = actionable(page, &d.drop_target, "dragTo", hover(), deadline).await?;
    let (sx, sy) = point(&src, d.source_position.as_ref());
    let (tx, ty) = point(&dst, d.target_position.as_ref());
    let at = |i: u32| {
        let f = f64::from(i) / f64::from(DRAG_STEPS);
        (sx + (tx - sx) * f, sy + (ty - sy) * f)
    };
    let failed = |e: crate::cdp::CdpError| DriverError::new(WebCode::DragFailed, e.to_string());
    page.evaluate(Evaluate::expression(ARM_DRAG))
        .await
        .map_err(failed)?;
    mouse(page, MouseEventType::Moved, sx, sy, 0).await?;
    mouse(page, MouseEventType::Pressed, sx, sy, 1).await?;
    // An HTML5 drag is intercepted (its data comes back in
    // Input.dragIntercepted) and replayed with Input.dispatchDragEvent; a
    // pointer-driven drag just keeps receiving mouse events.
    let mut tap = page.sh.tap(&[Event::InputDragIntercepted]);
    page.send(&SetInterceptDrags { enabled: true })
        .await
        .map_err(failed)?;
    let first = at(1);
    let moved = mouse(page, MouseEventType::Moved, first.0, first.1, 1).await;
    let started = page
        .evaluate(Evaluate {
            return_by_value: Some(true),
            ..Evaluate::expression(CHECK_DRAG)
        })
        .await
        .map(|r| r.result.value == Some(Value::Bool(true)))
        .unwrap_or(false);
    let mut data = None;
    if moved.is_ok() && started {
        let wait = Deadline::after_ms(2000).min(deadline);
        while let Some(Some(ev)) = wait.run(tap.rx.recv()).await {
            if ev.session.as_deref() == Some(page.session.as_str()) {
                data = Some(ev.params::<DragIntercepted>().data);
                break;
            }
        }
    }
    let _ = page.send(&SetInterceptDrags { enabled: false }).await;
    drop(tap);
    if let Err(e) = moved {
        let _ = mouse(page, MouseEventType::Released, first.0, first.1, 0).await;
        return Err(e);
    }
    let kind = if let Some(data) = data {
        let drag = |kind: DragEventType, (x, y): (f64, f64)| DispatchDragEvent {
            kind,
            x,
            y,
            data: data.clone(),
            modifiers: 0,
        };
        page.input(&drag(DragEventType::DragEnter, first)).await?;
        for i in 2..=DRAG_STEPS {
            page.input(&drag(DragEventType::DragOver, at(i))).await?;
        }
        page.input(&drag(DragEventType::Drop, (tx, ty))).await?;
        "HTML5 drag and drop"
    } else {
        for i in 2..=DRAG_STEPS {
            let (x, y) = at(i);
            mouse(page, MouseEventType::Moved, x, y, 1).await?;
        }
        mouse(page, MouseEventType::Released, tx, ty, 0).await?;
        "pointer drag"
    };
    page.settle(seq0, deadline).await?;
    Ok(StepOutcome {
        detail: Some(kind.into()),
        ..Default::default()
    })
}
