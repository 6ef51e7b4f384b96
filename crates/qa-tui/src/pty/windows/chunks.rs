//! Output that a reader thread delivers in chunks, read like a stream.
//!
//! ConPTY's output pipe is read with blocking `ReadFile` calls on a thread
//! of its own; each read is one chunk on a bounded channel (so a program
//! that floods the terminal waits for the pump, as it does on a Unix PTY).
//! [`Chunks::read`] hands the chunks out in buffer-sized pieces, in order.

use tokio::sync::mpsc;

/// Chunks in flight between the reader thread and the pump.
pub(crate) const IN_FLIGHT: usize = 16;

/// The reading end of the chunk channel.
pub(crate) struct Chunks {
    rx: mpsc::Receiver<Vec<u8>>,
    pending: Vec<u8>,
    at: usize,
}

impl Chunks {
    /// A reader of what `rx` delivers; the output ends when every sender is gone.
    pub(crate) fn new(rx: mpsc::Receiver<Vec<u8>>) -> Chunks {
        Chunks {
            rx,
            pending: Vec::new(),
            at: 0,
        }
    }

    /// Copies the next bytes into `buf` (waiting for at least one);
    /// `Ok(0)` once the output ended and everything was read. Cancel-safe:
    /// a chunk is only taken off the channel when it is kept.
    pub(crate) async fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        while self.at >= self.pending.len() {
            match self.rx.recv().await {
                Some(chunk) => {
                    self.pending = chunk;
                    self.at = 0;
                }
                None => return Ok(0),
            }
        }
        let n = buf.len().min(self.pending.len() - self.at);
        buf[..n].copy_from_slice(&self.pending[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn chunks_come_out_whole_in_order_then_end() {
        let (tx, rx) = mpsc::channel(IN_FLIGHT);
        let mut chunks = Chunks::new(rx);
        let writer = std::thread::spawn(move || {
            for c in [&b"hello "[..], b"", b"wide world", b"!"] {
                tx.blocking_send(c.to_vec()).unwrap();
            }
        });
        let mut got = Vec::new();
        let mut buf = [0u8; 4];
        loop {
            let n = chunks.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            assert!(n <= buf.len());
            got.extend_from_slice(&buf[..n]);
        }
        writer.join().unwrap();
        assert_eq!(got, b"hello wide world!");
        // Ended stays ended.
        assert_eq!(chunks.read(&mut buf).await.unwrap(), 0);
    }

    #[tokio::test]
    async fn a_read_that_is_cancelled_loses_nothing() {
        let (tx, rx) = mpsc::channel(IN_FLIGHT);
        let mut chunks = Chunks::new(rx);
        let mut buf = [0u8; 64];
        // Nothing there yet: the read is abandoned, as the pump's zero
        // timeout abandons it.
        let idle = tokio::time::timeout(std::time::Duration::ZERO, chunks.read(&mut buf)).await;
        assert!(idle.is_err());
        tx.send(b"after".to_vec()).await.unwrap();
        drop(tx);
        assert_eq!(chunks.read(&mut buf).await.unwrap(), 5);
        assert_eq!(&buf[..5], b"after");
        assert_eq!(chunks.read(&mut buf).await.unwrap(), 0);
    }
}
