//! A captured window's pixels as a PNG: ScreenCaptureKit's image is drawn
//! into a premultiplied RGBA bitmap, which is turned into straight alpha
//! (PNG's) and encoded. Pure, unit-tested everywhere.

/// Turns premultiplied RGBA into straight RGBA in place.
pub fn unpremultiply(rgba: &mut [u8]) {
    for px in rgba.chunks_exact_mut(4) {
        let a = u32::from(px[3]);
        if a == 0 || a == 255 {
            continue;
        }
        for c in &mut px[..3] {
            *c = ((u32::from(*c) * 255 + a / 2) / a).min(255) as u8;
        }
    }
}

/// Encodes top-down straight RGBA pixels as a PNG.
pub fn png(width: u32, height: u32, rgba: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, width, height);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    enc.set_compression(png::Compression::Fast);
    let mut w = enc.write_header().map_err(|e| e.to_string())?;
    w.write_image_data(rgba).map_err(|e| e.to_string())?;
    w.finish().map_err(|e| e.to_string())?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn premultiplied_pixels_become_straight() {
        let mut px = [0, 0, 0, 0, 10, 20, 30, 255, 64, 32, 0, 128];
        unpremultiply(&mut px);
        assert_eq!(px, [0, 0, 0, 0, 10, 20, 30, 255, 128, 64, 0, 128]);
    }

    #[test]
    fn a_png_has_the_window_size() {
        let bytes = png(3, 2, &[255u8; 3 * 2 * 4]).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        // IHDR: width and height, big-endian, after the 8-byte signature
        // and the chunk's length and type.
        assert_eq!(u32::from_be_bytes(bytes[16..20].try_into().unwrap()), 3);
        assert_eq!(u32::from_be_bytes(bytes[20..24].try_into().unwrap()), 2);
        assert!(png(3, 2, &[0u8; 5]).is_err());
    }
}
