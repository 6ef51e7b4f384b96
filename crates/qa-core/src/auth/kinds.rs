//! The kinds and checks of auth profiles a driver applies (the auth file
//! that declares them is the runner's).

use crate::flow::Locator;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The kind of a profile, without its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ProfileKind {
    /// A login form.
    Form,
    /// Cookies.
    Cookie,
    /// `localStorage` items.
    LocalStorage,
    /// `sessionStorage` items.
    SessionStorage,
    /// An `Authorization` header.
    Bearer,
    /// A Playwright `storageState` file.
    StorageState,
}

impl ProfileKind {
    /// The `type` as written in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            ProfileKind::Form => "form",
            ProfileKind::Cookie => "cookie",
            ProfileKind::LocalStorage => "localStorage",
            ProfileKind::SessionStorage => "sessionStorage",
            ProfileKind::Bearer => "bearer",
            ProfileKind::StorageState => "storageState",
        }
    }
}

/// A check on the page: exactly one of `urlIncludes`, `locator` (visible).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuthCheck {
    /// The page URL includes this text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url_includes: Option<String>,
    /// This element is visible.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locator: Option<Locator>,
}

/// A cookie's `SameSite` attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum SameSite {
    /// `Strict`.
    Strict,
    /// `Lax`.
    Lax,
    /// `None` (needs `Secure`).
    None,
}
