//! The main page: in-page evaluation, input dispatch, navigation and the
//! post-action settle.

use crate::cdp::CdpError;
use crate::events::Shared;
use qa_core::flow::Locator;
use qa_core::keys::{Key, KeyChord};
use qa_core::{Deadline, DriverError};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

/// The in-page helper (`dom.js`), called as `(DOM_JS)(op, spec, arg)`.
pub(crate) const DOM_JS: &str = include_str!("dom.js");

/// Requests older than this at settle time count as long-lived (polling,
/// streaming) and no longer hold the page busy.
pub const LONG_LIVED_REQUEST_MS: u64 = 5_000;

/// Why an evaluation did not produce a value.
#[derive(Debug)]
pub enum EvalError {
    /// The document changed under us (navigation); retry.
    Transient(String),
    /// The connection or the target is gone, or the call timed out.
    Fatal(CdpError),
}

/// The main page of a session.
#[derive(Clone)]
pub struct Page {
    /// Shared state.
    pub sh: Arc<Shared>,
    /// Main page session id.
    pub session: String,
    /// Quiet window after actions.
    pub settle_ms: u64,
    /// A same-origin frame of the page the step runs in (`None`: the
    /// page's main frame). See [`crate::scope`].
    pub frame: Option<crate::scope::FrameRef>,
}

/// The locator as the in-page helper wants it.
pub fn locator_spec(l: &Locator) -> Value {
    let mut m = serde_json::Map::new();
    let mut put = |k: &str, v: &Option<String>| {
        if let Some(v) = v {
            m.insert(k.into(), Value::String(v.clone()));
        }
    };
    put("testId", &l.test_id);
    put("role", &l.role);
    put("name", &l.name);
    put("label", &l.label);
    put("placeholder", &l.placeholder);
    put("text", &l.text);
    put("css", &l.css);
    if l.is_exact() {
        m.insert("exact".into(), Value::Bool(true));
    }
    if let Some(n) = l.nth {
        m.insert("nth".into(), json!(n));
    }
    Value::Object(m)
}

fn no_frame_document() -> CdpError {
    CdpError::Protocol {
        code: -32000,
        message: "the frame has no document yet".into(),
    }
}

fn bound(deadline: Deadline) -> Duration {
    deadline
        .remaining()
        .clamp(Duration::from_millis(50), Duration::from_secs(60))
}

impl Page {
    /// A raw call on the page session.
    pub async fn call(&self, method: &str, params: Value) -> Result<Value, CdpError> {
        self.sh.cdp.call(Some(&self.session), method, params).await
    }

    /// Whether this page is a popup (any page but the session's main one).
    pub fn is_popup(&self) -> bool {
        self.sh.st().main_session.as_deref() != Some(self.session.as_str())
    }

    /// Brings this page to the front unless it is known to be there: a
    /// background page gets no animation frames (the stability check) and
    /// no screenshots. A page that is gone fails with its own code.
    pub async fn ensure_front(&self) -> Result<(), DriverError> {
        if self.sh.st().front.as_deref() == Some(self.session.as_str()) {
            return Ok(());
        }
        match self.call("Page.bringToFront", json!({})).await {
            Ok(_) => {
                self.sh.st().front = Some(self.session.clone());
                Ok(())
            }
            Err(e @ CdpError::Protocol { .. }) => {
                Err(DriverError::new("web.page.front", e.to_string()))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The same page with its main frame as scope.
    pub fn top(&self) -> Page {
        Page {
            frame: None,
            ..self.clone()
        }
    }

    /// Load events of this page so far.
    pub fn load_count(&self) -> u64 {
        self.sh.st().loads.get(&self.session).copied().unwrap_or(0)
    }

    /// `params` for `Runtime.evaluate` in this scope: in a frame, its
    /// current default execution context (it changes when the frame
    /// navigates; `None` while the frame has no document).
    fn scoped(&self, mut params: Value) -> Option<Value> {
        if let Some(f) = &self.frame {
            let st = self.sh.st();
            let id = st
                .frame_contexts
                .get(&(self.session.clone(), f.id.clone()))?;
            params["contextId"] = json!(id);
        }
        Some(params)
    }

    /// `Runtime.evaluate` in this scope (the frame's document in a frame).
    pub async fn evaluate(&self, params: Value) -> Result<Value, CdpError> {
        let params = self.scoped(params).ok_or_else(no_frame_document)?;
        self.call("Runtime.evaluate", params).await
    }

    /// Runs one helper operation in the page.
    pub async fn eval(
        &self,
        op: &str,
        spec: &Value,
        arg: &Value,
        deadline: Deadline,
    ) -> Result<Value, EvalError> {
        let expr = format!("({DOM_JS})({}, {spec}, {arg})", json!(op));
        let params = self
            .scoped(json!({ "expression": expr, "awaitPromise": true, "returnByValue": true }))
            .ok_or_else(|| EvalError::Transient("the frame has no document yet".into()))?;
        let r = self
            .sh
            .cdp
            .call_with_timeout(
                Some(&self.session),
                "Runtime.evaluate",
                params,
                bound(deadline),
            )
            .await;
        match r {
            Ok(v) => {
                if let Some(ex) = v.get("exceptionDetails") {
                    let text = ex["exception"]["description"]
                        .as_str()
                        .or(ex["text"].as_str())
                        .unwrap_or("exception");
                    // A helper exception is usually a bad CSS selector or a
                    // document being replaced; report it as transient once.
                    return Err(EvalError::Transient(
                        text.lines().next().unwrap_or("").to_string(),
                    ));
                }
                Ok(v["result"]["value"].clone())
            }
            Err(CdpError::Protocol { message, .. }) => Err(EvalError::Transient(message)),
            // Bounded by the step deadline and out of time: the caller's
            // retry loop ends with what it last observed (not a hang).
            Err(CdpError::Timeout { .. }) if deadline.remaining() < Duration::from_millis(50) => {
                Err(EvalError::Transient(
                    "the page did not answer before the step deadline".into(),
                ))
            }
            Err(e) => Err(EvalError::Fatal(e)),
        }
    }

    /// A remote object id for the one element `locator` matches now
    /// (`None` if it does not match exactly one). Release it with
    /// `Runtime.releaseObject`.
    pub async fn element_object(&self, locator: &Locator) -> Result<Option<String>, DriverError> {
        let expr = format!("({DOM_JS})(\"element\", {}, {{}})", locator_spec(locator));
        let r = self
            .evaluate(json!({ "expression": expr, "awaitPromise": true, "returnByValue": false }))
            .await
            .map_err(|e| DriverError::new("web.cdp.failed", e.to_string()))?;
        if r["result"]["subtype"] == "node" {
            Ok(r["result"]["objectId"].as_str().map(str::to_string))
        } else {
            Ok(None)
        }
    }

    /// Waits for any state change (event) or `max`, whichever first.
    pub async fn changed_or(&self, max: Duration, deadline: Deadline) {
        let mut rx = self.sh.changed.subscribe();
        let until = Deadline::after(max).min(deadline);
        let _ = until.run(rx.changed()).await;
    }

    /// Navigates and waits for the load event, then settles.
    pub async fn navigate(&self, url: &str, deadline: Deadline) -> Result<(), DriverError> {
        let (load0, seq0) = (self.load_count(), self.sh.st().net_seq);
        let r = self
            .sh
            .cdp
            .call_with_timeout(
                Some(&self.session),
                "Page.navigate",
                json!({ "url": url }),
                bound(deadline),
            )
            .await
            .map_err(|e| DriverError::new("web.navigation.failed", e.to_string()))?;
        if let Some(err) = r["errorText"].as_str() {
            let code = if err.contains("BLOCKED_BY_CLIENT") {
                "web.navigation.blocked"
            } else {
                "web.navigation.failed"
            };
            return Err(DriverError::new(code, format!("navigation failed: {err}")));
        }
        if r.get("loaderId").is_some() {
            self.wait_load(load0, deadline).await?;
        }
        self.settle(seq0, deadline).await
    }

    /// Waits until this page fired a load event after `load0` (see
    /// [`Page::load_count`]).
    pub async fn wait_load(&self, load0: u64, deadline: Deadline) -> Result<(), DriverError> {
        let mut rx = self.sh.changed.subscribe();
        loop {
            {
                let st = self.sh.st();
                if st.loads.get(&self.session).copied().unwrap_or(0) > load0 {
                    return Ok(());
                }
                if st.crashed {
                    return Err(DriverError::new("web.page.crashed", "the page crashed"));
                }
            }
            if deadline.run(rx.changed()).await.is_none() {
                return Err(DriverError::new(
                    "web.navigation.timeout",
                    "the page did not finish loading before the step deadline",
                ));
            }
        }
    }

    /// Post-action readiness: document complete, requests started since
    /// `since_seq` finished (WebSocket/EventSource and long-lived requests
    /// excluded), no visible busy marker, then a quiet window of `settle_ms`
    /// with no DOM mutation and no network activity.
    pub async fn settle(&self, since_seq: u64, deadline: Deadline) -> Result<(), DriverError> {
        let mut last_busy: Option<String> = None;
        loop {
            let pending = self.pending_requests(since_seq);
            // A popup may close itself (its evaluations then go unanswered):
            // ask it in short slices.
            let popup = self.is_popup();
            let slice = if popup {
                Deadline::after_ms(1000).min(deadline)
            } else {
                deadline
            };
            let s = match self.eval("settle", &json!({}), &json!({}), slice).await {
                Ok(v) => Some(v),
                Err(_) if self.closed() => return Ok(()),
                Err(EvalError::Transient(_)) => None,
                Err(EvalError::Fatal(_)) if popup && !deadline.expired() => None,
                Err(EvalError::Fatal(e)) => return Err(e.into()),
            };
            let mut waiting = pending > 0;
            if let Some(s) = &s {
                if s["ready"] != "complete" {
                    waiting = true;
                    last_busy = Some("document not ready".into());
                }
                if let Some(b) = s["busy"].as_str() {
                    waiting = true;
                    last_busy = Some(format!("visible busy marker {b}"));
                }
            } else {
                waiting = true;
            }
            if pending > 0 {
                last_busy = Some(format!(
                    "{pending} request(s) started by the step still in flight"
                ));
            }
            if !waiting {
                let m0 = s
                    .as_ref()
                    .map(|s| s["mutations"].clone())
                    .unwrap_or(Value::Null);
                let n0 = self.sh.st().net_seq;
                let quiet = Deadline::after_ms(self.settle_ms);
                if deadline.instant() < quiet.instant() {
                    return Ok(()); // no time left for a full quiet window
                }
                quiet.sleep().await;
                let again = self.eval("settle", &json!({}), &json!({}), deadline).await;
                if let Ok(a) = again {
                    if a["mutations"] == m0
                        && self.sh.st().net_seq == n0
                        && a["busy"].is_null()
                        && a["ready"] == "complete"
                    {
                        return Ok(());
                    }
                }
                continue;
            }
            if deadline.expired() {
                return Err(DriverError::new(
                    "web.settle.busy",
                    format!(
                        "the page stayed busy until the step deadline: {}",
                        last_busy.unwrap_or_else(|| "document not ready".into())
                    ),
                ));
            }
            self.changed_or(Duration::from_millis(100), deadline).await;
        }
    }

    /// A popup page that closed (the step closed it): nothing to settle.
    fn closed(&self) -> bool {
        let st = self.sh.st();
        st.main_session.as_deref() != Some(self.session.as_str())
            && !st.ready.contains(&self.session)
    }

    fn pending_requests(&self, since_seq: u64) -> usize {
        let st = self.sh.st();
        let now = self.sh.t0.elapsed().as_millis() as u64;
        st.inflight
            .values()
            .filter(|&&i| {
                let e = &st.network[i];
                e.seq > since_seq
                    && e.kind != "EventSource"
                    && e.kind != "WebSocket"
                    && now.saturating_sub(e.start_ms) < LONG_LIVED_REQUEST_MS
            })
            .count()
    }

    /// Mouse move + press + release at (x, y) with `count` clicks.
    pub async fn click_at(&self, x: f64, y: f64, clicks: u32) -> Result<(), DriverError> {
        let m = |t: &str, n: u32| json!({ "type": t, "x": x, "y": y, "button": "left", "buttons": if t == "mousePressed" { 1 } else { 0 }, "clickCount": n });
        self.input(
            "Input.dispatchMouseEvent",
            json!({ "type": "mouseMoved", "x": x, "y": y }),
        )
        .await?;
        for n in 1..=clicks {
            self.input("Input.dispatchMouseEvent", m("mousePressed", n))
                .await?;
            self.input("Input.dispatchMouseEvent", m("mouseReleased", n))
                .await?;
        }
        Ok(())
    }

    /// One input call. A popup that closes itself in answer to the input
    /// (a "Close" button) took the input: that is not an error.
    pub async fn input(&self, method: &str, params: Value) -> Result<(), DriverError> {
        match self.call(method, params).await {
            Ok(_) => Ok(()),
            Err(e) if e.target_gone() && self.is_popup() => Ok(()),
            Err(e @ CdpError::Protocol { .. }) => Err(DriverError::new(
                "web.input.failed",
                format!("{method}: {e}"),
            )),
            Err(e) => Err(e.into()),
        }
    }

    /// Presses a key chord (keyDown, keyUp) on the focused element.
    pub async fn press(&self, chord: &KeyChord) -> Result<(), DriverError> {
        let (key, code, vk, text) = key_definition(chord.key);
        let modifiers = (chord.alt as u8)
            | (chord.ctrl as u8) << 1
            | (chord.meta as u8) << 2
            | (chord.shift as u8) << 3;
        let shifted = match (chord.key, chord.shift) {
            (Key::Char(c), true) => c.to_uppercase().to_string(),
            _ => key.clone(),
        };
        let typed = text.is_some() && !chord.ctrl && !chord.alt && !chord.meta;
        let mut down = json!({
            "type": if typed { "keyDown" } else { "rawKeyDown" },
            "key": shifted, "code": code, "windowsVirtualKeyCode": vk, "modifiers": modifiers,
        });
        if typed {
            let t = match (chord.key, chord.shift) {
                (Key::Char(c), true) => c.to_uppercase().to_string(),
                _ => text.clone().unwrap_or_default(),
            };
            down["text"] = json!(t);
            down["unmodifiedText"] = json!(t);
        }
        self.input("Input.dispatchKeyEvent", down).await?;
        self.input(
            "Input.dispatchKeyEvent",
            json!({ "type": "keyUp", "key": shifted, "code": code, "windowsVirtualKeyCode": vk, "modifiers": modifiers }),
        )
        .await
    }
}

/// `(key, code, windowsVirtualKeyCode, text)` for a key.
pub fn key_definition(k: Key) -> (String, String, u32, Option<String>) {
    let s = |a: &str, c: &str, v: u32, t: Option<&str>| {
        (a.to_string(), c.to_string(), v, t.map(str::to_string))
    };
    match k {
        Key::Enter => s("Enter", "Enter", 13, Some("\r")),
        Key::Tab => s("Tab", "Tab", 9, None),
        Key::Escape => s("Escape", "Escape", 27, None),
        Key::Backspace => s("Backspace", "Backspace", 8, None),
        Key::Delete => s("Delete", "Delete", 46, None),
        Key::Insert => s("Insert", "Insert", 45, None),
        Key::Home => s("Home", "Home", 36, None),
        Key::End => s("End", "End", 35, None),
        Key::PageUp => s("PageUp", "PageUp", 33, None),
        Key::PageDown => s("PageDown", "PageDown", 34, None),
        Key::ArrowUp => s("ArrowUp", "ArrowUp", 38, None),
        Key::ArrowDown => s("ArrowDown", "ArrowDown", 40, None),
        Key::ArrowLeft => s("ArrowLeft", "ArrowLeft", 37, None),
        Key::ArrowRight => s("ArrowRight", "ArrowRight", 39, None),
        Key::F(n) => (format!("F{n}"), format!("F{n}"), 111 + n as u32, None),
        Key::Char(' ') => s(" ", "Space", 32, Some(" ")),
        Key::Char(c) => {
            let up = c.to_ascii_uppercase();
            let (code, vk) = if c.is_ascii_alphabetic() {
                (format!("Key{up}"), up as u32)
            } else if c.is_ascii_digit() {
                (format!("Digit{c}"), c as u32)
            } else {
                (String::new(), 0)
            };
            (c.to_string(), code, vk, Some(c.to_string()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys() {
        assert_eq!(key_definition(Key::Enter).3.as_deref(), Some("\r"));
        assert_eq!(key_definition(Key::Char('a')).1, "KeyA");
        assert_eq!(key_definition(Key::Char('a')).2, 65);
        assert_eq!(key_definition(Key::F(5)).2, 116);
    }

    #[test]
    fn spec_of_locator() {
        let l = Locator {
            role: Some("button".into()),
            name: Some("Save".into()),
            exact: Some(true),
            nth: Some(1),
            ..Default::default()
        };
        assert_eq!(
            locator_spec(&l),
            json!({ "role": "button", "name": "Save", "exact": true, "nth": 1 })
        );
    }
}
