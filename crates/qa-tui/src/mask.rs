//! Where the terminal *shows* a secret.
//!
//! Secrets are found in the text the model displays — after every escape
//! sequence has been interpreted — not in the program's raw bytes, so a
//! secret printed in pieces (split by SGR codes, across writes, or by cursor
//! movement) is found once it is visible. A secret that wraps from one row
//! onto the next (soft wrap, or a row filled to its last column by a program
//! that positions the cursor itself) is found across the row boundary, also
//! when it starts in the scrollback above the screen. Every form
//! [`qa_core::Secrets`] knows (base64, hex, URL and HTML escapes, …) counts.

use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::{Column, Line};
use alacritty_terminal::term::cell::Flags;
use alacritty_terminal::term::Term;
use qa_core::Secrets;

/// What a masked cell shows in text captures; PNGs paint an opaque block.
pub const MASK_CHAR: char = '█';

/// Rows above the screen searched for the start of a secret wrapping onto it.
const MAX_ROWS_BACK: i32 = 256;

/// Whether grid line `line` continues on the next row in reading order: it
/// was soft-wrapped, or its last column is filled.
pub fn joins_next<T>(term: &Term<T>, line: Line) -> bool {
    let grid = term.grid();
    let cols = grid.columns();
    if cols == 0 {
        return false;
    }
    let last = &grid[line][Column(cols - 1)];
    last.flags
        .intersects(Flags::WRAPLINE | Flags::WIDE_CHAR_SPACER | Flags::LEADING_WIDE_CHAR_SPACER)
        || !matches!(last.c, ' ' | '\0' | '\t')
}

/// Text in reading order with the cell each byte came from.
pub(crate) struct CellText {
    /// The text: rows that join the next are concatenated, others end in `\n`
    /// (trailing blanks dropped).
    pub text: String,
    /// Per byte of `text`: (grid line, column), `None` for a line break.
    pub owners: Vec<Option<(i32, usize)>>,
}

impl CellText {
    fn push(&mut self, c: char, owner: Option<(i32, usize)>) {
        self.text.push(c);
        self.owners.resize(self.text.len(), owner);
    }

    /// Text of `rows` (row, joins-next, (column, char, zero-width) per
    /// non-spacer cell), rows numbered from `first`.
    pub fn build<'a, I, C>(first: i32, rows: I) -> CellText
    where
        I: IntoIterator<Item = (bool, C)>,
        C: IntoIterator<Item = (usize, char, &'a [char])>,
    {
        let mut t = CellText {
            text: String::new(),
            owners: Vec::new(),
        };
        for (i, (joins, cells)) in rows.into_iter().enumerate() {
            let line = first + i as i32;
            let row_start = t.text.len();
            for (col, c, zw) in cells {
                let c = if matches!(c, '\t' | '\0') || c.is_control() {
                    ' '
                } else {
                    c
                };
                t.push(c, Some((line, col)));
                for z in zw {
                    t.push(*z, Some((line, col)));
                }
            }
            if !joins {
                let kept = t.text[row_start..].trim_end_matches(' ').len();
                t.text.truncate(row_start + kept);
                t.owners.truncate(t.text.len());
                t.push('\n', None);
            }
        }
        t
    }
}

/// Per visible cell (row-major, `rows * cols`), whether it shows part of a
/// secret. Both halves of a wide character are marked.
pub fn secret_cells<T>(term: &Term<T>, secrets: &Secrets) -> Vec<bool> {
    let grid = term.grid();
    let (rows, cols) = (grid.screen_lines(), grid.columns());
    let mut mask = vec![false; rows * cols];
    if secrets.is_empty() || cols == 0 || rows == 0 {
        return mask;
    }
    let history = grid.history_size() as i32;
    let mut first = 0i32;
    while first > -history && first > -MAX_ROWS_BACK && joins_next(term, Line(first - 1)) {
        first -= 1;
    }
    let spacer = Flags::WIDE_CHAR_SPACER | Flags::LEADING_WIDE_CHAR_SPACER;
    let t = CellText::build(
        first,
        (first..rows as i32).map(|l| {
            let row = &grid[Line(l)];
            let cells = (0..cols).filter_map(move |c| {
                let cell = &row[Column(c)];
                (!cell.flags.intersects(spacer))
                    .then(|| (c, cell.c, cell.zerowidth().unwrap_or(&[])))
            });
            (joins_next(term, Line(l)), cells)
        }),
    );
    for r in secrets.find(&t.text) {
        for &(line, col) in t.owners[r].iter().flatten() {
            if line < 0 {
                continue;
            }
            let i = line as usize * cols + col;
            mask[i] = true;
            if grid[Line(line)][Column(col)]
                .flags
                .contains(Flags::WIDE_CHAR)
                && col + 1 < cols
            {
                mask[i + 1] = true;
            }
        }
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_term::term_with;

    fn masked_rows(cols: usize, rows: usize, bytes: &[u8], secret: &str) -> Vec<String> {
        let s = Secrets::new();
        s.add(secret);
        let t = term_with(cols, rows, bytes);
        let m = secret_cells(&t, &s);
        let grid = t.grid();
        (0..rows)
            .map(|r| {
                (0..cols)
                    .map(|c| {
                        if m[r * cols + c] {
                            '#'
                        } else {
                            grid[Line(r as i32)][Column(c)].c
                        }
                    })
                    .collect::<String>()
                    .trim_end()
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn finds_a_secret_split_by_escapes_and_wrapped() {
        let rows = masked_rows(12, 4, b"ab s3c\x1b[1mret9\x1b[0m!\r\n", "s3cret9");
        assert_eq!(rows[0], "ab #######!");
        // Soft-wrapped across rows.
        let rows = masked_rows(10, 4, b"0123456s3cret9 tail", "s3cret9");
        assert_eq!(rows[..2], ["0123456###", "#### tail"]);
        // Printed with cursor movement, the rest first.
        let rows = masked_rows(12, 2, b"\x1b[1;5Hret9\x1b[1;2Hs3c", "s3cret9");
        assert_eq!(rows[0], " #######");
        // Filled to the last column without a soft wrap.
        let rows = masked_rows(10, 3, b"xxxxxxxs3c\x1b[2;1Hret9", "s3cret9");
        assert_eq!(rows[..2], ["xxxxxxx###", "####"]);
    }

    #[test]
    fn finds_encoded_forms_and_the_part_below_the_scrollback() {
        // base64("s3cret9") = czNjcmV0OQ==
        let rows = masked_rows(20, 2, b"k: czNjcmV0OQ==\r\n", "s3cret9");
        assert_eq!(rows[0], "k: ############");
        // Starts in the scrollback, wraps onto the screen.
        let rows = masked_rows(8, 2, b"\r\n\r\nabcdes3cret9\r\nz", "s3cret9");
        assert_eq!(rows, ["####", "z"]);
    }

    #[test]
    fn finds_a_secret_split_by_a_hard_line_break_or_spaces() {
        // Printed in two lines: both halves are masked (whitespace between
        // a secret's characters may be a line break or a join).
        let rows = masked_rows(20, 3, b"key: s3c\r\nret9 ok\r\n", "s3cret9");
        assert_eq!(rows[..2], ["key: ###", "#### ok"]);
        let rows = masked_rows(20, 2, b"s3cre t9!", "s3cret9");
        assert_eq!(rows[0], "########!");
    }

    #[test]
    fn leaves_other_text_and_sets_without_secrets_alone() {
        let rows = masked_rows(20, 2, b"s3cre-t9 s3cret", "s3cret9");
        assert_eq!(rows[0], "s3cre-t9 s3cret");
        let t = term_with(10, 2, b"anything");
        assert!(secret_cells(&t, &Secrets::new()).iter().all(|m| !m));
    }
}
