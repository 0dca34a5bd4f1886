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

/// [`full_fast`] on a cheap snapshot already taken: for a decision that read memory first to
/// choose between a light look and a full one.
pub fn full_fast_from(root: &SysRoot, domain: &Domain, snap: Snapshot) -> Result<Snapshot> {
    with_processes(root, domain, snap, false)
}

fn full_with(root: &SysRoot, domain: &Domain, detailed: bool) -> Result<Snapshot> {
    with_processes(root, domain, cheap(root, domain)?, detailed)
}

fn with_processes(root: &SysRoot, domain: &Domain, mut snap: Snapshot, detailed: bool) -> Result<Snapshot> {
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

/// A cached PSS is read again after this long, or when RSS moved by more than a quarter of
/// what it was when read; in between, it is scaled with RSS (a process's shared share moves
/// slowly). Reads every 30 s or on a tenth were a third of the daemon's CPU in a light run
/// (82 walks of up to 340 MiB of page tables, ~2.5 ms each, in 210 s).
pub const PSS_REFRESH_MS: u64 = 120_000;

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
            let stale = self.entries.get(&p.pid).is_none_or(|(r, _, _, at)| now.saturating_sub(*at) >= PSS_REFRESH_MS || r.abs_diff(rss) > r / 4);
            if stale && read {
                if let Ok((pss, ksm)) = process::read_pss_ksm(root, p.pid) {
                    self.entries.insert(p.pid, (rss, pss, ksm, now));
                    n += 1;
                }
            }
            if let Some((rss_then, pss, ksm, _)) = self.entries.get(&p.pid) {
                p.pss_bytes = pss.map(|pss| scaled_pss(pss, *rss_then, rss));
                p.ksm_merging_pages = *ksm;
            }
        }
        n
    }
}

/// A PSS read when RSS was `rss_then`, for RSS `rss_now`: scaled in proportion (never above
/// RSS). Read with nothing resident: the figure read, at most RSS now.
fn scaled_pss(pss: u64, rss_then: u64, rss_now: u64) -> u64 {
    if rss_then == 0 {
        return pss.min(rss_now);
    }
    ((pss as u128 * rss_now as u128 / rss_then as u128) as u64).min(rss_now)
}

#[cfg(test)]
mod tests {
    use super::*;
    use memorch_core::{Class, Facility, ProcessInfo, Snapshot};

    const MIB: u64 = 1 << 20;

    fn snapshot(uptime_ms: u64, rss: u64) -> Snapshot {
        fn na<T>() -> Facility<T> {
            Facility::Unavailable { reason: "test".into() }
        }
        let p = ProcessInfo { pid: 7, ppid: 1, name: "app".into(), uid: 0, oom_score_adj: 0, class: Class::from_oom_score_adj(0), rss_anon_bytes: rss, rss_file_bytes: 0, rss_shmem_bytes: 0, pss_bytes: None, swap_bytes: 0, ksm_merging_pages: None, age_ms: 0, pid_ns_init: false };
        Snapshot { domain: "system".into(), uptime_ms, memory: Default::default(), swap: Default::default(), zram: na(), ksm: na(), psi: na(), counters: Default::default(), processes: Some(vec![p]) }
    }

    fn write_pss(dir: &std::path::Path, pss_kib: u64) {
        std::fs::create_dir_all(dir.join("proc/7")).unwrap();
        std::fs::write(dir.join("proc/7/smaps_rollup"), format!("Rss: 1 kB\nPss: {pss_kib} kB\n")).unwrap();
    }

    #[test]
    fn a_cached_pss_follows_rss_and_is_walked_again_only_when_rss_moved_a_quarter_or_it_is_old() {
        let dir = crate::testkit::TempDir::new("memorch-pss-cache");
        let root = SysRoot::at(dir.0.clone());
        let mut cache = PssCache::default();
        write_pss(&dir, 50 * 1024);
        let mut s = snapshot(1_000, 100 * MIB);
        assert_eq!(cache.fill(&root, &mut s, true), 1, "the first look reads");
        assert_eq!(s.processes.as_ref().unwrap()[0].pss_bytes, Some(50 * MIB));
        // The file now says something else: a look that does not read must not see it.
        write_pss(&dir, 90 * 1024);
        let mut s = snapshot(2_000, 120 * MIB);
        assert_eq!(cache.fill(&root, &mut s, true), 0, "RSS moved a fifth: not walked");
        assert_eq!(s.processes.as_ref().unwrap()[0].pss_bytes, Some(60 * MIB), "scaled with RSS");
        let mut s = snapshot(3_000, 130 * MIB);
        assert_eq!(cache.fill(&root, &mut s, false), 0, "under pressure: never walked");
        assert_eq!(s.processes.as_ref().unwrap()[0].pss_bytes, Some(65 * MIB));
        let mut s = snapshot(4_000, 130 * MIB);
        assert_eq!(cache.fill(&root, &mut s, true), 1, "RSS moved by 30 %: walked again");
        assert_eq!(s.processes.as_ref().unwrap()[0].pss_bytes, Some(90 * MIB));
        let mut s = snapshot(4_000 + PSS_REFRESH_MS, 130 * MIB);
        assert_eq!(cache.fill(&root, &mut s, true), 1, "old: walked again");
    }

    #[test]
    fn a_scaled_pss_is_never_above_rss() {
        assert_eq!(scaled_pss(80, 100, 50), 40);
        assert_eq!(scaled_pss(80, 0, 50), 50);
        assert_eq!(scaled_pss(100, 100, 300), 300);
    }
}
