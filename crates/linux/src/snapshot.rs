//! Taking a [`Snapshot`] of a domain: cheap (memory, pressure, swap, zram, KSM: a dozen small
//! reads, every tick) or full (and every process: only when a decision needs it).

use crate::domain::Domain;
use crate::error::Result;
use crate::process::{self, ProcessReader};
use crate::root::SysRoot;
use crate::{cgroup, ksm, meminfo, psi, swaps, vmstat, zram};
use memorch_core::{snapshot::kill_order, Facility, Snapshot};

/// Memory, pressure, swap, zram and KSM; no per-process reads.
pub fn cheap(root: &SysRoot, domain: &Domain) -> Result<Snapshot> {
    let uptime_ms = process::uptime_ms(root)?;
    let (memory, counters) = match &domain.cgroup {
        None => (meminfo::read_system(root)?, vmstat::read_system(root)?),
        Some(dirs) => cgroup::read_memory(dirs, domain.ram_bytes)?,
    };
    let swap = swaps::read(root)?;
    let zram = zram::read(root, &swap);
    let psi = match &domain.psi_file {
        Some(p) => psi::read(p),
        None => Facility::unavailable(format!(
            "{} has no v2 group, so no memory.pressure: create the same path under the cgroup2 mount",
            domain.spec
        )),
    };
    Ok(Snapshot {
        domain: domain.spec.to_string(),
        uptime_ms,
        memory,
        swap,
        zram,
        ksm: ksm::read(root),
        psi,
        counters,
        processes: None,
    })
}

/// The cheap snapshot plus every process of the domain, in kill order.
pub fn full(root: &SysRoot, domain: &Domain) -> Result<Snapshot> {
    full_with(root, domain, true)
}

/// A full snapshot without PSS and KSM counts (no `smaps_rollup`): for decisions under
/// pressure, where the page-table walk would wait behind reclaim.
pub fn full_fast(root: &SysRoot, domain: &Domain) -> Result<Snapshot> {
    full_with(root, domain, false)
}

fn full_with(root: &SysRoot, domain: &Domain, detailed: bool) -> Result<Snapshot> {
    let mut snap = cheap(root, domain)?;
    let pids = domain.pids(root)?;
    let mut reader = ProcessReader::new(root, snap.uptime_ms);
    reader.detailed = detailed;
    let mut procs = Vec::with_capacity(pids.len());
    for pid in pids {
        if let Some(p) = reader.read_process(pid)? {
            procs.push(p);
        }
    }
    procs.sort_by(kill_order);
    snap.processes = Some(procs);
    Ok(snap)
}
