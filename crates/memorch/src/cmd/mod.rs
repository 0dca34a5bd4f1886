//! One file per subcommand, and the few helpers they share.

pub mod app;
pub mod bench;
mod bench_progress;
mod bench_run;
pub mod compact;
pub mod config;
mod config_page;
pub mod ctl;
mod ctl_status;
pub mod freeze;
pub mod kill;
pub mod ksm;
pub mod manual;
pub mod presets;
pub mod readback;
pub mod reclaim;
pub mod report;
pub mod sandbox;
mod scoreboard;
pub mod spawn;
pub mod status;
pub mod swapfile;
pub mod zram;

use anyhow::{Context, Result};
use memorch_linux::{Domain, DomainSpec, SysRoot};
use serde::Serialize;

/// What every command that acts on one process takes besides the pid.
#[derive(clap::Args)]
pub struct TargetArgs {
    /// Refuse a PID outside this domain (`system` or `cgroup:PATH`).
    #[arg(long, default_value = "system")]
    pub domain: String,
    /// Say what would be done; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The live root, the `--domain` and the process `pid` checked against it (`target::check`: inside the domain, not
/// memorch, PID 1 or a system process; pinned by a pidfd): how every command that acts on one process begins.
pub fn open_target(t: &TargetArgs, pid: u32) -> Result<(SysRoot, Domain, memorch_linux::target::Target)> {
    let root = SysRoot::live();
    let domain = open_domain(&root, &t.domain)?;
    let target = memorch_linux::target::check(&root, pid, &domain)?;
    Ok((root, domain, target))
}

/// Parse and find a `--domain` value.
pub fn open_domain(root: &SysRoot, text: &str) -> Result<Domain> {
    let spec: DomainSpec = text.parse()?;
    Domain::open(root, &spec).with_context(|| format!("domain {spec}"))
}

/// Print a value as pretty JSON.
pub fn print_json<T: Serialize>(v: &T) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}

/// `1.5 s`, `12.3 ms`, `80 µs`.
pub fn micros(us: u64) -> String {
    match us {
        0..=999 => format!("{us} µs"),
        1_000..=999_999 => format!("{:.1} ms", us as f64 / 1e3),
        _ => format!("{:.2} s", us as f64 / 1e6),
    }
}

/// MB/s (10^6 bytes a second), as storage and compression figures are quoted.
pub fn rate(bytes: u64, us: u64) -> String {
    if us == 0 {
        return "-".into();
    }
    format!("{:.0} MB/s", bytes as f64 / us as f64)
}

/// What a command that changes things did: a line each for people or, with `--json`, the records as one JSON array for
/// programs, printed once the command is done.
pub struct Said {
    json: bool,
    records: Vec<serde_json::Value>,
    printed: bool,
}

impl Said {
    pub fn new(json: bool) -> Said {
        Said { json, records: Vec::new(), printed: false }
    }

    pub fn say(&mut self, text: impl std::fmt::Display, record: serde_json::Value) {
        if self.json {
            self.records.push(record);
        } else {
            println!("{text}");
        }
    }

    /// Whether the records go out as JSON (so a note for people is left out).
    pub fn json(&self) -> bool {
        self.json
    }

    pub fn done(mut self) -> Result<()> {
        self.printed = true;
        if self.json {
            print_json(&self.records)?;
        }
        Ok(())
    }
}

impl Drop for Said {
    /// A command that fails part-way still says, as JSON, what it had done (the error follows on standard error), as
    /// its text mode has.
    fn drop(&mut self) {
        if self.json && !self.printed && !self.records.is_empty() {
            let _ = print_json(&self.records);
        }
    }
}
