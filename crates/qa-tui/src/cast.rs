//! A bounded asciicast v2 recorder.
//!
//! The header is `{"version":2,"width":W,"height":H,...}`, then one JSON
//! array per line: `[seconds, "o", text]` for output, `"r"` for a resize
//! (`"COLSxROWS"`) and `"m"` for a marker. Times come from a monotonic
//! clock. Output is decoded as UTF-8 across reads: an incomplete character
//! at the end of a read waits for the next one, so no event ever splits a
//! character; invalid bytes become U+FFFD. The whole file is capped; when the
//! cap is reached one final marker says so and later events are dropped.

use std::time::{Duration, Instant};

/// Default cap on the whole replay file.
pub const DEFAULT_CAP_BYTES: usize = 1024 * 1024;

/// Room kept for the final "cut" marker.
const MARKER_RESERVE: usize = 256;

/// An in-memory asciicast v2 recording with a size cap.
#[derive(Debug)]
pub struct CastRecorder {
    start: Instant,
    buf: Vec<u8>,
    cap: usize,
    pending: Vec<u8>,
    cut: bool,
    dropped_bytes: u64,
}

impl CastRecorder {
    /// When the recording started (its time 0).
    pub fn started(&self) -> Instant {
        self.start
    }

    /// Starts a recording of a `cols`×`rows` terminal at `start`.
    pub fn new(cols: u16, rows: u16, start: Instant, cap: usize, title: Option<&str>) -> Self {
        let mut header = serde_json::json!({
            "version": 2,
            "width": cols,
            "height": rows,
            "env": { "TERM": "xterm-256color" },
        });
        if let Some(t) = title {
            header["title"] = serde_json::Value::String(t.to_string());
        }
        let mut buf = serde_json::to_vec(&header).expect("header serializes");
        buf.push(b'\n');
        CastRecorder {
            start,
            buf,
            cap: cap.max(1024),
            pending: Vec::new(),
            cut: false,
            dropped_bytes: 0,
        }
    }

    fn seconds(&self, at: Instant) -> f64 {
        let d = at.saturating_duration_since(self.start);
        // Microsecond resolution keeps lines short and times monotonic.
        (d.as_micros() as f64) / 1_000_000.0
    }

    fn push_event(&mut self, at: Instant, kind: &str, data: &str) {
        if self.cut {
            return;
        }
        let mut line =
            serde_json::to_vec(&(self.seconds(at), kind, data)).expect("event serializes");
        line.push(b'\n');
        if self.buf.len() + line.len() + MARKER_RESERVE > self.cap {
            self.cut = true;
            self.dropped_bytes += data.len() as u64;
            let note = format!(
                "replay cut at the {} KiB cap; later output was not recorded",
                self.cap / 1024
            );
            let mut m = serde_json::to_vec(&(self.seconds(at), "m", note)).expect("marker");
            m.push(b'\n');
            self.buf.extend_from_slice(&m);
            return;
        }
        self.buf.extend_from_slice(&line);
    }

    /// Records program output read at `at`.
    pub fn output(&mut self, at: Instant, bytes: &[u8]) {
        if self.cut {
            self.dropped_bytes += bytes.len() as u64;
            return;
        }
        let text = decode_utf8_stream(&mut self.pending, bytes);
        if !text.is_empty() {
            self.push_event(at, "o", &text);
        }
    }

    /// Records output that is already text (a screen update the masked
    /// replay re-encoded from the model).
    pub fn output_text(&mut self, at: Instant, text: &str) {
        if self.cut {
            self.dropped_bytes += text.len() as u64;
            return;
        }
        if !text.is_empty() {
            self.push_event(at, "o", text);
        }
    }

    /// Records a resize.
    pub fn resize(&mut self, at: Instant, cols: u16, rows: u16) {
        self.push_event(at, "r", &format!("{cols}x{rows}"));
    }

    /// Records a marker (e.g. the start of a step).
    pub fn marker(&mut self, at: Instant, label: &str) {
        self.push_event(at, "m", label);
    }

    /// Whether the cap was reached.
    pub fn is_cut(&self) -> bool {
        self.cut
    }

    /// Bytes of output not recorded because of the cap.
    pub fn dropped_bytes(&self) -> u64 {
        self.dropped_bytes
    }

    /// Time since the recording started.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Flushes an incomplete trailing character (as U+FFFD) and returns the file.
    pub fn finish(mut self, at: Instant) -> Vec<u8> {
        if !self.pending.is_empty() && !self.cut {
            let text = String::from_utf8_lossy(&std::mem::take(&mut self.pending)).into_owned();
            self.push_event(at, "o", &text);
        }
        self.buf
    }
}

/// Decodes `input` appended to `pending` as UTF-8, returning every complete
/// character and keeping an incomplete trailing sequence in `pending`.
/// Invalid sequences become U+FFFD.
pub fn decode_utf8_stream(pending: &mut Vec<u8>, input: &[u8]) -> String {
    let owned;
    let bytes: &[u8] = if pending.is_empty() {
        input
    } else {
        pending.extend_from_slice(input);
        owned = std::mem::take(pending);
        &owned
    };
    let mut out = String::with_capacity(bytes.len());
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.push_str(s);
                break;
            }
            Err(e) => {
                let valid = e.valid_up_to();
                out.push_str(std::str::from_utf8(&rest[..valid]).expect("valid prefix"));
                match e.error_len() {
                    Some(n) => {
                        out.push('\u{FFFD}');
                        rest = &rest[valid + n..];
                    }
                    None => {
                        pending.extend_from_slice(&rest[valid..]);
                        break;
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(buf: &[u8]) -> Vec<serde_json::Value> {
        std::str::from_utf8(buf)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn never_splits_a_character() {
        let t0 = Instant::now();
        let mut r = CastRecorder::new(80, 24, t0, DEFAULT_CAP_BYTES, None);
        let s = "é漢".as_bytes();
        r.output(t0, &s[..1]);
        r.output(t0, &s[1..3]);
        r.output(t0, &s[3..]);
        let v = lines(&r.finish(t0));
        assert_eq!(v[0]["version"], 2);
        assert_eq!(v[0]["width"], 80);
        let texts: Vec<&str> = v[1..].iter().map(|e| e[2].as_str().unwrap()).collect();
        assert_eq!(texts, vec!["é", "漢"]);
    }

    #[test]
    fn invalid_bytes_become_replacement() {
        let mut p = Vec::new();
        assert_eq!(decode_utf8_stream(&mut p, b"a\xffb"), "a\u{FFFD}b");
        assert_eq!(decode_utf8_stream(&mut p, b"\xe6\xbc"), "");
        assert_eq!(p.len(), 2);
        assert_eq!(decode_utf8_stream(&mut p, b"\xa2!"), "漢!");
        assert!(p.is_empty());
    }

    #[test]
    fn escapes_and_resizes_are_json() {
        let t0 = Instant::now();
        let mut r = CastRecorder::new(80, 24, t0, DEFAULT_CAP_BYTES, Some("t"));
        r.output(t0 + Duration::from_millis(1500), b"\x1b[1m\"q\"\r\n");
        r.resize(t0 + Duration::from_secs(2), 100, 30);
        r.marker(t0 + Duration::from_secs(3), "step 2: sendKeys");
        let v = lines(&r.finish(t0));
        assert_eq!(v[1][0], 1.5);
        assert_eq!(v[1][1], "o");
        assert_eq!(v[1][2], "\u{1b}[1m\"q\"\r\n");
        assert_eq!(v[2][1], "r");
        assert_eq!(v[2][2], "100x30");
        assert_eq!(v[3][1], "m");
    }

    #[test]
    fn cap_is_respected_with_a_marker() {
        let t0 = Instant::now();
        let cap = 64 * 1024;
        let mut r = CastRecorder::new(80, 24, t0, cap, None);
        let chunk = vec![b'x'; 4096];
        for _ in 0..100 {
            r.output(t0, &chunk);
        }
        assert!(r.is_cut());
        assert!(r.dropped_bytes() > 0);
        let buf = r.finish(t0);
        assert!(buf.len() <= cap, "{}", buf.len());
        let v = lines(&buf);
        let last = v.last().unwrap();
        assert_eq!(last[1], "m");
        assert!(last[2].as_str().unwrap().contains("cut"));
    }
}
