//! Applying the run's auth profile before the first page of the flow:
//! cookies bound to their exact origin, storage seeded in a blank document
//! of each origin (answered by the interception, never by the
//! application), a header added by the interception to the profile's
//! origins only, and a form login performed without video or trace, its
//! state cached privately for later runs. Every value was registered as a
//! secret by the runner before the browser started.

use crate::cdp::commands::{ClearBrowserCookies, Evaluate, GetCookies, SetCookie};
use crate::codes::WebCode;
use crate::page::{Counted, DomOp, Page, PageInfo};
use qa_core::auth::{AuthCheck, AuthProfile, FormLogin, SameSite, StateCookie, StateOrigin};
use qa_core::auth::{StorageItem, StorageState};
use qa_core::{Deadline, DriverError, Evidence, Flow, Note, NoteKind, Secrets};
use std::sync::Arc;
use std::time::Duration;

/// The path of the blank document storage is seeded in.
const SEED_PATH: &str = "/.ui-qa-auth-seed";

/// Applies `profile` to the session of `page`; notes what was done (by id
/// and kind only).
pub(crate) async fn apply(
    page: &Page,
    profile: &Arc<AuthProfile>,
    evidence: &Evidence,
    secrets: &Secrets,
    deadline: Deadline,
) -> Result<Vec<Note>, DriverError> {
    let _ = page.sh.auth.set(profile.clone());
    let mut notes = Vec::new();
    set_cookies(page, profile).await?;
    seed_storage(page, profile, deadline).await?;
    let what = match &profile.login {
        Some(login) => sign_in(page, profile, login, evidence, secrets, deadline).await?,
        None => "applied before the first page".to_string(),
    };
    notes.push(Note::new(
        NoteKind::Environment,
        format!(
            "auth profile `{}` ({}): {what}; its state and headers go only to {}",
            profile.id,
            profile.kind.as_str(),
            profile.allowed_origins.join(", ")
        ),
    ));
    if profile.dropped > 0 {
        notes.push(Note::new(
            NoteKind::Environment,
            format!(
                "auth profile `{}`: {} entr(ies) of its storageState file are for other origins and were not applied",
                profile.id, profile.dropped
            ),
        ));
    }
    Ok(notes)
}

fn failed(profile: &AuthProfile, what: &str) -> DriverError {
    DriverError::from_auth(profile.update_required(what))
}

async fn set_cookies(page: &Page, profile: &AuthProfile) -> Result<(), DriverError> {
    for c in &profile.cookies {
        let Ok(u) = url::Url::parse(&c.origin) else {
            continue;
        };
        let https = u.scheme() == "https";
        let cmd = SetCookie {
            name: c.name.clone(),
            value: c.value.clone(),
            url: format!("{}{}", c.origin, c.path),
            path: c.path.clone(),
            secure: c.secure,
            http_only: c.http_only,
            same_site: match c.same_site {
                SameSite::Strict => "Strict",
                SameSite::Lax => "Lax",
                SameSite::None => "None",
            },
            expires: c.expires,
            source_scheme: if https { "Secure" } else { "NonSecure" },
            source_port: u
                .port_or_known_default()
                .unwrap_or(if https { 443 } else { 80 }),
        };
        let ok = page
            .send(&cmd)
            .await
            .map(|r| r.success != Some(false))
            .unwrap_or(false);
        if !ok {
            return Err(failed(
                profile,
                &format!(
                    "the browser refused cookie `{}` for {} (check its secure and sameSite settings)",
                    c.name, c.origin
                ),
            ));
        }
    }
    Ok(())
}

/// Sets each origin's storage items in a blank document of that origin,
/// in the main page's tab (so `sessionStorage` stays for the flow).
async fn seed_storage(
    page: &Page,
    profile: &AuthProfile,
    deadline: Deadline,
) -> Result<(), DriverError> {
    for s in &profile.storage {
        if s.local.is_empty() && s.session.is_empty() {
            continue;
        }
        let url = format!("{}{SEED_PATH}", s.origin);
        *page.sh.seed_url.lock().expect("seed lock") = Some(url.clone());
        let nav = page.navigate_loaded(&url, deadline).await;
        let r = match nav {
            Ok(()) => {
                let items = serde_json::json!({ "local": s.local, "session": s.session });
                let js = format!(
                    "(() => {{ const v = {items}; for (const [k, x] of v.local) localStorage.setItem(k, x); for (const [k, x] of v.session) sessionStorage.setItem(k, x); return location.origin; }})()"
                );
                let mut cmd = Evaluate::expression(js);
                cmd.return_by_value = Some(true);
                page.send(&cmd).await.ok().and_then(|e| {
                    if e.exception_details.is_some() {
                        None
                    } else {
                        e.result.value.and_then(|v| v.as_str().map(str::to_string))
                    }
                })
            }
            Err(_) => None,
        };
        *page.sh.seed_url.lock().expect("seed lock") = None;
        if r.as_deref() != Some(s.origin.as_str()) {
            return Err(DriverError::new(
                WebCode::AuthSeed,
                format!(
                    "the storage of auth profile `{}` could not be set for {}",
                    profile.id, s.origin
                ),
            ));
        }
    }
    Ok(())
}

/// Whether `check` holds on the page now.
async fn holds(page: &Page, check: &AuthCheck, deadline: Deadline) -> bool {
    if let Some(s) = &check.url_includes {
        let p: Result<PageInfo, _> = page.read(&DomOp::PageInfo, deadline).await;
        return p.is_ok_and(|p| p.url.contains(s.as_str()));
    }
    if let Some(l) = &check.locator {
        let c: Result<Counted, _> = page.read(&DomOp::CountVisible(l), deadline).await;
        return c.is_ok_and(|c| c.visible > 0);
    }
    false
}

/// The login: with a cached state, the login page is opened and the state
/// kept when the success check holds there; otherwise the form is filled and
/// submitted, and the state it produced is cached.
async fn sign_in(
    page: &Page,
    profile: &AuthProfile,
    login: &FormLogin,
    evidence: &Evidence,
    secrets: &Secrets,
    deadline: Deadline,
) -> Result<String, DriverError> {
    let deadline = Deadline::after_ms(login.timeout_ms).min(deadline);
    let open_failed = |_| {
        failed(
            profile,
            "its login page could not be opened (is the application running?)",
        )
    };
    if login.cached {
        page.navigate(&login.url, deadline)
            .await
            .map_err(open_failed)?;
        if holds(page, &login.success, deadline).await {
            return Ok("signed in with the state cached by an earlier login".into());
        }
        // The cached state no longer works: forget it and sign in afresh.
        profile.discard_state();
        let _ = page.send(&ClearBrowserCookies {}).await;
    }
    page.navigate(&login.url, deadline)
        .await
        .map_err(open_failed)?;
    let base = url::Url::parse(&login.url).map_err(|_| failed(profile, "its url is not valid"))?;
    for step in login_steps(login)? {
        crate::steps::perform(page, &base, evidence, &step, deadline)
            .await
            .map_err(|e| {
                failed(
                    profile,
                    &format!(
                        "its login form did not match the page ({}: {})",
                        step.action_name(),
                        e.code
                    ),
                )
            })?;
    }
    loop {
        if holds(page, &login.success, deadline).await {
            break;
        }
        if let Some(r) = &login.rejected_if {
            if holds(page, r, deadline).await {
                return Err(failed(
                    profile,
                    "the sign-in was rejected (the page shows the profile's rejectedIf signal): the credentials are wrong or expired",
                ));
            }
        }
        if deadline.expired() {
            return Err(failed(
                profile,
                &format!(
                    "the sign-in did not reach the profile's success check within {} ms: the credentials may be wrong or expired",
                    login.timeout_ms
                ),
            ));
        }
        page.changed_or(Duration::from_millis(200), deadline).await;
    }
    let state = read_state(page, profile, deadline).await;
    match profile.save_state(state, secrets) {
        Ok(()) => Ok("signed in through its login form; the state is cached for later runs".into()),
        Err(_) => Ok("signed in through its login form (the state could not be cached)".into()),
    }
}

/// The login's steps (fill each field, click submit), built and validated
/// like flow steps.
fn login_steps(login: &FormLogin) -> Result<Vec<qa_core::Step>, DriverError> {
    let mut steps: Vec<serde_json::Value> = login
        .fields
        .iter()
        .map(|(l, v)| serde_json::json!({ "action": "fill", "locator": l, "value": v }))
        .collect();
    steps.push(serde_json::json!({ "action": "click", "locator": login.submit }));
    let text = serde_json::json!({ "target": { "url": login.url }, "steps": steps }).to_string();
    Flow::parse(&text, std::path::Path::new("."))
        .map(|f| f.steps)
        .map_err(|e| {
            DriverError::new(
                WebCode::AuthSeed,
                format!(
                    "the login form of the auth profile is not valid at {}",
                    e.pointer
                ),
            )
        })
}

/// The cookies of the profile's origins and the localStorage of the page's
/// origin when it is one of them.
async fn read_state(page: &Page, profile: &AuthProfile, deadline: Deadline) -> StorageState {
    let mut state = StorageState::default();
    let urls = profile
        .allowed_origins
        .iter()
        .map(|o| format!("{o}/"))
        .collect();
    if let Ok(c) = page.send(&GetCookies { urls }).await {
        state.cookies = c
            .cookies
            .into_iter()
            .map(|c| StateCookie {
                name: c.name,
                value: c.value,
                domain: c.domain,
                path: c.path,
                expires: c.expires,
                http_only: c.http_only,
                secure: c.secure,
                same_site: c.same_site,
            })
            .collect();
    }
    let info: Result<PageInfo, _> = page.read(&DomOp::PageInfo, deadline).await;
    if let Some(origin) = info
        .ok()
        .and_then(|i| url::Url::parse(&i.url).ok())
        .map(|u| u.origin().ascii_serialization())
        .filter(|o| profile.allows(o))
    {
        let mut cmd = Evaluate::expression("JSON.stringify(Object.entries(localStorage))");
        cmd.return_by_value = Some(true);
        let items: Vec<(String, String)> = page
            .send(&cmd)
            .await
            .ok()
            .and_then(|e| e.result.value)
            .and_then(|v| v.as_str().and_then(|s| serde_json::from_str(s).ok()))
            .unwrap_or_default();
        if !items.is_empty() {
            state.origins.push(StateOrigin {
                origin,
                local_storage: items
                    .into_iter()
                    .map(|(name, value)| StorageItem { name, value })
                    .collect(),
            });
        }
    }
    state
}
