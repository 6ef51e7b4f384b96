//! Step execution: actions (`perform`, dispatched once) and assertions
//! (`verify`, one fresh verdict per call).

use crate::actionability::actionable;
use crate::artifacts;
use crate::page::{locator_spec, EvalError, Page};
use qa_core::flow::{
    BrowserAction, DialogExpectation, EvaluateOperation, ExpectResponse, Locator, WaitState,
};
use qa_core::keys::KeyChord;
use qa_core::{Deadline, DriverError, Evidence, Step, StepOutcome, Verdict};
use serde_json::{json, Value};
use std::time::Duration;

/// Action names this driver performs or verifies.
pub const SUPPORTED: &[&str] = &[
    "goto",
    "reload",
    "waitFor",
    "waitForTimeout",
    "click",
    "doubleClick",
    "hover",
    "fill",
    "press",
    "check",
    "uncheck",
    "selectOption",
    "wheel",
    "evaluate",
    "assertVisible",
    "assertHidden",
    "assertEnabled",
    "assertDisabled",
    "assertChecked",
    "assertUnchecked",
    "assertText",
    "assertTextContent",
    "assertValue",
    "assertAttribute",
    "assertCount",
    "assertURL",
    "assertDOMMetric",
    "snapshotAccessibility",
    "assertNoConsoleErrors",
    "assertConsole",
    "assertNetworkRequest",
    "screenshot",
    "dragTo",
    "uploadFiles",
    "openPopup",
    "download",
    "authRejectedIf",
    "performanceTrace",
    "heapSummary",
    "lighthouse",
];

fn unsupported(step: &Step) -> DriverError {
    DriverError::new(
        "web.step.unsupported",
        format!(
            "the browser/cdp driver does not implement {}",
            step.action_name()
        ),
    )
}

/// Resolves `goto`'s `path`/`url` against the base URL.
pub fn resolve_url(
    base: &url::Url,
    path: Option<&str>,
    url: Option<&str>,
) -> Result<url::Url, DriverError> {
    let s = url.or(path).unwrap_or("/");
    base.join(s).map_err(|e| {
        DriverError::new(
            "web.navigation.bad_url",
            format!("cannot resolve {s:?}: {e}"),
        )
    })
}

/// Performs one action step.
pub async fn perform(
    page: &Page,
    base: &url::Url,
    evidence: &Evidence,
    step: &Step,
    deadline: Deadline,
) -> Result<StepOutcome, DriverError> {
    let qa_core::flow::Action::Browser(action) = &step.action else {
        return Err(unsupported(step));
    };
    let mut out = StepOutcome::default();
    let seq0 = page.sh.st().net_seq;
    match action {
        BrowserAction::Goto(g) => {
            let u = resolve_url(base, g.path.as_deref(), g.url.as_deref())?;
            if let crate::containment::Decision::Block(_) = page.sh.allow.decide(u.as_str()) {
                return Err(DriverError::new(
                    "web.navigation.blocked",
                    "goto: the URL's origin is not the target origin or in allowedOrigins",
                )
                .with_remediation("add the origin to target.allowedOrigins"));
            }
            page.navigate(u.as_str(), deadline).await?;
        }
        BrowserAction::Reload(_) => {
            let load0 = page.load_count();
            page.call("Page.reload", json!({}))
                .await
                .map_err(|e| DriverError::new("web.navigation.failed", e.to_string()))?;
            page.wait_load(load0, deadline).await?;
            page.settle(seq0, deadline).await?;
        }
        BrowserAction::WaitForTimeout(w) => {
            let d = Deadline::after_ms(w.ms).min(deadline);
            d.sleep().await;
        }
        BrowserAction::Click(p)
        | BrowserAction::DoubleClick(p)
        | BrowserAction::Check(p)
        | BrowserAction::Uncheck(p) => {
            let (kind, arg) = match action {
                BrowserAction::Check(_) => ("check", json!({ "kind": "check", "want": true })),
                BrowserAction::Uncheck(_) => ("check", json!({ "kind": "check", "want": false })),
                BrowserAction::DoubleClick(_) => ("dblclick", json!({ "kind": "dblclick" })),
                _ => ("click", json!({ "kind": "click" })),
            };
            let r = actionable(page, &p.locator, step.action_name(), arg, deadline).await?;
            if r.value["noop"].as_bool() == Some(true) {
                out.detail = Some("already in the requested state".into());
            } else {
                let (x, y) = (
                    r.value["x"].as_f64().unwrap_or(0.0),
                    r.value["y"].as_f64().unwrap_or(0.0),
                );
                let clicks = if kind == "dblclick" { 2 } else { 1 };
                interact(
                    page,
                    p.expect_response.as_ref(),
                    p.expect_dialog.as_ref(),
                    seq0,
                    deadline,
                    || async move { page.click_at(x, y, clicks).await },
                )
                .await?;
                if kind == "check" {
                    let want = matches!(action, BrowserAction::Check(_));
                    let st = state(page, &p.locator, json!({}), deadline).await?;
                    if st["checked"].as_bool() != Some(want) {
                        return Err(DriverError::new(
                            "web.check.state_unchanged",
                            format!(
                                "{}: {} did not become {}",
                                step.action_name(),
                                p.locator.describe(),
                                if want { "checked" } else { "unchecked" }
                            ),
                        ));
                    }
                }
            }
        }
        BrowserAction::Hover(h) => {
            let r = actionable(
                page,
                &h.locator,
                "hover",
                json!({ "kind": "hover" }),
                deadline,
            )
            .await?;
            page.input(
                "Input.dispatchMouseEvent",
                json!({ "type": "mouseMoved", "x": r.value["x"], "y": r.value["y"] }),
            )
            .await?;
            page.settle(seq0, deadline).await?;
        }
        BrowserAction::Fill(f) => {
            let r = actionable(
                page,
                &f.locator,
                "fill",
                json!({ "kind": "fill", "value": f.value }),
                deadline,
            )
            .await?;
            // Date/time/color/range inputs were set directly by the helper.
            let direct = r.value["direct"].as_bool() == Some(true);
            let value = if direct {
                String::new()
            } else {
                f.value.clone()
            };
            interact(page, f.expect_response.as_ref(), f.expect_dialog.as_ref(), seq0, deadline, || async move {
                if direct {
                    return Ok(());
                }
                page.input("Input.dispatchKeyEvent", json!({ "type": "rawKeyDown", "key": "Delete", "code": "Delete", "windowsVirtualKeyCode": 46 })).await?;
                page.input("Input.dispatchKeyEvent", json!({ "type": "keyUp", "key": "Delete", "code": "Delete", "windowsVirtualKeyCode": 46 })).await?;
                if !value.is_empty() {
                    page.input("Input.insertText", json!({ "text": value })).await?;
                }
                Ok(())
            })
            .await?;
        }
        BrowserAction::Press(p) => {
            let chord =
                KeyChord::parse(&p.key).map_err(|e| DriverError::new("web.press.bad_key", e))?;
            if let Some(l) = &p.locator {
                actionable(page, l, "press", json!({ "kind": "focus" }), deadline).await?;
            }
            interact(
                page,
                p.expect_response.as_ref(),
                p.expect_dialog.as_ref(),
                seq0,
                deadline,
                || async move { page.press(&chord).await },
            )
            .await?;
        }
        BrowserAction::SelectOption(s) => {
            let mut arg = json!({ "kind": "select" });
            if let Some(v) = &s.value {
                arg["value"] = json!(v);
            }
            if let Some(v) = &s.label {
                arg["label"] = json!(v);
            }
            if let Some(v) = s.index {
                arg["index"] = json!(v);
            }
            let armed = arm(page, s.expect_response.as_ref(), None);
            actionable(page, &s.locator, "selectOption", arg, deadline).await?;
            page.settle(seq0, deadline).await?;
            check_expectations(page, armed, s.expect_response.as_ref(), None, deadline).await?;
        }
        BrowserAction::Wheel(w) => {
            let (x, y) = match &w.locator {
                Some(l) => {
                    let r =
                        actionable(page, l, "wheel", json!({ "kind": "wheel" }), deadline).await?;
                    (
                        r.value["x"].as_f64().unwrap_or(0.0),
                        r.value["y"].as_f64().unwrap_or(0.0),
                    )
                }
                None => (10.0, 10.0),
            };
            page.input(
                "Input.dispatchMouseEvent",
                json!({ "type": "mouseWheel", "x": x, "y": y, "deltaX": w.delta_x.unwrap_or(0.0), "deltaY": w.delta_y.unwrap_or(0.0) }),
            )
            .await?;
            page.settle(seq0, deadline).await?;
        }
        BrowserAction::Evaluate(e) => {
            let (op, arg) = match e.operation {
                EvaluateOperation::ScrollTo => ("scroll", json!({ "x": e.x, "y": e.y })),
                EvaluateOperation::ScrollBy => {
                    ("scroll", json!({ "by": true, "x": e.x, "y": e.y }))
                }
                EvaluateOperation::Metrics => ("metrics", json!({})),
            };
            let v = eval_once(page, op, &json!({}), &arg, deadline).await?;
            if op == "metrics" {
                out.detail = Some(format!(
                    "elements {}, scroll {}x{}",
                    v["elementCount"], v["scrollWidth"], v["scrollHeight"]
                ));
            }
            page.settle(seq0, deadline).await?;
        }
        BrowserAction::Screenshot(s) => {
            let a = artifacts::screenshot(
                page,
                evidence,
                step,
                s.locator.as_ref(),
                s.full_page.unwrap_or(false),
                deadline,
            )
            .await?;
            out.artifacts.extend(a);
        }
        BrowserAction::SnapshotAccessibility(s) => {
            let a =
                artifacts::ax_snapshot(page, evidence, step, s.locator.as_ref(), deadline).await?;
            out.artifacts.extend(a);
        }
        BrowserAction::PerformanceTrace(_) => {
            return crate::diagnostics::performance_trace(page, evidence, step, deadline).await;
        }
        BrowserAction::HeapSummary(_) => {
            return crate::diagnostics::heap_summary(page, evidence, step, deadline).await;
        }
        BrowserAction::Lighthouse(_) => {
            return Err(DriverError::blocked(
                "web.lighthouse.unavailable",
                crate::diagnostics::lighthouse_missing(),
            ));
        }
        other => {
            return match crate::steps_extra::perform(page, evidence, step, other, deadline).await {
                Some(r) => r,
                None => Err(unsupported(step)),
            };
        }
    }
    Ok(out)
}

struct Armed {
    dialogs_before: usize,
}

fn arm(page: &Page, _resp: Option<&ExpectResponse>, dialog: Option<&DialogExpectation>) -> Armed {
    let mut st = page.sh.st();
    st.armed_dialog = dialog.cloned();
    Armed {
        dialogs_before: st.dialogs.len(),
    }
}

/// Arms expectations, dispatches, settles, then checks the expectations.
async fn interact<F, Fut>(
    page: &Page,
    resp: Option<&ExpectResponse>,
    dialog: Option<&DialogExpectation>,
    seq0: u64,
    deadline: Deadline,
    dispatch: F,
) -> Result<(), DriverError>
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Result<(), DriverError>>,
{
    let armed = arm(page, resp, dialog);
    let r = dispatch().await;
    if let Err(e) = r {
        page.sh.st().armed_dialog = None;
        return Err(e);
    }
    page.settle(seq0, deadline).await?;
    let r = check_expectations(page, armed, resp, dialog, deadline).await;
    page.sh.st().armed_dialog = None;
    let _ = seq0;
    r
}

async fn check_expectations(
    page: &Page,
    armed: Armed,
    resp: Option<&ExpectResponse>,
    dialog: Option<&DialogExpectation>,
    deadline: Deadline,
) -> Result<(), DriverError> {
    let mut rx = page.sh.changed.subscribe();
    if let Some(d) = dialog {
        loop {
            let seen = page.sh.st().dialogs.get(armed.dialogs_before).cloned();
            if let Some(seen) = seen {
                if let Some(k) = &d.kind {
                    if *k != seen.kind {
                        return Err(DriverError::new(
                            "web.expect.dialog_mismatch",
                            format!("expected a {k} dialog, a {} dialog opened", seen.kind),
                        ));
                    }
                }
                if let Some(m) = &d.message {
                    if !m.matches(&seen.message) {
                        return Err(DriverError::new(
                            "web.expect.dialog_mismatch",
                            format!("the dialog message did not match {}", m.describe()),
                        ));
                    }
                }
                break;
            }
            if deadline.run(rx.changed()).await.is_none() {
                return Err(DriverError::new(
                    "web.expect.dialog_missing",
                    "the expected dialog did not open before the step deadline",
                ));
            }
        }
    }
    if let Some(r) = resp {
        loop {
            if let Some(found) = find_request(page, &r.path, r.method.as_deref(), r.status, 0) {
                if found {
                    break;
                }
            }
            if deadline.run(rx.changed()).await.is_none() {
                return Err(DriverError::new(
                    "web.expect.response_missing",
                    format!(
                        "no response for {:?} matching the expectation before the step deadline",
                        r.path
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// `Some(true)`: a finished request matches; `Some(false)`: one is pending.
fn find_request(
    page: &Page,
    path: &str,
    method: Option<&str>,
    status: Option<u16>,
    since: u64,
) -> Option<bool> {
    let st = page.sh.st();
    let mut pending = false;
    for e in st.network.iter().filter(|e| e.seq > since) {
        let p_ok =
            e.path_query == path || e.path_query.split('?').next() == Some(path) || e.url == path;
        let m_ok = method.is_none_or(|m| m.eq_ignore_ascii_case(&e.method));
        if !(p_ok && m_ok) {
            continue;
        }
        match (status, e.status) {
            (None, Some(_)) => return Some(true),
            (Some(w), Some(s)) if w == s => return Some(true),
            (_, None) if e.failed.is_none() => pending = true,
            _ => {}
        }
    }
    pending.then_some(false)
}

pub(crate) async fn eval_once(
    page: &Page,
    op: &str,
    spec: &Value,
    arg: &Value,
    deadline: Deadline,
) -> Result<Value, DriverError> {
    let mut cadence = qa_core::Cadence::new();
    loop {
        match page.eval(op, spec, arg, deadline).await {
            Ok(v) => return Ok(v),
            Err(EvalError::Fatal(e)) => return Err(e.into()),
            Err(EvalError::Transient(m)) => {
                if m.contains("SyntaxError") || m.contains("not a valid selector") {
                    return Err(DriverError::new(
                        "web.locator.invalid",
                        "the CSS selector is not valid",
                    ));
                }
                if !cadence.wait(deadline).await {
                    return Err(DriverError::new(
                        "web.page.unavailable",
                        "the page did not answer before the step deadline",
                    ));
                }
            }
        }
    }
}

async fn state(
    page: &Page,
    l: &Locator,
    arg: Value,
    deadline: Deadline,
) -> Result<Value, DriverError> {
    eval_once(page, "state", &locator_spec(l), &arg, deadline).await
}

fn ambiguous(l: &Locator, n: u64) -> DriverError {
    DriverError::new(
        "web.locator.ambiguous",
        format!("{} matched {n} elements; a locator must match exactly one (add exact, nth or a more specific locator)", l.describe()),
    )
}

fn holds(b: bool, observed: impl Into<String>) -> Verdict {
    if b {
        Verdict::Holds
    } else {
        Verdict::NotYet {
            observed: observed.into(),
        }
    }
}

/// One fresh verdict for an assertion step.
pub async fn verify(page: &Page, step: &Step, deadline: Deadline) -> Result<Verdict, DriverError> {
    let qa_core::flow::Action::Browser(action) = &step.action else {
        return Err(unsupported(step));
    };
    let deadline = deadline.min(Deadline::after(Duration::from_secs(10)));
    use BrowserAction as B;
    match action {
        B::WaitFor(w) => {
            let v = state(page, &w.locator, json!({}), deadline).await?;
            let n = v["count"].as_u64().unwrap_or(0);
            let st = w.state.unwrap_or_default();
            if n > 1 && st != WaitState::Detached {
                return Err(ambiguous(&w.locator, n));
            }
            let vis = v["visible"].as_bool().unwrap_or(false);
            Ok(match st {
                WaitState::Visible => holds(
                    n == 1 && vis,
                    if n == 0 { "no match" } else { "not visible" },
                ),
                WaitState::Hidden => holds(n == 0 || !vis, "visible"),
                WaitState::Attached => holds(n == 1, "no match"),
                WaitState::Detached => holds(n == 0, format!("{n} match(es) attached")),
            })
        }
        B::AssertVisible(a)
        | B::AssertHidden(a)
        | B::AssertEnabled(a)
        | B::AssertDisabled(a)
        | B::AssertChecked(a)
        | B::AssertUnchecked(a) => {
            let v = state(page, &a.locator, json!({}), deadline).await?;
            let n = v["count"].as_u64().unwrap_or(0);
            if n > 1 {
                return Err(ambiguous(&a.locator, n));
            }
            let vis = v["visible"].as_bool().unwrap_or(false);
            if let B::AssertHidden(_) = action {
                return Ok(holds(n == 0 || !vis, "visible"));
            }
            if n == 0 {
                return Ok(Verdict::NotYet {
                    observed: "no match".into(),
                });
            }
            Ok(match action {
                B::AssertVisible(_) => holds(vis, "not visible"),
                B::AssertEnabled(_) => holds(v["enabled"] == true, "disabled"),
                B::AssertDisabled(_) => holds(v["enabled"] == false, "enabled"),
                B::AssertChecked(_) => holds(v["checked"] == true, "unchecked"),
                _ => holds(v["checked"] == false, "checked"),
            })
        }
        B::AssertText(t) | B::AssertTextContent(t) | B::AssertValue(t) => {
            let (field, arg) = match action {
                B::AssertText(_) => ("text", json!({ "text": true })),
                B::AssertTextContent(_) => ("textContent", json!({ "textContent": true })),
                _ => ("value", json!({ "value": true })),
            };
            let v = state(page, &t.locator, arg, deadline).await?;
            let n = v["count"].as_u64().unwrap_or(0);
            if n > 1 {
                return Err(ambiguous(&t.locator, n));
            }
            if n == 0 {
                return Ok(Verdict::NotYet {
                    observed: "no match".into(),
                });
            }
            let actual = v[field].as_str().unwrap_or("");
            Ok(holds(
                t.matcher().matches(actual),
                format!("{field} does not match {}", t.matcher().describe()),
            ))
        }
        B::AssertAttribute(a) => {
            let v = state(
                page,
                &a.locator,
                json!({ "attribute": a.attribute }),
                deadline,
            )
            .await?;
            let n = v["count"].as_u64().unwrap_or(0);
            if n > 1 {
                return Err(ambiguous(&a.locator, n));
            }
            match v["attribute"].as_str() {
                Some(s) => Ok(holds(
                    a.matcher().matches(s),
                    format!("attribute {} does not match", a.attribute),
                )),
                None => Ok(Verdict::NotYet {
                    observed: if n == 0 {
                        "no match".into()
                    } else {
                        format!("attribute {} absent", a.attribute)
                    },
                }),
            }
        }
        B::AssertCount(c) => {
            let v = state(page, &c.locator, json!({}), deadline).await?;
            let n = v["count"].as_u64().unwrap_or(0);
            Ok(holds(n == c.count as u64, format!("{n} match(es)")))
        }
        B::AssertUrl(m) => {
            let v = eval_once(page, "page", &json!({}), &json!({}), deadline).await?;
            let url = v["url"].as_str().unwrap_or("");
            Ok(holds(
                m.matcher().matches(url),
                format!("URL does not match {}", m.matcher().describe()),
            ))
        }
        B::AssertDomMetric(d) => {
            let Some(cmp) = d.comparison() else {
                return Ok(Verdict::Fails {
                    reason: "no comparison".into(),
                });
            };
            let value = match &d.locator {
                Some(l) => {
                    let v = eval_once(page, "countVisible", &locator_spec(l), &json!({}), deadline)
                        .await?;
                    match d.metric.as_str() {
                        "count" => v["count"].as_f64(),
                        "visibleCount" => v["visible"].as_f64(),
                        _ => None,
                    }
                }
                None => eval_once(page, "metrics", &json!({}), &json!({}), deadline).await?
                    [d.metric.as_str()]
                .as_f64(),
            };
            match value {
                Some(x) => Ok(holds(cmp.holds(x), format!("{} is {x}", d.metric))),
                None => Ok(Verdict::Fails {
                    reason: format!("unknown DOM metric {:?}", d.metric),
                }),
            }
        }
        B::AssertNoConsoleErrors(_) => {
            let n = page
                .sh
                .st()
                .console
                .iter()
                .filter(|e| crate::events::counts_as_error(e))
                .count();
            Ok(if n == 0 {
                Verdict::Holds
            } else {
                Verdict::Fails {
                    reason: format!(
                        "{n} console error(s) were logged (see the console log artifact)"
                    ),
                }
            })
        }
        B::AssertConsole(c) => {
            let m = c.matcher();
            let found = page.sh.st().console.iter().any(|e| {
                !e.containment
                    && c.level
                        .as_deref()
                        .is_none_or(|l| l == e.level || (l == "warn" && e.level == "warning"))
                    && m.matches(&e.text)
            });
            Ok(holds(
                found,
                format!("no console message matches {}", m.describe()),
            ))
        }
        B::AssertNetworkRequest(n) => {
            let found = find_request(page, &n.path, n.method.as_deref(), n.status, 0) == Some(true);
            Ok(holds(
                found,
                format!("no finished request to {:?} matches", n.path),
            ))
        }
        B::AuthRejectedIf(a) => crate::steps_extra::auth_rejected_if(page, a, deadline).await,
        _ => Err(unsupported(step)),
    }
}
