//! `memorch config`: the configuration file.

use anyhow::Result;
use memorch_daemon::config::{Config, DEFAULTS};
use std::path::PathBuf;

/// Print the complete default configuration, or check a file.
#[derive(clap::Args)]
pub struct Args {
    /// Print every key with its default and what it means.
    #[arg(long, conflicts_with = "check")]
    defaults: bool,
    /// Check a configuration file: every error names the key and the line.
    #[arg(long, value_name = "FILE")]
    check: Option<PathBuf>,
}

pub fn run(a: Args) -> Result<()> {
    match a.check {
        Some(p) => {
            let c = Config::load(&p)?;
            println!("{}: ok (preset {}, domain {})", p.display(), c.preset, c.domain);
        }
        None if a.defaults => print!("{DEFAULTS}"),
        None => anyhow::bail!("give --defaults to print the default file, or --check FILE"),
    }
    Ok(())
}
