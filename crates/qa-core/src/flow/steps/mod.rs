//! Actions: what each step does, per target kind.
//!
//! Each kind has its own action enum because the same action name can take
//! different arguments on different surfaces (`assertText` on a page takes a
//! locator; on a terminal it takes text and an optional row).

use crate::flow::locator::Locator;
use crate::flow::matcher::{Matcher, Pattern};
use crate::flow::target::TargetKind;
use crate::keys::KeyName;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Whether the runner performs a step once or retries it until it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum StepClass {
    /// Dispatched once; never retried after dispatch.
    Action,
    /// Asked for a fresh verdict until it holds or the step deadline passes.
    Assertion,
    /// Handled by the runner itself (`waitForTimeout`).
    Runner,
}

/// A problem found while validating a step's arguments.
#[derive(Debug, Clone)]
pub(crate) struct ArgProblem {
    /// Pointer suffix inside the step (e.g. `/locator`).
    pub pointer: String,
    /// Stable code suffix.
    pub code: crate::flow::FlowErrorCode,
    /// What is wrong and how to fix it.
    pub message: String,
}

pub(crate) fn problem(
    pointer: &str,
    code: crate::flow::FlowErrorCode,
    message: impl Into<String>,
) -> ArgProblem {
    ArgProblem {
        pointer: pointer.to_string(),
        code,
        message: message.into(),
    }
}

/// Behaviour every action's argument struct shares.
pub(crate) trait ActionArgs {
    fn locators(&self) -> Vec<&Locator> {
        Vec::new()
    }
    fn values(&self) -> Vec<&str> {
        Vec::new()
    }
    fn validate(&self) -> Result<(), ArgProblem> {
        Ok(())
    }
}

/// Checks a locator outside a step (the auth file's form fields), with
/// the same rules and messages as in a step.
pub fn check_locator_at(l: &Locator, at: &str) -> Result<(), crate::flow::FlowError> {
    check_locator(l, "")
        .map_err(|p| crate::flow::FlowError::new(p.code, format!("{at}{}", p.pointer), p.message))
}

fn check_locator(l: &Locator, at: &str) -> Result<(), ArgProblem> {
    use crate::flow::FlowErrorCode as C;
    let kinds = l.kinds();
    if kinds.is_empty() {
        return Err(problem(
            at,
            C::InvalidLocator,
            "locator needs exactly one of testId, role, name, label, placeholder, text, css, automationId, path",
        ));
    }
    if kinds.len() > 1 {
        let names: Vec<&str> = kinds.iter().map(|k| k.field()).collect();
        return Err(problem(
            at,
            C::InvalidLocator,
            format!(
                "locator sets {} kinds ({}); keep exactly one",
                kinds.len(),
                names.join(", ")
            ),
        ));
    }
    if l.nth.is_some() && l.occurrence.is_some() {
        return Err(problem(
            at,
            C::InvalidLocator,
            "use either nth (browser) or occurrence (desktop), not both",
        ));
    }
    for (field, v) in [
        ("testId", &l.test_id),
        ("role", &l.role),
        ("label", &l.label),
        ("placeholder", &l.placeholder),
        ("text", &l.text),
        ("css", &l.css),
        ("automationId", &l.automation_id),
    ] {
        if let Some(v) = v {
            if v.is_empty() {
                return Err(problem(
                    &format!("{at}/{field}"),
                    C::OutOfRange,
                    "must not be empty",
                ));
            }
        }
    }
    if let Some(p) = &l.path {
        if p.is_empty() || p.len() > 32 {
            return Err(problem(
                &format!("{at}/path"),
                C::OutOfRange,
                "path needs 1 to 32 segments",
            ));
        }
    }
    Ok(())
}

fn check_matcher(m: &Matcher, at: &str, what: &str) -> Result<(), ArgProblem> {
    use crate::flow::FlowErrorCode as C;
    if m.count_set() != 1 {
        return Err(problem(
            at,
            C::InvalidMatcher,
            format!("{what} needs exactly one of equals, includes, regex"),
        ));
    }
    Ok(())
}

fn check_text_or_regex(text: &Option<String>, regex: &Option<Pattern>) -> Result<(), ArgProblem> {
    use crate::flow::FlowErrorCode as C;
    match (text, regex) {
        (Some(_), Some(_)) | (None, None) => Err(problem(
            "",
            C::InvalidMatcher,
            "needs exactly one of text, regex",
        )),
        (Some(t), None) if t.is_empty() => {
            Err(problem("/text", C::OutOfRange, "must not be empty"))
        }
        _ => Ok(()),
    }
}

fn check_printable(text: &str, at: &str) -> Result<(), ArgProblem> {
    if let Some(c) = text.chars().find(|c| c.is_control()) {
        return Err(problem(
            at,
            crate::flow::FlowErrorCode::ControlCharacter,
            format!(
                "contains the control character U+{:04X}; send it with sendKeys (e.g. \"Enter\", \"Ctrl+C\")",
                c as u32
            ),
        ));
    }
    Ok(())
}

macro_rules! actions {
    (
        $(#[$meta:meta])*
        $enum:ident, $kind:expr, {
            $( $(#[$vmeta:meta])* $variant:ident = $name:literal ($args:ident) : $class:ident ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Serialize)]
        #[serde(tag = "action")]
        pub enum $enum {
            $( $(#[$vmeta])* #[serde(rename = $name)] $variant($args), )*
        }

        impl $enum {
            /// Every action name of this kind, as written in flows.
            pub const NAMES: &'static [&'static str] = &[$($name),*];
            /// The target kind these actions belong to.
            pub const KIND: TargetKind = $kind;

            /// The action name as written in the flow.
            pub fn name(&self) -> &'static str {
                match self { $( Self::$variant(_) => $name, )* }
            }

            /// Once, retried, or runner-handled.
            pub fn class(&self) -> StepClass {
                match self { $( Self::$variant(_) => StepClass::$class, )* }
            }

            pub(crate) fn parse(
                name: &str,
                value: serde_json::Value,
            ) -> Option<Result<Self, serde_path_to_error::Error<serde_json::Error>>> {
                match name {
                    $( $name => Some(serde_path_to_error::deserialize(value).map(Self::$variant)), )*
                    _ => None,
                }
            }

            pub(crate) fn args(&self) -> &dyn ActionArgs {
                match self { $( Self::$variant(a) => a, )* }
            }

            /// The JSON Schema of each action's arguments, by action name
            /// (what the schema generator publishes).
            pub fn arg_schemas(
                generator: &mut schemars::SchemaGenerator,
            ) -> Vec<(&'static str, schemars::Schema)> {
                vec![ $( ($name, <$args as JsonSchema>::json_schema(generator)) ),* ]
            }
        }
    };
}

macro_rules! args {
    (
        $(#[$meta:meta])*
        $name:ident { $( $(#[$fmeta:meta])* $field:ident : $ty:ty ),* $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        #[allow(missing_docs)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
        }
    };
}

/// `ActionArgs` for arguments whose only locator is a required `locator`.
macro_rules! element_args {
    ($t:ident) => {
        impl ActionArgs for $t {
            fn locators(&self) -> Vec<&Locator> {
                vec![&self.locator]
            }
            fn validate(&self) -> Result<(), ArgProblem> {
                check_locator(&self.locator, "/locator")
            }
        }
    };
}

/// `ActionArgs` for arguments whose only locator is an optional `locator`.
macro_rules! optional_element_args {
    ($t:ident) => {
        impl ActionArgs for $t {
            fn locators(&self) -> Vec<&Locator> {
                self.locator.iter().collect()
            }
            fn validate(&self) -> Result<(), ArgProblem> {
                match &self.locator {
                    Some(l) => check_locator(l, "/locator"),
                    None => Ok(()),
                }
            }
        }
    };
}

mod browser;
mod desktop;
mod terminal;

pub use browser::*;
pub use desktop::*;
pub use terminal::*;

/// An action of any kind.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Action {
    /// A browser action.
    Browser(BrowserAction),
    /// A terminal action.
    Terminal(TerminalAction),
    /// A desktop action.
    Desktop(DesktopAction),
}

impl Action {
    /// The action name as written in the flow.
    pub fn name(&self) -> &'static str {
        match self {
            Action::Browser(a) => a.name(),
            Action::Terminal(a) => a.name(),
            Action::Desktop(a) => a.name(),
        }
    }

    /// Once, retried, or runner-handled.
    pub fn class(&self) -> StepClass {
        match self {
            Action::Browser(a) => a.class(),
            Action::Terminal(a) => a.class(),
            Action::Desktop(a) => a.class(),
        }
    }

    fn args(&self) -> &dyn ActionArgs {
        match self {
            Action::Browser(a) => a.args(),
            Action::Terminal(a) => a.args(),
            Action::Desktop(a) => a.args(),
        }
    }

    /// Locators used by this action.
    pub fn locators(&self) -> Vec<&Locator> {
        self.args().locators()
    }

    /// User data strings in this action (never echoed in progress).
    pub fn values(&self) -> Vec<&str> {
        self.args().values()
    }

    pub(crate) fn validate(&self) -> Result<(), ArgProblem> {
        self.args().validate()
    }

    /// Action names valid for a target kind.
    pub fn names_for(kind: TargetKind) -> &'static [&'static str] {
        match kind {
            TargetKind::Browser => BrowserAction::NAMES,
            TargetKind::Terminal => TerminalAction::NAMES,
            TargetKind::Desktop => DesktopAction::NAMES,
        }
    }

    /// Waits for `ms` if this is `waitForTimeout`.
    pub fn wait_for_timeout_ms(&self) -> Option<u64> {
        match self {
            Action::Browser(BrowserAction::WaitForTimeout(w))
            | Action::Terminal(TerminalAction::WaitForTimeout(w))
            | Action::Desktop(DesktopAction::WaitForTimeout(w)) => Some(w.ms),
            _ => None,
        }
    }
}
