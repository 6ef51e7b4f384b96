//! Pixel and pointer arithmetic for the Windows side: a screen point as
//! `SendInput`'s normalized absolute coordinates, and GDI's BGRA pixels as
//! RGBA. Pure and unit-tested everywhere.

/// A point on the virtual screen `(left, top, width, height)` as
/// `MOUSEEVENTF_ABSOLUTE | MOUSEEVENTF_VIRTUALDESK` coordinates (0–65535
/// across the virtual screen); `None` when it is off every screen.
pub fn absolute(point: (i32, i32), screen: (i32, i32, i32, i32)) -> Option<(i32, i32)> {
    let (x, y) = point;
    let (left, top, width, height) = screen;
    if width < 2 || height < 2 {
        return None;
    }
    let (dx, dy) = (i64::from(x - left), i64::from(y - top));
    if dx < 0 || dy < 0 || dx >= i64::from(width) || dy >= i64::from(height) {
        return None;
    }
    let scale = |d: i64, size: i32| ((d * 65_535) / i64::from(size - 1)) as i32;
    Some((scale(dx, width), scale(dy, height)))
}

/// GDI's 32-bit BGRX rows as RGBA (opaque: GDI leaves the fourth byte
/// undefined).
pub fn bgra_to_rgba(mut px: Vec<u8>) -> Vec<u8> {
    for p in px.chunks_exact_mut(4) {
        p.swap(0, 2);
        p[3] = 255;
    }
    px
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn screen_points_scale_to_the_normalized_range() {
        let screen = (0, 0, 1920, 1080);
        assert_eq!(absolute((0, 0), screen), Some((0, 0)));
        assert_eq!(absolute((1919, 1079), screen), Some((65_535, 65_535)));
        assert_eq!(absolute((960, 540), screen), Some((32_784, 32_797)));
        assert_eq!(absolute((1920, 10), screen), None);
        assert_eq!(absolute((-1, 10), screen), None);
    }

    #[test]
    fn a_monitor_left_of_the_primary_shifts_the_origin() {
        // Two 1920-wide monitors, the second to the left of the primary.
        let screen = (-1920, 0, 3840, 1080);
        assert_eq!(absolute((-1920, 0), screen), Some((0, 0)));
        assert_eq!(absolute((0, 0), screen).map(|p| p.0), Some(32_776));
        assert_eq!(absolute((-1921, 0), screen), None);
    }

    #[test]
    fn bgra_becomes_opaque_rgba() {
        assert_eq!(
            bgra_to_rgba(vec![1, 2, 3, 0, 10, 20, 30, 7]),
            [3, 2, 1, 255, 30, 20, 10, 255]
        );
    }
}
