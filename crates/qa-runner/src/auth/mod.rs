//! Auth profiles on disk: `.ui-qa/auth.jsonc` (see [`file`]), read only
//! inside the runner, turned into what a driver applies
//! ([`AuthProfile`]) after every value has been registered as a secret —
//! before any browser starts — and the form-login state cache.
//!
//! A flow selects a profile only by explicit id (`target.profile`). When the
//! file is missing, a private template is created and the run is BLOCKED
//! with `auth.provide_credentials`; a missing, empty, rejected or expired
//! profile gives `auth.update_required`, naming only the profile id and the
//! file. An unsafe file (a symlink on its path, group/other permissions,
//! another owner) is refused with `auth.file_refused`.

pub mod file;
pub mod store;

pub use file::{AuthFile, Profile};

use qa_core::auth::{
    update_required, AuthBlock, AuthCookie, AuthProfile, BlockKind, FormLogin, OriginStorage,
    ProfileKind, SameSite, StateCache, StorageState, DEFAULT_LOGIN_TIMEOUT_MS, GUIDE, STATE_DIR,
};
use qa_core::secrets::{Secrets, MIN_SECRET_BYTES};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where a workspace keeps its auth file.
pub fn auth_file_path(workspace: &Path) -> PathBuf {
    store::absolute(workspace).join(qa_core::auth::AUTH_FILE)
}

/// What a new auth file looks like: no profiles, and how to write each kind.
pub const TEMPLATE: &str = r#"// ui-qa auth profiles. PRIVATE: keep this file mode 0600 and out of version
// control. A person fills in the values; coding agents never read or write
// them (they ask a person). Each profile names the exact origins its secrets
// may go to. Schema: `ui-qa schema auth`; guide:
// `ui-qa guide --backend browser --topic auth`.
{
  "version": 1,
  "profiles": {
    // "staff": {
    //   "type": "form",
    //   "description": "staff account on the local app",
    //   "allowedOrigins": ["http://127.0.0.1:8080"],
    //   "url": "http://127.0.0.1:8080/login",
    //   "fields": [
    //     { "locator": { "label": "Username" }, "value": "staff", "secret": false },
    //     { "locator": { "label": "Password" }, "value": "…" }
    //   ],
    //   "submit": { "role": "button", "name": "Sign in" },
    //   "success": { "urlIncludes": "/account" },
    //   "rejectedIf": { "locator": { "role": "alert" } }
    // },
    // "api": { "type": "bearer", "allowedOrigins": ["https://app.example"], "token": "…" },
    // "session": { "type": "cookie", "allowedOrigins": ["https://app.example"],
    //              "cookies": [ { "name": "sid", "value": "…" } ] },
    // "spa": { "type": "localStorage", "allowedOrigins": ["https://app.example"],
    //          "items": { "token": "…" } },
    // "tab": { "type": "sessionStorage", "allowedOrigins": ["https://app.example"],
    //          "items": { "token": "…" } },
    // "exported": { "type": "storageState", "allowedOrigins": ["https://app.example"],
    //               "path": "playwright-state.json" }
  }
}
"#;

fn refused(file: &Path, r: &store::Refusal) -> AuthBlock {
    AuthBlock {
        kind: BlockKind::FileRefused,
        reason: r.describe(file),
        remediation: r.fix(file),
    }
}

/// A form login's cached state: a private file in the workspace's
/// `auth-state/`, tagged with the digest of the profile's definition (a
/// cache of another definition is not reused).
#[derive(Debug)]
struct FileStateCache {
    path: PathBuf,
    digest: String,
}

impl StateCache for FileStateCache {
    fn save(&self, mut state: StorageState) -> Result<(), String> {
        state.digest = Some(self.digest.clone());
        let bytes = serde_json::to_vec_pretty(&state).map_err(|e| e.to_string())?;
        let dir = self.path.parent().unwrap_or(Path::new("."));
        store::private_dir(dir).map_err(|r| r.describe(dir))?;
        store::replace_private(&self.path, &bytes).map_err(|r| r.describe(&self.path))
    }

    fn discard(&self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// One line of `ui-qa auth list`: never a value.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileSummary {
    /// The id `target.profile` uses.
    pub id: String,
    /// The kind.
    #[serde(rename = "type")]
    pub kind: ProfileKind,
    /// The description, when written.
    pub description: Option<String>,
    /// Where its secrets may go.
    pub allowed_origins: Vec<String>,
    /// Whether a form login's state is cached.
    pub state_cached: bool,
}

/// Lists the profiles of `workspace` (ids, kinds, descriptions, origins).
/// No file: an empty list, and nothing is created.
pub fn list(workspace: &Path) -> Result<Vec<ProfileSummary>, AuthBlock> {
    let path = auth_file_path(workspace);
    if !store::exists(&path) && store::symlink_on_path(&path).is_none() {
        return Ok(Vec::new());
    }
    let file = load(&path)?;
    let dir = store::absolute(workspace).join(STATE_DIR);
    Ok(file
        .profiles
        .iter()
        .map(|(id, p)| ProfileSummary {
            id: id.clone(),
            kind: p.kind(),
            description: p.description().map(str::to_string),
            allowed_origins: p.allowed_origins().to_vec(),
            state_cached: p.kind() == ProfileKind::Form
                && store::exists(&dir.join(format!("{id}.json"))),
        })
        .collect())
}

/// Creates the template auth file when there is none; `Ok(false)` when one
/// exists already (it is left alone).
pub fn init(workspace: &Path) -> Result<bool, AuthBlock> {
    let path = auth_file_path(workspace);
    if let Some(link) = store::symlink_on_path(&path) {
        return Err(refused(&path, &store::Refusal::Symlink(link)));
    }
    if store::exists(&path) {
        return Ok(false);
    }
    store::create_private(&path, TEMPLATE.as_bytes()).map_err(|r| refused(&path, &r))?;
    Ok(true)
}

fn load(path: &Path) -> Result<AuthFile, AuthBlock> {
    let text = store::read_private(path).map_err(|r| refused(path, &r))?;
    file::parse(&text).map_err(|e| AuthBlock {
        kind: BlockKind::FileRefused,
        reason: format!(
            "{} is not a valid auth file: {}",
            path.display(),
            without_values(&e.to_string())
        ),
        remediation: format!(
            "fix {} at {} (schema: `ui-qa schema auth`)",
            path.display(),
            if e.pointer.is_empty() {
                "/"
            } else {
                &e.pointer
            }
        ),
    })
}

/// A parse message without any quoted value (serde quotes the values it
/// cannot use; field names are in backticks).
fn without_values(msg: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    let mut escaped = false;
    for c in msg.chars() {
        if quoted {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                quoted = false;
                out.push_str("…\"");
            }
            continue;
        }
        out.push(c);
        if c == '"' {
            quoted = true;
        }
    }
    if quoted {
        out.push_str("…\"");
    }
    out
}

/// Prepares profile `id` of `workspace` for a run: reads and checks the
/// file (creating a template when it is missing), registers every value in
/// `secrets`, and returns what the driver applies.
pub fn prepare(workspace: &Path, id: &str, secrets: &Secrets) -> Result<AuthProfile, AuthBlock> {
    let path = auth_file_path(workspace);
    if let Some(link) = store::symlink_on_path(&path) {
        return Err(refused(&path, &store::Refusal::Symlink(link)));
    }
    if !store::exists(&path) {
        let created = store::create_private(&path, TEMPLATE.as_bytes());
        return Err(AuthBlock {
            kind: BlockKind::ProvideCredentials,
            reason: match created {
                Ok(()) => format!(
                    "the flow asks for auth profile `{id}` and there was no auth file; ui-qa created a private, empty template at {}",
                    path.display()
                ),
                Err(r) => format!(
                    "the flow asks for auth profile `{id}` and there is no auth file ({})",
                    r.describe(&path)
                ),
            },
            remediation: format!(
                "ask a person to fill profile `{id}` in {} (mode 0600; see `{GUIDE}`), then run the flow again; agents must not read or write the values themselves",
                path.display()
            ),
        });
    }
    let file = load(&path)?;
    let Some(p) = file.profiles.get(id) else {
        return Err(update_required(
            id,
            &path,
            &format!("there is no profile `{id}` in {}", path.display()),
        ));
    };
    let ws = store::absolute(workspace);
    let digest = {
        use sha2::Digest;
        let json = serde_json::to_vec(p).unwrap_or_default();
        hex::encode(sha2::Sha256::digest(&json))
    };
    let state_path = ws.join(STATE_DIR).join(format!("{id}.json"));
    let mut out = AuthProfile {
        id: id.to_string(),
        kind: p.kind(),
        allowed_origins: p
            .allowed_origins()
            .iter()
            .map(|o| o.trim_end_matches('/').to_string())
            .collect(),
        cookies: Vec::new(),
        storage: Vec::new(),
        header: None,
        login: None,
        dropped: 0,
        file: path.clone(),
        cache: None,
    };
    let short = || {
        update_required(
            id,
            &path,
            &format!(
                "a value is empty or shorter than {MIN_SECRET_BYTES} bytes, too short to be withheld from evidence"
            ),
        )
    };
    let source = format!("auth profile `{id}`");
    let secret = |v: &str| -> Result<(), AuthBlock> {
        if v.len() < MIN_SECRET_BYTES {
            return Err(short());
        }
        secrets.add_from(v, &source);
        Ok(())
    };
    let allowed = out.allowed_origins.clone();
    let origins_or = |o: &Option<String>| -> Vec<String> {
        match o {
            Some(o) => vec![o.trim_end_matches('/').to_string()],
            None => allowed.clone(),
        }
    };
    match p {
        Profile::Form(f) => {
            for fld in &f.fields {
                if fld.secret != Some(false) {
                    secret(&fld.value)?;
                } else if fld.value.is_empty() {
                    return Err(short());
                }
            }
            let mut cached = false;
            if let Ok(text) = store::read_private(&state_path) {
                if let Ok(state) = serde_json::from_str::<StorageState>(&text) {
                    if state.digest.as_deref() == Some(digest.as_str()) {
                        state.register(secrets);
                        let (cookies, storage, _) = state.for_origins(&out.allowed_origins);
                        out.cookies = cookies;
                        out.storage = storage;
                        cached = true;
                    }
                }
            }
            out.login = Some(FormLogin {
                url: f.url.clone(),
                fields: f
                    .fields
                    .iter()
                    .map(|x| (x.locator.clone(), x.value.clone()))
                    .collect(),
                submit: f.submit.clone(),
                success: f.success.clone(),
                rejected_if: f.rejected_if.clone(),
                timeout_ms: f.timeout_ms.unwrap_or(DEFAULT_LOGIN_TIMEOUT_MS),
                cached,
            });
            out.cache = Some(Arc::new(FileStateCache {
                path: state_path.clone(),
                digest: digest.clone(),
            }));
        }
        Profile::Cookie(c) => {
            for k in &c.cookies {
                secret(&k.value)?;
                for origin in origins_or(&k.origin) {
                    let https = origin.starts_with("https:");
                    out.cookies.push(AuthCookie {
                        origin,
                        name: k.name.clone(),
                        value: k.value.clone(),
                        path: k.path.clone().unwrap_or_else(|| "/".into()),
                        http_only: k.http_only.unwrap_or(true),
                        secure: k.secure.unwrap_or(https),
                        same_site: k.same_site.unwrap_or(SameSite::Lax),
                        expires: None,
                    });
                }
            }
        }
        Profile::LocalStorage(s) | Profile::SessionStorage(s) => {
            let local = p.kind() == ProfileKind::LocalStorage;
            for v in s.items.values() {
                secret(v)?;
            }
            let items: Vec<(String, String)> = s
                .items
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            for origin in origins_or(&s.origin) {
                out.storage.push(OriginStorage {
                    origin,
                    local: if local { items.clone() } else { Vec::new() },
                    session: if local { Vec::new() } else { items.clone() },
                });
            }
        }
        Profile::Bearer(b) => {
            secret(&b.token)?;
            let value = format!("{} {}", b.scheme.as_deref().unwrap_or("Bearer"), b.token);
            secrets.add(&value);
            out.header = Some(("Authorization".into(), value));
        }
        Profile::StorageState(s) => {
            let state_file = ws.join(&s.path);
            let text = store::read_private(&state_file).map_err(|r| refused(&state_file, &r))?;
            let state: StorageState = serde_json::from_str(&text).map_err(|e| {
                update_required(
                    id,
                    &path,
                    &format!(
                        "{} is not a Playwright storageState file: {}",
                        state_file.display(),
                        without_values(&e.to_string())
                    ),
                )
            })?;
            state.register(secrets);
            let (cookies, storage, dropped) = state.for_origins(&out.allowed_origins);
            if cookies.is_empty() && storage.is_empty() {
                return Err(update_required(
                    id,
                    &path,
                    &format!(
                        "{} has no cookie or localStorage for the profile's allowedOrigins",
                        state_file.display()
                    ),
                ));
            }
            out.cookies = cookies;
            out.storage = storage;
            out.dropped = dropped;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
