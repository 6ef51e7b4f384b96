//! What a run records besides its step evidence: video and the step trace.
//!
//! The flow's `evidence` section sets the modes and the video's bounds; the
//! command line (`--video`, `--trace`) overrides the modes. [`Recording`]
//! is the resolved answer drivers read from their session context.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// When a recording is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RecordMode {
    /// Recorded and kept.
    On,
    /// Not recorded.
    Off,
    /// Recorded, and kept only when the run does not pass.
    RetainOnFailure,
}

impl RecordMode {
    /// Every mode, in documentation order.
    pub const ALL: [RecordMode; 3] = [RecordMode::On, RecordMode::Off, RecordMode::RetainOnFailure];

    /// The name used in flows and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            RecordMode::On => "on",
            RecordMode::Off => "off",
            RecordMode::RetainOnFailure => "retain-on-failure",
        }
    }

    /// Parses a mode name.
    pub fn parse(s: &str) -> Option<RecordMode> {
        RecordMode::ALL.into_iter().find(|m| m.as_str() == s)
    }

    /// Whether anything is recorded.
    pub fn records(self) -> bool {
        self != RecordMode::Off
    }
}

impl fmt::Display for RecordMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The flow's `evidence` section.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EvidenceSettings {
    /// Video of the page or window: `on` (default), `off` or
    /// `retain-on-failure`. Terminal flows keep their asciicast replay
    /// whatever this says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub video: Option<RecordMode>,
    /// Step trace of a browser run: `on`, `off` (default) or
    /// `retain-on-failure`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<RecordMode>,
    /// Video frames per second (default 15).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 60))]
    pub video_fps: Option<u32>,
    /// Longest video in milliseconds (default 300000); the recording stops
    /// there and the result says so.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1000, max = 3600000))]
    pub video_max_ms: Option<u64>,
    /// Largest video file in bytes (default 50 MB); the recording stops
    /// there and the result says so.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 100000, max = 2000000000))]
    pub video_max_bytes: Option<u64>,
    /// Widest video frame in pixels (default 1280): larger frames are
    /// scaled down, keeping the aspect ratio.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 160, max = 7680))]
    pub video_max_width: Option<u32>,
}

/// Default video frame rate.
pub const DEFAULT_VIDEO_FPS: u32 = 15;
/// Default longest video (ms).
pub const DEFAULT_VIDEO_MAX_MS: u64 = 300_000;
/// Default largest video file (bytes).
pub const DEFAULT_VIDEO_MAX_BYTES: u64 = 50_000_000;
/// Default widest video frame (px).
pub const DEFAULT_VIDEO_MAX_WIDTH: u32 = 1280;
/// The marker a terminal replay (asciicast) gets when the steps have
/// ended and cleanup begins (the program is hung up next): a viewer shows
/// the screen as it was there, not the recording's very end.
pub const REPLAY_STEPS_ENDED: &str = "steps ended";

/// How long a window video (a desktop application's, a native terminal's)
/// holds each performed step's result on screen (ms). A browser flow sets
/// its own with `environment.videoSettleMs` (the same default).
pub const DEFAULT_VIDEO_HOLD_MS: u64 = 500;
/// Default video mode.
pub const DEFAULT_VIDEO: RecordMode = RecordMode::On;
/// Default trace mode.
pub const DEFAULT_TRACE: RecordMode = RecordMode::Off;

/// The bounds of one video.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VideoBounds {
    /// Frames per second of the written video.
    pub fps: u32,
    /// Longest video (ms).
    pub max_ms: u64,
    /// Largest file (bytes).
    pub max_bytes: u64,
    /// Widest frame (px).
    pub max_width: u32,
}

impl Default for VideoBounds {
    fn default() -> VideoBounds {
        VideoBounds {
            fps: DEFAULT_VIDEO_FPS,
            max_ms: DEFAULT_VIDEO_MAX_MS,
            max_bytes: DEFAULT_VIDEO_MAX_BYTES,
            max_width: DEFAULT_VIDEO_MAX_WIDTH,
        }
    }
}

/// What one run records, resolved from the flow and the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recording {
    /// Video mode.
    pub video: RecordMode,
    /// Step trace mode.
    pub trace: RecordMode,
    /// Video bounds.
    pub bounds: VideoBounds,
}

impl Default for Recording {
    fn default() -> Recording {
        Recording {
            video: DEFAULT_VIDEO,
            trace: DEFAULT_TRACE,
            bounds: VideoBounds::default(),
        }
    }
}

impl Recording {
    /// The flow's settings with the command line's modes over them.
    pub fn resolve(
        flow: Option<&EvidenceSettings>,
        video: Option<RecordMode>,
        trace: Option<RecordMode>,
    ) -> Recording {
        let f = flow.copied().unwrap_or_default();
        let d = VideoBounds::default();
        Recording {
            video: video.or(f.video).unwrap_or(DEFAULT_VIDEO),
            trace: trace.or(f.trace).unwrap_or(DEFAULT_TRACE),
            bounds: VideoBounds {
                fps: f.video_fps.unwrap_or(d.fps).clamp(1, 60),
                max_ms: f.video_max_ms.unwrap_or(d.max_ms),
                max_bytes: f.video_max_bytes.unwrap_or(d.max_bytes),
                max_width: f.video_max_width.unwrap_or(d.max_width),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_modes_win_over_the_flow() {
        let f = EvidenceSettings {
            video: Some(RecordMode::Off),
            trace: Some(RecordMode::On),
            video_fps: Some(99),
            ..Default::default()
        };
        let r = Recording::resolve(Some(&f), Some(RecordMode::RetainOnFailure), None);
        assert_eq!(r.video, RecordMode::RetainOnFailure);
        assert_eq!(r.trace, RecordMode::On);
        assert_eq!(r.bounds.fps, 60);
        let r = Recording::resolve(None, None, None);
        assert_eq!(r, Recording::default());
    }

    #[test]
    fn mode_names_round_trip() {
        for m in RecordMode::ALL {
            assert_eq!(RecordMode::parse(m.as_str()), Some(m));
        }
        assert_eq!(RecordMode::parse("always"), None);
    }
}
