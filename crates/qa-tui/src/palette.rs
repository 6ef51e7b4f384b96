//! Colour resolution: ANSI 16, the 256-colour cube and grey ramp, truecolor,
//! and the colours a program set with OSC 4/10/11 (read from the model).

use alacritty_terminal::term::color::Colors;
use alacritty_terminal::vte::ansi::{Color, NamedColor, Rgb};

/// Default foreground (light grey on black, like xterm's default).
pub const DEFAULT_FG: Rgb = Rgb {
    r: 0xe5,
    g: 0xe5,
    b: 0xe5,
};
/// Default background.
pub const DEFAULT_BG: Rgb = Rgb {
    r: 0x00,
    g: 0x00,
    b: 0x00,
};
/// Default cursor colour.
pub const DEFAULT_CURSOR: Rgb = Rgb {
    r: 0xe5,
    g: 0xe5,
    b: 0xe5,
};

const ANSI16: [(u8, u8, u8); 16] = [
    (0x00, 0x00, 0x00),
    (0xcd, 0x00, 0x00),
    (0x00, 0xcd, 0x00),
    (0xcd, 0xcd, 0x00),
    (0x00, 0x00, 0xee),
    (0xcd, 0x00, 0xcd),
    (0x00, 0xcd, 0xcd),
    (0xe5, 0xe5, 0xe5),
    (0x7f, 0x7f, 0x7f),
    (0xff, 0x00, 0x00),
    (0x00, 0xff, 0x00),
    (0xff, 0xff, 0x00),
    (0x5c, 0x5c, 0xff),
    (0xff, 0x00, 0xff),
    (0x00, 0xff, 0xff),
    (0xff, 0xff, 0xff),
];

/// The built-in colour of palette index `i` (0–255, then foreground,
/// background, cursor, and the dim colours), before any OSC override.
pub fn default_index(i: usize) -> Rgb {
    match i {
        0..=15 => {
            let (r, g, b) = ANSI16[i];
            Rgb { r, g, b }
        }
        16..=231 => {
            let n = i - 16;
            let level = |v: usize| if v == 0 { 0 } else { (55 + v * 40) as u8 };
            Rgb {
                r: level(n / 36),
                g: level((n / 6) % 6),
                b: level(n % 6),
            }
        }
        232..=255 => {
            let v = (8 + (i - 232) * 10) as u8;
            Rgb { r: v, g: v, b: v }
        }
        256 => DEFAULT_FG,
        257 => DEFAULT_BG,
        258 => DEFAULT_CURSOR,
        // Dim black..dim white, then bright and dim foreground.
        259..=266 => dim(default_index(i - 259)),
        267 => DEFAULT_FG,
        268 => dim(DEFAULT_FG),
        _ => DEFAULT_FG,
    }
}

/// Two thirds of a colour (the dim variant).
pub fn dim(c: Rgb) -> Rgb {
    Rgb {
        r: (u16::from(c.r) * 2 / 3) as u8,
        g: (u16::from(c.g) * 2 / 3) as u8,
        b: (u16::from(c.b) * 2 / 3) as u8,
    }
}

/// Palette index `i` as the program sees it: its OSC override, else the default.
pub fn resolve_index(colors: &Colors, i: usize) -> Rgb {
    if i < alacritty_terminal::term::color::COUNT {
        if let Some(c) = colors[i] {
            return c;
        }
    }
    default_index(i)
}

/// A cell colour as RGB.
pub fn resolve(colors: &Colors, c: Color) -> Rgb {
    match c {
        Color::Spec(rgb) => rgb,
        Color::Indexed(i) => resolve_index(colors, usize::from(i)),
        Color::Named(n) => resolve_index(colors, named_index(n)),
    }
}

fn named_index(n: NamedColor) -> usize {
    n as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cube_and_ramp() {
        assert_eq!(default_index(16), Rgb { r: 0, g: 0, b: 0 });
        assert_eq!(default_index(196), Rgb { r: 255, g: 0, b: 0 });
        assert_eq!(
            default_index(231),
            Rgb {
                r: 255,
                g: 255,
                b: 255
            }
        );
        assert_eq!(default_index(232), Rgb { r: 8, g: 8, b: 8 });
        assert_eq!(
            default_index(255),
            Rgb {
                r: 238,
                g: 238,
                b: 238
            }
        );
    }

    #[test]
    fn overrides_win() {
        let mut colors = Colors::default();
        colors[1] = Some(Rgb { r: 1, g: 2, b: 3 });
        assert_eq!(
            resolve(&colors, Color::Indexed(1)),
            Rgb { r: 1, g: 2, b: 3 }
        );
        assert_eq!(
            resolve(&colors, Color::Named(NamedColor::Background)),
            DEFAULT_BG
        );
    }
}
