//! `memorch freeze PATH` and `memorch thaw PATH` (v2 cgroup.freeze).

use anyhow::Result;
use memorch_linux::{freeze, SysRoot};
use std::time::Duration;

/// Freeze or thaw a cgroup: its processes stop (or resume) running and keep their memory. PATH is a cgroup path as
/// /proc/PID/cgroup writes it.
#[derive(clap::Args)]
pub struct Args {
    /// The cgroup, e.g. /phone/app-4242.
    path: String,
    /// Give up after this many seconds (at most a day).
    #[arg(long, default_value = "5", value_parser = crate::args::timeout)]
    timeout: Duration,
    /// Check that it could be done; change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args, frozen: bool) -> Result<()> {
    let mut said = super::Said::new(a.json);
    let record = serde_json::json!({"dry_run": a.dry_run, "cgroup": a.path, "frozen": frozen});
    if a.dry_run {
        freeze::check(&SysRoot::live(), &a.path, frozen)?;
        said.say(format!("would {} {}", if frozen { "freeze" } else { "thaw" }, a.path), record);
    } else {
        freeze::set_frozen(&SysRoot::live(), &a.path, frozen, a.timeout)?;
        said.say(format!("{} {}", if frozen { "froze" } else { "thawed" }, a.path), record);
    }
    said.done()
}
