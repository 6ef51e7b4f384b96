//! Locators: how a step names an element.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a step finds one element. Exactly one kind field is set; `name`
/// qualifies `role` (or, on desktop, stands alone).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Locator {
    /// `data-testid` attribute (browser).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test_id: Option<String>,
    /// ARIA role (browser) or platform/portable role (desktop).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Accessible name; with `role`, or alone on desktop.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Text of the associated label (browser).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Placeholder text (browser).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
    /// Visible text (browser).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// CSS selector (browser only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub css: Option<String>,
    /// Platform automation id / accessible id (desktop).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub automation_id: Option<String>,
    /// Path of `{role, name}` segments from the window down (desktop).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<Vec<PathSegment>>,
    /// Exact (whole, case-sensitive) text match instead of substring.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exact: Option<bool>,
    /// Explicit 0-based choice among several matches (browser).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 10000))]
    pub nth: Option<u32>,
    /// Explicit 0-based choice among several matches (desktop).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 10000))]
    pub occurrence: Option<u32>,
}

/// One segment of a desktop `path` locator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PathSegment {
    /// Role of this ancestor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Name of this ancestor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// The kind of a locator, for driver admission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum LocatorKind {
    /// `testId`.
    TestId,
    /// `role` (optionally with `name`).
    Role,
    /// `name` alone.
    Name,
    /// `label`.
    Label,
    /// `placeholder`.
    Placeholder,
    /// `text`.
    Text,
    /// `css`.
    Css,
    /// `automationId`.
    AutomationId,
    /// `path`.
    Path,
}

impl LocatorKind {
    /// The field name as written in a flow.
    pub fn field(self) -> &'static str {
        match self {
            LocatorKind::TestId => "testId",
            LocatorKind::Role => "role",
            LocatorKind::Name => "name",
            LocatorKind::Label => "label",
            LocatorKind::Placeholder => "placeholder",
            LocatorKind::Text => "text",
            LocatorKind::Css => "css",
            LocatorKind::AutomationId => "automationId",
            LocatorKind::Path => "path",
        }
    }
}

impl Locator {
    /// The kind fields that are set (validation requires exactly one).
    pub fn kinds(&self) -> Vec<LocatorKind> {
        let mut k = Vec::new();
        if self.test_id.is_some() {
            k.push(LocatorKind::TestId);
        }
        if self.role.is_some() {
            k.push(LocatorKind::Role);
        }
        if self.label.is_some() {
            k.push(LocatorKind::Label);
        }
        if self.placeholder.is_some() {
            k.push(LocatorKind::Placeholder);
        }
        if self.text.is_some() {
            k.push(LocatorKind::Text);
        }
        if self.css.is_some() {
            k.push(LocatorKind::Css);
        }
        if self.automation_id.is_some() {
            k.push(LocatorKind::AutomationId);
        }
        if self.path.is_some() {
            k.push(LocatorKind::Path);
        }
        if self.name.is_some() && self.role.is_none() {
            k.push(LocatorKind::Name);
        }
        k
    }

    /// The single kind of a validated locator.
    pub fn kind(&self) -> LocatorKind {
        self.kinds().first().copied().unwrap_or(LocatorKind::Name)
    }

    /// Whether text comparison must be exact.
    pub fn is_exact(&self) -> bool {
        self.exact.unwrap_or(false)
    }

    /// A short description safe to print (the flow's own words only).
    pub fn describe(&self) -> String {
        let q = |s: &str| format!("{s:?}");
        let mut d = match self.kind() {
            LocatorKind::TestId => format!("testId={}", q(self.test_id.as_deref().unwrap_or(""))),
            LocatorKind::Role => match &self.name {
                Some(n) => format!("role={} name={}", self.role.as_deref().unwrap_or(""), q(n)),
                None => format!("role={}", self.role.as_deref().unwrap_or("")),
            },
            LocatorKind::Name => format!("name={}", q(self.name.as_deref().unwrap_or(""))),
            LocatorKind::Label => format!("label={}", q(self.label.as_deref().unwrap_or(""))),
            LocatorKind::Placeholder => {
                format!(
                    "placeholder={}",
                    q(self.placeholder.as_deref().unwrap_or(""))
                )
            }
            LocatorKind::Text => format!("text={}", q(self.text.as_deref().unwrap_or(""))),
            LocatorKind::Css => format!("css={}", q(self.css.as_deref().unwrap_or(""))),
            LocatorKind::AutomationId => {
                format!(
                    "automationId={}",
                    q(self.automation_id.as_deref().unwrap_or(""))
                )
            }
            LocatorKind::Path => {
                let segs: Vec<String> = self
                    .path
                    .iter()
                    .flatten()
                    .map(|s| {
                        format!(
                            "{}:{}",
                            s.role.as_deref().unwrap_or("*"),
                            s.name.as_deref().unwrap_or("*")
                        )
                    })
                    .collect();
                format!("path={}", segs.join(" > "))
            }
        };
        if let Some(n) = self.nth {
            d.push_str(&format!(" nth={n}"));
        }
        if let Some(n) = self.occurrence {
            d.push_str(&format!(" occurrence={n}"));
        }
        if self.is_exact() {
            d.push_str(" exact");
        }
        d
    }
}

/// Where a browser step runs (`"target"` on a step): the main page by
/// default, a popup adopted by an earlier `openPopup` step, or a
/// same-origin frame of the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StepTarget {
    /// `popup` or `frame`.
    #[serde(rename = "type")]
    pub kind: StepTargetKind,
    /// The popup's name (the `name` of the `openPopup` step); popups only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The `<iframe>` element; frames only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locator: Option<Locator>,
}

/// The kinds of step targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum StepTargetKind {
    /// A popup window adopted by `openPopup`.
    Popup,
    /// A same-origin iframe.
    Frame,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locator_kinds() {
        let l = Locator {
            role: Some("button".into()),
            name: Some("Save".into()),
            ..Default::default()
        };
        assert_eq!(l.kinds(), vec![LocatorKind::Role]);
        let n = Locator {
            name: Some("Save".into()),
            ..Default::default()
        };
        assert_eq!(n.kinds(), vec![LocatorKind::Name]);
    }
}
