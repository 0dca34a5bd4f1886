//! Taking a [`Snapshot`] of a domain: memory and pressure alone (every tick), cheap (and swap,
//! zram, KSM) or full (and every process: only when a decision needs it).

use crate::domain::Domain;
use crate::error::Result;
use crate::process::{self, ProcessReader};
use crate::root::SysRoot;
use crate::{cgroup, ksm, meminfo, psi, swaps, vmstat, zram};
use memorch_core::snapshot::{kill_order, Counters, MemoryState, Psi};
use memorch_core::{Facility, Snapshot};

/// Memory and pressure of the domain, nothing else: the daemon's look every tick (a few small
/// reads; swap, zram and KSM wait for a decision).
pub fn memory_and_pressure(root: &SysRoot, domain: &Domain) -> Result<(MemoryState, Facility<Psi>, Counters)> {
    let (memory, counters) = match &domain.cgroup {
        None => (meminfo::read_system(root)?, vmstat::read_system(root)?),
        Some(dirs) => cgroup::read_memory(dirs, domain.ram_bytes)?,
    };
    let psi = match &domain.psi_file {
        Some(p) => psi::read(p),
        None => Facility::unavailable(format!(
            "{} has no v2 group, so no memory.pressure: create the same path under the cgroup2 mount",
            domain.spec
        )),
    };
    Ok((memory, psi, counters))
}

/// Memory, pressure, swap, zram and KSM; no per-process reads.
pub fn cheap(root: &SysRoot, domain: &Domain) -> Result<Snapshot> {
    let uptime_ms = process::uptime_ms(root)?;
    let (memory, psi, counters) = memory_and_pressure(root, domain)?;
    let swap = swaps::read(root)?;
    let zram = zram::read(root, &swap);
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

/// PSS (and KSM counts) kept between full snapshots, so that a decision walks a process's
/// page tables (`smaps_rollup`, the one costly read, which waits behind reclaim when memory is
/// short) only when its figure is old or its resident size moved: the daemon takes fast full
/// snapshots and fills them from here.
#[derive(Debug, Default)]
pub struct PssCache {
    /// By pid: (RSS when read, PSS, KSM merging pages, when read in ms since boot).
    entries: std::collections::BTreeMap<u32, (u64, Option<u64>, Option<u64>, u64)>,
}

/// A cached PSS is read again after this long, or when RSS moved by more than a tenth.
pub const PSS_REFRESH_MS: u64 = 30_000;

impl PssCache {
    /// Fill the processes of a fast snapshot. `read` false (under pressure): from the cache
    /// only, never a page-table walk. Returns how many were read now.
    pub fn fill(&mut self, root: &SysRoot, snap: &mut Snapshot, read: bool) -> usize {
        let now = snap.uptime_ms;
        let mut n = 0;
        let Some(procs) = snap.processes.as_mut() else { return 0 };
        self.entries.retain(|pid, _| procs.iter().any(|p| p.pid == *pid));
        for p in procs.iter_mut() {
            let rss = p.rss_bytes();
            let stale = self.entries.get(&p.pid).is_none_or(|(r, _, _, at)| now.saturating_sub(*at) >= PSS_REFRESH_MS || r.abs_diff(rss) > rss / 10);
            if stale && read {
                if let Ok((pss, ksm)) = process::read_pss_ksm(root, p.pid) {
                    self.entries.insert(p.pid, (rss, pss, ksm, now));
                    n += 1;
                }
            }
            if let Some((_, pss, ksm, _)) = self.entries.get(&p.pid) {
                p.pss_bytes = *pss;
                p.ksm_merging_pages = *ksm;
            }
        }
        n
    }
}
