//! `memorch compact PID`: push a process's pages out now, as Android's `am compact` does.

use super::{micros, open_target, print_json, rate};
use crate::human::bytes;
use anyhow::{Context, Result};
use memorch_linux::compact::{self, Advice, CompactScope};

/// Compact one process with process_madvise: anonymous pages go to swap (zram), file pages
/// are dropped (reread from disk on use). Reports what moved and how long it took.
///
/// Examples:
///   memorch compact 4242                    anonymous memory into swap (the default)
///   memorch compact 4242 --file --cold      mark file pages to go first, keep them for now
///   memorch compact 4242 --so               shared objects only this process maps (SWAM)
///   memorch compact 4242 --max-pages 32     one small step, as the papers reclaim
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// The process.
    pid: u32,
    /// Private anonymous memory (the default).
    #[arg(long, group = "scope")]
    anon: bool,
    /// Private file mappings (code, assets), shared objects included.
    #[arg(long, group = "scope")]
    file: bool,
    /// Shared-object pages that no other process maps (SWAM's OOM cleaner).
    #[arg(long, group = "scope")]
    so: bool,
    /// Anonymous and file.
    #[arg(long, group = "scope")]
    all: bool,
    /// MADV_COLD instead of MADV_PAGEOUT: deactivate the pages so they go first when memory is needed, without
    /// reclaiming them now.
    #[arg(long)]
    cold: bool,
    /// Move at most N resident pages (a small reclaim step).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_pages: Option<u64>,
    #[command(flatten)]
    t: super::TargetArgs,
}

pub fn run(a: Args) -> Result<()> {
    let (root, _, t) = open_target(&a.t, a.pid)?;
    let scope = if a.file {
        CompactScope::File
    } else if a.so {
        CompactScope::SharedObjects
    } else if a.all {
        CompactScope::All
    } else {
        CompactScope::Anon
    };
    let advice = if a.cold { Advice::Cold } else { Advice::Pageout };
    if scope != CompactScope::File && scope != CompactScope::SharedObjects && advice == Advice::Pageout {
        let swap = memorch_linux::swaps::read(&root)?;
        if swap.total_bytes == 0 && !a.t.json {
            eprintln!("warning: no swap is active, so anonymous pages cannot be paged out (run 'memorch zram setup')");
        }
    }
    let r = compact::compact(&root, &t, scope, advice, a.max_pages, a.t.dry_run)
        .with_context(|| format!("compacting pid {}", a.pid))?;
    if a.t.json {
        return print_json(&r);
    }
    let what = format!("{} {} ({}, {})", if r.dry_run { "would compact" } else { "compacted" }, r.pid, r.name, t.class);
    if r.dry_run {
        println!(
            "{what}: {:?} {:?} over {} VMAs, {} ranges, {} of address space",
            r.scope,
            r.advice,
            r.vmas,
            r.ranges,
            bytes(r.advised_bytes)
        );
        return Ok(());
    }
    println!(
        "{what}: {:?} {:?} over {} VMAs ({} ranges, {} calls), {} advised",
        r.scope,
        r.advice,
        r.vmas,
        r.ranges,
        r.calls,
        bytes(r.advised_bytes)
    );
    match &r.after {
        Some(after) => println!(
            "  RSS {} → {} (moved {}, {} pages), swap {} → {}; {} ({})",
            bytes(r.before.rss_bytes()),
            bytes(after.rss_bytes()),
            bytes(r.moved_bytes),
            r.moved_bytes / root.page_size,
            bytes(r.before.swap_bytes),
            bytes(after.swap_bytes),
            micros(r.elapsed_us),
            rate(r.moved_bytes, r.elapsed_us)
        ),
        None => println!("  the process exited mid-way; stopped after {}", micros(r.elapsed_us)),
    }
    Ok(())
}
