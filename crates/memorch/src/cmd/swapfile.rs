//! `memorch swapfile add|list|remove`.

use super::{print_json, Said};
use crate::human::bytes;
use anyhow::Result;
use memorch_linux::swapfile::{self, DEFAULT_DIR, DEFAULT_PRIORITY};
use memorch_linux::SysRoot;
use std::path::PathBuf;

/// Storage swap files, added when zram is full and removed when idle (SWAM's adaptive swap). memorch only touches its
/// own files, named memorch-swap-N.swap.
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
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
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
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(c: Command) -> Result<()> {
    let root = SysRoot::live();
    match c {
        Command::Add { size, dir, priority, dry_run, json } => {
            let mut said = Said::new(json);
            let record = |p: &std::path::Path| serde_json::json!({"dry_run": dry_run, "path": p, "size_bytes": size, "priority": priority});
            if dry_run {
                let p = swapfile::plan(&dir, size)?;
                said.say(
                    format!("would add swap file {}: {}, priority {priority}", p.display(), bytes(size)),
                    record(&p),
                );
            } else {
                let p = swapfile::add(&root, &dir, size, priority)?;
                said.say(format!("swap file {} added: {}, priority {priority}", p.display(), bytes(size)), record(&p));
            }
            said.done()?;
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
        Command::Remove { path, idle, all, dir, dry_run, json } => {
            let mut said = Said::new(json);
            remove(&root, path, Which { idle, all }, &dir, dry_run, &mut said)?;
            said.done()?;
        }
    }
    Ok(())
}

/// Remove one file, or memorch's files in `dir` that are active and empty (with `idle`, those left inactive too; with
/// `all`, every one).
struct Which {
    idle: bool,
    all: bool,
}

fn remove(
    root: &SysRoot,
    path: Option<PathBuf>,
    Which { idle, all }: Which,
    dir: &std::path::Path,
    dry_run: bool,
    said: &mut Said,
) -> Result<()> {
    let paths: Vec<PathBuf> = match path {
        Some(p) => vec![p],
        None => swapfile::list(root, dir)?
            .into_iter()
            .filter(|f| all || (f.active && f.used_bytes == 0) || (!f.active && idle))
            .map(|f| f.path)
            .collect(),
    };
    if paths.is_empty() && !said.json() {
        println!("no {}memorch swap file to remove", if idle { "idle " } else { "" });
    }
    for p in paths {
        if dry_run {
            anyhow::ensure!(
                swapfile::is_ours(&p),
                "{} was not made by memorch (its files are named memorch-swap-N.swap)",
                p.display()
            );
            said.say(format!("would remove {}", p.display()), serde_json::json!({"dry_run": true, "removed": p}));
            continue;
        }
        swapfile::remove(&p)?;
        said.say(format!("removed {}", p.display()), serde_json::json!({"dry_run": false, "removed": p}));
    }
    Ok(())
}
