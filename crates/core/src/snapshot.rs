//! What memorch sees of a memory domain at one moment (docs/architecture.md, "Snapshots").
//!
//! Sizes are bytes; kernel counters of events (refaults, swap-ins) keep their unit in their name (`_pages`). A facility
//! that the machine lacks (no zram set up, no KSM, no PSI) is a [`Facility::Unavailable`] with the reason, never an
//! error: memorch degrades.

use crate::class::Class;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// One reading of a domain. A *cheap* snapshot has `processes: None`; a *full* one lists every process of the domain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The domain as the user names it: `system` or `cgroup:/a/b`.
    pub domain: String,
    /// Time since boot when the reading was taken.
    pub uptime_ms: u64,
    pub memory: MemoryState,
    /// Swap devices are machine-wide; the domain's own swap use is `memory.swap_used_bytes`.
    pub swap: SwapState,
    pub zram: Facility<ZramState>,
    pub ksm: Facility<KsmState>,
    pub psi: Facility<Psi>,
    pub counters: Counters,
    pub processes: Option<Vec<ProcessInfo>>,
}

/// Memory of the domain: the machine's RAM for `system`, the limit for a cgroup.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryState {
    /// RAM, or the cgroup's limit (the smallest limit on its path, capped at RAM).
    pub total_bytes: u64,
    /// Whether `total_bytes` is a cgroup limit rather than the machine's RAM.
    pub limited: bool,
    pub used_bytes: u64,
    pub free_bytes: u64,
    /// What could be had without swapping or killing: `MemAvailable` for the system; for a cgroup, free plus its file
    /// cache (the kernel gives cgroups no such figure).
    pub available_bytes: u64,
    pub file_active_bytes: u64,
    pub file_inactive_bytes: u64,
    pub anon_bytes: u64,
    pub shmem_bytes: u64,
    /// Swap used by the domain's own pages.
    pub swap_used_bytes: u64,
}

/// The machine's swap devices (`/proc/swaps`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwapState {
    pub devices: Vec<SwapDevice>,
    pub total_bytes: u64,
    pub used_bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwapDevice {
    pub path: String,
    /// `partition` or `file`, as `/proc/swaps` says.
    pub kind: String,
    pub size_bytes: u64,
    pub used_bytes: u64,
    pub priority: i32,
}

impl SwapState {
    /// The priority of a storage file the kernel fills before zram: one above the highest swap that is not a file
    /// (zram, as `/proc/swaps` tells them apart); `None` without such swap. The engine marks such files as an unlikely
    /// app's own by it, and the daemon enables them at it.
    pub fn above_zram_priority(&self) -> Option<i32> {
        self.devices.iter().filter(|d| d.kind != "file").map(|d| d.priority).max().map(|p| p + 1)
    }

    /// Whether a storage swap file holds pages: only then is there anything on storage for a read-back or a return to
    /// ask for at once.
    pub fn storage_holds_pages(&self) -> bool {
        self.devices.iter().any(|d| d.kind == "file" && d.used_bytes > 0)
    }
}

impl SwapDevice {
    /// Holds under this share of its size: a file made for an unlikely app's squeeze that its app came back to or left
    /// is removed then (`SwapPolicy::cold_drop_below`; what is left is read back in).
    pub fn holds_under(&self, share: f64) -> bool {
        (self.used_bytes as f64) < self.size_bytes as f64 * share
    }
}

/// The zram devices that are set up (disksize > 0).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ZramState {
    pub devices: Vec<ZramDevice>,
}

/// One zram device: its `mm_stat` in bytes, and what it means.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ZramDevice {
    pub name: String,
    pub disksize_bytes: u64,
    pub algorithm: String,
    /// Uncompressed size of what is stored.
    pub orig_data_bytes: u64,
    /// Compressed size of what is stored.
    pub compr_data_bytes: u64,
    /// RAM the pool really takes, allocator overhead included.
    pub mem_used_bytes: u64,
    /// 0 = no limit.
    pub mem_limit_bytes: u64,
    pub mem_used_max_bytes: u64,
    /// Pages stored as a single repeated word (zero pages among them): they take no pool.
    pub same_pages: u64,
    pub pages_compacted: u64,
    /// Pages that did not compress and are stored whole.
    pub huge_pages: u64,
    /// orig / compr: how well the data compresses. `None` while empty.
    pub compression_ratio: Option<f64>,
    /// orig / mem_used: what the device really saves, overhead included.
    pub effective_ratio: Option<f64>,
    /// Whether the device is an active swap device.
    pub is_swap: bool,
}

impl ZramDevice {
    /// Fill the two ratios from the byte counts.
    pub fn with_ratios(mut self) -> Self {
        self.compression_ratio = ratio(self.orig_data_bytes, self.compr_data_bytes);
        self.effective_ratio = ratio(self.orig_data_bytes, self.mem_used_bytes);
        self
    }
}

fn ratio(num: u64, den: u64) -> Option<f64> {
    (num > 0 && den > 0).then(|| num as f64 / den as f64)
}

/// KSM's global counters (`/sys/kernel/mm/ksm`), pages as the kernel counts them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KsmState {
    /// 0 stopped, 1 running, 2 unmerge all.
    pub run: u8,
    pub pages_to_scan: u64,
    pub sleep_ms: u64,
    pub pages_shared: u64,
    pub pages_sharing: u64,
    pub pages_unshared: u64,
    pub pages_volatile: u64,
    pub full_scans: u64,
    /// What KSM saves net of its own metadata; can be negative.
    pub general_profit_bytes: Option<i64>,
    pub zero_pages: Option<u64>,
    /// pages_sharing × page size: memory KSM gives back, before metadata.
    pub saved_bytes: u64,
}

/// Pressure stall information for the domain: `/proc/pressure/memory` or the v2 group's `memory.pressure`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Psi {
    /// The file it came from, so a reader can tell machine-wide from per-group pressure.
    pub source: String,
    pub some: PsiLine,
    pub full: PsiLine,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PsiLine {
    /// Percent of time stalled over the last 10 s, 60 s and 300 s.
    pub avg10: f64,
    pub avg60: f64,
    pub avg300: f64,
    /// Total stall time since the group was created.
    pub total_us: u64,
}

/// Event counters of the domain since boot (system) or since the group was made (cgroup). `None` where the domain's
/// kernel interface does not count it (v1 memcgs count no scans, steals or swap-ins).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    pub refault_anon_pages: Option<u64>,
    pub refault_file_pages: Option<u64>,
    pub swap_in_pages: Option<u64>,
    pub swap_out_pages: Option<u64>,
    pub scan_pages: Option<u64>,
    pub steal_pages: Option<u64>,
    pub major_faults: Option<u64>,
    pub oom_kills: Option<u64>,
    /// Times an allocation had to reclaim for itself (direct reclaim): `allocstall_*` (system), `memory.failcnt` (v1:
    /// charges that hit the limit), `max` in `memory.events` (v2). lmkd's "direct reclaim" state; the bench's measure
    /// of stalls a background reclaimer did not prevent.
    #[serde(default)]
    pub direct_reclaims: Option<u64>,
}

/// One process of the domain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessInfo {
    pub pid: u32,
    pub ppid: u32,
    pub name: String,
    pub uid: u32,
    pub oom_score_adj: i32,
    pub class: Class,
    pub rss_anon_bytes: u64,
    pub rss_file_bytes: u64,
    pub rss_shmem_bytes: u64,
    /// Proportional set size; `None` when `smaps_rollup` could not be read.
    pub pss_bytes: Option<u64>,
    pub swap_bytes: u64,
    /// Pages of this process merged by KSM; `None` where the kernel does not say.
    pub ksm_merging_pages: Option<u64>,
    /// Time since the process started.
    pub age_ms: u64,
    /// It is the init (pid 1) of a PID namespace below the reader's: killing it kills every process of that namespace.
    #[serde(default)]
    pub pid_ns_init: bool,
    /// What a user calls the app: a systemd scope's application id, an Android package (`memorch status` fills it; the
    /// daemon's snapshots leave it out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
}

impl ProcessInfo {
    pub fn rss_bytes(&self) -> u64 {
        self.rss_anon_bytes + self.rss_file_bytes + self.rss_shmem_bytes
    }
}

/// The order in which memorch would compact or kill: least important class first, then the higher `oom_score_adj`
/// within a class, then the larger resident set.
pub fn kill_order(a: &ProcessInfo, b: &ProcessInfo) -> Ordering {
    b.class
        .cmp(&a.class)
        .then(b.oom_score_adj.cmp(&a.oom_score_adj))
        .then(b.rss_bytes().cmp(&a.rss_bytes()))
        .then(a.pid.cmp(&b.pid))
}

/// Whether a facility is there, and why not if it is not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Facility<T> {
    Available(T),
    Unavailable { reason: String },
}

impl<T> Facility<T> {
    pub fn unavailable(reason: impl Into<String>) -> Self {
        Facility::Unavailable { reason: reason.into() }
    }

    pub fn get(&self) -> Option<&T> {
        match self {
            Facility::Available(v) => Some(v),
            Facility::Unavailable { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proc(pid: u32, adj: i32, rss_mb: u64) -> ProcessInfo {
        ProcessInfo {
            pid,
            ppid: 1,
            name: format!("p{pid}"),
            uid: 0,
            oom_score_adj: adj,
            class: Class::from_oom_score_adj(adj),
            rss_anon_bytes: rss_mb << 20,
            rss_file_bytes: 0,
            rss_shmem_bytes: 0,
            pss_bytes: None,
            swap_bytes: 0,
            ksm_merging_pages: None,
            age_ms: 0,
            pid_ns_init: false,
            app: None,
        }
    }

    #[test]
    fn kill_order_is_class_then_adj_then_size() {
        let mut ps =
            [proc(1, 0, 500), proc(2, 900, 10), proc(3, 999, 5), proc(4, 900, 50), proc(5, 950, 1), proc(6, 700, 900)];
        ps.sort_by(kill_order);
        let order: Vec<u32> = ps.iter().map(|p| p.pid).collect();
        assert_eq!(order, vec![3, 5, 4, 2, 6, 1]);
    }

    #[test]
    fn zram_ratios_need_data() {
        let dev = ZramDevice {
            name: "zram0".into(),
            disksize_bytes: 1 << 30,
            algorithm: "lz4".into(),
            orig_data_bytes: 300,
            compr_data_bytes: 100,
            mem_used_bytes: 150,
            mem_limit_bytes: 0,
            mem_used_max_bytes: 150,
            same_pages: 0,
            pages_compacted: 0,
            huge_pages: 0,
            compression_ratio: None,
            effective_ratio: None,
            is_swap: true,
        }
        .with_ratios();
        assert_eq!(dev.compression_ratio, Some(3.0));
        assert_eq!(dev.effective_ratio, Some(2.0));
        let empty = ZramDevice { orig_data_bytes: 0, ..dev }.with_ratios();
        assert_eq!(empty.compression_ratio, None);
    }

    #[test]
    fn facility_json_says_why_not() {
        let f: Facility<KsmState> = Facility::unavailable("no /sys/kernel/mm/ksm");
        let json = serde_json::to_value(&f).unwrap();
        assert_eq!(json["status"], "unavailable");
        assert_eq!(json["reason"], "no /sys/kernel/mm/ksm");
        let ok = Facility::Available(KsmState { run: 1, ..Default::default() });
        let json = serde_json::to_value(&ok).unwrap();
        assert_eq!(json["status"], "available");
        assert_eq!(json["run"], 1);
    }
}
