//! Summaries of runs, per manager: the terminal table and what `results.json` holds.

use crate::driver::RunResult;
use memorch_core::Class;
use serde::Serialize;
use std::fmt::Write;

#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub manager: String,
    pub runs: usize,
    /// Medians over the runs.
    pub hot: f64,
    pub warm: f64,
    pub cold: f64,
    pub failed: f64,
    /// Over every visit of every run.
    pub latency_p50_ms: f64,
    pub latency_p95_ms: f64,
    pub cold_p50_ms: f64,
    /// Medians over the runs.
    pub kills_by_memorch: f64,
    pub kills_by_kernel: f64,
    pub foreground_kills: f64,
    pub refault_pages: f64,
    pub psi_some_s: f64,
    pub psi_full_s: f64,
    pub zram_ratio: Option<f64>,
    pub manager_cpu_s: f64,
    pub manager_rss_mib: f64,
    /// Spread of the cold launches across runs (max − min).
    pub cold_spread: f64,
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let n = v.len();
    if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
}

/// The value at quantile q (0..=1), nearest rank.
pub fn quantile(mut v: Vec<f64>, q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let i = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
    v[i]
}

/// One summary per manager, in the order the managers first ran.
pub fn summarize(runs: &[RunResult]) -> Vec<Summary> {
    let mut managers: Vec<&str> = Vec::new();
    for r in runs {
        if !managers.contains(&r.manager.as_str()) {
            managers.push(&r.manager);
        }
    }
    managers
        .into_iter()
        .map(|m| {
            let rs: Vec<&RunResult> = runs.iter().filter(|r| r.manager == m).collect();
            let per = |f: &dyn Fn(&RunResult) -> f64| median(rs.iter().map(|r| f(r)).collect());
            let count = |kind: &'static str| per(&|r: &RunResult| r.visits.iter().filter(|v| v.kind == kind).count() as f64);
            let lat: Vec<f64> = rs.iter().flat_map(|r| r.visits.iter().filter(|v| v.kind != "failed").map(|v| v.latency_ms)).collect();
            let cold: Vec<f64> = rs.iter().flat_map(|r| r.visits.iter().filter(|v| v.kind == "cold").map(|v| v.latency_ms)).collect();
            let colds: Vec<f64> = rs.iter().map(|r| r.visits.iter().filter(|v| v.kind == "cold").count() as f64).collect();
            let ratios: Vec<f64> = rs.iter().filter_map(|r| r.zram_ratio).collect();
            Summary {
                manager: m.to_string(),
                runs: rs.len(),
                hot: count("hot"),
                warm: count("warm"),
                cold: count("cold"),
                failed: count("failed"),
                latency_p50_ms: quantile(lat.clone(), 0.5),
                latency_p95_ms: quantile(lat, 0.95),
                cold_p50_ms: quantile(cold, 0.5),
                kills_by_memorch: per(&|r| r.kills.iter().filter(|k| k.by == "memorch").count() as f64),
                kills_by_kernel: per(&|r| r.kills.iter().filter(|k| k.by == "kernel").count() as f64),
                foreground_kills: per(&|r| r.kills.iter().filter(|k| k.class == Class::Foreground).count() as f64),
                refault_pages: per(&|r| r.refault_pages as f64),
                psi_some_s: per(&|r| r.psi_some_s),
                psi_full_s: per(&|r| r.psi_full_s),
                zram_ratio: (!ratios.is_empty()).then(|| median(ratios)),
                manager_cpu_s: per(&|r| r.manager_cpu_s),
                manager_rss_mib: per(&|r| r.manager_rss_bytes as f64 / (1 << 20) as f64),
                cold_spread: colds.iter().cloned().fold(f64::MIN, f64::max) - colds.iter().cloned().fold(f64::MAX, f64::min),
            }
        })
        .collect()
}

/// The terminal table.
pub fn table(sums: &[Summary]) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{:<12} {:>4} {:>14} {:>10} {:>10} {:>10} {:>12} {:>9} {:>9} {:>9} {:>6} {:>7} {:>7}",
        "manager", "runs", "hot/warm/cold", "p50 ms", "p95 ms", "cold p50", "kills m/k/fg", "refaults", "psi some", "psi full", "ratio", "cpu s", "rss MiB"
    );
    for s in sums {
        let _ = writeln!(
            o,
            "{:<12} {:>4} {:>14} {:>10.1} {:>10.1} {:>10.1} {:>12} {:>9.0} {:>8.1}s {:>8.1}s {:>6} {:>7.2} {:>7.1}",
            s.manager,
            s.runs,
            format!("{}/{}/{}", s.hot, s.warm, s.cold),
            s.latency_p50_ms,
            s.latency_p95_ms,
            s.cold_p50_ms,
            format!("{}/{}/{}", s.kills_by_memorch, s.kills_by_kernel, s.foreground_kills),
            s.refault_pages,
            s.psi_some_s,
            s.psi_full_s,
            s.zram_ratio.map_or("-".into(), |r| format!("{r:.2}")),
            s.manager_cpu_s,
            s.manager_rss_mib
        );
    }
    let _ = writeln!(o, "\nhot/warm/cold: visits to an app alive with nothing read back / alive with pages read back / relaunched (medians over runs).");
    let _ = writeln!(o, "kills m/k/fg: by memorch / by the kernel's OOM killer / of the foreground app. psi: stall time of the device's group.");
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::{Kill, Visit};

    fn run(manager: &str, lat: &[(&str, f64)], kills: &[(&str, Class)]) -> RunResult {
        RunResult {
            manager: manager.into(),
            scenario: "t".into(),
            seed: 1,
            ram_mb: 512,
            visits: lat.iter().map(|(k, l)| Visit { app: "a".into(), kind: (*k).into(), latency_ms: *l, at_ms: 0 }).collect(),
            kills: kills.iter().map(|(by, c)| Kill { app: "a".into(), class: *c, by: (*by).into(), at_ms: 0 }).collect(),
            refault_pages: 10,
            major_faults: 0,
            psi_some_s: 1.0,
            psi_full_s: 0.5,
            zram_ratio: Some(2.0),
            manager_cpu_s: 0.1,
            manager_rss_bytes: 4 << 20,
            duration_s: 1.0,
            timeline: vec![],
            interrupted: false,
        }
    }

    #[test]
    fn summaries_take_medians_and_quantiles() {
        let runs = vec![
            run("memorch", &[("cold", 500.0), ("hot", 1.0), ("warm", 20.0)], &[("memorch", Class::Cached)]),
            run("kernel", &[("cold", 600.0), ("cold", 700.0)], &[("kernel", Class::Foreground)]),
            run("memorch", &[("cold", 400.0), ("hot", 2.0), ("hot", 3.0)], &[]),
        ];
        let s = summarize(&runs);
        assert_eq!(s[0].manager, "memorch");
        assert_eq!(s[0].runs, 2);
        assert_eq!(s[0].hot, 1.5);
        assert_eq!(s[0].cold_p50_ms, 400.0);
        assert_eq!(s[0].kills_by_memorch, 0.5);
        assert_eq!(s[1].foreground_kills, 1.0);
        assert_eq!(s[1].kills_by_kernel, 1.0);
        let t = table(&s);
        assert!(t.contains("memorch") && t.contains("kernel") && t.contains("hot/warm/cold"));
        assert_eq!(quantile(vec![1.0, 2.0, 3.0, 4.0], 0.5), 2.0);
        assert_eq!(quantile(vec![1.0, 2.0, 3.0, 4.0], 0.95), 4.0);
    }
}
