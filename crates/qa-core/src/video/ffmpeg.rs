//! Finding `ffmpeg`, the command line that turns a stream of timestamped
//! images on its standard input into a WebM (VP8) file, and that stream's
//! framing.
//!
//! The images travel in IVF framing (a 32-byte header, then a 12-byte
//! header of size and timestamp before each image), the simplest container
//! ffmpeg reads from a pipe that carries each frame's time: the frame's
//! FourCC (`MJPG`, `MPNG`) names the codec, timestamps are milliseconds,
//! and the video is written with those times (variable frame rate). A
//! picture that stays on screen is therefore encoded once, however long it
//! stays, instead of once per frame interval.

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

/// Arguments of one encoder process: IVF-framed images (see the module
/// docs) on standard input, scaled to fit and padded to `size`, VP8 in
/// WebM written to `out` with the frames' own times (never overwriting
/// it), stopping at `bounds.max_bytes`.
///
/// The input is not probed (`-probesize 32 -analyzeduration 0`: its codec
/// is given): by default ffmpeg reads up to 5 MB of input before it
/// encodes anything, which for a short run is every frame, so all the
/// encoding happened after the run's last step (measured: 150–250 ms at
/// close for a one-click flow, 25–40 ms without the probe).
///
/// Without a `size` (see [`super::FrameSize::First`]) every frame is
/// taken at the first frame's size, padded to even numbers: the command
/// line then depends on nothing the frames tell, so the encoder can start
/// (and load, about 70 ms of CPU for ffmpeg's libraries) before the first
/// frame exists.
pub fn args(
    format: FrameFormat,
    size: Option<(u32, u32)>,
    bounds: &VideoBounds,
    out: &Path,
) -> Vec<OsString> {
    let _ = format; // named by each stream's FourCC
    let filter = match size {
        Some((w, h)) => format!(
            "scale=w={w}:h={h}:force_original_aspect_ratio=decrease,pad={w}:{h}:0:0:color=black,format=yuv420p"
        ),
        None => "pad=ceil(iw/2)*2:ceil(ih/2)*2:0:0:color=black,format=yuv420p".to_string(),
    };
    let gop = (bounds.fps * 2).to_string();
    let max = bounds.max_bytes.to_string();
    let mut a: Vec<OsString> = [
        "-hide_banner",
        "-loglevel",
        "error",
        "-n",
        "-probesize",
        "32",
        "-analyzeduration",
        "0",
        "-f",
        "ivf",
        "-i",
        "pipe:0",
        "-vf",
        &filter,
        // The frames' own times: a held picture is encoded once.
        "-vsync",
        "vfr",
        "-c:v",
        "libvpx",
        // One encoding thread: libvpx's VP8 threads wait for each other by
        // spinning, which on a machine the browser or the application
        // already keeps busy tripled the encoder's CPU (measured on two
        // cores: ~200 ms for a one-click flow's three pictures, ~80 ms with
        // one thread) and kept it encoding long after its input ended.
        "-threads",
        "1",
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

/// The width and height a PNG's header gives, if `png` starts like one.
pub fn png_size(png: &[u8]) -> Option<(u32, u32)> {
    const SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
    if png.get(..8)? != SIGNATURE || png.get(12..16)? != b"IHDR" {
        return None;
    }
    let be = |r: std::ops::Range<usize>| -> Option<u32> {
        Some(u32::from_be_bytes(png.get(r)?.try_into().ok()?))
    };
    Some((be(16..20)?, be(20..24)?))
}

/// The IVF stream header: version 0, 32 bytes, the frames' FourCC, their
/// size, and a millisecond time base.
pub fn ivf_header(format: FrameFormat, width: u32, height: u32) -> [u8; 32] {
    let fourcc: &[u8; 4] = match format {
        FrameFormat::Jpeg => b"MJPG",
        FrameFormat::Png => b"MPNG",
    };
    let mut h = [0u8; 32];
    h[0..4].copy_from_slice(b"DKIF");
    h[4..6].copy_from_slice(&0u16.to_le_bytes());
    h[6..8].copy_from_slice(&32u16.to_le_bytes());
    h[8..12].copy_from_slice(fourcc);
    h[12..14].copy_from_slice(&(width.min(u16::MAX as u32) as u16).to_le_bytes());
    h[14..16].copy_from_slice(&(height.min(u16::MAX as u32) as u16).to_le_bytes());
    // Time base 1/1000 s: rate 1000, scale 1.
    h[16..20].copy_from_slice(&1000u32.to_le_bytes());
    h[20..24].copy_from_slice(&1u32.to_le_bytes());
    // Frame count unknown (a stream), then 4 unused bytes.
    h
}

/// The header before one IVF frame of `len` bytes shown at `ms`.
pub fn ivf_frame_header(len: usize, ms: u64) -> [u8; 12] {
    let mut h = [0u8; 12];
    h[0..4].copy_from_slice(&(len.min(u32::MAX as usize) as u32).to_le_bytes());
    h[4..12].copy_from_slice(&ms.to_le_bytes());
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ivf_framing_is_little_endian_with_a_millisecond_time_base() {
        let h = ivf_header(FrameFormat::Jpeg, 1280, 720);
        assert_eq!(&h[0..4], b"DKIF");
        assert_eq!(&h[6..8], &[32, 0]);
        assert_eq!(&h[8..12], b"MJPG");
        assert_eq!(&h[12..16], &[0x00, 0x05, 0xd0, 0x02]);
        assert_eq!(&h[16..24], &[0xe8, 0x03, 0, 0, 1, 0, 0, 0]);
        assert_eq!(&ivf_header(FrameFormat::Png, 1, 1)[8..12], b"MPNG");
        let f = ivf_frame_header(0x0102, 1500);
        assert_eq!(f, [0x02, 0x01, 0, 0, 0xdc, 0x05, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn a_png_header_gives_the_size() {
        // Signature, then the IHDR chunk: length, type, width, height, …
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        png.extend_from_slice(&801u32.to_be_bytes());
        png.extend_from_slice(&3u32.to_be_bytes());
        png.extend_from_slice(&[8, 2, 0, 0, 0]);
        assert_eq!(png_size(&png), Some((801, 3)));
        assert_eq!(png_size(&png[..20]), None);
        assert_eq!(png_size(b"\xff\xd8\xff\xe0 a JPEG, not a PNG"), None);
    }

    #[test]
    fn without_a_size_the_command_line_needs_none() {
        let a = args(
            FrameFormat::Png,
            None,
            &VideoBounds::default(),
            Path::new("/x/v.webm"),
        );
        let s: Vec<String> = a.iter().map(|x| x.to_string_lossy().into_owned()).collect();
        let vf = &s[s.iter().position(|x| x == "-vf").unwrap() + 1];
        assert!(!vf.contains("scale"), "{vf}");
        assert!(vf.starts_with("pad=ceil(iw/2)*2:ceil(ih/2)*2"), "{vf}");
    }

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
        let a = args(
            FrameFormat::Jpeg,
            Some((800, 600)),
            &b,
            Path::new("/x/v.webm"),
        );
        let s: Vec<String> = a.iter().map(|x| x.to_string_lossy().into_owned()).collect();
        assert!(s.contains(&"-n".to_string()));
        let fs = s.iter().position(|x| x == "-fs").unwrap();
        assert_eq!(s[fs + 1], "1234");
        // One encoder thread (see `args`).
        let t = s.iter().position(|x| x == "-threads").unwrap();
        assert_eq!(s[t + 1], "1");
        assert!(t > s.iter().position(|x| x == "-c:v").unwrap());
        // Frames are encoded as they come, not after 5 MB of probing.
        let probe = s.iter().position(|x| x == "-probesize").unwrap();
        assert!(probe < s.iter().position(|x| x == "-i").unwrap());
        assert_eq!(s.last().unwrap(), "/x/v.webm");
    }
}
