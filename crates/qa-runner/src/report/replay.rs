//! Terminal replays: each asciicast v2 (`.cast`) of `artifacts.videos`
//! played by the vendored asciinema-player, which is inlined only into
//! reports that have one.
//!
//! The player is created with `AsciinemaPlayer.create({ data }, el, opts)`
//! (the recording is handed over as text, never fetched), preloaded, and
//! shows the end of the recording as its poster (`poster: "npt:<end>"`) so
//! the final screen is on the page as text before anyone presses play.

use super::files;
use super::html::{escape, script_json};
use super::media::{marker_list, markers};
use super::MAX_EMBEDDED_CAST_BYTES;
use qa_core::result::RunResult;
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::path::Path;

/// The player's script (asciinema-player 3.18.0, Apache-2.0; see
/// `assets/asciinema-player/README.md`).
pub(crate) const PLAYER_JS: &str =
    include_str!("../../assets/asciinema-player/asciinema-player.min.js");

/// The player's stylesheet.
pub(crate) const PLAYER_CSS: &str =
    include_str!("../../assets/asciinema-player/asciinema-player.css");

/// What the replay section needs in the page besides its markup.
#[derive(Default)]
pub(crate) struct Replays {
    /// Whether any replay was embedded (the player must be inlined).
    pub embedded: bool,
}

/// The size and length of an asciicast v2 recording: the header's
/// `width`/`height` and the time of its last event, in seconds.
#[derive(Debug, PartialEq)]
pub(crate) struct CastInfo {
    /// Columns.
    pub cols: u64,
    /// Rows.
    pub rows: u64,
    /// Time of the last event (seconds).
    pub end: f64,
}

/// Reads the header and the last event time of an asciicast v2 text;
/// `None` when the first line is not a version 2 header.
pub(crate) fn cast_info(text: &str) -> Option<CastInfo> {
    let mut lines = text.lines();
    let header: Value = serde_json::from_str(lines.next()?).ok()?;
    if header["version"].as_u64() != Some(2) {
        return None;
    }
    let mut end = 0f64;
    for l in lines {
        if let Ok(Value::Array(ev)) = serde_json::from_str::<Value>(l) {
            if let Some(t) = ev.first().and_then(Value::as_f64) {
                if t.is_finite() && t > end {
                    end = t;
                }
            }
        }
    }
    Some(CastInfo {
        cols: header["width"].as_u64().unwrap_or(80),
        rows: header["height"].as_u64().unwrap_or(24),
        end,
    })
}

/// The terminal replay section. The first replay's container has the id
/// `replay` (and `data-testid="replay"`).
pub(crate) fn replays(out: &mut String, r: &RunResult, run_dir: &Path) -> Replays {
    let mut done = Replays::default();
    let casts: Vec<_> = r
        .artifacts
        .videos
        .iter()
        .filter_map(|a| files::place(r, a))
        .filter(|p| p.has_ext("cast"))
        .collect();
    if casts.is_empty() {
        return done;
    }
    out.push_str("<section id=\"terminal-replay\">\n<h2>Terminal replay</h2>\n");
    for (i, p) in casts.iter().enumerate() {
        let n = i + 1;
        let id = if n == 1 {
            "replay".to_string()
        } else {
            format!("replay-{n}")
        };
        out.push_str("<figure class=\"replay\">\n");
        let text = files::read(run_dir, p, MAX_EMBEDDED_CAST_BYTES)
            .map(|b| String::from_utf8_lossy(&b).into_owned());
        match text.as_ref().map(|t| (t, cast_info(t))) {
            Ok((text, Some(info))) => {
                done.embedded = true;
                let cast_markers = markers(r, p.artifact);
                let player_markers: Vec<Value> = cast_markers
                    .iter()
                    .map(|m| json!([m.ms as f64 / 1000.0, m.label]))
                    .collect();
                let data = json!({
                    "cast": text,
                    "options": {
                        "cols": info.cols,
                        "rows": info.rows,
                        "preload": true,
                        "poster": format!("npt:{:.3}", info.end),
                        "fit": "width",
                        "markers": player_markers,
                        "terminalFontSize": "small",
                    },
                });
                let _ = writeln!(
                    out,
                    "<div class=\"replay-player\" id=\"{id}\" data-testid=\"{id}\" data-replay=\"{id}-data\" aria-label=\"terminal replay {}\"></div>",
                    escape(&p.name)
                );
                let _ = writeln!(
                    out,
                    "<script type=\"application/json\" id=\"{id}-data\">{}</script>",
                    script_json(&data)
                );
                let _ = writeln!(
                    out,
                    "<p class=\"hint\">The last screen ({:.1} s) is shown; press play to watch from the start.</p>",
                    info.end
                );
                marker_list(out, &cast_markers, &id, "replay");
            }
            Ok((_, None)) => {
                out.push_str(
                    "<p class=\"unshown\">not an asciicast v2 recording; open the file</p>\n",
                );
            }
            Err(why) => {
                let _ = writeln!(out, "<p class=\"unshown\">{}</p>", why.says());
            }
        }
        let _ = writeln!(
            out,
            "<figcaption><a href=\"{}\">{}</a> · {} bytes</figcaption>\n</figure>",
            p.href,
            escape(&p.name),
            p.artifact.bytes
        );
    }
    out.push_str("</section>\n");
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vendored_player_cannot_close_its_element() {
        let js = PLAYER_JS.to_ascii_lowercase();
        assert!(!js.contains("</script") && !js.contains("<script") && !js.contains("<!--"));
        assert!(!PLAYER_CSS.to_ascii_lowercase().contains("</style"));
        // Nothing is fetched: no fonts or images in the stylesheet.
        assert!(!PLAYER_CSS.contains("url("));
        assert!(!PLAYER_CSS.contains("@import"));
        // The terminal emulator is inline WebAssembly (`\0asm` in base64).
        assert!(PLAYER_JS.contains("\"AGFzbQ"));
    }

    #[test]
    fn cast_info_reads_the_size_and_the_end() {
        let cast = "{\"version\":2,\"width\":100,\"height\":30}\n[0.5,\"o\",\"a\"]\n[2.25,\"o\",\"b\"]\nnot json\n[1.0,\"o\",\"c\"]\n";
        assert_eq!(
            cast_info(cast),
            Some(CastInfo {
                cols: 100,
                rows: 30,
                end: 2.25
            })
        );
        assert_eq!(cast_info("{\"version\":3}\n"), None);
        assert_eq!(cast_info("garbage"), None);
        assert_eq!(cast_info(""), None);
    }
}
