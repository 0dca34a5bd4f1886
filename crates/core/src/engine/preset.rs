//! The presets: each paper's system as the same engine with different steps switched on and
//! different parameters (DESIGN.md §5). Every value and where it comes from is listed by
//! `memorch presets show NAME` and in docs/presets.md.

use super::model::MIB;
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

/// The LMK minfree table (thesis fig. 2-19), in pages for a 1 GiB phone, scaled to the
/// domain's memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Minfree {
    /// (least important class that may be killed at this level, minfree pages at 1 GiB),
    /// from the most important class to the least.
    pub levels: Vec<(Class, u64)>,
    pub reference_bytes: u64,
    /// Kill only when the file cache is also below the level (`other_file < minfree`).
    pub require_file_below: bool,
    /// Wait for a victim to die before the next kill (lowmem_deathpending).
    pub death_pending_ms: u64,
}

impl Minfree {
    /// Thesis fig. 2-18/2-19: foreground, visible, secondary server, hidden, content
    /// provider, empty → 2048, 3072, 4096, 6144, 7168, 8192 pages.
    pub fn thesis() -> Minfree {
        Minfree {
            levels: vec![
                (Class::Foreground, 2048),
                (Class::Visible, 3072),
                (Class::Perceptible, 4096),
                (Class::Previous, 6144),
                (Class::Cached, 7168),
                (Class::Empty, 8192),
            ],
            reference_bytes: 1 << 30,
            require_file_below: true,
            death_pending_ms: 1000,
        }
    }

    /// A page count of the 1 GiB reference phone, in bytes for a domain of `total_bytes`.
    pub fn scale(&self, pages_at_reference: u64, total_bytes: u64) -> u64 {
        (pages_at_reference as f64 * 4096.0 * total_bytes as f64 / self.reference_bytes as f64) as u64
    }

    /// The levels in bytes for a domain of `total_bytes`.
    pub fn scaled(&self, total_bytes: u64) -> Vec<(Class, u64)> {
        self.levels.iter().map(|&(c, pages)| (c, self.scale(pages, total_bytes))).collect()
    }

    /// The least important class that may die at this free memory, if any level is crossed.
    /// `lowmem_shrink` takes the first (smallest) level both free and file are under.
    pub fn min_class(&self, total_bytes: u64, free_bytes: u64, file_bytes: u64) -> Option<(Class, u64)> {
        self.scaled(total_bytes)
            .into_iter()
            .find(|&(_, minfree)| free_bytes < minfree && (!self.require_file_below || file_bytes < minfree))
    }
}

/// Android lmkd's PSI-driven strategy (AOSP lmkd, `mp_event_psi`), as anchors.md records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// Least important class each reason may kill. lmkd's PSI strategy has no "plain low
    /// memory" reason; SWAM's EOOM kills on a low watermark alone (`None` here: never).
    /// Thrashing or low swap: above perceptible (> 200) unless below the min watermark or
    /// thrashing over twice the limit; a complete stall or pressure right after a kill: any.
    #[serde(default)]
    pub min_class_low_memory: Option<Class>,
    pub min_class_thrashing: Class,
    pub min_class_critical: Class,
    /// One victim, then wait for it to die (kill timeout).
    pub kill_timeout_ms: u64,
}

/// memorch's bands, feedback targets and ladder knobs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bands {
    /// Compress under pressure below this share of the domain available.
    pub low_available_frac: f64,
    /// Kill below this share available (ChromeOS resourced's critical margin is 5.2 %).
    pub critical_available_frac: f64,
    /// After a kill, aim for this share available.
    pub kill_target_frac: f64,
    /// Below this share, background is not enough: more important classes may die, the
    /// foreground last of all.
    pub extreme_available_frac: f64,
    /// Senpai/TMO-style target: PSI some avg10 (%) memorch lets compression cause.
    pub psi_some_target_pct: f64,
    /// PSI full avg10 (%) that means kill now.
    pub psi_full_kill_pct: f64,
}

fn yes() -> bool {
    true
}

/// Per-app compaction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compaction {
    /// At idle (screen off), compress whole apps of at least this class; `None` = never.
    pub idle_min_class: Option<Class>,
    /// Under pressure, compress apps of at least this class in small steps; `None` = never.
    pub pressure_min_class: Option<Class>,
    /// Pages a step (thesis §3.3: 32).
    pub step_pages: u64,
    pub min_step_pages: u64,
    /// Under pressure, for thesis-style detection: "slight shortage" = free below this many
    /// pages at 1 GiB (scaled), above the LMK's empty level.
    pub slight_pressure_pages_at_1gib: u64,
    /// Unshared shared-object pages first (SWAM's OOM cleaner).
    pub shared_objects_first: bool,
    /// Skip apps with less anonymous memory than this (CachedAppOptimizer: 12 MB).
    pub min_anon_bytes: u64,
    /// Do not compact the same app whole again within this time (CachedAppOptimizer: 5–10 s).
    pub recompact_after_ms: u64,
    /// Apps compacted in one decision.
    pub max_apps_per_decision: usize,
    /// Squeezes weigh an app's chance of a return soon by how quick its returns are
    /// (`Ctx::return_weight`): a read-back adds about as much to any return, and to one that
    /// takes a frame it is the whole wait, to one that takes 50 ms a fraction of it.
    #[serde(default)]
    pub slow_returns_give_first: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KsmPolicy {
    /// Run ksmd only while idle, and only when background apps that opted in share an
    /// ancestor (thesis §3.3, optimisations 1 and 2).
    pub idle_targeted: bool,
    pub pages_to_scan: u64,
    pub sleep_ms: u64,
    /// KSM must pay for ksmd's CPU (idle-targeted only): every three passes of ksmd over the
    /// apps (from memorch's first run of it), what it merged of the domain's opted-in apps in
    /// them must be at least this share of the domain, or it is stopped and not run again for
    /// 30 minutes (`KSM_TRIAL_SCANS`, `KSM_RETRY_MS` in ladder/prepare_idle.rs): it runs while
    /// its passes merge. `None`: run whenever the apps qualify (the thesis's rule).
    #[serde(default)]
    pub min_saving_frac: Option<f64>,
}

impl KsmPolicy {
    /// Whether KSM must pay for itself here: a share asked, and ksmd run at idle only (stock
    /// KSM runs all the time, as the thesis's baseline).
    pub fn has_trial(&self) -> bool {
        self.idle_targeted && self.min_saving_frac.is_some()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SwapPolicy {
    /// zram the daemon sets up when the domain has no swap, as a share of its memory.
    pub zram_pct: Option<f64>,
    pub zram_algorithm: String,
    /// Storage swap files on demand (SWAM adaptive swap, slow path).
    pub swap_files: bool,
    /// …or when it compresses worse than this.
    pub grow_below_ratio: f64,
    pub max_files: u32,
    /// Not again within this time.
    pub grow_interval_ms: u64,
    /// A storage swap of this share of the domain's memory set up at start, below zram in
    /// priority (SWAM's NAND-swap baselines, MeeGo's MMC swap): fixed, not grown or removed.
    #[serde(default)]
    pub storage_pct: Option<f64>,
    /// The domain's swappiness (v1 memcg `memory.swappiness`) while the daemon runs
    /// (MeeGo: 30 on the N9, 60 found better); `None`: left as it is.
    #[serde(default)]
    pub swappiness: Option<u32>,
    /// Add a file as soon as zram is that full, at any look, pressure or not (SWAM's
    /// dynamic swap allocator allocates "on demand"); false: only under pressure, before a
    /// kill or a launch (memorch).
    #[serde(default)]
    pub grow_on_fill: bool,
    /// In a launch's decision, a storage file sized to what zram's room and compression
    /// cannot cover (whole files of `file_frac`, within `max_files` of them in all), added
    /// whatever zram's fill; false: one file of `file_frac`, only once zram is
    /// `grow_at_zram_used_frac` full (SWAM).
    #[serde(default)]
    pub grow_to_need: bool,
    /// A read-back (the app in front made whole, the likely apps at idle) asks for the pages
    /// it finds on storage swap all at once (`process_madvise(MADV_WILLNEED)`) before it
    /// touches them, so the device reads them together rather than one touch at a time
    /// (linux `readback.rs`: 2.6 against 7.9 µs a page on these machines). false: each touch
    /// reads its page.
    #[serde(default)]
    pub read_back_ahead: bool,
    /// Send a squeeze of an app less likely than this to be wanted soon (`p_return`) to a
    /// storage swap file of its own, made for it and enabled above zram in priority, once
    /// zram is `cold_at_zram_used` full: zram keeps its room for the likely apps, whose
    /// returns read it back three times faster a page than storage (issue 11). `None`: every
    /// squeeze goes where the kernel puts it (zram first).
    #[serde(default)]
    pub cold_to_storage_below: Option<f64>,
    /// While a launch is in flight (from its intent until it is reported launched), every
    /// squeeze goes to a storage swap file of its own as an unlikely app's does, whatever the
    /// app's chance of a return and zram's fill (where `cold_to_storage_below` is set and a
    /// file may be made): a page to storage costs the kernel no compression on a CPU the
    /// launching app competes for, and frees all of itself where zram keeps a share of it, so
    /// the launch's room is made sooner, paid for by slower reads at those apps' returns.
    #[serde(default)]
    pub launch_to_storage: bool,
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
pub struct KillPolicy {
    pub mode: KillMode,
    pub order: VictimOrder,
    /// How the chance of a return soon (`p_return`, which orders compressions and weighs
    /// kills) is judged. True: by usage sessions (LSApp: a user opens 1-4 apps a session and
    /// switches among them): an app used since the screen last came on is likely (½), plus
    /// the share of sessions it was used in (½). False, or before the first screen-off: by
    /// recency (half-life 2 min) and front counts (ladder/mod.rs `p_return`).
    #[serde(default)]
    pub return_by_sessions: bool,
}

/// Reclaim ahead of time (MOS).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ahead {
    /// Phase 1: at home, bring free memory up to the LMK threshold.
    pub home: bool,
    /// Phase 2: before a launch whose peak exceeds the threshold, secure it at once.
    pub launch: bool,
    /// The LMK threshold tLmk as a share of the domain (MOS: 120 MB of 2 GB).
    pub threshold_frac: f64,
    /// Phase 1 reclaims in steps that double while the need remains (MOS Alg. 1 line 15).
    pub doubling_start_pages: Option<u64>,
    /// Phase 1 may kill cached apps for what page cache cannot give (MOS); memorch
    /// compresses them instead.
    pub home_kills: bool,
    /// Compress before killing ahead of a launch, within this time budget (memorch).
    pub compress_budget_ms: Option<u64>,
    /// The launcher waits for what is secured before a launch (MOS: phase 2 kills before the
    /// app starts). False: the daemon answers a launch at once and secures the room right
    /// after, while the app starts.
    #[serde(default = "yes")]
    pub launch_waits: bool,
}

/// How long a launch counts as in flight without a report that it finished: longer than the
/// slowest first launch measured on `realapps` (2.7 s).
pub const LAUNCH_IN_FLIGHT_MAX_MS: u64 = 3_000;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Preset {
    pub name: String,
    pub summary: String,
    pub detection: Detection,
    pub compaction: Option<Compaction>,
    pub ksm: Option<KsmPolicy>,
    pub swap: SwapPolicy,
    pub kill: KillPolicy,
    pub ahead: Option<Ahead>,
    /// Apps the launcher starts get a memory group of their own, so the preset can take
    /// their coldest anonymous pages first (appgroup.rs in memorch-linux); off: apps share
    /// the domain's group.
    #[serde(default)]
    pub app_groups: bool,
    /// Freeze an app that has been cached this long (cgroup v2 `cgroup.freeze` on its own
    /// group), as Android freezes cached apps after 10 s; thawed before it comes back.
    /// `None`: never.
    #[serde(default)]
    pub freeze_after_ms: Option<u64>,
    /// Tell apps that listen to trim before compressing or killing (margins.rs).
    #[serde(default)]
    pub trim_notices: bool,
    /// Android's activity manager before the LMK: more cached apps than this and the least
    /// recently used beyond the count are killed, whatever memory is free (Android 4.4,
    /// the baseline MOS beats: "AMS kills an application based on the fixed number of
    /// background applications"). `None`: no count.
    #[serde(default)]
    pub max_cached_apps: Option<u32>,
    /// Read the app in front back whole once its return is served, a piece a decision, down
    /// to the critical band (ladder/prefetch.rs): the device's reclaim and the pressure step
    /// then make the room from the apps in the background, so the session's apps are the
    /// ones in RAM.
    #[serde(default)]
    pub prefetch_whole: bool,
    /// The CPU priority (nice) of the memory work the daemon does in the background: the
    /// kernel squeezes, reclaims and reads back in the context of the thread that asks, so
    /// at the daemon's own priority (`loop.nice`, -10, so that decisions and kills never
    /// wait) that work takes the CPU from the app in front and from a launch. With a value,
    /// that work runs at it (0: the apps' own priority, as kswapd's reclaim does), and only
    /// the squeezes a launcher waits for keep the daemon's. `None`: all at the daemon's.
    #[serde(default)]
    pub work_nice: Option<i32>,
}

/// Android's freezer delay (CachedAppOptimizer `freeze_debounce_timeout`: 10 s).
pub const FREEZE_AFTER_MS: u64 = 10_000;

pub const NAMES: [&str; 8] = ["kernel", "lmk-classic", "compcache", "thesis", "lmkd", "mos", "swam", "memorch"];

/// The papers' baselines, each a manager of its own, so that each paper's comparison is
/// re-run against what it compared with (docs/presets.md, docs/results.md).
pub const BASELINES: [&str; 7] =
    ["android-4.4", "swam-zram", "swam-nand", "swam-zram-nand", "meego-mmc", "meego-zram", "meego-zram-mmc"];

fn no_swap() -> SwapPolicy {
    SwapPolicy {
        zram_pct: None,
        zram_algorithm: "lzo-rle".into(),
        swap_files: false,
        grow_below_ratio: 1.5,
        max_files: 0,
        grow_interval_ms: 30_000,
        storage_pct: None,
        swappiness: None,
        grow_on_fill: false,
        grow_to_need: false,
        read_back_ahead: false,
        cold_to_storage_below: None,
        launch_to_storage: false,
    }
}

fn zram(pct: f64, alg: &str) -> SwapPolicy {
    SwapPolicy { zram_pct: Some(pct), zram_algorithm: alg.into(), ..no_swap() }
}

fn thesis_compaction() -> Compaction {
    Compaction {
        idle_min_class: Some(Class::Empty),
        pressure_min_class: Some(Class::Empty),
        step_pages: 32,
        min_step_pages: 32,
        slight_pressure_pages_at_1gib: 12288,
        shared_objects_first: false,
        min_anon_bytes: 0,
        recompact_after_ms: 0,
        max_apps_per_decision: 1,
        slow_returns_give_first: false,
    }
}

impl KillPolicy {
    /// How and whom to kill, with none of memorch's optional behaviours (each a switch,
    /// docs/presets.md): what every paper's preset and Android's daemons do.
    fn plain(mode: KillMode, order: VictimOrder) -> KillPolicy {
        KillPolicy { mode, order, return_by_sessions: false }
    }
}

fn lmk_kill() -> KillPolicy {
    KillPolicy::plain(KillMode::OnePerTrigger, VictimOrder::ClassThenSize)
}

impl Preset {
    pub fn by_name(name: &str) -> Option<Preset> {
        Some(match name {
            "kernel" => kernel(),
            "lmk-classic" => lmk_classic(),
            "compcache" => compcache(),
            "thesis" => thesis(),
            "lmkd" => lmkd(),
            "mos" => mos(),
            "swam" => swam(),
            "memorch" => memorch(),
            "android-4.4" => android_4_4(),
            "swam-zram" => swam_baseline("swam-zram", Some(12.5), None),
            "swam-nand" => swam_baseline("swam-nand", None, Some(50.0)),
            "swam-zram-nand" => swam_baseline("swam-zram-nand", Some(12.5), Some(50.0)),
            "meego-mmc" => meego("meego-mmc", None, Some(29.0), None),
            "meego-zram" => meego("meego-zram", Some(15.0), None, Some(60)),
            "meego-zram-mmc" => meego("meego-zram-mmc", Some(15.0), Some(29.0), Some(60)),
            _ => return None,
        })
    }

    /// Every preset: the systems, then the papers' baselines.
    pub fn all() -> Vec<Preset> {
        NAMES.iter().chain(BASELINES.iter()).map(|n| Preset::by_name(n).expect("every listed preset exists")).collect()
    }

    /// Where a parameter (a dotted key of its JSON form) comes from, for `presets show`.
    pub fn source(&self, key: &str) -> &'static str {
        let k = key;
        match self.base_name() {
            "memorch" if k == "swap.read_back_ahead" => "issue 11: the whole read-back of the app in front touches one page at a time, and from storage swap each touch waits for the device (7.9 µs a page, against 2.6 with the pages asked for at once first: cargo bench -p memorch --bench actuators); on realapps, six paired runs over seeds 3-8, the daemon's read-backs took 4-5 µs a page against 13-26, and p50 was shorter in five pairs (0.78x, geometric mean), p95 and the whole wait in four, warm returns fewer in all six (docs/results.md); memorch:swap.read_back_ahead=false turns it off",
            _ if k == "swap.read_back_ahead" => "issue 11: off in the papers' presets, whose read-backs (if any) are not theirs; memorch:swap.read_back_ahead=true asks for a read-back's pages on storage at once (docs/presets.md)",
            _ if k == "detection.kind" => "DESIGN.md §5 table (detection column)",
            _ if k.starts_with("detection.levels") || k.starts_with("detection.reference_bytes") => "thesis fig. 2-18, 2-19 (minfree 2048…8192 pages on a 1 GiB phone), scaled to the domain",
            _ if k.starts_with("detection.require_file_below") => "thesis §2.6.4 lowmem_shrink: other_free and other_file below minfree",
            _ if k.starts_with("detection.death_pending_ms") => "lowmemorykiller.c lowmem_deathpending_timeout (1 s)",
            _ if k.starts_with("detection.psi_partial_stall_low_ram") => "lmkd DEF_PARTIAL_STALL_LOWRAM 200 ms (ro.lmk.psi_partial_stall_ms on low-RAM devices)",
            _ if k.starts_with("detection.psi_") => "lmkd: PSI some 70 ms / full 700 ms per 1 s (anchors.md); windows are rounded to 2 s multiples where the kernel refuses 1 s",
            _ if k.starts_with("detection.thrashing_decay_low_ram") => "lmkd DEF_THRASHING_DECAY_LOWRAM 50 %",
            _ if k.starts_with("detection.swap_free_low_pct") => "lmkd swap_free_low_percentage 10 (anchors.md)",
            _ if k.starts_with("detection.thrashing") => "lmkd thrashing_limit 100 % (30 % low-RAM), decay after each kill (anchors.md)",
            _ if k.starts_with("detection.low_ram_bytes") => "lmkd low-RAM devices (ro.config.low_ram: Android Go, 1 GB phones); the 2 GiB devices here scale SWAM's 4 GB and MOS's 2 GB phones, which are not low-RAM",
            _ if k.starts_with("detection.wmark") => "lmkd zone watermarks min/low/high; memorch: shares of the domain",
            "swam" if k.starts_with("detection.min_class_low_memory") => "SWAM §4.3: EOOM \"comes into play when the available memory space is insufficient\": a low watermark alone opens background services",
            _ if k.starts_with("detection.min_class") => "lmkd mp_event_psi: thrashing/low swap > 200 (perceptible) unless below min or thrashing ≥ 2× the limit; complete stall and pressure after a kill: anything; no plain low-memory reason",
            _ if k.starts_with("detection.kill_timeout_ms") => "lmkd kill timeout 100 ms: one kill, then wait for it to die",
            _ if k.starts_with("detection.critical_available_frac") => "ChromeOS resourced critical margin 5.2 % (anchors.md)",
            _ if k.starts_with("detection.psi_some_target_pct") => "Senpai/TMO: aim for a small bounded pressure (anchors.md)",
            _ if k.starts_with("detection.") => "memorch (DESIGN.md §4): bands chosen here, documented in docs/presets.md",
            "thesis" if k.starts_with("compaction.") => "thesis §3.3: empty apps first, whole at idle, 32 pages a step under slight shortage",
            "memorch" if k == "ksm.min_saving_frac" => "issue 11: KSM must pay for ksmd's CPU, every three passes of ksmd over the apps: on realapps with every app opted in (--ksm; real programs' data is their own) it stopped after 1-4 MiB merged, ksmd 0.75 s a run against 11.6 s; on thesis-ksm the same 168 MiB merged for 4.4-5.1 s of ksmd against 15-17 s (docs/results.md); null runs it whenever the apps qualify, as the thesis does",
            "memorch" if k.starts_with("ksm.") => "thesis §3.3 optimisations 1 and 2 (KSM at idle over sibling background apps), ksmd at 1000 pages / 20 ms",
            "thesis" if k.starts_with("ksm.") => "thesis §3.3 optimisations 1 and 2; ksmd defaults 100 pages / 20 ms",
            "swam" if k.starts_with("compaction.") => "SWAM §4.1-4.2: unshared SO pages of every background app first, then normal pages for what is short (free to the high watermark), at least one 4 MiB unmap unit (1024 pages)",
            "swam" if k.starts_with("swap.") => "SWAM §4.1, §5.1: zram 1 GB of 8 GB (12.5 %) lz4; swam files allocated on demand once zram fills (the next when the last is used), removed when idle (ISOP eraser)",
            "mos" | "memorch" if k.starts_with("ahead.threshold_frac") => "MOS §IV: LMK threshold 120 MB on a 2 GB Nexus 5",
            "mos" if k.starts_with("ahead.") => "MOS §IV Algorithm 1: phase 1 at home (page cache, then app cache), phase 2 before launch, reclaim count doubling",
            "memorch" if k == "compaction.shared_objects_first" => "SWAM's OOM cleaner (SWAM §4): the code pages only one app maps go first; off: on realapps the same kills and p95, less stall and fewer file refaults without it, on swam40 fewer kills (docs/results.md); memorch:so_first=on turns it on",
            "memorch" if k == "compaction.slow_returns_give_first" => "issue 11: a read-back adds about as much to any return (realapps: 15-300 ms), the whole wait of a return answered within a frame and a fraction of one that takes 50 ms; Android's activity manager reports each warm start's time; on: on realapps (twelve paired runs, seeds 3-8) p50 shorter in ten, by 4 % (geometric mean), p95 (first launches) longer in nine, by 7 %, the whole wait the same; on swam40 (three paired runs) p50 shorter in two, p95 and kills the same (docs/results.md); memorch:compaction.slow_returns_give_first=false is the preset before",
            "memorch" if k.starts_with("compaction.") => "DESIGN.md §4 step 4; CachedAppOptimizer throttles (anchors.md); amounts in proportion to the shortfall (docs/presets.md)",
            "memorch" if k.starts_with("freeze_after_ms") => "Android's cached-app freezer (CachedAppOptimizer, 10 s debounce; anchors.md \"Newer\"); off: on realapps it made returns slower (p50 13.8 against 8.6 ms, docs/results.md); memorch:freeze=on turns it on",
            "memorch" if k.starts_with("trim_notices") => "Android onTrimMemory, freedesktop low-memory-monitor (anchors.md \"Newer\"); off: on the trim scenario it cost stall and kills (docs/results.md); memorch:trim=on turns it on",
            _ if k.starts_with("trim_notices") => "no notices (the paper's system has none)",
            _ if k.starts_with("freeze_after_ms") => "no freezer (the paper's system has none)",
            "memorch" if k.starts_with("prefetch_whole") => "issue 11: returns come in runs within a session (60-78 % within 20 s of the app's previous visit) and each reads a new window of its data back; the app made whole after its first return keeps the rest hot (ASAP prepaging, anchors.md); on: on realapps p50 shorter on two seeds of three, warm returns 17 against 31 (docs/results.md); memorch:whole=off turns it off",
            _ if k.starts_with("prefetch_whole") => "no read-back (the paper's system has none)",
            _ if k.starts_with("max_cached_apps") => "no count of cached apps (memory decides)",
            "memorch" if k == "work_nice" => "issue 11: the kernel squeezes in the asking thread's context, and the daemon runs at nice -10, ahead of a launch and the app in front (kswapd reclaims at 0); 0 with the launch answered at once: on realapps p50 and p95 shorter in two benches (6.30 and 7.19 against 7.41 and 8.20 ms; 673 and 753 against 742 and 826), the first launches shorter; swam40 and mos26 as before; nice 10 was not better (p95 672 against 557 ms, stall 0.29 against 0.17 s) (docs/results.md); memorch:work_nice=null,ahead.launch_waits=true is the preset before",
            _ if k == "work_nice" => "the daemon's own priority (loop.nice) for all its work; a value runs the background squeezes, reclaims and read-backs at it (kswapd reclaims at nice 0; Android's compaction thread at nice 2, CachedAppOptimizer's ServiceThread)",
            "memorch" if k.starts_with("app_groups") => "Android's memcg-based compaction, Tizen's squeeze (anchors.md): a squeeze takes anonymous pages only, code stays resident",
            _ if k.starts_with("app_groups") => "apps share the domain's group (the paper's system has no per-app groups)",
            "memorch" if k == "ahead.launch_waits" => "issue 11: a launcher that waits for memorch's answer adds what it secures (up to ~0.4 s) to the launch; false (answered at once), with the squeezes made beside the launch at the apps' priority (work_nice = 0): p50 and p95 shorter on realapps in two benches; answered at once at the daemon's priority it was not shown better (docs/results.md)",
            "memorch" if k == "ahead.compress_budget_ms" => "issue 11: what the launch step squeezes before the pressure step and the app's own reclaim take the rest (at compress_bytes_per_ms); answered at once it bounds no wait, but 1500 ms (the whole need on realapps) made p95 longer on every seed and the apps reclaim for themselves more often (docs/results.md)",
            "memorch" if k == "kill.return_by_sessions" => "issue 11: LSApp's sessions (anchors.md: 1-4 apps a session, 5.46 switches); on realapps' traces an app in the session in progress plus its share of sessions ranks the apps that come back within 10-120 s better than recency and front counts (AUC 0.75-0.85 against 0.68-0.77, scripts/return-ranking.py); on: with returns counted (2026-11-28), ten paired runs on realapps over seeds 3-8 (six never tuned on) had p50 shorter in nine and p95 in eight than with recency and front counts, median p50 0.87x and p95 0.93x on seeds 3-5, at 2 kills in the ten runs against none (earlyoom: 3-6 a run) (docs/results.md); before returns were counted, an app's sessions were those it was launched in, and p50 doubled",
            "memorch" if k.starts_with("kill.") => "issue: kill what costs the user least (chance of a return soon × relaunch cost)",
            "memorch" if k.starts_with("ahead.") => "DESIGN.md §4 steps 2–3 (MOS, compress first); speed from docs/performance.md",
            "memorch" if k == "swap.cold_to_storage_below" => "issue 11: memorch's warm returns on realapps cost three times the peers' a page because a third to a half came from storage swap, and those were the likely apps' pages: zram filled with the first squeezes, of the unlikely apps (docs/results.md); a storage file above zram in priority, made for one unlikely app's squeeze, sends its pages past zram (the kernel has no zram writeback here), and a squeeze to storage frees all it moves, so fewer apps give; 0.25 (not used in the session in progress, in under half the sessions): on realapps, six paired runs over seeds 3-8, p50 shorter in all six (seeds 3-5: 6.09 against 6.51 ms; 6-8: 15.2 against 18.3), p95 in four, stall lower, half the squeezes, no kills either way; 0.1 was between the two, 0.5 longer on all of seeds 3-5 (docs/results.md); memorch:swap.cold_to_storage_below=null turns it off",
            "memorch" if k == "swap.launch_to_storage" => "issue 11: a first launch under pressure ran while its room was compressed into zram beside it (realapps: 'chat', 97 MiB short, 131 MiB squeezed at ~22 µs a page while it started, 1294 ms against ~400 with room); a squeeze to storage moved ~6-13 µs a page in the same run and frees all it moves, so fewer apps give; on: on realapps, twelve paired runs over seeds 3-14, p50 shorter in nine (0.80x, geometric mean), hot returns more in ten, p95 shorter in five and the wait in four (1.00x and 1.01x), the warm returns slower a page (more of them from storage), the daemon's CPU lower in ten; swam40: 0 kills against 4, 36.0 apps alive against 33.6 (docs/results.md); memorch:swap.launch_to_storage=false is the preset before",
            "memorch" if k == "swap.grow_to_need" || k == "swap.max_files" => "issue 11: a launch killed an app for 80 MiB with zram 63 % full (SWAM adds one file, once zram is 80 % full), and four files were full before launches that then killed; a file sized to what a launch needs, up to eight files' worth: on realapps' seeds 6-8 no kill in three runs against 2, 3 and 2 (docs/results.md); memorch:swap.grow_to_need=off, memorch:swap.max_files=4 as SWAM",
            "memorch" if k.starts_with("swap.") => "Tizen: zram half of RAM, lz4; SWAM adaptive swap for files, every 5 s while zram is full (SWAM's 30 s killed apps on realapps while one file filled, docs/results.md)",
            "mos" | "android-4.4" if k.starts_with("swap.") => "MOS §I: \"mobile devices do not perform memory swapping\" (Nexus 5, Android 4.4): no swap",
            "android-4.4" if k.starts_with("max_cached_apps") => "MOS §II: AMS kills cached apps beyond a fixed count; workloads.md: at most 24 on the Nexus 5",
            "swam-zram" | "swam-nand" | "swam-zram-nand" if k.starts_with("swap.") => "SWAM §5.1 baselines on the low-end device: ZRAM 512 MB of 4 GB (12.5 %) lz4, NAND-swap 2 GB (50 %), or both; LMKD/OOMK as Android's",
            "swam-zram" | "swam-nand" | "swam-zram-nand" => "SWAM §5.1: the baselines run \"the original LMKD/OOMK\": the lmkd preset",
            "meego-mmc" | "meego-zram" | "meego-zram-mmc" if k.starts_with("swap.") => "MeeGo compcache (paper 002): N900 256 MB with 75 MB MMC swap (29 %); ramzswap 15 % with swappiness 60 \"the best choice\"; ramzswap + MMC swap (lower priority) \"best choice\" of the N900 test",
            "meego-mmc" | "meego-zram" | "meego-zram-mmc" => "MeeGo (paper 002): no manager of its own; the kernel's OOM killer",
            "kernel" | "compcache" | "thesis" if k.starts_with("swap.") => "thesis and MeeGo compcache: zram 25 % of RAM, lzo (papers 000, 002)",
            "lmkd" if k.starts_with("swap.") => "Android: zram (half of RAM, lz4 on recent devices)",
            _ if k.starts_with("kill.") => "DESIGN.md §5 table",
            _ => "DESIGN.md §5",
        }
    }
}

/// No manager: the kernel's LRU pushes pages to zram, the memcg/kernel OOM killer kills.
fn kernel() -> Preset {
    Preset {
        name: "kernel".into(),
        summary: "no manager: the kernel's LRU pushes pages to zram, the memcg/kernel OOM killer kills".into(),
        detection: Detection::None,
        compaction: None,
        ksm: None,
        swap: zram(25.0, "lzo-rle"),
        kill: KillPolicy::plain(KillMode::Never, VictimOrder::ClassThenSize),
        ahead: None,
        app_groups: false,
        freeze_after_ms: None,
        trim_notices: false,
        max_cached_apps: None,
        prefetch_whole: false,
        work_nice: None,
    }
}

/// Android's in-kernel LMK (thesis §2.6).
fn lmk_classic() -> Preset {
    Preset {
        name: "lmk-classic".into(),
        summary: "Android's in-kernel LMK: minfree table per class, one victim per trigger, no swap (thesis §2.6)"
            .into(),
        detection: Detection::Minfree(Minfree::thesis()),
        compaction: None,
        ksm: None,
        swap: no_swap(),
        kill: lmk_kill(),
        ahead: None,
        app_groups: false,
        freeze_after_ms: None,
        trim_notices: false,
        max_cached_apps: None,
        prefetch_whole: false,
        work_nice: None,
    }
}

/// lmk-classic over zram, the kernel's LRU choosing pages (thesis §2.4, MeeGo compcache).
fn compcache() -> Preset {
    Preset {
        name: "compcache".into(),
        summary: "lmk-classic over zram of 25 % of RAM, the kernel LRU choosing pages (thesis §2.4, MeeGo compcache)"
            .into(),
        detection: Detection::Minfree(Minfree::thesis()),
        compaction: None,
        ksm: None,
        swap: zram(25.0, "lzo-rle"),
        kill: lmk_kill(),
        ahead: None,
        app_groups: false,
        freeze_after_ms: None,
        trim_notices: false,
        max_cached_apps: None,
        prefetch_whole: false,
        work_nice: None,
    }
}

/// The thesis's optimised policy (thesis §3).
fn thesis() -> Preset {
    Preset {
        name: "thesis".into(),
        summary: "empty apps compressed whole at idle, 32 pages a step under slight pressure, then the LMK; KSM at idle over background same-ancestor apps (thesis §3)".into(),
        detection: Detection::Minfree(Minfree::thesis()),
        compaction: Some(thesis_compaction()),
        ksm: Some(KsmPolicy { idle_targeted: true, pages_to_scan: 100, sleep_ms: 20, min_saving_frac: None }),
        swap: zram(25.0, "lzo-rle"),
        kill: lmk_kill(),
        ahead: None,
        app_groups: false,
        freeze_after_ms: None,
        trim_notices: false,
        max_cached_apps: None,
        prefetch_whole: false,
        work_nice: None,
    }
}

/// Android lmkd's PSI strategy (anchors.md).
fn lmkd() -> Preset {
    Preset {
        name: "lmkd".into(),
        summary: "Android lmkd's PSI strategy: stall triggers and polling, watermarks, thrashing limit with decay, low swap; the least recently used, one kill then wait".into(),
        detection: Detection::Psi(Lmkd {
            psi_partial_stall_us: 70_000,
            psi_complete_stall_us: 700_000,
            psi_window_us: 1_000_000,
            psi_partial_stall_low_ram_us: Some(200_000),
            swap_free_low_pct: 10.0,
            thrashing_limit_pct: 100.0,
            thrashing_limit_low_ram_pct: 30.0,
            low_ram_bytes: 1 << 30,
            thrashing_decay_pct: 10.0,
            thrashing_decay_low_ram_pct: Some(50.0),
            thrashing_window_ms: 1000,
            wmark_min_frac: 0.005,
            wmark_low_frac: 0.01,
            wmark_high_frac: 0.015,
            min_class_low_memory: None,
            min_class_thrashing: Class::Service,
            min_class_critical: Class::Foreground,
            kill_timeout_ms: 100,
        }),
        compaction: None,
        ksm: None,
        swap: zram(50.0, "lz4"),
        kill: KillPolicy::plain(KillMode::OnePerTrigger, VictimOrder::ClassThenLru),
        ahead: None,
        app_groups: false,
        freeze_after_ms: None,
        trim_notices: false,
        max_cached_apps: None,
        prefetch_whole: false,
        work_nice: None,
    }
}

/// MOS: reclaim ahead at home and before launches (MOS §IV).
fn mos() -> Preset {
    Preset {
        name: "mos".into(),
        summary: "MOS: at home reclaim page cache then app cache to the LMK threshold; before a big launch kill cached apps at once to fit; no swap, as on its Nexus 5 (MOS §IV)".into(),
        detection: Detection::Minfree(Minfree::thesis()),
        compaction: None,
        ksm: None,
        swap: no_swap(),
        kill: lmk_kill(),
        ahead: Some(Ahead {
            home: true,
            launch: true,
            threshold_frac: 120.0 / 2048.0,
            doubling_start_pages: Some(32),
            home_kills: true,
            compress_budget_ms: None,
            launch_waits: true,
        }),
        app_groups: false,
        freeze_after_ms: None,
        trim_notices: false,
        max_cached_apps: None,
        prefetch_whole: false,
        work_nice: None,
    }
}

/// SWAM: adaptive swap, OOM cleaner, launch-cost killer (SWAM §4).
fn swam() -> Preset {
    Preset {
        name: "swam".into(),
        summary: "SWAM: zram plus storage swap files allocated on demand and removed when idle; unshared shared-object pages first; victims by the kernel's badness over relaunch cost (SWAM §4)".into(),
        detection: Detection::Psi(Lmkd {
            min_class_low_memory: Some(Class::Service),
            ..match lmkd().detection {
                Detection::Psi(l) => l,
                _ => unreachable!("lmkd is PSI"),
            }
        }),
        compaction: Some(Compaction {
            idle_min_class: None,
            pressure_min_class: Some(Class::Service),
            step_pages: 1024,
            min_step_pages: 1024,
            slight_pressure_pages_at_1gib: 0,
            shared_objects_first: true,
            min_anon_bytes: 0,
            recompact_after_ms: 10_000,
            max_apps_per_decision: 2,
            slow_returns_give_first: false,
        }),
        ksm: None,
        swap: SwapPolicy {
            zram_pct: Some(12.5),
            zram_algorithm: "lz4".into(),
            swap_files: true,
            grow_below_ratio: 0.0,
            max_files: 4,
            // On demand: the next file as soon as the last one fills (an empty file still
            // blocks the next); SWAM gives no interval.
            grow_interval_ms: 5_000,
            storage_pct: None,
            swappiness: None,
            grow_on_fill: true,
            grow_to_need: false,
            read_back_ahead: false,
            cold_to_storage_below: None,
            launch_to_storage: false,
        },
        kill: KillPolicy::plain(KillMode::OnePerTrigger, VictimOrder::OomBadnessOverRelaunch),
        ahead: None,
        app_groups: false,
        freeze_after_ms: None,
        trim_notices: false,
        max_cached_apps: None,
        prefetch_whole: false,
        work_nice: None,
    }
}

/// Android 4.4 as MOS measured it (MOS §II): the in-kernel LMK, and the activity manager
/// killing cached apps beyond a fixed count; no swap.
fn android_4_4() -> Preset {
    Preset {
        name: "android-4.4".into(),
        summary: "MOS's baseline, Android 4.4 on a Nexus 5: the activity manager kills the least recently used cached apps beyond 24, the in-kernel LMK the rest; no swap (MOS §II)".into(),
        max_cached_apps: Some(24),
        prefetch_whole: false,
        work_nice: None,
        ..lmk_classic()
    }
}

/// SWAM's baselines (§5.1): Android's lmkd and OOM killer over zram, storage swap or both.
fn swam_baseline(name: &str, zram_pct: Option<f64>, storage_pct: Option<f64>) -> Preset {
    let what = match (zram_pct, storage_pct) {
        (Some(_), None) => "ZRAM 512 MB of 4 GB",
        (None, Some(_)) => "NAND-swap 2 GB of 4 GB",
        _ => "ZRAM and NAND-swap",
    };
    Preset {
        name: name.into(),
        summary: format!("SWAM's baseline {what} (SWAM §5.1): Android's lmkd and OOM killer over that swap"),
        swap: SwapPolicy { zram_pct, zram_algorithm: "lz4".into(), storage_pct, ..no_swap() },
        ..lmkd()
    }
}

/// MeeGo's swap set-ups on the N900 (paper 002): no manager, the kernel's OOM killer.
fn meego(name: &str, zram_pct: Option<f64>, storage_pct: Option<f64>, swappiness: Option<u32>) -> Preset {
    let what = match (zram_pct, storage_pct) {
        (None, _) => "its MMC swap (75 MB of 256 MB)",
        (Some(_), None) => "ramzswap of 15 % of RAM, swappiness 60",
        _ => "ramzswap of 15 % (higher priority) and its MMC swap, swappiness 60",
    };
    Preset {
        name: name.into(),
        summary: format!("MeeGo on the N900 with {what} (paper 002); the kernel alone reclaims and kills"),
        swap: SwapPolicy { zram_pct, zram_algorithm: "lzo".into(), storage_pct, swappiness, ..no_swap() },
        ..kernel()
    }
}

/// memorch's own ladder (DESIGN.md §4).
fn memorch() -> Preset {
    Preset {
        name: "memorch".into(),
        summary: "the whole ladder: headroom for likely launches at idle, reclaim ahead of launches, the coldest pages first in proportion to the shortfall, swap files on demand, kills at the least expected cost".into(),
        detection: Detection::Bands(Bands {
            low_available_frac: 0.12,
            critical_available_frac: 0.05,
            kill_target_frac: 0.10,
            extreme_available_frac: 0.02,
            psi_some_target_pct: 1.0,
            psi_full_kill_pct: 10.0,
        }),
        compaction: Some(Compaction {
            idle_min_class: Some(Class::Cached),
            pressure_min_class: Some(Class::Service),
            step_pages: 32,
            min_step_pages: 256,
            // Off: on realapps (three runs each) no figure was worse without it (docs/results.md).
            slight_pressure_pages_at_1gib: 0,
            // Off (SWAM's OOM cleaner stays in `swam`): on realapps (three runs each) the same
            // kills, p95 and apps alive without it, less stall and fewer file refaults on each
            // seed; on swam40 fewer kills without it (docs/results.md).
            shared_objects_first: false,
            min_anon_bytes: 4 * MIB,
            recompact_after_ms: 10_000,
            max_apps_per_decision: 4,
            // On: on realapps (twelve paired runs, seeds 3-8) p50 shorter in ten, by 4 %
            // (geometric mean), p95 longer in nine, by 7 %; on swam40 (three) p50 shorter in
            // two, p95 the same (docs/results.md).
            slow_returns_give_first: true,
        }),
        // Paid for or stopped: on realapps with every app opted in, 1-4 MiB merged and ksmd
        // stopped (0.75 s of its CPU a run against 11.6 s); on thesis-ksm the same 168 MiB for
        // 70 % less of ksmd's CPU (docs/results.md).
        ksm: Some(KsmPolicy { idle_targeted: true, pages_to_scan: 1000, sleep_ms: 20, min_saving_frac: Some(0.01) }),
        swap: SwapPolicy {
            zram_pct: Some(50.0),
            zram_algorithm: "lz4".into(),
            swap_files: true,
            grow_below_ratio: 1.5,
            // Eight files' worth (as much storage swap as the domain has memory), not SWAM's
            // four: on realapps' seeds 6-8 the four were full before two launches and a
            // critical band, each of which cost a kill; with eight, none (docs/results.md).
            max_files: 8,
            // Not the 30 s of SWAM's: a file that fills in seconds while zram is full is
            // followed by the next (an empty file still waits), or the shortfall is killed.
            grow_interval_ms: 5_000,
            storage_pct: None,
            swappiness: None,
            grow_on_fill: false,
            grow_to_need: true,
            // A read-back's pages on storage asked for at once: on by measurement (realapps,
            // six paired runs over seeds 3-8: p50 shorter in five, the daemon's read-backs a
            // third of the time a page; docs/results.md).
            read_back_ahead: true,
            // A return's pages on storage asked for as it comes: off by measurement
            // (realapps, six paired runs over seeds 3-8: the returns read two to five times
            // the pages, p95 longer in five; docs/results.md).
            // An unlikely app's squeeze to a storage file of its own once zram is half full:
            // on by measurement (realapps, six paired runs over seeds 3-8: p50 shorter in
            // all six, fewer squeezes and warm returns; docs/results.md).
            cold_to_storage_below: Some(0.25),
            // Every squeeze to storage of its own while a launch is in flight: on by
            // measurement (realapps, twelve paired runs over seeds 3-14: p50 shorter in nine,
            // hot returns more in ten, p95 and the wait as before; docs/results.md).
            launch_to_storage: true,
        },
        // Killing once swap is full: off by measurement (realapps: p50 shorter in three benches,
        // longer and twice the kills in the fourth, beside the peers; docs/results.md).
        // A return judged by usage sessions: on by measurement (realapps, ten paired runs over
        // seeds 3-8: p50 shorter in nine, p95 in eight; docs/results.md).
        // The next session judged by how sessions followed each other, between sessions: off,
        // not earned: on realapps it changed no decision (its screen-offs are 5 s long, and
        // the one decision there had nothing to prepare), four runs of each over seeds 21-24
        // (docs/results.md, "The next session learned").
        kill: KillPolicy { return_by_sessions: true, ..KillPolicy::plain(KillMode::Batch, VictimOrder::LeastExpectedCost) },
        ahead: Some(Ahead {
            home: true,
            launch: true,
            threshold_frac: 120.0 / 2048.0,
            doubling_start_pages: None,
            home_kills: false,
            compress_budget_ms: Some(300),
            // Answered at once, the room made beside the launch at the apps' priority
            // (`work_nice` below): p50 and p95 shorter on realapps in two benches; at the
            // daemon's priority the launch competed with its squeezes (docs/results.md).
            launch_waits: false,
            // Off: on realapps (six runs each) no figure better beyond the spread and the
            // daemon's RSS 0.8 MiB higher, though a launch that squeezed two apps or more waited
            // 0.68× the squeezes' sum (docs/results.md).
            // Null: on realapps the room made at idle for an app not seen yet came from apps
            // the next session went back to (p50 longer at the median, in two benches on two
            // builds); taken from the unlikely apps only, there were none to take from
            // (docs/results.md).
            // Off: on realapps (six paired runs) 1-2 kills a run where the preset kills none,
            // p95 shorter in three pairs, p50 longer in all six (docs/results.md).
        }),
        app_groups: true,
        // Off: measured on realapps, freezing cached apps made returns slower (docs/results.md).
        freeze_after_ms: None,
        // Off: on the trim scenario, apps that dropped their caches when told rebuilt them on
        // every visit: more stall, no fewer kills (docs/results.md).
        trim_notices: false,
        max_cached_apps: None,
        // On: returns come in runs within a session; the app made whole after its return keeps
        // the rest of the session's returns hot (realapps p50 8.0 against 20.2 ms on seed 3,
        // 23.9 against 34.4 on seed 5, 11.8 against 10.5 on seed 4: docs/results.md).
        prefetch_whole: true,
        // The work no launcher waits for at the apps' priority, as kswapd's reclaim runs.
        work_nice: Some(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_has_a_preset() {
        for n in NAMES.iter().chain(BASELINES.iter()) {
            assert_eq!(Preset::by_name(n).unwrap().name, *n);
        }
        assert!(Preset::by_name("nope").is_none());
    }

    #[test]
    fn minfree_scales_and_picks_the_most_severe_level() {
        let m = Minfree::thesis();
        // 1 GiB: empty at 32 MiB, foreground at 8 MiB (thesis §2.6.2).
        let levels = m.scaled(1 << 30);
        assert_eq!(levels[5], (Class::Empty, 32 * MIB));
        assert_eq!(levels[0], (Class::Foreground, 8 * MIB));
        assert_eq!(m.scaled(512 << 20)[5].1, 16 * MIB);
        assert_eq!(m.min_class(1 << 30, 30 * MIB, 10 * MIB), Some((Class::Empty, 32 * MIB)));
        assert_eq!(m.min_class(1 << 30, 20 * MIB, 10 * MIB), Some((Class::Previous, 24 * MIB)));
        assert_eq!(m.min_class(1 << 30, 7 * MIB, 0), Some((Class::Foreground, 8 * MIB)));
        assert_eq!(m.min_class(1 << 30, 40 * MIB, 0), None);
        assert_eq!(m.min_class(1 << 30, 20 * MIB, 100 * MIB), None, "plenty of file cache: no kill");
    }
}
