//! Finding `ffmpeg` and the command line that turns a stream of images on
//! its standard input into a WebM (VP8) file.

use super::FrameFormat;
use crate::recording::VideoBounds;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The `ffmpeg` on `PATH`, if any.
pub fn find() -> Option<PathBuf> {
    crate::host::which("ffmpeg")
}

/// The size of the written video: the frame size scaled down to at most
/// `max_width` (keeping the aspect ratio) and rounded up to even numbers
/// (VP8 in yuv420p needs even sizes; the padding is added at the edge).
pub fn output_size(width: u32, height: u32, max_width: u32) -> (u32, u32) {
    let (w, h) = if width > max_width && width > 0 {
        let h = (height as u64 * max_width as u64 / width as u64) as u32;
        (max_width, h.max(1))
    } else {
        (width.max(1), height.max(1))
    };
    (w + w % 2, h + h % 2)
}

/// Arguments of one encoder process: images of `format` at `bounds.fps` on
/// standard input, scaled to fit and padded to `size`, VP8 in WebM written
/// to `out` (never overwriting it), stopping at `bounds.max_bytes`.
pub fn args(
    format: FrameFormat,
    size: (u32, u32),
    bounds: &VideoBounds,
    out: &Path,
) -> Vec<OsString> {
    let (w, h) = size;
    let codec = match format {
        FrameFormat::Jpeg => "mjpeg",
        FrameFormat::Png => "png",
    };
    let filter = format!(
        "scale=w={w}:h={h}:force_original_aspect_ratio=decrease,pad={w}:{h}:0:0:color=black,format=yuv420p"
    );
    let fps = bounds.fps.to_string();
    let gop = (bounds.fps * 2).to_string();
    let max = bounds.max_bytes.to_string();
    let mut a: Vec<OsString> = [
        "-hide_banner",
        "-loglevel",
        "error",
        "-n",
        "-f",
        "image2pipe",
        "-c:v",
        codec,
        "-framerate",
        &fps,
        "-i",
        "pipe:0",
        "-vf",
        &filter,
        "-c:v",
        "libvpx",
        "-deadline",
        "realtime",
        "-cpu-used",
        "8",
        "-b:v",
        "2M",
        "-crf",
        "10",
        "-g",
        &gop,
        "-an",
        "-fs",
        &max,
        "-f",
        "webm",
    ]
    .iter()
    .map(OsString::from)
    .collect();
    a.push(out.as_os_str().to_owned());
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_even_and_bounded() {
        assert_eq!(output_size(800, 600, 1280), (800, 600));
        assert_eq!(output_size(801, 599, 1280), (802, 600));
        assert_eq!(output_size(2560, 1440, 1280), (1280, 720));
        assert_eq!(output_size(0, 0, 1280), (2, 2));
    }

    #[test]
    fn the_encoder_never_overwrites_and_stops_at_the_size_cap() {
        let b = VideoBounds {
            max_bytes: 1234,
            ..Default::default()
        };
        let a = args(FrameFormat::Jpeg, (800, 600), &b, Path::new("/x/v.webm"));
        let s: Vec<String> = a.iter().map(|x| x.to_string_lossy().into_owned()).collect();
        assert!(s.contains(&"-n".to_string()));
        let fs = s.iter().position(|x| x == "-fs").unwrap();
        assert_eq!(s[fs + 1], "1234");
        assert_eq!(s.last().unwrap(), "/x/v.webm");
    }
}
