//! Box-drawing (U+2500–U+257F) and block elements (U+2580–U+259F) as
//! rectangles, so adjacent cells join without gaps at any font size.
//! Dashed lines are drawn solid; arcs as corners; diagonals fall back to the font.

/// Arms of each box-drawing character U+2500..=U+257F in the order up,
/// right, down, left: `0` none, `1` light, `2` heavy, `3` double. Empty
/// strings are left to the font.
const ARMS: [&str; 128] = [
    "0101", "0202", "1010", "2020", "0101", "0202", "1010", "2020", // 2500-2507
    "0101", "0202", "1010", "2020", "0110", "0210", "0120", "0220", // 2508-250F
    "0011", "0012", "0021", "0022", "1100", "1200", "2100", "2200", // 2510-2517
    "1001", "1002", "2001", "2002", "1110", "1210", "2110", "1120", // 2518-251F
    "2120", "2210", "1220", "2220", "1011", "1012", "2011", "1021", // 2520-2527
    "2021", "2012", "1022", "2022", "0111", "0112", "0211", "0212", // 2528-252F
    "0121", "0122", "0221", "0222", "1101", "1102", "1201", "1202", // 2530-2537
    "2101", "2102", "2201", "2202", "1111", "1112", "1211", "1212", // 2538-253F
    "2111", "1121", "2121", "2112", "2211", "1122", "1221", "2212", // 2540-2547
    "1222", "2122", "2221", "2222", "0101", "0202", "1010", "2020", // 2548-254F
    "0303", "3030", "0310", "0130", "0330", "0013", "0031", "0033", // 2550-2557
    "1300", "3100", "3300", "1003", "3001", "3003", "1310", "3130", // 2558-255F
    "3330", "1013", "3031", "3033", "0313", "0131", "0333", "1303", // 2560-2567
    "3101", "3303", "1313", "3131", "3333", "0110", "0011", "1001", // 2568-256F
    "1100", "", "", "", "0001", "1000", "0100", "0010", // 2570-2577
    "0002", "2000", "0200", "0020", "0201", "1020", "0102", "2010", // 2578-257F
];

/// Rectangles `(x, y, w, h)` inside a `w`×`h` cell that draw `c`, or `None`
/// when the font should draw it.
pub fn rects(c: char, w: i64, h: i64) -> Option<Vec<(i64, i64, i64, i64)>> {
    let u = c as u32;
    match u {
        0x2500..=0x257F => {
            let arms = ARMS[(u - 0x2500) as usize].as_bytes();
            if arms.is_empty() {
                return None;
            }
            Some(lines(arms, w, h))
        }
        0x2580..=0x259F => blocks(u, w, h),
        _ => None,
    }
}

fn lines(arms: &[u8], w: i64, h: i64) -> Vec<(i64, i64, i64, i64)> {
    let light = (w / 8).max(1);
    let heavy = (light * 2).max(2);
    // Double lines: two light lines `off` either side of the centre line.
    let off = light + (light / 2).max(1);
    let (cx, cy) = (w / 2, h / 2);
    let mut out = Vec::new();
    // The heaviest arm decides how far the others reach into the centre.
    let max_half = arms
        .iter()
        .map(|a| match a {
            b'2' => heavy / 2,
            b'3' => off + light,
            _ => light / 2,
        })
        .max()
        .unwrap_or(0);
    for (i, a) in arms.iter().enumerate() {
        let weights: Vec<(i64, i64)> = match a {
            b'1' => vec![(0, light)],
            b'2' => vec![(0, heavy)],
            b'3' => vec![(-off, light), (off, light)],
            _ => continue,
        };
        for (offset, thick) in weights {
            match i {
                // up: from the top edge to just past the centre
                0 => out.push((cx - thick / 2 + offset, 0, thick, cy + max_half + 1)),
                // right
                1 => out.push((
                    cx - max_half,
                    cy - thick / 2 + offset,
                    w - (cx - max_half),
                    thick,
                )),
                // down
                2 => out.push((
                    cx - thick / 2 + offset,
                    cy - max_half,
                    thick,
                    h - (cy - max_half),
                )),
                // left
                _ => out.push((0, cy - thick / 2 + offset, cx + max_half + 1, thick)),
            }
        }
    }
    out
}

fn blocks(u: u32, w: i64, h: i64) -> Option<Vec<(i64, i64, i64, i64)>> {
    let r = match u {
        0x2580 => vec![(0, 0, w, h / 2)],
        0x2581..=0x2587 => {
            let eighths = i64::from(u - 0x2580);
            let bh = h * eighths / 8;
            vec![(0, h - bh, w, bh)]
        }
        0x2588 => vec![(0, 0, w, h)],
        0x2589..=0x258F => {
            let eighths = 8 - i64::from(u - 0x2588);
            vec![(0, 0, w * eighths / 8, h)]
        }
        0x2590 => vec![(w / 2, 0, w - w / 2, h)],
        0x2594 => vec![(0, 0, w, (h / 8).max(1))],
        0x2595 => vec![(w - (w / 8).max(1), 0, (w / 8).max(1), h)],
        0x2596 => vec![(0, h / 2, w / 2, h - h / 2)],
        0x2597 => vec![(w / 2, h / 2, w - w / 2, h - h / 2)],
        0x2598 => vec![(0, 0, w / 2, h / 2)],
        0x259D => vec![(w / 2, 0, w - w / 2, h / 2)],
        // Shades and the remaining quadrant mixes are left to the font.
        _ => return None,
    };
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corners_reach_their_edges() {
        let r = rects('┌', 10, 20).unwrap();
        // Right arm reaches the right edge, down arm the bottom edge.
        assert!(r.iter().any(|&(x, _, w, _)| x + w == 10));
        assert!(r.iter().any(|&(_, y, _, h)| y + h == 20));
        assert!(r.iter().all(|&(x, y, _, _)| x >= 0 && y >= 0));
    }

    #[test]
    fn table_is_consistent() {
        assert_eq!(ARMS[0x00], "0101"); // ─
        assert_eq!(ARMS[0x02], "1010"); // │
        assert_eq!(ARMS[0x3C], "1111"); // ┼
        assert_eq!(ARMS[0x4B], "2222"); // ╋
        assert_eq!(ARMS[0x54], "0330"); // ╔
        assert_eq!(ARMS[0x6C], "3333"); // ╬
        assert_eq!(ARMS[0x6D], "0110"); // ╭
        assert!(rects('╱', 10, 20).is_none());
        assert_eq!(rects('█', 10, 20).unwrap(), vec![(0, 0, 10, 20)]);
        assert!(rects('a', 10, 20).is_none());
    }
}
