//! Terminal replays: each asciicast v2 (`.cast`) of `artifacts.videos`
//! played by the vendored asciinema-player, which is inlined only into
//! reports that have one.
//!
//! The player is created with `AsciinemaPlayer.create({ data }, el, opts)`
//! (the recording is handed over as text, never fetched), preloaded, and
//! shows the screen when the steps ended as its poster (`poster:
//! "npt:<t>"`, see [`poster`]) so that screen is on the page as text before
//! anyone presses play.

use super::files;
use super::html::{escape, script_json};
use super::media::{marker_list, markers};
use super::MAX_EMBEDDED_CAST_BYTES;
use qa_core::recording::REPLAY_STEPS_ENDED;
use qa_core::result::RunResult;
use qa_core::Artifact;
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
/// `width`/`height`, the time of its last event, and where its steps
/// ended, in seconds.
#[derive(Debug, PartialEq)]
pub(crate) struct CastInfo {
    /// Columns.
    pub cols: u64,
    /// Rows.
    pub rows: u64,
    /// Time of the last event (seconds).
    pub end: f64,
    /// Time of the marker the driver writes when the steps have ended and
    /// cleanup begins ([`REPLAY_STEPS_ENDED`]), if there is one.
    pub steps_ended: Option<f64>,
    /// Time of the first event after that marker, if any.
    pub after_steps: Option<f64>,
}

/// Reads the header, the last event time and where the steps ended of an
/// asciicast v2 text; `None` when the first line is not a version 2
/// header.
pub(crate) fn cast_info(text: &str) -> Option<CastInfo> {
    let mut lines = text.lines();
    let header: Value = serde_json::from_str(lines.next()?).ok()?;
    if header["version"].as_u64() != Some(2) {
        return None;
    }
    let mut end = 0f64;
    let mut steps_ended = None;
    let mut after_steps = None;
    for l in lines {
        if let Ok(Value::Array(ev)) = serde_json::from_str::<Value>(l) {
            let Some(t) = ev.first().and_then(Value::as_f64).filter(|t| t.is_finite()) else {
                continue;
            };
            end = end.max(t);
            let marker = ev.get(1).and_then(Value::as_str) == Some("m")
                && ev.get(2).and_then(Value::as_str) == Some(REPLAY_STEPS_ENDED);
            if marker {
                steps_ended = Some(t);
                after_steps = None;
            } else if steps_ended.is_some_and(|c| t > c) && after_steps.is_none() {
                after_steps = Some(t);
            }
        }
    }
    Some(CastInfo {
        cols: header["width"].as_u64().unwrap_or(80),
        rows: header["height"].as_u64().unwrap_or(24),
        end,
        steps_ended,
        after_steps,
    })
}

/// The moment a replay's poster shows, in seconds of the recording, and
/// whether it is when the steps ended (`false`: the recording's end).
///
/// When the steps ended, not the recording's end: the recording goes on
/// through cleanup, when the program is hung up, and a full-screen program
/// (nano, vim, less) leaves its alternate screen then, so the end shows an
/// empty primary screen (or the program's goodbye), not what the steps
/// saw. The player applies the events strictly before the poster's time,
/// so the poster is halfway between the driver's marker
/// ([`REPLAY_STEPS_ENDED`]) and the next event: every event up to the
/// marker is applied, none after it. A recording without the marker is
/// cut where the result says the last step ended (whole milliseconds of
/// the run, so 2 ms later), and at its end when no step ran or the last
/// one ended after it; that time is rounded up to the millisecond and
/// 1 ms added, so no event at or before it is left out (a time rounded
/// down, `0.245` for a last event at `0.24509`, leaves that event out —
/// the whole screen when it is a full redraw).
pub(crate) fn poster(r: &RunResult, cast: &Artifact, info: &CastInfo) -> (f64, bool) {
    if let Some(c) = info.steps_ended {
        let next = info.after_steps.unwrap_or(c + 0.002);
        return ((c + next) / 2.0, true);
    }
    let last_step = r
        .steps
        .iter()
        .filter_map(|s| s.started_ms.map(|at| at.saturating_add(s.duration_ms)))
        .max()
        .and_then(|end| cast.recording_ms(end.saturating_add(2)));
    let (t, at_step) = match last_step {
        Some(ms) if (ms as f64) / 1000.0 < info.end => (ms as f64 / 1000.0, true),
        _ => (info.end, false),
    };
    ((t * 1000.0).ceil() / 1000.0 + 0.001, at_step)
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
                let (at, at_step) = poster(r, p.artifact, &info);
                let data = json!({
                    "cast": text,
                    "options": {
                        "cols": info.cols,
                        "rows": info.rows,
                        "preload": true,
                        "poster": format!("npt:{at:.9}"),
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
                let shown = if at_step {
                    "The screen when the steps ended"
                } else {
                    "The last screen"
                };
                let _ = writeln!(
                    out,
                    "<p class=\"hint\">{shown} ({at:.1} s of {:.1} s) is shown; press play to watch from the start.</p>",
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
                end: 2.25,
                steps_ended: None,
                after_steps: None,
            })
        );
        let cast = "{\"version\":2,\"width\":80,\"height\":24}\n[0.5,\"o\",\"a\"]\n[0.9,\"m\",\"steps ended\"]\n[0.9,\"o\",\"b\"]\n[0.95,\"o\",\"c\"]\n";
        let info = cast_info(cast).unwrap();
        assert_eq!(
            (info.steps_ended, info.after_steps),
            (Some(0.9), Some(0.95))
        );
        assert_eq!(cast_info("{\"version\":3}\n"), None);
        assert_eq!(cast_info("garbage"), None);
        assert_eq!(cast_info(""), None);
    }

    fn run(steps: serde_json::Value) -> RunResult {
        let mut v: Value = serde_json::from_str(crate::report::MINIMAL_RESULT).unwrap();
        v["steps"] = steps;
        serde_json::from_value(v).unwrap()
    }

    fn cast_at(started_ms: u64) -> Artifact {
        Artifact {
            group: None,
            path: "/run/artifacts/videos/terminal.cast".into(),
            uri: String::new(),
            bytes: 1,
            sha256: String::new(),
            step: None,
            started_ms: Some(started_ms),
            holds: Vec::new(),
        }
    }

    fn info(end: f64, steps_ended: Option<f64>, after_steps: Option<f64>) -> CastInfo {
        CastInfo {
            cols: 80,
            rows: 24,
            end,
            steps_ended,
            after_steps,
        }
    }

    #[test]
    fn the_poster_is_where_the_driver_marked_the_steps_ended() {
        // The program was hung up 0.3 ms after the marker: the poster is
        // between them, so the player applies everything up to the marker
        // and nothing of the cleanup.
        let r = run(json!([]));
        let (t, at_step) = poster(&r, &cast_at(1), &info(0.0103, Some(0.0091), Some(0.0094)));
        assert!(at_step);
        assert!(t > 0.0091 && t < 0.0094, "{t}");
        // Its text keeps that precision.
        let npt = format!("{t:.9}").parse::<f64>().unwrap();
        assert!(npt > 0.0091 && npt < 0.0094, "{npt}");
        // Nothing after the marker: just past it.
        let (t, _) = poster(&r, &cast_at(1), &info(0.5, Some(0.5), None));
        assert!(t > 0.5 && t < 0.502, "{t}");
    }

    #[test]
    fn without_the_marker_the_poster_is_when_the_last_step_ended() {
        // Steps ended 20 ms into the recording; the program was hung up
        // (and left its alternate screen) at 0.245 s.
        let r = run(json!([
            { "index": 1, "action": "waitForText", "status": "passed", "startedMs": 310, "durationMs": 9 },
            { "index": 2, "action": "sendText", "status": "passed", "startedMs": 330, "durationMs": 6 }
        ]));
        let (t, at_step) = poster(&r, &cast_at(316), &info(0.24509, None, None));
        assert!(at_step);
        // 336 ms + 2 ms is 22 ms into the recording, and 1 ms past it.
        assert!((t - 0.023).abs() < 1e-9, "{t}");
    }

    #[test]
    fn without_steps_the_poster_is_past_the_last_event() {
        let info = info(0.24509, None, None);
        let (t, at_step) = poster(&run(json!([])), &cast_at(316), &info);
        assert!(!at_step);
        // Rounded up, never down: 0.245 would leave the last event out.
        assert!(t > info.end && t <= 0.247, "{t}");
        // A last step that ended after the last event: the recording's end.
        let r = run(json!([
            { "index": 1, "action": "waitForText", "status": "passed", "startedMs": 316, "durationMs": 5000 }
        ]));
        let (t, at_step) = poster(&r, &cast_at(316), &info);
        assert!(!at_step);
        assert!((t - 0.247).abs() < 1e-9, "{t}");
    }
}
