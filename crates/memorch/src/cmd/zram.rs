//! `memorch zram setup|status|teardown`.

use super::{print_json, Said};
use crate::human::bytes;
use anyhow::{Context, Result};
use memorch_linux::zram::{self, ZramSize};
use memorch_linux::{meminfo, swaps, SysRoot};
use serde_json::json;

/// Set up, show and tear down zram swap. memorch records what it changed (/run/memorch/zram/) so that teardown puts the
/// device back exactly as it was.
#[derive(clap::Subcommand)]
pub enum Command {
    /// Make a zram swap device: uses a free device, hot-adding one if zram0 is busy.
    Setup {
        /// Size: MiB, or a share of RAM like 25% (the papers use 15–25 %).
        #[arg(long, default_value = "25%", value_parser = parse_size)]
        size: ZramSize,
        /// Compression algorithm (lz4 is fastest; lzo-rle the kernel's default).
        #[arg(long)]
        algorithm: Option<String>,
        /// Swap priority: higher is used first. Keep it above storage swap files.
        #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(i32).range(0..=32767))]
        priority: i32,
        /// Say what would be set up; change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Every zram device: size, algorithm, what is stored and how well it compresses.
    Status {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Undo what `zram setup` did, on every device memorch set up (or one).
    Teardown {
        /// Only this device (e.g. zram1).
        #[arg(long)]
        device: Option<String>,
        /// Say what would be undone; change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

fn parse_size(s: &str) -> Result<ZramSize, String> {
    ZramSize::parse(s).ok_or_else(|| format!("'{s}' is not a size: give MiB (512) or a share of RAM (25%)"))
}

pub fn run(c: Command) -> Result<()> {
    let root = SysRoot::live();
    match c {
        Command::Setup { size, algorithm, priority, dry_run, json } => {
            let mut said = Said::new(json);
            setup(&root, size, algorithm.as_deref(), priority, dry_run, &mut said)?;
            said.done()
        }
        Command::Status { json } => status(&root, json),
        Command::Teardown { device, dry_run, json } => {
            let mut said = Said::new(json);
            teardown(&root, device.as_deref(), dry_run, &mut said)?;
            said.done()
        }
    }
}

fn setup(
    root: &SysRoot,
    size: ZramSize,
    algorithm: Option<&str>,
    priority: i32,
    dry_run: bool,
    said: &mut Said,
) -> Result<()> {
    let size_bytes = size.bytes(meminfo::mem_total_bytes(root)?);
    if dry_run {
        let dev = zram::plan(root, size_bytes, algorithm)?;
        let text = format!(
            "would set up {} as swap: {} {}, priority {priority}",
            dev.as_deref().unwrap_or("a hot-added zram device (every device is busy)"),
            bytes(size_bytes),
            algorithm.unwrap_or("(the kernel's default algorithm)")
        );
        let record = json!({"dry_run": true, "device": dev, "disksize_bytes": size_bytes, "algorithm": algorithm, "priority": priority});
        said.say(text, record);
        return Ok(());
    }
    let rec = zram::setup(root, size_bytes, algorithm, priority)?;
    zram::save_record(&rec).context("recording the zram set-up (teardown needs it)")?;
    let text = format!(
        "zram: {} set up as swap: {} {}, priority {}{}; undo with 'memorch zram teardown'",
        rec.device,
        bytes(rec.disksize_bytes),
        rec.algorithm,
        rec.priority,
        if rec.hot_added { " (hot-added)" } else { "" }
    );
    said.say(text, json!({"dry_run": false, "device": rec.device, "disksize_bytes": rec.disksize_bytes, "algorithm": rec.algorithm, "priority": rec.priority, "hot_added": rec.hot_added}));
    Ok(())
}

fn status(root: &SysRoot, json: bool) -> Result<()> {
    let swap = swaps::read(root)?;
    let state = memorch_linux::zram_stats::read(root, &swap);
    let records = zram::records()?;
    if json {
        return print_json(&serde_json::json!({ "zram": state, "set_up_by_memorch": records }));
    }
    let Some(z) = state.get() else {
        println!(
            "zram: {}",
            match &state {
                memorch_core::Facility::Unavailable { reason } => reason.as_str(),
                _ => "",
            }
        );
        return Ok(());
    };
    for d in &z.devices {
        let ours = records.iter().any(|r| r.device == d.name);
        println!(
            "{}: {} {}{}{} — stores {} in {} (ratio {}), same pages {}, huge pages {}",
            d.name,
            bytes(d.disksize_bytes),
            d.algorithm,
            if d.is_swap { ", swap" } else { "" },
            if ours { ", set up by memorch" } else { "" },
            bytes(d.orig_data_bytes),
            bytes(d.mem_used_bytes),
            d.compression_ratio.map_or("-".into(), |r| format!("{r:.2}")),
            d.same_pages,
            d.huge_pages
        );
    }
    Ok(())
}

/// Only its own set-ups: those of a live test, bench or daemon are theirs to undo.
fn teardown(root: &SysRoot, device: Option<&str>, dry_run: bool, said: &mut Said) -> Result<()> {
    let records: Vec<_> = zram::records()?
        .into_iter()
        .filter(|r| device.is_none_or(|d| d == r.device))
        .filter(|r| r.owner().is_none_or(|o| !o.alive(root)))
        .collect();
    if records.is_empty() && !said.json() {
        println!(
            "zram: nothing to tear down: memorch set up no {} (it only undoes its own set-ups)",
            device.unwrap_or("device")
        );
    }
    for rec in records {
        let record = json!({"dry_run": dry_run, "device": rec.device, "algorithm_restored": rec.previous_algorithm, "hot_removed": rec.hot_added});
        if dry_run {
            let hot = if rec.hot_added { ", hot-remove" } else { "" };
            said.say(
                format!("would tear down {} (algorithm back to {}{hot})", rec.device, rec.previous_algorithm),
                record,
            );
            continue;
        }
        zram::teardown(root, &rec).with_context(|| format!("tearing down {}", rec.device))?;
        zram::forget_record(&rec)?;
        let hot = if rec.hot_added { ", hot-removed" } else { "" };
        said.say(format!("zram: {} torn down (algorithm back to {}{hot})", rec.device, rec.previous_algorithm), record);
    }
    Ok(())
}
