//! A markdown table of managers' summaries, by named columns: docs/results.md's sections and the scoreboard's cells
//! show them.

use crate::report::{num, Figure, Summary};
use std::fmt::Write;

type Column = (&'static str, fn(&Summary) -> Option<String>);

fn fig(f: Option<Figure>) -> Option<String> {
    f.map(|f| num(f.median))
}

/// The columns a section may show: name, and its cell of a manager's summary (medians).
pub const COLUMNS: [Column; 19] = [
    ("hot/warm/cold", |s| Some(format!("{}/{}/{}", num(s.hot.median), num(s.warm.median), num(s.cold.median)))),
    ("failed", |s| fig(Some(s.failed))),
    ("wait s", |s| fig(Some(s.wait_s))),
    ("if hot s", |s| fig(Some(s.wait_if_hot_s))),
    ("p95 ex-1st", |s| fig(s.after_first_p95_ms)),
    ("p50 ex-1st", |s| fig(s.after_first_p50_ms)),
    ("kills m/k/fg", |s| {
        let m = if s.has_manager { num(s.kills_by_manager.median) } else { "-".into() };
        Some(format!("{m}/{}/{}", num(s.kills_by_kernel.median), num(s.foreground_kills.median)))
    }),
    ("p95 ms", |s| fig(s.latency_p95_ms)),
    ("p50 ms", |s| fig(s.latency_p50_ms)),
    ("alive", |s| fig(Some(s.live_apps_mean))),
    ("idle MiB", |s| fig(s.idle_available_mib)),
    ("refaults f/a", |s| Some(format!("{}/{}", num(s.refault_file_pages.median), num(s.refault_anon_pages.median)))),
    ("refaults/evictions", |s| s.refaults_per_eviction.map(|f| format!("{:.1} %", f.median * 100.0))),
    ("direct", |s| fig(s.direct_reclaims)),
    ("reclaim calls", |s| fig(s.reclaim_calls)),
    ("ksmd cpu s", |s| fig(s.ksmd_cpu_s)),
    ("psi full s", |s| fig(Some(s.psi_full_s))),
    ("cpu s", |s| s.has_manager.then(|| num(s.manager_cpu_s.median))),
    ("cpu+device s", |s| fig(s.with_device_cpu_s)),
];

/// The columns of each cell's table on the scoreboard.
pub const SCOREBOARD_COLUMNS: &[&str] = &[
    "wait s",
    "if hot s",
    "kills m/k/fg",
    "p95 ex-1st",
    "p50 ex-1st",
    "hot/warm/cold",
    "alive",
    "cpu s",
    "cpu+device s",
];

/// A table of `columns`, every one of which [`COLUMNS`] has.
pub fn table_of(sums: &[Summary], columns: &[&str]) -> String {
    table(sums, &columns.iter().map(|c| c.to_string()).collect::<Vec<_>>()).expect("known columns")
}

pub fn table(sums: &[Summary], columns: &[String]) -> Result<String, String> {
    let cols: Vec<&Column> = columns
        .iter()
        .map(|c| {
            COLUMNS
                .iter()
                .find(|(n, _)| n == c)
                .ok_or_else(|| format!("column '{c}': give one of {}", COLUMNS.map(|c| c.0).join(", ")))
        })
        .collect::<Result<_, _>>()?;
    let mut o = format!("| manager | runs | {} |\n|---|---|{}\n", columns.join(" | "), "---|".repeat(cols.len()));
    for s in sums {
        let cells: Vec<String> = cols.iter().map(|(_, f)| f(s).unwrap_or_else(|| "-".into())).collect();
        let _ = writeln!(o, "| `{}` | {} | {} |", s.manager, s.runs, cells.join(" | "));
    }
    Ok(o)
}
