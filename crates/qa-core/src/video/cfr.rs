//! Constant frame rate from timestamped frames.
//!
//! Frames arrive when the surface changes (a static page sends few). The
//! written video has one frame per slot of `1/fps` seconds; each slot shows
//! the newest frame taken before the slot ended, so a still page keeps its
//! real duration and nothing is shown before it happened.
//!
//! A [hold](Slots::hold) pauses the timeline: the frame current at that
//! instant stays on screen for the hold's length and everything later is
//! shown that much later, so a result stays readable in the video while
//! the run goes on.

use std::time::{Duration, Instant};

/// Decides how many times each frame is written.
#[derive(Debug)]
pub(crate) struct Slots {
    slot: Duration,
    max_slots: u64,
    first: Option<Instant>,
    written: u64,
    /// The holds so far: how much later than it happened a frame is shown.
    offset: Duration,
}

impl Slots {
    /// Slots of `1/fps` seconds, at most `max_ms` of video.
    pub(crate) fn new(fps: u32, max_ms: u64) -> Slots {
        let fps = fps.max(1);
        Slots {
            slot: Duration::from_secs(1) / fps,
            max_slots: (max_ms.saturating_mul(fps as u64) / 1000).max(1),
            first: None,
            written: 0,
            offset: Duration::ZERO,
        }
    }

    /// When the first frame was taken.
    pub(crate) fn first(&self) -> Option<Instant> {
        self.first
    }

    /// Slots written so far.
    #[cfg(test)]
    pub(crate) fn written(&self) -> u64 {
        self.written
    }

    /// Whether the video reached its longest duration.
    pub(crate) fn full(&self) -> bool {
        self.written >= self.max_slots
    }

    /// Where a frame taken at `at` is shown in the video (0: the first
    /// frame), holds included.
    pub(crate) fn output_time(&self, at: Instant) -> Duration {
        match self.first {
            Some(first) => at.saturating_duration_since(first) + self.offset,
            None => Duration::ZERO,
        }
    }

    fn slots_before(&self, at: Instant) -> u64 {
        if self.first.is_none() {
            return 0;
        }
        (self.output_time(at).as_nanos() / self.slot.as_nanos().max(1)) as u64
    }

    /// Holds the frame current at `at` for `length` more: how many times
    /// the previous frame is written now (the slots that ended before
    /// `at`). Every later frame is shown `length` later. Before the first
    /// frame or once full, nothing is held (`None`).
    pub(crate) fn hold(&mut self, at: Instant, length: Duration) -> Option<u64> {
        if self.first.is_none() || self.full() {
            return None;
        }
        let due = self.slots_before(at).min(self.max_slots);
        let n = due.saturating_sub(self.written);
        self.written += n;
        self.offset += length;
        Some(n)
    }

    /// A new frame taken at `at`: how many times the *previous* frame is
    /// written now (the slots that ended before `at`). The new frame
    /// becomes the previous one.
    pub(crate) fn on_frame(&mut self, at: Instant) -> u64 {
        if self.first.is_none() {
            self.first = Some(at);
            return 0;
        }
        let due = self.slots_before(at).min(self.max_slots);
        let n = due.saturating_sub(self.written);
        self.written += n;
        n
    }

    /// The recording ends at `end`: how many more times the last frame is
    /// written (every slot up to `end`, and at least one).
    pub(crate) fn on_end(&mut self, end: Instant) -> u64 {
        if self.first.is_none() || self.full() {
            return 0;
        }
        let due = (self.slots_before(end) + 1)
            .max(self.written + 1)
            .min(self.max_slots);
        let n = due.saturating_sub(self.written);
        self.written += n;
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(t0: Instant, ms: u64) -> Instant {
        t0 + Duration::from_millis(ms)
    }

    #[test]
    fn a_still_page_keeps_its_duration() {
        let t0 = Instant::now();
        let mut s = Slots::new(10, 60_000);
        assert_eq!(s.on_frame(t0), 0);
        // Nothing new for two seconds: the one frame fills 20 slots.
        assert_eq!(s.on_end(ms(t0, 2_000)), 21);
        assert_eq!(s.written(), 21);
    }

    #[test]
    fn each_slot_shows_the_newest_frame_before_it_ended() {
        let t0 = Instant::now();
        let mut s = Slots::new(10, 60_000);
        s.on_frame(t0);
        // Three frames inside the first slot: the earlier ones are never written.
        assert_eq!(s.on_frame(ms(t0, 20)), 0);
        assert_eq!(s.on_frame(ms(t0, 50)), 0);
        // 250 ms: two slots ended; the frame of 50 ms fills them.
        assert_eq!(s.on_frame(ms(t0, 250)), 2);
        assert_eq!(s.on_end(ms(t0, 300)), 2);
    }

    #[test]
    fn the_longest_duration_is_a_hard_bound() {
        let t0 = Instant::now();
        let mut s = Slots::new(10, 1_000);
        s.on_frame(t0);
        assert_eq!(s.on_frame(ms(t0, 5_000)), 10);
        assert!(s.full());
        assert_eq!(s.on_frame(ms(t0, 6_000)), 0);
        assert_eq!(s.on_end(ms(t0, 9_000)), 0);
    }

    #[test]
    fn a_hold_keeps_the_current_frame_and_shows_the_rest_later() {
        let t0 = Instant::now();
        let mut s = Slots::new(10, 60_000);
        s.on_frame(t0);
        // A new frame at 100 ms (the first one filled slot 0).
        assert_eq!(s.on_frame(ms(t0, 100)), 1);
        // Held at 250 ms for 500 ms: slot 1 ends before it (the frame of
        // 100 ms is written once now)…
        assert_eq!(s.hold(ms(t0, 250), Duration::from_millis(500)), Some(1));
        // …and the next frame, taken at 300 ms, is shown at 800 ms: the
        // held frame fills slots 2 to 7 (the run's 50 ms and the hold's
        // 500 ms).
        assert_eq!(s.output_time(ms(t0, 300)), Duration::from_millis(800));
        assert_eq!(s.on_frame(ms(t0, 300)), 6);
        assert_eq!(s.written(), 8);
        // The end moves by the hold too: 1 s of run is 1.5 s of video.
        assert_eq!(s.on_end(ms(t0, 1_000)), 8);
    }

    #[test]
    fn a_hold_before_the_first_frame_or_past_the_bound_does_nothing() {
        let t0 = Instant::now();
        let mut s = Slots::new(10, 1_000);
        assert_eq!(s.hold(t0, Duration::from_millis(500)), None);
        s.on_frame(t0);
        assert_eq!(s.on_frame(ms(t0, 2_000)), 10);
        assert_eq!(s.hold(ms(t0, 2_000), Duration::from_millis(500)), None);
        assert_eq!(s.output_time(ms(t0, 2_000)), Duration::from_millis(2_000));
    }

    #[test]
    fn a_frame_from_the_past_writes_nothing() {
        let t0 = Instant::now();
        let mut s = Slots::new(10, 60_000);
        s.on_frame(ms(t0, 500));
        assert_eq!(s.on_frame(t0), 0);
        assert_eq!(s.on_end(ms(t0, 500)), 1);
    }
}
