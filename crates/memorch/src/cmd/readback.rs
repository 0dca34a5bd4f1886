//! `memorch readback PID`: read a process's swapped-out pages back now, as its own touch would (the reverse of `memorch
//! compact`).

use super::{micros, open_target, print_json, rate};
use crate::human::bytes;
use anyhow::{Context, Result};
use memorch_linux::readback;

/// Read a process's swapped-out pages back into RAM, mapped in the process as its own touch
/// maps them (through /proc/PID/mem), so its next use of them waits for nothing and the
/// kernel's reclaim sees them as just used. Only pages in swap are read: of its anonymous
/// memory, and its own copies of pages of files it maps privately (a library's relocated
/// data, a JVM's class archive). What the daemon does for the app in front once its return
/// is served (`whole`).
///
/// Examples:
///   memorch readback 4242                      all of its swapped-out pages
///   memorch readback 4242 --max-pages 25600    at most 100 MiB of them
///   memorch readback 4242 --ahead              ask for them all at once first (storage swap)
///   memorch readback 4242 --domain cgroup:/phone --json
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// The process.
    pid: u32,
    /// Read at most N swapped-out pages back.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_pages: Option<u64>,
    /// Ask for the pages all at once (process_madvise MADV_WILLNEED) before touching them, so the device reads them
    /// together: about three times faster from a storage swap file, a seventh slower from zram (the daemon's read-back,
    /// with `prefetch_whole`, asks so only for the pages outside zram).
    #[arg(long)]
    ahead: bool,
    #[command(flatten)]
    t: super::TargetArgs,
}

pub fn run(a: Args) -> Result<()> {
    let (root, _, t) = open_target(&a.t, a.pid)?;
    if a.t.dry_run {
        let swap = memorch_linux::compact::Resident::read(&root, a.pid)?.swap_bytes;
        let would = a.max_pages.map_or(swap, |p| (p * root.page_size).min(swap));
        if a.t.json {
            return print_json(
                &serde_json::json!({ "pid": t.pid, "name": t.name, "dry_run": true, "swap_bytes": swap, "would_read_bytes": would }),
            );
        }
        println!("would read back {} of {} ({}, {}) from swap", bytes(would), t.pid, t.name, t.class);
        return Ok(());
    }
    let ahead = if a.ahead { readback::Ahead::All } else { readback::Ahead::Nothing };
    let r = readback::read_back(&root, &t, a.max_pages.unwrap_or(u64::MAX), ahead)
        .with_context(|| format!("reading pid {} back", a.pid))?;
    if a.t.json {
        return print_json(&r);
    }
    let at_once =
        if a.ahead { format!(" ({} of them asked for at once first)", bytes(r.ahead_bytes)) } else { String::new() };
    println!(
        "read back {} ({}, {}): {} in {} runs of swapped pages asked{at_once}, {} read",
        r.pid,
        r.name,
        t.class,
        bytes(r.asked_bytes),
        r.ranges,
        bytes(r.read_bytes)
    );
    match &r.after {
        Some(after) => println!(
            "  swap {} → {} ({} back), RSS {} → {}; {} ({})",
            bytes(r.before.swap_bytes),
            bytes(after.swap_bytes),
            bytes(r.back_bytes),
            bytes(r.before.rss_bytes()),
            bytes(after.rss_bytes()),
            micros(r.elapsed_us),
            rate(r.back_bytes, r.elapsed_us)
        ),
        None => println!("  the process exited mid-way; stopped after {}", micros(r.elapsed_us)),
    }
    Ok(())
}
