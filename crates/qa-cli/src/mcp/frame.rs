//! The server's stdio framing: one JSON-RPC message per line, every line
//! answered. The MCP SDK drops input it cannot parse without a word (an
//! over-long line, invalid UTF-8, JSON nested past its depth), so a client
//! that sent one waits for its own timeout. Lines pass through here first:
//! one that is not a JSON value within the limits is answered with a
//! JSON-RPC parse error (`-32700`, `"id": null`) and never reaches the SDK;
//! the others are handed on unchanged. The SDK's own answers and these
//! errors reach stdout as whole lines, one at a time.

use std::sync::Arc;
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream,
};
use tokio::sync::Mutex;

/// The longest line (request) read, in bytes, its newline included: the
/// SDK's own limit, so no line this framing hands on is one the SDK would
/// drop without a word (tool arguments name flow files; none is large).
pub const MAX_LINE: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// Buffer between this framing and the SDK, each way.
const PIPE: usize = 1 << 20;

/// A line that is not handed on, and why.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// Longer than [`MAX_LINE`].
    TooLong,
    /// Not UTF-8.
    NotUtf8,
    /// Not one JSON value, or nested deeper than the parser allows.
    NotJson(String),
}

impl Refused {
    /// The JSON-RPC error answer for this line.
    pub fn answer(&self) -> String {
        let message = match self {
            Refused::TooLong => {
                format!("Parse error: the request is longer than {MAX_LINE} bytes; it was not read")
            }
            Refused::NotUtf8 => "Parse error: the request is not UTF-8".to_string(),
            Refused::NotJson(why) => format!("Parse error: {why}"),
        };
        serde_json::json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": { "code": -32700, "message": message },
        })
        .to_string()
    }
}

/// Checks one line (without its newline): `Ok(None)` for a blank line,
/// `Ok(Some(line))` for a JSON value to hand on.
pub fn check(line: &[u8]) -> Result<Option<&[u8]>, Refused> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let text = std::str::from_utf8(line).map_err(|_| Refused::NotUtf8)?;
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    if body.trim().is_empty() {
        return Ok(None);
    }
    // Read as a value (not skipped: skipping has no depth limit), so a
    // depth past serde_json's recursion limit is refused here and nothing
    // deeper reaches the SDK, which would drop it without a word.
    serde_json::from_str::<serde_json::Value>(body).map_err(|e| Refused::NotJson(e.to_string()))?;
    Ok(Some(line))
}

/// One line read with the bound: `Some(Ok(line))` (newline dropped),
/// `Some(Err(TooLong))` once an over-long line ended (its bytes were
/// dropped as they came), `None` at the end of input.
async fn next_line(
    from: &mut (impl AsyncBufRead + Unpin),
    buf: &mut Vec<u8>,
) -> Option<Result<(), Refused>> {
    buf.clear();
    let mut too_long = false;
    loop {
        let (take, ended) = {
            let available = match from.fill_buf().await {
                Ok(a) => a,
                Err(_) => return None,
            };
            if available.is_empty() {
                // A last line without a newline still counts.
                return match (too_long, buf.is_empty()) {
                    (true, _) => Some(Err(Refused::TooLong)),
                    (false, true) => None,
                    (false, false) => Some(Ok(())),
                };
            }
            let nl = available.iter().position(|&b| b == b'\n');
            let take = nl.map_or(available.len(), |i| i + 1);
            let content = nl.map_or(available, |i| &available[..i]);
            if !too_long {
                if buf.len() + content.len() >= MAX_LINE {
                    too_long = true;
                    buf.clear();
                } else {
                    buf.extend_from_slice(content);
                }
            }
            (take, nl.is_some())
        };
        from.consume(take);
        if ended {
            return Some(if too_long {
                Err(Refused::TooLong)
            } else {
                Ok(())
            });
        }
    }
}

/// Writes one whole line to `out`.
async fn write_line(out: &Mutex<impl AsyncWrite + Unpin>, line: &[u8]) -> std::io::Result<()> {
    let mut out = out.lock().await;
    out.write_all(line).await?;
    if !line.ends_with(b"\n") {
        out.write_all(b"\n").await?;
    }
    out.flush().await
}

/// Sits between `input`/`output` (the process's stdin and stdout) and the
/// SDK: returns the SDK's reader and writer. Ends when input ends (the SDK
/// then sees the end of its input) and when the SDK closes its writer.
pub fn filtered<R, W>(input: R, output: W) -> (DuplexStream, DuplexStream)
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (mut to_sdk, sdk_reader) = tokio::io::duplex(PIPE);
    let (sdk_writer, from_sdk) = tokio::io::duplex(PIPE);
    let out = Arc::new(Mutex::new(output));
    let errors_out = out.clone();
    tokio::spawn(async move {
        let mut input = BufReader::new(input);
        let mut buf = Vec::new();
        while let Some(read) = next_line(&mut input, &mut buf).await {
            let checked = read.and_then(|()| check(&buf));
            match checked {
                Ok(None) => {}
                Ok(Some(line)) => {
                    if to_sdk.write_all(line).await.is_err()
                        || to_sdk.write_all(b"\n").await.is_err()
                    {
                        break;
                    }
                }
                Err(refused) => {
                    if write_line(&errors_out, refused.answer().as_bytes())
                        .await
                        .is_err()
                    {
                        break;
                    }
                }
            }
        }
        let _ = to_sdk.shutdown().await;
    });
    tokio::spawn(async move {
        // The SDK's own output: trusted, written whole lines at a time.
        let mut from_sdk = BufReader::new(from_sdk);
        let mut line = Vec::new();
        loop {
            line.clear();
            match from_sdk.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if write_line(&out, &line).await.is_err() {
                        break;
                    }
                }
            }
        }
    });
    (sdk_reader, sdk_writer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_that_are_not_json_values_are_refused_with_the_reason() {
        assert_eq!(check(b"").unwrap(), None);
        assert_eq!(check(b"  \r").unwrap(), None);
        assert_eq!(check(b"{\"a\":1}\r").unwrap(), Some(&b"{\"a\":1}"[..]));
        assert_eq!(
            check(b"\xef\xbb\xbf[1]").unwrap(),
            Some(&b"\xef\xbb\xbf[1]"[..])
        );
        assert_eq!(check(b"{\"a\":\"\xff\"}"), Err(Refused::NotUtf8));
        assert!(matches!(check(b"{\"a\""), Err(Refused::NotJson(_))));
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        assert!(matches!(check(deep.as_bytes()), Err(Refused::NotJson(_))));
        let answer: serde_json::Value = serde_json::from_str(&Refused::NotUtf8.answer()).unwrap();
        assert_eq!(answer["error"]["code"], -32700);
        assert!(answer["id"].is_null());
    }

    #[tokio::test]
    async fn an_over_long_line_is_dropped_as_it_comes_and_the_next_is_read() {
        let mut input = Vec::with_capacity(MAX_LINE + 64);
        input.resize(MAX_LINE + 10, b'x');
        input.extend_from_slice(b"\n[2]\n{\"tail\":3}");
        let mut r = BufReader::with_capacity(4096, &input[..]);
        let mut buf = Vec::new();
        assert_eq!(
            next_line(&mut r, &mut buf).await,
            Some(Err(Refused::TooLong))
        );
        assert!(buf.capacity() < 2 * MAX_LINE);
        assert_eq!(next_line(&mut r, &mut buf).await, Some(Ok(())));
        assert_eq!(buf, b"[2]");
        assert_eq!(next_line(&mut r, &mut buf).await, Some(Ok(())));
        assert_eq!(buf, b"{\"tail\":3}");
        assert_eq!(next_line(&mut r, &mut buf).await, None);
    }
}
