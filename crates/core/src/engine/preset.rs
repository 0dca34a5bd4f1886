//! The presets: each paper's system as the same engine with different steps switched on and different parameters. Each
//! is a TOML file in `presets/`, embedded here; `memorch presets show NAME` prints it, with what each key does and
//! where its value comes from.

use super::victims::VictimOrder;
use crate::Class;
use serde::{Deserialize, Serialize};

/// How the preset notices that memory is short.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Detection {
    /// Never: the kernel alone (memcg reclaim, OOM killer).
    None,
    /// Android's in-kernel LMK: free memory and file cache against a minfree table.
    Minfree(Minfree),
    /// Android lmkd's PSI strategy.
    Psi(Lmkd),
    /// memorch: available-memory bands, PSI and refaults, with feedback.
    Bands(Bands),
}

/// The LMK minfree table (thesis fig. 2-19), in pages for a 1 GiB phone, scaled to the domain's memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Minfree {
    /// (least important class that may be killed at this level, minfree pages at 1 GiB), from the most important class
    /// to the least.
    pub levels: Vec<(Class, u64)>,
    pub reference_bytes: u64,
    /// Kill only when the file cache is also below the level (`other_file < minfree`).
    pub require_file_below: bool,
    /// Wait for a victim to die before the next kill (lowmem_deathpending).
    pub death_pending_ms: u64,
}

impl Minfree {
    /// A page count of the 1 GiB reference phone, in bytes for a domain of `total_bytes`.
    pub fn scale(&self, pages_at_reference: u64, total_bytes: u64) -> u64 {
        (pages_at_reference as f64 * 4096.0 * total_bytes as f64 / self.reference_bytes as f64) as u64
    }

    /// The levels in bytes for a domain of `total_bytes`.
    pub fn scaled(&self, total_bytes: u64) -> Vec<(Class, u64)> {
        self.levels.iter().map(|&(c, pages)| (c, self.scale(pages, total_bytes))).collect()
    }

    /// The least important class that may die at this free memory, if any level is crossed. `lowmem_shrink` takes the
    /// first (smallest) level both free and file are under.
    pub fn min_class(&self, total_bytes: u64, free_bytes: u64, file_bytes: u64) -> Option<(Class, u64)> {
        self.scaled(total_bytes)
            .into_iter()
            .find(|&(_, minfree)| free_bytes < minfree && (!self.require_file_below || file_bytes < minfree))
    }
}

/// Android lmkd's PSI-driven strategy (AOSP lmkd, `mp_event_psi`), as AOSP's lmkd.cpp has it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lmkd {
    /// PSI triggers: stall µs per window µs (some 70 ms / full 700 ms per 1 s).
    pub psi_partial_stall_us: u64,
    pub psi_complete_stall_us: u64,
    pub psi_window_us: u64,
    /// Low-RAM devices (`ro.config.low_ram`) trigger on a longer partial stall (200 ms).
    #[serde(default)]
    pub psi_partial_stall_low_ram_us: Option<u64>,
    /// Swap is "low" below this share free.
    pub swap_free_low_pct: f64,
    /// Thrashing = file refaults since the window began, as % of the file LRU at its start.
    pub thrashing_limit_pct: f64,
    /// Low-RAM devices use a lower limit.
    pub thrashing_limit_low_ram_pct: f64,
    pub low_ram_bytes: u64,
    /// Cut the limit by this much after each thrashing kill; reset when a window ends.
    pub thrashing_decay_pct: f64,
    /// … and by this much on low-RAM devices.
    #[serde(default)]
    pub thrashing_decay_low_ram_pct: Option<f64>,
    pub thrashing_window_ms: u64,
    /// Watermarks as a share of the domain (zone min/low/high).
    pub wmark_min_frac: f64,
    pub wmark_low_frac: f64,
    pub wmark_high_frac: f64,
    /// Least important class each reason may kill.
    #[serde(default)]
    pub min_class_low_memory: Option<Class>,
    pub min_class_thrashing: Class,
    pub min_class_critical: Class,
    /// One victim, then wait for it to die (kill timeout).
    pub kill_timeout_ms: u64,
}

/// memorch's bands, feedback targets and ladder knobs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bands {
    /// Compress under pressure below this share of the domain available.
    pub low_available_frac: f64,
    /// Kill below this share available (ChromeOS resourced's critical margin is 5.2 %).
    pub critical_available_frac: f64,
    /// After a kill, aim for this share available.
    pub kill_target_frac: f64,
    /// Below this share, background is not enough: more important classes may die, the foreground last of all.
    pub extreme_available_frac: f64,
    /// Senpai/TMO-style target: PSI some avg10 (%) memorch lets compression cause.
    pub psi_some_target_pct: f64,
    /// PSI full avg10 (%) that means kill now.
    pub psi_full_kill_pct: f64,
}

/// Per-app compaction.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Compaction {
    /// At idle (screen off), compress whole apps of at least this class; `None` = never.
    pub idle_min_class: Option<Class>,
    /// Under pressure, compress apps of at least this class in small steps; `None` = never.
    pub pressure_min_class: Option<Class>,
    /// Pages a step (thesis §3.3: 32).
    pub step_pages: u64,
    pub min_step_pages: u64,
    /// Under pressure, for thesis-style detection: "slight shortage" = free below this many pages at 1 GiB (scaled),
    /// above the LMK's empty level.
    pub slight_pressure_pages_at_1gib: u64,
    /// Unshared shared-object pages first (SWAM's OOM cleaner).
    pub shared_objects_first: bool,
    /// Skip apps with less anonymous memory than this (CachedAppOptimizer: 12 MB).
    pub min_anon_bytes: u64,
    /// Do not compact the same app whole again within this time (CachedAppOptimizer: 5–10 s).
    pub recompact_after_ms: u64,
    /// Apps compacted in one decision.
    pub max_apps_per_decision: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KsmPolicy {
    /// Run ksmd only while idle, and only when background apps that opted in share an ancestor (thesis §3.3,
    /// optimisations 1 and 2).
    pub idle_targeted: bool,
    /// ksmd's pages a pass; its sleep between passes stays the kernel's (20 ms, the thesis's).
    pub pages_to_scan: u64,
    /// KSM must pay for ksmd's CPU (idle-targeted only).
    #[serde(default)]
    pub min_saving_frac: Option<f64>,
    /// Stop ksmd once its passes have gone over every background app, and run it again only for an app it has not
    /// (idle-targeted only; thesis §3.3: no rescan of a background app).
    #[serde(default)]
    pub once: bool,
}

impl KsmPolicy {
    /// Whether KSM must pay for itself here: a share asked, and ksmd run at idle only (stock KSM runs all the time, as
    /// the thesis's baseline).
    pub fn has_trial(&self) -> bool {
        self.idle_targeted && self.min_saving_frac.is_some()
    }

    /// Whether ksmd's passes are counted from memorch's start of it: for a trial, or to stop it once it has gone over
    /// the apps.
    pub fn counts_passes(&self) -> bool {
        self.has_trial() || (self.idle_targeted && self.once)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SwapPolicy {
    /// zram the daemon sets up when the domain has no swap, as a share of its memory.
    pub zram_pct: Option<f64>,
    pub zram_algorithm: String,
    /// Storage swap files on demand (SWAM adaptive swap, slow path).
    pub swap_files: bool,
    /// At most this many files.
    pub max_files: u32,
    /// A storage swap of this share of the domain's memory set up at start, below zram in priority (SWAM's NAND-swap
    /// baselines, MeeGo's MMC swap): fixed, not grown or removed.
    #[serde(default)]
    pub storage_pct: Option<f64>,
    /// The domain's swappiness (v1 memcg `memory.swappiness`) while the daemon runs (MeeGo: 30 on the N9, 60 found
    /// better); `None`: left as it is.
    #[serde(default)]
    pub swappiness: Option<u32>,
    /// Add a file once zram is that full at any look, pressure or not (SWAM's allocator "on demand"); false: only under
    /// pressure, before a kill or a launch.
    #[serde(default)]
    pub grow_on_fill: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KillMode {
    Never,
    /// One victim per trigger (the LMK, the OOM killer).
    OnePerTrigger,
    /// As many victims at once as the target needs.
    Batch,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KillPolicy {
    pub mode: KillMode,
    pub order: VictimOrder,
    /// How the chance of a return soon (`p_return`, which orders compressions and weighs kills) is judged.
    #[serde(default)]
    pub return_by_sessions: bool,
}

/// A file without `[kill]` leaves kills to the kernel's OOM killer.
impl Default for KillPolicy {
    fn default() -> KillPolicy {
        KillPolicy { mode: KillMode::Never, order: VictimOrder::ClassThenSize, return_by_sessions: false }
    }
}

impl KillPolicy {
    /// The cost model's: the set of victims of the least expected cost that frees the target, the chance of a return
    /// judged by usage sessions.
    pub fn by_cost() -> KillPolicy {
        KillPolicy { mode: KillMode::Batch, order: VictimOrder::LeastExpectedCost, return_by_sessions: true }
    }
}

/// Reclaim ahead of time (MOS).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Ahead {
    /// The LMK threshold tLmk as a share of the domain (MOS: 120 MB of 2 GB).
    pub threshold_frac: f64,
    /// Phase 1 reclaims in steps that double while the need remains (MOS Alg. 1 line 15).
    pub doubling_start_pages: Option<u64>,
    /// Phase 1 may kill cached apps for what page cache cannot give (MOS); memorch compresses them instead.
    pub home_kills: bool,
    /// Compress before killing ahead of a launch, within this time budget (memorch).
    pub compress_budget_ms: Option<u64>,
    /// The launcher waits for what is secured before a launch (MOS.
    pub launch_waits: bool,
}

/// No swap: what a file without `[swap]` gets. A key a file leaves out takes its value here: the kernel's compressor,
/// no storage files.
impl Default for SwapPolicy {
    fn default() -> SwapPolicy {
        SwapPolicy {
            zram_pct: None,
            zram_algorithm: "lzo-rle".into(),
            swap_files: false,
            max_files: 0,
            storage_pct: None,
            swappiness: None,
            grow_on_fill: false,
        }
    }
}

/// How long a launch counts as in flight without a report that it finished: longer than the slowest first launch
/// measured on `realapps` (2.7 s).
pub const LAUNCH_IN_FLIGHT_MAX_MS: u64 = 3_000;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Preset {
    /// The file's name (`presets/NAME.toml`), or the variant's spec.
    #[serde(default)]
    pub name: String,
    pub summary: String,
    pub detection: Detection,
    pub compaction: Option<Compaction>,
    pub ksm: Option<KsmPolicy>,
    #[serde(default)]
    pub swap: SwapPolicy,
    /// Under the cost model, left out: the model chooses (`KillPolicy::by_cost`).
    #[serde(default)]
    pub kill: KillPolicy,
    pub ahead: Option<Ahead>,
    /// Apps the launcher starts get a memory group of their own, so the preset can take their coldest anonymous pages
    /// first (appgroup.rs in memorch-linux); off.
    #[serde(default)]
    pub app_groups: bool,
    /// Freeze an app that has been cached this long (cgroup v2 `cgroup.freeze` on its own group), as Android freezes
    /// cached apps after 10 s; thawed before it comes back.
    #[serde(default)]
    pub freeze_after_ms: Option<u64>,
    /// Tell apps that listen to trim before compressing or killing (margins.rs).
    #[serde(default)]
    pub trim_notices: bool,
    /// Android's activity manager before the LMK.
    #[serde(default)]
    pub max_cached_apps: Option<u32>,
    /// Read the app in front back whole once its return is served, a piece a decision, down to the critical band
    /// (ladder/prefetch.rs).
    #[serde(default)]
    pub prefetch_whole: bool,
    /// Take memory by the expected cost to the user (ladder/cost.rs): the order of the apps a squeeze takes from, zram
    /// or storage for each, storage swap grown to what a launch needs or for a bad ratio, the victims
    /// (`KillPolicy::by_cost`).
    #[serde(default)]
    pub cost_model: bool,
    /// The CPU priority (nice) of the memory work the daemon does in the background.
    #[serde(default)]
    pub work_nice: Option<i32>,
}

/// Android's freezer delay (CachedAppOptimizer `freeze_debounce_timeout`: 10 s).
pub const FREEZE_AFTER_MS: u64 = 10_000;

pub const NAMES: [&str; 8] = ["kernel", "lmk-classic", "compcache", "thesis", "lmkd", "mos", "swam", "memorch"];

/// The papers' baselines, each a manager of its own, so that each paper's comparison is re-run against what it compared
/// with (docs/presets.md, docs/results.md).
pub const BASELINES: [&str; 7] =
    ["android-4.4", "swam-zram", "swam-nand", "swam-zram-nand", "meego-mmc", "meego-zram", "meego-zram-mmc"];

/// The embedded preset files, by name.
const FILES: [(&str, &str); 15] = [
    ("kernel", include_str!("../../../../presets/kernel.toml")),
    ("lmk-classic", include_str!("../../../../presets/lmk-classic.toml")),
    ("compcache", include_str!("../../../../presets/compcache.toml")),
    ("thesis", include_str!("../../../../presets/thesis.toml")),
    ("lmkd", include_str!("../../../../presets/lmkd.toml")),
    ("mos", include_str!("../../../../presets/mos.toml")),
    ("swam", include_str!("../../../../presets/swam.toml")),
    ("memorch", include_str!("../../../../presets/memorch.toml")),
    ("android-4.4", include_str!("../../../../presets/android-4.4.toml")),
    ("swam-zram", include_str!("../../../../presets/swam-zram.toml")),
    ("swam-nand", include_str!("../../../../presets/swam-nand.toml")),
    ("swam-zram-nand", include_str!("../../../../presets/swam-zram-nand.toml")),
    ("meego-mmc", include_str!("../../../../presets/meego-mmc.toml")),
    ("meego-zram", include_str!("../../../../presets/meego-zram.toml")),
    ("meego-zram-mmc", include_str!("../../../../presets/meego-zram-mmc.toml")),
];

impl Preset {
    pub fn by_name(name: &str) -> Option<Preset> {
        let text = Preset::file_text(name)?;
        Some(Preset::from_toml(name, text).expect("the embedded presets parse (preset.rs tests each)"))
    }

    /// The embedded file of a shipped preset, as `presets show` prints it.
    pub fn file_text(name: &str) -> Option<&'static str> {
        FILES.iter().find(|(n, _)| *n == name).map(|(_, text)| *text)
    }

    /// A preset from its TOML text, named `name`: a key the engine does not know or a value of the wrong type is
    /// refused with its line, a value out of range with its key.
    pub fn from_toml(name: &str, text: &str) -> Result<Preset, String> {
        refuse_kill_under_cost_model(text)?;
        let mut p: Preset = toml::from_str(text).map_err(|e| e.to_string().trim_end().to_string())?;
        p.name = name.to_string();
        if p.cost_model {
            p.kill = KillPolicy::by_cost();
        }
        p.check_ranges()?;
        Ok(p)
    }

    /// Every preset: the systems, then the papers' baselines.
    pub fn all() -> Vec<Preset> {
        NAMES.iter().chain(BASELINES.iter()).map(|n| Preset::by_name(n).expect("every listed preset exists")).collect()
    }
}

/// The cost model chooses the victims; a file that also says how is refused, not half-read. (A file that is no TOML at
/// all is left to the typed parse, which names the line.)
fn refuse_kill_under_cost_model(text: &str) -> Result<(), String> {
    let Ok(file) = toml::from_str::<toml::Table>(text) else { return Ok(()) };
    if file.get("cost_model").and_then(|v| v.as_bool()) != Some(true) {
        return Ok(());
    }
    if let Some(key) = file.get("kill").and_then(|k| k.as_table()).and_then(|k| k.keys().next()) {
        return Err(format!(
            "kill.{key}: the cost model (cost_model = true) chooses victims itself, the least expected cost in a batch, by usage sessions: leave [kill] out, or set cost_model = false"
        ));
    }
    Ok(())
}

#[cfg(test)]
#[path = "preset_tests.rs"]
mod tests;
