//! The auth file's types (`.ui-qa/auth.jsonc`) and their validation. The
//! JSON Schema (`ui-qa schema auth`) is generated from these types.

use qa_core::auth::{AuthCheck, ProfileKind, SameSite};
use qa_core::flow::{FlowError, FlowErrorCode, Locator};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `.ui-qa/auth.jsonc`: the project's auth profiles, by id. Private to the
/// person who fills it (mode 0600, no symlinks); ui-qa reads the values only
/// inside the runner and never prints them.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuthFile {
    /// Optional schema reference for editors.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Format version; must be 1 when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    /// Profiles by id (`target.profile` selects one; ids match
    /// `^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`).
    #[serde(default)]
    pub profiles: BTreeMap<String, Profile>,
}

/// One way of being signed in. Every profile names the exact origins its
/// secrets may go to (`allowedOrigins`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Profile {
    /// Sign in through the application's own login form.
    Form(Box<FormProfile>),
    /// Cookies set before the first page loads.
    Cookie(CookieProfile),
    /// `localStorage` items set before the first page loads.
    LocalStorage(StorageProfile),
    /// `sessionStorage` items set before the first page loads.
    SessionStorage(StorageProfile),
    /// An `Authorization` header on every request to the allowed origins.
    Bearer(BearerProfile),
    /// An existing Playwright `storageState` file (cookies and localStorage).
    StorageState(StorageStateProfile),
}

/// `type: "form"`: the runner opens `url`, fills `fields`, clicks `submit`
/// and waits for `success`. The state the login produced is cached in
/// `.ui-qa/auth-state/` and reused until it is rejected.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FormProfile {
    /// What this profile is (shown by `ui-qa auth list`; not a secret).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Exact origins (`scheme://host[:port]`) the profile's state may go to.
    pub allowed_origins: Vec<String>,
    /// The login page (on one of `allowedOrigins`).
    pub url: String,
    /// The fields to fill, in order.
    pub fields: Vec<FormField>,
    /// The button that submits the form.
    pub submit: Locator,
    /// What shows that the login worked.
    pub success: AuthCheck,
    /// What shows that the login was refused (ends the wait early).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejected_if: Option<AuthCheck>,
    /// How long the login may take, in milliseconds (default 15000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1000, max = 120000))]
    pub timeout_ms: Option<u64>,
}

/// One field of a login form.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FormField {
    /// The input to fill.
    pub locator: Locator,
    /// What to type into it.
    pub value: String,
    /// Whether the value is a secret (default true; set false for a user
    /// name that may appear in evidence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<bool>,
}

/// `type: "cookie"`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CookieProfile {
    /// What this profile is (shown by `ui-qa auth list`; not a secret).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Exact origins the cookies are set for and sent to (and no other:
    /// cookies are bound to scheme, host and port).
    pub allowed_origins: Vec<String>,
    /// The cookies.
    pub cookies: Vec<CookieSpec>,
}

/// One cookie.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CookieSpec {
    /// Cookie name.
    pub name: String,
    /// Cookie value (a secret).
    pub value: String,
    /// The one allowed origin it belongs to (default: each of `allowedOrigins`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// Cookie path (default `/`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// `HttpOnly` (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_only: Option<bool>,
    /// `Secure` (default: true on https origins).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secure: Option<bool>,
    /// `SameSite` (default `Lax`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_site: Option<SameSite>,
}

/// `type: "localStorage"` or `type: "sessionStorage"`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StorageProfile {
    /// What this profile is (shown by `ui-qa auth list`; not a secret).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Exact origins the items are set for.
    pub allowed_origins: Vec<String>,
    /// The one allowed origin the items belong to (default: each of
    /// `allowedOrigins`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// Key → value (values are secrets).
    pub items: BTreeMap<String, String>,
}

/// `type: "bearer"`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BearerProfile {
    /// What this profile is (shown by `ui-qa auth list`; not a secret).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Exact origins whose requests carry the header (no other request does).
    pub allowed_origins: Vec<String>,
    /// The token (a secret).
    pub token: String,
    /// The scheme before the token (default `Bearer`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheme: Option<String>,
}

/// `type: "storageState"`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StorageStateProfile {
    /// What this profile is (shown by `ui-qa auth list`; not a secret).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Exact origins whose cookies and localStorage are applied (the rest of
    /// the file is ignored).
    pub allowed_origins: Vec<String>,
    /// The Playwright `storageState` JSON file, relative to the `.ui-qa`
    /// directory (same rules as this file: inside the project, no symlink,
    /// mode 0600).
    pub path: String,
}

impl Profile {
    /// The profile's kind.
    pub fn kind(&self) -> ProfileKind {
        match self {
            Profile::Form(_) => ProfileKind::Form,
            Profile::Cookie(_) => ProfileKind::Cookie,
            Profile::LocalStorage(_) => ProfileKind::LocalStorage,
            Profile::SessionStorage(_) => ProfileKind::SessionStorage,
            Profile::Bearer(_) => ProfileKind::Bearer,
            Profile::StorageState(_) => ProfileKind::StorageState,
        }
    }

    /// Its description.
    pub fn description(&self) -> Option<&str> {
        match self {
            Profile::Form(p) => p.description.as_deref(),
            Profile::Cookie(p) => p.description.as_deref(),
            Profile::LocalStorage(p) | Profile::SessionStorage(p) => p.description.as_deref(),
            Profile::Bearer(p) => p.description.as_deref(),
            Profile::StorageState(p) => p.description.as_deref(),
        }
    }

    /// Its allowed origins.
    pub fn allowed_origins(&self) -> &[String] {
        match self {
            Profile::Form(p) => &p.allowed_origins,
            Profile::Cookie(p) => &p.allowed_origins,
            Profile::LocalStorage(p) | Profile::SessionStorage(p) => &p.allowed_origins,
            Profile::Bearer(p) => &p.allowed_origins,
            Profile::StorageState(p) => &p.allowed_origins,
        }
    }
}

/// Whether `id` is a valid profile id (also a safe file name).
pub fn valid_id(id: &str) -> bool {
    qa_core::flow::valid_profile_id(id)
}

fn err(code: FlowErrorCode, at: String, msg: impl Into<String>) -> FlowError {
    FlowError::new(code, at, msg)
}

/// Parses and checks the file's text: JSONC, the schema, ids, exact
/// origins, one-of checks and locators. Errors carry a JSON pointer, a line
/// and a column, and never a value.
pub fn parse(text: &str) -> Result<AuthFile, FlowError> {
    let value = qa_core::flow::jsonc_value(text)?;
    let file = typed(value).map_err(|e| e.with_position(text))?;
    check(&file).map_err(|e| e.with_position(text))?;
    Ok(file)
}

/// The value as an [`AuthFile`], one profile at a time so that an error
/// inside a profile points at its field (a tagged enum hides the path).
fn typed(mut value: serde_json::Value) -> Result<AuthFile, FlowError> {
    use qa_core::flow::de_at;
    use serde_json::Value;
    let profiles = match value.as_object_mut() {
        Some(o) => o.remove("profiles"),
        None => None,
    };
    let mut file: AuthFile = de_at(value, "")?;
    let Some(profiles) = profiles else {
        return Ok(file);
    };
    let Value::Object(profiles) = profiles else {
        return Err(err(
            FlowErrorCode::WrongType,
            "/profiles".into(),
            "profiles is an object: profile id → profile",
        ));
    };
    for (id, mut p) in profiles {
        let at = format!("/profiles/{}", qa_core::flow::escape_token(&id));
        let kind = match p.as_object_mut().map(|o| o.remove("type")) {
            Some(Some(Value::String(t))) => t,
            Some(_) => {
                return Err(err(
                    FlowErrorCode::MissingField,
                    format!("{at}/type"),
                    "a profile needs a type: form, cookie, localStorage, sessionStorage, bearer or storageState",
                ))
            }
            None => {
                return Err(err(
                    FlowErrorCode::WrongType,
                    at,
                    "a profile is an object",
                ))
            }
        };
        let profile = match kind.as_str() {
            "form" => Profile::Form(Box::new(de_at(p, &at)?)),
            "cookie" => Profile::Cookie(de_at(p, &at)?),
            "localStorage" => Profile::LocalStorage(de_at(p, &at)?),
            "sessionStorage" => Profile::SessionStorage(de_at(p, &at)?),
            "bearer" => Profile::Bearer(de_at(p, &at)?),
            "storageState" => Profile::StorageState(de_at(p, &at)?),
            _ => return Err(err(
                FlowErrorCode::OutOfRange,
                format!("{at}/type"),
                "type is one of form, cookie, localStorage, sessionStorage, bearer, storageState",
            )),
        };
        file.profiles.insert(id, profile);
    }
    Ok(file)
}

fn check(file: &AuthFile) -> Result<(), FlowError> {
    if let Some(v) = file.version {
        if v != 1 {
            return Err(err(
                FlowErrorCode::OutOfRange,
                "/version".into(),
                "version must be 1",
            ));
        }
    }
    for (id, p) in &file.profiles {
        let at = format!("/profiles/{}", qa_core::flow::escape_token(id));
        if !valid_id(id) {
            return Err(err(
                FlowErrorCode::OutOfRange,
                at,
                "a profile id is 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit",
            ));
        }
        if p.allowed_origins().is_empty() {
            return Err(err(
                FlowErrorCode::MissingField,
                format!("{at}/allowedOrigins"),
                "every profile needs one or more exact allowedOrigins (scheme://host[:port])",
            ));
        }
        for (i, o) in p.allowed_origins().iter().enumerate() {
            qa_core::flow::check_origin(o, &format!("{at}/allowedOrigins/{i}"))?;
            if !o.starts_with("http") {
                return Err(err(
                    FlowErrorCode::InvalidOrigin,
                    format!("{at}/allowedOrigins/{i}"),
                    "an auth origin is http:// or https://",
                ));
            }
        }
        let allowed = |o: &str, ptr: String| -> Result<(), FlowError> {
            if p.allowed_origins()
                .iter()
                .any(|a| a.trim_end_matches('/') == o)
            {
                Ok(())
            } else {
                Err(err(
                    FlowErrorCode::InvalidOrigin,
                    ptr,
                    "this origin is not one of the profile's allowedOrigins",
                ))
            }
        };
        match p {
            Profile::Form(f) => {
                let u = url::Url::parse(&f.url).map_err(|e| {
                    err(
                        FlowErrorCode::InvalidUrl,
                        format!("{at}/url"),
                        format!("not an absolute URL: {e}"),
                    )
                })?;
                allowed(&u.origin().ascii_serialization(), format!("{at}/url"))?;
                if f.fields.is_empty() {
                    return Err(err(
                        FlowErrorCode::MissingField,
                        format!("{at}/fields"),
                        "a form profile needs one or more fields",
                    ));
                }
                for (i, fld) in f.fields.iter().enumerate() {
                    check_locator(&fld.locator, format!("{at}/fields/{i}/locator"))?;
                }
                check_locator(&f.submit, format!("{at}/submit"))?;
                check_check(&f.success, format!("{at}/success"))?;
                if let Some(r) = &f.rejected_if {
                    check_check(r, format!("{at}/rejectedIf"))?;
                }
                if let Some(t) = f.timeout_ms {
                    if !(1000..=120_000).contains(&t) {
                        return Err(err(
                            FlowErrorCode::OutOfRange,
                            format!("{at}/timeoutMs"),
                            "timeoutMs is between 1000 and 120000",
                        ));
                    }
                }
            }
            Profile::Cookie(c) => {
                if c.cookies.is_empty() {
                    return Err(err(
                        FlowErrorCode::MissingField,
                        format!("{at}/cookies"),
                        "a cookie profile needs one or more cookies",
                    ));
                }
                for (i, k) in c.cookies.iter().enumerate() {
                    if k.name.is_empty() || k.name.contains([';', '=', ' ']) {
                        return Err(err(
                            FlowErrorCode::OutOfRange,
                            format!("{at}/cookies/{i}/name"),
                            "a cookie name is not empty and has no ';', '=' or space",
                        ));
                    }
                    if let Some(o) = &k.origin {
                        allowed(o.trim_end_matches('/'), format!("{at}/cookies/{i}/origin"))?;
                    }
                }
            }
            Profile::LocalStorage(s) | Profile::SessionStorage(s) => {
                if s.items.is_empty() {
                    return Err(err(
                        FlowErrorCode::MissingField,
                        format!("{at}/items"),
                        "a storage profile needs one or more items",
                    ));
                }
                if let Some(o) = &s.origin {
                    allowed(o.trim_end_matches('/'), format!("{at}/origin"))?;
                }
            }
            Profile::Bearer(b) => {
                if let Some(s) = &b.scheme {
                    if s.is_empty() || !s.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-') {
                        return Err(err(
                            FlowErrorCode::OutOfRange,
                            format!("{at}/scheme"),
                            "scheme is one word such as Bearer or Token",
                        ));
                    }
                }
            }
            Profile::StorageState(s) => {
                let p = std::path::Path::new(&s.path);
                let plain = !s.path.is_empty()
                    && p.components()
                        .all(|c| matches!(c, std::path::Component::Normal(_)));
                if !plain {
                    return Err(err(
                        FlowErrorCode::UnsafePath,
                        format!("{at}/path"),
                        "path is relative to the .ui-qa directory and stays inside it (no '..', no absolute path)",
                    ));
                }
            }
        }
    }
    Ok(())
}

fn check_locator(l: &Locator, at: String) -> Result<(), FlowError> {
    qa_core::flow::check_locator_at(l, &at)
}

fn check_check(c: &AuthCheck, at: String) -> Result<(), FlowError> {
    if c.url_includes.is_some() == c.locator.is_some() {
        return Err(err(
            FlowErrorCode::MissingField,
            at,
            "a check needs exactly one of urlIncludes, locator",
        ));
    }
    match &c.locator {
        Some(l) => check_locator(l, format!("{at}/locator")),
        None => Ok(()),
    }
}
