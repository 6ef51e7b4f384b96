//! Output that cannot survive its own chunk is not modelled.
//!
//! A flood (`yes`, a long log) scrolls many lines through the scrollback
//! within one chunk read from the PTY; most of them are pushed out of the
//! scrollback again by later lines of the same chunk and leave no trace in
//! the model. [`advance`] finds such a stretch and does not parse it: the
//! chunk `B` is split as `A + P + S` and only `A` and `S` are parsed.
//!
//! The split (see [`find_split`]), with `H` the scrollback limit and `R`
//! the screen's rows:
//!
//! - `A` ends with a printable ASCII byte, and parsing that byte alone made
//!   exactly one call, `input` of that character: the parser printed it, so
//!   it is in its ground state with no partial UTF-8 character, and the
//!   processor's "preceding character" (for `CSI b`, repeat) is that byte.
//! - `P` is not empty, holds only printable ASCII, `\r` and `\n`, and ends
//!   with `\r`.
//! - `S` starts with `S1`, which holds only the same simple bytes, at least
//!   one printable byte, and at least `H + 2R` (plus a margin) `\n`.
//!
//! and only while the scroll region is the whole screen (tracked by
//! [`TextRuns`]: the terminal does not expose it), which the proof needs;
//! and, to be safe beyond it, while the terminal is on its primary screen
//! (the alternate one has no scrollback, so the proof holds there too),
//! the view is not scrolled back (the model never scrolls it) and no
//! synchronized update holds bytes back (already implied: bytes held back
//! make no `input` call).
//!
//! Why the model after `A + S` (with `P` replaced by a carriage return) is
//! the model after `A + P + S`:
//!
//! - Simple bytes change only the grid and the cursor: no mode, colour,
//!   attribute, character set, tab stop, title or saved cursor, and the
//!   parser stays in its ground state. The only state `P` leaves that is
//!   not in the grid's rows is the cursor: column 0 and no pending wrap
//!   (its last byte is `\r`, and that is exactly what is applied instead),
//!   and its row, which may be lower than without `P`.
//! - Through `S1` the column and pending-wrap state evolve from the same
//!   start with the same bytes, so they are the same in both. The row only
//!   moves down (line feeds, wraps) and stops at the bottom; after `R - 1`
//!   line feeds it is the bottom row in both, and stays there.
//! - From then on every operation is the same in both, and every further
//!   `\n` scrolls the whole screen by one line into the scrollback. A line
//!   new to the screen is cleared to the cursor's background (the same in
//!   both: `P` and `S1` set no colour; a cleared cell depends on nothing
//!   else). After `H + R + 1` such scrolls every line of the screen and of
//!   the scrollback was cleared and written after that point, identically,
//!   and the scrollback is full in both (its size is `H`).
//! - The processor's preceding character is the last printable byte of
//!   `S1` in both.
//!
//! With 10,000 lines of scrollback a chunk qualifies only when it holds
//! more than 10,056 short lines: a batch the reader gathered while the
//! model was behind (up to [`crate::inbox::INBOX_CAP`]), or a 64 KiB read
//! of lines under about six bytes (`yes`, counters).
//!
//! Nothing else sees the difference: the raw bytes still go to the replay
//! and the tee, and `P` holds no escape sequence, so no query goes
//! unanswered. The unit tests compare models fed with and without the skip
//! on mixed streams cut into chunks anywhere.

use crate::text_runs::{Memo, TextRuns};
use alacritty_terminal::event::EventListener;
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::term::{Term, TermMode};
use alacritty_terminal::vte::ansi::{Handler, Processor, StdSyncHandler};

/// Line feeds `S1` holds beyond `H + 2R` (the proof needs `H + 2R`).
const MARGIN: usize = 8;

fn simple(b: u8) -> bool {
    matches!(b, 0x20..=0x7e | b'\r' | b'\n')
}

/// Where to split `bytes` as `A + P + S`: `(a, s)` with `A = bytes[..a]`,
/// `P = bytes[a..s]`, when `S` starts with simple bytes holding at least
/// `lines` line feeds and a printable byte (see the module documentation).
pub fn find_split(bytes: &[u8], lines: usize) -> Option<(usize, usize)> {
    // Most chunks are too short: one fast count rules them out.
    if bytes.iter().filter(|&&b| b == b'\n').count() < lines {
        return None;
    }
    let mut start = 0;
    while start < bytes.len() {
        start += bytes[start..]
            .iter()
            .position(|&b| simple(b))
            .unwrap_or(bytes.len() - start);
        let end = start
            + bytes[start..]
                .iter()
                .position(|&b| !simple(b))
                .unwrap_or(bytes.len() - start);
        if let Some(split) = split_run(bytes, start, end, lines) {
            return Some(split);
        }
        start = end;
    }
    None
}

/// A split within the simple run `bytes[start..end]`: `A` ends with its
/// first printable byte after a line end (else its first printable byte:
/// the run may start inside an escape sequence, whose parameters are
/// printable, and a line is more likely to start outside one), `P` with
/// the last `\r` after which the run still holds `lines` line feeds and a
/// printable byte.
fn split_run(bytes: &[u8], start: usize, end: usize, lines: usize) -> Option<(usize, usize)> {
    let shown = |i: &usize| bytes[*i] != b'\r' && bytes[*i] != b'\n';
    let a = 1
        + (start + 1..end)
            .filter(|&i| matches!(bytes[i - 1], b'\r' | b'\n'))
            .find(shown)
            .or_else(|| (start..end).find(shown))?;
    let (mut feeds, mut printable) = (0, false);
    for q in (a..end).rev() {
        // Here bytes[q + 1..end] holds `feeds` line feeds.
        if bytes[q] == b'\r' && feeds >= lines && printable {
            return Some((a, q + 1));
        }
        match bytes[q] {
            b'\n' => feeds += 1,
            b'\r' => {}
            _ => printable = true,
        }
    }
    None
}

/// Parses `bytes` into `term`, leaving out output that cannot survive the
/// chunk (see the module documentation); `history` is the terminal's
/// scrollback limit. The model afterwards is the one `processor.advance`
/// leaves.
pub fn advance<L: EventListener>(
    term: &mut Term<L>,
    processor: &mut Processor<StdSyncHandler>,
    memo: &mut Memo,
    bytes: &[u8],
    history: usize,
) {
    let lines = history + 2 * term.screen_lines() + MARGIN;
    let mut runs = TextRuns::new(term, memo);
    let Some((a, s)) = find_split(bytes, lines) else {
        processor.advance(&mut runs, bytes);
        runs.flush();
        return;
    };
    processor.advance(&mut runs, &bytes[..a - 1]);
    runs.take_last_input();
    processor.advance(&mut runs, &bytes[a - 1..a]);
    let printed = runs.take_last_input() == Some(char::from(bytes[a - 1]));
    let quiet = processor.sync_timeout().sync_timeout().is_none();
    let full = runs.region_full();
    let t = runs.term();
    let plain = !t.mode().contains(TermMode::ALT_SCREEN) && t.grid().display_offset() == 0;
    if printed && quiet && full && plain {
        // What `P` leaves besides lines that `S` scrolls away.
        runs.carriage_return();
        #[cfg(test)]
        tests::SKIPS.with(|n| n.set(n.get() + 1));
        processor.advance(&mut runs, &bytes[s..]);
    } else {
        processor.advance(&mut runs, &bytes[a..]);
    }
    runs.flush();
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use alacritty_terminal::event::Event;
    use alacritty_terminal::index::{Column, Line};
    use alacritty_terminal::term::cell::Cell;
    use alacritty_terminal::term::test::TermSize;
    use alacritty_terminal::term::Config;
    use std::cell::Cell as Counter;
    use std::sync::{Arc, Mutex};

    thread_local! {
        /// Chunks whose middle was skipped (on this test's thread).
        pub(crate) static SKIPS: Counter<usize> = const { Counter::new(0) };
    }

    /// Records every event as text (titles, answers to queries, …).
    #[derive(Clone, Default)]
    struct Events(Arc<Mutex<Vec<String>>>);

    impl EventListener for Events {
        fn send_event(&self, event: Event) {
            self.0.lock().unwrap().push(format!("{event:?}"));
        }
    }

    struct Model {
        term: Term<Events>,
        events: Events,
        processor: Processor<StdSyncHandler>,
        memo: Memo,
    }

    fn model(cols: usize, rows: usize, history: usize) -> Model {
        let events = Events::default();
        Model {
            term: Term::new(
                Config {
                    scrolling_history: history,
                    ..Config::default()
                },
                &TermSize::new(cols, rows),
                events.clone(),
            ),
            events,
            processor: Processor::new(),
            memo: Memo::default(),
        }
    }

    /// A cell as compared: everything but a hyperlink's generated id.
    fn look(cell: &Cell) -> String {
        let mut c = cell.clone();
        let uri = c.hyperlink().map(|h| h.uri().to_string());
        c.set_hyperlink(None);
        format!("{c:?} link {uri:?}")
    }

    /// Asserts that everything observable about the two models agrees.
    fn same(a: &Model, b: &Model, what: &str) {
        let (ga, gb) = (a.term.grid(), b.term.grid());
        assert_eq!(ga.history_size(), gb.history_size(), "history {what}");
        assert_eq!(ga.display_offset(), gb.display_offset(), "{what}");
        for l in -(ga.history_size() as i32)..ga.screen_lines() as i32 {
            for c in 0..ga.columns() {
                assert_eq!(
                    look(&ga[Line(l)][Column(c)]),
                    look(&gb[Line(l)][Column(c)]),
                    "line {l} column {c} {what}"
                );
            }
        }
        assert_eq!(ga.cursor, gb.cursor, "cursor {what}");
        assert_eq!(ga.saved_cursor, gb.saved_cursor, "saved cursor {what}");
        assert_eq!(a.term.mode(), b.term.mode(), "modes {what}");
        assert_eq!(
            a.term.vi_mode_cursor.point, b.term.vi_mode_cursor.point,
            "{what}"
        );
        assert_eq!(
            *a.events.0.lock().unwrap(),
            *b.events.0.lock().unwrap(),
            "events (titles, answers) {what}"
        );
        assert_eq!(
            a.processor.sync_bytes_count(),
            b.processor.sync_bytes_count(),
            "{what}"
        );
    }

    /// Feeds `chunks` to a terminal directly (alacritty's own per-character
    /// input) and through [`advance`], and asserts that the two agree after
    /// every chunk and after a tail that reveals hidden state (the repeated
    /// character, the primary screen behind the alternate one, the title).
    /// Returns how many chunks were skipped in.
    fn agree(cols: usize, rows: usize, history: usize, chunks: &[&[u8]]) -> usize {
        let before = SKIPS.with(|n| n.get());
        let (mut plain, mut skip) = (model(cols, rows, history), model(cols, rows, history));
        let tail: [&[u8]; 2] = [
            b"\x1b[3b\x1b[21t",
            b"\x1b[?2026l\x1b[?1049l\x1b[r\x1b[2bq\n",
        ];
        for (i, chunk) in chunks.iter().chain(tail.iter()).enumerate() {
            plain.processor.advance(&mut plain.term, chunk);
            advance(
                &mut skip.term,
                &mut skip.processor,
                &mut skip.memo,
                chunk,
                history,
            );
            same(
                &plain,
                &skip,
                &format!("after chunk {i} of {}", chunks.len()),
            );
        }
        SKIPS.with(|n| n.get()) - before
    }

    fn flood(lines: usize, text: &[u8], end: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        for _ in 0..lines {
            v.extend_from_slice(text);
            v.extend_from_slice(end);
        }
        v
    }

    #[test]
    fn a_plain_flood_is_skipped_and_agrees() {
        let bytes = flood(200, b"y", b"\r\n");
        let skipped = agree(10, 4, 20, &[&bytes[..3], &bytes[3..300], &bytes[300..]]);
        assert_eq!(skipped, 2);
        // Without a carriage return at all, nothing can be skipped.
        let bytes = flood(200, b"y", b"\n");
        assert_eq!(agree(10, 4, 20, &[&bytes]), 0);
        // Too few lines for the scrollback: nothing skipped.
        let bytes = flood(40, b"y", b"\r\n");
        assert_eq!(agree(10, 4, 30, &[&bytes]), 0);
    }

    #[test]
    fn the_split_holds_its_conditions() {
        let bytes = b"\x1b[1mab\r\ncd\r\n\r\ne\r\nf\r\n";
        let (a, s) = find_split(bytes, 2).unwrap();
        assert_eq!((a, s), (9, 16));
        assert_eq!(&bytes[a - 1..s], b"cd\r\n\r\ne\r");
        assert_eq!(find_split(bytes, 5), None);
        assert_eq!(find_split(b"\r\n\r\n\r\nx", 1), None);
    }

    /// Hidden state at the split: inside an OSC string, inside an escape
    /// sequence, a half UTF-8 character, a synchronized update, the
    /// alternate screen, a scroll region, a pending wrap.
    #[test]
    fn states_that_forbid_the_skip_agree() {
        let body = flood(120, b"yy", b"\r\n");
        for head in [
            &b"\x1b]0;title "[..],
            b"\x1b[",
            b"\x1b[?2026h",
            b"\x1b[?1049h",
            b"\x1b[2;3r",
            b"\xe6\xbc",
            b"\x1b",
            b"\x1bP1$",
            b"abcdefghij",
            b"\x1b[31;44m",
            b"\x1b(0",
        ] {
            let mut bytes = head.to_vec();
            bytes.extend_from_slice(&body);
            bytes.extend_from_slice(b"\x07\x1b\\end");
            agree(10, 4, 20, &[&bytes]);
            agree(10, 4, 20, &[head, &body]);
        }
    }

    /// After `P`, lines with no printable byte, then a repeat of the
    /// preceding character: `P`'s last character, not `A`'s.
    #[test]
    fn the_repeated_character_is_kept() {
        let mut bytes = b"x\r\nqz\r".to_vec();
        bytes.extend(flood(50, b"", b"\r\n"));
        bytes.extend_from_slice(b"\x1b[2b");
        agree(10, 4, 20, &[&bytes]);
    }

    #[test]
    fn mixed_streams_cut_anywhere_agree() {
        let pieces: [&[u8]; 34] = [
            b"short\r\n",
            b"a line long enough to wrap twice or more\r\n",
            b"stair\n",
            b"\n",
            b"\r",
            b"x",
            b"\x1b[31m",
            b"\x1b[44m",
            b"\x1b[0m",
            b"\x1b[2;3H",
            b"\x1b[A",
            b"\x1b[5B",
            b"\x1b[K",
            b"\x1b]0;a title\x07",
            b"\x1b]2;other\x1b\\",
            b"\x1b[?1049h",
            b"\x1b[?1049l",
            b"\x1b[2;4r",
            b"\x1b[r",
            b"\x1b[?2026h",
            b"\x1b[?2026l",
            b"\x1b[2b",
            "漢".as_bytes(),
            b"\t",
            b"\x1b[6n",
            b"\x1b[?7l",
            b"\x1b[?7h",
            b"\x1b[4h",
            b"\x1b[4l",
            b"\x1b7",
            b"\x1b8",
            b"\x1bM",
            b"\x1b[20h",
            b"\x1b[20l",
        ];
        let mut next = crate::test_term::pseudo_random(0x2545_f491_4f6c_dd1d);
        let mut skipped = 0;
        for round in 0..300 {
            let mut stream = Vec::new();
            for _ in 0..30 {
                match next(4) {
                    // Floods: short lines, long wrapping lines, stairs.
                    0 => {
                        let text =
                            [&b"y"[..], b"yes", b"0123456789abcdefghijklmnopq", b""][next(4)];
                        let end = [&b"\r\n"[..], b"\n\r", b"\r\n", b"\n"][next(4)];
                        stream.extend(flood(1 + next(120), text, end));
                    }
                    _ => stream.extend_from_slice(pieces[next(pieces.len())]),
                }
                if round % 7 == 0 && next(20) == 0 {
                    stream.extend_from_slice(b"\x1bc");
                }
            }
            let mut chunks = Vec::new();
            let mut at = 0;
            while at < stream.len() {
                let len = (1 + next(700)).min(stream.len() - at);
                chunks.push(&stream[at..at + len]);
                at += len;
            }
            let (cols, rows, history) = (4 + next(14), 1 + next(6), next(3) * 10);
            skipped += agree(cols, rows, history, &chunks);
        }
        // The skip itself was exercised, often.
        assert!(skipped > 300, "only {skipped} chunks skipped");
    }
}
