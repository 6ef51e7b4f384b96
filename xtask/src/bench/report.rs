//! The tables `cargo xtask bench` prints: medians per contender and the
//! ratio of ui-qa to the fastest *peer* (never to ui-qa, never to a
//! reference such as "the program alone").
//!
//! Two shapes: a [`Matrix`] (one row per task, one column per contender,
//! used by `web`) and a [`Listing`] (one row per contender with median, min
//! and max, used by `tui` and `desktop`). A cell whose every round failed
//! reads `failed`; a median over only some rounds is marked `*`.

use super::timing::median;

/// What a contender is in a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The tool under test.
    UiQa,
    /// A peer tool: ratios are to the fastest of these.
    Peer,
    /// A baseline shown for context only.
    Reference,
}

/// One contender of a scenario.
#[derive(Debug, Clone)]
pub struct Contender {
    /// Column or row name.
    pub name: String,
    /// Its role in the comparison.
    pub kind: Kind,
}

impl Contender {
    /// A contender named `name`.
    pub fn new(name: &str, kind: Kind) -> Self {
        Contender {
            name: name.to_string(),
            kind,
        }
    }
}

/// The measurements of one contender in one scenario, over the rounds.
#[derive(Debug, Clone, Default)]
pub struct Cell {
    /// Milliseconds of every successful round.
    pub samples: Vec<f64>,
    /// Rounds that failed.
    pub failures: usize,
}

impl Cell {
    /// The median of the successful rounds.
    pub fn median(&self) -> Option<f64> {
        median(&self.samples)
    }

    /// The median as table text: `failed`, `1234`, or `1234*` when some
    /// rounds failed.
    fn text(&self) -> String {
        match self.median() {
            None if self.failures > 0 => "failed".into(),
            None => "-".into(),
            Some(m) if self.failures > 0 => format!("{m:.0}*"),
            Some(m) => format!("{m:.0}"),
        }
    }
}

fn ratio_text(r: Option<f64>) -> String {
    r.map_or_else(|| "-".into(), |r| format!("{r:.2}x"))
}

/// ui-qa's median over the fastest peer's median, when both exist.
fn ui_qa_over_best(kinds: &[Kind], medians: &[Option<f64>]) -> Option<f64> {
    let mine = kinds
        .iter()
        .zip(medians)
        .find(|(k, _)| **k == Kind::UiQa)
        .and_then(|(_, m)| *m)?;
    best_peer(kinds, medians).map(|b| mine / b)
}

/// The fastest peer median (None if any peer has none).
fn best_peer(kinds: &[Kind], medians: &[Option<f64>]) -> Option<f64> {
    let peers: Vec<Option<f64>> = kinds
        .iter()
        .zip(medians)
        .filter(|(k, _)| **k == Kind::Peer)
        .map(|(_, m)| *m)
        .collect();
    if peers.is_empty() || peers.iter().any(Option::is_none) {
        return None;
    }
    peers.into_iter().flatten().reduce(f64::min)
}

/// One row per task, one column per contender, plus `ui-qa/best`.
#[derive(Debug)]
pub struct Matrix {
    /// The line above the table.
    pub title: String,
    /// Header of the label column (e.g. `task`).
    pub row_header: String,
    /// The columns.
    pub contenders: Vec<Contender>,
    /// Label and one cell per contender.
    pub rows: Vec<(String, Vec<Cell>)>,
    /// Whether to end with a `median` row: per contender, the median of its
    /// per-row medians (over the rows every contender completed).
    pub summary: bool,
}

impl Matrix {
    /// The table as text.
    pub fn render(&self) -> String {
        let kinds: Vec<Kind> = self.contenders.iter().map(|c| c.kind).collect();
        let mut lines: Vec<Vec<String>> = Vec::new();
        let mut complete: Vec<Vec<f64>> = Vec::new();
        let mut partial = false;
        let mut excluded = 0;
        for (label, cells) in &self.rows {
            let medians: Vec<Option<f64>> = cells.iter().map(Cell::median).collect();
            partial |= cells.iter().any(|c| c.failures > 0);
            let mut line = vec![label.clone()];
            line.extend(cells.iter().map(Cell::text));
            line.push(ratio_text(ui_qa_over_best(&kinds, &medians)));
            lines.push(line);
            if medians.iter().all(Option::is_some) {
                complete.push(medians.into_iter().flatten().collect());
            } else {
                excluded += 1;
            }
        }
        if self.summary && !complete.is_empty() {
            let medians: Vec<Option<f64>> = (0..kinds.len())
                .map(|i| median(&complete.iter().map(|r| r[i]).collect::<Vec<_>>()))
                .collect();
            let mut line = vec!["median".to_string()];
            line.extend(
                medians
                    .iter()
                    .map(|m| m.map_or_else(|| "-".into(), |m| format!("{m:.0}"))),
            );
            line.push(ratio_text(ui_qa_over_best(&kinds, &medians)));
            lines.push(line);
        }
        let mut header = vec![self.row_header.clone()];
        header.extend(self.contenders.iter().map(|c| c.name.clone()));
        header.push("ui-qa/best".into());
        let mut out = format!("{}\n{}", self.title, layout(&header, &lines));
        if partial {
            out.push_str("* median of the rounds that completed; the others failed\n");
        }
        if self.summary && excluded > 0 {
            out.push_str(&format!(
                "(the median row leaves out {excluded} row(s) that some contender never completed)\n"
            ));
        }
        out
    }
}

/// One row of a [`Listing`].
#[derive(Debug)]
pub struct ListRow {
    /// The contender.
    pub contender: Contender,
    /// Its measurements.
    pub cell: Cell,
    /// Free text for the last column (e.g. node counts).
    pub note: String,
}

/// One row per contender: median, min, max, ratios.
#[derive(Debug)]
pub struct Listing {
    /// The line above the table.
    pub title: String,
    /// The rows.
    pub rows: Vec<ListRow>,
    /// An extra ratio column to this row's median (e.g. the bare PTY), with
    /// its header.
    pub versus: Option<(usize, String)>,
    /// Header of the note column (no column when None).
    pub note_header: Option<String>,
}

impl Listing {
    /// The table as text.
    pub fn render(&self) -> String {
        let kinds: Vec<Kind> = self.rows.iter().map(|r| r.contender.kind).collect();
        let medians: Vec<Option<f64>> = self.rows.iter().map(|r| r.cell.median()).collect();
        let best = best_peer(&kinds, &medians);
        let base = self.versus.as_ref().and_then(|(i, _)| medians[*i]);
        let mut header: Vec<String> = ["contender", "median", "min", "max"]
            .map(String::from)
            .to_vec();
        if let Some((_, h)) = &self.versus {
            header.push(h.clone());
        }
        header.push("÷ best peer".into());
        if let Some(h) = &self.note_header {
            header.push(h.clone());
        }
        let fmt = |v: Option<f64>| v.map_or_else(|| "-".into(), |v| format!("{v:.0}"));
        let mut partial = false;
        let mut lines = Vec::new();
        for (row, m) in self.rows.iter().zip(&medians) {
            partial |= row.cell.failures > 0;
            let s = &row.cell.samples;
            let mut line = vec![
                row.contender.name.clone(),
                row.cell.text(),
                fmt(s.iter().copied().reduce(f64::min)),
                fmt(s.iter().copied().reduce(f64::max)),
            ];
            if self.versus.is_some() {
                line.push(ratio_text(m.zip(base).map(|(m, b)| m / b)));
            }
            line.push(ratio_text(m.zip(best).map(|(m, b)| m / b)));
            if self.note_header.is_some() {
                line.push(row.note.clone());
            }
            lines.push(line);
        }
        let mut out = format!("{}\n{}", self.title, layout(&header, &lines));
        if let Some(r) = ui_qa_over_best(&kinds, &medians) {
            out.push_str(&format!("ui-qa / fastest peer: {r:.2}x\n"));
        }
        if partial {
            out.push_str("* median of the rounds that completed; the others failed\n");
        }
        out
    }
}

/// Aligned columns: the first left-aligned, the rest right-aligned.
fn layout(header: &[String], lines: &[Vec<String>]) -> String {
    let width = |i: usize| {
        std::iter::once(header)
            .chain(lines.iter().map(Vec::as_slice))
            .filter_map(|l| l.get(i))
            .map(|s| s.chars().count())
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..header.len()).map(width).collect();
    let mut out = String::new();
    for l in std::iter::once(header).chain(lines.iter().map(Vec::as_slice)) {
        let mut text = String::new();
        for (i, cell) in l.iter().enumerate() {
            let pad = widths[i].saturating_sub(cell.chars().count());
            if i == 0 {
                text.push_str(cell);
                text.push_str(&" ".repeat(pad));
            } else {
                text.push_str("  ");
                text.push_str(&" ".repeat(pad));
                text.push_str(cell);
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(v: &[f64], failures: usize) -> Cell {
        Cell {
            samples: v.to_vec(),
            failures,
        }
    }

    #[test]
    fn matrix_ratio_is_to_the_fastest_peer() {
        let m = Matrix {
            title: "t".into(),
            row_header: "task".into(),
            contenders: vec![
                Contender::new("ui-qa", Kind::UiQa),
                Contender::new("a", Kind::Peer),
                Contender::new("b", Kind::Peer),
            ],
            rows: vec![
                (
                    "one".into(),
                    vec![cell(&[800.0], 0), cell(&[1000.0], 0), cell(&[2000.0], 0)],
                ),
                (
                    "two".into(),
                    vec![cell(&[], 1), cell(&[1000.0], 0), cell(&[900.0], 0)],
                ),
            ],
            summary: true,
        };
        let text = m.render();
        assert!(text.contains("0.80x"), "{text}");
        assert!(text.contains("failed"), "{text}");
        // The median row only counts the row every contender completed.
        let last = text.lines().find(|l| l.starts_with("median")).unwrap();
        assert!(last.ends_with("0.80x"), "{text}");
    }

    #[test]
    fn listing_ignores_references_for_the_best_peer() {
        let l = Listing {
            title: "t".into(),
            rows: vec![
                ListRow {
                    contender: Contender::new("alone", Kind::Reference),
                    cell: cell(&[10.0], 0),
                    note: String::new(),
                },
                ListRow {
                    contender: Contender::new("ui-qa", Kind::UiQa),
                    cell: cell(&[300.0, 200.0, 250.0], 0),
                    note: String::new(),
                },
                ListRow {
                    contender: Contender::new("tmux", Kind::Peer),
                    cell: cell(&[200.0], 0),
                    note: String::new(),
                },
            ],
            versus: Some((0, "÷ alone".into())),
            note_header: None,
        };
        let text = l.render();
        assert!(text.contains("ui-qa / fastest peer: 1.25x"), "{text}");
        assert!(text.contains("25.00x"), "{text}");
    }
}
