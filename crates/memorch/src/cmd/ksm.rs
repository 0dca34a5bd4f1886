//! `memorch ksm status|tune`.

use super::{open_domain, print_json, Said};
use anyhow::Result;
use memorch_core::Facility;
use memorch_linux::ksm::{self, KsmSettings};
use memorch_linux::SysRoot;

/// KSM, the kernel's same-page merging: see what it saves and tune its pace. Processes opt in from their start: see
/// `memorch spawn --ksm`.
#[derive(clap::Subcommand)]
pub enum Command {
    /// Global counters, and each process of the domain that KSM scans.
    Status {
        /// Whose processes to list (`system` or `cgroup:PATH`).
        #[arg(long, default_value = "system")]
        domain: String,
        /// Print JSON instead of text.
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
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(c: Command) -> Result<()> {
    let root = SysRoot::live();
    match c {
        Command::Status { domain, json } => status(&root, &domain, json),
        Command::Tune { run, pages_to_scan, sleep_ms, dry_run, json } => {
            let mut said = Said::new(json);
            tune(&root, KsmSettings { run, pages_to_scan, sleep_ms }, dry_run, &mut said)?;
            said.done()
        }
    }
}

/// KSM's state, and each process of the domain that may merge.
fn status(root: &SysRoot, domain: &str, json: bool) -> Result<()> {
    let domain = open_domain(root, domain)?;
    let global = ksm::read(root);
    let procs: Vec<_> = domain
        .pids(root)?
        .into_iter()
        .filter_map(|pid| ksm::read_process(root, pid).ok())
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
        let whole = if p.merge_any { ", whole process mergeable" } else { "" };
        println!(
            "  pid {:>7}: merging {} pages, rmap items {}, profit {} B{whole}",
            p.pid, p.merging_pages, p.rmap_items, p.profit_bytes
        );
    }
    Ok(())
}

/// ksmd's knobs set (or, in a dry run, what would change), and how to put them back.
fn tune(root: &SysRoot, s: KsmSettings, dry_run: bool, said: &mut Said) -> Result<()> {
    anyhow::ensure!(s != KsmSettings::default(), "nothing to tune: give --run, --pages-to-scan or --sleep-ms");
    if dry_run {
        let old = ksm::plan(root, &s)?;
        let show = |o: Option<u64>, n: Option<u64>| o.zip(n).map(|(o, n)| format!("{o} → {n}"));
        for (k, v) in [
            ("run", show(old.run.map(u64::from), s.run.map(u64::from))),
            ("pages_to_scan", show(old.pages_to_scan, s.pages_to_scan)),
            ("sleep_millisecs", show(old.sleep_ms, s.sleep_ms)),
        ] {
            if let Some(v) = v {
                said.say(format!("would set {k}: {v}"), serde_json::json!({"dry_run": true, "knob": k, "change": v}));
            }
        }
        return Ok(());
    }
    let old = ksm::tune(root, &s)?;
    let mut restore = String::from("memorch ksm tune");
    for (flag, v) in
        [("--run", old.run.map(u64::from)), ("--pages-to-scan", old.pages_to_scan), ("--sleep-ms", old.sleep_ms)]
    {
        if let Some(v) = v {
            restore += &format!(" {flag} {v}");
        }
    }
    let record = serde_json::json!({"dry_run": false, "set": {"run": s.run, "pages_to_scan": s.pages_to_scan, "sleep_millisecs": s.sleep_ms}, "restore": restore});
    said.say(format!("ksm tuned; to restore: {restore}"), record);
    Ok(())
}
