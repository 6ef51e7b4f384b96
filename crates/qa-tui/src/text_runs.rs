//! Printable text written to the grid a run at a time.
//!
//! The escape-sequence processor hands the terminal one character at a
//! time. [`TextRuns`] stands between them: it gathers consecutive printable
//! ASCII characters and writes each run straight into the cursor row, then
//! hands every other call (control characters, escape sequences, anything
//! not ASCII) to the terminal unchanged, after the run before it. The grid,
//! cursor and wrap state that result are the ones the terminal's own
//! `input` leaves, character for character; the unit tests compare the two
//! on mixed streams.
//!
//! The run is written directly only in the plain case; anything else goes
//! through the terminal's `input` for that character:
//!
//! - the cursor is past the last column (the next character wraps first);
//! - insert mode is on;
//! - a character set other than ASCII is configured (line drawing, …);
//! - a cell about to be overwritten is half of a wide character.
//!
//! It also notes, for [`crate::skip`], whether the last call was `input`
//! (and of which character) and whether the scroll region is the whole
//! screen (the terminal keeps its region private).
//!
//! What is skipped is the terminal's damage tracking for those cells (the
//! record of which cells a renderer must repaint): nothing in ui-qa renders
//! from it; captures and waits read the grid.

use alacritty_terminal::event::EventListener;
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::Column;
use alacritty_terminal::term::cell::Flags;
use alacritty_terminal::term::{Term, TermMode};
use alacritty_terminal::vte::ansi::{
    Attr, CharsetIndex, ClearMode, CursorShape, CursorStyle, Handler, Hyperlink, KeyboardModes,
    KeyboardModesApplyBehavior, LineClearMode, Mode, ModifyOtherKeys, PrivateMode, Rgb,
    ScpCharPath, ScpUpdateMode, StandardCharset, TabulationClearMode,
};

/// The four character-set slots; all ASCII means characters map to themselves.
const CHARSETS: [CharsetIndex; 4] = [
    CharsetIndex::G0,
    CharsetIndex::G1,
    CharsetIndex::G2,
    CharsetIndex::G3,
];

/// What a [`TextRuns`] keeps between feeds: the run buffer (so no call
/// allocates) and whether the terminal's scroll region is the whole screen.
#[derive(Debug)]
pub struct Memo {
    run: Vec<u8>,
    /// False once a scroll region other than the whole screen may be set
    /// (conservative: only a region set to the whole screen, or a full
    /// reset, makes it true again).
    region_full: bool,
}

impl Default for Memo {
    fn default() -> Self {
        // A new terminal scrolls the whole screen.
        Memo {
            run: Vec::new(),
            region_full: true,
        }
    }
}

/// A [`Handler`] over a terminal that writes printable ASCII a run at a time.
///
/// Feed it with `processor.advance(&mut runs, bytes)` and call
/// [`TextRuns::flush`] afterwards (dropping it flushes too); `memo` is kept
/// by the caller between feeds.
pub struct TextRuns<'a, L: EventListener> {
    term: &'a mut Term<L>,
    run: &'a mut Vec<u8>,
    region_full: &'a mut bool,
    /// The character of the last call, when that call was `input`.
    last_input: Option<char>,
}

impl<'a, L: EventListener> TextRuns<'a, L> {
    /// Wraps `term`, gathering runs in `memo`'s buffer (cleared first).
    pub fn new(term: &'a mut Term<L>, memo: &'a mut Memo) -> Self {
        memo.run.clear();
        TextRuns {
            term,
            run: &mut memo.run,
            region_full: &mut memo.region_full,
            last_input: None,
        }
    }

    /// The character of the last handler call since the previous
    /// `take_last_input`, when that call was `input` (and forgets it).
    pub fn take_last_input(&mut self) -> Option<char> {
        self.last_input.take()
    }

    /// Whether the scroll region is certainly the whole screen.
    pub fn region_full(&self) -> bool {
        *self.region_full
    }

    /// The terminal (the pending run is written first).
    pub fn term(&mut self) -> &Term<L> {
        self.flush();
        self.term
    }

    /// Writes the gathered run into the grid.
    pub fn flush(&mut self) {
        if self.run.is_empty() {
            return;
        }
        let run = std::mem::take(self.run);
        let mut i = 0;
        while i < run.len() {
            match self.write_plain(&run[i..]) {
                0 => {
                    self.term.input(char::from(run[i]));
                    i += 1;
                }
                n => i += n,
            }
        }
        *self.run = run;
        self.run.clear();
    }

    /// Writes the start of `text` (printable ASCII) at the cursor, up to the
    /// end of the row, when the plain case holds; returns how many bytes
    /// were written (0: the terminal's `input` must take the next one).
    fn write_plain(&mut self, text: &[u8]) -> usize {
        let plain = !self.term.grid().cursor.input_needs_wrap
            && !self.term.mode().contains(TermMode::INSERT)
            && CHARSETS
                .iter()
                .all(|&i| self.term.grid().cursor.charsets[i] == StandardCharset::Ascii);
        if !plain {
            return 0;
        }
        let grid = self.term.grid_mut();
        let cols = grid.columns();
        let col = grid.cursor.point.column.0;
        let n = text.len().min(cols.saturating_sub(col));
        if n == 0 {
            return 0;
        }
        let line = grid.cursor.point.line;
        let template = grid.cursor.template.clone();
        let cells = &mut grid[line][Column(col)..Column(col + n)];
        if cells.iter().any(|c| {
            c.flags
                .intersects(Flags::WIDE_CHAR | Flags::WIDE_CHAR_SPACER)
        }) {
            return 0;
        }
        for (cell, &b) in cells.iter_mut().zip(text) {
            cell.c = char::from(b);
            cell.fg = template.fg;
            cell.bg = template.bg;
            cell.flags = template.flags;
            cell.extra.clone_from(&template.extra);
        }
        // As the terminal's `input`: the cursor moves past each character,
        // and after the last column it stays there, owing a wrap.
        if col + n < cols {
            grid.cursor.point.column = Column(col + n);
        } else {
            grid.cursor.point.column = Column(cols - 1);
            grid.cursor.input_needs_wrap = true;
        }
        n
    }
}

impl<L: EventListener> Drop for TextRuns<'_, L> {
    fn drop(&mut self) {
        self.flush();
    }
}

/// Every other call: the run before it first, then the terminal's own.
/// (`set_mouse_cursor_icon` is left out: the terminal ignores it too, and
/// its argument's type is not exported.)
macro_rules! in_order {
    ($(fn $name:ident($($arg:ident: $ty:ty),*);)*) => {
        $(
            fn $name(&mut self, $($arg: $ty),*) {
                self.flush();
                self.last_input = None;
                Handler::$name(&mut *self.term, $($arg),*)
            }
        )*
    };
}

impl<L: EventListener> Handler for TextRuns<'_, L> {
    fn input(&mut self, c: char) {
        self.last_input = Some(c);
        if matches!(c, ' '..='~') {
            self.run.push(c as u8);
        } else {
            self.flush();
            self.term.input(c);
        }
    }

    fn set_scrolling_region(&mut self, top: usize, bottom: Option<usize>) {
        self.flush();
        self.last_input = None;
        // The terminal ignores a region with top >= bottom (the bottom
        // defaults to the last row); otherwise its region is rows
        // top-1..min(bottom, rows) (the parser never passes a top below 1).
        let rows = self.term.screen_lines();
        let b = bottom.unwrap_or(rows);
        if top < b {
            *self.region_full = top == 1 && b >= rows;
        }
        self.term.set_scrolling_region(top, bottom);
    }

    fn reset_state(&mut self) {
        self.flush();
        self.last_input = None;
        *self.region_full = true;
        self.term.reset_state();
    }

    in_order! {
        fn set_title(a: Option<String>);
        fn set_cursor_style(a: Option<CursorStyle>);
        fn set_cursor_shape(a: CursorShape);
        fn goto(a: i32, b: usize);
        fn goto_line(a: i32);
        fn goto_col(a: usize);
        fn insert_blank(a: usize);
        fn move_up(a: usize);
        fn move_down(a: usize);
        fn identify_terminal(a: Option<char>);
        fn device_status(a: usize);
        fn move_forward(a: usize);
        fn move_backward(a: usize);
        fn move_down_and_cr(a: usize);
        fn move_up_and_cr(a: usize);
        fn put_tab(a: u16);
        fn backspace();
        fn carriage_return();
        fn linefeed();
        fn bell();
        fn substitute();
        fn newline();
        fn set_horizontal_tabstop();
        fn scroll_up(a: usize);
        fn scroll_down(a: usize);
        fn insert_blank_lines(a: usize);
        fn delete_lines(a: usize);
        fn erase_chars(a: usize);
        fn delete_chars(a: usize);
        fn move_backward_tabs(a: u16);
        fn move_forward_tabs(a: u16);
        fn save_cursor_position();
        fn restore_cursor_position();
        fn clear_line(a: LineClearMode);
        fn clear_screen(a: ClearMode);
        fn clear_tabs(a: TabulationClearMode);
        fn set_tabs(a: u16);
        fn reverse_index();
        fn terminal_attribute(a: Attr);
        fn set_mode(a: Mode);
        fn unset_mode(a: Mode);
        fn report_mode(a: Mode);
        fn set_private_mode(a: PrivateMode);
        fn unset_private_mode(a: PrivateMode);
        fn report_private_mode(a: PrivateMode);
        fn set_keypad_application_mode();
        fn unset_keypad_application_mode();
        fn set_active_charset(a: CharsetIndex);
        fn configure_charset(a: CharsetIndex, b: StandardCharset);
        fn set_color(a: usize, b: Rgb);
        fn dynamic_color_sequence(a: String, b: usize, c: &str);
        fn reset_color(a: usize);
        fn clipboard_store(a: u8, b: &[u8]);
        fn clipboard_load(a: u8, b: &str);
        fn decaln();
        fn push_title();
        fn pop_title();
        fn text_area_size_pixels();
        fn text_area_size_chars();
        fn set_hyperlink(a: Option<Hyperlink>);
        fn report_keyboard_mode();
        fn push_keyboard_mode(a: KeyboardModes);
        fn pop_keyboard_modes(a: u16);
        fn set_keyboard_mode(a: KeyboardModes, b: KeyboardModesApplyBehavior);
        fn set_modify_other_keys(a: ModifyOtherKeys);
        fn report_modify_other_keys();
        fn set_scp(a: ScpCharPath, b: ScpUpdateMode);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alacritty_terminal::event::VoidListener;
    use alacritty_terminal::index::Line;
    use alacritty_terminal::term::cell::Cell;
    use alacritty_terminal::term::test::TermSize;
    use alacritty_terminal::term::Config;
    use alacritty_terminal::vte::ansi::Processor;

    fn term(cols: usize, rows: usize) -> Term<VoidListener> {
        Term::new(
            Config {
                scrolling_history: 50,
                ..Config::default()
            },
            &TermSize::new(cols, rows),
            VoidListener,
        )
    }

    /// A cell as compared: everything but a hyperlink's generated id (each
    /// terminal numbers the links it sees from one process-wide counter).
    fn look(cell: &Cell) -> String {
        let mut c = cell.clone();
        let uri = c.hyperlink().map(|h| h.uri().to_string());
        c.set_hyperlink(None);
        format!("{c:?} link {uri:?}")
    }

    /// Feeds `chunks` to a terminal directly and through [`TextRuns`], and
    /// asserts that every cell, the cursors and the modes agree.
    fn agree(cols: usize, rows: usize, chunks: &[&[u8]]) {
        let (mut plain, mut runs) = (term(cols, rows), term(cols, rows));
        let (mut p1, mut p2): (Processor, Processor) = (Processor::new(), Processor::new());
        let mut memo = Memo::default();
        for chunk in chunks {
            p1.advance(&mut plain, chunk);
            let mut r = TextRuns::new(&mut runs, &mut memo);
            p2.advance(&mut r, chunk);
            r.flush();
        }
        let (a, b) = (plain.grid(), runs.grid());
        assert_eq!(a.history_size(), b.history_size(), "{chunks:?}");
        for l in -(a.history_size() as i32)..a.screen_lines() as i32 {
            for c in 0..cols {
                assert_eq!(
                    look(&a[Line(l)][Column(c)]),
                    look(&b[Line(l)][Column(c)]),
                    "line {l} column {c} after {chunks:?}"
                );
            }
        }
        assert_eq!(a.cursor, b.cursor, "{chunks:?}");
        assert_eq!(a.saved_cursor, b.saved_cursor, "{chunks:?}");
        assert_eq!(plain.mode(), runs.mode(), "{chunks:?}");
    }

    #[test]
    fn plain_lines_wrapping_and_scrolling() {
        agree(
            10,
            3,
            &[b"hello\r\nworld, this wraps\r\nand scrolls\r\n.\r\n"],
        );
        agree(
            10,
            3,
            &[b"0123456789", b"x", b"0123456789\r\n", b"0123456789"],
        );
        // Exactly the last column, then a control character, then more.
        agree(5, 2, &[b"abcde\x08f", b"ghij\tk\r\nl"]);
        // A bare line feed keeps the column.
        agree(8, 3, &[b"abc\ndef\nghijklmno\n"]);
    }

    #[test]
    fn attributes_hyperlinks_and_colours() {
        agree(
            20,
            3,
            &[b"\x1b[1;31mred bold\x1b[0m \x1b[44mon blue\x1b[0m\r\n\x1b]8;;https://x.test\x1b\\link\x1b]8;;\x1b\\ after"],
        );
        // A background colour that erases: reset rows take the template.
        agree(6, 2, &[b"\x1b[42mab\r\ncd\r\nef\x1b[K\r\n\x1b[0mgh"]);
    }

    #[test]
    fn the_cases_left_to_the_terminal_agree() {
        // Wide characters overwritten by ASCII, on either half.
        agree(6, 3, &["漢字ab\r\nx漢\r".as_bytes(), b"ab\x1b[1;2Hz"]);
        // A wide character that does not fit wraps with a leading spacer.
        agree(5, 3, &["abcd漢\x1b[1;5Hq".as_bytes()]);
        // Insert mode shifts the rest of the row.
        agree(10, 2, &[b"abcdef\r\x1b[4hXY\x1b[4lZ"]);
        // Line drawing maps characters.
        agree(10, 2, &[b"\x1b(0lqqk\x1b(B ok \x0e\x1b)0ab\x0fcd"]);
        // Zero-width and non-ASCII characters between runs.
        agree(10, 2, &["ae\u{301}b café ok".as_bytes()]);
        // No line wrap: the last column is overwritten.
        agree(5, 2, &[b"\x1b[?7labcdefgh\x1b[?7hij"]);
        // Scroll regions, saved cursors, origin mode.
        agree(
            8,
            5,
            &[b"\x1b[2;4r\x1b[?6h\x1b7top\x1b8\r\n1\r\n2\r\n3\r\n4\x1b[r\x1b[?6labcdefghij"],
        );
    }

    #[test]
    fn mixed_streams_cut_anywhere_agree() {
        let pieces: [&[u8]; 14] = [
            b"plain text ",
            b"0123456789abcdef",
            b"\r\n",
            b"\n",
            b"\x1b[31m",
            b"\x1b[0m",
            "漢".as_bytes(),
            b"\x1b[2;3H",
            b"\x1b[4h",
            b"\x1b[4l",
            b"\x1b(0x\x1b(B",
            b"\t",
            b"\x1b[K",
            b"\x1b[?7l",
        ];
        let mut next = crate::test_term::pseudo_random(0x9e37_79b9_7f4a_7c15);
        for _ in 0..60 {
            let mut stream = Vec::new();
            for _ in 0..40 {
                stream.extend_from_slice(pieces[next(pieces.len())]);
            }
            stream.extend_from_slice(b"\x1b[?7h");
            // Cut into chunks at arbitrary bytes (inside sequences too).
            let mut chunks = Vec::new();
            let mut at = 0;
            while at < stream.len() {
                let len = (1 + next(24)).min(stream.len() - at);
                chunks.push(&stream[at..at + len]);
                at += len;
            }
            agree(7 + next(10), 2 + next(4), &chunks);
        }
    }
}
