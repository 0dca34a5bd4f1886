//! `memorch freeze PATH` and `memorch thaw PATH` (v2 cgroup.freeze).

use anyhow::Result;
use memorch_linux::{freeze, SysRoot};
use std::time::Duration;

/// Freeze or thaw a cgroup: its processes stop (or resume) running and keep their memory.
/// PATH is a cgroup path as /proc/PID/cgroup writes it.
#[derive(clap::Args)]
pub struct Args {
    path: String,
    /// Give up after this many seconds.
    #[arg(long, default_value_t = 5.0)]
    timeout: f64,
    /// Check that it could be done; change nothing.
    #[arg(long)]
    dry_run: bool,
}

pub fn run(a: Args, frozen: bool) -> Result<()> {
    anyhow::ensure!(a.timeout > 0.0 && a.timeout.is_finite(), "--timeout {}: give a positive number of seconds", a.timeout);
    if a.dry_run {
        freeze::check(&SysRoot::live(), &a.path, frozen)?;
        println!("would {} {}", if frozen { "freeze" } else { "thaw" }, a.path);
        return Ok(());
    }
    freeze::set_frozen(&SysRoot::live(), &a.path, frozen, Duration::from_secs_f64(a.timeout))?;
    println!("{} {}", if frozen { "froze" } else { "thawed" }, a.path);
    Ok(())
}
