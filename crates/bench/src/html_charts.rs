//! report.html's charts: over time (each manager's first run), the latency of visits, and the kills by whom and of
//! which class.

use crate::charts::{esc, kills_chart, line_chart, Series};
use crate::results::{RunResult, Sample};
use memorch_core::Class;
use std::fmt::Write;

/// Kills by killer and class, counted over all runs, as a table.
fn kills_table(o: &mut String, managers: &[String], runs: &[RunResult], color: &dyn Fn(&str) -> &'static str) {
    let classes: Vec<Class> =
        Class::ALL[1..].iter().copied().filter(|c| runs.iter().flat_map(|r| &r.kills).any(|k| k.class == *c)).collect();
    if classes.is_empty() {
        o.push_str("<p>No app was killed in any run.</p>");
        return;
    }
    o.push_str(r#"<table class="small"><tr><th class="l">manager</th><th class="l">killer</th>"#);
    for c in &classes {
        let _ = write!(o, "<th>{c}</th>");
    }
    o.push_str("<th>all</th></tr>");
    for m in managers {
        // `kernel` is no manager: all its kills are the kernel's.
        let killers: &[bool] = if m == "kernel" { &[true] } else { &[false, true] };
        for &kernel in killers {
            let ks: Vec<&crate::results::Kill> = runs
                .iter()
                .filter(|r| &r.manager == m)
                .flat_map(|r| &r.kills)
                .filter(|k| k.by_kernel() == kernel)
                .collect();
            let who = if kernel { "the kernel's OOM killer" } else { "the manager" };
            let _ = write!(
                o,
                r#"<tr><td class="l"><span class="sw" style="background:{}"></span>{}</td><td class="l">{who}</td>"#,
                color(m),
                esc(m)
            );
            for c in &classes {
                let n = ks.iter().filter(|k| k.class == *c).count();
                let _ = write!(
                    o,
                    "<td{}>{n}</td>",
                    if n > 0 && (*c == Class::Foreground || kernel) { " class=\"bad\"" } else { "" }
                );
            }
            let _ = write!(o, "<td>{}</td></tr>", ks.len());
        }
    }
    o.push_str("</table>");
}

/// The share of visits served within each latency, per manager (all runs).
fn latency_chart(o: &mut String, managers: &[String], runs: &[RunResult], color: &dyn Fn(&str) -> &'static str) {
    o.push_str("<h2>Visit latency <small>(all runs, served visits)</small></h2>");
    let cdf: Vec<Series> = managers
        .iter()
        .map(|m| {
            let mut l: Vec<f64> = runs
                .iter()
                .filter(|r| &r.manager == m)
                .flat_map(|r| r.visits.iter().filter(|v| v.served()).map(|v| v.latency_ms.max(0.01)))
                .collect();
            l.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
            let n = l.len().max(1) as f64;
            Series {
                name: m,
                color: color(m),
                points: l.iter().enumerate().map(|(i, &x)| (x, (i + 1) as f64 / n * 100.0)).collect(),
                marks: vec![],
            }
        })
        .collect();
    o.push_str(&line_chart(
        "Share of visits served within a latency",
        "ms (log scale)",
        "% of visits",
        &cdf,
        true,
        false,
        Some(100.0),
    ));
}

/// Kills by whom and of which class, per manager (all runs).
fn kills_charts(o: &mut String, managers: &[String], runs: &[RunResult], color: &dyn Fn(&str) -> &'static str) {
    o.push_str("<h2>Kills</h2>");
    let named: Vec<(String, &str)> = managers.iter().map(|m| (m.clone(), color(m))).collect();
    let count = |m: &String, kernel: bool| {
        runs.iter().filter(|r| &r.manager == m).flat_map(|r| &r.kills).filter(|k| k.by_kernel() == kernel).count()
            as f64
    };
    let by_manager: Vec<f64> = managers.iter().map(|m| count(m, false)).collect();
    let by_kernel: Vec<f64> = managers.iter().map(|m| count(m, true)).collect();
    let n_runs: Vec<usize> = managers.iter().map(|m| runs.iter().filter(|r| &r.manager == m).count()).collect();
    o.push_str(&kills_chart(&named, &by_manager, &by_kernel, &n_runs));
    o.push_str("<p class=\"note\">By class of the app killed (red: the foreground, or the kernel's OOM killer, which a manager exists to prevent):</p>");
    kills_table(o, managers, runs, color);
}

pub fn charts(o: &mut String, managers: &[String], runs: &[RunResult], color: &dyn Fn(&str) -> &'static str) {
    let first = |m: &str| runs.iter().find(|r| r.manager == m);
    let timeline = |f: fn(&Sample) -> f64| -> Vec<Series> {
        managers
            .iter()
            .filter_map(|m| first(m).map(|r| (m, r)))
            .map(|(m, r)| Series {
                name: m,
                color: color(m),
                points: r.timeline.iter().map(|s| (s.at_ms as f64 / 1000.0, f(s))).collect(),
                marks: r.kills.iter().map(|k| k.at_ms as f64 / 1000.0).collect(),
            })
            .collect()
    };
    o.push_str("<h2>Over time <small>(each manager's first run; ▼ a kill)</small></h2>");
    let ram_mib = runs.iter().map(|r| r.device.ram_bytes >> 20).max().unwrap_or(0) as f64;
    o.push_str(&line_chart(
        "Available memory",
        "seconds",
        "MiB available",
        &timeline(|s| s.available_bytes as f64 / (1 << 20) as f64),
        false,
        false,
        Some(ram_mib.max(1.0)),
    ));
    let apps = runs.iter().flat_map(|r| r.timeline.iter().map(|s| s.live_apps)).max().unwrap_or(1) as f64;
    o.push_str(&line_chart(
        "Live apps",
        "seconds",
        "apps alive",
        &timeline(|s| s.live_apps as f64),
        false,
        true,
        Some(apps),
    ));
    latency_chart(o, managers, runs, color);
    kills_charts(o, managers, runs, color);
}
