//! `report.html`: the summary table and charts (free memory and live apps over time, visit
//! latency distribution, kills by whom), as inline SVG drawn here: one self-contained file,
//! no fonts or libraries needed to make or to view it.

use crate::driver::RunResult;
use crate::report::Summary;
use std::fmt::Write;

const COLORS: [&str; 8] = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#9c755f"];
const W: f64 = 720.0;
const H: f64 = 300.0;
const PAD: f64 = 50.0;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A line chart of `series` (name, points); `log_x` for latencies.
pub fn line_chart(title: &str, x_label: &str, y_label: &str, series: &[(String, Vec<(f64, f64)>)], log_x: bool) -> String {
    let tx = |x: f64| if log_x { x.max(0.01).log10() } else { x };
    let pts = series.iter().flat_map(|(_, p)| p.iter());
    let (mut x0, mut x1, mut y1) = (f64::MAX, f64::MIN, 0.0f64);
    for &(x, y) in pts {
        x0 = x0.min(tx(x));
        x1 = x1.max(tx(x));
        y1 = y1.max(y);
    }
    if x0 >= x1 {
        (x0, x1) = (0.0, 1.0);
    }
    let y1 = if y1 <= 0.0 { 1.0 } else { y1 * 1.05 };
    let sx = |x: f64| PAD + (tx(x) - x0) / (x1 - x0) * (W - 2.0 * PAD);
    let sy = |y: f64| H - PAD + -(y / y1) * (H - 2.0 * PAD);
    let mut o = String::new();
    let _ = write!(o, r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="11">"#);
    let _ = write!(o, r#"<text x="{}" y="18" font-size="14" text-anchor="middle">{}</text>"#, W / 2.0, esc(title));
    let _ = write!(o, r##"<line x1="{PAD}" y1="{}" x2="{}" y2="{}" stroke="#333"/><line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{}" stroke="#333"/>"##, H - PAD, W - PAD, H - PAD, H - PAD);
    for i in 0..=4 {
        let y = y1 * i as f64 / 4.0;
        let _ = write!(o, r##"<text x="{}" y="{}" text-anchor="end">{}</text><line x1="{PAD}" y1="{}" x2="{}" y2="{}" stroke="#eee"/>"##, PAD - 4.0, sy(y) + 4.0, fmt(y), sy(y), W - PAD, sy(y));
        let xv = x0 + (x1 - x0) * i as f64 / 4.0;
        let shown = if log_x { 10f64.powf(xv) } else { xv };
        let _ = write!(o, r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#, PAD + (W - 2.0 * PAD) * i as f64 / 4.0, H - PAD + 14.0, fmt(shown));
    }
    let _ = write!(o, r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#, W / 2.0, H - 12.0, esc(x_label));
    let _ = write!(o, r#"<text x="12" y="{}" transform="rotate(-90 12 {})" text-anchor="middle">{}</text>"#, H / 2.0, H / 2.0, esc(y_label));
    for (i, (name, p)) in series.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        let path: Vec<String> = p.iter().map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y))).collect();
        let _ = write!(o, r#"<polyline fill="none" stroke="{c}" stroke-width="1.8" points="{}"><title>{}</title></polyline>"#, path.join(" "), esc(name));
        let _ = write!(o, r#"<rect x="{}" y="{}" width="10" height="10" fill="{c}"/><text x="{}" y="{}">{}</text>"#, W - PAD + 5.0 - 110.0, 30.0 + 14.0 * i as f64, W - PAD + 18.0 - 110.0, 39.0 + 14.0 * i as f64, esc(name));
    }
    o.push_str("</svg>");
    o
}

/// Stacked bars: one bar a category, one colour a stack.
pub fn bar_chart(title: &str, categories: &[String], stacks: &[(&str, Vec<f64>)]) -> String {
    let top = (0..categories.len()).map(|i| stacks.iter().map(|(_, v)| v[i]).sum::<f64>()).fold(1.0f64, f64::max) * 1.1;
    let bw = (W - 2.0 * PAD) / categories.len().max(1) as f64;
    let mut o = String::new();
    let _ = write!(o, r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="11">"#);
    let _ = write!(o, r#"<text x="{}" y="18" font-size="14" text-anchor="middle">{}</text>"#, W / 2.0, esc(title));
    for (i, cat) in categories.iter().enumerate() {
        let mut base = 0.0;
        for (k, (label, v)) in stacks.iter().enumerate() {
            let h = v[i] / top * (H - 2.0 * PAD);
            let y = H - PAD - base - h;
            let _ = write!(o, r#"<rect x="{:.1}" y="{y:.1}" width="{:.1}" height="{h:.1}" fill="{}"><title>{} {}: {}</title></rect>"#, PAD + bw * i as f64 + bw * 0.15, bw * 0.7, COLORS[k % COLORS.len()], esc(cat), label, v[i]);
            base += h;
        }
        let _ = write!(o, r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#, PAD + bw * (i as f64 + 0.5), H - PAD + 14.0, esc(cat));
    }
    for (k, (label, _)) in stacks.iter().enumerate() {
        let _ = write!(o, r#"<rect x="{}" y="{}" width="10" height="10" fill="{}"/><text x="{}" y="{}">{}</text>"#, W - PAD - 110.0, 30.0 + 14.0 * k as f64, COLORS[k % COLORS.len()], W - PAD - 96.0, 39.0 + 14.0 * k as f64, label);
    }
    o.push_str("</svg>");
    o
}

fn fmt(v: f64) -> String {
    if v.abs() >= 100.0 || v == 0.0 { format!("{v:.0}") } else { format!("{v:.2}") }
}

/// The whole report.
pub fn report(scenario: &str, sums: &[Summary], runs: &[RunResult]) -> String {
    let first = |m: &str| runs.iter().find(|r| r.manager == m);
    let managers: Vec<String> = sums.iter().map(|s| s.manager.clone()).collect();
    let series = |f: &dyn Fn(&crate::driver::Sample) -> f64| -> Vec<(String, Vec<(f64, f64)>)> {
        managers.iter().filter_map(|m| first(m).map(|r| (m.clone(), r.timeline.iter().map(|s| (s.at_ms as f64 / 1000.0, f(s))).collect()))).collect()
    };
    let cdf: Vec<(String, Vec<(f64, f64)>)> = managers
        .iter()
        .map(|m| {
            let mut l: Vec<f64> = runs.iter().filter(|r| r.manager == *m).flat_map(|r| r.visits.iter().filter(|v| v.kind != "failed").map(|v| v.latency_ms)).collect();
            l.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
            let n = l.len().max(1) as f64;
            (m.clone(), l.iter().enumerate().map(|(i, &x)| (x, (i + 1) as f64 / n * 100.0)).collect())
        })
        .collect();
    let mut o = String::new();
    let _ = write!(o, "<!doctype html><html><head><meta charset=\"utf-8\"><title>memorch bench: {0}</title><style>body{{font-family:sans-serif;max-width:780px;margin:2em auto}}table{{border-collapse:collapse;font-size:12px}}td,th{{border:1px solid #ccc;padding:3px 6px;text-align:right}}th{{background:#f4f4f4}}</style></head><body><h1>memorch bench: {0}</h1>", esc(scenario));
    o.push_str("<table><tr><th>manager</th><th>runs</th><th>hot/warm/cold</th><th>alive</th><th>p50 ms</th><th>p95 ms</th><th>cold p50 ms</th><th>kills manager/kernel/fg</th><th>refaults</th><th>PSI some s</th><th>PSI full s</th><th>zram ratio</th><th>CPU s</th><th>RSS MiB</th></tr>");
    for s in sums {
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}/{}/{}</td><td>{:.1}</td><td>{:.1}</td><td>{:.1}</td><td>{:.1}</td><td>{}/{}/{}</td><td>{:.0}</td><td>{:.1}</td><td>{:.1}</td><td>{}</td><td>{:.2}</td><td>{:.1}</td></tr>",
            esc(&s.manager), s.runs, s.hot, s.warm, s.cold, s.live_apps_mean, s.latency_p50_ms, s.latency_p95_ms, s.cold_p50_ms, s.kills_by_manager, s.kills_by_kernel, s.foreground_kills, s.refault_pages, s.psi_some_s, s.psi_full_s, s.zram_ratio.map_or("-".into(), |r| format!("{r:.2}")), s.manager_cpu_s, s.manager_rss_mib
        );
    }
    o.push_str("</table><p>Charts show each manager's first run.</p>");
    o.push_str(&line_chart("Available memory over time", "seconds", "MiB available", &series(&|s| s.available_bytes as f64 / (1 << 20) as f64), false));
    o.push_str(&line_chart("Live apps over time", "seconds", "apps alive", &series(&|s| s.live_apps as f64), false));
    o.push_str(&line_chart("Visit latency (all visits)", "ms (log scale)", "% of visits at most", &cdf, true));
    o.push_str(&bar_chart("Kills", &managers, &[("by the manager", sums.iter().map(|s| s.kills_by_manager).collect()), ("by the kernel", sums.iter().map(|s| s.kills_by_kernel).collect())]));
    o.push_str("</body></html>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_are_svg_with_every_series() {
        let s = line_chart("t", "x", "y", &[("a<b".into(), vec![(0.0, 1.0), (1.0, 2.0)]), ("c".into(), vec![(0.5, 0.5)])], false);
        assert!(s.starts_with("<svg") && s.ends_with("</svg>"));
        assert_eq!(s.matches("<polyline").count(), 2);
        assert!(s.contains("a&lt;b"), "names are escaped");
        let b = bar_chart("k", &["m1".into(), "m2".into()], &[("x", vec![1.0, 2.0]), ("y", vec![0.0, 3.0])]);
        assert_eq!(b.matches("<rect").count(), 4 + 2);
        let empty = line_chart("t", "x", "y", &[], true);
        assert!(empty.contains("</svg>"));
    }
}
