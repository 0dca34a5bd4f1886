//! `memorch ksm status|tune`.

use super::{open_domain, print_json};
use anyhow::Result;
use memorch_core::Facility;
use memorch_linux::ksm::{self, KsmSettings};
use memorch_linux::SysRoot;

/// KSM, the kernel's same-page merging: see what it saves and tune its pace. Processes opt in
/// from their start: see `memorch spawn --ksm`.
#[derive(clap::Subcommand)]
pub enum Command {
    /// Global counters, and each process of the domain that KSM scans.
    Status {
        #[arg(long, default_value = "system")]
        domain: String,
        #[arg(long)]
        json: bool,
    },
    /// Change KSM's knobs (machine-wide). Prints the old values to restore them.
    Tune {
        /// 0 stop, 1 run, 2 unmerge everything.
        #[arg(long)]
        run: Option<u8>,
        /// Pages ksmd scans per wake-up.
        #[arg(long)]
        pages_to_scan: Option<u64>,
        /// Sleep between wake-ups.
        #[arg(long)]
        sleep_ms: Option<u64>,
        /// Say what would change; change nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

pub fn run(c: Command) -> Result<()> {
    let root = SysRoot::live();
    match c {
        Command::Status { domain, json } => {
            let domain = open_domain(&root, &domain)?;
            let global = ksm::read(&root);
            let procs: Vec<_> = domain
                .pids(&root)?
                .into_iter()
                .filter_map(|pid| ksm::read_process(&root, pid).ok())
                .filter(|p| p.merge_any || p.merging_pages > 0 || p.rmap_items > 0)
                .collect();
            if json {
                return print_json(&serde_json::json!({ "ksm": global, "processes": procs }));
            }
            match &global {
                Facility::Unavailable { reason } => println!("ksm: not available ({reason})"),
                Facility::Available(k) => println!("ksm: {}", crate::human::ksm_line(k)),
            }
            if procs.is_empty() {
                println!("no process of {} is mergeable (start them with 'memorch spawn --ksm')", domain.spec);
            }
            for p in procs {
                println!(
                    "  pid {:>7}: merging {} pages, rmap items {}, profit {} B{}",
                    p.pid,
                    p.merging_pages,
                    p.rmap_items,
                    p.profit_bytes,
                    if p.merge_any { ", whole process mergeable" } else { "" }
                );
            }
        }
        Command::Tune { run, pages_to_scan, sleep_ms, dry_run } => {
            let s = KsmSettings { run, pages_to_scan, sleep_ms };
            anyhow::ensure!(s != KsmSettings::default(), "nothing to tune: give --run, --pages-to-scan or --sleep-ms");
            if dry_run {
                let old = ksm::plan(&root, &s)?;
                let show = |o: Option<u64>, n: Option<u64>| o.zip(n).map(|(o, n)| format!("{o} → {n}"));
                for (k, v) in [
                    ("run", show(old.run.map(u64::from), run.map(u64::from))),
                    ("pages_to_scan", show(old.pages_to_scan, pages_to_scan)),
                    ("sleep_millisecs", show(old.sleep_ms, sleep_ms)),
                ] {
                    if let Some(v) = v {
                        println!("would set {k}: {v}");
                    }
                }
                return Ok(());
            }
            let old = ksm::tune(&root, &s)?;
            let mut restore = String::from("memorch ksm tune");
            if let Some(v) = old.run {
                restore += &format!(" --run {v}");
            }
            if let Some(v) = old.pages_to_scan {
                restore += &format!(" --pages-to-scan {v}");
            }
            if let Some(v) = old.sleep_ms {
                restore += &format!(" --sleep-ms {v}");
            }
            println!("ksm tuned; to restore: {restore}");
        }
    }
    Ok(())
}
