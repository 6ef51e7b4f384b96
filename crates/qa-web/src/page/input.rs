//! Input dispatch on a page: mouse clicks and moves, key chords, and the
//! rule that a popup which closes itself in answer to an input took it.

use super::Page;
use crate::cdp::commands::{
    Command, DispatchKeyEvent, DispatchMouseEvent, KeyEventType, MouseButton, MouseEventType,
};
use crate::cdp::CdpError;
use crate::codes::WebCode;
use qa_core::keys::{Key, KeyChord};
use qa_core::DriverError;

/// How Chromium names a key: `key`, `code`, `windowsVirtualKeyCode` and
/// the text it types (if any).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeyDefinition {
    /// The `key` value (`Enter`, `a`, `F5`).
    pub key: String,
    /// The physical `code` (`Enter`, `KeyA`; empty when none).
    pub code: String,
    /// `windowsVirtualKeyCode` (0 when none).
    pub vk: u32,
    /// The text the key types (`None`: none).
    pub text: Option<String>,
}

/// The definition of a key.
pub(crate) fn key_definition(k: Key) -> KeyDefinition {
    let s = |key: &str, code: &str, vk: u32, text: Option<&str>| KeyDefinition {
        key: key.to_string(),
        code: code.to_string(),
        vk,
        text: text.map(str::to_string),
    };
    match k {
        Key::Enter => s("Enter", "Enter", 13, Some("\r")),
        Key::Tab => s("Tab", "Tab", 9, None),
        Key::Escape => s("Escape", "Escape", 27, None),
        Key::Backspace => s("Backspace", "Backspace", 8, None),
        Key::Delete => s("Delete", "Delete", 46, None),
        Key::Insert => s("Insert", "Insert", 45, None),
        Key::Home => s("Home", "Home", 36, None),
        Key::End => s("End", "End", 35, None),
        Key::PageUp => s("PageUp", "PageUp", 33, None),
        Key::PageDown => s("PageDown", "PageDown", 34, None),
        Key::ArrowUp => s("ArrowUp", "ArrowUp", 38, None),
        Key::ArrowDown => s("ArrowDown", "ArrowDown", 40, None),
        Key::ArrowLeft => s("ArrowLeft", "ArrowLeft", 37, None),
        Key::ArrowRight => s("ArrowRight", "ArrowRight", 39, None),
        Key::F(n) => KeyDefinition {
            key: format!("F{n}"),
            code: format!("F{n}"),
            vk: 111 + n as u32,
            text: None,
        },
        Key::Char(' ') => s(" ", "Space", 32, Some(" ")),
        Key::Char(c) => {
            let up = c.to_ascii_uppercase();
            let (code, vk) = if c.is_ascii_alphabetic() {
                (format!("Key{up}"), up as u32)
            } else if c.is_ascii_digit() {
                (format!("Digit{c}"), c as u32)
            } else {
                (String::new(), 0)
            };
            KeyDefinition {
                key: c.to_string(),
                code,
                vk,
                text: Some(c.to_string()),
            }
        }
    }
}

/// A key event of a definition (no modifiers field when `modifiers` is
/// `None`).
pub(crate) fn key_event(kind: KeyEventType, def: &KeyDefinition) -> DispatchKeyEvent {
    DispatchKeyEvent {
        kind,
        key: def.key.clone(),
        code: def.code.clone(),
        windows_virtual_key_code: def.vk,
        modifiers: None,
        text: None,
        unmodified_text: None,
    }
}

impl Page {
    /// One input call. A popup that closes itself in answer to the input
    /// (a "Close" button) took the input: that is not an error.
    pub async fn input<C: Command>(&self, cmd: &C) -> Result<(), DriverError> {
        match self.send(cmd).await {
            Ok(_) => Ok(()),
            Err(e) if e.target_gone() && self.is_popup() => Ok(()),
            Err(e @ CdpError::Protocol { .. }) => Err(DriverError::new(
                WebCode::InputFailed,
                format!("{}: {e}", C::METHOD),
            )),
            Err(e) => Err(e.into()),
        }
    }

    /// Mouse move + press + release at (x, y) with `clicks` clicks.
    pub async fn click_at(&self, x: f64, y: f64, clicks: u32) -> Result<(), DriverError> {
        let button = |kind: MouseEventType, n: u32| DispatchMouseEvent {
            button: Some(MouseButton::Left),
            buttons: Some(u8::from(kind == MouseEventType::Pressed)),
            click_count: Some(n),
            ..DispatchMouseEvent::at(kind, x, y)
        };
        let mut events = vec![DispatchMouseEvent::at(MouseEventType::Moved, x, y)];
        for n in 1..=clicks {
            events.push(button(MouseEventType::Pressed, n));
            events.push(button(MouseEventType::Released, n));
        }
        // Pipelined: every event is written at once, in order (each call
        // writes its message when first polled, and `join_all` polls in
        // order); Chromium handles a session's input in that order, so
        // this is the same sequence without a round trip between events.
        let answers = futures_util::future::join_all(events.iter().map(|e| self.input(e))).await;
        answers.into_iter().collect()
    }

    /// Presses a key chord (keyDown, keyUp) on the focused element.
    pub async fn press(&self, chord: &KeyChord) -> Result<(), DriverError> {
        if let Some(which) = self.sh.no_key_events.get() {
            return Err(DriverError::new(
                WebCode::InputFailed,
                format!("{which} rejects DevTools key events in its renderer and then answers no input at all, so ui-qa sends none"),
            )
            .with_remediation("use fill to type text and click for buttons; a key press needs Qt WebEngine 6 or a Chromium"));
        }
        let def = key_definition(chord.key);
        let modifiers = (chord.alt as u8)
            | (chord.ctrl as u8) << 1
            | (chord.meta as u8) << 2
            | (chord.shift as u8) << 3;
        let shifted = match (chord.key, chord.shift) {
            (Key::Char(c), true) => c.to_uppercase().to_string(),
            _ => def.key.clone(),
        };
        let typed = def.text.is_some() && !chord.ctrl && !chord.alt && !chord.meta;
        let kind = if typed {
            KeyEventType::KeyDown
        } else {
            KeyEventType::RawKeyDown
        };
        let mut down = DispatchKeyEvent {
            key: shifted.clone(),
            modifiers: Some(modifiers),
            ..key_event(kind, &def)
        };
        if typed {
            let t = match (chord.key, chord.shift) {
                (Key::Char(c), true) => c.to_uppercase().to_string(),
                _ => def.text.clone().unwrap_or_default(),
            };
            down.text = Some(t.clone());
            down.unmodified_text = Some(t);
        }
        let up = DispatchKeyEvent {
            key: shifted,
            modifiers: Some(modifiers),
            ..key_event(KeyEventType::KeyUp, &def)
        };
        // Pipelined, in order (see `Page::click_at`).
        let (a, b) = futures_util::join!(self.input(&down), self.input(&up));
        a.and(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys() {
        assert_eq!(key_definition(Key::Enter).text.as_deref(), Some("\r"));
        assert_eq!(key_definition(Key::Char('a')).code, "KeyA");
        assert_eq!(key_definition(Key::Char('a')).vk, 65);
        assert_eq!(key_definition(Key::F(5)).vk, 116);
    }

    #[test]
    fn key_events_are_spelled_like_the_protocol() {
        let e = key_event(KeyEventType::RawKeyDown, &key_definition(Key::Delete));
        assert_eq!(
            serde_json::to_value(e).unwrap(),
            serde_json::json!({ "type": "rawKeyDown", "key": "Delete", "code": "Delete", "windowsVirtualKeyCode": 46 })
        );
    }
}
