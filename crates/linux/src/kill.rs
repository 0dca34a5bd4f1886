//! Killing a process so its memory comes back at once: `pidfd_send_signal(SIGKILL)` then
//! `process_mrelease`, which reaps the address space without waiting for the victim to be
//! scheduled (Android lmkd's way).

use crate::domain::Domain;
use crate::error::Result;
use crate::root::SysRoot;
use crate::snapshot;
use crate::target::Target;
use crate::compact::Resident;
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

pub fn kill(root: &SysRoot, domain: &Domain, target: &Target, reason: &str) -> Result<KillReport> {
    let before = Resident::read(root, target.pid)?;
    let uid = crate::process::read_uid(root, target.pid).unwrap_or(0);
    let used_before = snapshot::cheap(root, domain)?.memory.used_bytes;
    let t0 = Instant::now();
    target.pidfd.send_signal(libc::SIGKILL)?;
    let mreleased = target.pidfd.mrelease();
    let exited = target.pidfd.wait_exit(EXIT_TIMEOUT);
    let elapsed_us = t0.elapsed().as_micros() as u64;
    let used_after = snapshot::cheap(root, domain)?.memory.used_bytes;
    Ok(KillReport {
        pid: target.pid,
        name: target.name.clone(),
        class: target.class,
        uid,
        reason: reason.to_string(),
        rss_bytes: before.rss_bytes(),
        swap_bytes: before.swap_bytes,
        regained_bytes: used_before.saturating_sub(used_after),
        mreleased,
        elapsed_us,
        exited,
    })
}
