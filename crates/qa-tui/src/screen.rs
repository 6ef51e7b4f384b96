//! Reading the terminal model: screen and scrollback text, cursor, modes,
//! and a self-contained [`Snapshot`] of the grid for captures and PNGs.
//!
//! Everything here reads a `Term` and returns plain data; nothing writes.

use crate::palette;
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::{Column, Line};
use alacritty_terminal::term::cell::{Cell, Flags};
use alacritty_terminal::term::{Term, TermMode};
use alacritty_terminal::vte::ansi::Rgb;
use qa_core::Secrets;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

/// Text of one grid row: wide-char spacers skipped, zero-width characters
/// kept, trailing blanks trimmed unless `keep_trailing`.
fn row_text<T>(term: &Term<T>, line: Line, keep_trailing: bool) -> (String, bool) {
    let grid = term.grid();
    let row = &grid[line];
    let cols = grid.columns();
    let mut s = String::with_capacity(cols);
    for col in 0..cols {
        let cell: &Cell = &row[Column(col)];
        if cell
            .flags
            .intersects(Flags::WIDE_CHAR_SPACER | Flags::LEADING_WIDE_CHAR_SPACER)
        {
            continue;
        }
        s.push(if cell.c == '\t' { ' ' } else { cell.c });
        if let Some(zw) = cell.zerowidth() {
            s.extend(zw.iter());
        }
    }
    let wrapped = cols > 0 && row[Column(cols - 1)].flags.contains(Flags::WRAPLINE);
    if !keep_trailing && !wrapped {
        let trimmed = s.trim_end_matches(' ').len();
        s.truncate(trimmed);
    }
    (s, wrapped)
}

/// The visible rows, one string each (trailing blanks trimmed).
pub fn screen_rows<T>(term: &Term<T>) -> Vec<String> {
    let rows = term.grid().screen_lines();
    (0..rows)
        .map(|r| row_text(term, Line(r as i32), false).0)
        .collect()
}

/// One visible row (0-based), or `None` past the bottom.
pub fn screen_row<T>(term: &Term<T>, row: usize) -> Option<String> {
    (row < term.grid().screen_lines()).then(|| row_text(term, Line(row as i32), false).0)
}

/// Logical text of lines `from..to` (grid line numbers; history is negative),
/// soft-wrapped rows joined, lines separated by `\n`.
fn logical_text<T>(term: &Term<T>, from: i32, to: i32) -> String {
    let mut out = String::new();
    for l in from..to {
        let (t, wrapped) = row_text(term, Line(l), false);
        out.push_str(&t);
        if !wrapped && l + 1 < to {
            out.push('\n');
        }
    }
    out
}

/// The visible screen as logical text (soft-wrapped rows joined).
pub fn screen_text<T>(term: &Term<T>) -> String {
    logical_text(term, 0, term.grid().screen_lines() as i32)
}

/// Scrollback then screen as logical text.
pub fn full_text<T>(term: &Term<T>) -> String {
    let history = term.grid().history_size() as i32;
    logical_text(term, -history, term.grid().screen_lines() as i32)
}

/// Cursor position (0-based row, col) and whether it is shown.
pub fn cursor<T>(term: &Term<T>) -> (usize, usize, bool) {
    let p = term.grid().cursor.point;
    (
        p.line.0.max(0) as usize,
        p.column.0,
        term.mode().contains(TermMode::SHOW_CURSOR),
    )
}

/// The modes a flow author cares about, by name.
pub fn mode_names<T>(term: &Term<T>) -> Vec<&'static str> {
    let m = term.mode();
    let mut v = Vec::new();
    for (flag, name) in [
        (TermMode::ALT_SCREEN, "alt-screen"),
        (TermMode::APP_CURSOR, "app-cursor"),
        (TermMode::APP_KEYPAD, "app-keypad"),
        (TermMode::BRACKETED_PASTE, "bracketed-paste"),
        (TermMode::SHOW_CURSOR, "show-cursor"),
        (TermMode::MOUSE_MODE, "mouse"),
        (TermMode::FOCUS_IN_OUT, "focus-events"),
        (TermMode::LINE_WRAP, "line-wrap"),
    ] {
        if m.intersects(flag) {
            v.push(name);
        }
    }
    v
}

/// A hash of everything visible (cells, colours, flags, cursor, modes), used
/// to tell whether the screen changed.
pub fn screen_hash<T>(term: &Term<T>) -> u64 {
    let mut h = DefaultHasher::new();
    let grid = term.grid();
    for r in 0..grid.screen_lines() {
        let row = &grid[Line(r as i32)];
        for c in 0..grid.columns() {
            let cell = &row[Column(c)];
            cell.c.hash(&mut h);
            cell.flags.bits().hash(&mut h);
            color_key(cell.fg).hash(&mut h);
            color_key(cell.bg).hash(&mut h);
        }
    }
    let (r, c, v) = cursor(term);
    (r, c, v, term.mode().bits()).hash(&mut h);
    h.finish()
}

fn color_key(c: alacritty_terminal::vte::ansi::Color) -> (u8, u32) {
    use alacritty_terminal::vte::ansi::Color;
    match c {
        Color::Named(n) => (0, n as u32),
        Color::Indexed(i) => (1, u32::from(i)),
        Color::Spec(Rgb { r, g, b }) => (2, u32::from_be_bytes([0, r, g, b])),
    }
}

/// One cell of a [`Snapshot`], colours resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct SnapCell {
    /// The character (`' '` when empty).
    pub c: char,
    /// Zero-width characters drawn over it.
    pub zerowidth: String,
    /// Foreground colour (inverse, dim and hidden already applied).
    pub fg: Rgb,
    /// Background colour (inverse already applied).
    pub bg: Rgb,
    /// Bold.
    pub bold: bool,
    /// Italic.
    pub italic: bool,
    /// Any underline.
    pub underline: bool,
    /// Strike-through.
    pub strike: bool,
    /// The first half of a double-width character.
    pub wide: bool,
    /// The second half of a double-width character (draw nothing).
    pub spacer: bool,
    /// The cell shows part of a secret: text captures print
    /// [`crate::mask::MASK_CHAR`] and PNGs paint an opaque block instead of
    /// the glyph. `c` still holds the real character, so a masked snapshot
    /// must never be published through anything but [`Snapshot::to_text`],
    /// [`Snapshot::lines`] or the PNG renderer (`render`, which paints the
    /// mask).
    pub masked: bool,
}

/// A self-contained picture of the visible grid.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// Columns.
    pub cols: usize,
    /// Rows.
    pub rows: usize,
    /// Row-major cells, `rows * cols`.
    pub cells: Vec<SnapCell>,
    /// Text of each row (trailing blanks trimmed).
    pub lines: Vec<String>,
    /// Cursor row.
    pub cursor_row: usize,
    /// Cursor column.
    pub cursor_col: usize,
    /// Cursor shown.
    pub cursor_visible: bool,
    /// Cursor colour.
    pub cursor_color: Rgb,
    /// Default background.
    pub background: Rgb,
    /// Active modes by name.
    pub modes: Vec<&'static str>,
}

impl Snapshot {
    /// Takes a snapshot of the visible grid.
    pub fn of<T>(term: &Term<T>) -> Snapshot {
        let grid = term.grid();
        let (rows, cols) = (grid.screen_lines(), grid.columns());
        let colors = term.colors();
        let mut cells = Vec::with_capacity(rows * cols);
        for r in 0..rows {
            let row = &grid[Line(r as i32)];
            for c in 0..cols {
                let cell = &row[Column(c)];
                let f = cell.flags;
                let mut fg = palette::resolve(colors, cell.fg);
                let mut bg = palette::resolve(colors, cell.bg);
                if f.contains(Flags::DIM) {
                    fg = palette::dim(fg);
                }
                if f.contains(Flags::INVERSE) {
                    std::mem::swap(&mut fg, &mut bg);
                }
                if f.contains(Flags::HIDDEN) {
                    fg = bg;
                }
                cells.push(SnapCell {
                    c: cell.c,
                    zerowidth: cell
                        .zerowidth()
                        .map(|z| z.iter().collect())
                        .unwrap_or_default(),
                    fg,
                    bg,
                    bold: f.contains(Flags::BOLD),
                    italic: f.contains(Flags::ITALIC),
                    underline: f.intersects(Flags::ALL_UNDERLINES),
                    strike: f.contains(Flags::STRIKEOUT),
                    wide: f.contains(Flags::WIDE_CHAR),
                    spacer: f.intersects(Flags::WIDE_CHAR_SPACER | Flags::LEADING_WIDE_CHAR_SPACER),
                    masked: false,
                });
            }
        }
        let (cursor_row, cursor_col, cursor_visible) = cursor(term);
        Snapshot {
            cols,
            rows,
            cells,
            lines: screen_rows(term),
            cursor_row,
            cursor_col,
            cursor_visible,
            cursor_color: palette::resolve_index(colors, 258),
            background: palette::resolve_index(colors, 257),
            modes: mode_names(term),
        }
    }

    /// A snapshot in which every cell that shows a secret (in any form
    /// [`Secrets`] knows, found in the displayed text, across wrapped rows)
    /// is masked; see [`crate::mask`]. Its `lines` show the mask too.
    pub fn of_masked<T>(term: &Term<T>, secrets: &Secrets) -> Snapshot {
        let mut snap = Snapshot::of(term);
        let mask = crate::mask::secret_cells(term, secrets);
        let mut rows_hit = vec![false; snap.rows];
        for (i, m) in mask.iter().enumerate() {
            if *m && i < snap.cells.len() {
                snap.cells[i].masked = true;
                rows_hit[i / snap.cols.max(1)] = true;
            }
        }
        for (r, hit) in rows_hit.into_iter().enumerate() {
            if hit {
                snap.lines[r] = snap.row_string(r).trim_end_matches(' ').to_string();
            }
        }
        snap
    }

    /// Whether any cell is masked.
    pub fn has_masks(&self) -> bool {
        self.cells.iter().any(|c| c.masked)
    }

    /// The text of one row as shown: exactly `cols` columns (a wide
    /// character counts two), masked cells as [`crate::mask::MASK_CHAR`].
    fn row_string(&self, r: usize) -> String {
        let mut s = String::with_capacity(self.cols);
        for c in 0..self.cols {
            let cell = self.cell(r, c);
            if cell.spacer {
                if cell.masked && (c == 0 || !self.cell(r, c - 1).wide) {
                    s.push(crate::mask::MASK_CHAR);
                }
                continue;
            }
            if cell.masked {
                s.push(crate::mask::MASK_CHAR);
                if cell.wide {
                    s.push(crate::mask::MASK_CHAR);
                }
                continue;
            }
            s.push(if cell.c.is_control() { ' ' } else { cell.c });
            s.push_str(&cell.zerowidth);
        }
        s
    }

    /// The cell at (`row`, `col`).
    pub fn cell(&self, row: usize, col: usize) -> &SnapCell {
        &self.cells[row * self.cols + col]
    }

    /// The text capture: a header with size, cursor and modes, then the
    /// screen framed so trailing blanks and empty rows stay visible.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        s.push_str(&format!(
            "size: {}x{}\ncursor: row {}, col {} ({})\nmodes: {}\n",
            self.cols,
            self.rows,
            self.cursor_row,
            self.cursor_col,
            if self.cursor_visible {
                "visible"
            } else {
                "hidden"
            },
            if self.modes.is_empty() {
                "none".to_string()
            } else {
                self.modes.join(", ")
            }
        ));
        s.push_str(&format!("+{}+\n", "-".repeat(self.cols)));
        for r in 0..self.rows {
            // Every row spans exactly `cols` cells, so the frame lines up even
            // with wide characters (their spacer cell is skipped).
            s.push('|');
            s.push_str(&self.row_string(r));
            s.push_str("|\n");
        }
        s.push_str(&format!("+{}+\n", "-".repeat(self.cols)));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_term::term_with;

    #[test]
    fn rows_and_wrapping() {
        let t = term_with(10, 4, b"hello\r\n0123456789abc\r\nx");
        assert_eq!(screen_rows(&t), vec!["hello", "0123456789", "abc", "x"]);
        assert_eq!(screen_text(&t), "hello\n0123456789abc\nx");
        assert_eq!(cursor(&t), (3, 1, true));
    }

    #[test]
    fn wide_chars_and_scrollback() {
        let t = term_with(10, 2, "a漢b\r\nline2\r\nline3".as_bytes());
        assert_eq!(screen_rows(&t), vec!["line2", "line3"]);
        assert!(full_text(&t).starts_with("a漢b\n"));
        let snap = Snapshot::of(&t);
        assert_eq!(snap.rows, 2);
        let t2 = term_with(10, 2, "a漢b".as_bytes());
        let s2 = Snapshot::of(&t2);
        assert!(s2.cell(0, 1).wide);
        assert!(s2.cell(0, 2).spacer);
        assert_eq!(s2.lines[0], "a漢b");
        assert!(s2.to_text().contains("|a漢b      |"));
    }

    #[test]
    fn colours_and_inverse() {
        let t = term_with(10, 2, b"\x1b[31mR\x1b[0m\x1b[7mI\x1b[0m\x1b[38;2;1;2;3mT");
        let s = Snapshot::of(&t);
        assert_eq!(
            s.cell(0, 0).fg,
            Rgb {
                r: 0xcd,
                g: 0,
                b: 0
            }
        );
        assert_eq!(s.cell(0, 1).bg, palette::DEFAULT_FG);
        assert_eq!(s.cell(0, 1).fg, palette::DEFAULT_BG);
        assert_eq!(s.cell(0, 2).fg, Rgb { r: 1, g: 2, b: 3 });
    }

    #[test]
    fn modes_are_named() {
        let t = term_with(10, 2, b"\x1b[?1049h\x1b[?1h\x1b[?2004h\x1b[?25l");
        let m = mode_names(&t);
        assert!(m.contains(&"alt-screen"));
        assert!(m.contains(&"app-cursor"));
        assert!(m.contains(&"bracketed-paste"));
        assert!(!m.contains(&"show-cursor"));
    }

    #[test]
    fn masked_snapshots_hide_secret_cells_in_text() {
        let s = Secrets::new();
        s.add("s3cret9");
        // The secret fills row 0 to its last column, split by SGR bold.
        let t = term_with(10, 3, "漢 s3c\x1b[1mret9 ok".as_bytes());
        let snap = Snapshot::of_masked(&t, &s);
        assert!(snap.has_masks());
        assert_eq!(snap.lines[0], "漢 ███████");
        assert_eq!(snap.lines[1], " ok");
        let text = snap.to_text();
        assert!(text.contains("|漢 ███████|"), "{text}");
        assert!(!text.contains("s3c") && !text.contains("et9"), "{text}");
        let plain = Snapshot::of(&t);
        assert!(!plain.has_masks());
        assert_eq!(plain.lines[0], "漢 s3cret9");
    }

    #[test]
    fn hash_changes_with_content() {
        let a = term_with(10, 2, b"a");
        let b = term_with(10, 2, b"b");
        assert_ne!(screen_hash(&a), screen_hash(&b));
        assert_eq!(screen_hash(&a), screen_hash(&term_with(10, 2, b"a")));
    }
}
