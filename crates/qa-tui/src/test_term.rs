//! Test support: a terminal model fed a byte string, shared by the unit
//! tests of every module (a leaf, so no test imports a sibling's tests).

use alacritty_terminal::event::VoidListener;
use alacritty_terminal::term::test::TermSize;
use alacritty_terminal::term::{Config, Term};
use alacritty_terminal::vte::ansi::Processor;

/// A `cols`×`rows` terminal with 100 lines of scrollback after `bytes`.
pub(crate) fn term_with(cols: usize, rows: usize, bytes: &[u8]) -> Term<VoidListener> {
    let mut term = Term::new(
        Config {
            scrolling_history: 100,
            ..Config::default()
        },
        &TermSize::new(cols, rows),
        VoidListener,
    );
    let mut p: Processor = Processor::new();
    p.advance(&mut term, bytes);
    term
}

/// A fixed pseudo-random sequence (xorshift, no clock and no seed from
/// outside): each call answers a number below `n`.
pub(crate) fn pseudo_random(seed: u64) -> impl FnMut(usize) -> usize {
    let mut state = seed;
    move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    }
}
