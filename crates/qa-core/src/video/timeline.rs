//! Where each frame goes in the video.
//!
//! Frames arrive when the surface changes (a still page sends none). The
//! video is cut into slots of `1/fps` seconds; a slot that received frames
//! shows the newest of them, from the slot's start until the next shown
//! frame, so a still page keeps its real duration without encoding the
//! same picture again, and nothing is shown before it happened.
//!
//! A [hold](Timeline::hold) pauses the timeline: the frame current at that
//! instant stays on screen for the hold's length and everything later is
//! shown that much later, so a result stays readable in the video while
//! the run goes on — and costs the encoder nothing.

use std::time::{Duration, Instant};

/// The video's clock: the first frame's instant, the holds so far, the
/// slot length and the longest duration.
#[derive(Debug)]
pub(crate) struct Timeline {
    slot: Duration,
    max_slots: u64,
    first: Option<Instant>,
    /// The holds so far: how much later than it happened a frame is shown.
    offset: Duration,
}

impl Timeline {
    /// Slots of `1/fps` seconds, at most `max_ms` of video.
    pub(crate) fn new(fps: u32, max_ms: u64) -> Timeline {
        let fps = fps.max(1);
        Timeline {
            slot: Duration::from_secs(1) / fps,
            max_slots: (max_ms.saturating_mul(fps as u64) / 1000).max(1),
            first: None,
            offset: Duration::ZERO,
        }
    }

    /// When the first frame was taken.
    pub(crate) fn first(&self) -> Option<Instant> {
        self.first
    }

    /// Where a frame taken at `at` is shown (0: the first frame), holds
    /// included.
    pub(crate) fn output_time(&self, at: Instant) -> Duration {
        match self.first {
            Some(first) => at.saturating_duration_since(first) + self.offset,
            None => Duration::ZERO,
        }
    }

    /// The slot a frame taken at `at` falls in (the first frame starts the
    /// timeline in slot 0); `None` past the longest duration.
    pub(crate) fn place(&mut self, at: Instant) -> Option<u64> {
        self.first.get_or_insert(at);
        let k = (self.output_time(at).as_nanos() / self.slot.as_nanos().max(1)) as u64;
        (k < self.max_slots).then_some(k)
    }

    /// The last slot (where the video ends at `end`), within the longest
    /// duration.
    pub(crate) fn end_slot(&self, end: Instant) -> u64 {
        let k = (self.output_time(end).as_nanos() / self.slot.as_nanos().max(1)) as u64;
        k.min(self.max_slots - 1)
    }

    /// Whether `k` is the last slot of the longest duration (it is never
    /// over: the video stops there).
    pub(crate) fn is_last(&self, k: u64) -> bool {
        k + 1 >= self.max_slots
    }

    /// Milliseconds from the video's start to slot `k`.
    pub(crate) fn slot_ms(&self, k: u64) -> u64 {
        (self.slot.as_nanos() * k as u128 / 1_000_000) as u64
    }

    /// Holds the frame current at this moment for `length` more: every
    /// later frame is shown `length` later. Before the first frame nothing
    /// is held (`false`).
    pub(crate) fn hold(&mut self, length: Duration) -> bool {
        if self.first.is_none() {
            return false;
        }
        self.offset += length;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(t0: Instant, ms: u64) -> Instant {
        t0 + Duration::from_millis(ms)
    }

    #[test]
    fn frames_fall_in_slots_of_their_own_time() {
        let t0 = Instant::now();
        let mut t = Timeline::new(10, 60_000);
        assert_eq!(t.place(ms(t0, 0)), Some(0));
        assert_eq!(t.place(ms(t0, 20)), Some(0));
        assert_eq!(t.place(ms(t0, 250)), Some(2));
        assert_eq!(t.slot_ms(2), 200);
        // A still page: the video still ends when the run did.
        assert_eq!(t.end_slot(ms(t0, 2_000)), 20);
    }

    #[test]
    fn a_hold_shows_everything_later_that_much_later() {
        let t0 = Instant::now();
        let mut t = Timeline::new(10, 60_000);
        t.place(t0);
        assert_eq!(t.place(ms(t0, 100)), Some(1));
        assert!(t.hold(Duration::from_millis(500)));
        // The next frame, taken at 300 ms, is shown at 800 ms: the frame of
        // 100 ms stays on screen until then.
        assert_eq!(t.output_time(ms(t0, 300)), Duration::from_millis(800));
        assert_eq!(t.place(ms(t0, 300)), Some(8));
        // 1 s of run is 1.5 s of video.
        assert_eq!(t.end_slot(ms(t0, 1_000)), 15);
    }

    #[test]
    fn nothing_is_held_before_the_first_frame() {
        let t0 = Instant::now();
        let mut t = Timeline::new(10, 60_000);
        assert!(!t.hold(Duration::from_millis(500)));
        t.place(t0);
        assert_eq!(t.output_time(ms(t0, 100)), Duration::from_millis(100));
    }

    #[test]
    fn the_longest_duration_is_a_hard_bound() {
        let t0 = Instant::now();
        let mut t = Timeline::new(10, 1_000);
        t.place(t0);
        assert_eq!(t.place(ms(t0, 900)), Some(9));
        assert_eq!(t.place(ms(t0, 5_000)), None);
        assert_eq!(t.end_slot(ms(t0, 9_000)), 9);
    }

    #[test]
    fn a_frame_from_the_past_falls_in_the_first_slot() {
        let t0 = Instant::now();
        let mut t = Timeline::new(10, 60_000);
        t.place(ms(t0, 500));
        assert_eq!(t.place(t0), Some(0));
    }
}
