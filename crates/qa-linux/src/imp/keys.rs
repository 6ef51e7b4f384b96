//! Keyboard input: key names → X keysyms → keycodes (from the server's
//! keyboard mapping) → XTest fake key events, with Shift for the upper
//! column and a temporarily remapped spare keycode for characters the
//! keymap lacks.

use super::capture::X11;
use qa_core::keys::{Key, KeyChord};
use x11rb::connection::Connection;
use x11rb::protocol::xproto::ConnectionExt as _;
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::wrapper::ConnectionExt as _;

const SHIFT_L: u32 = 0xffe1;
const CONTROL_L: u32 = 0xffe3;
const ALT_L: u32 = 0xffe9;
const SUPER_L: u32 = 0xffeb;

/// The keysym of a character (Latin-1 directly, the rest as Unicode keysyms).
pub fn char_keysym(c: char) -> u32 {
    let cp = c as u32;
    match c {
        '\n' => 0xff0d,
        '\t' => 0xff09,
        _ if (0x20..=0x7e).contains(&cp) || (0xa0..=0xff).contains(&cp) => cp,
        _ => 0x0100_0000 + cp,
    }
}

/// The keysym of a named key.
pub fn key_keysym(k: Key) -> u32 {
    match k {
        Key::Char(c) => char_keysym(c),
        Key::Enter => 0xff0d,
        Key::Tab => 0xff09,
        Key::Escape => 0xff1b,
        Key::Backspace => 0xff08,
        Key::Delete => 0xffff,
        Key::Insert => 0xff63,
        Key::Home => 0xff50,
        Key::End => 0xff57,
        Key::PageUp => 0xff55,
        Key::PageDown => 0xff56,
        Key::ArrowLeft => 0xff51,
        Key::ArrowUp => 0xff52,
        Key::ArrowRight => 0xff53,
        Key::ArrowDown => 0xff54,
        Key::F(n) => 0xffbe + u32::from(n.saturating_sub(1)),
    }
}

/// The keysym for a chord's key: with Ctrl/Alt/Meta and no explicit Shift,
/// letters are taken lower-case (`Ctrl+C` is Control + c).
pub fn chord_keysym(ch: &KeyChord) -> u32 {
    match ch.key {
        Key::Char(c) if (ch.ctrl || ch.alt || ch.meta) && !ch.shift && c.is_ascii_uppercase() => {
            char_keysym(c.to_ascii_lowercase())
        }
        k => key_keysym(k),
    }
}

/// A keyboard mapping snapshot.
pub(crate) struct Keymap {
    min: u8,
    per: usize,
    syms: Vec<u32>,
}

/// Where a keysym lives: keycode and whether Shift is needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct KeyPos {
    pub code: u8,
    pub shift: bool,
}

impl Keymap {
    pub(crate) fn load(x: &X11) -> Result<Keymap, String> {
        let setup = x.conn.setup();
        let (min, max) = (setup.min_keycode, setup.max_keycode);
        let r = x
            .conn
            .get_keyboard_mapping(min, max - min + 1)
            .map_err(|e| format!("GetKeyboardMapping: {e}"))?
            .reply()
            .map_err(|e| format!("GetKeyboardMapping: {e}"))?;
        Ok(Keymap {
            min,
            per: r.keysyms_per_keycode as usize,
            syms: r.keysyms,
        })
    }

    pub(crate) fn find(&self, sym: u32) -> Option<KeyPos> {
        if self.per == 0 {
            return None;
        }
        for (i, row) in self.syms.chunks(self.per).enumerate() {
            let code = self.min + i as u8;
            if row.first() == Some(&sym) {
                return Some(KeyPos { code, shift: false });
            }
            if row.get(1) == Some(&sym) {
                return Some(KeyPos { code, shift: true });
            }
        }
        None
    }

    fn spare(&self) -> Option<u8> {
        self.syms
            .chunks(self.per.max(1))
            .enumerate()
            .rev()
            .find(|(_, row)| row.iter().all(|s| *s == 0))
            .map(|(i, _)| self.min + i as u8)
    }
}

fn fake(x: &X11, press: bool, code: u8) -> Result<(), String> {
    let ty = if press { 2 } else { 3 }; // KeyPress / KeyRelease
    x.conn
        .xtest_fake_input(ty, code, x11rb::CURRENT_TIME, x.root, 0, 0, 0)
        .map_err(|e| format!("XTest: {e}"))?;
    Ok(())
}

/// Presses one chord (modifiers down, key, modifiers up).
pub(crate) fn press_chord(x: &X11, map: &mut Keymap, ch: &KeyChord) -> Result<(), String> {
    let sym = chord_keysym(ch);
    let (pos, remapped) = match map.find(sym) {
        Some(p) => (p, None),
        None => {
            let code = map
                .spare()
                .ok_or("no spare keycode to type this character")?;
            let per = map.per.max(1);
            let row = vec![sym; per];
            x.conn
                .change_keyboard_mapping(1, code, per as u8, &row)
                .map_err(|e| format!("ChangeKeyboardMapping: {e}"))?;
            x.conn.sync().map_err(|e| e.to_string())?;
            (KeyPos { code, shift: false }, Some(code))
        }
    };
    let mut mods = Vec::new();
    for (on, m) in [
        (ch.ctrl, CONTROL_L),
        (ch.alt, ALT_L),
        (ch.meta, SUPER_L),
        (ch.shift || pos.shift, SHIFT_L),
    ] {
        if on {
            if let Some(p) = map.find(m) {
                mods.push(p.code);
            }
        }
    }
    for &m in &mods {
        fake(x, true, m)?;
    }
    fake(x, true, pos.code)?;
    fake(x, false, pos.code)?;
    for &m in mods.iter().rev() {
        fake(x, false, m)?;
    }
    x.conn.sync().map_err(|e| e.to_string())?;
    if let Some(code) = remapped {
        // Give the client time to translate the event before the mapping goes back.
        std::thread::sleep(std::time::Duration::from_millis(20));
        let per = map.per.max(1);
        x.conn
            .change_keyboard_mapping(1, code, per as u8, &vec![0u32; per])
            .map_err(|e| format!("ChangeKeyboardMapping: {e}"))?;
        x.conn.sync().map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Types text character by character.
pub(crate) fn type_text(x: &X11, text: &str) -> Result<(), String> {
    let mut map = Keymap::load(x)?;
    for c in text.chars() {
        let ch = KeyChord::plain(Key::Char(c));
        let ch = match c {
            '\n' => KeyChord::plain(Key::Enter),
            '\t' => KeyChord::plain(Key::Tab),
            _ => ch,
        };
        press_chord(x, &mut map, &ch)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keysyms() {
        assert_eq!(char_keysym('a'), 0x61);
        assert_eq!(char_keysym('A'), 0x41);
        assert_eq!(char_keysym('é'), 0xe9);
        assert_eq!(char_keysym('€'), 0x0100_20ac);
        assert_eq!(key_keysym(Key::Enter), 0xff0d);
        assert_eq!(key_keysym(Key::F(1)), 0xffbe);
        assert_eq!(key_keysym(Key::F(12)), 0xffc9);
        let c = KeyChord {
            ctrl: true,
            ..KeyChord::plain(Key::Char('C'))
        };
        assert_eq!(chord_keysym(&c), 0x63);
        let s = KeyChord { shift: true, ..c };
        assert_eq!(chord_keysym(&s), 0x43);
    }

    #[test]
    fn keymap_lookup() {
        let m = Keymap {
            min: 8,
            per: 2,
            syms: vec![0x61, 0x41, 0x31, 0x21, 0, 0],
        };
        assert_eq!(
            m.find(0x61),
            Some(KeyPos {
                code: 8,
                shift: false
            })
        );
        assert_eq!(
            m.find(0x21),
            Some(KeyPos {
                code: 9,
                shift: true
            })
        );
        assert_eq!(m.find(0x7a), None);
        assert_eq!(m.spare(), Some(10));
    }
}
