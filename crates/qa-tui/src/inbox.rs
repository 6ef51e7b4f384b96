//! The hand-off between the PTY reader and the model's parser: bytes read
//! but not yet parsed, bounded.
//!
//! The reader (an async task) only reads and appends, so the program's
//! writes are drained at the PTY's own pace while the parser (a thread of
//! its own) models what came before. When the parser falls behind, the
//! bytes gather here and it takes them in one batch, which is what lets a
//! flood skip the lines it scrolls out again (see [`crate::skip`]). Past
//! [`INBOX_CAP`] bytes the reader waits for the parser, so memory stays
//! bounded and the program is held by the PTY as it would be by a slow
//! terminal.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Instant;
use tokio::sync::Notify;

/// Bytes the reader may gather ahead of the parser before it waits.
pub const INBOX_CAP: usize = 4 * 1024 * 1024;

/// How the reader's side ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Still reading.
    Open,
    /// The PTY reached end of output: parse what is left, then stop.
    Eof,
    /// The reader was stopped (its task aborted): stop without parsing more.
    Stopped,
}

#[derive(Debug)]
struct State {
    bytes: Vec<u8>,
    end: End,
}

/// What the parser gets from one wait.
#[derive(Debug, PartialEq, Eq)]
pub enum Taken {
    /// Bytes to parse (the batch gathered since the last take).
    Bytes,
    /// Nothing came before the deadline.
    TimedOut,
    /// Nothing more will come; [`End::Eof`] or [`End::Stopped`].
    Ended(End),
}

/// The bounded hand-off (shared by the reader task and the parser thread).
#[derive(Debug)]
pub struct Inbox {
    state: Mutex<State>,
    /// The parser waits here for bytes.
    filled: Condvar,
    /// The reader waits here for room.
    room: Notify,
}

impl Default for Inbox {
    fn default() -> Self {
        Inbox {
            state: Mutex::new(State {
                bytes: Vec::new(),
                end: End::Open,
            }),
            filled: Condvar::new(),
            room: Notify::new(),
        }
    }
}

impl Inbox {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().expect("inbox lock")
    }

    /// Reader: waits until fewer than [`INBOX_CAP`] bytes are pending.
    pub async fn room(&self) {
        loop {
            let notified = self.room.notified();
            if self.lock().bytes.len() < INBOX_CAP {
                return;
            }
            notified.await;
        }
    }

    /// Reader: appends bytes read from the PTY.
    pub fn push(&self, bytes: &[u8]) {
        let mut s = self.lock();
        let was_empty = s.bytes.is_empty();
        s.bytes.extend_from_slice(bytes);
        drop(s);
        if was_empty {
            self.filled.notify_one();
        }
    }

    /// Reader: no more bytes will come ([`End::Eof`] or [`End::Stopped`]).
    pub fn end(&self, end: End) {
        let mut s = self.lock();
        if s.end == End::Open {
            s.end = end;
        }
        drop(s);
        self.filled.notify_one();
    }

    /// Parser: waits for bytes until `deadline` (forever when `None`), then
    /// swaps everything pending into `into` (which must be empty; its
    /// allocation goes to the reader, so two buffers are reused).
    pub fn take(&self, into: &mut Vec<u8>, deadline: Option<Instant>) -> Taken {
        debug_assert!(into.is_empty());
        let mut s = self.lock();
        loop {
            if s.end == End::Stopped {
                return Taken::Ended(End::Stopped);
            }
            if !s.bytes.is_empty() {
                std::mem::swap(&mut s.bytes, into);
                drop(s);
                self.room.notify_one();
                return Taken::Bytes;
            }
            if s.end == End::Eof {
                return Taken::Ended(End::Eof);
            }
            s = match deadline {
                None => self.filled.wait(s).expect("inbox lock"),
                Some(at) => {
                    let Some(left) = at.checked_duration_since(Instant::now()) else {
                        return Taken::TimedOut;
                    };
                    self.filled.wait_timeout(s, left).expect("inbox lock").0
                }
            };
        }
    }
}

/// Ends the inbox as [`End::Stopped`] when dropped before the reader ended
/// it (the reader task was aborted), so the parser thread ends too.
pub struct StopOnDrop<'a>(pub &'a Inbox);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.end(End::Stopped);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn bytes_come_out_in_order_in_one_batch() {
        let inbox = Inbox::default();
        inbox.push(b"ab");
        inbox.push(b"cd");
        let mut got = Vec::new();
        assert_eq!(inbox.take(&mut got, None), Taken::Bytes);
        assert_eq!(got, b"abcd");
    }

    #[test]
    fn eof_comes_after_the_last_bytes_and_stop_drops_them() {
        let inbox = Inbox::default();
        inbox.push(b"x");
        inbox.end(End::Eof);
        let mut got = Vec::new();
        assert_eq!(inbox.take(&mut got, None), Taken::Bytes);
        got.clear();
        assert_eq!(inbox.take(&mut got, None), Taken::Ended(End::Eof));

        let inbox = Inbox::default();
        inbox.push(b"x");
        drop(StopOnDrop(&inbox));
        assert_eq!(inbox.take(&mut got, None), Taken::Ended(End::Stopped));
    }

    #[test]
    fn a_deadline_that_passed_times_out() {
        let inbox = Inbox::default();
        let mut got = Vec::new();
        let past = Instant::now() - Duration::from_millis(1);
        assert_eq!(inbox.take(&mut got, Some(past)), Taken::TimedOut);
    }

    #[tokio::test]
    async fn a_full_inbox_holds_the_reader_until_the_parser_takes() {
        let inbox = Arc::new(Inbox::default());
        inbox.push(&vec![b'y'; INBOX_CAP]);
        let waiting = tokio::spawn({
            let inbox = inbox.clone();
            async move { inbox.room().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        let mut got = Vec::new();
        assert_eq!(inbox.take(&mut got, None), Taken::Bytes);
        tokio::time::timeout(Duration::from_secs(60), waiting)
            .await
            .expect("the reader gets room once the parser took the bytes")
            .expect("room task");
    }

    #[test]
    fn the_parser_wakes_for_bytes_pushed_from_another_thread() {
        let inbox = Arc::new(Inbox::default());
        let pusher = std::thread::spawn({
            let inbox = inbox.clone();
            move || inbox.push(b"late")
        });
        let mut got = Vec::new();
        assert_eq!(inbox.take(&mut got, None), Taken::Bytes);
        assert_eq!(got, b"late");
        pusher.join().expect("pusher");
    }
}
