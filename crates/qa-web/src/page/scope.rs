//! Step targets: where a step runs. By default the main page; with
//! `"target": { "type": "popup", "name": … }` the page of a popup adopted by
//! an earlier `openPopup`; with `"target": { "type": "frame", "locator": … }`
//! the document of a same-origin `<iframe>` of the page.
//!
//! Every step first brings its page to the front unless it is known to be
//! there (a background page gets no animation frames, which the stability
//! check needs, and no screenshots): a popup for a popup step, the main page
//! otherwise — also after a click opened a window in front of it.
//! A popup is driven through its own flat session.
//! A frame is driven through the same page session, evaluating in the
//! frame's default execution context (tracked from
//! `Runtime.executionContextCreated`, so it follows the frame's
//! navigations); the helper's coordinates are translated by the frame's
//! content-box offset and hit-tested again in the page.

use super::dom::{DomOp, FrameBox, FrameReply, Nothing, Placed, Placement};
use super::{EvalError, Page};
use crate::cdp::commands::{DescribeNode, ReleaseObject};
use crate::codes::WebCode;
use crate::state::FrameRef;
use qa_core::flow::{Action, BrowserAction, Locator, StepTargetKind};
use qa_core::{Cadence, Deadline, DriverError, Step};

/// The outcome of entering a step's target.
pub(crate) enum Entered {
    /// The step can run on this page (popup page, or the page with a frame
    /// scope).
    Ready(Box<Page>),
    /// The frame is not there (yet); only when not waiting.
    NotYet(String),
}

/// The error of a step on a popup that has closed.
pub(crate) fn popup_closed(name: &str) -> DriverError {
    DriverError::new(
        WebCode::TargetPopupClosed,
        format!("the popup {name:?} has closed"),
    )
}

/// Whether a step error means the page it ran on went away.
pub(crate) fn target_gone(e: &DriverError) -> bool {
    e.code == WebCode::CdpTargetClosed.as_str() || e.code == WebCode::CdpTargetCrashed.as_str()
}

/// The page of the popup adopted under `name`.
pub(crate) fn popup_page(main: &Page, name: &str) -> Result<Page, DriverError> {
    let st = main.sh.st();
    match st.popups.get(name) {
        None => {
            let mut known: Vec<String> = st.popups.keys().map(|k| format!("{k:?}")).collect();
            known.sort();
            let known = if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            };
            Err(DriverError::new(
                WebCode::TargetUnknownPopup,
                format!("no popup named {name:?} was opened by an earlier openPopup step (known popups: {known})"),
            )
            .with_remediation("name the openPopup step and use that name in target.name"))
        }
        Some(p) if !st.ready.contains(&p.session) => Err(popup_closed(name)),
        Some(p) => Ok(Page {
            session: p.session.clone(),
            frame: None,
            ..main.clone()
        }),
    }
}

/// Resolves the step's target. With `wait`, a frame that is not there yet
/// is retried until `deadline`; without, [`Entered::NotYet`] says why.
pub(crate) async fn enter(
    main: &Page,
    step: &Step,
    wait: bool,
    deadline: Deadline,
) -> Result<Entered, DriverError> {
    let Some(t) = &step.target else {
        main.ensure_front().await?;
        return Ok(Entered::Ready(Box::new(main.clone())));
    };
    match t.kind {
        StepTargetKind::Popup => {
            let name = t.name.as_deref().unwrap_or("");
            let page = popup_page(main, name)?;
            page.ensure_front().await.map_err(|e| {
                if target_gone(&e) {
                    popup_closed(name)
                } else {
                    e
                }
            })?;
            Ok(Entered::Ready(Box::new(page)))
        }
        StepTargetKind::Frame => {
            if matches!(
                &step.action,
                Action::Browser(BrowserAction::Goto(_) | BrowserAction::Reload(_))
            ) {
                return Err(DriverError::new(
                    WebCode::TargetUnsupported,
                    format!("{} cannot target a frame: it navigates the page (click a link in the frame instead)", step.action_name()),
                ));
            }
            let Some(loc) = &t.locator else {
                return Err(DriverError::new(
                    WebCode::TargetFrameNotFound,
                    "a frame target needs the locator of its <iframe>",
                ));
            };
            main.ensure_front().await?;
            let mut cadence = Cadence::new();
            loop {
                match frame_once(main, loc, deadline).await? {
                    Ok(f) => {
                        return Ok(Entered::Ready(Box::new(Page {
                            frame: Some(f),
                            ..main.clone()
                        })))
                    }
                    Err(why) => {
                        if !wait {
                            return Ok(Entered::NotYet(format!(
                                "target frame {}: {why}",
                                loc.describe()
                            )));
                        }
                        if !cadence.wait(deadline).await {
                            return Err(DriverError::new(
                                WebCode::TargetFrameNotFound,
                                format!(
                                    "target frame {}: {why} (retried until the step deadline)",
                                    loc.describe()
                                ),
                            ));
                        }
                    }
                }
            }
        }
    }
}

/// One attempt to resolve a frame: `Ok(Err(why))` to retry.
async fn frame_once(
    main: &Page,
    loc: &Locator,
    deadline: Deadline,
) -> Result<Result<FrameRef, String>, DriverError> {
    let top = main.top();
    let what = loc.describe();
    let v: FrameReply<Nothing> = match top.dom(&DomOp::FrameInfo(loc), deadline).await {
        Ok(v) => v,
        Err(EvalError::Transient(_)) => return Ok(Err("the page was being replaced".into())),
        Err(EvalError::Fatal(e)) => return Err(e.into()),
        Err(EvalError::Reply(m)) => return Err(super::reply_error(m)),
    };
    match v {
        FrameReply::Ok(Nothing {}) => {}
        FrameReply::None => return Ok(Err("the locator matched no element".into())),
        FrameReply::Loading => return Ok(Err("the frame has not loaded its document yet".into())),
        FrameReply::Ambiguous { count } => {
            return Err(DriverError::new(
                WebCode::LocatorAmbiguous,
                format!(
                    "target frame {what} matched {count} elements; a locator must match exactly one"
                ),
            ))
        }
        FrameReply::NotAFrame { what: it } => {
            return Err(DriverError::new(
                WebCode::TargetNotAFrame,
                format!("target frame {what} matched {it}, not an <iframe>"),
            ))
        }
        FrameReply::CrossOrigin {} => {
            return Err(DriverError::new(
                WebCode::TargetCrossOriginFrame,
                format!("target frame {what}: the frame's document is not same-origin with the page; steps can target same-origin frames only"),
            )
            .with_remediation("open the frame's URL with goto (its origin in target.allowedOrigins) and drive it as a page"))
        }
    }
    let Some(oid) = top.element_object(loc).await? else {
        return Ok(Err("the locator matched no element".into()));
    };
    let d = main
        .send(&DescribeNode {
            object_id: oid.clone(),
        })
        .await;
    let _ = main.send(&ReleaseObject { object_id: oid }).await;
    match d.ok().and_then(|d| d.node.frame_id) {
        Some(id) => Ok(Ok(FrameRef {
            id,
            locator: loc.clone(),
        })),
        None => Ok(Err("the <iframe> has no frame yet".into())),
    }
}

/// Brings the helper's answer from the frame's viewport into the page's:
/// click points (`x`, `y`, `left`, `top`) move by the frame's content-box
/// offset, element rectangles become page-document coordinates. With
/// `hit`, the page is hit-tested at the translated point: `Some(cover)`
/// names what covers the frame there.
pub(crate) async fn to_page<T: Placed>(
    page: &Page,
    v: &mut T,
    hit: bool,
    deadline: Deadline,
) -> Result<Option<String>, EvalError> {
    let Some(f) = &page.frame else {
        return Ok(None);
    };
    let at = match v.placement() {
        Placement::Nowhere => return Ok(None),
        Placement::Rect => None,
        Placement::Point(x, y) => hit.then_some((x, y)),
    };
    let b: FrameReply<FrameBox> = page
        .top()
        .dom(&DomOp::FrameBox(&f.locator, at), deadline)
        .await?;
    let FrameReply::Ok(b) = b else {
        return Err(EvalError::Transient("the target frame changed".into()));
    };
    if let (Some(c), Placement::Point(..)) = (&b.cover, v.placement()) {
        return Ok(Some(format!("{c} (in the page, over the frame)")));
    }
    v.shift(&b);
    Ok(None)
}
