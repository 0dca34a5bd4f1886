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
    /// Kills by the manager itself: memorch's daemon or the peer.
    pub kills_by_manager: f64,
    pub kills_by_kernel: f64,
    pub foreground_kills: f64,
    pub refault_pages: f64,
    /// Swap-ins and swap-outs (pages through the device's zram) and anonymous refaults per
    /// swapped-out page, medians over the runs that had zram.
    pub swap_in_pages: Option<f64>,
    pub swap_out_pages: Option<f64>,
    pub refault_ratio: Option<f64>,
    pub psi_some_s: f64,
    pub psi_full_s: f64,
    pub zram_ratio: Option<f64>,
    pub ksm_saved_mib: f64,
    pub manager_cpu_s: f64,
    pub manager_rss_mib: f64,
    /// Response while in front: frames over 16.7 ms as a share of all frames, and the
    /// median over visits of each visit's frame-time p95.
    pub jank_pct: f64,
    pub frame_p95_ms: f64,
    /// Available memory after idle steps (home, screen off), median over runs of their mean.
    pub idle_available_mib: Option<f64>,
    /// Apps alive, on average over the run's samples (one after each visit).
    pub live_apps_mean: f64,
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

fn some_median(v: Vec<f64>) -> Option<f64> {
    (!v.is_empty()).then(|| median(v))
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
                kills_by_manager: per(&|r| r.kills.iter().filter(|k| k.by != "kernel").count() as f64),
                kills_by_kernel: per(&|r| r.kills.iter().filter(|k| k.by == "kernel").count() as f64),
                foreground_kills: per(&|r| r.kills.iter().filter(|k| k.class == Class::Foreground).count() as f64),
                refault_pages: per(&|r| r.refault_pages as f64),
                swap_in_pages: some_median(rs.iter().filter_map(|r| r.swap_in_pages.map(|v| v as f64)).collect()),
                swap_out_pages: some_median(rs.iter().filter_map(|r| r.swap_out_pages.map(|v| v as f64)).collect()),
                refault_ratio: some_median(rs.iter().filter_map(|r| r.refault_ratio).collect()),
                psi_some_s: per(&|r| r.psi_some_s),
                psi_full_s: per(&|r| r.psi_full_s),
                zram_ratio: some_median(ratios),
                ksm_saved_mib: per(&|r| r.ksm_saved_bytes as f64 / (1 << 20) as f64),
                manager_cpu_s: per(&|r| r.manager_cpu_s),
                manager_rss_mib: per(&|r| r.manager_rss_bytes as f64 / (1 << 20) as f64),
                jank_pct: {
                    let (n, j) = rs.iter().flat_map(|r| &r.visits).fold((0u64, 0u64), |(n, j), v| (n + v.frames as u64, j + v.janky_frames as u64));
                    if n == 0 { 0.0 } else { j as f64 * 100.0 / n as f64 }
                },
                frame_p95_ms: median(rs.iter().flat_map(|r| &r.visits).filter(|v| v.frames > 0).map(|v| v.frame_p95_ms).collect()),
                idle_available_mib: {
                    let v: Vec<f64> = rs.iter().filter(|r| !r.idle_available_bytes.is_empty()).map(|r| r.idle_available_bytes.iter().sum::<u64>() as f64 / r.idle_available_bytes.len() as f64 / (1 << 20) as f64).collect();
                    some_median(v)
                },
                live_apps_mean: per(&|r| r.timeline.iter().map(|t| t.live_apps as f64).sum::<f64>() / r.timeline.len().max(1) as f64),
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
        "{:<12} {:>4} {:>14} {:>6} {:>10} {:>10} {:>10} {:>6} {:>9} {:>8} {:>12} {:>9} {:>9} {:>9} {:>6} {:>7} {:>7}",
        "manager", "runs", "hot/warm/cold", "alive", "p50 ms", "p95 ms", "cold p50", "jank%", "frame p95", "idle MiB", "kills m/k/fg", "refaults", "psi some", "psi full", "ratio", "cpu s", "rss MiB"
    );
    for s in sums {
        let _ = writeln!(
            o,
            "{:<12} {:>4} {:>14} {:>6.1} {:>10.1} {:>10.1} {:>10.1} {:>6.1} {:>9.1} {:>8} {:>12} {:>9.0} {:>8.1}s {:>8.1}s {:>6} {:>7.2} {:>7.1}",
            s.manager,
            s.runs,
            format!("{}/{}/{}", s.hot, s.warm, s.cold),
            s.live_apps_mean,
            s.latency_p50_ms,
            s.latency_p95_ms,
            s.cold_p50_ms,
            s.jank_pct,
            s.frame_p95_ms,
            s.idle_available_mib.map_or("-".into(), |m| format!("{m:.0}")),
            format!("{}/{}/{}", s.kills_by_manager, s.kills_by_kernel, s.foreground_kills),
            s.refault_pages,
            s.psi_some_s,
            s.psi_full_s,
            s.zram_ratio.map_or("-".into(), |r| format!("{r:.2}")),
            s.manager_cpu_s,
            s.manager_rss_mib
        );
    }
    let _ = writeln!(o, "\nhot/warm/cold: visits to an app alive with nothing read back / alive with pages read back / relaunched (medians over runs).");
    let _ = writeln!(o, "alive: apps alive after a visit, on average. kills m/k/fg: by the manager (memorch's daemon or the peer) / by the kernel's OOM killer / of the foreground app.");
    let _ = writeln!(o, "jank%: frames over 16.7 ms while in front; frame p95: per visit, median. idle MiB: available after idle (home, screen off).");
    let _ = writeln!(o, "psi: stall time of the device's group. cpu s, rss MiB: the manager's own.");
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
            visits: lat.iter().map(|(k, l)| Visit { frames: 10, janky_frames: if *k == "warm" { 5 } else { 0 }, frame_p95_ms: *l / 10.0, ..Visit::new("a", k, *l) }).collect(),
            kills: kills.iter().map(|(by, c)| Kill { app: "a".into(), class: *c, by: (*by).into(), at_ms: 0 }).collect(),
            refault_pages: 10,
            major_faults: 0,
            swap_in_pages: Some(5),
            swap_out_pages: Some(10),
            refault_ratio: Some(0.5),
            psi_some_s: 1.0,
            psi_full_s: 0.5,
            zram_ratio: Some(2.0),
            ksm_saved_bytes: 0,
            manager_cpu_s: 0.1,
            manager_rss_bytes: 4 << 20,
            manager_restarts: 0,
            idle_available_bytes: vec![],
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
        assert_eq!(s[0].kills_by_manager, 0.5);
        assert_eq!(s[1].foreground_kills, 1.0);
        assert_eq!(s[1].kills_by_kernel, 1.0);
        assert!((s[0].jank_pct - 5.0 / 60.0 * 100.0).abs() < 1e-9, "{}", s[0].jank_pct);
        assert_eq!(s[0].idle_available_mib, None);
        assert_eq!((s[0].swap_out_pages, s[0].refault_ratio), (Some(10.0), Some(0.5)));
        let t = table(&s);
        assert!(t.contains("memorch") && t.contains("kernel") && t.contains("hot/warm/cold"));
        assert_eq!(quantile(vec![1.0, 2.0, 3.0, 4.0], 0.5), 2.0);
        assert_eq!(quantile(vec![1.0, 2.0, 3.0, 4.0], 0.95), 4.0);
    }
}
