//! The flow's key names as macOS keyboard input: the virtual key codes of
//! `CGEventCreateKeyboardEvent` (`kVK_*` in HIToolbox's `Events.h`) and the
//! modifier flags of `CGEventSetFlags`, in the order a person presses and
//! releases them. The flow's `Meta` is Command. Pure; the driver posts
//! them.

use qa_core::keys::{Key, KeyChord};

/// `kVK_Return`.
pub const RETURN: u16 = 0x24;
/// `kVK_Tab`.
pub const TAB: u16 = 0x30;
/// `kVK_Space`.
pub const SPACE: u16 = 0x31;
/// `kVK_Delete` (Backspace).
pub const BACKSPACE: u16 = 0x33;
/// `kVK_Escape`.
pub const ESCAPE: u16 = 0x35;
/// `kVK_Command`.
pub const COMMAND: u16 = 0x37;
/// `kVK_Shift`.
pub const SHIFT: u16 = 0x38;
/// `kVK_Option`.
pub const OPTION: u16 = 0x3A;
/// `kVK_Control`.
pub const CONTROL: u16 = 0x3B;
/// `kVK_Help` (where PC keyboards have Insert).
pub const HELP: u16 = 0x72;
/// `kVK_Home`.
pub const HOME: u16 = 0x73;
/// `kVK_PageUp`.
pub const PAGE_UP: u16 = 0x74;
/// `kVK_ForwardDelete`.
pub const FORWARD_DELETE: u16 = 0x75;
/// `kVK_End`.
pub const END: u16 = 0x77;
/// `kVK_PageDown`.
pub const PAGE_DOWN: u16 = 0x79;
/// `kVK_LeftArrow`.
pub const LEFT: u16 = 0x7B;
/// `kVK_RightArrow`.
pub const RIGHT: u16 = 0x7C;
/// `kVK_DownArrow`.
pub const DOWN: u16 = 0x7D;
/// `kVK_UpArrow`.
pub const UP: u16 = 0x7E;

/// `kVK_F1` … `kVK_F20`: not in order on the keyboard's code table.
pub const FUNCTION: [u16; 20] = [
    0x7A, 0x78, 0x63, 0x76, 0x60, 0x61, 0x62, 0x64, 0x65, 0x6D, 0x67, 0x6F, 0x69, 0x6B, 0x71, 0x6A,
    0x40, 0x4F, 0x50, 0x5A,
];

/// `kVK_ANSI_A` … `kVK_ANSI_Z`: key positions of the ANSI (US) layout.
pub const LETTERS: [u16; 26] = [
    0x00, 0x0B, 0x08, 0x02, 0x0E, 0x03, 0x05, 0x04, 0x22, 0x26, 0x28, 0x25, 0x2E, 0x2D, 0x1F, 0x23,
    0x0C, 0x0F, 0x01, 0x11, 0x20, 0x09, 0x0D, 0x07, 0x10, 0x06,
];

/// `kVK_ANSI_0` … `kVK_ANSI_9`.
pub const DIGITS: [u16; 10] = [0x1D, 0x12, 0x13, 0x14, 0x15, 0x17, 0x16, 0x1A, 0x1C, 0x19];

/// `kCGEventFlagMaskShift`.
pub const FLAG_SHIFT: u64 = 0x0002_0000;
/// `kCGEventFlagMaskControl`.
pub const FLAG_CONTROL: u64 = 0x0004_0000;
/// `kCGEventFlagMaskAlternate` (Option).
pub const FLAG_OPTION: u64 = 0x0008_0000;
/// `kCGEventFlagMaskCommand`.
pub const FLAG_COMMAND: u64 = 0x0010_0000;

/// One keyboard event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyEvent {
    /// A key goes down or up with these modifier flags held.
    Code {
        /// The virtual key code.
        code: u16,
        /// Released (else pressed).
        up: bool,
        /// `CGEventFlags` to set on the event.
        flags: u64,
    },
    /// A character without a layout-independent key (punctuation): a key
    /// event carrying the character (`CGEventKeyboardSetUnicodeString`)
    /// with these flags.
    Char {
        /// The character.
        c: char,
        /// Released (else pressed).
        up: bool,
        /// `CGEventFlags` to set on the event.
        flags: u64,
    },
}

/// A key's virtual key code; `None` for a character whose key depends on
/// the keyboard layout. Letters and digits are their ANSI positions: on
/// another layout a chord such as `Meta+z` presses the key where `z` is on
/// a US keyboard.
pub fn key_code(key: Key) -> Option<u16> {
    Some(match key {
        Key::Enter => RETURN,
        Key::Tab => TAB,
        Key::Escape => ESCAPE,
        Key::Backspace => BACKSPACE,
        Key::Delete => FORWARD_DELETE,
        Key::Insert => HELP,
        Key::Home => HOME,
        Key::End => END,
        Key::PageUp => PAGE_UP,
        Key::PageDown => PAGE_DOWN,
        Key::ArrowUp => UP,
        Key::ArrowDown => DOWN,
        Key::ArrowLeft => LEFT,
        Key::ArrowRight => RIGHT,
        Key::F(n @ 1..=20) => FUNCTION[usize::from(n) - 1],
        Key::F(_) => return None,
        Key::Char(' ') => SPACE,
        Key::Char(c) if c.is_ascii_alphabetic() => {
            LETTERS[usize::from(c.to_ascii_lowercase() as u8 - b'a')]
        }
        Key::Char(c) if c.is_ascii_digit() => DIGITS[usize::from(c as u8 - b'0')],
        Key::Char(_) => return None,
    })
}

/// The events of a chord: modifier keys down (Control, Option, Shift,
/// Command), each later event carrying the flags held so far; the key down
/// and up; the modifiers up in reverse. An uppercase letter adds Shift, as
/// a person would.
pub fn chord(c: &KeyChord) -> Vec<KeyEvent> {
    let shift = c.shift || matches!(c.key, Key::Char(ch) if ch.is_ascii_uppercase());
    let mods: Vec<(u16, u64)> = [
        (c.ctrl, CONTROL, FLAG_CONTROL),
        (c.alt, OPTION, FLAG_OPTION),
        (shift, SHIFT, FLAG_SHIFT),
        (c.meta, COMMAND, FLAG_COMMAND),
    ]
    .into_iter()
    .filter(|&(on, _, _)| on)
    .map(|(_, code, flag)| (code, flag))
    .collect();
    let mut out = Vec::new();
    let mut flags = 0u64;
    for &(code, flag) in &mods {
        flags |= flag;
        out.push(KeyEvent::Code {
            code,
            up: false,
            flags,
        });
    }
    match (key_code(c.key), c.key) {
        (Some(code), _) => {
            for up in [false, true] {
                out.push(KeyEvent::Code { code, up, flags });
            }
        }
        (None, Key::Char(ch)) => {
            for up in [false, true] {
                out.push(KeyEvent::Char { c: ch, up, flags });
            }
        }
        (None, _) => {}
    }
    for &(code, flag) in mods.iter().rev() {
        flags &= !flag;
        out.push(KeyEvent::Code {
            code,
            up: true,
            flags,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(code: u16, up: bool, flags: u64) -> KeyEvent {
        KeyEvent::Code { code, up, flags }
    }

    #[test]
    fn named_keys_have_their_virtual_key_codes() {
        let cases = [
            ("Enter", 0x24),
            ("Tab", 0x30),
            ("Escape", 0x35),
            ("Backspace", 0x33),
            ("Delete", 0x75),
            ("Home", 0x73),
            ("End", 0x77),
            ("PageUp", 0x74),
            ("PageDown", 0x79),
            ("ArrowLeft", 0x7B),
            ("ArrowRight", 0x7C),
            ("ArrowDown", 0x7D),
            ("ArrowUp", 0x7E),
            ("F1", 0x7A),
            ("F5", 0x60),
            ("F12", 0x6F),
            ("Space", 0x31),
            ("a", 0x00),
            ("s", 0x01),
            ("z", 0x06),
            ("q", 0x0C),
            ("0", 0x1D),
            ("1", 0x12),
            ("5", 0x17),
            ("9", 0x19),
        ];
        for (name, c) in cases {
            let k = KeyChord::parse(name).unwrap();
            assert_eq!(chord(&k), [code(c, false, 0), code(c, true, 0)], "{name}");
        }
    }

    #[test]
    fn the_tables_hold_distinct_codes() {
        let mut all: Vec<u16> = LETTERS
            .iter()
            .chain(&DIGITS)
            .chain(&FUNCTION)
            .copied()
            .collect();
        all.extend([
            RETURN,
            TAB,
            SPACE,
            BACKSPACE,
            ESCAPE,
            COMMAND,
            SHIFT,
            OPTION,
            CONTROL,
            HELP,
            HOME,
            PAGE_UP,
            FORWARD_DELETE,
            END,
            PAGE_DOWN,
            LEFT,
            RIGHT,
            DOWN,
            UP,
        ]);
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n, "two keys share a code");
    }

    #[test]
    fn meta_is_command_and_modifiers_carry_their_flags() {
        let k = chord(&KeyChord::parse("Meta+Shift+z").unwrap());
        let both = FLAG_SHIFT | FLAG_COMMAND;
        assert_eq!(
            k,
            [
                code(SHIFT, false, FLAG_SHIFT),
                code(COMMAND, false, both),
                code(0x06, false, both),
                code(0x06, true, both),
                code(COMMAND, true, FLAG_SHIFT),
                code(SHIFT, true, 0),
            ]
        );
        let ctrl_alt = chord(&KeyChord::parse("Ctrl+Alt+F4").unwrap());
        assert_eq!(ctrl_alt[0], code(CONTROL, false, FLAG_CONTROL));
        assert_eq!(ctrl_alt[2], code(0x76, false, FLAG_CONTROL | FLAG_OPTION));
    }

    #[test]
    fn an_uppercase_letter_adds_shift_and_punctuation_is_a_character() {
        let k = chord(&KeyChord::parse("A").unwrap());
        assert_eq!(k.first(), Some(&code(SHIFT, false, FLAG_SHIFT)));
        assert_eq!(k[1], code(0x00, false, FLAG_SHIFT));
        assert_eq!(k.last(), Some(&code(SHIFT, true, 0)));
        let colon = chord(&KeyChord::parse("Meta+:").unwrap());
        assert_eq!(
            colon[1],
            KeyEvent::Char {
                c: ':',
                up: false,
                flags: FLAG_COMMAND
            }
        );
    }
}
