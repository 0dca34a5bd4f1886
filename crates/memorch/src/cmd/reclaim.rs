//! `memorch reclaim --domain D --bytes N`.

use super::{micros, open_domain, print_json};
use crate::human::bytes;
use anyhow::Result;
use memorch_linux::{reclaim, SysRoot};

/// Ask the kernel to reclaim N bytes from a domain now (MOS phase 1, Tizen's squeeze):
/// v2 memory.reclaim; on v1 a brief lowering of the limit that is always restored; for
/// `system`, file pages of cached apps (oom_score_adj ≥ 900).
///
/// Examples:
///   memorch reclaim --domain cgroup:/a/phone --bytes 64M
///   memorch reclaim --bytes 100M --dry-run
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Which memory to reclaim from (`system` or `cgroup:PATH`).
    #[arg(long, default_value = "system")]
    domain: String,
    /// How much: bytes, or with a K, M, G or T suffix (binary units).
    #[arg(long, value_parser = crate::args::bytes)]
    bytes: u64,
    /// Say what would be reclaimed; change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> Result<()> {
    let root = SysRoot::live();
    let domain = open_domain(&root, &a.domain)?;
    let r = reclaim::reclaim(&root, &domain, a.bytes, a.dry_run)?;
    if a.json {
        return print_json(&r);
    }
    if r.dry_run {
        println!(
            "would reclaim {} from {} with {:?} (used now {})",
            bytes(r.requested_bytes),
            r.domain,
            r.method,
            bytes(r.used_before_bytes)
        );
        return Ok(());
    }
    println!(
        "reclaimed {} of {} asked from {} with {:?} in {}: used {} → {}",
        bytes(r.reclaimed_bytes),
        bytes(r.requested_bytes),
        r.domain,
        r.method,
        micros(r.elapsed_us),
        bytes(r.used_before_bytes),
        bytes(r.used_after_bytes)
    );
    if let Some(n) = r.note {
        println!("  note: {n}");
    }
    Ok(())
}
