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

use crate::page::{locator_spec, EvalError, Page};
use qa_core::flow::{Action, BrowserAction, Locator, StepTargetKind};
use qa_core::{Cadence, Deadline, DriverError, Step};
use serde_json::{json, Value};

/// A same-origin frame a step runs in.
#[derive(Debug, Clone)]
pub struct FrameRef {
    /// Its CDP frame id (stable across its same-origin navigations).
    pub id: String,
    /// The locator of its `<iframe>` element in the page.
    pub locator: Locator,
}

/// The page a step runs against.
pub struct Scope {
    /// The scoped page (popup page, or the page with a frame scope).
    pub page: Page,
    popup: bool,
}

impl Scope {
    /// Whether the scope is a popup.
    pub fn is_popup(&self) -> bool {
        self.popup
    }
}

/// The outcome of entering a step's target.
pub enum Entered {
    /// The step can run.
    Ready(Box<Scope>),
    /// The frame is not there (yet); only when not waiting.
    NotYet(String),
}

fn main_scope(main: &Page) -> Scope {
    Scope {
        page: main.clone(),
        popup: false,
    }
}

/// The page of the popup adopted under `name`.
pub fn popup_page(main: &Page, name: &str) -> Result<Page, DriverError> {
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
                "web.target.unknown_popup",
                format!("no popup named {name:?} was opened by an earlier openPopup step (known popups: {known})"),
            )
            .with_remediation("name the openPopup step and use that name in target.name"))
        }
        Some(p) if !st.ready.contains(&p.session) => Err(DriverError::new(
            "web.target.popup_closed",
            format!("the popup {name:?} has closed"),
        )),
        Some(p) => Ok(Page {
            session: p.session.clone(),
            frame: None,
            ..main.clone()
        }),
    }
}

/// Resolves the step's target. With `wait`, a frame that is not there yet
/// is retried until `deadline`; without, [`Entered::NotYet`] says why.
pub async fn enter(
    main: &Page,
    step: &Step,
    wait: bool,
    deadline: Deadline,
) -> Result<Entered, DriverError> {
    let Some(t) = &step.target else {
        main.ensure_front().await?;
        return Ok(Entered::Ready(Box::new(main_scope(main))));
    };
    match t.kind {
        StepTargetKind::Popup => {
            let page = popup_page(main, t.name.as_deref().unwrap_or(""))?;
            page.ensure_front().await.map_err(|e| {
                if e.code.starts_with("web.cdp.target_") {
                    DriverError::new(
                        "web.target.popup_closed",
                        format!("the popup {:?} has closed", t.name.as_deref().unwrap_or("")),
                    )
                } else {
                    e
                }
            })?;
            Ok(Entered::Ready(Box::new(Scope { page, popup: true })))
        }
        StepTargetKind::Frame => {
            if matches!(
                &step.action,
                Action::Browser(BrowserAction::Goto(_) | BrowserAction::Reload(_))
            ) {
                return Err(DriverError::new(
                    "web.target.unsupported",
                    format!("{} cannot target a frame: it navigates the page (click a link in the frame instead)", step.action_name()),
                ));
            }
            let Some(loc) = &t.locator else {
                return Err(DriverError::new(
                    "web.target.frame_not_found",
                    "a frame target needs the locator of its <iframe>",
                ));
            };
            main.ensure_front().await?;
            let mut cadence = Cadence::new();
            loop {
                match frame_once(main, loc, deadline).await? {
                    Ok(f) => {
                        return Ok(Entered::Ready(Box::new(Scope {
                            page: Page {
                                frame: Some(f),
                                ..main.clone()
                            },

                            popup: false,
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
                                "web.target.frame_not_found",
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
    let v = match top
        .eval("frameInfo", &locator_spec(loc), &json!({}), deadline)
        .await
    {
        Ok(v) => v,
        Err(EvalError::Transient(_)) => return Ok(Err("the page was being replaced".into())),
        Err(EvalError::Fatal(e)) => return Err(e.into()),
    };
    match v["status"].as_str().unwrap_or("") {
        "ok" => {}
        "none" => return Ok(Err("the locator matched no element".into())),
        "loading" => return Ok(Err("the frame has not loaded its document yet".into())),
        "ambiguous" => {
            return Err(DriverError::new(
                "web.locator.ambiguous",
                format!(
                    "target frame {what} matched {} elements; a locator must match exactly one",
                    v["count"].as_u64().unwrap_or(2)
                ),
            ))
        }
        "not_a_frame" => {
            return Err(DriverError::new(
                "web.target.not_a_frame",
                format!(
                    "target frame {what} matched {}, not an <iframe>",
                    v["what"].as_str().unwrap_or("an element")
                ),
            ))
        }
        "cross_origin" => {
            return Err(DriverError::new(
                "web.target.cross_origin_frame",
                format!("target frame {what}: the frame's document is not same-origin with the page; steps can target same-origin frames only"),
            )
            .with_remediation("open the frame's URL with goto (its origin in target.allowedOrigins) and drive it as a page"))
        }
        other => return Ok(Err(format!("unexpected frame state {other:?}"))),
    }
    let Some(oid) = top.element_object(loc).await? else {
        return Ok(Err("the locator matched no element".into()));
    };
    let d = main
        .call("DOM.describeNode", json!({ "objectId": oid }))
        .await;
    let _ = main
        .call("Runtime.releaseObject", json!({ "objectId": oid }))
        .await;
    match d
        .ok()
        .and_then(|d| d["node"]["frameId"].as_str().map(str::to_string))
    {
        Some(id) => Ok(Ok(FrameRef {
            id,
            locator: loc.clone(),
        })),
        None => Ok(Err("the <iframe> has no frame yet".into())),
    }
}

/// Brings the helper's answer from the frame's viewport into the page's:
/// click points (`x`, `y`, `left`, `top`) move by the frame's content-box
/// offset, element rectangles (`vx`, `vy`) become page-document
/// coordinates. With `hit`, the page is hit-tested at the translated point:
/// `Some(cover)` names what covers the frame there.
pub async fn to_page(
    page: &Page,
    v: &mut Value,
    hit: bool,
    deadline: Deadline,
) -> Result<Option<String>, EvalError> {
    let Some(f) = &page.frame else {
        return Ok(None);
    };
    let rect = v["vx"].is_number();
    if !rect && !v["x"].is_number() {
        return Ok(None);
    }
    let hit = hit && !rect;
    let arg = json!({ "hit": hit, "x": v["x"], "y": v["y"] });
    let b = page
        .top()
        .eval("frameBox", &locator_spec(&f.locator), &arg, deadline)
        .await?;
    if b["status"] != "ok" {
        return Err(EvalError::Transient("the target frame changed".into()));
    }
    let n = |k: &str| b[k].as_f64().unwrap_or(0.0);
    let (dx, dy) = (n("dx"), n("dy"));
    if rect {
        v["x"] = json!(v["vx"].as_f64().unwrap_or(0.0) + dx + n("sx"));
        v["y"] = json!(v["vy"].as_f64().unwrap_or(0.0) + dy + n("sy"));
        return Ok(None);
    }
    if let Some(c) = b["cover"].as_str() {
        return Ok(Some(format!("{c} (in the page, over the frame)")));
    }
    for (k, d) in [("x", dx), ("y", dy), ("left", dx), ("top", dy)] {
        if let Some(x) = v[k].as_f64() {
            v[k] = json!(x + d);
        }
    }
    Ok(None)
}
