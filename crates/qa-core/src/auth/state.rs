//! Playwright's `storageState` format: what a `storageState` profile reads
//! and what a form login's cache (`.ui-qa/auth-state/<id>.json`) holds.

use super::{AuthCookie, OriginStorage, SameSite};
use crate::secrets::Secrets;
use serde::{Deserialize, Serialize};

/// Cookies and per-origin localStorage.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StorageState {
    /// Cookies.
    #[serde(default)]
    pub cookies: Vec<StateCookie>,
    /// localStorage per origin.
    #[serde(default)]
    pub origins: Vec<StateOrigin>,
    /// In a cache: the digest of the profile that produced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
}

/// One cookie (Playwright's fields; others are ignored).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StateCookie {
    /// Name.
    pub name: String,
    /// Value.
    pub value: String,
    /// Domain (a leading dot: the domain and its subdomains).
    pub domain: String,
    /// Path.
    #[serde(default = "slash")]
    pub path: String,
    /// Expiry in seconds since the epoch; -1 for a session cookie.
    #[serde(default = "minus_one")]
    pub expires: f64,
    /// `HttpOnly`.
    #[serde(default)]
    pub http_only: bool,
    /// `Secure`.
    #[serde(default)]
    pub secure: bool,
    /// `SameSite`: `Strict`, `Lax` or `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_site: Option<String>,
}

fn slash() -> String {
    "/".into()
}

fn minus_one() -> f64 {
    -1.0
}

/// localStorage of one origin.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StateOrigin {
    /// The origin.
    pub origin: String,
    /// Its items.
    #[serde(default)]
    pub local_storage: Vec<StorageItem>,
}

/// One storage item.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StorageItem {
    /// Key.
    pub name: String,
    /// Value.
    pub value: String,
}

/// Whether a cookie for `domain` is sent to `host`.
fn domain_matches(domain: &str, host: &str) -> bool {
    let d = domain.trim_start_matches('.').to_ascii_lowercase();
    let h = host.to_ascii_lowercase();
    h == d || (domain.starts_with('.') && h.ends_with(&format!(".{d}")))
}

impl StorageState {
    /// Registers every credential among the cookies and storage values as
    /// a secret ([`super::credential`]); ordinary storage (a theme, a
    /// language) is not registered. Returns how many values were left out.
    pub fn register(&self, secrets: &Secrets) -> usize {
        let mut left = 0;
        let mut add = |values: Vec<String>| {
            if values.is_empty() {
                left += 1;
            }
            for v in values {
                secrets.add(&v);
            }
        };
        for c in &self.cookies {
            add(super::credential::credentials(
                &c.name,
                &c.value,
                c.http_only,
            ));
        }
        for o in &self.origins {
            for i in &o.local_storage {
                add(super::credential::credentials(&i.name, &i.value, false));
            }
        }
        left
    }

    /// The cookies and storage for `allowed` origins (each cookie becomes a
    /// host-only cookie of every allowed origin its domain covers), and how
    /// many entries were left out.
    pub fn for_origins(&self, allowed: &[String]) -> (Vec<AuthCookie>, Vec<OriginStorage>, usize) {
        let mut cookies = Vec::new();
        let mut dropped = 0;
        for c in &self.cookies {
            let mut used = false;
            for o in allowed {
                let Ok(u) = url::Url::parse(o) else { continue };
                let https = u.scheme() == "https";
                if !u.host_str().is_some_and(|h| domain_matches(&c.domain, h))
                    || (c.secure && !https && !loopback(&u))
                {
                    continue;
                }
                used = true;
                cookies.push(AuthCookie {
                    origin: o.clone(),
                    name: c.name.clone(),
                    value: c.value.clone(),
                    path: c.path.clone(),
                    http_only: c.http_only,
                    secure: c.secure,
                    same_site: match c.same_site.as_deref() {
                        Some("Strict") => SameSite::Strict,
                        Some("None") => SameSite::None,
                        _ => SameSite::Lax,
                    },
                    expires: (c.expires > 0.0).then_some(c.expires),
                });
            }
            if !used {
                dropped += 1;
            }
        }
        let mut storage = Vec::new();
        for o in &self.origins {
            let origin = o.origin.trim_end_matches('/');
            if allowed.iter().any(|a| a == origin) {
                storage.push(OriginStorage {
                    origin: origin.to_string(),
                    local: o
                        .local_storage
                        .iter()
                        .map(|i| (i.name.clone(), i.value.clone()))
                        .collect(),
                    session: Vec::new(),
                });
            } else {
                dropped += 1;
            }
        }
        (cookies, storage, dropped)
    }
}

fn loopback(u: &url::Url) -> bool {
    matches!(u.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"))
}
