//! Killing a process so its memory comes back at once: `pidfd_send_signal(SIGKILL)` then `process_mrelease`, which
//! reaps the address space without waiting for the victim to be scheduled (Android lmkd's way).

use crate::compact::Resident;
use crate::domain::Domain;
use crate::error::Result;
use crate::root::SysRoot;
use crate::snapshot;
use crate::target::Target;
use memorch_core::Class;
use serde::Serialize;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Serialize)]
pub struct KillReport {
    pub pid: u32,
    pub name: String,
    pub class: Class,
    pub uid: u32,
    pub reason: String,
    pub rss_bytes: u64,
    pub swap_bytes: u64,
    /// The domain's used memory fell by this much between the signal and the exit.
    pub regained_bytes: u64,
    /// process_mrelease reaped the memory (false if the kernel had already done it).
    pub mreleased: bool,
    /// From the signal to the process's exit.
    pub elapsed_us: u64,
    pub exited: bool,
}

/// How long a kill may take before we say it did not finish.
pub const EXIT_TIMEOUT: Duration = Duration::from_secs(5);

/// A process sent SIGKILL, with what it held when it was.
#[derive(Debug)]
pub struct Signalled {
    pub resident: Resident,
    pub uid: u32,
    pub at: Instant,
}

/// Send SIGKILL through the target's pidfd, noting what it holds; does not wait. The daemon signals a whole batch this
/// way before reaping any of it.
pub fn signal(root: &SysRoot, target: &Target) -> Result<Signalled> {
    let resident = Resident::read(root, target.pid)?;
    target.pidfd.send_signal(libc::SIGKILL)?;
    let at = Instant::now();
    let uid = crate::process::read_uid(root, target.pid).unwrap_or(0);
    Ok(Signalled { resident, uid, at })
}

/// The one line a kill is logged with, in Android lmkd's familiar form ("Kill 'name' (pid), uid U, oom_score_adj A to
/// free N kB rss, M kB swap; reason: …"), with the class added: the daemon's log and `memorch kill` print the same.
pub fn line(target: &Target, uid: u32, rss_bytes: u64, swap_bytes: u64, reason: &str) -> String {
    let Target { name, pid, class, oom_score_adj, .. } = target;
    format!("Kill '{name}' ({pid}), uid {uid}, class {class}, oom_score_adj {oom_score_adj} to free {}kB rss, {}kB swap; reason: {reason}", rss_bytes / 1024, swap_bytes / 1024)
}

/// Kill, reap its memory at once, and wait for it to exit (`memorch kill`).
pub fn kill(root: &SysRoot, domain: &Domain, target: &Target, reason: &str) -> Result<KillReport> {
    let used_before = snapshot::cheap(root, domain)?.memory.used_bytes;
    let s = signal(root, target)?;
    let mreleased = target.pidfd.mrelease();
    let exited = target.pidfd.wait_exit(EXIT_TIMEOUT);
    let elapsed_us = s.at.elapsed().as_micros() as u64;
    let used_after = snapshot::cheap(root, domain)?.memory.used_bytes;
    Ok(KillReport {
        pid: target.pid,
        name: target.name.clone(),
        class: target.class,
        uid: s.uid,
        reason: reason.to_string(),
        rss_bytes: s.resident.rss_bytes(),
        swap_bytes: s.resident.swap_bytes,
        regained_bytes: used_before.saturating_sub(used_after),
        mreleased,
        elapsed_us,
        exited,
    })
}
