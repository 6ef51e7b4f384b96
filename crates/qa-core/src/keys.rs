//! Key names shared by every driver: `"Enter"`, `"Ctrl+C"`, `"Alt+x"`,
//! `"Shift+Tab"`, `"F5"`, `"ArrowUp"`, `"PageDown"` or a single printable
//! character. Drivers encode a [`KeyChord`] for their surface (terminal
//! escape sequences, X11 keysyms, CDP key events).

use std::fmt;

/// A named key (without modifiers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Key {
    /// A printable character (`"a"`, `":"`, `"Space"` is `' '`).
    Char(char),
    /// Enter / Return.
    Enter,
    /// Tab.
    Tab,
    /// Escape.
    Escape,
    /// Backspace.
    Backspace,
    /// Delete (forward).
    Delete,
    /// Insert.
    Insert,
    /// Home.
    Home,
    /// End.
    End,
    /// Page Up.
    PageUp,
    /// Page Down.
    PageDown,
    /// Arrow up.
    ArrowUp,
    /// Arrow down.
    ArrowDown,
    /// Arrow left.
    ArrowLeft,
    /// Arrow right.
    ArrowRight,
    /// Function key F1–F12.
    F(u8),
}

/// A key with modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyChord {
    /// The key.
    pub key: Key,
    /// Control held.
    pub ctrl: bool,
    /// Alt (Meta on terminals) held.
    pub alt: bool,
    /// Shift held.
    pub shift: bool,
    /// Super / Command held.
    pub meta: bool,
}

impl KeyChord {
    /// A chord without modifiers.
    pub fn plain(key: Key) -> Self {
        KeyChord {
            key,
            ctrl: false,
            alt: false,
            shift: false,
            meta: false,
        }
    }

    /// Parses a key name such as `"Ctrl+Shift+ArrowUp"` or `"q"`.
    /// Raw control characters are rejected.
    pub fn parse(s: &str) -> Result<KeyChord, String> {
        if s.is_empty() {
            return Err("empty key name".into());
        }
        if s.chars().any(|c| c.is_control()) {
            return Err(format!(
                "key {s:?} contains a raw control character; use a name such as \"Enter\", \"Tab\", \"Escape\" or \"Ctrl+C\""
            ));
        }
        // A lone "+" is the plus key.
        let parts: Vec<&str> = if s == "+" {
            vec!["+"]
        } else if let Some(stripped) = s.strip_suffix("++") {
            let mut v: Vec<&str> = stripped.split('+').collect();
            v.push("+");
            v
        } else {
            s.split('+').collect()
        };
        let (mods, last) = parts.split_at(parts.len() - 1);
        let mut chord = KeyChord::plain(parse_key(last[0]).ok_or_else(|| {
            format!(
                "unknown key {:?}; use a single character or one of Enter, Tab, Escape, Backspace, Delete, Insert, Home, End, PageUp, PageDown, ArrowUp, ArrowDown, ArrowLeft, ArrowRight, Space, F1-F12",
                last[0]
            )
        })?);
        for m in mods {
            match m.to_ascii_lowercase().as_str() {
                "ctrl" | "control" => chord.ctrl = true,
                "alt" | "option" => chord.alt = true,
                "shift" => chord.shift = true,
                "meta" | "super" | "cmd" | "command" => chord.meta = true,
                other => {
                    return Err(format!(
                        "unknown modifier {other:?} in {s:?}; use Ctrl, Alt, Shift or Meta"
                    ))
                }
            }
        }
        Ok(chord)
    }
}

fn parse_key(s: &str) -> Option<Key> {
    let mut chars = s.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return Some(Key::Char(c));
    }
    let k = match s.to_ascii_lowercase().as_str() {
        "enter" | "return" => Key::Enter,
        "tab" => Key::Tab,
        "escape" | "esc" => Key::Escape,
        "backspace" => Key::Backspace,
        "delete" | "del" => Key::Delete,
        "insert" | "ins" => Key::Insert,
        "home" => Key::Home,
        "end" => Key::End,
        "pageup" => Key::PageUp,
        "pagedown" => Key::PageDown,
        "arrowup" | "up" => Key::ArrowUp,
        "arrowdown" | "down" => Key::ArrowDown,
        "arrowleft" | "left" => Key::ArrowLeft,
        "arrowright" | "right" => Key::ArrowRight,
        "space" => Key::Char(' '),
        "plus" => Key::Char('+'),
        f if f.starts_with('f') && f.len() <= 3 => {
            let n: u8 = f[1..].parse().ok()?;
            if (1..=12).contains(&n) {
                Key::F(n)
            } else {
                return None;
            }
        }
        _ => return None,
    };
    Some(k)
}

impl fmt::Display for KeyChord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ctrl {
            f.write_str("Ctrl+")?;
        }
        if self.alt {
            f.write_str("Alt+")?;
        }
        if self.shift {
            f.write_str("Shift+")?;
        }
        if self.meta {
            f.write_str("Meta+")?;
        }
        match self.key {
            Key::Char(' ') => f.write_str("Space"),
            Key::Char(c) => write!(f, "{c}"),
            Key::F(n) => write!(f, "F{n}"),
            other => write!(f, "{other:?}"),
        }
    }
}

/// A key name from a flow, parsed once when the flow is parsed: it keeps
/// the text as written (for messages and serialization) and the
/// [`KeyChord`] every driver encodes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KeyName {
    text: String,
    chord: KeyChord,
}

/// The prefix of the deserialization error for an unknown key name (the
/// flow parser maps it to `flow.invalid_key`).
pub(crate) const INVALID_KEY: &str = "invalid key";

impl KeyName {
    /// Parses a key name.
    pub fn parse(text: &str) -> Result<KeyName, String> {
        Ok(KeyName {
            chord: KeyChord::parse(text)?,
            text: text.to_string(),
        })
    }

    /// The chord.
    pub fn chord(&self) -> KeyChord {
        self.chord
    }

    /// The name as written in the flow.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for KeyName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl serde::Serialize for KeyName {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> serde::Deserialize<'de> for KeyName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<KeyName, D::Error> {
        let text = String::deserialize(d)?;
        KeyName::parse(&text).map_err(|e| serde::de::Error::custom(format!("{INVALID_KEY}: {e}")))
    }
}

impl schemars::JsonSchema for KeyName {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "String".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        String::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_and_modifiers() {
        assert_eq!(KeyChord::parse("Enter").unwrap().key, Key::Enter);
        let c = KeyChord::parse("Ctrl+C").unwrap();
        assert!(c.ctrl && c.key == Key::Char('C'));
        let s = KeyChord::parse("Shift+Tab").unwrap();
        assert!(s.shift && s.key == Key::Tab);
        assert_eq!(KeyChord::parse("F10").unwrap().key, Key::F(10));
        assert_eq!(KeyChord::parse("+").unwrap().key, Key::Char('+'));
        assert_eq!(KeyChord::parse("Ctrl++").unwrap().key, Key::Char('+'));
        assert_eq!(KeyChord::parse("Space").unwrap().key, Key::Char(' '));
    }

    #[test]
    fn rejects_bad_keys() {
        assert!(KeyChord::parse("\u{3}").is_err());
        assert!(KeyChord::parse("F13").is_err());
        assert!(KeyChord::parse("Hyper+x").is_err());
        assert!(KeyChord::parse("Bogus").is_err());
        assert!(KeyChord::parse("").is_err());
    }
}
