//! `report.html`: warnings first (failed visits, stopped and interrupted runs), the devices,
//! the summary table with every figure of the terminal table and more, each with its spread
//! over runs (a difference within the spread of the best is greyed as not significant), and
//! charts: available memory and live apps over time with kills marked, the visit-latency
//! distribution, kills by class and killer with counts. One colour per manager throughout;
//! inline SVG drawn here: one self-contained file, no fonts or libraries needed.

use crate::report::{num, Figure, Summary};
use crate::results::{RunResult, Sample};
use crate::scenario::Scenario;
use memorch_core::Class;
use std::fmt::Write;

/// One colour a manager, in the order they ran (Tableau 10, then darker variants).
const COLORS: [&str; 14] = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#2b5c8a", "#b35806", "#1b7837", "#762a83"];
/// One colour a class, least important (empty) lightest.
const CLASS_COLORS: [(Class, &str); 8] = [
    (Class::Foreground, "#b2182b"),
    (Class::Visible, "#d6604d"),
    (Class::Perceptible, "#f4a582"),
    (Class::Service, "#92c5de"),
    (Class::Home, "#6baed6"),
    (Class::Previous, "#4393c3"),
    (Class::Cached, "#2166ac"),
    (Class::Empty, "#053061"),
];
const W: f64 = 960.0;
const H: f64 = 320.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 190.0;
const TOP: f64 = 36.0;
const BOTTOM: f64 = 48.0;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Tick values from 0 to at least `max`: steps of 1, 2 or 5 × 10^k, whole numbers when
/// `integer` (counts), about `n` of them.
pub fn ticks(max: f64, n: usize, integer: bool) -> Vec<f64> {
    let max = if max.is_finite() && max > 0.0 { max } else { 1.0 };
    let raw = max / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let mut step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(10.0 * mag);
    if integer {
        step = step.max(1.0).round();
    }
    let count = (max / step).ceil() as usize;
    (0..=count).map(|i| i as f64 * step).collect()
}

fn fmt_tick(v: f64) -> String {
    if v >= 1000.0 && v % 1000.0 == 0.0 {
        format!("{}k", v / 1000.0)
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
    let _ = write!(o, r#"<figure><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" role="img" aria-label="{0}" font-family="sans-serif" font-size="12"><text x="{LEFT}" y="20" font-size="15" font-weight="bold">{0}</text>"#, esc(title));
}

/// Axes, grid lines and tick labels; `xs`, `ys` the tick values.
fn axes(o: &mut String, f: &Frame, xs: &[f64], ys: &[f64], x_label: &str, y_label: &str) {
    for &y in ys {
        let _ = write!(o, r##"<line x1="{LEFT}" y1="{0:.1}" x2="{1}" y2="{0:.1}" stroke="#e4e4e4"/><text x="{2}" y="{3:.1}" text-anchor="end">{4}</text>"##, f.sy(y), W - RIGHT, LEFT - 6.0, f.sy(y) + 4.0, fmt_tick(y));
    }
    for &x in xs {
        let _ = write!(o, r##"<line x1="{0:.1}" y1="{1}" x2="{0:.1}" y2="{2}" stroke="#999"/><text x="{0:.1}" y="{3}" text-anchor="middle">{4}</text>"##, f.sx(x), H - BOTTOM, H - BOTTOM + 4.0, H - BOTTOM + 17.0, fmt_tick(x));
    }
    let _ = write!(o, r##"<line x1="{LEFT}" y1="{0}" x2="{1}" y2="{0}" stroke="#333"/><line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{0}" stroke="#333"/>"##, H - BOTTOM, W - RIGHT);
    let _ = write!(o, r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#, LEFT + (W - LEFT - RIGHT) / 2.0, H - 10.0, esc(x_label));
    let _ = write!(o, r#"<text x="16" y="{0}" transform="rotate(-90 16 {0})" text-anchor="middle">{1}</text>"#, TOP + (H - TOP - BOTTOM) / 2.0, esc(y_label));
}

/// The legend at the right: (label, colour, marker) rows.
fn legend(o: &mut String, rows: &[(String, &str)]) {
    for (i, (label, c)) in rows.iter().enumerate() {
        let y = TOP + 4.0 + 18.0 * i as f64;
        let _ = write!(o, r#"<rect x="{}" y="{y}" width="12" height="12" fill="{c}"/><text x="{}" y="{}">{}</text>"#, W - RIGHT + 14.0, W - RIGHT + 32.0, y + 10.5, esc(label));
    }
}

/// A line a manager, over time or a distribution; `marks` are x positions of events (kills)
/// drawn as ticks on the line.
pub struct Series<'a> {
    pub name: &'a str,
    pub color: &'a str,
    pub points: Vec<(f64, f64)>,
    pub marks: Vec<f64>,
}

pub fn line_chart(title: &str, x_label: &str, y_label: &str, series: &[Series], log_x: bool, integer_y: bool, y_max: Option<f64>) -> String {
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
    let xs: Vec<f64> = if log_x { (x0.log10() as i32..=x1.log10() as i32).map(|e| 10f64.powi(e)).collect() } else { ticks(x1, 8, true) };
    let f = Frame { x0, x1: x1.max(x0 + 1e-9), y1: *ys.last().unwrap_or(&1.0), log_x };
    let mut o = String::new();
    open_chart(&mut o, title);
    axes(&mut o, &f, &xs, &ys, x_label, y_label);
    if series.iter().all(|s| s.points.is_empty()) {
        let _ = write!(o, r##"<text x="{}" y="{}" text-anchor="middle" fill="#b00">no data: no visit was served</text>"##, W / 2.0, H / 2.0);
    }
    for s in series {
        let path: Vec<String> = s.points.iter().map(|&(x, y)| format!("{:.1},{:.1}", f.sx(x), f.sy(y))).collect();
        let _ = write!(o, r#"<polyline fill="none" stroke="{}" stroke-width="2" points="{}"><title>{}</title></polyline>"#, s.color, path.join(" "), esc(s.name));
        for &m in &s.marks {
            let y = value_at(&s.points, m);
            let _ = write!(o, r#"<path d="M{0:.1},{1:.1} l-5,-9 h10 z" fill="{2}" stroke="white" stroke-width="0.8"><title>{3}: a kill at {4:.0} s</title></path>"#, f.sx(m), f.sy(y) - 2.0, s.color, esc(s.name), m);
        }
    }
    let rows: Vec<(String, &str)> = series.iter().map(|s| (s.name.to_string(), s.color)).collect();
    legend(&mut o, &rows);
    if series.iter().any(|s| !s.marks.is_empty()) {
        let y = TOP + 10.0 + 18.0 * rows.len() as f64;
        let _ = write!(o, r##"<path d="M{0},{1} l-5,-9 h10 z" fill="#555"/><text x="{2}" y="{1}">a kill</text>"##, W - RIGHT + 20.0, y + 6.0, W - RIGHT + 32.0);
    }
    o.push_str("</svg></figure>");
    o
}

/// The series' value at x (the last point at or before it).
fn value_at(points: &[(f64, f64)], x: f64) -> f64 {
    points.iter().take_while(|p| p.0 <= x).last().or(points.first()).map_or(0.0, |p| p.1)
}

/// Kills per manager: two stacked bars (by the manager, by the kernel), one segment a class,
/// counts written on the segments and the totals above.
pub fn kills_chart(managers: &[(String, &str)], counts: &[[Vec<(Class, f64)>; 2]], runs: &[usize]) -> String {
    let top = counts.iter().flat_map(|c| c.iter().map(|v| v.iter().map(|x| x.1).sum::<f64>())).fold(0.0, f64::max);
    let ys = ticks(top, 5, true);
    let f = Frame { x0: 0.0, x1: 1.0, y1: *ys.last().unwrap_or(&1.0), log_x: false };
    let mut o = String::new();
    open_chart(&mut o, "Kills by killer and class (totals over all runs)");
    axes(&mut o, &f, &[], &ys, "", "kills");
    let slot = (W - LEFT - RIGHT) / managers.len().max(1) as f64;
    let bw = (slot * 0.32).min(34.0);
    for (i, ((name, color), by)) in managers.iter().zip(counts).enumerate() {
        let cx = LEFT + slot * (i as f64 + 0.5);
        for (k, stack) in by.iter().enumerate() {
            let x = cx + if k == 0 { -bw - 2.0 } else { 2.0 };
            let mut base = 0.0;
            for (class, n) in stack.iter().filter(|x| x.1 > 0.0) {
                let (y_top, y_bot) = (f.sy(base + n), f.sy(base));
                let c = CLASS_COLORS.iter().find(|(c, _)| c == class).map_or("#888", |x| x.1);
                let _ = write!(o, r#"<rect x="{x:.1}" y="{y_top:.1}" width="{bw:.1}" height="{:.1}" fill="{c}"><title>{} kills by {}: {} {class}</title></rect>"#, y_bot - y_top, esc(name), if k == 0 { "the manager" } else { "the kernel" }, num(*n));
                if y_bot - y_top >= 13.0 {
                    let _ = write!(o, r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="white" font-size="11">{}</text>"#, x + bw / 2.0, (y_top + y_bot) / 2.0 + 4.0, num(*n));
                }
                base += n;
            }
            let _ = write!(o, r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="11">{}</text>"#, x + bw / 2.0, f.sy(base) - 4.0, num(base));
            let _ = write!(o, r##"<text x="{:.1}" y="{}" text-anchor="middle" font-size="10" fill="#555">{}</text>"##, x + bw / 2.0, H - BOTTOM + 13.0, if k == 0 { "mgr" } else { "kernel" });
        }
        let _ = write!(o, r#"<rect x="{:.1}" y="{}" width="10" height="10" fill="{color}"/><text x="{:.1}" y="{}" text-anchor="start">{} ({}×)</text>"#, cx - 40.0, H - BOTTOM + 22.0, cx - 27.0, H - BOTTOM + 31.0, esc(&short(name)), runs[i]);
    }
    let rows: Vec<(String, &str)> = CLASS_COLORS.iter().map(|(c, col)| (c.name().to_string(), *col)).collect();
    legend(&mut o, &rows);
    o.push_str("</svg></figure>");
    o
}

fn short(name: &str) -> String {
    if name.chars().count() > 18 { format!("{}…", name.chars().take(17).collect::<String>()) } else { name.to_string() }
}

/// Whether lower is better for a column (`Some(true)`), higher (`Some(false)`), or neither.
type Col = (&'static str, Option<bool>, fn(&Summary) -> Option<Figure>);

const TABLE: [Col; 28] = [
    ("hot", Some(false), |s| Some(s.hot)),
    ("warm", None, |s| Some(s.warm)),
    ("cold", Some(true), |s| Some(s.cold)),
    ("failed", Some(true), |s| Some(s.failed)),
    ("alive", Some(false), |s| Some(s.live_apps_mean)),
    ("p50 ms", Some(true), |s| s.latency_p50_ms),
    ("p95 ms", Some(true), |s| s.latency_p95_ms),
    ("return p50 ms", Some(true), |s| s.return_p50_ms),
    ("warm p50 ms", Some(true), |s| s.warm_p50_ms),
    ("cold p50 ms", Some(true), |s| s.cold_p50_ms),
    ("jank %", Some(true), |s| s.jank_pct),
    ("frame p95 ms", Some(true), |s| s.frame_p95_ms),
    ("idle avail MiB", Some(false), |s| s.idle_available_mib),
    ("kills by manager", Some(true), |s| Some(s.kills_by_manager)),
    ("kills by kernel", Some(true), |s| Some(s.kills_by_kernel)),
    ("fg kills", Some(true), |s| Some(s.foreground_kills)),
    ("file refaults", Some(true), |s| Some(s.refault_file_pages)),
    ("anon refaults", Some(true), |s| Some(s.refault_anon_pages)),
    ("swap-ins", Some(true), |s| s.swap_in_pages),
    ("swap-outs", None, |s| s.swap_out_pages),
    ("refault ratio", Some(true), |s| s.refault_ratio),
    ("PSI some s", Some(true), |s| Some(s.psi_some_s)),
    ("PSI full s", Some(true), |s| Some(s.psi_full_s)),
    ("zram ratio", Some(false), |s| s.zram_ratio),
    ("KSM saved MiB", Some(false), |s| Some(s.ksm_saved_mib)),
    ("CPU s", Some(true), |s| Some(s.manager_cpu_s)),
    ("RSS MiB", Some(true), |s| Some(s.manager_rss_mib)),
    ("runs", None, |s| Some(Figure { median: s.runs as f64, min: s.runs as f64, max: s.runs as f64 })),
];

fn summary_table(o: &mut String, sums: &[Summary], color: &dyn Fn(&str) -> &'static str) {
    let repeated = sums.iter().all(|s| s.runs > 1);
    o.push_str(r#"<div class="scroll"><table><thead><tr><th class="l">manager</th>"#);
    for (h, _, _) in TABLE {
        let _ = write!(o, "<th>{h}</th>");
    }
    o.push_str("</tr></thead><tbody>");
    for s in sums {
        let _ = write!(o, r#"<tr><td class="l"><span class="sw" style="background:{}"></span>{}</td>"#, color(&s.manager), esc(&s.manager));
        if s.empty_runs == s.runs {
            let _ = write!(o, r#"<td colspan="{}" class="bad l">no visit served in any run: every launch failed (see the warnings above)</td></tr>"#, TABLE.len());
            continue;
        }
        for (_, lower, f) in TABLE {
            let Some(v) = f(s) else {
                o.push_str("<td>–</td>");
                continue;
            };
            // The best manager's figure, and whether this one is within its spread.
            let others: Vec<Figure> = sums.iter().filter(|x| x.empty_runs < x.runs).filter_map(f).collect();
            let best = lower.and_then(|low| others.iter().copied().reduce(|a, b| if (b.median < a.median) == low && b.median != a.median { b } else { a }));
            let class = match best {
                Some(b) if b == v => " class=\"best\"",
                Some(b) if repeated && v.overlaps(&b) => " class=\"ns\" title=\"within the spread of the best: not significant\"",
                _ => "",
            };
            let spread = if s.runs > 1 { format!("<small>{}–{}</small>", num(v.min), num(v.max)) } else { String::new() };
            let _ = write!(o, "<td{class}>{}{spread}</td>", num(v.median));
        }
        o.push_str("</tr>");
    }
    o.push_str("</tbody></table></div>");
}

fn warnings(o: &mut String, sums: &[Summary], runs: &[RunResult], stopped: Option<&str>) {
    let mut w: Vec<String> = Vec::new();
    if let Some(s) = stopped {
        w.push(format!("<b>The bench stopped early:</b> {}", esc(s)));
    }
    for r in runs.iter().filter(|r| r.failed() > 0) {
        let first = r.visits.iter().find_map(|v| v.error.as_deref()).unwrap_or("");
        let first = first.lines().next().unwrap_or("");
        w.push(format!("<b>{}</b> (seed {}): {} of {} visits failed; the first: {} <small>(logs: {})</small>", esc(&r.manager), r.seed, r.failed(), r.visits.len(), esc(first), esc(&r.log_dir)));
    }
    for r in runs.iter().filter(|r| r.interrupted) {
        w.push(format!("<b>{}</b> (seed {}): interrupted (Ctrl-C) after {} visits; its figures cover only those.", esc(&r.manager), r.seed, r.visits.len()));
    }
    for s in sums.iter().filter(|s| s.empty_runs > 0) {
        w.push(format!("<b>{}</b>: {} of {} runs served no visit at all; their figures are not results.", esc(&s.manager), s.empty_runs, s.runs));
    }
    if !w.is_empty() {
        let _ = write!(o, r#"<div class="warn"><h2>Warnings</h2><ul><li>{}</li></ul></div>"#, w.join("</li><li>"));
    }
}

fn devices(o: &mut String, managers: &[String], runs: &[RunResult], color: &dyn Fn(&str) -> &'static str) {
    o.push_str(r#"<h2>Devices</h2><table class="small"><tr><th class="l">manager</th><th>RAM</th><th>zram</th><th>algorithm</th><th>runs</th><th>seeds</th></tr>"#);
    for m in managers {
        let rs: Vec<&RunResult> = runs.iter().filter(|r| &r.manager == m).collect();
        let d = &rs[0].device;
        let mib = |b: u64| format!("{} MiB", b >> 20);
        let seeds: Vec<String> = rs.iter().map(|r| r.seed.to_string()).collect();
        let _ = write!(
            o,
            r#"<tr><td class="l"><span class="sw" style="background:{}"></span>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
            color(m),
            esc(m),
            mib(d.ram_bytes),
            if d.zram_bytes == 0 { "none".into() } else { mib(d.zram_bytes) },
            if d.zram_bytes == 0 { "–" } else { d.zram_algorithm.as_str() },
            rs.len(),
            seeds.join(", ")
        );
    }
    o.push_str("</table>");
}

const STYLE: &str = "body{font-family:sans-serif;max-width:1280px;margin:1.5em auto;padding:0 1em;color:#222}\
h1{margin-bottom:.2em}h2{margin-top:1.6em;font-size:1.15em}\
.scroll{overflow-x:auto}table{border-collapse:collapse;font-size:12px}\
td,th{border:1px solid #ccc;padding:3px 6px;text-align:right;white-space:nowrap;vertical-align:top}\
th{background:#f3f3f3;white-space:normal;min-width:3.2em}.l{text-align:left}\
td small{display:block;color:#777;font-size:10px}.best{font-weight:bold}.ns{color:#999}\
.sw{display:inline-block;width:10px;height:10px;margin-right:5px}\
.warn{border:2px solid #c33;background:#fff3f3;padding:.2em 1em}.warn h2{color:#b00;margin-top:.5em}\
.bad{color:#b00;font-weight:bold}figure{margin:1.2em 0}svg{width:100%;height:auto;max-width:960px}\
p.note{color:#555;font-size:13px}";

/// The whole report.
pub fn report(scenario: &Scenario, sums: &[Summary], runs: &[RunResult], stopped: Option<&str>) -> String {
    let managers: Vec<String> = sums.iter().map(|s| s.manager.clone()).collect();
    let color = |m: &str| COLORS[managers.iter().position(|x| x == m).unwrap_or(0) % COLORS.len()];
    let mut o = String::new();
    let _ = write!(o, "<!doctype html><html><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>memorch bench: {0}</title><style>{STYLE}</style></head><body><h1>memorch bench: {0}</h1><p>{1}</p>", esc(&scenario.name), esc(&scenario.description));
    warnings(&mut o, sums, runs, stopped);
    if runs.is_empty() {
        o.push_str("<p class=\"bad\">No run finished: there is nothing to report.</p></body></html>\n");
        return o;
    }
    devices(&mut o, &managers, runs, &color);
    o.push_str("<h2>Summary</h2>");
    summary_table(&mut o, sums, &color);
    let note = if sums.iter().all(|s| s.runs > 1) {
        "Medians over runs, the min–max spread under each. Bold: the best; grey: within the best's spread, so not a significant difference."
    } else {
        "One run per manager: no spread to judge differences by (run with --repeat 3 for that). Bold: the best."
    };
    let _ = write!(o, "<p class=\"note\">{note} Refaults and swap traffic in pages of 4 KiB; PSI in seconds of stall of the device's group; CPU and RSS are the manager's own.</p>");
    charts(&mut o, &managers, runs, &color);
    o.push_str("</body></html>\n");
    o
}

fn charts(o: &mut String, managers: &[String], runs: &[RunResult], color: &dyn Fn(&str) -> &'static str) {
    let first = |m: &str| runs.iter().find(|r| r.manager == m);
    let timeline = |f: fn(&Sample) -> f64| -> Vec<Series> {
        managers
            .iter()
            .filter_map(|m| first(m).map(|r| (m, r)))
            .map(|(m, r)| Series { name: m, color: color(m), points: r.timeline.iter().map(|s| (s.at_ms as f64 / 1000.0, f(s))).collect(), marks: r.kills.iter().map(|k| k.at_ms as f64 / 1000.0).collect() })
            .collect()
    };
    o.push_str("<h2>Over time <small>(each manager's first run; ▼ a kill)</small></h2>");
    let ram_mib = runs.iter().map(|r| r.device.ram_bytes >> 20).max().unwrap_or(0) as f64;
    o.push_str(&line_chart("Available memory", "seconds", "MiB available", &timeline(|s| s.available_bytes as f64 / (1 << 20) as f64), false, false, Some(ram_mib.max(1.0))));
    let apps = runs.iter().flat_map(|r| r.timeline.iter().map(|s| s.live_apps)).max().unwrap_or(1) as f64;
    o.push_str(&line_chart("Live apps", "seconds", "apps alive", &timeline(|s| s.live_apps as f64), false, true, Some(apps)));
    o.push_str("<h2>Visit latency <small>(all runs, served visits)</small></h2>");
    let cdf: Vec<Series> = managers
        .iter()
        .map(|m| {
            let mut l: Vec<f64> = runs.iter().filter(|r| &r.manager == m).flat_map(|r| r.visits.iter().filter(|v| v.served()).map(|v| v.latency_ms.max(0.01))).collect();
            l.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
            let n = l.len().max(1) as f64;
            Series { name: m, color: color(m), points: l.iter().enumerate().map(|(i, &x)| (x, (i + 1) as f64 / n * 100.0)).collect(), marks: vec![] }
        })
        .collect();
    o.push_str(&line_chart("Share of visits served within a latency", "ms (log scale)", "% of visits", &cdf, true, false, Some(100.0)));
    o.push_str("<h2>Kills</h2>");
    let counts: Vec<[Vec<(Class, f64)>; 2]> = managers
        .iter()
        .map(|m| {
            let by = |kernel: bool| {
                CLASS_COLORS.iter().map(|(c, _)| (*c, runs.iter().filter(|r| &r.manager == m).flat_map(|r| &r.kills).filter(|k| k.by_kernel() == kernel && k.class == *c).count() as f64)).collect()
            };
            [by(false), by(true)]
        })
        .collect();
    let named: Vec<(String, &str)> = managers.iter().map(|m| (m.clone(), color(m))).collect();
    let n_runs: Vec<usize> = managers.iter().map(|m| runs.iter().filter(|r| &r.manager == m).count()).collect();
    o.push_str(&kills_chart(&named, &counts, &n_runs));
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
        assert_eq!(ticks(1234.0, 5, false), vec![0.0, 500.0, 1000.0, 1500.0]);
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
        let k = kills_chart(&[("m".into(), "#000")], &[[vec![(Class::Cached, 3.0)], vec![(Class::Foreground, 1.0)]]], &[2]);
        assert!(k.contains(">3<") && k.contains(">1<") && k.contains("(2×)"), "counts written: {k}");
    }
}
