//! `memorch kill PID`: kill so the memory comes back at once.

use super::{micros, open_target, print_json};
use crate::human::bytes;
use anyhow::Result;
use memorch_linux::kill;

/// Kill a process with pidfd_send_signal(SIGKILL) and process_mrelease, wait for it to exit, and report the memory that
/// came back and how long it took. The log line has lmkd's form.
///
/// Refuses PID 1, kernel threads, memorch and its ancestors, system processes (oom_score_adj < 0) and anything outside
/// --domain.
#[derive(clap::Args)]
pub struct Args {
    /// The process.
    pid: u32,
    /// Why, for the log line.
    #[arg(long, default_value = "by hand")]
    reason: String,
    #[command(flatten)]
    t: super::TargetArgs,
}

pub fn run(a: Args) -> Result<()> {
    let (root, domain, t) = open_target(&a.t, a.pid)?;
    if a.t.dry_run {
        println!(
            "would kill '{}' (pid {}, {}, oom_score_adj {}): {}",
            t.name, t.pid, t.class, t.oom_score_adj, a.reason
        );
        return Ok(());
    }
    let r = kill::kill(&root, &domain, &t, &a.reason)?;
    if a.t.json {
        return print_json(&r);
    }
    println!("{}", kill::line(&t, r.uid, r.rss_bytes, r.swap_bytes, &r.reason));
    if r.exited {
        println!(
            "  exited after {}; domain regained {}{}",
            micros(r.elapsed_us),
            bytes(r.regained_bytes),
            if r.mreleased { " (reaped with process_mrelease)" } else { "" }
        );
    } else {
        anyhow::bail!("pid {} did not exit within {:?} of SIGKILL (stuck in the kernel?)", r.pid, kill::EXIT_TIMEOUT);
    }
    Ok(())
}
