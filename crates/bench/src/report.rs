//! Summaries of runs, per manager, and the terminal table. Every figure is taken per run and summarised as the median
//! over runs with its min–max spread, so a difference between two managers can be read against the noise of repeated
//! runs (`--repeat`).

use crate::results::{RunResult, Visit, COLD, FAILED, HOT, WARM};
use memorch_core::Class;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// One figure over a manager's runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Figure {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Figure {
    /// `None` when no run has the figure.
    pub fn of(mut v: Vec<f64>) -> Option<Figure> {
        if v.is_empty() {
            return None;
        }
        v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
        let n = v.len();
        let median = if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 };
        Some(Figure { median, min: v[0], max: v[n - 1] })
    }

    fn or_zero(v: Vec<f64>) -> Figure {
        Figure::of(v).unwrap_or(Figure { median: 0.0, min: 0.0, max: 0.0 })
    }

    /// Whether two managers' ranges overlap: their difference is within the runs' spread.
    pub fn overlaps(&self, other: &Figure) -> bool {
        self.min <= other.max && other.min <= self.max
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub manager: String,
    /// Whether a manager ran at all (`kernel` is the kernel alone: no kills or cost of its own to report).
    pub has_manager: bool,
    pub runs: usize,
    /// Runs cut short by Ctrl-C, stopped because their first launches failed, and runs that served no visit at all.
    pub interrupted_runs: usize,
    pub stopped_runs: usize,
    pub empty_runs: usize,
    pub hot: Figure,
    pub warm: Figure,
    pub cold: Figure,
    pub failed: Figure,
    /// Visit latency quantiles of each run (failed visits excluded).
    pub latency_p50_ms: Option<Figure>,
    pub latency_p95_ms: Option<Figure>,
    /// p95 of the visits after each app's first launch of the run (its returns and relaunches): what a manager's
    /// choices change. A first launch starts a program that was not running under any manager, often on an empty
    /// device; on `realapps` it sets the p95 of all visits in most runs (docs/results.md).
    pub after_first_p95_ms: Option<Figure>,
    pub cold_p50_ms: Option<Figure>,
    /// p50 had every return been hot ([`p50_every_return_hot`]): what no choice of pages or victims could beat, since a
    /// manager decides whether a return is hot, not how long the program takes to answer one.
    pub p50_every_return_hot_ms: Option<Figure>,
    /// Returns to an app still alive (hot and warm), and warm returns alone.
    pub return_p50_ms: Option<Figure>,
    pub warm_p50_ms: Option<Figure>,
    /// The user's wait (s): each run's returns and relaunches summed ([`RunResult::wait_s`]). A manager that turns
    /// relaunches into warm returns can lose on p50 and win here.
    pub wait_s: Figure,
    /// The wait had every return been hot ([`every_return_hot`]): the floor no manager beats.
    pub wait_if_hot_s: Figure,
    /// p50 and p95 of the returns and relaunches.
    pub after_first_p50_ms: Option<Figure>,
    /// Of the returns to an app compacted since it was last in front, the share that were hot (%): whether compaction
    /// took cold pages (runs with such returns).
    pub hot_after_compaction_pct: Option<Figure>,
    /// Kills by the manager itself (memorch's daemon or the peer), by the kernel's OOM killer, and of the foreground
    /// app by anyone.
    pub kills_by_manager: Figure,
    pub kills_by_kernel: Figure,
    pub foreground_kills: Figure,
    pub refault_pages: Figure,
    pub refault_anon_pages: Figure,
    pub refault_file_pages: Figure,
    /// Pages through the device's zram, and anonymous refaults per swapped-out page (runs that had zram).
    pub swap_in_pages: Option<Figure>,
    pub swap_out_pages: Option<Figure>,
    pub refault_ratio: Option<Figure>,
    pub refaults_per_eviction: Option<Figure>,
    pub psi_some_s: Figure,
    pub psi_full_s: Figure,
    /// Allocations that reclaimed for themselves (the device's `memory.failcnt`; runs that counted them), and every
    /// call into reclaim (`RunResult::reclaim_calls`).
    pub direct_reclaims: Option<Figure>,
    pub reclaim_calls: Option<Figure>,
    pub zram_ratio: Option<Figure>,
    pub ksm_saved_mib: Figure,
    pub ksmd_cpu_s: Option<Figure>,
    /// The machine's CPU outside the device and the daemon, and the host's steal (`RunResult::other_cpu_s`, `steal_s`):
    /// how disturbed the runs were.
    pub other_cpu_s: Option<Figure>,
    pub steal_s: Option<Figure>,
    pub manager_cpu_s: Figure,
    /// The manager's CPU and the device's (its apps and their reclaim): a daemon's squeezes are reclaim the device
    /// would otherwise do itself, so this is what the manager adds.
    pub with_device_cpu_s: Option<Figure>,
    pub manager_rss_mib: Figure,
    pub manager_pss_mib: Figure,
    /// Frames over 16.7 ms as a share of all frames in front, and each run's median of the visits' frame-time p95
    /// (synthetic apps draw frames; real programs do not).
    pub jank_pct: Option<Figure>,
    pub frame_p95_ms: Option<Figure>,
    /// Available memory after idle steps (home, screen off): each run's mean.
    pub idle_available_mib: Option<Figure>,
    /// Apps alive after a visit, each run's mean.
    pub live_apps_mean: Figure,
}

/// The value at quantile q (0..=1), nearest rank; `None` without values.
pub fn quantile(mut v: Vec<f64>, q: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let i = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
    Some(v[i])
}

/// Of a run's returns after a compaction, the share that were hot (%).
fn hot_after_compaction_pct(r: &RunResult) -> Option<f64> {
    let after: Vec<&Visit> = r.visits.iter().filter(|v| v.after_compaction && v.is_return()).collect();
    (!after.is_empty()).then(|| 100.0 * after.iter().filter(|v| v.kind == HOT).count() as f64 / after.len() as f64)
}

fn latencies(r: &RunResult, keep: impl Fn(&Visit) -> bool) -> Vec<f64> {
    r.visits.iter().filter(|v| keep(v)).map(|v| v.latency_ms).collect()
}

fn latencies_after_first_launches(r: &RunResult) -> Vec<f64> {
    r.after_first_launches().iter().map(|v| v.latency_ms).collect()
}

/// Each app's median hot-return latency over `runs`, every manager's: how long the program takes to answer when nothing
/// has to be read back.
fn hot_medians(runs: &[RunResult]) -> BTreeMap<&str, f64> {
    let mut hot: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for v in runs.iter().flat_map(|r| &r.visits).filter(|v| v.kind == HOT) {
        hot.entry(v.app.as_str()).or_default().push(v.latency_ms);
    }
    hot.into_iter().filter_map(|(app, l)| Some((app, Figure::of(l)?.median))).collect()
}

/// A run's returns and relaunches had every one been hot: each warm return and relaunch at that app's hot median over
/// the bench (`hot`), the hot returns as measured; an app never hot in the bench keeps its visits (nothing says what
/// its hot return takes). What no choice of pages or victims could beat: a manager decides whether a return is hot, not
/// how long the program takes to answer one.
fn every_return_hot(r: &RunResult, hot: &BTreeMap<&str, f64>) -> Vec<f64> {
    let floor = |v: &&Visit| match v.kind.as_str() {
        HOT => v.latency_ms,
        _ => hot.get(v.app.as_str()).copied().unwrap_or(v.latency_ms),
    };
    r.after_first_launches().iter().map(floor).collect()
}

/// A run's p50 had every return been hot: its first launches as measured, the rest as [`every_return_hot`] has them.
fn p50_every_return_hot(r: &RunResult, hot: &BTreeMap<&str, f64>) -> Option<f64> {
    let mut launched = std::collections::BTreeSet::new();
    let first = r.visits.iter().filter(|v| v.served() && launched.insert(v.app.as_str())).map(|v| v.latency_ms);
    quantile(first.chain(every_return_hot(r, hot)).collect(), 0.5)
}

/// The managers in the order they first ran.
pub fn managers(runs: &[RunResult]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in runs {
        if !out.contains(&r.manager) {
            out.push(r.manager.clone());
        }
    }
    out
}

/// One summary per manager, in the order the managers first ran.
pub fn summarize(runs: &[RunResult]) -> Vec<Summary> {
    let hot = hot_medians(runs);
    managers(runs)
        .into_iter()
        .map(|m| summary(&m, &runs.iter().filter(|r| r.manager == m).collect::<Vec<_>>(), &hot))
        .collect()
}

fn summary(manager: &str, rs: &[&RunResult], hot: &BTreeMap<&str, f64>) -> Summary {
    let all = |f: &dyn Fn(&RunResult) -> f64| Figure::or_zero(rs.iter().map(|r| f(r)).collect());
    let some = |f: &dyn Fn(&RunResult) -> Option<f64>| Figure::of(rs.iter().filter_map(|r| f(r)).collect());
    let q = |keep: fn(&Visit) -> bool, p: f64| some(&|r| quantile(latencies(r, keep), p));
    let mib = (1u64 << 20) as f64;
    Summary {
        manager: manager.to_string(),
        has_manager: manager != "kernel",
        runs: rs.len(),
        interrupted_runs: rs.iter().filter(|r| r.interrupted).count(),
        stopped_runs: rs.iter().filter(|r| r.aborted.is_some()).count(),
        empty_runs: rs.iter().filter(|r| r.served() == 0).count(),
        hot: all(&|r| r.count(HOT) as f64),
        warm: all(&|r| r.count(WARM) as f64),
        cold: all(&|r| r.count(COLD) as f64),
        failed: all(&|r| r.count(FAILED) as f64),
        latency_p50_ms: q(Visit::served, 0.5),
        latency_p95_ms: q(Visit::served, 0.95),
        after_first_p95_ms: some(&|r| quantile(latencies_after_first_launches(r), 0.95)),
        cold_p50_ms: q(|v| v.kind == COLD, 0.5),
        p50_every_return_hot_ms: some(&|r| p50_every_return_hot(r, hot)),
        return_p50_ms: q(Visit::is_return, 0.5),
        hot_after_compaction_pct: some(&|r| hot_after_compaction_pct(r)),
        warm_p50_ms: q(|v| v.kind == WARM, 0.5),
        wait_s: all(&|r| r.wait_s()),
        wait_if_hot_s: all(&|r| every_return_hot(r, hot).iter().sum::<f64>() / 1000.0),
        after_first_p50_ms: some(&|r| quantile(latencies_after_first_launches(r), 0.5)),
        kills_by_manager: all(&|r| r.kills.iter().filter(|k| !k.by_kernel()).count() as f64),
        kills_by_kernel: all(&|r| r.kills.iter().filter(|k| k.by_kernel()).count() as f64),
        foreground_kills: all(&|r| r.kills.iter().filter(|k| k.class == Class::Foreground).count() as f64),
        refault_pages: all(&|r| r.refault_pages as f64),
        refault_anon_pages: all(&|r| r.refault_anon_pages as f64),
        refault_file_pages: all(&|r| r.refault_file_pages as f64),
        swap_in_pages: some(&|r| r.swap_in_pages.map(|v| v as f64)),
        swap_out_pages: some(&|r| r.swap_out_pages.map(|v| v as f64)),
        refault_ratio: some(&|r| r.refault_ratio),
        refaults_per_eviction: some(&|r| r.refaults_per_eviction),
        psi_some_s: all(&|r| r.psi_some_s),
        psi_full_s: all(&|r| r.psi_full_s),
        direct_reclaims: some(&|r| r.direct_reclaims.map(|n| n as f64)),
        reclaim_calls: some(&|r| r.reclaim_calls().map(|n| n as f64)),
        zram_ratio: some(&|r| r.zram_ratio),
        ksm_saved_mib: all(&|r| r.ksm_saved_bytes as f64 / mib),
        ksmd_cpu_s: some(&|r| r.ksmd_cpu_s),
        other_cpu_s: some(&|r| r.other_cpu_s),
        steal_s: some(&|r| r.steal_s),
        manager_cpu_s: all(&|r| r.manager_cpu_s),
        with_device_cpu_s: some(&|r| r.device_cpu_s.map(|d| d + r.manager_cpu_s)),
        manager_rss_mib: all(&|r| r.manager_rss_bytes as f64 / mib),
        manager_pss_mib: all(&|r| r.manager_pss_bytes as f64 / mib),
        jank_pct: some(&jank_pct),
        frame_p95_ms: some(&|r| {
            Figure::of(r.visits.iter().filter(|v| v.frames > 0).map(|v| v.frame_p95_ms).collect()).map(|f| f.median)
        }),
        idle_available_mib: some(&|r| mean(&r.idle_available_bytes).map(|b| b / mib)),
        live_apps_mean: all(&|r| {
            mean(&r.timeline.iter().map(|t| t.live_apps as u64).collect::<Vec<_>>()).unwrap_or(0.0)
        }),
    }
}

/// Frames over 16.7 ms, as a share of a run's frames (%); `None` without frames.
fn jank_pct(r: &RunResult) -> Option<f64> {
    let (n, j) = r.visits.iter().fold((0u64, 0u64), |(n, j), v| (n + v.frames as u64, j + v.janky_frames as u64));
    (n > 0).then(|| j as f64 * 100.0 / n as f64)
}

/// The mean of `v`; `None` if it is empty.
fn mean(v: &[u64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<u64>() as f64 / v.len() as f64)
}

/// A number for the table: whole for counts and large values, one or two decimals else.
pub fn num(v: f64) -> String {
    // A sum of nothing is -0.0: print it as 0.
    let v = v + 0.0;
    if v == v.trunc() || v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// `12 (10–15)`-style text of an optional figure, median only with `spread` false.
fn cell(f: Option<Figure>, spread: bool) -> String {
    match f {
        None => "-".into(),
        Some(f) if spread => format!("{}–{}", num(f.min), num(f.max)),
        Some(f) => num(f.median),
    }
}

/// The columns of the terminal table: header and the text of a summary's figure.
type Column = (&'static str, usize, fn(&Summary) -> Vec<Option<Figure>>);

const COLUMNS: [Column; 22] = [
    ("wait s", 6, |s| vec![Some(s.wait_s)]),
    ("if hot", 6, |s| vec![Some(s.wait_if_hot_s)]),
    ("kills m/k/fg", 12, |s| {
        vec![s.has_manager.then_some(s.kills_by_manager), Some(s.kills_by_kernel), Some(s.foreground_kills)]
    }),
    ("p95 ex-1st", 10, |s| vec![s.after_first_p95_ms]),
    ("p50 ex-1st", 10, |s| vec![s.after_first_p50_ms]),
    ("hot/warm/cold/failed", 20, |s| vec![Some(s.hot), Some(s.warm), Some(s.cold), Some(s.failed)]),
    ("alive", 5, |s| vec![Some(s.live_apps_mean)]),
    ("p50 ms", 7, |s| vec![s.latency_p50_ms]),
    ("p50 if hot", 10, |s| vec![s.p50_every_return_hot_ms]),
    ("p95 ms", 7, |s| vec![s.latency_p95_ms]),
    ("return p50", 10, |s| vec![s.return_p50_ms]),
    ("cold p50", 8, |s| vec![s.cold_p50_ms]),
    ("jank%", 5, |s| vec![s.jank_pct]),
    ("idle MiB", 8, |s| vec![s.idle_available_mib]),
    ("refaults f/a", 13, |s| vec![Some(s.refault_file_pages), Some(s.refault_anon_pages)]),
    ("psi some", 8, |s| vec![Some(s.psi_some_s)]),
    ("psi full", 8, |s| vec![Some(s.psi_full_s)]),
    ("direct", 7, |s| vec![s.direct_reclaims]),
    ("ratio", 5, |s| vec![s.zram_ratio]),
    ("cpu s", 6, |s| vec![s.has_manager.then_some(s.manager_cpu_s)]),
    ("+device", 8, |s| vec![s.with_device_cpu_s]),
    ("pss MiB", 7, |s| vec![s.has_manager.then_some(s.manager_pss_mib)]),
];

/// The terminal table: medians over runs, and under each manager that ran more than once, the min–max spread of every
/// figure.
pub fn table(sums: &[Summary]) -> String {
    let mut o = String::new();
    let _ = write!(o, "{:<16} {:>4}", "manager", "runs");
    for (h, w, _) in COLUMNS {
        let _ = write!(o, " {h:>w$}");
    }
    o.push('\n');
    for s in sums {
        let _ = write!(o, "{:<16} {:>4}", s.manager, s.runs);
        if s.empty_runs == s.runs {
            let _ = writeln!(o, "  no visit served: every launch failed (see the logs named above)");
            continue;
        }
        for spread in [false, true] {
            if spread {
                if s.runs < 2 {
                    break;
                }
                let _ = write!(o, "{:>21}", "min–max");
            }
            for (_, w, f) in COLUMNS {
                let text: Vec<String> = f(s).into_iter().map(|x| cell(x, spread)).collect();
                let _ = write!(o, " {:>w$}", text.join("/"));
            }
            o.push('\n');
        }
    }
    let _ = writeln!(
        o,
        "\nMedians over runs{}.",
        if sums.iter().any(|s| s.runs > 1) {
            "; min–max: the spread over runs (a difference inside it is not significant)"
        } else {
            " (one run each: no spread to judge differences by; use --repeat 3)"
        }
    );
    let _ = writeln!(o, "wait s: the user's wait, returns and relaunches summed (first launches left out: no manager had the program running). if hot: that wait had every return been hot (each at the app's hot median): the floor no manager beats. Then kills, and p95 and p50 of the same visits.");
    let _ = writeln!(o, "hot/warm/cold/failed: visits to an app alive with nothing read back / alive with pages read back / relaunched / that did not complete.");
    let _ = writeln!(o, "p50 if hot: p50 had every return been hot (each warm return and relaunch at the app's hot median over the bench): what no manager's choice could beat in these runs.");
    let _ = writeln!(o, "alive: apps alive after a visit, on average. return p50: returns to a live app (hot and warm). kills m/k/fg: by the manager (memorch's daemon or the peer) / by the kernel's OOM killer / of the foreground app.");
    let _ = writeln!(o, "jank%: frames over 16.7 ms while in front (synthetic apps). idle MiB: available after idle (home, screen off). refaults f/a: file / anonymous pages read back.");
    let _ = writeln!(o, "psi: stall seconds of the device's group. direct: allocations that reclaimed for themselves (the device's background reclaimer fell behind). ratio: zram's compression. cpu s, pss MiB: the manager's own (proportional set size). +device: its CPU and the device's (apps and their reclaim), as a daemon's squeezes are reclaim the device would do itself.");
    for s in sums.iter().filter(|s| s.failed.max > 0.0 || s.stopped_runs > 0 || s.interrupted_runs > 0) {
        let _ = writeln!(
            o,
            "{}: {} failed visits (median {}), {} runs stopped, {} interrupted.",
            s.manager,
            num(s.failed.max),
            num(s.failed.median),
            s.stopped_runs,
            s.interrupted_runs
        );
    }
    o
}

#[cfg(test)]
#[path = "report_tests.rs"]
pub(crate) mod tests;
