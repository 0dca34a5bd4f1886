//! `memorch bench --scoreboard`: every cell of the scoreboard in turn (scoreboard.rs of the bench says which), each a
//! bench in OUT/CELL/, then OUT/scoreboard.md.

use super::bench_run::{bench, Bench, STOP};
use anyhow::Result;
use memorch_bench::scenario::Scenario;
use memorch_bench::scoreboard::{complete_runs, render, CELLS, SEED};
use std::sync::atomic::Ordering;

pub use memorch_bench::scoreboard::MANAGERS;

pub fn run(b: Bench) -> Result<()> {
    let seed = b.seed.unwrap_or(SEED);
    let candidate = b.managers.last().expect("clap gives at least one manager").clone();
    let mut cells = Vec::new();
    let mut failed = Vec::new();
    for (i, cell) in CELLS.iter().enumerate() {
        let dir = b.out.join(cell.name);
        if let Some(runs) = complete_runs(&b.out, cell, &b.managers, b.repeat) {
            eprintln!(
                "memorch bench: scoreboard cell {}/{} {}: complete in {}, kept",
                i + 1,
                CELLS.len(),
                cell.name,
                dir.display()
            );
            cells.push((*cell, runs));
            continue;
        }
        if STOP.load(Ordering::Relaxed) {
            break;
        }
        eprintln!("memorch bench: scoreboard cell {}/{} {}", i + 1, CELLS.len(), cell.name);
        let base = Scenario::load(cell.scenario).map_err(|e| anyhow::anyhow!(e))?;
        let scenario = base.scaled(cell.ram_mb.unwrap_or(base.ram_mb));
        let this = Bench {
            managers: b.managers.clone(),
            seed: Some(seed),
            out: dir,
            launcher: cell.launcher,
            app_groups: cell.app_groups,
            swap_disk: Default::default(),
            // One document at the end, not one a cell.
            json: false,
            ..b
        };
        match bench(scenario, &this) {
            Ok(o) if o.stopped.is_none() && o.failed_visits == 0 => cells.push((*cell, o.runs)),
            Ok(o) => {
                failed.push(format!(
                    "{}: {}",
                    cell.name,
                    o.stopped.unwrap_or(format!("{} visits failed", o.failed_visits))
                ));
                cells.push((*cell, o.runs));
            }
            Err(e) => failed.push(format!("{}: {e}", cell.name)),
        }
    }
    let title = format!("`{candidate}` against the best other, seeds {seed}-{}", seed + b.repeat - 1);
    write_page(&b, &title, &render(&cells, &candidate))?;
    anyhow::ensure!(failed.is_empty(), "some cells are not clean comparisons: {}", failed.join("; "));
    anyhow::ensure!(cells.len() == CELLS.len(), "interrupted: run the same command again to finish the missing cells");
    Ok(())
}

/// OUT/scoreboard.md, and the page (or with --json where it is) on stdout.
fn write_page(b: &Bench, title: &str, body: &str) -> Result<()> {
    let page = format!("# Scoreboard: {title}\n\n{body}");
    let path = b.out.join("scoreboard.md");
    std::fs::write(&path, &page).map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
    if b.json {
        super::print_json(&serde_json::json!({"scoreboard": path}))
    } else {
        println!("\n{page}\nscoreboard: {}", path.display());
        Ok(())
    }
}
