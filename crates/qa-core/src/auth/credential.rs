//! Which session values are credentials: the values a signed-in state
//! holds that ui-qa registers as secrets. Ordinary application storage (a
//! theme, a language, a dismissed banner) is not a secret: registering it
//! would redact and withhold every piece of evidence that shows the word.
//!
//! A value is a credential when
//! - its cookie is `HttpOnly` (scripts cannot read it: a session cookie), or
//! - its name says so (`session`, `token`, `auth`, `jwt`, `csrf`, …), or
//! - it looks like a token: 16 or more characters without whitespace that
//!   mix at least two of lower-case letters, upper-case letters and digits,
//!   in a token's alphabet (letters, digits and `-_.=+/~%:`)
//!   (session ids, JWTs, UUIDs, base64 and hex keys), or
//! - it is JSON holding a credential at any depth (its credential strings
//!   and the whole value are registered).

use crate::secrets::MIN_SECRET_BYTES;

/// Words (lower case) of a name that mark a credential on their own.
const WORDS: &[&str] = &[
    "sid", "key", "access", "refresh", "bearer", "pwd", "pin", "otp",
];

/// Fragments (lower case) that mark a credential anywhere in a word
/// (`csrftoken`, `PHPSESSID`, `accessToken`).
const FRAGMENTS: &[&str] = &[
    "token",
    "session",
    "sessid",
    "csrf",
    "xsrf",
    "jwt",
    "passw",
    "secret",
    "credential",
    "apikey",
    "auth",
];

/// The words of a name: split at anything but letters and digits and
/// where a lower-case letter meets an upper-case one (`accessToken`).
fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Whether `name` names a credential (`author` and `monkey` do not).
pub fn credential_name(name: &str) -> bool {
    words(name).iter().any(|w| {
        WORDS.contains(&w.as_str())
            || FRAGMENTS
                .iter()
                .any(|f| w.contains(f) && !(*f == "auth" && w.starts_with("author")))
    })
}

/// Whether `value` is shaped like a token (see the module docs): JWTs,
/// UUIDs, hex and base64 keys; not JSON or prose.
pub fn token_shaped(value: &str) -> bool {
    if value.chars().count() < 16
        || !value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.=+/~%:".contains(c))
    {
        return false;
    }
    let lower = value.chars().any(|c| c.is_ascii_lowercase());
    let upper = value.chars().any(|c| c.is_ascii_uppercase());
    let digit = value.chars().any(|c| c.is_ascii_digit());
    usize::from(lower) + usize::from(upper) + usize::from(digit) >= 2
}

/// The values of one session entry (`name` = `value`) to register: empty
/// when it is not a credential. `http_only`: a cookie scripts cannot read.
pub fn credentials(name: &str, value: &str, http_only: bool) -> Vec<String> {
    if value.len() < MIN_SECRET_BYTES {
        return Vec::new();
    }
    if http_only || credential_name(name) || token_shaped(value) {
        return vec![value.to_string()];
    }
    let mut out = Vec::new();
    if let Ok(json) = serde_json::from_str::<serde_json::Value>(value) {
        if json.is_object() || json.is_array() {
            nested(&json, false, &mut out);
            if !out.is_empty() {
                out.push(value.to_string());
            }
        }
    }
    out
}

/// Credential strings inside a JSON value (`named`: under a credential key).
fn nested(v: &serde_json::Value, named: bool, out: &mut Vec<String>) {
    use serde_json::Value;
    match v {
        Value::String(s) if s.len() >= MIN_SECRET_BYTES && (named || token_shaped(s)) => {
            out.push(s.clone());
        }
        Value::Number(n) if named && n.to_string().len() >= MIN_SECRET_BYTES => {
            out.push(n.to_string());
        }
        Value::Array(a) => a.iter().for_each(|x| nested(x, named, out)),
        Value::Object(o) => {
            for (k, x) in o {
                nested(x, named || credential_name(k), out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_storage_is_not_a_credential() {
        for (k, v) in [
            ("theme", "auto"),
            ("theme", "dark"),
            ("django_language", "en-gb"),
            ("consider", "yes-please"),
            ("monkey", "banana"),
            ("author", "Ada Lovelace"),
            ("accessibility", "high-contrast"),
            ("cookie_consent", "accepted"),
            (
                "prefs",
                r#"{"theme":"auto","sidebar":"collapsed","fontSize":14}"#,
            ),
            ("banner", "dismissed-until-next-release"),
        ] {
            assert!(credentials(k, v, false).is_empty(), "{k}={v}");
        }
    }

    #[test]
    fn session_values_are_credentials() {
        assert_eq!(credentials("theme", "auto", true), vec!["auto"]);
        assert_eq!(credentials("sessionid", "abcd", false), vec!["abcd"]);
        assert_eq!(credentials("csrftoken", "x1y2z3", false), vec!["x1y2z3"]);
        assert_eq!(credentials("access_token", "opaque", false), vec!["opaque"]);
        assert_eq!(
            credentials("sid", "s-1", false),
            Vec::<String>::new(),
            "too short"
        );
        assert_eq!(credentials("x-sid", "abcdef", false), vec!["abcdef"]);
        assert_eq!(credentials("x-apikey", "abcdef", false), vec!["abcdef"]);
        assert_eq!(credentials("accessToken", "abcdef", false), vec!["abcdef"]);
        assert_eq!(credentials("PHPSESSID", "abcdef", false), vec!["abcdef"]);
        assert_eq!(credentials("authUser", "abcdef", false), vec!["abcdef"]);
        // Token-shaped under any name.
        let id = "q8w7e6r5t4y3u2i1o0p9";
        assert_eq!(credentials("u", id, false), vec![id]);
        assert_eq!(
            credentials("u", "550e8400-e29b-41d4-a716-446655440000", false).len(),
            1
        );
    }

    #[test]
    fn json_storage_yields_its_nested_credentials_and_itself() {
        let v = r#"{"user":{"name":"ada","stsTokenManager":{"accessToken":"opaque-1"}},"theme":"auto"}"#;
        let got = credentials("firebase:user", v, false);
        assert!(got.contains(&"opaque-1".to_string()), "{got:?}");
        assert!(got.contains(&v.to_string()));
        assert!(!got.contains(&"ada".to_string()) && !got.contains(&"auto".to_string()));
    }
}
