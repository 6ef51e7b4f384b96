//! Constant frame rate from timestamped frames.
//!
//! Frames arrive when the surface changes (a static page sends few). The
//! written video has one frame per slot of `1/fps` seconds; each slot shows
//! the newest frame taken before the slot ended, so a still page keeps its
//! real duration and nothing is shown before it happened.

use std::time::{Duration, Instant};

/// Decides how many times each frame is written.
#[derive(Debug)]
pub(crate) struct Slots {
    slot: Duration,
    max_slots: u64,
    first: Option<Instant>,
    written: u64,
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

    fn slots_before(&self, at: Instant) -> u64 {
        let Some(first) = self.first else { return 0 };
        let d = at.saturating_duration_since(first);
        (d.as_nanos() / self.slot.as_nanos().max(1)) as u64
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
    fn a_frame_from_the_past_writes_nothing() {
        let t0 = Instant::now();
        let mut s = Slots::new(10, 60_000);
        s.on_frame(ms(t0, 500));
        assert_eq!(s.on_frame(t0), 0);
        assert_eq!(s.on_end(ms(t0, 500)), 1);
    }
}
