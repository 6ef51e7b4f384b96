//! Desktop actions and their arguments.

use super::*;

// ---------------------------------------------------------------- desktop

/// Accessibility states `assertState` can check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ElementState {
    /// Enabled (sensitive).
    Enabled,
    /// Disabled.
    Disabled,
    /// Checked / pressed.
    Checked,
    /// Not checked.
    Unchecked,
    /// Has keyboard focus.
    Focused,
    /// Selected.
    Selected,
    /// Visible / showing.
    Visible,
    /// Expanded.
    Expanded,
    /// Collapsed.
    Collapsed,
}

args!(
    /// `waitForWindow`: a window (optionally with a title) exists.
    WaitForWindow { #[serde(skip_serializing_if = "Option::is_none")] title: Option<Matcher> }
);
impl ActionArgs for WaitForWindow {
    fn validate(&self) -> Result<(), ArgProblem> {
        match &self.title {
            Some(m) => check_matcher(m, "/title", "title"),
            None => Ok(()),
        }
    }
}
args!(
    /// An action on one element.
    ElementAction { locator: Locator }
);
element_args!(ElementAction);
args!(
    /// `snapshotAccessibility` on desktop (optionally rooted at an element).
    DesktopSnapshot { #[serde(skip_serializing_if = "Option::is_none")] locator: Option<Locator> }
);
optional_element_args!(DesktopSnapshot);
args!(
    /// `setValue`: set text or a numeric value through accessibility.
    SetValue { locator: Locator, value: String }
);
impl ActionArgs for SetValue {
    fn locators(&self) -> Vec<&Locator> {
        vec![&self.locator]
    }
    fn values(&self) -> Vec<&str> {
        vec![&self.value]
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        check_locator(&self.locator, "/locator")
    }
}
args!(
    /// `inputText`: type text (focusing `locator` first).
    InputText { text: String, #[serde(skip_serializing_if = "Option::is_none")] locator: Option<Locator> }
);
impl ActionArgs for InputText {
    fn locators(&self) -> Vec<&Locator> {
        self.locator.iter().collect()
    }
    fn values(&self) -> Vec<&str> {
        vec![&self.text]
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        check_printable(&self.text, "/text")?;
        match &self.locator {
            Some(l) => check_locator(l, "/locator"),
            None => Ok(()),
        }
    }
}
args!(
    /// `pressKey`: one key chord.
    PressKey { key: KeyName }
);
impl ActionArgs for PressKey {}
args!(
    /// Desktop text wait/assert: an element (or any element) whose text matches.
    DesktopTextAssert {
        #[serde(skip_serializing_if = "Option::is_none")] locator: Option<Locator>,
        #[serde(skip_serializing_if = "Option::is_none")] equals: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")] includes: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")] regex: Option<Pattern>,
    }
);
impl DesktopTextAssert {
    /// The matcher written inline in the step.
    pub fn matcher(&self) -> Matcher {
        Matcher::from_parts(&self.equals, &self.includes, &self.regex)
    }
}
impl ActionArgs for DesktopTextAssert {
    fn locators(&self) -> Vec<&Locator> {
        self.locator.iter().collect()
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        if let Some(l) = &self.locator {
            check_locator(l, "/locator")?;
        }
        check_matcher(&self.matcher(), "", "the text assertion")
    }
}
args!(
    /// `assertState`: an accessibility state or value.
    StateAssert {
        locator: Locator,
        #[serde(skip_serializing_if = "Option::is_none")] state: Option<ElementState>,
        #[serde(skip_serializing_if = "Option::is_none")] value: Option<Matcher>,
    }
);
impl ActionArgs for StateAssert {
    fn locators(&self) -> Vec<&Locator> {
        vec![&self.locator]
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        check_locator(&self.locator, "/locator")?;
        if self.state.is_some() == self.value.is_some() {
            return Err(problem(
                "",
                crate::flow::FlowErrorCode::MissingField,
                "assertState needs exactly one of state, value",
            ));
        }
        match &self.value {
            Some(m) => check_matcher(m, "/value", "value"),
            None => Ok(()),
        }
    }
}

/// Which output of the launched application `assertOutput` reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum OutputStream {
    /// Standard output (default).
    #[default]
    Stdout,
    /// Standard error.
    Stderr,
}

args!(
    /// `assertOutput`: what the launched application printed (a dialog's
    /// answer, a tool's report), one trailing newline ignored.
    OutputAssert {
        #[serde(skip_serializing_if = "Option::is_none")] stream: Option<OutputStream>,
        #[serde(skip_serializing_if = "Option::is_none")] equals: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")] includes: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")] regex: Option<Pattern>,
    }
);
impl OutputAssert {
    /// The matcher written inline in the step.
    pub fn matcher(&self) -> Matcher {
        Matcher::from_parts(&self.equals, &self.includes, &self.regex)
    }
}
impl ActionArgs for OutputAssert {
    fn validate(&self) -> Result<(), ArgProblem> {
        check_matcher(&self.matcher(), "", "the output assertion")
    }
}

actions!(
    /// Actions on a desktop application.
    DesktopAction, TargetKind::Desktop, {
        /// Wait for a window.
        WaitForWindow = "waitForWindow" (WaitForWindow): Assertion,
        /// Raise and focus the window.
        ActivateWindow = "activateWindow" (NoArgs): Action,
        /// Invoke the element's default action.
        Activate = "activate" (ElementAction): Action,
        /// Click the element with the pointer (the centre of its extents).
        Click = "click" (ElementAction): Action,
        /// Select the element in its list, tree or table (AT-SPI Selection).
        Select = "select" (ElementAction): Action,
        /// Accessibility snapshot.
        SnapshotAccessibility = "snapshotAccessibility" (DesktopSnapshot): Action,
        /// Set a value through accessibility.
        SetValue = "setValue" (SetValue): Action,
        /// Type text.
        InputText = "inputText" (InputText): Action,
        /// Press a key chord.
        PressKey = "pressKey" (PressKey): Action,
        /// Sleep.
        WaitForTimeout = "waitForTimeout" (WaitForTimeout): Runner,
        /// Wait for text.
        WaitForText = "waitForText" (DesktopTextAssert): Assertion,
        /// Element text matches.
        AssertText = "assertText" (DesktopTextAssert): Assertion,
        /// Element state or value.
        AssertState = "assertState" (StateAssert): Assertion,
        /// Window screenshot.
        Screenshot = "screenshot" (NoArgs): Action,
        /// Window screenshot plus accessibility snapshot.
        Capture = "capture" (NoArgs): Action,
        /// The launched application has exited (with a code).
        AssertProcessExited = "assertProcessExited" (ExitAssert): Assertion,
        /// What the launched application printed.
        AssertOutput = "assertOutput" (OutputAssert): Assertion,
    }
);
