//! A typed builder for flows and steps, so Rust code writes a flow without
//! JSON strings. [`FlowBuilder::build`] validates the result exactly like a
//! flow file (same errors, same JSON pointers), and [`FlowBuilder::text`]
//! is the flow file it stands for.
//!
//! ```
//! use qa_core::flow::build::{FlowBuilder, StepSpec, Text};
//! use qa_core::flow::Locator;
//!
//! let flow = FlowBuilder::browser("http://127.0.0.1:8080/login")
//!     .name("sign in")
//!     .step(StepSpec::fill(Locator::label("Username"), "staff"))
//!     .step(StepSpec::click(Locator::role("button", "Sign in")))
//!     .step(StepSpec::assert_text(Locator::test_id("greeting"), Text::includes("Welcome")))
//!     .build()
//!     .expect("a valid flow");
//! assert_eq!(flow.steps.len(), 3);
//!
//! let shell = FlowBuilder::terminal(["sh"])
//!     .step(StepSpec::send_text("echo hi"))
//!     .step(StepSpec::send_keys(["Enter"]))
//!     .step(StepSpec::wait_for_text("hi"))
//!     .build()
//!     .unwrap();
//! assert_eq!(shell.kind().as_str(), "terminal");
//! ```

use super::{Flow, FlowError, Locator};
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::path::PathBuf;

/// A text matcher: exactly one of `equals`, `includes`, `regex`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Text {
    /// The whole text equals this.
    Equals(String),
    /// The text contains this.
    Includes(String),
    /// The text matches this regular expression (multi-line mode).
    Regex(String),
}

impl Text {
    /// [`Text::Equals`].
    pub fn equals(s: impl Into<String>) -> Text {
        Text::Equals(s.into())
    }

    /// [`Text::Includes`].
    pub fn includes(s: impl Into<String>) -> Text {
        Text::Includes(s.into())
    }

    /// [`Text::Regex`].
    pub fn regex(s: impl Into<String>) -> Text {
        Text::Regex(s.into())
    }

    /// The field name and value as written in a flow.
    fn field(&self) -> (&'static str, &str) {
        match self {
            Text::Equals(s) => ("equals", s),
            Text::Includes(s) => ("includes", s),
            Text::Regex(s) => ("regex", s),
        }
    }

    /// As a matcher object (`{ "equals": … }`).
    fn object(&self) -> Value {
        let (k, v) = self.field();
        json!({ k: v })
    }
}

impl Locator {
    /// `{ "testId": id }` (browser `data-testid`).
    pub fn test_id(id: impl Into<String>) -> Locator {
        Locator {
            test_id: Some(id.into()),
            ..Locator::default()
        }
    }

    /// `{ "role": role, "name": name }`.
    pub fn role(role: impl Into<String>, name: impl Into<String>) -> Locator {
        Locator {
            role: Some(role.into()),
            name: Some(name.into()),
            ..Locator::default()
        }
    }

    /// `{ "role": role }` without a name.
    pub fn role_only(role: impl Into<String>) -> Locator {
        Locator {
            role: Some(role.into()),
            ..Locator::default()
        }
    }

    /// `{ "label": text }` (browser).
    pub fn label(text: impl Into<String>) -> Locator {
        Locator {
            label: Some(text.into()),
            ..Locator::default()
        }
    }

    /// `{ "placeholder": text }` (browser).
    pub fn placeholder(text: impl Into<String>) -> Locator {
        Locator {
            placeholder: Some(text.into()),
            ..Locator::default()
        }
    }

    /// `{ "text": text }` (browser).
    pub fn text(text: impl Into<String>) -> Locator {
        Locator {
            text: Some(text.into()),
            ..Locator::default()
        }
    }

    /// `{ "css": selector }` (browser).
    pub fn css(selector: impl Into<String>) -> Locator {
        Locator {
            css: Some(selector.into()),
            ..Locator::default()
        }
    }

    /// `{ "automationId": id }` (desktop).
    pub fn automation_id(id: impl Into<String>) -> Locator {
        Locator {
            automation_id: Some(id.into()),
            ..Locator::default()
        }
    }

    /// `{ "name": name }` alone (desktop).
    pub fn named(name: impl Into<String>) -> Locator {
        Locator {
            name: Some(name.into()),
            ..Locator::default()
        }
    }

    /// Match the text exactly (whole, case-sensitive).
    pub fn exact(mut self) -> Locator {
        self.exact = Some(true);
        self
    }

    /// The `n`th (0-based) of several matches (browser).
    pub fn nth(mut self, n: u32) -> Locator {
        self.nth = Some(n);
        self
    }

    /// The `n`th (0-based) of several matches (desktop).
    pub fn occurrence(mut self, n: u32) -> Locator {
        self.occurrence = Some(n);
        self
    }
}

/// One flow step, built with typed arguments. Converts into the step's
/// JSON ([`Value`]) for [`crate::runner::interactive::Interactive::act`].
#[derive(Debug, Clone, PartialEq)]
pub struct StepSpec(Map<String, Value>);

impl StepSpec {
    /// A step of `action` with no arguments yet (any action of the flow
    /// format; add its arguments with [`StepSpec::with`]).
    pub fn new(action: &str) -> StepSpec {
        let mut m = Map::new();
        m.insert("action".into(), json!(action));
        StepSpec(m)
    }

    /// Sets argument `key` (its flow name, e.g. `"expectResponse"`).
    pub fn with(mut self, key: &str, value: impl Serialize) -> StepSpec {
        self.0.insert(
            key.into(),
            serde_json::to_value(value).unwrap_or(Value::Null),
        );
        self
    }

    /// Sets the step's element.
    pub fn on(self, locator: Locator) -> StepSpec {
        self.with("locator", locator)
    }

    /// Sets the step's own deadline.
    pub fn timeout_ms(self, ms: u64) -> StepSpec {
        self.with("timeoutMs", ms)
    }

    /// Names the step (its evidence files use the name).
    pub fn named(self, name: &str) -> StepSpec {
        self.with("name", name)
    }

    /// The action name.
    pub fn action(&self) -> &str {
        self.0.get("action").and_then(Value::as_str).unwrap_or("")
    }

    fn matching(self, t: &Text) -> StepSpec {
        let (k, v) = t.field();
        self.with(k, v)
    }

    /// Browser: open `path`, relative to the base URL.
    pub fn goto(path: &str) -> StepSpec {
        StepSpec::new("goto").with("path", path)
    }

    /// Browser: open an absolute `url` (of the target's origins).
    pub fn goto_url(url: &str) -> StepSpec {
        StepSpec::new("goto").with("url", url)
    }

    /// Browser: reload the page.
    pub fn reload() -> StepSpec {
        StepSpec::new("reload")
    }

    /// Browser: click (desktop: click through accessibility).
    pub fn click(l: Locator) -> StepSpec {
        StepSpec::new("click").on(l)
    }

    /// Browser: double-click.
    pub fn double_click(l: Locator) -> StepSpec {
        StepSpec::new("doubleClick").on(l)
    }

    /// Browser: hover.
    pub fn hover(l: Locator) -> StepSpec {
        StepSpec::new("hover").on(l)
    }

    /// Browser: fill an input with `value`.
    pub fn fill(l: Locator, value: &str) -> StepSpec {
        StepSpec::new("fill").on(l).with("value", value)
    }

    /// Browser: press `key` (`Enter`, `Control+A`, …) on the focused element.
    pub fn press(key: &str) -> StepSpec {
        StepSpec::new("press").with("key", key)
    }

    /// Browser: check a checkbox.
    pub fn check(l: Locator) -> StepSpec {
        StepSpec::new("check").on(l)
    }

    /// Browser: uncheck a checkbox.
    pub fn uncheck(l: Locator) -> StepSpec {
        StepSpec::new("uncheck").on(l)
    }

    /// Browser: select the option whose value is `value`.
    pub fn select_option(l: Locator, value: &str) -> StepSpec {
        StepSpec::new("selectOption").on(l).with("value", value)
    }

    /// Browser: wait until the element is visible.
    pub fn wait_for(l: Locator) -> StepSpec {
        StepSpec::new("waitFor").on(l)
    }

    /// Browser: the element is visible.
    pub fn assert_visible(l: Locator) -> StepSpec {
        StepSpec::new("assertVisible").on(l)
    }

    /// Browser: the element is hidden or absent.
    pub fn assert_hidden(l: Locator) -> StepSpec {
        StepSpec::new("assertHidden").on(l)
    }

    /// Browser: the element is enabled.
    pub fn assert_enabled(l: Locator) -> StepSpec {
        StepSpec::new("assertEnabled").on(l)
    }

    /// Browser: the element is disabled.
    pub fn assert_disabled(l: Locator) -> StepSpec {
        StepSpec::new("assertDisabled").on(l)
    }

    /// Browser: the element is checked.
    pub fn assert_checked(l: Locator) -> StepSpec {
        StepSpec::new("assertChecked").on(l)
    }

    /// Browser and desktop: the element's text matches.
    pub fn assert_text(l: Locator, t: Text) -> StepSpec {
        StepSpec::new("assertText").on(l).matching(&t)
    }

    /// Browser: an input's value matches.
    pub fn assert_value(l: Locator, t: Text) -> StepSpec {
        StepSpec::new("assertValue").on(l).matching(&t)
    }

    /// Browser: exactly `count` elements match.
    pub fn assert_count(l: Locator, count: u32) -> StepSpec {
        StepSpec::new("assertCount").on(l).with("count", count)
    }

    /// Browser: the page's URL matches.
    pub fn assert_url(t: Text) -> StepSpec {
        StepSpec::new("assertURL").matching(&t)
    }

    /// Browser and desktop: a screenshot named `name`.
    pub fn screenshot(name: &str) -> StepSpec {
        StepSpec::new("screenshot").named(name)
    }

    /// Terminal: wait until the screen shows `text`.
    pub fn wait_for_text(text: &str) -> StepSpec {
        StepSpec::new("waitForText").with("text", text)
    }

    /// Terminal: wait until the screen stops changing.
    pub fn wait_for_stable() -> StepSpec {
        StepSpec::new("waitForStable")
    }

    /// Terminal: type `text`.
    pub fn send_text(text: &str) -> StepSpec {
        StepSpec::new("sendText").with("text", text)
    }

    /// Terminal: press keys (`Enter`, `Ctrl+C`, `Up`, …).
    pub fn send_keys<I, S>(keys: I) -> StepSpec
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let keys: Vec<String> = keys.into_iter().map(Into::into).collect();
        StepSpec::new("sendKeys").with("keys", keys)
    }

    /// Terminal: the screen shows `text`.
    pub fn assert_screen_text(text: &str) -> StepSpec {
        StepSpec::new("assertText").with("text", text)
    }

    /// Terminal: the screen does not show `text`.
    pub fn assert_no_screen_text(text: &str) -> StepSpec {
        StepSpec::new("assertNotText").with("text", text)
    }

    /// Terminal and desktop: capture the screen (text and PNG).
    pub fn capture() -> StepSpec {
        StepSpec::new("capture")
    }

    /// Desktop: wait for the application's window whose title matches.
    pub fn wait_for_window(title: Text) -> StepSpec {
        StepSpec::new("waitForWindow").with("title", title.object())
    }

    /// Desktop: activate (press, toggle) the element.
    pub fn activate(l: Locator) -> StepSpec {
        StepSpec::new("activate").on(l)
    }

    /// Desktop: set the element's value.
    pub fn set_value(l: Locator, value: &str) -> StepSpec {
        StepSpec::new("setValue").on(l).with("value", value)
    }

    /// Desktop: the element has `state` (`checked`, `unchecked`, `enabled`, …).
    pub fn assert_state(l: Locator, state: &str) -> StepSpec {
        StepSpec::new("assertState").on(l).with("state", state)
    }
}

impl From<StepSpec> for Value {
    fn from(s: StepSpec) -> Value {
        Value::Object(s.0)
    }
}

/// A flow under construction.
#[derive(Debug, Clone)]
pub struct FlowBuilder {
    flow: Map<String, Value>,
    steps: Vec<Value>,
    base_dir: PathBuf,
}

impl FlowBuilder {
    fn with_target(target: Value) -> FlowBuilder {
        let mut flow = Map::new();
        flow.insert("target".into(), target);
        FlowBuilder {
            flow,
            steps: Vec::new(),
            base_dir: PathBuf::from("."),
        }
    }

    /// A flow on a web page in a real browser.
    pub fn browser(url: &str) -> FlowBuilder {
        FlowBuilder::with_target(json!({ "url": url }))
    }

    /// A flow on a terminal program in a real PTY.
    pub fn terminal<I, S>(argv: I) -> FlowBuilder
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let argv: Vec<String> = argv.into_iter().map(Into::into).collect();
        FlowBuilder::with_target(json!({ "command": { "argv": argv } }))
    }

    /// A flow on a desktop application the run launches.
    pub fn desktop<I, S>(argv: I) -> FlowBuilder
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let argv: Vec<String> = argv.into_iter().map(Into::into).collect();
        FlowBuilder::with_target(json!({ "application": { "launch": { "argv": argv } } }))
    }

    /// The flow's name.
    pub fn name(mut self, name: &str) -> FlowBuilder {
        self.flow.insert("name".into(), json!(name));
        self
    }

    /// Browser: a further exact origin the page may reach.
    pub fn allow_origin(mut self, origin: &str) -> FlowBuilder {
        if let Some(t) = self.flow.get_mut("target").and_then(Value::as_object_mut) {
            let list = t.entry("allowedOrigins").or_insert_with(|| json!([]));
            if let Some(a) = list.as_array_mut() {
                a.push(json!(origin));
            }
        }
        self
    }

    /// Terminal or desktop: an environment variable of the program.
    pub fn env(mut self, key: &str, value: &str) -> FlowBuilder {
        if let Some(p) = self.program_mut() {
            let env = p.entry("env").or_insert_with(|| json!({}));
            if let Some(e) = env.as_object_mut() {
                e.insert(key.into(), json!(value));
            }
        }
        self
    }

    /// Desktop: run inside an owned virtual display and session bus.
    pub fn virtual_display(mut self) -> FlowBuilder {
        if let Some(a) = self
            .flow
            .get_mut("target")
            .and_then(|t| t.get_mut("application"))
            .and_then(Value::as_object_mut)
        {
            a.insert("virtualDisplay".into(), json!(true));
        }
        self
    }

    /// Browser viewport in CSS pixels.
    pub fn viewport(mut self, width: u32, height: u32) -> FlowBuilder {
        self.flow.insert(
            "viewport".into(),
            json!({ "width": width, "height": height }),
        );
        self
    }

    /// Terminal size.
    pub fn size(mut self, cols: u16, rows: u16) -> FlowBuilder {
        self.flow
            .insert("viewport".into(), json!({ "cols": cols, "rows": rows }));
        self
    }

    /// The whole flow's deadline.
    pub fn timeout_ms(mut self, ms: u64) -> FlowBuilder {
        self.flow.insert("timeoutMs".into(), json!(ms));
        self
    }

    /// Where relative paths (`cwd`, `serve`) resolve (default `.`).
    pub fn base_dir(mut self, dir: impl Into<PathBuf>) -> FlowBuilder {
        self.base_dir = dir.into();
        self
    }

    /// Appends a step.
    pub fn step(mut self, step: StepSpec) -> FlowBuilder {
        self.steps.push(step.into());
        self
    }

    /// Appends steps.
    pub fn steps(mut self, steps: impl IntoIterator<Item = StepSpec>) -> FlowBuilder {
        self.steps.extend(steps.into_iter().map(Value::from));
        self
    }

    fn program_mut(&mut self) -> Option<&mut Map<String, Value>> {
        let t = self.flow.get_mut("target")?;
        if t.get("command").is_some() {
            t.get_mut("command")?.as_object_mut()
        } else {
            t.get_mut("application")?.get_mut("launch")?.as_object_mut()
        }
    }

    /// The flow as JSON.
    pub fn to_json(&self) -> Value {
        let mut m = self.flow.clone();
        m.insert("steps".into(), Value::Array(self.steps.clone()));
        Value::Object(m)
    }

    /// The flow file this builder stands for (pretty JSON, valid JSONC).
    pub fn text(&self) -> String {
        serde_json::to_string_pretty(&self.to_json()).unwrap_or_default()
    }

    /// Validates the flow exactly as `ui-qa check` validates a file.
    pub fn build(&self) -> Result<Flow, FlowError> {
        Flow::parse(&self.text(), &self.base_dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_flows_are_the_flow_files_they_stand_for() {
        let b = FlowBuilder::browser("http://127.0.0.1:8080/")
            .name("n")
            .allow_origin("http://127.0.0.1:9090")
            .viewport(800, 600)
            .step(StepSpec::click(Locator::role("button", "Go").exact()))
            .step(StepSpec::assert_count(Locator::css("li").nth(0), 1).timeout_ms(500));
        assert_eq!(
            b.to_json(),
            json!({
                "target": { "url": "http://127.0.0.1:8080/", "allowedOrigins": ["http://127.0.0.1:9090"] },
                "name": "n",
                "viewport": { "width": 800, "height": 600 },
                "steps": [
                    { "action": "click", "locator": { "role": "button", "name": "Go", "exact": true } },
                    { "action": "assertCount", "locator": { "css": "li", "nth": 0 }, "count": 1, "timeoutMs": 500 },
                ],
            })
        );
        assert_eq!(b.build().unwrap().steps.len(), 2);

        let d = FlowBuilder::desktop(["/usr/bin/python3", "app.py"])
            .virtual_display()
            .env("LANG", "C")
            .step(StepSpec::wait_for_window(Text::equals("ui-qa fixture")))
            .step(StepSpec::activate(Locator::automation_id(
                "subscribe-check",
            )))
            .step(StepSpec::assert_state(
                Locator::role("check box", "Subscribe"),
                "checked",
            ));
        let f = d.build().unwrap();
        assert_eq!(f.kind().as_str(), "desktop");
        assert_eq!(
            d.to_json()["target"]["application"]["launch"]["env"]["LANG"],
            "C"
        );
    }

    #[test]
    fn a_wrong_step_fails_like_a_flow_file_with_its_pointer() {
        let e = FlowBuilder::terminal(["sh"])
            .step(StepSpec::send_text("x"))
            .step(StepSpec::click(Locator::test_id("x")))
            .build()
            .unwrap_err();
        assert!(e.pointer.starts_with("/steps/1"), "{e:?}");
    }
}
