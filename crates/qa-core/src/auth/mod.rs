//! Auth profiles as a driver applies them: [`AuthProfile`] (cookies,
//! storage, a header or a form login for exact origins), handed to the
//! driver in `SessionContext::auth` after every value has been registered
//! as a secret, and the BLOCKED outcomes of applying one ([`AuthBlock`]).
//!
//! Reading `.ui-qa/auth.jsonc` and the form-login state cache on disk is the
//! runner's (`qa_runner::auth`); a driver reaches the cache only through
//! [`StateCache`].

pub mod credential;
mod kinds;
mod state;

pub use kinds::{AuthCheck, ProfileKind, SameSite};
pub use state::{StateCookie, StateOrigin, StorageItem, StorageState};

use crate::codes::CoreCode;
use crate::flow::Locator;
use crate::secrets::Secrets;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The id of the missing capability every auth BLOCK names.
pub const CAPABILITY: &str = "auth-profile";

/// The guide command an auth handoff points at.
pub const GUIDE: &str = "ui-qa guide --backend browser --topic auth";

/// Default deadline of a form login.
pub const DEFAULT_LOGIN_TIMEOUT_MS: u64 = 15_000;

/// The auth file's name inside the workspace (`.ui-qa`): private, never
/// served or published.
pub const AUTH_FILE: &str = "auth.jsonc";

/// The form-login state cache directory inside the workspace: private,
/// never served or published.
pub const STATE_DIR: &str = "auth-state";

/// Why a run with an auth profile cannot go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    /// The auth file did not exist; a template was created.
    ProvideCredentials,
    /// The profile is missing, incomplete, rejected or expired.
    UpdateRequired,
    /// The file (or a file it names) is unsafe or unreadable.
    FileRefused,
}

impl BlockKind {
    /// The error code.
    pub fn code(self) -> CoreCode {
        match self {
            BlockKind::ProvideCredentials => CoreCode::AuthProvideCredentials,
            BlockKind::UpdateRequired => CoreCode::AuthUpdateRequired,
            BlockKind::FileRefused => CoreCode::AuthFileRefused,
        }
    }
}

/// A BLOCKED outcome of preparing or applying a profile.
#[derive(Debug, Clone)]
pub struct AuthBlock {
    /// Which kind.
    pub kind: BlockKind,
    /// What is wrong (names only the profile id and files; no value).
    pub reason: String,
    /// What a person does.
    pub remediation: String,
}

/// `auth.update_required` for profile `id` in `file`, with a redacted reason.
pub fn update_required(id: &str, file: &Path, why: &str) -> AuthBlock {
    AuthBlock {
        kind: BlockKind::UpdateRequired,
        reason: format!(
            "auth profile `{id}` needs an update: {why}"
        ),
        remediation: format!(
            "ask a person to update profile `{id}` in {} (agents must not read or write its values; see `{GUIDE}`), then run the flow again",
            file.display()
        ),
    }
}

/// A cookie to set for one exact origin.
#[derive(Debug, Clone)]
pub struct AuthCookie {
    /// The exact origin it belongs to (and is only sent to).
    pub origin: String,
    /// Name.
    pub name: String,
    /// Value (a registered secret).
    pub value: String,
    /// Path.
    pub path: String,
    /// `HttpOnly`.
    pub http_only: bool,
    /// `Secure`.
    pub secure: bool,
    /// `SameSite`.
    pub same_site: SameSite,
    /// Expiry (seconds since the epoch); `None`: a session cookie.
    pub expires: Option<f64>,
}

/// Storage items for one exact origin.
#[derive(Debug, Clone, Default)]
pub struct OriginStorage {
    /// The exact origin.
    pub origin: String,
    /// `localStorage` items.
    pub local: Vec<(String, String)>,
    /// `sessionStorage` items.
    pub session: Vec<(String, String)>,
}

/// A form login to perform.
#[derive(Debug, Clone)]
pub struct FormLogin {
    /// The login page.
    pub url: String,
    /// Fields and values, in order.
    pub fields: Vec<(Locator, String)>,
    /// The submit button.
    pub submit: Locator,
    /// The success check.
    pub success: AuthCheck,
    /// The early rejection check.
    pub rejected_if: Option<AuthCheck>,
    /// Deadline of the login.
    pub timeout_ms: u64,
    /// Whether the cookies and storage came from the cached state of an
    /// earlier login (checked first; a fresh login when it no longer works).
    pub cached: bool,
}

/// Where a form login's state is cached between runs: the driver saves
/// what a login produced and discards it when the site rejects it.
pub trait StateCache: Send + Sync + std::fmt::Debug {
    /// Keeps `state` (every value in it is already a registered secret).
    fn save(&self, state: StorageState) -> Result<(), String>;
    /// Forgets the cached state.
    fn discard(&self);
}

/// What a driver applies for one profile. Every value in it is a
/// registered secret.
#[derive(Debug, Clone)]
pub struct AuthProfile {
    /// The profile id.
    pub id: String,
    /// Its kind.
    pub kind: ProfileKind,
    /// The exact origins its state and headers may go to.
    pub allowed_origins: Vec<String>,
    /// Cookies to set before the first page.
    pub cookies: Vec<AuthCookie>,
    /// Storage to set before the first page.
    pub storage: Vec<OriginStorage>,
    /// A request header (name, value) for the allowed origins.
    pub header: Option<(String, String)>,
    /// A form login.
    pub login: Option<FormLogin>,
    /// Entries of a storageState file left out (not for an allowed origin).
    pub dropped: usize,
    /// The auth file (for messages).
    pub file: PathBuf,
    /// Where a form login's state is cached (`None`: not cached).
    pub cache: Option<Arc<dyn StateCache>>,
}

impl AuthProfile {
    /// `auth.update_required` for this profile (a driver error through
    /// `DriverError::from`).
    pub fn update_required(&self, why: &str) -> AuthBlock {
        update_required(&self.id, &self.file, why)
    }

    /// Whether `origin` is one of the profile's.
    pub fn allows(&self, origin: &str) -> bool {
        self.allowed_origins.iter().any(|o| o == origin)
    }

    /// Caches the state a form login produced (cookies and localStorage of
    /// the allowed origins), privately. Registers every credential in it as
    /// a secret ([`StorageState::register`]).
    pub fn save_state(&self, state: StorageState, secrets: &Secrets) -> Result<(), String> {
        let _ = state.register(secrets);
        match &self.cache {
            Some(c) => c.save(state),
            None => Ok(()),
        }
    }

    /// Deletes the cached state (it was rejected).
    pub fn discard_state(&self) {
        if let Some(c) = &self.cache {
            c.discard();
        }
    }
}
