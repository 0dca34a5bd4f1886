//! What one run measured: its visits, kills, samples over time and counters. `results.json` holds these as they are;
//! report.rs summarises them per manager.

use memorch_core::Class;
use serde::{Deserialize, Serialize};

/// What a visit found.
pub const HOT: &str = "hot";
pub const WARM: &str = "warm";
pub const COLD: &str = "cold";
/// The launch or return did not complete: the app died, timed out or never became ready.
pub const FAILED: &str = "failed";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Visit {
    pub app: String,
    /// hot (alive, nothing read back), warm (alive, pages read back), cold (relaunched) or failed.
    pub kind: String,
    pub latency_ms: f64,
    pub at_ms: u64,
    /// Frames drawn while in front (synthetic apps), those over 16.7 ms, and their p95.
    pub frames: u32,
    pub janky_frames: u32,
    pub frame_p95_ms: f64,
    /// Why a failed visit failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// A return to an app memorch's daemon compacted since it was last in front.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub after_compaction: bool,
    /// Pages of the device read back while a return was served (its `workingset_refault_*` counters over the resume):
    /// anonymous ones (from swap) and file ones (code and data dropped and read again): what made a warm return warm.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub refaults_anon: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub refaults_file: u64,
    /// Of `refaults_anon`, the pages read from the device's zram; the rest came from storage swap (memorch's swap
    /// files), where a page costs several times as much.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub zram_reads: u64,
    /// What the device did to make room while the return was served: pages its zram took in, and the times an
    /// allocation hit the device's limit (`memory.failcnt`); they tell a slow warm return's cause from its size.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub swapouts: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub direct_reclaims: u64,
    /// The device's free memory (below its limit) when the return began, KiB.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub free_kib_at_return: u64,
    /// Of a return's latency, what bringing the app to the front took, µs: the answer of memorch's daemon to the class
    /// change (it writes `oom_score_adj` and thaws), or the bench's own write of it for a peer. Part of the user's
    /// wait, and the manager's doing.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub to_front_us: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Visit {
    pub fn new(app: &str, kind: &str, latency_ms: f64) -> Visit {
        Visit {
            app: app.into(),
            kind: kind.into(),
            latency_ms,
            at_ms: 0,
            frames: 0,
            janky_frames: 0,
            frame_p95_ms: 0.0,
            error: None,
            after_compaction: false,
            refaults_anon: 0,
            refaults_file: 0,
            zram_reads: 0,
            swapouts: 0,
            direct_reclaims: 0,
            free_kib_at_return: 0,
            to_front_us: 0,
        }
    }

    pub fn failed(app: &str, latency_ms: f64, error: String) -> Visit {
        Visit { error: Some(error), ..Visit::new(app, FAILED, latency_ms) }
    }

    pub fn served(&self) -> bool {
        self.kind != FAILED
    }

    /// A return to an app that was still alive.
    pub fn is_return(&self) -> bool {
        self.kind == HOT || self.kind == WARM
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Kill {
    pub app: String,
    pub class: Class,
    /// memorch (the daemon's kill), kernel (the memcg OOM killer) or the peer's name.
    pub by: String,
    pub at_ms: u64,
}

pub const BY_KERNEL: &str = "kernel";

impl Kill {
    pub fn by_kernel(&self) -> bool {
        self.by == BY_KERNEL
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Sample {
    pub at_ms: u64,
    pub free_bytes: u64,
    pub available_bytes: u64,
    pub live_apps: usize,
}

/// The device a run had: the same scenario gives each manager its own swap set-up.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    pub ram_bytes: u64,
    /// 0: no zram.
    pub zram_bytes: u64,
    pub zram_algorithm: String,
    /// The apps started with KSM merging on (the scenario's `ksm`, or `memorch bench --ksm`).
    #[serde(default)]
    pub ksm_opt_in: bool,
    /// Swap read-ahead during the run, in pages a fault (2^`vm.page-cluster`, machine-wide). `None` where it could not
    /// be read, and in results written before 2026-12-03.
    #[serde(default)]
    pub swap_read_ahead_pages: Option<u32>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunResult {
    pub manager: String,
    pub scenario: String,
    pub seed: u64,
    pub ram_mb: u64,
    /// What the launcher told the manager, and how apps were grouped.
    #[serde(default)]
    pub launcher: crate::conditions::Launcher,
    #[serde(default)]
    pub app_groups: crate::conditions::AppGroups,
    /// The disk under storage swap files (absent in files from before it could be chosen).
    #[serde(default)]
    pub swap_disk: crate::conditions::SwapDisk,
    #[serde(default)]
    pub device: DeviceInfo,
    pub visits: Vec<Visit>,
    pub kills: Vec<Kill>,
    pub refault_pages: u64,
    /// Refaults split: anonymous pages (back from swap) and file pages (code and data read again from storage).
    #[serde(default)]
    pub refault_anon_pages: u64,
    #[serde(default)]
    pub refault_file_pages: u64,
    pub major_faults: u64,
    /// Pages read from and written to the device's zram: swap-ins and swap-outs (v1 memcgs count neither; the device's
    /// zram is its own). None without zram.
    #[serde(default)]
    pub swap_in_pages: Option<u64>,
    #[serde(default)]
    pub swap_out_pages: Option<u64>,
    /// Anonymous refaults per swapped-out page: how much of what went out came back soon.
    #[serde(default)]
    pub refault_ratio: Option<f64>,
    /// Refaults per eviction (the refault study's ratio), machine-wide: a v1 memory group counts no evictions of its
    /// own.
    #[serde(default)]
    pub refaults_per_eviction: Option<f64>,
    pub psi_some_s: f64,
    pub psi_full_s: f64,
    /// Allocations that had to reclaim for themselves (the device's `memory.failcnt`): what its background reclaimer
    /// (keeper.rs) did not keep ahead of. None before it was counted.
    #[serde(default)]
    pub direct_reclaims: Option<u64>,
    /// What the device's background reclaimer took, and how often it woke (below its low watermark).
    #[serde(default)]
    pub background_reclaimed_bytes: u64,
    #[serde(default)]
    pub background_reclaim_wakeups: u64,
    /// The background reclaimer's own memory stall (s): part of the device's PSI, as kswapd's is of a phone's. None
    /// where it reclaimed outside the device's PSI (limit writes; runs before it was measured).
    #[serde(default)]
    pub background_reclaim_stall_s: Option<f64>,
    /// Reclaims the manager itself asked the kernel for (MOS's page-cache steps).
    #[serde(default)]
    pub manager_reclaims: u64,
    /// What apps gave back themselves after memorch's trim notices (measured by the daemon).
    #[serde(default)]
    pub trim_freed_bytes: u64,
    /// CPU seconds used inside the device over the run: its apps (and a peer that runs inside it). None where the
    /// device has no v2 group to read it from.
    #[serde(default)]
    pub device_cpu_s: Option<f64>,
    /// CPU seconds the rest of the machine used over the run (all its CPU time but the device's and memorch's daemon's:
    /// the bench itself, and work that shares the machine), and the seconds the hypervisor ran something else when the
    /// machine's CPUs wanted to run (`/proc/stat` steal). A run with much of either was slowed by what is not the
    /// manager's. None where they could not be read.
    #[serde(default)]
    pub other_cpu_s: Option<f64>,
    #[serde(default)]
    pub steal_s: Option<f64>,
    /// zram's compression ratio at the end; None when too little went through it to say.
    pub zram_ratio: Option<f64>,
    /// Pages of the device's apps that KSM has merged at the end (`ksm_merging_pages` of each): only a manager that
    /// runs KSM merges any, and only of apps that opted in.
    #[serde(default)]
    pub ksm_saved_bytes: u64,
    /// CPU seconds the kernel's ksmd used over the run (what merging cost: the thesis's measure). None where there is
    /// no ksmd.
    #[serde(default)]
    pub ksmd_cpu_s: Option<f64>,
    pub manager_cpu_s: f64,
    pub manager_rss_bytes: u64,
    /// Its proportional share of memory: RSS counts code shared with other processes of the same binary (the device's
    /// init is memorch too) in full.
    #[serde(default)]
    pub manager_pss_bytes: u64,
    /// Times a peer exited and was started again (its service's Restart=always).
    #[serde(default)]
    pub manager_restarts: u32,
    /// What moving a page cost on the device, as a memorch daemon learned it by the run's end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_costs: Option<memorch_core::engine::costs::DeviceCosts>,
    /// Available memory at the end of each idle step (home, screen off).
    #[serde(default)]
    pub idle_available_bytes: Vec<u64>,
    pub duration_s: f64,
    pub timeline: Vec<Sample>,
    /// Set when Ctrl-C cut the run short.
    pub interrupted: bool,
    /// Why the run stopped early (its first launches all failed), if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aborted: Option<String>,
    /// Where the run's logs are: the manager's and each app launch's output.
    #[serde(default)]
    pub log_dir: String,
}

impl RunResult {
    /// Calls into reclaim: allocations that reclaimed for themselves, wakeups of the background reclaimer, and the
    /// manager's own reclaims: the nearest measure here of MOS's count of `shrink_zone`, `wakeup_kswapd` and
    /// `shrink_slab` calls.
    pub fn reclaim_calls(&self) -> Option<u64> {
        self.direct_reclaims.map(|d| d + self.background_reclaim_wakeups + self.manager_reclaims)
    }

    pub fn count(&self, kind: &str) -> usize {
        self.visits.iter().filter(|v| v.kind == kind).count()
    }

    /// Visits served (every kind but failed).
    pub fn served(&self) -> usize {
        self.visits.iter().filter(|v| v.served()).count()
    }

    pub fn failed(&self) -> usize {
        self.count(FAILED)
    }

    /// The served visits but each app's first launch (a failed launch leaves the app to be launched first by its next
    /// visit): its returns and relaunches, what a manager changes.
    pub fn after_first_launches(&self) -> Vec<&Visit> {
        let mut launched = std::collections::BTreeSet::new();
        self.visits.iter().filter(|v| v.served()).filter(|v| !launched.insert(v.app.as_str())).collect()
    }

    /// The user's wait (s): the latencies of the returns and relaunches summed. First launches are left out: no manager
    /// had the program running.
    pub fn wait_s(&self) -> f64 {
        self.after_first_launches().iter().map(|v| v.latency_ms).sum::<f64>() / 1000.0
    }
}

/// The runs of a bench's `results.json`.
pub fn read_runs(path: &std::path::Path) -> Result<Vec<RunResult>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", path.display()))?;
    serde_json::from_value(v["runs"].clone())
        .map_err(|e| format!("{}: its runs are not a memorch bench's: {e}", path.display()))
}
