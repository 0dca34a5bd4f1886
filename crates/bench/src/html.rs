//! `report.html`: warnings first (failed visits, stopped and interrupted runs), the devices, the summary table with
//! every figure of the terminal table and more, each with its spread over runs (a difference within the spread of the
//! best is greyed as not significant), and charts: available memory and live apps over time with kills marked, the
//! visit-latency distribution, kills by class and killer with counts. One colour per manager throughout; inline SVG
//! drawn here: one self-contained file, no fonts or libraries needed.

use crate::charts::esc;
use crate::report::{num, Figure, Summary};
use crate::results::RunResult;
use std::fmt::Write;

/// One colour a manager, in the order they ran (Tableau 10, then darker variants).
const COLORS: [&str; 14] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
    "#2b5c8a", "#b35806", "#1b7837", "#762a83",
];

/// A row of the summary: its name, whether lower is better (`Some(true)`), higher (`Some(false)`) or neither, and the
/// figure.
type Row = (&'static str, Option<bool>, fn(&Summary) -> Option<Figure>);

/// The summary's rows, in groups.
const ROWS: [(&str, &[Row]); 7] = [
    (
        "The user's wait (s)",
        &[
            ("returns and relaunches together (first launches left out)", Some(true), |s| Some(s.wait_s)),
            ("the same had every return been hot (the floor)", Some(true), |s| Some(s.wait_if_hot_s)),
            ("p95 of returns and relaunches (ms)", Some(true), |s| s.after_first_p95_ms),
            ("p50 of returns and relaunches (ms)", Some(true), |s| s.after_first_p50_ms),
        ],
    ),
    (
        "Kills",
        &[
            ("by the manager", Some(true), |s| s.has_manager.then_some(s.kills_by_manager)),
            ("by the kernel's OOM killer", Some(true), |s| Some(s.kills_by_kernel)),
            ("of the foreground app", Some(true), |s| Some(s.foreground_kills)),
        ],
    ),
    (
        "Visits",
        &[
            ("hot (alive, nothing read back)", Some(false), |s| Some(s.hot)),
            ("warm (alive, pages read back)", None, |s| Some(s.warm)),
            ("hot returns after a compaction (%)", Some(false), |s| s.hot_after_compaction_pct),
            ("cold (relaunched)", Some(true), |s| Some(s.cold)),
            ("failed", Some(true), |s| Some(s.failed)),
            ("apps alive after a visit", Some(false), |s| Some(s.live_apps_mean)),
        ],
    ),
    (
        "Latency (ms)",
        &[
            ("p50, all visits", Some(true), |s| s.latency_p50_ms),
            (
                "p50 had every return been hot (warm returns and relaunches at the app's hot median over the bench)",
                Some(true),
                |s| s.p50_every_return_hot_ms,
            ),
            ("p95, all visits", Some(true), |s| s.latency_p95_ms),
            ("p50 of returns (hot and warm)", Some(true), |s| s.return_p50_ms),
            ("p50 of warm returns", Some(true), |s| s.warm_p50_ms),
            ("p50 of cold launches", Some(true), |s| s.cold_p50_ms),
            ("jank % (frames over 16.7 ms)", Some(true), |s| s.jank_pct),
            ("frame p95", Some(true), |s| s.frame_p95_ms),
        ],
    ),
    (
        "Memory and pressure",
        &[
            ("available after idle (MiB)", Some(false), |s| s.idle_available_mib),
            ("file refaults (pages)", Some(true), |s| Some(s.refault_file_pages)),
            ("anonymous refaults (pages)", Some(true), |s| Some(s.refault_anon_pages)),
            ("swap-ins (pages)", Some(true), |s| s.swap_in_pages),
            ("swap-outs (pages)", None, |s| s.swap_out_pages),
            ("refault ratio (anon refaults / swap-outs)", Some(true), |s| s.refault_ratio),
            ("PSI some (s of stall)", Some(true), |s| Some(s.psi_some_s)),
            ("PSI full (s of stall)", Some(true), |s| Some(s.psi_full_s)),
            ("direct reclaims (allocations that reclaimed for themselves)", Some(true), |s| s.direct_reclaims),
            ("reclaim calls (direct, background wakeups, the manager's own)", Some(true), |s| s.reclaim_calls),
            ("zram compression ratio", Some(false), |s| s.zram_ratio),
            ("KSM saved (MiB)", Some(false), |s| Some(s.ksm_saved_mib)),
            ("ksmd CPU (s)", Some(true), |s| s.ksmd_cpu_s),
        ],
    ),
    (
        "The machine, shared with other work",
        &[
            ("CPU used outside the device and memorch's daemon (s)", None, |s| s.other_cpu_s),
            ("CPU the host ran others on (steal, s)", None, |s| s.steal_s),
        ],
    ),
    (
        "The manager's own cost",
        &[
            ("CPU (s)", Some(true), |s| s.has_manager.then_some(s.manager_cpu_s)),
            ("CPU of the manager and the device: apps and their reclaim (s)", Some(true), |s| s.with_device_cpu_s),
            ("RSS (MiB)", Some(true), |s| s.has_manager.then_some(s.manager_rss_mib)),
            ("PSS (MiB)", Some(true), |s| s.has_manager.then_some(s.manager_pss_mib)),
        ],
    ),
];

/// The summary, a column a manager and a row a figure (so that ten managers fit a screen).
fn summary_table(o: &mut String, sums: &[Summary], color: &dyn Fn(&str) -> &'static str) {
    let repeated = sums.iter().all(|s| s.runs > 1);
    let served: Vec<&Summary> = sums.iter().filter(|s| s.empty_runs < s.runs).collect();
    o.push_str(r#"<div class="scroll"><table class="summary"><thead><tr><th class="l">figure</th>"#);
    for s in sums {
        let empty = if s.empty_runs == s.runs { r#"<small class="bad">no visit served</small>"# } else { "" };
        let _ = write!(
            o,
            r#"<th><span class="sw" style="background:{}"></span>{}<small>{} run{}</small>{empty}</th>"#,
            color(&s.manager),
            esc(&s.manager),
            s.runs,
            if s.runs == 1 { "" } else { "s" }
        );
    }
    o.push_str("</tr></thead><tbody>");
    for (group, rows) in ROWS {
        let _ = write!(o, r#"<tr class="group"><td class="l" colspan="{}">{group}</td></tr>"#, sums.len() + 1);
        for (name, lower, f) in rows.iter() {
            let _ = write!(o, r#"<tr><td class="l">{name}</td>"#);
            let others: Vec<Figure> = served.iter().filter_map(|s| f(s)).collect();
            let all_equal = others.windows(2).all(|w| w[0].median == w[1].median);
            let best = lower.filter(|_| !all_equal).and_then(|low| {
                others
                    .iter()
                    .copied()
                    .reduce(|a, b| if (b.median < a.median) == low && b.median != a.median { b } else { a })
            });
            for s in sums {
                // A manager that served nothing has no figures, only its failures.
                if s.empty_runs == s.runs {
                    match *name {
                        "failed" => {
                            let _ = write!(o, r#"<td class="bad">{}</td>"#, num(s.failed.median));
                        }
                        _ => o.push_str("<td>–</td>"),
                    }
                    continue;
                }
                let Some(v) = f(s) else {
                    o.push_str("<td>–</td>");
                    continue;
                };
                let class = match best {
                    Some(b) if b.median == v.median => " class=\"best\"",
                    Some(b) if repeated && v.overlaps(&b) => {
                        " class=\"ns\" title=\"within the spread of the best: not significant\""
                    }
                    _ => "",
                };
                let spread =
                    if s.runs > 1 { format!("<small>{}–{}</small>", num(v.min), num(v.max)) } else { String::new() };
                let _ = write!(o, "<td{class}>{}{spread}</td>", num(v.median));
            }
            o.push_str("</tr>");
        }
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
        let first: String = first.lines().map(str::trim).collect::<Vec<_>>().join(" / ").chars().take(400).collect();
        w.push(format!(
            "<b>{}</b> (seed {}): {} of {} visits failed; the first: {} <small>(logs: {})</small>",
            esc(&r.manager),
            r.seed,
            r.failed(),
            r.visits.len(),
            esc(&first),
            esc(&r.log_dir)
        ));
    }
    for r in runs.iter().filter(|r| r.interrupted) {
        w.push(format!(
            "<b>{}</b> (seed {}): interrupted (Ctrl-C) after {} visits; its figures cover only those.",
            esc(&r.manager),
            r.seed,
            r.visits.len()
        ));
    }
    for s in sums.iter().filter(|s| s.empty_runs > 0) {
        w.push(format!(
            "<b>{}</b>: {} of {} runs served no visit at all; their figures are not results.",
            esc(&s.manager),
            s.empty_runs,
            s.runs
        ));
    }
    if !w.is_empty() {
        let _ = write!(o, r#"<div class="warn"><h2>Warnings</h2><ul><li>{}</li></ul></div>"#, w.join("</li><li>"));
    }
}

fn devices(o: &mut String, managers: &[String], runs: &[RunResult], color: &dyn Fn(&str) -> &'static str) {
    o.push_str(r#"<h2>Devices</h2><table class="small"><tr><th class="l">manager</th><th>RAM</th><th>zram</th><th>algorithm</th><th>swap read-ahead (pages a fault)</th><th>apps opted in to KSM</th><th>runs</th><th>seeds</th></tr>"#);
    for m in managers {
        let rs: Vec<&RunResult> = runs.iter().filter(|r| &r.manager == m).collect();
        let d = &rs[0].device;
        let mib = |b: u64| format!("{} MiB", b >> 20);
        let seeds: Vec<String> = rs.iter().map(|r| r.seed.to_string()).collect();
        let _ = write!(
            o,
            r#"<tr><td class="l"><span class="sw" style="background:{}"></span>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
            color(m),
            esc(m),
            mib(d.ram_bytes),
            if d.zram_bytes == 0 { "none".into() } else { mib(d.zram_bytes) },
            if d.zram_bytes == 0 { "–" } else { d.zram_algorithm.as_str() },
            d.swap_read_ahead_pages.map_or("–".into(), |n| n.to_string()),
            if d.ksm_opt_in { "yes" } else { "no" },
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
td small,th small{display:block;color:#777;font-size:10px;font-weight:normal}\
table.summary th{max-width:9em;word-break:break-word}table.summary td.l{white-space:normal;min-width:14em}\
tr.group td{background:#fafafa;font-weight:bold;border-top:2px solid #bbb}.best{font-weight:bold}.ns{color:#999}\
.sw{display:inline-block;width:10px;height:10px;margin-right:5px}\
.warn{border:2px solid #c33;background:#fff3f3;padding:.2em 1em}.warn h2{color:#b00;margin-top:.5em}\
.bad{color:#b00;font-weight:bold}figure{margin:1.2em 0}svg{width:100%;height:auto;max-width:960px}\
p.note{color:#555;font-size:13px}";

/// The whole report.
pub fn report(
    scenario: &str,
    description: &str,
    sums: &[Summary],
    runs: &[RunResult],
    stopped: Option<&str>,
) -> String {
    let managers: Vec<String> = sums.iter().map(|s| s.manager.clone()).collect();
    let color = |m: &str| COLORS[managers.iter().position(|x| x == m).unwrap_or(0) % COLORS.len()];
    let mut o = String::new();
    let _ = write!(o, "<!doctype html><html><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>memorch bench: {0}</title><style>{STYLE}</style></head><body><h1>memorch bench: {0}</h1><p>{1}</p>", esc(scenario), esc(description));
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
    crate::html_charts::charts(&mut o, &managers, runs, &color);
    o.push_str("</body></html>\n");
    o
}
