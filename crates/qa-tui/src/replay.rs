//! The terminal replay (`terminal.cast`), raw or re-encoded from the model.
//!
//! Without secrets the replay records the program's output bytes as they
//! arrived ([`CastRecorder`]): full fidelity, every escape sequence kept.
//!
//! With secrets configured the program's bytes cannot be published: a
//! program can spell a secret in pieces that only the terminal puts
//! together (`Kiwi7`, `ESC[1m`, `Mango42Plum`; two writes; cursor moves), and
//! no scan of the bytes sees it. The replay is then **re-encoded from the
//! model**: after every output chunk (and every resize or ended synchronized
//! update) the displayed screen is taken with the cells that show a secret
//! masked ([`crate::mask`]), and the event written is the minimal update —
//! cursor moves, SGR colours and attributes, characters — that turns the
//! previous frame into this one. Replaying it shows what the model showed
//! after each read (colours, attributes, wide characters, the cursor), with
//! `█` blocks where a secret was, and never contains a byte the program
//! wrote. What is lost: the scrollback (players show the screen), the exact
//! byte stream (titles, bells, mode switches) and intermediate states within
//! one read, which players do not show either.
//!
//! Frames are held back in a bounded window before they are written. When a
//! secret becomes visible, the frames still in the window are masked
//! wherever they show four or more consecutive characters of it — the part
//! printed before the rest arrived, wherever it has moved since — so the
//! replay does not show the secret being typed out either.

use crate::cast::CastRecorder;
use crate::mask::{joins_next, MASK_CHAR};
use crate::palette;
use crate::screen::{SnapCell, Snapshot};
use alacritty_terminal::index::Line;
use alacritty_terminal::term::Term;
use alacritty_terminal::vte::ansi::Rgb;
use qa_core::Secrets;
use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

/// Frames held back at most (before the oldest is written).
pub const WINDOW_FRAMES: usize = 4096;
/// Memory of held-back frames at most (new rows only; unchanged rows are shared).
pub const WINDOW_BYTES: usize = 16 << 20;
/// Consecutive characters of a secret that are masked in held-back frames.
pub const FRAGMENT_CHARS: usize = 4;
/// Secret texts remembered with the last frame already searched for their
/// fragments (each frame is searched at most once per text).
const SEARCHED_TEXTS_MAX: usize = 1024;

/// The replay of a session.
pub enum Replay {
    /// The program's bytes (no secrets configured).
    Raw(CastRecorder),
    /// Screen updates re-encoded from the masked model.
    Masked(Box<MaskedRecorder>),
}

/// A finished replay.
pub struct FinishedReplay {
    /// The asciicast v2 file.
    pub bytes: Vec<u8>,
    /// The size cap was reached.
    pub cut: bool,
    /// Bytes not recorded because of the cap.
    pub dropped_bytes: u64,
    /// Re-encoded from the masked model (the run has secrets).
    pub masked: bool,
    /// When the replay's time 0 was.
    pub started: Instant,
}

impl Replay {
    /// A replay of a `cols`×`rows` terminal starting at `start`: raw when
    /// `secrets` is empty, re-encoded and masked otherwise.
    pub fn new(
        cols: u16,
        rows: u16,
        start: Instant,
        cap: usize,
        title: Option<&str>,
        secrets: Arc<Secrets>,
    ) -> Replay {
        let rec = CastRecorder::new(cols, rows, start, cap, title);
        if secrets.is_empty() {
            Replay::Raw(rec)
        } else {
            Replay::Masked(Box::new(MaskedRecorder::new(rec, secrets, cols, rows)))
        }
    }

    /// Whether the replay is re-encoded from the masked model.
    pub fn is_masked(&self) -> bool {
        matches!(self, Replay::Masked(_))
    }

    /// Records output read at `at`; `term` has already processed `bytes`.
    pub fn output<T>(&mut self, at: Instant, bytes: &[u8], term: &Term<T>) {
        match self {
            Replay::Raw(r) => r.output(at, bytes),
            Replay::Masked(m) => m.frame(at, term),
        }
    }

    /// Records a change of the model that came without output (a resize, a
    /// synchronized update released by its timeout).
    pub fn refresh<T>(&mut self, at: Instant, term: &Term<T>) {
        if let Replay::Masked(m) = self {
            m.frame(at, term);
        }
    }

    /// Records a resize.
    pub fn resize(&mut self, at: Instant, cols: u16, rows: u16) {
        match self {
            Replay::Raw(r) => r.resize(at, cols, rows),
            Replay::Masked(m) => m.push(Pending::Resize(at, cols, rows), 0),
        }
    }

    /// Records a marker.
    pub fn marker(&mut self, at: Instant, label: &str) {
        match self {
            Replay::Raw(r) => r.marker(at, label),
            Replay::Masked(m) => m.push(Pending::Marker(at, label.to_string()), 0),
        }
    }

    /// Writes everything held back and returns the file.
    pub fn finish(self, at: Instant) -> FinishedReplay {
        match self {
            Replay::Raw(r) => FinishedReplay {
                started: r.started(),
                cut: r.is_cut(),
                dropped_bytes: r.dropped_bytes(),
                bytes: r.finish(at),
                masked: false,
            },
            Replay::Masked(mut m) => {
                while m.flush_one() {}
                FinishedReplay {
                    started: m.out.started(),
                    cut: m.out.is_cut(),
                    dropped_bytes: m.out.dropped_bytes(),
                    bytes: m.out.finish(at),
                    masked: true,
                }
            }
        }
    }
}

/// An event not written yet.
enum Pending {
    /// A frame and its sequence number.
    Frame(Instant, u64, Frame),
    Resize(Instant, u16, u16),
    Marker(Instant, String),
}

/// One row of a frame.
#[derive(Clone, PartialEq)]
struct Row {
    cells: Vec<SnapCell>,
    /// The row continues on the next in reading order.
    joins: bool,
}

/// The screen at one moment; unchanged rows are shared between frames.
#[derive(Clone)]
struct Frame {
    cols: usize,
    rows: usize,
    grid: Vec<Arc<Row>>,
    cursor: (usize, usize, bool),
    background: Rgb,
}

impl Frame {
    fn blank(cols: usize, rows: usize, background: Rgb, cursor_visible: bool) -> Frame {
        let cell = SnapCell {
            c: ' ',
            zerowidth: String::new(),
            fg: palette::DEFAULT_FG,
            bg: background,
            bold: false,
            italic: false,
            underline: false,
            strike: false,
            wide: false,
            spacer: false,
            masked: false,
        };
        let row = Arc::new(Row {
            cells: vec![cell; cols],
            joins: false,
        });
        Frame {
            cols,
            rows,
            grid: vec![row; rows],
            cursor: (0, 0, cursor_visible),
            background,
        }
    }

    fn same(&self, o: &Frame) -> bool {
        self.cols == o.cols
            && self.rows == o.rows
            && self.cursor == o.cursor
            && self.background == o.background
            && self
                .grid
                .iter()
                .zip(&o.grid)
                .all(|(a, b)| Arc::ptr_eq(a, b) || a == b)
    }

    /// Segments of text in reading order (rows that join the next continue a
    /// segment), each character with its cell.
    fn segments(&self) -> Vec<Vec<(char, usize, usize)>> {
        let mut out = Vec::new();
        let mut seg = Vec::new();
        for (r, row) in self.grid.iter().enumerate() {
            for (c, cell) in row.cells.iter().enumerate() {
                if !cell.spacer {
                    seg.push((cell.c, r, c));
                }
            }
            if !row.joins {
                out.push(std::mem::take(&mut seg));
            }
        }
        if !seg.is_empty() {
            out.push(seg);
        }
        out
    }

    /// The real text of every run of masked cells.
    fn masked_texts(&self) -> HashSet<String> {
        let mut out = HashSet::new();
        for seg in self.segments() {
            let mut run = String::new();
            for (c, r, col) in seg {
                if self.grid[r].cells[col].masked {
                    run.push(c);
                } else if !run.is_empty() {
                    out.insert(std::mem::take(&mut run));
                }
            }
            if !run.is_empty() {
                out.insert(run);
            }
        }
        out
    }

    /// Masks every run of characters that is one of `grams` (by length).
    fn mask_fragments(&mut self, grams: &HashMap<usize, HashSet<Vec<char>>>) {
        let mut hits: Vec<(usize, usize)> = Vec::new();
        for seg in self.segments() {
            let chars: Vec<char> = seg.iter().map(|(c, _, _)| *c).collect();
            for (&n, set) in grams {
                if n == 0 || chars.len() < n {
                    continue;
                }
                for i in 0..=chars.len() - n {
                    if set.contains(&chars[i..i + n]) {
                        hits.extend(seg[i..i + n].iter().map(|&(_, r, c)| (r, c)));
                    }
                }
            }
        }
        for (r, c) in hits {
            let row = Arc::make_mut(&mut self.grid[r]);
            row.cells[c].masked = true;
            if row.cells[c].wide && c + 1 < row.cells.len() {
                row.cells[c + 1].masked = true;
            }
        }
    }
}

/// The masked, re-encoding recorder; see the module documentation.
pub struct MaskedRecorder {
    out: CastRecorder,
    secrets: Arc<Secrets>,
    pending: VecDeque<(Pending, usize)>,
    pending_bytes: usize,
    pending_frames: usize,
    /// The newest frame taken.
    last: Option<Frame>,
    /// The screen the written events leave behind.
    shown: Frame,
    /// Clear the screen before the next frame (after a resize).
    clear_next: bool,
    /// Secret texts masked in `last`.
    masked_texts: HashSet<String>,
    /// Sequence number of the newest frame taken.
    seq: u64,
    /// Per secret text: frames up to this sequence number were searched for
    /// its fragments already.
    searched: HashMap<String, u64>,
}

impl MaskedRecorder {
    fn new(out: CastRecorder, secrets: Arc<Secrets>, cols: u16, rows: u16) -> MaskedRecorder {
        MaskedRecorder {
            out,
            secrets,
            pending: VecDeque::new(),
            pending_bytes: 0,
            pending_frames: 0,
            last: None,
            shown: Frame::blank(
                usize::from(cols),
                usize::from(rows),
                palette::DEFAULT_BG,
                true,
            ),
            clear_next: false,
            masked_texts: HashSet::new(),
            seq: 0,
            searched: HashMap::new(),
        }
    }

    fn push(&mut self, p: Pending, cost: usize) {
        if matches!(p, Pending::Frame(..)) {
            self.pending_frames += 1;
        }
        self.pending_bytes += cost;
        self.pending.push_back((p, cost));
        while self.pending_frames > WINDOW_FRAMES || self.pending_bytes > WINDOW_BYTES {
            if !self.flush_one() {
                break;
            }
        }
    }

    /// Takes the model's masked screen as the next frame.
    fn frame<T>(&mut self, at: Instant, term: &Term<T>) {
        if self.out.is_cut() {
            return;
        }
        let snap = Snapshot::of_masked(term, &self.secrets);
        let (cols, rows) = (snap.cols, snap.rows);
        let prev = self
            .last
            .as_ref()
            .filter(|l| l.cols == cols && l.rows == rows);
        let row_cost = cols * std::mem::size_of::<SnapCell>() + std::mem::size_of::<Row>();
        let mut cost = 0;
        let grid: Vec<Arc<Row>> = (0..rows)
            .map(|r| {
                let row = Row {
                    cells: snap.cells[r * cols..(r + 1) * cols].to_vec(),
                    joins: joins_next(term, Line(r as i32)),
                };
                match prev {
                    Some(p) if *p.grid[r] == row => p.grid[r].clone(),
                    _ => {
                        cost += row_cost;
                        Arc::new(row)
                    }
                }
            })
            .collect();
        let frame = Frame {
            cols,
            rows,
            grid,
            cursor: (snap.cursor_row, snap.cursor_col, snap.cursor_visible),
            background: snap.background,
        };
        if self.last.as_ref().is_some_and(|l| l.same(&frame)) {
            return;
        }
        // A secret that just became visible: mask its fragments in the
        // frames still held back (each frame once per secret text).
        let texts = frame.masked_texts();
        for t in texts.iter().filter(|t| !self.masked_texts.contains(*t)) {
            let from = self.searched.get(t).copied().unwrap_or(0);
            let chars: Vec<char> = t.chars().collect();
            let n = FRAGMENT_CHARS.min(chars.len()).max(1);
            let grams: HashMap<usize, HashSet<Vec<char>>> =
                HashMap::from([(n, chars.windows(n).map(<[char]>::to_vec).collect())]);
            for (p, _) in self.pending.iter_mut() {
                if let Pending::Frame(_, seq, f) = p {
                    if *seq > from {
                        f.mask_fragments(&grams);
                    }
                }
            }
            if self.searched.len() >= SEARCHED_TEXTS_MAX {
                self.searched.clear();
            }
            self.searched.insert(t.clone(), self.seq);
        }
        self.masked_texts = texts;
        self.last = Some(frame.clone());
        self.seq += 1;
        self.push(Pending::Frame(at, self.seq, frame), cost);
    }

    /// Writes the oldest held-back event; false when there was none.
    fn flush_one(&mut self) -> bool {
        let Some((p, cost)) = self.pending.pop_front() else {
            return false;
        };
        self.pending_bytes -= cost;
        match p {
            Pending::Frame(at, _, f) => {
                self.pending_frames -= 1;
                let text = encode(&self.shown, &f, self.clear_next);
                self.clear_next = false;
                self.out.output_text(at, &text);
                self.shown = f;
            }
            Pending::Resize(at, cols, rows) => {
                self.out.resize(at, cols, rows);
                self.clear_next = true;
            }
            Pending::Marker(at, label) => self.out.marker(at, &label),
        }
        true
    }
}

/// Whether two cells look the same on screen.
fn same_look(a: &SnapCell, b: &SnapCell) -> bool {
    if a.masked || b.masked {
        a.masked == b.masked && a.wide == b.wide && a.spacer == b.spacer
    } else {
        a == b
    }
}

#[derive(PartialEq, Clone, Copy)]
struct Pen {
    fg: Rgb,
    bg: Rgb,
    bold: bool,
    italic: bool,
    underline: bool,
    strike: bool,
}

fn set_pen(out: &mut String, current: &mut Option<Pen>, want: Pen, default_bg: Rgb) {
    if *current == Some(want) {
        return;
    }
    out.push_str("\x1b[0");
    for (on, code) in [
        (want.bold, ";1"),
        (want.italic, ";3"),
        (want.underline, ";4"),
        (want.strike, ";9"),
    ] {
        if on {
            out.push_str(code);
        }
    }
    if want.fg != palette::DEFAULT_FG {
        let _ = write!(out, ";38;2;{};{};{}", want.fg.r, want.fg.g, want.fg.b);
    }
    if want.bg != default_bg {
        let _ = write!(out, ";48;2;{};{};{}", want.bg.r, want.bg.g, want.bg.b);
    }
    out.push('m');
    *current = Some(want);
}

/// The escape sequences that turn `prev` into `next` on a terminal showing
/// `prev` (clearing first when `clear` or the size differs). Empty when
/// nothing visible changed.
fn encode(prev: &Frame, next: &Frame, clear: bool) -> String {
    let mut s = String::new();
    let blank;
    let clear = clear || prev.cols != next.cols || prev.rows != next.rows;
    let prev = if clear {
        s.push_str("\x1b[0m\x1b[H\x1b[2J");
        blank = Frame::blank(next.cols, next.rows, next.background, prev.cursor.2);
        &blank
    } else {
        prev
    };
    let mask_pen = Pen {
        fg: crate::render::MASK_COLOR,
        bg: crate::render::MASK_COLOR,
        bold: false,
        italic: false,
        underline: false,
        strike: false,
    };
    let mut pen: Option<Pen> = None;
    let mut wrote = false;
    for r in 0..next.rows {
        if Arc::ptr_eq(&prev.grid[r], &next.grid[r]) {
            continue;
        }
        let (pc, nc) = (&prev.grid[r].cells, &next.grid[r].cells);
        let mut c = 0;
        while c < next.cols {
            if same_look(&pc[c], &nc[c]) {
                c += 1;
                continue;
            }
            let mut start = c;
            while start > 0 && nc[start].spacer {
                start -= 1;
            }
            let mut end = c + 1;
            while end < next.cols && (!same_look(&pc[end], &nc[end]) || nc[end].spacer) {
                end += 1;
            }
            let _ = write!(s, "\x1b[{};{}H", r + 1, start + 1);
            for x in start..end {
                let cell = &nc[x];
                let after_wide = x > 0 && nc[x - 1].wide;
                if cell.spacer && after_wide {
                    continue;
                }
                if cell.masked {
                    set_pen(&mut s, &mut pen, mask_pen, next.background);
                    s.push(MASK_CHAR);
                    if cell.wide {
                        s.push(MASK_CHAR);
                    }
                    continue;
                }
                set_pen(
                    &mut s,
                    &mut pen,
                    Pen {
                        fg: cell.fg,
                        bg: cell.bg,
                        bold: cell.bold,
                        italic: cell.italic,
                        underline: cell.underline,
                        strike: cell.strike,
                    },
                    next.background,
                );
                if cell.spacer || cell.c == '\0' || cell.c.is_control() {
                    s.push(' ');
                } else {
                    s.push(cell.c);
                    s.push_str(&cell.zerowidth);
                }
            }
            wrote = true;
            c = end;
        }
    }
    if wrote {
        s.push_str("\x1b[0m");
    }
    let (cr, cc, cv) = next.cursor;
    if wrote || clear || (prev.cursor.0, prev.cursor.1) != (cr, cc) {
        let _ = write!(s, "\x1b[{};{}H", cr + 1, cc + 1);
    }
    if clear || prev.cursor.2 != cv {
        s.push_str(if cv { "\x1b[?25h" } else { "\x1b[?25l" });
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_term::term_with;
    use alacritty_terminal::event::VoidListener;
    use alacritty_terminal::term::test::TermSize;
    use alacritty_terminal::term::Config;
    use alacritty_terminal::vte::ansi::Processor;

    const SECRET: &str = "s3cret-99";

    fn secrets() -> Arc<Secrets> {
        let s = Arc::new(Secrets::new());
        s.add(SECRET);
        s
    }

    struct Live {
        term: Term<VoidListener>,
        p: Processor,
        replay: Replay,
        t0: Instant,
    }

    impl Live {
        fn new(cols: usize, rows: usize, secrets: Arc<Secrets>) -> Live {
            let t0 = Instant::now();
            Live {
                term: Term::new(Config::default(), &TermSize::new(cols, rows), VoidListener),
                p: Processor::new(),
                replay: Replay::new(cols as u16, rows as u16, t0, 1 << 20, None, secrets),
                t0,
            }
        }
        fn feed(&mut self, b: &[u8]) {
            self.p.advance(&mut self.term, b);
            self.replay.output(Instant::now(), b, &self.term);
        }
        fn finish(self) -> (Vec<String>, Term<VoidListener>) {
            let f = self.replay.finish(self.t0);
            assert!(f.masked);
            (replay_screens(&f.bytes), self.term)
        }
    }

    /// The screen after every event of a cast, replayed on a fresh model.
    fn replay_screens(cast: &[u8]) -> Vec<String> {
        let text = std::str::from_utf8(cast).unwrap();
        let mut lines = text.lines();
        let h: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
        let mut t = term_with(
            h["width"].as_u64().unwrap() as usize,
            h["height"].as_u64().unwrap() as usize,
            b"",
        );
        let mut p: Processor = Processor::new();
        let mut out = Vec::new();
        for l in lines {
            let e: serde_json::Value = serde_json::from_str(l).unwrap();
            match e[1].as_str().unwrap() {
                "o" => p.advance(&mut t, e[2].as_str().unwrap().as_bytes()),
                "r" => {
                    let (c, r) = e[2].as_str().unwrap().split_once('x').unwrap();
                    t.resize(TermSize::new(c.parse().unwrap(), r.parse().unwrap()));
                }
                _ => {}
            }
            out.push(crate::screen::screen_rows(&t).join("\n"));
        }
        out
    }

    #[test]
    fn without_secrets_the_bytes_are_kept() {
        let mut l = Live::new(20, 3, Arc::new(Secrets::new()));
        assert!(!l.replay.is_masked());
        l.feed(b"\x1b[1mhi\x1b[0m");
        let f = l.replay.finish(l.t0);
        assert!(!f.masked);
        assert!(String::from_utf8(f.bytes).unwrap().contains("\\u001b[1mhi"));
    }

    #[test]
    fn the_replay_matches_the_model_with_secrets_masked() {
        let mut l = Live::new(24, 4, secrets());
        l.feed(b"plain \x1b[31mred\x1b[0m \xe6\xbc\xa2\r\n");
        l.feed(b"key: s3cr");
        l.feed(b"\x1b[1met-99\x1b[0m!\r\n");
        l.feed(b"\x1b[7minverse\x1b[0m");
        let (screens, term) = l.finish();
        let last = screens.last().unwrap();
        let model = crate::screen::screen_rows(&term).join("\n");
        assert_eq!(
            last,
            &model.replace(SECRET, &"█".repeat(SECRET.len())),
            "the last frame is the model's screen, masked"
        );
        for s in &screens {
            assert!(!s.contains(SECRET) && !s.contains("s3cr"), "{s}");
        }
        // Colours survive the re-encoding.
        let mut t = term_with(24, 4, b"");
        let cast = {
            let mut l = Live::new(24, 4, secrets());
            l.feed(b"plain \x1b[31mred\x1b[0m");
            l.replay.finish(l.t0).bytes
        };
        let mut p: Processor = Processor::new();
        for line in std::str::from_utf8(&cast).unwrap().lines().skip(1) {
            let e: serde_json::Value = serde_json::from_str(line).unwrap();
            if e[1] == "o" {
                p.advance(&mut t, e[2].as_str().unwrap().as_bytes());
            }
        }
        let snap = Snapshot::of(&t);
        assert_eq!(
            snap.cell(0, 6).fg,
            Rgb {
                r: 0xcd,
                g: 0,
                b: 0
            }
        );
        assert_eq!(snap.cell(0, 0).fg, palette::DEFAULT_FG);
    }

    #[test]
    fn fragments_shown_before_the_secret_completes_are_masked() {
        let mut l = Live::new(20, 3, secrets());
        // Typed out one character per read, then scrolled.
        for ch in SECRET.bytes() {
            l.feed(&[ch]);
        }
        l.feed(b"\r\nA\r\nB\r\nC");
        let (screens, _) = l.finish();
        assert!(screens.len() >= SECRET.len());
        for s in &screens {
            assert!(!s.contains("s3cr") && !s.contains("cret"), "{s}");
        }
    }

    #[test]
    fn resizes_redraw_and_unchanged_screens_write_nothing() {
        let mut l = Live::new(20, 3, secrets());
        l.feed(b"hello");
        l.feed(b"");
        l.term.resize(TermSize::new(10, 2));
        l.replay.resize(Instant::now(), 10, 2);
        l.replay.refresh(Instant::now(), &l.term);
        let f = l.replay.finish(l.t0);
        let text = String::from_utf8(f.bytes).unwrap();
        let kinds: Vec<String> = text
            .lines()
            .skip(1)
            .map(|l| {
                let e: serde_json::Value = serde_json::from_str(l).unwrap();
                e[1].as_str().unwrap().to_string()
            })
            .collect();
        assert_eq!(kinds, ["o", "r", "o"]);
        let screens = replay_screens(text.as_bytes());
        assert_eq!(screens.last().unwrap().lines().next().unwrap(), "hello");
    }
}
