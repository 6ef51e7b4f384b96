//! Key and paste encoding for a terminal: [`KeyChord`]s become the bytes an
//! xterm-compatible terminal sends, chosen from the live terminal modes.
//!
//! Pure functions, no I/O: the session reads the modes from the terminal
//! model and writes the bytes into the PTY.

use qa_core::keys::{Key, KeyChord};

/// The terminal modes that change what a key sends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeyModes {
    /// DECCKM (`ESC[?1h`): arrows and Home/End send `ESC O x` instead of `ESC [ x`.
    pub app_cursor: bool,
}

/// Why a key has no terminal encoding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnencodableKey(pub String);

/// The xterm modifier parameter: 1 + Shift(1) + Alt(2) + Ctrl(4).
fn modifier_param(chord: &KeyChord) -> u8 {
    1 + u8::from(chord.shift) + 2 * u8::from(chord.alt) + 4 * u8::from(chord.ctrl)
}

/// A cursor-style key (`ESC [ x` / `ESC O x`, or `ESC [ 1 ; m x` with modifiers).
fn cursor_key(final_byte: char, chord: &KeyChord, modes: KeyModes) -> String {
    let m = modifier_param(chord);
    if m > 1 {
        format!("\x1b[1;{m}{final_byte}")
    } else if modes.app_cursor {
        format!("\x1bO{final_byte}")
    } else {
        format!("\x1b[{final_byte}")
    }
}

/// An SS3 function key (F1–F4): `ESC O x`, or `ESC [ 1 ; m x` with modifiers.
fn ss3_key(final_byte: char, chord: &KeyChord) -> String {
    let m = modifier_param(chord);
    if m > 1 {
        format!("\x1b[1;{m}{final_byte}")
    } else {
        format!("\x1bO{final_byte}")
    }
}

/// A tilde key (`ESC [ n ~`, or `ESC [ n ; m ~` with modifiers).
fn tilde_key(n: u8, chord: &KeyChord) -> String {
    let m = modifier_param(chord);
    if m > 1 {
        format!("\x1b[{n};{m}~")
    } else {
        format!("\x1b[{n}~")
    }
}

/// The control byte for Ctrl+`c`, when there is one.
fn ctrl_byte(c: char) -> Option<u8> {
    match c {
        'a'..='z' => Some(c as u8 - b'a' + 1),
        'A'..='Z' => Some(c as u8 - b'A' + 1),
        '@' | ' ' | '2' => Some(0),
        '[' | '3' => Some(0x1b),
        '\\' | '4' => Some(0x1c),
        ']' | '5' => Some(0x1d),
        '^' | '6' => Some(0x1e),
        '_' | '7' | '/' => Some(0x1f),
        '?' | '8' => Some(0x7f),
        _ => None,
    }
}

/// Encodes one key chord for the terminal in its current modes.
pub fn encode_key(chord: &KeyChord, modes: KeyModes) -> Result<Vec<u8>, UnencodableKey> {
    if chord.meta {
        return Err(UnencodableKey(format!(
            "{chord}: terminals have no Meta/Super modifier; use Alt (sent as an ESC prefix)"
        )));
    }
    let alt_prefix = |mut v: Vec<u8>| {
        if chord.alt {
            v.insert(0, 0x1b);
        }
        v
    };
    let s = match chord.key {
        Key::Char(c) => {
            if chord.ctrl {
                let b = ctrl_byte(c).ok_or_else(|| {
                    UnencodableKey(format!("{chord}: Ctrl+{c:?} has no control code"))
                })?;
                return Ok(alt_prefix(vec![b]));
            }
            let c = if chord.shift { shifted(c) } else { c };
            let mut buf = [0u8; 4];
            return Ok(alt_prefix(c.encode_utf8(&mut buf).as_bytes().to_vec()));
        }
        Key::Enter => return Ok(alt_prefix(b"\r".to_vec())),
        Key::Tab if chord.shift => "\x1b[Z".to_string(),
        Key::Tab => return Ok(alt_prefix(b"\t".to_vec())),
        Key::Escape => return Ok(alt_prefix(b"\x1b".to_vec())),
        Key::Backspace if chord.ctrl => return Ok(alt_prefix(vec![0x08])),
        Key::Backspace => return Ok(alt_prefix(vec![0x7f])),
        Key::ArrowUp => cursor_key('A', chord, modes),
        Key::ArrowDown => cursor_key('B', chord, modes),
        Key::ArrowRight => cursor_key('C', chord, modes),
        Key::ArrowLeft => cursor_key('D', chord, modes),
        Key::Home => cursor_key('H', chord, modes),
        Key::End => cursor_key('F', chord, modes),
        Key::Insert => tilde_key(2, chord),
        Key::Delete => tilde_key(3, chord),
        Key::PageUp => tilde_key(5, chord),
        Key::PageDown => tilde_key(6, chord),
        Key::F(n @ 1..=4) => ss3_key((b'P' + n - 1) as char, chord),
        Key::F(n @ 5..=12) => {
            const CODES: [u8; 8] = [15, 17, 18, 19, 20, 21, 23, 24];
            tilde_key(CODES[usize::from(n - 5)], chord)
        }
        Key::F(n) => return Err(UnencodableKey(format!("F{n} is not a terminal key"))),
    };
    Ok(s.into_bytes())
}

/// Shift applied to a single character (letters upper-case; others unchanged).
fn shifted(c: char) -> char {
    if c.is_ascii_lowercase() {
        c.to_ascii_uppercase()
    } else {
        c
    }
}

/// Encodes pasted text: ESC (and other C0 controls except tab and newline)
/// removed, newlines sent as `\r` as terminals do, wrapped in
/// `ESC[200~ … ESC[201~`.
pub fn encode_paste(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + 12);
    out.extend_from_slice(b"\x1b[200~");
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                out.push(b'\r');
            }
            '\n' => out.push(b'\r'),
            '\t' => out.push(b'\t'),
            c if c.is_control() => {}
            c => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    out.extend_from_slice(b"\x1b[201~");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(name: &str, app: bool) -> String {
        let chord = KeyChord::parse(name).unwrap();
        String::from_utf8(encode_key(&chord, KeyModes { app_cursor: app }).unwrap()).unwrap()
    }

    #[test]
    fn arrows_follow_cursor_mode() {
        assert_eq!(enc("ArrowUp", false), "\x1b[A");
        assert_eq!(enc("ArrowUp", true), "\x1bOA");
        assert_eq!(enc("ArrowLeft", true), "\x1bOD");
        assert_eq!(enc("Home", false), "\x1b[H");
        assert_eq!(enc("End", true), "\x1bOF");
        // Modifiers always use the CSI form.
        assert_eq!(enc("Ctrl+ArrowRight", true), "\x1b[1;5C");
        assert_eq!(enc("Shift+ArrowUp", false), "\x1b[1;2A");
        assert_eq!(enc("Alt+ArrowDown", false), "\x1b[1;3B");
        assert_eq!(enc("Ctrl+Shift+Home", false), "\x1b[1;6H");
    }

    #[test]
    fn function_and_editing_keys() {
        assert_eq!(enc("F1", false), "\x1bOP");
        assert_eq!(enc("F4", true), "\x1bOS");
        assert_eq!(enc("F5", false), "\x1b[15~");
        assert_eq!(enc("F10", false), "\x1b[21~");
        assert_eq!(enc("F12", false), "\x1b[24~");
        assert_eq!(enc("Shift+F5", false), "\x1b[15;2~");
        assert_eq!(enc("Ctrl+F1", false), "\x1b[1;5P");
        assert_eq!(enc("Insert", false), "\x1b[2~");
        assert_eq!(enc("Delete", false), "\x1b[3~");
        assert_eq!(enc("PageUp", false), "\x1b[5~");
        assert_eq!(enc("PageDown", false), "\x1b[6~");
        assert_eq!(enc("Ctrl+Delete", false), "\x1b[3;5~");
    }

    #[test]
    fn control_and_plain_keys() {
        assert_eq!(enc("Enter", false), "\r");
        assert_eq!(enc("Tab", false), "\t");
        assert_eq!(enc("Shift+Tab", false), "\x1b[Z");
        assert_eq!(enc("Escape", false), "\x1b");
        assert_eq!(enc("Backspace", false), "\x7f");
        assert_eq!(enc("Ctrl+Backspace", false), "\x08");
        assert_eq!(enc("Ctrl+C", false), "\x03");
        assert_eq!(enc("Ctrl+c", false), "\x03");
        assert_eq!(enc("Ctrl+a", false), "\x01");
        assert_eq!(enc("Ctrl+z", false), "\x1a");
        assert_eq!(enc("Ctrl+Space", false), "\0");
        assert_eq!(enc("Ctrl+[", false), "\x1b");
        assert_eq!(enc("Alt+x", false), "\x1bx");
        assert_eq!(enc("Alt+Enter", false), "\x1b\r");
        assert_eq!(enc("Ctrl+Alt+c", false), "\x1b\x03");
        assert_eq!(enc("Shift+a", false), "A");
        assert_eq!(enc("q", false), "q");
        assert_eq!(enc(":", false), ":");
        assert_eq!(enc("é", false), "é");
        assert_eq!(enc("Space", false), " ");
    }

    #[test]
    fn unencodable_keys_are_errors() {
        let meta = KeyChord::parse("Meta+x").unwrap();
        assert!(encode_key(&meta, KeyModes::default()).is_err());
        let ctrl_digit = KeyChord::parse("Ctrl+1").unwrap();
        assert!(encode_key(&ctrl_digit, KeyModes::default()).is_err());
    }

    #[test]
    fn paste_is_bracketed_and_stripped() {
        let p = encode_paste("a\x1b[201~b\nc\r\nd\te");
        assert_eq!(p, b"\x1b[200~a[201~b\rc\rd\te\x1b[201~".to_vec());
    }
}
