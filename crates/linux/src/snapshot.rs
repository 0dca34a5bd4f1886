//! Taking a [`Snapshot`] of a domain: memory and pressure alone (every tick), cheap (and swap, zram, KSM) or full (and
//! every process: only when a decision needs it).

use crate::domain::Domain;
use crate::error::Result;
use crate::process::{self, ProcessReader};
use crate::root::SysRoot;
use crate::{cgroup, ksm, meminfo, psi, swaps, vmstat};
use memorch_core::snapshot::{kill_order, Counters, KsmState, MemoryState, Psi};
use memorch_core::{Facility, Snapshot};

/// Memory and pressure of the domain, nothing else: the daemon's look every tick (a few small reads; swap, zram and KSM
/// wait for a decision).
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
    cheap_with_ksm(root, domain, ksm::read(root))
}

/// [`cheap`] with KSM's figures given, not read: a light look takes the last full look's (KSM's state is a dozen sysfs
/// files, a quarter of a light look's reads, and what acts on a light look acts on a full look's sizes anyway).
pub fn cheap_with_ksm(root: &SysRoot, domain: &Domain, ksm: Facility<KsmState>) -> Result<Snapshot> {
    let uptime_ms = process::uptime_ms(root)?;
    let (memory, psi, counters) = memory_and_pressure(root, domain)?;
    let swap = swaps::read(root)?;
    let zram = crate::zram_stats::read(root, &swap);
    Ok(Snapshot { domain: domain.spec.to_string(), uptime_ms, memory, swap, zram, ksm, psi, counters, processes: None })
}

/// The cheap snapshot plus every process of the domain, in kill order.
pub fn full(root: &SysRoot, domain: &Domain) -> Result<Snapshot> {
    full_with(root, domain, true)
}

/// A full snapshot without PSS and KSM counts (no `smaps_rollup`): for decisions under pressure, where the page-table
/// walk would wait behind reclaim.
pub fn full_fast(root: &SysRoot, domain: &Domain) -> Result<Snapshot> {
    full_with(root, domain, false)
}

/// [`full_fast`] on a cheap snapshot already taken: for a decision that read memory first to choose between a light
/// look and a full one (KSM's figures read afresh: that look may have taken older ones).
pub fn full_fast_from(root: &SysRoot, domain: &Domain, mut snap: Snapshot) -> Result<Snapshot> {
    snap.ksm = ksm::read(root);
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

/// PSS (and KSM counts) kept between full snapshots, so that a decision walks a process's page tables (`smaps_rollup`,
/// the one costly read, which waits behind reclaim when memory is short) only when its figure is old or its mapped
/// files moved: the daemon takes fast full snapshots and fills them from here.
#[derive(Debug, Default)]
pub struct PssCache {
    entries: std::collections::BTreeMap<u32, PssRead>,
}

/// One walk's figures, with the resident sizes (from `status`) they were read at.
#[derive(Debug, Clone, Copy)]
struct PssRead {
    anon_bytes: u64,
    /// File and shared-memory pages: those PSS divides among the processes mapping them.
    mapped_bytes: u64,
    pss_bytes: Option<u64>,
    ksm_merging_pages: Option<u64>,
    /// When read, ms since boot.
    at_ms: u64,
    /// When the process it was read of started, ms since boot: a pid found with another start is another process, and
    /// the figures are not its.
    start_ms: u64,
}

/// A cached PSS is read again after this long, or when the process's file and shared-memory pages moved by more than a
/// quarter of what they were when read; in between, it follows the process's resident sizes ([`estimated_pss`]): its
/// heap exactly, its mapped files in the share last found (what it misses, others mapping its files since, moves
/// slowly). Each read walks the page tables: every 30 s they were a third of the daemon's CPU.
pub const PSS_REFRESH_MS: u64 = 600_000;

impl PssCache {
    /// Fill the processes of a fast snapshot. `read` false (under pressure): from the cache only, never a page-table
    /// walk. Returns how many were read now.
    pub fn fill(&mut self, root: &SysRoot, snap: &mut Snapshot, read: bool) -> usize {
        let now = snap.uptime_ms;
        let mut n = 0;
        let Some(procs) = snap.processes.as_mut() else { return 0 };
        // Forget the processes gone, and those whose pid another process has since.
        self.entries.retain(|pid, r| procs.iter().any(|p| p.pid == *pid && now.saturating_sub(p.age_ms) == r.start_ms));
        for p in procs.iter_mut() {
            let mapped = p.rss_file_bytes + p.rss_shmem_bytes;
            let stale = self.entries.get(&p.pid).is_none_or(|r| {
                now.saturating_sub(r.at_ms) >= PSS_REFRESH_MS || r.mapped_bytes.abs_diff(mapped) > r.mapped_bytes / 4
            });
            if stale && read {
                if let Ok((pss, ksm)) = process::read_pss_ksm(root, p.pid) {
                    self.entries.insert(
                        p.pid,
                        PssRead {
                            anon_bytes: p.rss_anon_bytes,
                            mapped_bytes: mapped,
                            pss_bytes: pss,
                            ksm_merging_pages: ksm,
                            at_ms: now,
                            start_ms: now.saturating_sub(p.age_ms),
                        },
                    );
                    n += 1;
                }
            }
            if let Some(r) = self.entries.get(&p.pid) {
                p.pss_bytes = r.pss_bytes.map(|pss| estimated_pss(pss, r, p.rss_anon_bytes, mapped));
                p.ksm_merging_pages = r.ksm_merging_pages;
            }
        }
        n
    }
}

/// PSS now, from a walk's `pss` and the resident sizes since: anonymous pages a process gains or loses are its own (a
/// heap, swapped out or in), counted whole; its file and shared-memory pages in the share the walk found of them (those
/// are what PSS divides). Never above RSS.
fn estimated_pss(pss: u64, then: &PssRead, anon_now: u64, mapped_now: u64) -> u64 {
    // What of its mapped pages the walk counted: what PSS had beyond the anonymous pages (nothing where KSM merged some
    // of those, PSS then below them), at most all of them.
    let mapped_counted = pss.saturating_sub(then.anon_bytes).min(then.mapped_bytes) as i128;
    let mapped_moved = mapped_now as i128 - then.mapped_bytes as i128;
    // In the share found; a process with none mapped then has its new ones counted whole.
    let mapped_delta =
        if then.mapped_bytes == 0 { mapped_moved } else { mapped_moved * mapped_counted / then.mapped_bytes as i128 };
    let est = pss as i128 + (anon_now as i128 - then.anon_bytes as i128) + mapped_delta;
    (est.max(0) as u64).min(anon_now + mapped_now)
}

#[cfg(test)]
mod tests {
    use super::*;
    use memorch_core::{Class, Facility, ProcessInfo, Snapshot};

    const MIB: u64 = 1 << 20;

    /// A snapshot of process 7, started 500 ms after boot, with `anon` and `file` resident.
    fn snapshot(uptime_ms: u64, anon: u64, file: u64) -> Snapshot {
        started_at(500, uptime_ms, anon, file)
    }

    /// A snapshot of a process 7 that started `start_ms` after boot.
    fn started_at(start_ms: u64, uptime_ms: u64, anon: u64, file: u64) -> Snapshot {
        fn na<T>() -> Facility<T> {
            Facility::Unavailable { reason: "test".into() }
        }
        let p = ProcessInfo {
            pid: 7,
            ppid: 1,
            name: "app".into(),
            uid: 0,
            oom_score_adj: 0,
            class: Class::from_oom_score_adj(0),
            rss_anon_bytes: anon,
            rss_file_bytes: file,
            rss_shmem_bytes: 0,
            pss_bytes: None,
            swap_bytes: 0,
            ksm_merging_pages: None,
            age_ms: uptime_ms - start_ms,
            pid_ns_init: false,
            app: None,
        };
        Snapshot {
            domain: "system".into(),
            uptime_ms,
            memory: Default::default(),
            swap: Default::default(),
            zram: na(),
            ksm: na(),
            psi: na(),
            counters: Default::default(),
            processes: Some(vec![p]),
        }
    }

    fn write_pss(dir: &std::path::Path, pss_kib: u64) {
        std::fs::create_dir_all(dir.join("proc/7")).unwrap();
        std::fs::write(dir.join("proc/7/smaps_rollup"), format!("Rss: 1 kB\nPss: {pss_kib} kB\n")).unwrap();
    }

    fn pss(s: &Snapshot) -> Option<u64> {
        s.processes.as_ref().unwrap()[0].pss_bytes
    }

    #[test]
    fn a_cached_pss_follows_the_heap_and_is_walked_again_only_when_mapped_pages_moved_a_quarter_or_it_is_old() {
        let dir = crate::testkit::TempDir::new("memorch-pss-cache");
        let root = SysRoot::at(dir.0.clone());
        let mut cache = PssCache::default();
        // 40 MiB of heap and 20 MiB of files, half of them counted (shared with another).
        write_pss(&dir, 50 * 1024);
        let mut s = snapshot(1_000, 40 * MIB, 20 * MIB);
        assert_eq!(cache.fill(&root, &mut s, true), 1, "the first look reads");
        assert_eq!(pss(&s), Some(50 * MIB));
        // The file now says something else: a look that does not read must not see it.
        write_pss(&dir, 60 * 1024);
        let mut s = snapshot(2_000, 100 * MIB, 24 * MIB);
        assert_eq!(cache.fill(&root, &mut s, true), 0, "the heap grew 2.5 times, files a fifth: not walked");
        assert_eq!(pss(&s), Some(50 * MIB + 60 * MIB + 2 * MIB), "the heap counted whole, the files in the half found");
        let mut s = snapshot(3_000, 30 * MIB, 30 * MIB);
        assert_eq!(cache.fill(&root, &mut s, false), 0, "under pressure: never walked");
        assert_eq!(
            pss(&s),
            Some(50 * MIB - 10 * MIB + 5 * MIB),
            "heap swapped out leaves PSS whole, all of it its own"
        );
        let mut s = snapshot(4_000, 40 * MIB, 26 * MIB);
        assert_eq!(cache.fill(&root, &mut s, true), 1, "files moved by 30 %: walked again");
        assert_eq!(pss(&s), Some(60 * MIB));
        let mut s = snapshot(4_000 + PSS_REFRESH_MS, 40 * MIB, 26 * MIB);
        assert_eq!(cache.fill(&root, &mut s, true), 1, "old: walked again");
    }

    #[test]
    fn a_pid_another_process_has_since_gets_none_of_the_old_figures() {
        let dir = crate::testkit::TempDir::new("memorch-pss-reused");
        let root = SysRoot::at(dir.0.clone());
        let mut cache = PssCache::default();
        write_pss(&dir, 50 * 1024);
        let mut s = snapshot(1_000, 40 * MIB, 20 * MIB);
        assert_eq!(cache.fill(&root, &mut s, true), 1);
        // Pid 7 is now a process that started at 1500 ms, the same size: under pressure nothing is walked, and the dead
        // process's PSS is not this one's.
        let mut s = started_at(1_500, 2_000, 40 * MIB, 20 * MIB);
        assert_eq!(cache.fill(&root, &mut s, false), 0);
        assert_eq!(pss(&s), None, "the old process's PSS was given to the new one");
        write_pss(&dir, 30 * 1024);
        let mut s = started_at(1_500, 3_000, 40 * MIB, 20 * MIB);
        assert_eq!(
            cache.fill(&root, &mut s, true),
            1,
            "a new process is walked at once, though its sizes are the old one's"
        );
        assert_eq!(pss(&s), Some(30 * MIB));
    }

    fn read(anon: u64, mapped: u64) -> PssRead {
        PssRead {
            anon_bytes: anon,
            mapped_bytes: mapped,
            pss_bytes: None,
            ksm_merging_pages: None,
            at_ms: 0,
            start_ms: 0,
        }
    }

    #[test]
    fn an_estimated_pss_is_never_above_rss_nor_below_nothing() {
        assert_eq!(estimated_pss(80, &read(60, 40), 10, 10), 15, "heap and files down to 10: 10 + 10 x 20/40");
        assert_eq!(
            estimated_pss(120, &read(0, 100), 0, 100),
            100,
            "a walk that saw more than status said: at most RSS"
        );
        assert_eq!(estimated_pss(80, &read(60, 40), 100, 40), 120);
        assert_eq!(
            estimated_pss(100, &read(0, 100), 0, 300),
            300,
            "everything mapped its own: every new page counted, at most RSS"
        );
        assert_eq!(estimated_pss(5, &read(60, 0), 0, 0), 0);
        assert_eq!(estimated_pss(20, &read(0, 0), 0, 50), 50, "nothing mapped then: new mapped pages counted whole");
    }

    #[test]
    fn where_ksm_merged_part_of_the_heap_new_heap_counts_whole_and_files_not_at_all() {
        // PSS 30 below the 40 MiB heap: KSM shares part of it; the files' share is unknown, taken as none.
        assert_eq!(estimated_pss(30 * MIB, &read(40 * MIB, 20 * MIB), 50 * MIB, 40 * MIB), 40 * MIB);
    }
}
