//! The report's charts, as inline SVG drawn here: lines over time or a distribution with events marked, and the kills'
//! bars. Round ticks, one colour a manager (the caller's), no fonts or libraries needed to make or view them.

use crate::report::num;
use std::fmt::Write;

const W: f64 = 960.0;
const H: f64 = 320.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 190.0;
const TOP: f64 = 36.0;
const BOTTOM: f64 = 48.0;

/// Tick values from 0 to at least `max`: steps of 1, 2, 2.5 or 5 × 10^k, whole numbers when `integer` (counts), about
/// `n` of them.
pub fn ticks(max: f64, n: usize, integer: bool) -> Vec<f64> {
    let max = if max.is_finite() && max > 0.0 { max } else { 1.0 };
    let raw = max / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let mut step = [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(10.0 * mag);
    if integer {
        step = step.max(1.0).round();
    }
    let count = (max / step).ceil() as usize;
    (0..=count).map(|i| i as f64 * step).collect()
}

fn fmt_tick(v: f64) -> String {
    if v >= 1000.0 && v % 1000.0 == 0.0 {
        format!("{}k", v / 1000.0)
    } else if v > 0.0 && v < 1.0 {
        format!("{v}")
    } else {
        num(v)
    }
}

/// A chart's frame: title, axes with ticks and labels; returns the scales.
struct Frame {
    x0: f64,
    x1: f64,
    y1: f64,
    log_x: bool,
}

impl Frame {
    fn sx(&self, x: f64) -> f64 {
        let t = |v: f64| if self.log_x { v.max(1e-3).log10() } else { v };
        LEFT + (t(x) - t(self.x0)) / (t(self.x1) - t(self.x0)).max(1e-9) * (W - LEFT - RIGHT)
    }
    fn sy(&self, y: f64) -> f64 {
        H - BOTTOM - y / self.y1 * (H - TOP - BOTTOM)
    }
}

fn open_chart(o: &mut String, title: &str) {
    let _ = write!(
        o,
        r#"<figure><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" role="img" aria-label="{0}" font-family="sans-serif" font-size="12"><text x="{LEFT}" y="20" font-size="15" font-weight="bold">{0}</text>"#,
        esc(title)
    );
}

/// Axes, grid lines and tick labels; `xs`, `ys` the tick values.
fn axes(o: &mut String, f: &Frame, xs: &[f64], ys: &[f64], x_label: &str, y_label: &str) {
    for &y in ys {
        let _ = write!(
            o,
            r##"<line x1="{LEFT}" y1="{0:.1}" x2="{1}" y2="{0:.1}" stroke="#e4e4e4"/><text x="{2}" y="{3:.1}" text-anchor="end">{4}</text>"##,
            f.sy(y),
            W - RIGHT,
            LEFT - 6.0,
            f.sy(y) + 4.0,
            fmt_tick(y)
        );
    }
    for &x in xs {
        let _ = write!(
            o,
            r##"<line x1="{0:.1}" y1="{1}" x2="{0:.1}" y2="{2}" stroke="#999"/><text x="{0:.1}" y="{3}" text-anchor="middle">{4}</text>"##,
            f.sx(x),
            H - BOTTOM,
            H - BOTTOM + 4.0,
            H - BOTTOM + 17.0,
            fmt_tick(x)
        );
    }
    let _ = write!(
        o,
        r##"<line x1="{LEFT}" y1="{0}" x2="{1}" y2="{0}" stroke="#333"/><line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{0}" stroke="#333"/>"##,
        H - BOTTOM,
        W - RIGHT
    );
    let _ = write!(
        o,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        LEFT + (W - LEFT - RIGHT) / 2.0,
        H - 10.0,
        esc(x_label)
    );
    let _ = write!(
        o,
        r#"<text x="16" y="{0}" transform="rotate(-90 16 {0})" text-anchor="middle">{1}</text>"#,
        TOP + (H - TOP - BOTTOM) / 2.0,
        esc(y_label)
    );
}

/// The legend at the right: (label, colour, marker) rows.
fn legend(o: &mut String, rows: &[(String, &str)]) {
    for (i, (label, c)) in rows.iter().enumerate() {
        let y = TOP + 4.0 + 18.0 * i as f64;
        let _ = write!(
            o,
            r#"<rect x="{}" y="{y}" width="12" height="12" fill="{c}"/><text x="{}" y="{}">{}</text>"#,
            W - RIGHT + 14.0,
            W - RIGHT + 32.0,
            y + 10.5,
            esc(label)
        );
    }
}

/// A line a manager, over time or a distribution; `marks` are x positions of events (kills) drawn as ticks on the line.
pub struct Series<'a> {
    pub name: &'a str,
    pub color: &'a str,
    pub points: Vec<(f64, f64)>,
    pub marks: Vec<f64>,
}

pub fn line_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    log_x: bool,
    integer_y: bool,
    y_max: Option<f64>,
) -> String {
    let (f, xs, ys) = frame_for(series, log_x, integer_y, y_max);
    let mut o = String::new();
    open_chart(&mut o, title);
    axes(&mut o, &f, &xs, &ys, x_label, y_label);
    if series.iter().all(|s| s.points.is_empty()) {
        let _ = write!(
            o,
            r##"<text x="{}" y="{}" text-anchor="middle" fill="#b00">no data: no visit was served</text>"##,
            W / 2.0,
            H / 2.0
        );
    }
    for s in series {
        draw_series(&mut o, &f, s);
    }
    let rows: Vec<(String, &str)> = series.iter().map(|s| (s.name.to_string(), s.color)).collect();
    legend(&mut o, &rows);
    if series.iter().any(|s| !s.marks.is_empty()) {
        let y = TOP + 10.0 + 18.0 * rows.len() as f64;
        let _ = write!(
            o,
            r##"<path d="M{0},{1} l-5,-9 h10 z" fill="#555"/><text x="{2}" y="{1}">a kill</text>"##,
            W - RIGHT + 20.0,
            y + 6.0,
            W - RIGHT + 32.0
        );
    }
    o.push_str("</svg></figure>");
    o
}

/// The frame of a line chart, its x and y ticks: x from 0 (or the decade below the least x on a log scale) to the
/// ticks' end, y from 0 to `y_max` or the data's highest.
fn frame_for(series: &[Series], log_x: bool, integer_y: bool, y_max: Option<f64>) -> (Frame, Vec<f64>, Vec<f64>) {
    let pts = || series.iter().flat_map(|s| s.points.iter());
    let x_max = pts().map(|p| p.0).fold(0.0, f64::max);
    let x_min = if log_x { pts().map(|p| p.0).fold(f64::MAX, f64::min).max(0.1) } else { 0.0 };
    let data_y = pts().map(|p| p.1).fold(0.0, f64::max);
    let ys = ticks(y_max.unwrap_or(data_y).min(y_max.unwrap_or(f64::MAX)), 5, integer_y);
    let (x0, x1) = if log_x {
        (10f64.powf(x_min.log10().floor()), 10f64.powf(x_max.max(1.0).log10().ceil()))
    } else {
        let t = ticks(x_max, 8, true);
        (0.0, *t.last().unwrap_or(&1.0))
    };
    let xs: Vec<f64> = if log_x {
        (x0.log10() as i32..=x1.log10() as i32).map(|e| 10f64.powi(e)).collect()
    } else {
        ticks(x1, 8, true)
    };
    let f = Frame { x0, x1: x1.max(x0 + 1e-9), y1: *ys.last().unwrap_or(&1.0), log_x };
    (f, xs, ys)
}

/// One series: its line, and a mark at each kill.
fn draw_series(o: &mut String, f: &Frame, s: &Series) {
    let path: Vec<String> = s.points.iter().map(|&(x, y)| format!("{:.1},{:.1}", f.sx(x), f.sy(y))).collect();
    let _ = write!(
        o,
        r#"<polyline fill="none" stroke="{}" stroke-width="2" points="{}"><title>{}</title></polyline>"#,
        s.color,
        path.join(" "),
        esc(s.name)
    );
    for &m in &s.marks {
        let y = value_at(&s.points, m);
        let _ = write!(
            o,
            r#"<path d="M{0:.1},{1:.1} l-5,-9 h10 z" fill="{2}" stroke="white" stroke-width="0.8"><title>{3}: a kill at {4:.0} s</title></path>"#,
            f.sx(m),
            f.sy(y) - 2.0,
            s.color,
            esc(s.name),
            m
        );
    }
}

/// The series' value at x (the last point at or before it).
fn value_at(points: &[(f64, f64)], x: f64) -> f64 {
    points.iter().take_while(|p| p.0 <= x).last().or(points.first()).map_or(0.0, |p| p.1)
}

/// Kills per manager: one bar each in the manager's colour, solid for its own kills and hatched for the kernel's OOM
/// killer's, the counts written on them; names below, slanted.
pub fn kills_chart(managers: &[(String, &str)], by_manager: &[f64], by_kernel: &[f64], runs: &[usize]) -> String {
    // Taller than the other charts: the slanted names need room below the axis.
    const HK: f64 = 420.0;
    const AXIS: f64 = HK - 110.0;
    let top = by_manager.iter().zip(by_kernel).map(|(a, b)| a + b).fold(0.0, f64::max);
    let ys = ticks(top, 5, true);
    let y1 = *ys.last().unwrap_or(&1.0);
    let sy = |y: f64| AXIS - y / y1 * (AXIS - TOP - 10.0);
    let mut o = String::new();
    let _ = write!(
        o,
        r#"<figure><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {HK}" role="img" aria-label="kills" font-family="sans-serif" font-size="12"><text x="{LEFT}" y="20" font-size="15" font-weight="bold">Kills: by the manager (solid) and by the kernel's OOM killer (hatched), totals over all runs</text>"#
    );
    o.push_str(r##"<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="white"/><line x1="0" y1="0" x2="0" y2="6" stroke="#333" stroke-width="3"/></pattern></defs>"##);
    let base_y = sy(0.0);
    for &y in &ys {
        let _ = write!(
            o,
            r##"<line x1="{LEFT}" y1="{0:.1}" x2="{1}" y2="{0:.1}" stroke="#e4e4e4"/><text x="{2}" y="{3:.1}" text-anchor="end">{4}</text>"##,
            sy(y),
            W - RIGHT,
            LEFT - 6.0,
            sy(y) + 4.0,
            fmt_tick(y)
        );
    }
    let _ = write!(
        o,
        r##"<line x1="{LEFT}" y1="{0:.1}" x2="{1}" y2="{0:.1}" stroke="#333"/><text x="16" y="{2}" transform="rotate(-90 16 {2})" text-anchor="middle">kills</text>"##,
        base_y,
        W - RIGHT,
        TOP + (base_y - TOP) / 2.0
    );
    let slot = (W - LEFT - RIGHT) / managers.len().max(1) as f64;
    let bw = (slot * 0.55).min(48.0);
    for (i, (name, color)) in managers.iter().enumerate() {
        let x = LEFT + slot * (i as f64 + 0.5) - bw / 2.0;
        let bar = Bar { x, width: bw, name, color, runs: runs[i], base_y };
        kill_bar(&mut o, &bar, [by_manager[i], by_kernel[i]], &sy);
    }
    o.push_str("</svg></figure>");
    o
}

/// Where one manager's bar of [`kills_chart`] goes.
struct Bar<'a> {
    x: f64,
    width: f64,
    name: &'a str,
    color: &'a str,
    runs: usize,
    base_y: f64,
}

/// One manager's kills, its own (solid) under the kernel's (hatched), the counts on them, the total above and the name
/// below, slanted.
fn kill_bar(o: &mut String, b: &Bar, kills: [f64; 2], sy: &dyn Fn(f64) -> f64) {
    let (x, bw, name, color, base_y) = (b.x, b.width, b.name, b.color, b.base_y);
    let mut base = 0.0;
    for (n, fill, who) in
        [(kills[0], color.to_string(), "the manager"), (kills[1], "url(#hatch)".to_string(), "the kernel")]
    {
        if n <= 0.0 {
            continue;
        }
        let (y_top, y_bot) = (sy(base + n), sy(base));
        let _ = write!(
            o,
            r#"<rect x="{x:.1}" y="{y_top:.1}" width="{bw:.1}" height="{:.1}" fill="{fill}" stroke="{color}" stroke-width="2"><title>{}: {} kills by {who}</title></rect>"#,
            y_bot - y_top,
            esc(name),
            num(n)
        );
        if y_bot - y_top >= 15.0 {
            let (tx, ty) = (x + bw / 2.0, (y_top + y_bot) / 2.0 + 4.0);
            let _ = write!(
                o,
                r##"<text x="{tx:.1}" y="{ty:.1}" text-anchor="middle" font-size="11" font-weight="bold" fill="#111" stroke="white" stroke-width="3" paint-order="stroke">{}</text>"##,
                num(n)
            );
        }
        base += n;
    }
    let _ = write!(
        o,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="12">{}</text>"#,
        x + bw / 2.0,
        sy(base) - 5.0,
        num(base)
    );
    let (lx, ly) = (x + bw / 2.0 + 6.0, base_y + 16.0);
    let _ = write!(
        o,
        r#"<text x="{lx:.1}" y="{ly:.1}" text-anchor="end" transform="rotate(-30 {lx:.1} {ly:.1})">{} ({}×)</text>"#,
        esc(&short(name)),
        b.runs
    );
}

fn short(name: &str) -> String {
    if name.chars().count() > 18 {
        format!("{}…", name.chars().take(17).collect::<String>())
    } else {
        name.to_string()
    }
}

pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_maximum() {
        assert_eq!(ticks(7.35, 5, true), vec![0.0, 2.0, 4.0, 6.0, 8.0]);
        assert_eq!(ticks(100.0, 5, false), vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0], "a percentage ends at 100");
        assert_eq!(ticks(3.0, 5, true), vec![0.0, 1.0, 2.0, 3.0], "counts in whole steps");
        assert_eq!(ticks(0.0, 5, true), vec![0.0, 1.0]);
        assert_eq!(ticks(1234.0, 5, false), vec![0.0, 250.0, 500.0, 750.0, 1000.0, 1250.0]);
        assert_eq!(ticks(1024.0, 5, false).last(), Some(&1250.0), "a 1 GiB device's axis ends near it");
    }

    #[test]
    fn charts_are_svg_with_every_series_and_kill_marks() {
        let s = [
            Series { name: "a<b", color: "#000", points: vec![(0.0, 1.0), (1.0, 2.0)], marks: vec![0.5] },
            Series { name: "c", color: "#111", points: vec![(0.5, 0.5)], marks: vec![] },
        ];
        let svg = line_chart("t", "x", "y", &s, false, true, None);
        assert!(svg.contains("<svg") && svg.ends_with("</svg></figure>"));
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("a&lt;b"), "names are escaped");
        assert!(svg.contains("a kill at"), "kills are marked");
        let empty = line_chart("t", "x", "y", &[], true, false, Some(100.0));
        assert!(empty.contains("no data"));
        let k = kills_chart(&[("m".into(), "#000")], &[3.0], &[1.0], &[2]);
        assert!(
            k.contains(">3<") && k.contains(">1<") && k.contains(">4<") && k.contains("(2×)"),
            "counts written, and the total: {k}"
        );
        assert!(k.contains("url(#hatch)"), "the kernel's kills hatched");
    }
}
