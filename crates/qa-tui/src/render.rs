//! PNG rendering of a [`Snapshot`] with the embedded DejaVu Sans Mono font
//! (no system fonts): colours, bold, italic (as regular), underline,
//! strike-through, inverse, wide characters and the cursor. Box-drawing
//! lines (U+2500–U+257F) and block elements (U+2580–U+259F) are drawn as
//! rectangles so borders join pixel-exactly.
//!
//! Cells of a masked snapshot ([`Snapshot::of_masked`]) that show a secret
//! are painted as opaque blocks; their glyphs are never drawn.
//!
//! This is a picture of the terminal *model*, not of a real terminal window.

use crate::boxdraw;
use crate::screen::Snapshot;
use ab_glyph::{Font, FontRef, PxScale, ScaleFont};
use alacritty_terminal::vte::ansi::Rgb;
use std::sync::OnceLock;

/// Font size in pixels.
const FONT_PX: f32 = 16.0;

/// Colour of the opaque block painted over a masked cell.
pub const MASK_COLOR: Rgb = crate::palette::DEFAULT_FG;

struct Fonts {
    regular: FontRef<'static>,
    bold: FontRef<'static>,
    cell_w: u32,
    cell_h: u32,
    ascent: f32,
}

fn fonts() -> &'static Fonts {
    static FONTS: OnceLock<Fonts> = OnceLock::new();
    FONTS.get_or_init(|| {
        let regular = FontRef::try_from_slice(dejavu::sans_mono::regular()).expect("embedded font");
        let bold = FontRef::try_from_slice(dejavu::sans_mono::bold()).expect("embedded font");
        let scaled = regular.as_scaled(PxScale::from(FONT_PX));
        let cell_w = scaled.h_advance(regular.glyph_id('M')).ceil() as u32;
        let cell_h = (scaled.ascent() - scaled.descent()).ceil() as u32 + 1;
        Fonts {
            ascent: scaled.ascent(),
            regular,
            bold,
            cell_w,
            cell_h,
        }
    })
}

/// Pixel size of one cell (width, height).
pub fn cell_size() -> (u32, u32) {
    let f = fonts();
    (f.cell_w, f.cell_h)
}

/// An RGB pixel buffer.
pub struct Canvas {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Row-major RGB bytes.
    pub data: Vec<u8>,
}

impl Canvas {
    fn new(width: u32, height: u32, bg: Rgb) -> Canvas {
        let mut data = Vec::with_capacity((width * height * 3) as usize);
        for _ in 0..width * height {
            data.extend_from_slice(&[bg.r, bg.g, bg.b]);
        }
        Canvas {
            width,
            height,
            data,
        }
    }

    /// The pixel at (x, y).
    pub fn pixel(&self, x: u32, y: u32) -> Rgb {
        let i = ((y * self.width + x) * 3) as usize;
        Rgb {
            r: self.data[i],
            g: self.data[i + 1],
            b: self.data[i + 2],
        }
    }

    fn fill(&mut self, x0: i64, y0: i64, w: i64, h: i64, c: Rgb) {
        let x1 = (x0 + w).min(i64::from(self.width));
        let y1 = (y0 + h).min(i64::from(self.height));
        for y in y0.max(0)..y1 {
            for x in x0.max(0)..x1 {
                let i = ((y as u32 * self.width + x as u32) * 3) as usize;
                self.data[i..i + 3].copy_from_slice(&[c.r, c.g, c.b]);
            }
        }
    }

    fn blend(&mut self, x: i64, y: i64, c: Rgb, alpha: f32) {
        if x < 0 || y < 0 || x >= i64::from(self.width) || y >= i64::from(self.height) {
            return;
        }
        let a = alpha.clamp(0.0, 1.0);
        let i = ((y as u32 * self.width + x as u32) * 3) as usize;
        for (k, v) in [c.r, c.g, c.b].into_iter().enumerate() {
            let old = f32::from(self.data[i + k]);
            self.data[i + k] = (old + (f32::from(v) - old) * a).round() as u8;
        }
    }

    /// Encodes the canvas as PNG.
    pub fn to_png(&self) -> Vec<u8> {
        let mut out = Vec::new();
        {
            let mut enc = png::Encoder::new(&mut out, self.width, self.height);
            enc.set_color(png::ColorType::Rgb);
            enc.set_depth(png::BitDepth::Eight);
            let mut w = enc.write_header().expect("png header to memory");
            w.write_image_data(&self.data).expect("png data to memory");
        }
        out
    }
}

/// Renders a snapshot to a canvas.
pub fn render(snap: &Snapshot) -> Canvas {
    let f = fonts();
    let (cw, ch) = (f.cell_w, f.cell_h);
    let mut canvas = Canvas::new(
        (snap.cols as u32).max(1) * cw,
        (snap.rows as u32).max(1) * ch,
        snap.background,
    );
    for r in 0..snap.rows {
        for c in 0..snap.cols {
            let cell = snap.cell(r, c);
            if cell.spacer {
                continue;
            }
            let span = if cell.wide { 2 } else { 1 };
            let x = i64::from(c as u32 * cw);
            let y = i64::from(r as u32 * ch);
            let w = i64::from(span * cw);
            if cell.masked {
                canvas.fill(x, y, w, i64::from(ch), MASK_COLOR);
                continue;
            }
            canvas.fill(x, y, w, i64::from(ch), cell.bg);
            draw_char(&mut canvas, f, cell.c, cell.bold, x, y, w, cell.fg);
            for z in cell.zerowidth.chars() {
                draw_char(&mut canvas, f, z, cell.bold, x, y, w, cell.fg);
            }
            if cell.underline {
                canvas.fill(x, y + i64::from(ch) - 2, w, 1, cell.fg);
            }
            if cell.strike {
                canvas.fill(x, y + i64::from(ch / 2), w, 1, cell.fg);
            }
        }
    }
    if snap.cursor_visible && snap.cursor_row < snap.rows && snap.cursor_col < snap.cols {
        // A block cursor: the cell drawn inverted.
        let cell = snap.cell(snap.cursor_row, snap.cursor_col);
        let span = if cell.wide { 2 } else { 1 };
        let x = i64::from(snap.cursor_col as u32 * cw);
        let y = i64::from(snap.cursor_row as u32 * ch);
        let w = i64::from(span * cw);
        canvas.fill(x, y, w, i64::from(ch), snap.cursor_color);
        let fg = if cell.bg == snap.cursor_color {
            cell.fg
        } else {
            cell.bg
        };
        if !cell.masked {
            draw_char(&mut canvas, f, cell.c, cell.bold, x, y, w, fg);
        }
    }
    canvas
}

/// Renders a snapshot to PNG bytes.
pub fn render_png(snap: &Snapshot) -> Vec<u8> {
    render(snap).to_png()
}

#[allow(clippy::too_many_arguments)]
fn draw_char(canvas: &mut Canvas, f: &Fonts, c: char, bold: bool, x: i64, y: i64, w: i64, fg: Rgb) {
    if c == ' ' || c == '\0' || c.is_control() {
        return;
    }
    let h = i64::from(f.cell_h);
    if let Some(rects) = boxdraw::rects(c, w, h) {
        for (rx, ry, rw, rh) in rects {
            canvas.fill(x + rx, y + ry, rw, rh, fg);
        }
        return;
    }
    let font = if bold { &f.bold } else { &f.regular };
    let id = font.glyph_id(c);
    if id.0 == 0 {
        // Not in the embedded font (e.g. CJK): an outlined box, never a guess.
        let (bx, by, bw, bh) = (x + 1, y + 2, w - 2, h - 4);
        canvas.fill(bx, by, bw, 1, fg);
        canvas.fill(bx, by + bh - 1, bw, 1, fg);
        canvas.fill(bx, by, 1, bh, fg);
        canvas.fill(bx + bw - 1, by, 1, bh, fg);
        return;
    }
    let scaled = font.as_scaled(PxScale::from(FONT_PX));
    let adv = scaled.h_advance(id);
    let ox = x as f32 + ((w as f32 - adv) / 2.0).max(0.0);
    let glyph = id.with_scale_and_position(
        PxScale::from(FONT_PX),
        ab_glyph::point(ox, y as f32 + f.ascent),
    );
    if let Some(outlined) = font.outline_glyph(glyph) {
        let b = outlined.px_bounds();
        outlined.draw(|gx, gy, cov| {
            canvas.blend(
                b.min.x as i64 + i64::from(gx),
                b.min.y as i64 + i64::from(gy),
                fg,
                cov,
            );
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_term::term_with;

    #[test]
    fn renders_colours_cursor_and_borders() {
        let t = term_with(
            6,
            3,
            "\x1b[41m  \x1b[0m\r\n┌──┐\r\n\x1b[7mX\x1b[0m".as_bytes(),
        );
        let snap = Snapshot::of(&t);
        let canvas = render(&snap);
        let (cw, ch) = cell_size();
        assert_eq!(canvas.width, 6 * cw);
        assert_eq!(canvas.height, 3 * ch);
        // Red background in the first cell.
        assert_eq!(
            canvas.pixel(1, 1),
            Rgb {
                r: 0xcd,
                g: 0,
                b: 0
            }
        );
        // The horizontal line of ─ passes through the middle row of its cell, edge to edge.
        let mid = ch + ch / 2;
        assert_eq!(canvas.pixel(cw, mid), crate::palette::DEFAULT_FG);
        assert_eq!(canvas.pixel(2 * cw - 1, mid), crate::palette::DEFAULT_FG);
        // Inverse cell: light background.
        assert_eq!(canvas.pixel(0, 2 * ch), crate::palette::DEFAULT_FG);
        let png = canvas.to_png();
        assert_eq!(&png[1..4], b"PNG");
    }

    #[test]
    fn masked_cells_are_opaque_blocks_without_glyphs() {
        let s = qa_core::Secrets::new();
        s.add("s3cret9");
        let t = term_with(10, 2, b"s3cret9\x1b[?25l");
        let snap = Snapshot::of_masked(&t, &s);
        let canvas = render(&snap);
        let (cw, ch) = cell_size();
        for x in 0..7 * cw {
            for y in 0..ch {
                assert_eq!(canvas.pixel(x, y), MASK_COLOR, "({x}, {y})");
            }
        }
        assert_eq!(canvas.pixel(7 * cw + 1, 1), snap.background);
    }
}
