//! The flow's key names as Windows keyboard input: virtual-key codes for
//! [`SendInput`](https://learn.microsoft.com/windows/win32/api/winuser/nf-winuser-sendinput),
//! in the order a person presses and releases them. Pure; `imp::input`
//! sends them.

use qa_core::keys::{Key, KeyChord};

/// `VK_BACK`.
pub const VK_BACK: u16 = 0x08;
/// `VK_TAB`.
pub const VK_TAB: u16 = 0x09;
/// `VK_RETURN`.
pub const VK_RETURN: u16 = 0x0D;
/// `VK_SHIFT`.
pub const VK_SHIFT: u16 = 0x10;
/// `VK_CONTROL`.
pub const VK_CONTROL: u16 = 0x11;
/// `VK_MENU` (Alt).
pub const VK_MENU: u16 = 0x12;
/// `VK_ESCAPE`.
pub const VK_ESCAPE: u16 = 0x1B;
/// `VK_SPACE`.
pub const VK_SPACE: u16 = 0x20;
/// `VK_PRIOR` (Page Up).
pub const VK_PRIOR: u16 = 0x21;
/// `VK_NEXT` (Page Down).
pub const VK_NEXT: u16 = 0x22;
/// `VK_END`.
pub const VK_END: u16 = 0x23;
/// `VK_HOME`.
pub const VK_HOME: u16 = 0x24;
/// `VK_LEFT`.
pub const VK_LEFT: u16 = 0x25;
/// `VK_UP`.
pub const VK_UP: u16 = 0x26;
/// `VK_RIGHT`.
pub const VK_RIGHT: u16 = 0x27;
/// `VK_DOWN`.
pub const VK_DOWN: u16 = 0x28;
/// `VK_INSERT`.
pub const VK_INSERT: u16 = 0x2D;
/// `VK_DELETE`.
pub const VK_DELETE: u16 = 0x2E;
/// `VK_LWIN` (the Windows key: the flow's `Meta`).
pub const VK_LWIN: u16 = 0x5B;
/// `VK_F1`; F2–F12 follow it.
pub const VK_F1: u16 = 0x70;

/// One keyboard event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyEvent {
    /// A virtual key goes down or up. `extended` keys (the arrows and the
    /// navigation block) set `KEYEVENTF_EXTENDEDKEY`, so they are not read
    /// as the numeric keypad's.
    Virtual {
        /// The virtual-key code.
        vk: u16,
        /// Released (else pressed).
        up: bool,
        /// `KEYEVENTF_EXTENDEDKEY`.
        extended: bool,
    },
    /// A character that has no layout-independent virtual key: the
    /// Windows side looks it up in the keyboard layout (`VkKeyScanW`) when
    /// modifiers are held, and sends it as a Unicode event otherwise.
    Char {
        /// The character.
        c: char,
        /// Released (else pressed).
        up: bool,
    },
    /// One UTF-16 unit of typed text (`KEYEVENTF_UNICODE`).
    Unicode {
        /// The unit.
        unit: u16,
        /// Released (else pressed).
        up: bool,
    },
}

/// A key's virtual-key code and whether it is an extended key; `None` for
/// a character that depends on the keyboard layout.
pub fn virtual_key(key: Key) -> Option<(u16, bool)> {
    Some(match key {
        Key::Enter => (VK_RETURN, false),
        Key::Tab => (VK_TAB, false),
        Key::Escape => (VK_ESCAPE, false),
        Key::Backspace => (VK_BACK, false),
        Key::Delete => (VK_DELETE, true),
        Key::Insert => (VK_INSERT, true),
        Key::Home => (VK_HOME, true),
        Key::End => (VK_END, true),
        Key::PageUp => (VK_PRIOR, true),
        Key::PageDown => (VK_NEXT, true),
        Key::ArrowUp => (VK_UP, true),
        Key::ArrowDown => (VK_DOWN, true),
        Key::ArrowLeft => (VK_LEFT, true),
        Key::ArrowRight => (VK_RIGHT, true),
        Key::F(n @ 1..=24) => (VK_F1 + u16::from(n) - 1, false),
        Key::F(_) => return None,
        Key::Char(' ') => (VK_SPACE, false),
        // Letters and digits have the same virtual key on every layout:
        // 'A'–'Z' and '0'–'9' themselves.
        Key::Char(c) if c.is_ascii_alphanumeric() => (c.to_ascii_uppercase() as u16, false),
        Key::Char(_) => return None,
    })
}

fn vk(vk: u16, up: bool) -> KeyEvent {
    KeyEvent::Virtual {
        vk,
        up,
        extended: vk == VK_LWIN,
    }
}

/// The events of a chord: modifiers down (Ctrl, Alt, Shift, Windows), the
/// key down and up, modifiers up in reverse. An uppercase letter without
/// Shift is typed as that letter (Shift is added), as a person would.
pub fn chord(c: &KeyChord) -> Vec<KeyEvent> {
    let shift = c.shift || matches!(c.key, Key::Char(ch) if ch.is_ascii_uppercase());
    let mods: Vec<u16> = [
        (c.ctrl, VK_CONTROL),
        (c.alt, VK_MENU),
        (shift, VK_SHIFT),
        (c.meta, VK_LWIN),
    ]
    .into_iter()
    .filter(|&(on, _)| on)
    .map(|(_, v)| v)
    .collect();
    let mut out: Vec<KeyEvent> = mods.iter().map(|&m| vk(m, false)).collect();
    match (virtual_key(c.key), c.key) {
        (Some((code, extended)), _) => {
            out.push(KeyEvent::Virtual {
                vk: code,
                up: false,
                extended,
            });
            out.push(KeyEvent::Virtual {
                vk: code,
                up: true,
                extended,
            });
        }
        (None, Key::Char(ch)) => {
            out.push(KeyEvent::Char { c: ch, up: false });
            out.push(KeyEvent::Char { c: ch, up: true });
        }
        (None, _) => {}
    }
    out.extend(mods.iter().rev().map(|&m| vk(m, true)));
    out
}

/// The events that type `text`: each character as Unicode input (so any
/// layout and any script types exactly), except line breaks and tabs,
/// which are the Enter and Tab keys (`\r\n` is one Enter).
pub fn text(text: &str) -> Vec<KeyEvent> {
    let mut out = Vec::new();
    let mut prev_cr = false;
    for ch in text.chars() {
        let key = match ch {
            '\n' if prev_cr => None,
            '\r' | '\n' => Some(VK_RETURN),
            '\t' => Some(VK_TAB),
            _ => {
                let mut buf = [0u16; 2];
                for &unit in ch.encode_utf16(&mut buf).iter() {
                    out.push(KeyEvent::Unicode { unit, up: false });
                    out.push(KeyEvent::Unicode { unit, up: true });
                }
                None
            }
        };
        if let Some(code) = key {
            out.push(vk(code, false));
            out.push(vk(code, true));
        }
        prev_cr = ch == '\r';
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(vk: u16, up: bool, extended: bool) -> KeyEvent {
        KeyEvent::Virtual { vk, up, extended }
    }

    #[test]
    fn named_keys_have_their_virtual_key_codes() {
        let cases = [
            ("Enter", VK_RETURN, false),
            ("Tab", 0x09, false),
            ("Escape", 0x1B, false),
            ("Backspace", 0x08, false),
            ("Delete", 0x2E, true),
            ("Home", 0x24, true),
            ("PageDown", 0x22, true),
            ("ArrowLeft", 0x25, true),
            ("ArrowDown", 0x28, true),
            ("F1", 0x70, false),
            ("F12", 0x7B, false),
            ("Space", 0x20, false),
            ("a", 0x41, false),
            ("z", 0x5A, false),
            ("7", 0x37, false),
        ];
        for (name, code, ext) in cases {
            let c = KeyChord::parse(name).unwrap();
            assert_eq!(
                chord(&c),
                [v(code, false, ext), v(code, true, ext)],
                "{name}"
            );
        }
    }

    #[test]
    fn modifiers_wrap_the_key_and_release_in_reverse() {
        let c = KeyChord::parse("Ctrl+Shift+s").unwrap();
        assert_eq!(
            chord(&c),
            [
                v(VK_CONTROL, false, false),
                v(VK_SHIFT, false, false),
                v(0x53, false, false),
                v(0x53, true, false),
                v(VK_SHIFT, true, false),
                v(VK_CONTROL, true, false),
            ]
        );
        let meta = chord(&KeyChord::parse("Meta+r").unwrap());
        assert_eq!(meta[0], v(VK_LWIN, false, true));
        assert_eq!(meta[3], v(VK_LWIN, true, true));
        let alt = chord(&KeyChord::parse("Alt+F4").unwrap());
        assert_eq!(alt[0], v(VK_MENU, false, false));
        assert_eq!(alt[1], v(0x73, false, false));
    }

    #[test]
    fn an_uppercase_letter_adds_shift_and_punctuation_goes_through_the_layout() {
        let c = chord(&KeyChord::parse("A").unwrap());
        assert_eq!(c.first(), Some(&v(VK_SHIFT, false, false)));
        assert_eq!(c.last(), Some(&v(VK_SHIFT, true, false)));
        let colon = chord(&KeyChord::parse("Ctrl+:").unwrap());
        assert_eq!(
            colon,
            [
                v(VK_CONTROL, false, false),
                KeyEvent::Char { c: ':', up: false },
                KeyEvent::Char { c: ':', up: true },
                v(VK_CONTROL, true, false),
            ]
        );
    }

    #[test]
    fn text_is_unicode_with_enter_and_tab_as_keys() {
        let t = text("é\r\nx\t😀\n");
        let units: Vec<u16> = t
            .iter()
            .filter_map(|e| match e {
                KeyEvent::Unicode { unit, up: false } => Some(*unit),
                _ => None,
            })
            .collect();
        assert_eq!(units, [0xE9, 0x78, 0xD83D, 0xDE00]);
        let keys: Vec<u16> = t
            .iter()
            .filter_map(|e| match e {
                KeyEvent::Virtual { vk, up: false, .. } => Some(*vk),
                _ => None,
            })
            .collect();
        assert_eq!(keys, [VK_RETURN, VK_TAB, VK_RETURN], "\\r\\n is one Enter");
        assert_eq!(t.len(), 2 * (units.len() + keys.len()));
    }
}
