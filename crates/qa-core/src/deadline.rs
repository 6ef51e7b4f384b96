//! Deadlines and the shared retry cadence.

use std::time::{Duration, Instant};

/// A point in time by which something must finish.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Deadline {
    at: Instant,
}

impl Deadline {
    /// A deadline `d` from now.
    pub fn after(d: Duration) -> Deadline {
        Deadline {
            at: Instant::now() + d,
        }
    }

    /// A deadline `ms` milliseconds from now.
    pub fn after_ms(ms: u64) -> Deadline {
        Deadline::after(Duration::from_millis(ms))
    }

    /// The instant of the deadline.
    pub fn instant(&self) -> Instant {
        self.at
    }

    /// Time left (zero once passed).
    pub fn remaining(&self) -> Duration {
        self.at.saturating_duration_since(Instant::now())
    }

    /// Whether the deadline has passed.
    pub fn expired(&self) -> bool {
        Instant::now() >= self.at
    }

    /// The same deadline moved `by` later.
    pub fn extended(self, by: Duration) -> Deadline {
        Deadline { at: self.at + by }
    }

    /// The earlier of two deadlines.
    pub fn min(self, other: Deadline) -> Deadline {
        if other.at < self.at {
            other
        } else {
            self
        }
    }

    /// Sleeps until the deadline (returns at once if passed).
    pub async fn sleep(&self) {
        tokio::time::sleep_until(tokio::time::Instant::from_std(self.at)).await
    }

    /// Runs `fut` until it completes or the deadline passes (`None`).
    pub async fn run<F: std::future::Future>(&self, fut: F) -> Option<F::Output> {
        tokio::time::timeout_at(tokio::time::Instant::from_std(self.at), fut)
            .await
            .ok()
    }
}

/// Waits between verdicts of a retried step, in milliseconds: 0, 20, 100,
/// 100, then 500 until the deadline. The same for every driver (and for
/// drivers' own actionability retries).
pub const RETRY_CADENCE_MS: [u64; 5] = [0, 20, 100, 100, 500];

/// The retry cadence as an endless iterator of waits.
#[derive(Debug, Clone, Default)]
pub struct Cadence {
    attempt: usize,
}

impl Cadence {
    /// A fresh cadence.
    pub fn new() -> Cadence {
        Cadence { attempt: 0 }
    }

    /// The wait before the next attempt.
    pub fn next_wait(&mut self) -> Duration {
        let i = self.attempt.min(RETRY_CADENCE_MS.len() - 1);
        self.attempt += 1;
        Duration::from_millis(RETRY_CADENCE_MS[i])
    }

    /// Sleeps the next wait, cut short by `deadline`. Returns false when the
    /// deadline has passed (no further attempt should start).
    pub async fn wait(&mut self, deadline: Deadline) -> bool {
        let w = self.next_wait();
        if deadline.expired() {
            return false;
        }
        let until = (Instant::now() + w).min(deadline.instant());
        tokio::time::sleep_until(tokio::time::Instant::from_std(until)).await;
        !deadline.expired() || w.is_zero()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cadence_sequence() {
        let mut c = Cadence::new();
        let waits: Vec<u64> = (0..7).map(|_| c.next_wait().as_millis() as u64).collect();
        assert_eq!(waits, vec![0, 20, 100, 100, 500, 500, 500]);
    }

    #[test]
    fn min_picks_earlier() {
        let a = Deadline::after_ms(10);
        let b = Deadline::after_ms(10_000);
        assert_eq!(a.min(b), a);
        assert_eq!(b.min(a), a);
    }
}
