//! `memorch swapfile add|list|remove`.

use super::print_json;
use crate::human::bytes;
use anyhow::Result;
use memorch_linux::swapfile::{self, DEFAULT_DIR, DEFAULT_PRIORITY};
use memorch_linux::SysRoot;
use std::path::PathBuf;

/// Storage swap files, added when zram is full and removed when idle (SWAM's adaptive swap).
/// memorch only touches its own files, named memorch-swap-N.swap.
#[derive(clap::Subcommand)]
pub enum Command {
    /// Create, format and enable a swap file.
    Add {
        /// Size in MiB.
        #[arg(long, default_value = "512", value_parser = crate::args::mib)]
        size: u64,
        /// Directory on a filesystem that can hold swap (ext4, xfs).
        #[arg(long, default_value = DEFAULT_DIR)]
        dir: PathBuf,
        /// Swap priority: below zram's (100) so zram fills first.
        #[arg(long, default_value_t = DEFAULT_PRIORITY, value_parser = clap::value_parser!(i32).range(0..=32767))]
        priority: i32,
        /// Say what would be created; change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// memorch's swap files, active and left over.
    List {
        /// Where memorch keeps its swap files.
        #[arg(long, default_value = DEFAULT_DIR)]
        dir: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Disable and delete swap files.
    Remove {
        /// One file.
        #[arg(required_unless_present_any = ["idle", "all"], conflicts_with_all = ["idle", "all"])]
        path: Option<PathBuf>,
        /// Every active memorch swap file that holds nothing (SWAM's eraser).
        #[arg(long, conflicts_with = "all")]
        idle: bool,
        /// Every memorch swap file.
        #[arg(long)]
        all: bool,
        /// Where memorch keeps its swap files.
        #[arg(long, default_value = DEFAULT_DIR)]
        dir: PathBuf,
        /// Say what would be removed; change nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

pub fn run(c: Command) -> Result<()> {
    let root = SysRoot::live();
    match c {
        Command::Add { size, dir, priority, dry_run: true } => {
            let p = swapfile::plan(&dir, size)?;
            println!("would add swap file {}: {}, priority {priority}", p.display(), bytes(size));
        }
        Command::Add { size, dir, priority, dry_run: false } => {
            let p = swapfile::add(&root, &dir, size, priority)?;
            println!("swap file {} added: {}, priority {priority}", p.display(), bytes(size));
        }
        Command::List { dir, json } => {
            let files = swapfile::list(&root, &dir)?;
            if json {
                return print_json(&files);
            }
            if files.is_empty() {
                println!("no memorch swap files");
            }
            for f in files {
                println!(
                    "{} {} used {} {}",
                    f.path.display(),
                    bytes(f.size_bytes),
                    bytes(f.used_bytes),
                    match f.priority {
                        Some(p) => format!("priority {p}"),
                        None => "inactive (left over)".into(),
                    }
                );
            }
        }
        Command::Remove { path, idle, all, dir, dry_run } => remove(&root, path, idle, all, &dir, dry_run)?,
    }
    Ok(())
}

/// Remove one file, or memorch's files in `dir` that are active and empty (with `idle`, those
/// left inactive too; with `all`, every one).
fn remove(
    root: &SysRoot,
    path: Option<PathBuf>,
    idle: bool,
    all: bool,
    dir: &std::path::Path,
    dry_run: bool,
) -> Result<()> {
    let paths: Vec<PathBuf> = match path {
        Some(p) => vec![p],
        None => swapfile::list(root, dir)?
            .into_iter()
            .filter(|f| all || (f.active && f.used_bytes == 0) || (!f.active && idle))
            .map(|f| f.path)
            .collect(),
    };
    if paths.is_empty() {
        println!("no {}memorch swap file to remove", if idle { "idle " } else { "" });
    }
    for p in paths {
        if dry_run {
            anyhow::ensure!(
                swapfile::is_ours(&p),
                "{} was not made by memorch (its files are named memorch-swap-N.swap)",
                p.display()
            );
            println!("would remove {}", p.display());
            continue;
        }
        swapfile::remove(root, &p)?;
        println!("removed {}", p.display());
    }
    Ok(())
}
