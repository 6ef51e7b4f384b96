//! Redaction: every string that leaves the runner passes through [`Secrets`].

use std::borrow::Cow;
use std::sync::RwLock;

/// The replacement text for a redacted secret.
pub const REDACTED: &str = "[REDACTED]";

/// Prefix of environment variables whose values are secrets.
pub const SECRET_ENV_PREFIX: &str = "UI_QA_SECRET_";

/// A set of secret values.
#[derive(Debug, Default)]
pub struct Secrets {
    values: RwLock<Vec<String>>,
}

impl Secrets {
    /// An empty set.
    pub fn new() -> Secrets {
        Secrets::default()
    }

    /// Secrets from every `UI_QA_SECRET_*` environment variable.
    pub fn from_env() -> Secrets {
        let s = Secrets::new();
        for (k, v) in std::env::vars_os() {
            if k.to_string_lossy().starts_with(SECRET_ENV_PREFIX) {
                s.add(&v.to_string_lossy());
            }
        }
        s
    }

    /// Adds a secret value. Values shorter than 4 bytes are ignored (they
    /// would redact ordinary text).
    pub fn add(&self, value: &str) {
        if value.len() < 4 {
            return;
        }
        let mut v = self.values.write().expect("secrets lock");
        if !v.iter().any(|x| x == value) {
            v.push(value.to_string());
            // Longest first, so a secret that contains another is replaced whole.
            v.sort_by_key(|s| std::cmp::Reverse(s.len()));
        }
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.values.read().expect("secrets lock").is_empty()
    }

    /// Replaces every secret in `s` with [`REDACTED`].
    pub fn redact<'a>(&self, s: &'a str) -> Cow<'a, str> {
        let v = self.values.read().expect("secrets lock");
        if !v.iter().any(|x| s.contains(x.as_str())) {
            return Cow::Borrowed(s);
        }
        let mut out = s.to_string();
        for x in v.iter() {
            out = out.replace(x.as_str(), REDACTED);
        }
        Cow::Owned(out)
    }

    /// Redacts every string (keys and values) in a JSON value.
    pub fn redact_json(&self, value: &mut serde_json::Value) {
        use serde_json::Value;
        match value {
            Value::String(s) => {
                if let Cow::Owned(r) = self.redact(s) {
                    *s = r;
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|x| self.redact_json(x)),
            Value::Object(o) => {
                let entries: Vec<(String, Value)> = std::mem::take(o).into_iter().collect();
                for (k, mut v) in entries {
                    self.redact_json(&mut v);
                    o.insert(self.redact(&k).into_owned(), v);
                }
            }
            _ => {}
        }
    }

    /// Whether `bytes` contain any secret (raw, or as JSON-escaped text).
    pub fn found_in(&self, bytes: &[u8]) -> bool {
        let v = self.values.read().expect("secrets lock");
        v.iter().any(|x| {
            contains(bytes, x.as_bytes()) || {
                let esc = serde_json::to_string(x).unwrap_or_default();
                let esc = esc.trim_matches('"');
                esc != x && contains(bytes, esc.as_bytes())
            }
        })
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_strings_and_json() {
        let s = Secrets::new();
        s.add("hunter22");
        s.add("abc"); // too short, ignored
        assert_eq!(s.redact("pw=hunter22!"), "pw=[REDACTED]!");
        assert_eq!(s.redact("abc"), "abc");
        let mut j = serde_json::json!({"a": ["x hunter22"], "hunter22": 1});
        s.redact_json(&mut j);
        assert_eq!(
            j,
            serde_json::json!({"a": ["x [REDACTED]"], "[REDACTED]": 1})
        );
        assert!(s.found_in(b"....hunter22...."));
        assert!(!s.found_in(b"nothing here"));
    }
}
