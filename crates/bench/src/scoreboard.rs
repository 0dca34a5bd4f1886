//! The scoreboard (`memorch bench --scoreboard`): the shipped preset against the kernel alone and the managers Linux
//! users run, on a phone's conditions and on ordinary Linux's (no launcher talking to memorch, apps sharing one group,
//! a mild shortage as well as a severe one), judged by the user's wait. Each cell is a bench of its own in `OUT/CELL/`;
//! a cell whose results are complete is not run again, so a stopped scoreboard resumes.

use crate::conditions::{AppGroups, Launcher};
use crate::report::{num, summarize, Summary};
use crate::results::RunResult;
use std::fmt::Write;
use std::path::Path;

/// One scenario under one set of conditions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cell {
    /// Its directory under the scoreboard's, and its row.
    pub name: &'static str,
    pub scenario: &'static str,
    /// The device's RAM in MiB; the scenario's where `None`.
    pub ram_mb: Option<u64>,
    pub launcher: Launcher,
    pub app_groups: AppGroups,
}

const fn cell(name: &'static str, scenario: &'static str, ram_mb: Option<u64>, ordinary: bool) -> Cell {
    let (launcher, app_groups) =
        if ordinary { (Launcher::Silent, AppGroups::None) } else { (Launcher::Full, AppGroups::Own) };
    Cell { name, scenario, ram_mb, launcher, app_groups }
}

pub const CELLS: [Cell; 5] = [
    cell("realapps", "realapps", None, false),
    cell("realapps-silent", "realapps", None, true),
    cell("realapps-1536-silent", "realapps", Some(1536), true),
    cell("quick", "quick", None, false),
    cell("swam40-2048", "swam40", Some(2048), false),
];

/// The managers, the candidate last: the kernel alone and the two daemons Linux and Android users run.
pub const MANAGERS: [&str; 4] = ["kernel", "earlyoom", "lmkd", "memorch"];

/// The first seed (repeat N runs seed + N). Never used to tune a preset: every seed tuned on is below 60
/// (docs/decisions.md names them).
pub const SEED: u64 = 60;

/// The runs a cell at `dir` already has, if they are complete: one a manager and repeat, none stopped or cut short, all
/// of the same conditions.
pub fn complete_runs(dir: &Path, cell: &Cell, managers: &[String], repeat: u64) -> Option<Vec<RunResult>> {
    let runs = crate::results::read_runs(&dir.join(cell.name).join("results.json")).ok()?;
    let done = runs.len() as u64 == repeat * managers.len() as u64
        && managers.iter().all(|m| runs.iter().filter(|r| &r.manager == m).count() as u64 == repeat)
        && runs.iter().all(|r| {
            !r.interrupted && r.aborted.is_none() && r.launcher == cell.launcher && r.app_groups == cell.app_groups
        });
    done.then_some(runs)
}

/// How the candidate stands in one cell against the best of the others.
#[derive(Debug, Clone, PartialEq)]
pub struct Standing {
    pub wait_s: f64,
    pub wait_if_hot_s: f64,
    /// The lowest other wait, and whose.
    pub best_wait_s: f64,
    pub best_wait_by: String,
    pub kills: f64,
    pub fewest_kills: f64,
    pub foreground_kills: f64,
    pub p95_ms: Option<f64>,
    pub best_p95_ms: Option<f64>,
    pub p50_ms: Option<f64>,
    pub best_p50_ms: Option<f64>,
    pub cpu_s: f64,
    /// Its CPU with the device's, over the lowest other's (`Summary::with_device_cpu_s`).
    pub with_device_cpu_ratio: Option<f64>,
}

/// The bar a cell must clear: a wait at most this share of the best other's.
pub const WAIT_BAR: f64 = 0.85;

impl Standing {
    pub fn of(sums: &[Summary], candidate: &str) -> Option<Standing> {
        let me = sums.iter().find(|s| s.manager == candidate)?;
        let others: Vec<&Summary> = sums.iter().filter(|s| s.manager != candidate).collect();
        let kills = |s: &Summary| s.kills_by_manager.median + s.kills_by_kernel.median;
        let lowest = |f: &dyn Fn(&Summary) -> Option<f64>| others.iter().filter_map(|s| f(s)).reduce(f64::min);
        let best = others.iter().min_by(|a, b| a.wait_s.median.total_cmp(&b.wait_s.median))?;
        Some(Standing {
            wait_s: me.wait_s.median,
            wait_if_hot_s: me.wait_if_hot_s.median,
            best_wait_s: best.wait_s.median,
            best_wait_by: best.manager.clone(),
            kills: kills(me),
            fewest_kills: lowest(&|s| Some(kills(s)))?,
            foreground_kills: me.foreground_kills.median,
            p95_ms: me.after_first_p95_ms.map(|f| f.median),
            best_p95_ms: lowest(&|s| s.after_first_p95_ms.map(|f| f.median)),
            p50_ms: me.after_first_p50_ms.map(|f| f.median),
            best_p50_ms: lowest(&|s| s.after_first_p50_ms.map(|f| f.median)),
            cpu_s: me.manager_cpu_s.median,
            with_device_cpu_ratio: me
                .with_device_cpu_s
                .zip(lowest(&|s| s.with_device_cpu_s.map(|f| f.median)))
                .map(|(mine, least)| mine.median / least),
        })
    }

    /// What the cell fails of the bar: the wait, kills (none where the others' fewest is at most one), a kill of the
    /// app in front, p95. Empty: it clears it.
    pub fn misses(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.wait_s > WAIT_BAR * self.best_wait_s {
            out.push("wait");
        }
        if self.kills > self.fewest_kills || (self.fewest_kills <= 1.0 && self.kills > 0.0) {
            out.push("kills");
        }
        if self.foreground_kills > 0.0 {
            out.push("kill in front");
        }
        if let (Some(mine), Some(best)) = (self.p95_ms, self.best_p95_ms) {
            if mine > best {
                out.push("p95");
            }
        }
        out
    }
}

/// `a/b` as `0.85×`; `-` where either is missing.
pub fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    a.zip(b).map_or("-".into(), |(a, b)| format!("{:.2}×", a / b))
}

/// The scoreboard's page: one row a cell with the candidate's ratios to the best other, then each cell's managers.
pub fn render(cells: &[(Cell, Vec<RunResult>)], candidate: &str) -> String {
    let mut o = String::from("| cell | conditions | wait s (if hot) | best other | wait ratio | kills (fewest other) | p95 ratio | p50 ratio | cpu s (+device ratio) | misses |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for (c, runs) in cells {
        let conditions = format!("{} MiB, {}/{}", runs.first().map_or(0, |r| r.ram_mb), c.launcher, c.app_groups);
        let Some(s) = Standing::of(&summarize(runs), candidate) else {
            let _ = writeln!(o, "| {} | {conditions} | no runs of `{candidate}` | | | | | | | |", c.name);
            continue;
        };
        let misses = s.misses();
        let _ = writeln!(
            o,
            "| {} | {conditions} | {} ({}) | `{}` {} | {} | {} ({}) | {} | {} | {} ({}) | {} |",
            c.name,
            num(s.wait_s),
            num(s.wait_if_hot_s),
            s.best_wait_by,
            num(s.best_wait_s),
            ratio(Some(s.wait_s), Some(s.best_wait_s)),
            num(s.kills),
            num(s.fewest_kills),
            ratio(s.p95_ms, s.best_p95_ms),
            ratio(s.p50_ms, s.best_p50_ms),
            num(s.cpu_s),
            s.with_device_cpu_ratio.map_or("-".into(), |r| format!("{r:.2}×")),
            if misses.is_empty() { "none".to_string() } else { misses.join(", ") }
        );
    }
    let _ = writeln!(o, "\nwait: returns and relaunches summed, medians over runs (if hot: had every return been hot). The bar: wait ≤ {WAIT_BAR}× the best other's, kills ≤ the fewest other's (0 where that is ≤ 1), no kill of the app in front, p95 ≤ the best other's. +device ratio: the candidate's CPU with the device's over the lowest other's.");
    for (c, runs) in cells {
        let _ = write!(o, "\n### {}\n\n", c.name);
        o.push_str(&crate::md_table::table_of(&summarize(runs), crate::md_table::SCOREBOARD_COLUMNS));
    }
    o
}

#[cfg(test)]
#[path = "scoreboard_tests.rs"]
mod tests;
