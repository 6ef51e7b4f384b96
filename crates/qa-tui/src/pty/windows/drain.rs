//! When to close the pseudoconsole after the program exited, and when to
//! report the exit.
//!
//! ConPTY's console host renders the console on a thread of its own and
//! sends what changed to the output pipe. When the program exits, its last
//! write may not be rendered yet, and on older Windows (Server 2019, for
//! one) closing the pseudoconsole then tears the host down before that
//! frame is painted: a short-lived program's last output is lost. So after
//! the exit the output must have been quiet for [`QUIET`] before the
//! pseudoconsole is closed, and it is closed at the latest [`MAX_WAIT`]
//! after the exit (a descendant may keep writing). The output is read to
//! its end meanwhile and while closing (see `super::conpty`).
//!
//! The exit is reported once the output ended, or [`END_WAIT`] after the
//! close began: a verdict never decides "the program ended without
//! printing X" while its last frame is still on the way.

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// Output quiet time after the exit that lets the last frame through.
pub(crate) const QUIET: Duration = Duration::from_millis(150);
/// Longest wait after the exit before closing anyway.
pub(crate) const MAX_WAIT: Duration = Duration::from_secs(2);
/// Longest wait for the output to end once the close began.
pub(crate) const END_WAIT: Duration = Duration::from_secs(1);

/// How much longer to wait before closing; `None`: close now.
pub(crate) fn wait_before_close(
    exited: Instant,
    last_output: Option<Instant>,
    now: Instant,
) -> Option<Duration> {
    let latest = exited + MAX_WAIT;
    let quiet_from = last_output.map_or(exited, |t| t.max(exited));
    let close_at = (quiet_from + QUIET).min(latest);
    close_at
        .checked_duration_since(now)
        .filter(|d| !d.is_zero())
}

/// What the reader thread saw of the output: when it last arrived, and
/// whether it ended. Written by the reader, read by the exit watcher.
#[derive(Debug, Default)]
pub(crate) struct OutputWatch {
    state: Mutex<Seen>,
    ended: Condvar,
}

#[derive(Debug, Default)]
struct Seen {
    last: Option<Instant>,
    ended: bool,
}

impl OutputWatch {
    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Output arrived now.
    pub(crate) fn mark(&self) {
        self.seen().last = Some(Instant::now());
    }

    /// When output last arrived, if it ever did.
    pub(crate) fn last(&self) -> Option<Instant> {
        self.seen().last
    }

    /// The output ended (the pipe closed, or the reader stopped).
    pub(crate) fn end(&self) {
        self.seen().ended = true;
        self.ended.notify_all();
    }

    /// Waits up to `timeout` for the end of output; whether it ended.
    pub(crate) fn wait_for_end(&self, timeout: Duration) -> bool {
        let guard = self.seen();
        let (guard, _) = self
            .ended
            .wait_timeout_while(guard, timeout, |s| !s.ended)
            .unwrap_or_else(|e| e.into_inner());
        guard.ended
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn without_output_after_the_exit_it_waits_the_quiet_time() {
        let t0 = Instant::now();
        let exited = t0 + 1000 * MS;
        assert_eq!(wait_before_close(exited, None, exited), Some(QUIET));
        // Output long before the exit does not shorten the wait.
        assert_eq!(wait_before_close(exited, Some(t0), exited), Some(QUIET));
        assert_eq!(
            wait_before_close(exited, Some(t0), exited + 100 * MS),
            Some(QUIET - 100 * MS)
        );
        assert_eq!(wait_before_close(exited, Some(t0), exited + QUIET), None);
    }

    #[test]
    fn output_after_the_exit_extends_the_wait() {
        let exited = Instant::now();
        let late = exited + 120 * MS;
        assert_eq!(
            wait_before_close(exited, Some(late), exited + 130 * MS),
            Some(QUIET - 10 * MS)
        );
        assert_eq!(wait_before_close(exited, Some(late), late + QUIET), None);
    }

    #[test]
    fn endless_output_is_cut_off_after_the_longest_wait() {
        let exited = Instant::now();
        let now = exited + MAX_WAIT - 50 * MS;
        assert_eq!(wait_before_close(exited, Some(now), now), Some(50 * MS));
        let after = exited + MAX_WAIT + MS;
        assert_eq!(wait_before_close(exited, Some(after), after), None);
    }

    #[test]
    fn the_watch_remembers_the_last_output_and_the_end() {
        let watch = std::sync::Arc::new(OutputWatch::default());
        assert_eq!(watch.last(), None);
        let before = Instant::now();
        watch.mark();
        assert!(watch.last().is_some_and(|t| t >= before));
        assert!(!watch.wait_for_end(10 * MS));
        let reader = watch.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(20 * MS);
            reader.end();
        });
        assert!(watch.wait_for_end(Duration::from_secs(10)));
        t.join().unwrap();
        // Ended stays ended.
        assert!(watch.wait_for_end(Duration::ZERO));
    }
}
