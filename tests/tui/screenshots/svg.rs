//! A `vt100` screen as an SVG image: a background rectangle per run of
//! same-colored cells, each glyph placed at its cell (so columns line up
//! whatever the font's advance), bold / italic / underline / dim / inverse
//! per cell, and box-drawing and block characters drawn as shapes (as
//! terminals do) so borders join without gaps between rows.

use std::fmt::Write;

/// What the terminal itself supplies: default colors and the 16-color palette.
pub struct Palette {
    pub fg: (u8, u8, u8),
    pub bg: (u8, u8, u8),
    pub ansi: [(u8, u8, u8); 16],
}

/// One Dark, the palette the default theme's colors come from.
pub const DARK: Palette = Palette {
    fg: (0xab, 0xb2, 0xbf),
    bg: (0x28, 0x2c, 0x34),
    ansi: [
        (0x28, 0x2c, 0x34),
        (0xe0, 0x6c, 0x75),
        (0x98, 0xc3, 0x79),
        (0xe5, 0xc0, 0x7b),
        (0x61, 0xaf, 0xef),
        (0xc6, 0x78, 0xdd),
        (0x56, 0xb6, 0xc2),
        (0xab, 0xb2, 0xbf),
        (0x5c, 0x63, 0x70),
        (0xe0, 0x6c, 0x75),
        (0x98, 0xc3, 0x79),
        (0xe5, 0xc0, 0x7b),
        (0x61, 0xaf, 0xef),
        (0xc6, 0x78, 0xdd),
        (0x56, 0xb6, 0xc2),
        (0xff, 0xff, 0xff),
    ],
};

/// One Light, for the light theme.
pub const LIGHT: Palette = Palette {
    fg: (0x38, 0x3a, 0x42),
    bg: (0xfa, 0xfa, 0xfa),
    ansi: [
        (0x38, 0x3a, 0x42),
        (0xe4, 0x56, 0x49),
        (0x50, 0xa1, 0x4f),
        (0xc1, 0x84, 0x01),
        (0x01, 0x84, 0xbc),
        (0xa6, 0x26, 0xa4),
        (0x09, 0x97, 0xb3),
        (0xa0, 0xa1, 0xa7),
        (0x69, 0x6c, 0x77),
        (0xe4, 0x56, 0x49),
        (0x50, 0xa1, 0x4f),
        (0xc1, 0x84, 0x01),
        (0x01, 0x84, 0xbc),
        (0xa6, 0x26, 0xa4),
        (0x09, 0x97, 0xb3),
        (0xfa, 0xfa, 0xfa),
    ],
};

/// Cell size and font size in SVG pixels (DejaVu Sans Mono advances
/// 0.602 em, so a 14 px font fills an 8.4 px cell).
const CW: f64 = 8.4;
const CH: f64 = 18.0;
const FONT: f64 = 14.0;
/// Baseline below the row's top.
const BASELINE: f64 = 13.6;
/// Space around the terminal.
const PAD: f64 = 12.0;

type Rgb = (u8, u8, u8);

fn hex((r, g, b): Rgb) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

fn color(c: vt100::Color, default: Rgb, p: &Palette) -> Rgb {
    match c {
        vt100::Color::Default => default,
        vt100::Color::Idx(i) if i < 16 => p.ansi[usize::from(i)],
        vt100::Color::Idx(i) if i >= 232 => {
            let v = 8 + 10 * (i - 232);
            (v, v, v)
        }
        vt100::Color::Idx(i) => {
            let i = i - 16;
            let level = |v: u8| if v == 0 { 0 } else { 55 + 40 * v };
            (level(i / 36), level(i / 6 % 6), level(i % 6))
        }
        vt100::Color::Rgb(r, g, b) => (r, g, b),
    }
}

fn blend(a: Rgb, b: Rgb, t: f64) -> Rgb {
    let mix = |x: u8, y: u8| (f64::from(x) * (1.0 - t) + f64::from(y) * t).round() as u8;
    (mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// A cell's resolved look.
#[derive(Clone, Copy, PartialEq)]
struct Look {
    fg: Rgb,
    bg: Rgb,
    bold: bool,
    italic: bool,
    underline: bool,
}

fn look(cell: &vt100::Cell, p: &Palette) -> Look {
    let mut fg = color(cell.fgcolor(), p.fg, p);
    let mut bg = color(cell.bgcolor(), p.bg, p);
    if cell.inverse() {
        std::mem::swap(&mut fg, &mut bg);
    }
    if cell.dim() {
        fg = blend(fg, bg, 0.45);
    }
    Look {
        fg,
        bg,
        bold: cell.bold(),
        italic: cell.italic(),
        underline: cell.underline(),
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Line weights of a box-drawing character: up, right, down, left.
#[derive(Clone, Copy, PartialEq)]
enum W {
    No,
    Light,
    Heavy,
}

fn box_arms(c: char) -> Option<[W; 4]> {
    use W::{Heavy as H, Light as L, No as N};
    Some(match c {
        '─' => [N, L, N, L],
        '│' => [L, N, L, N],
        '┌' => [N, L, L, N],
        '┐' => [N, N, L, L],
        '└' => [L, L, N, N],
        '┘' => [L, N, N, L],
        '├' => [L, L, L, N],
        '┤' => [L, N, L, L],
        '┬' => [N, L, L, L],
        '┴' => [L, L, N, L],
        '┼' => [L, L, L, L],
        '━' => [N, H, N, H],
        '┃' => [H, N, H, N],
        '┏' => [N, H, H, N],
        '┓' => [N, N, H, H],
        '┗' => [H, H, N, N],
        '┛' => [H, N, N, H],
        '┣' => [H, H, H, N],
        '┫' => [H, N, H, H],
        '┳' => [N, H, H, H],
        '┻' => [H, H, N, H],
        '╋' => [H, H, H, H],
        '╴' => [N, N, N, L],
        '╵' => [L, N, N, N],
        '╶' => [N, L, N, N],
        '╷' => [N, N, L, N],
        _ => return None,
    })
}

/// SVG for a box-drawing or block character at (x, y), or None to leave
/// it to the font.
fn shape(c: char, x: f64, y: f64, fill: &str) -> Option<String> {
    let (cx, cy) = (x + CW / 2.0, y + CH / 2.0);
    // Lines run a little past the cell's edges so neighbours overlap
    // instead of leaving an anti-aliased seam.
    const OVER: f64 = 0.4;
    let (left, right, top, bottom) = (x - OVER, x + CW + OVER, y - OVER, y + CH + OVER);
    let (light, heavy): (f64, f64) = (1.2, 2.6);
    let line = |x1: f64, y1: f64, x2: f64, y2: f64, w: f64| {
        format!(
            r#"<line x1="{x1:.2}" y1="{y1:.2}" x2="{x2:.2}" y2="{y2:.2}" stroke="{fill}" stroke-width="{w}"/>"#
        )
    };
    let rect = |x: f64, y: f64, w: f64, h: f64, opacity: f64| {
        format!(
            r#"<rect x="{x:.2}" y="{y:.2}" width="{w:.2}" height="{h:.2}" fill="{fill}" fill-opacity="{opacity}"/>"#
        )
    };
    if let Some(arms) = box_arms(c) {
        let mut out = String::new();
        // Each arm runs from the far side of the crossing line to the edge,
        // so corners close without overshoot.
        let thick = |w: W| match w {
            W::No => 0.0,
            W::Light => light,
            W::Heavy => heavy,
        };
        let across_v = thick(arms[0]).max(thick(arms[2])) / 2.0;
        let across_h = thick(arms[1]).max(thick(arms[3])) / 2.0;
        for (i, arm) in arms.iter().enumerate() {
            let w = thick(*arm);
            if w == 0.0 {
                continue;
            }
            out.push_str(&match i {
                0 => line(cx, top, cx, cy + across_h, w),
                1 => line(cx - across_v, cy, right, cy, w),
                2 => line(cx, cy - across_h, cx, bottom, w),
                _ => line(left, cy, cx + across_v, cy, w),
            });
        }
        return Some(out);
    }
    let d = 1.6; // half the gap of a double line
    let w = light;
    let path =
        |d: String| format!(r#"<path d="{d}" fill="none" stroke="{fill}" stroke-width="{w}"/>"#);
    let r = CW / 2.0;
    Some(match c {
        '═' => line(left, cy - d, right, cy - d, w) + &line(left, cy + d, right, cy + d, w),
        '║' => line(cx - d, top, cx - d, bottom, w) + &line(cx + d, top, cx + d, bottom, w),
        // Double corners: (sign of the horizontal arm, sign of the vertical arm).
        '╔' | '╗' | '╚' | '╝' => {
            let sx = if matches!(c, '╔' | '╚') {
                1.0
            } else {
                -1.0
            };
            let sy = if matches!(c, '╔' | '╗') {
                1.0
            } else {
                -1.0
            };
            let (ex, ey) = (cx + sx * CW, cy + sy * CH);
            let ex = ex.clamp(left, right);
            let ey = ey.clamp(top, bottom);
            let outer = format!("M{ex:.2},{:.2} H{:.2} V{ey:.2}", cy - sy * d, cx - sx * d);
            let inner = format!("M{ex:.2},{:.2} H{:.2} V{ey:.2}", cy + sy * d, cx + sx * d);
            path(outer) + &path(inner)
        }
        '╭' => path(format!(
            "M{right:.2},{cy:.2} H{:.2} A{r:.2},{r:.2} 0 0 0 {cx:.2},{:.2} V{bottom:.2}",
            cx + r,
            cy + r
        )),
        '╮' => path(format!(
            "M{left:.2},{cy:.2} H{:.2} A{r:.2},{r:.2} 0 0 1 {cx:.2},{:.2} V{bottom:.2}",
            cx - r,
            cy + r
        )),
        '╰' => path(format!(
            "M{cx:.2},{top:.2} V{:.2} A{r:.2},{r:.2} 0 0 0 {:.2},{cy:.2} H{right:.2}",
            cy - r,
            cx + r
        )),
        '╯' => path(format!(
            "M{cx:.2},{top:.2} V{:.2} A{r:.2},{r:.2} 0 0 1 {:.2},{cy:.2} H{left:.2}",
            cy - r,
            cx - r
        )),
        '█' => rect(x, y, CW, CH, 1.0),
        '▀' => rect(x, y, CW, CH / 2.0, 1.0),
        '▄' => rect(x, y + CH / 2.0, CW, CH / 2.0, 1.0),
        '▌' => rect(x, y, CW / 2.0, CH, 1.0),
        '▐' => rect(x + CW / 2.0, y, CW / 2.0, CH, 1.0),
        '░' => rect(x, y, CW, CH, 0.25),
        '▒' => rect(x, y, CW, CH, 0.5),
        '▓' => rect(x, y, CW, CH, 0.75),
        // Lower eighths ▁..▇ and left eighths ▉..▏.
        '\u{2581}'..='\u{2587}' => {
            let h = CH * f64::from(c as u32 - 0x2580) / 8.0;
            rect(x, y + CH - h, CW, h, 1.0)
        }
        '\u{2589}'..='\u{258f}' => {
            let w = CW * f64::from(0x2590 - c as u32) / 8.0;
            rect(x, y, w, CH, 1.0)
        }
        _ => return None,
    })
}

/// The whole screen as an SVG document.
pub fn render(screen: &vt100::Screen, p: &Palette) -> String {
    let (rows, cols) = screen.size();
    let (rows, cols) = (rows.get(), cols.get());
    let width = f64::from(cols) * CW + 2.0 * PAD;
    let height = f64::from(rows) * CH + 2.0 * PAD;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.2} {height:.2}">"#
    );
    let _ = writeln!(
        svg,
        r#"<rect width="100%" height="100%" rx="8" fill="{}"/>"#,
        hex(p.bg)
    );
    let _ = writeln!(
        svg,
        r#"<g font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="{FONT}" text-anchor="middle" transform="translate({PAD} {PAD})">"#
    );
    let mut fg_layer = String::new();
    for row in 0..rows {
        let y = f64::from(row) * CH;
        // Cells of this row: (column, width in cells, text, look).
        let mut cells: Vec<(u16, u16, String, Look)> = Vec::new();
        for col in 0..cols {
            let Some(cell) = screen.cell(row, col) else {
                continue;
            };
            if cell.is_wide_continuation() {
                continue;
            }
            let w = if cell.is_wide() { 2 } else { 1 };
            cells.push((col, w, cell.contents().to_string(), look(cell, p)));
        }
        // Backgrounds: runs of one color other than the terminal's.
        let mut i = 0;
        while i < cells.len() {
            let bg = cells[i].3.bg;
            let start = cells[i].0;
            let mut end = start + cells[i].1;
            let mut j = i + 1;
            while j < cells.len() && cells[j].3.bg == bg {
                end = cells[j].0 + cells[j].1;
                j += 1;
            }
            if bg != p.bg {
                let _ = writeln!(
                    svg,
                    r#"<rect x="{:.2}" y="{y:.2}" width="{:.2}" height="{CH}" fill="{}"/>"#,
                    f64::from(start) * CW,
                    f64::from(end - start) * CW,
                    hex(bg)
                );
            }
            i = j;
        }
        // Text: runs of one look in a group carrying the look; each glyph an
        // element of its own, centred on its cells, so the grid holds
        // whatever the fonts' advances (librsvg honours only the first
        // value of an `x` list).
        let mut i = 0;
        while i < cells.len() {
            let lk = cells[i].3;
            let fill = hex(lk.fg);
            let mut group = String::new();
            let mut j = i;
            while j < cells.len() && cells[j].3 == lk {
                let (col, w, text, _) = &cells[j];
                let x = f64::from(*col) * CW;
                let mut chars = text.chars();
                let single = match (chars.next(), chars.next()) {
                    (Some(c), None) => Some(c),
                    _ => None,
                };
                if let Some(s) = single.and_then(|c| shape(c, x, y, &fill)) {
                    fg_layer.push_str(&s);
                    fg_layer.push('\n');
                } else if !text.trim().is_empty() {
                    let _ = write!(
                        group,
                        r#"<text x="{:.2}" y="{:.2}">{}</text>"#,
                        x + f64::from(*w) * CW / 2.0,
                        y + BASELINE,
                        escape(text)
                    );
                }
                j += 1;
            }
            if !group.is_empty() {
                let mut attrs = format!(r#" fill="{fill}""#);
                if lk.bold {
                    attrs.push_str(r#" font-weight="bold""#);
                }
                if lk.italic {
                    attrs.push_str(r#" font-style="italic""#);
                }
                let _ = writeln!(fg_layer, "<g{attrs}>{group}</g>");
            }
            if lk.underline {
                let from = f64::from(cells[i].0) * CW;
                let to = f64::from(cells[j - 1].0 + cells[j - 1].1) * CW;
                let _ = writeln!(
                    fg_layer,
                    r#"<rect x="{from:.2}" y="{:.2}" width="{:.2}" height="1" fill="{fill}"/>"#,
                    y + BASELINE + 2.0,
                    to - from,
                );
            }
            i = j;
        }
    }
    svg.push_str(&fg_layer);
    // The cursor, where the application left it visible.
    if !screen.hide_cursor() {
        let (row, col) = screen.cursor_position();
        let _ = writeln!(
            svg,
            r#"<rect x="{:.2}" y="{:.2}" width="{CW}" height="{CH}" fill="{}" fill-opacity="0.6"/>"#,
            f64::from(col) * CW,
            f64::from(row) * CH,
            hex(p.fg)
        );
    }
    svg.push_str("</g>\n</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nz(n: u16) -> std::num::NonZeroU16 {
        std::num::NonZeroU16::new(n).expect("nonzero")
    }

    #[test]
    fn colors_styles_and_borders_become_svg() {
        let mut parser = vt100::Parser::new(nz(3), nz(10), 0);
        parser.process("╭─╮\r\n\x1b[1;38;2;255;0;0ma<b\x1b[0m \x1b[44mx\x1b[0m\r\n│é│".as_bytes());
        let svg = render(parser.screen(), &DARK);
        assert!(
            svg.contains(r##"<g fill="#ff0000" font-weight="bold"><text x="4.20" y="31.60">a</text><text x="12.60" y="31.60">&lt;</text>"##),
            "{svg}"
        );
        // Blue background (palette 4) behind one cell.
        assert!(
            svg.contains(r##"width="8.40" height="18" fill="#61afef""##),
            "{svg}"
        );
        // Borders are shapes, not glyphs.
        assert!(!svg.contains('╭') && !svg.contains('│'));
        assert!(svg.contains("<path") && svg.contains("<line"));
        assert!(svg.contains(">é</text>"), "{svg}");
    }
}
