//! The presets: each paper's system as the same engine with different steps switched on and
//! different parameters. Each is a TOML file in `presets/`, embedded here; `memorch presets
//! show NAME` prints it, with what each key does and where its value comes from.

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
#[serde(deny_unknown_fields)]
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
#[serde(deny_unknown_fields)]
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
#[serde(deny_unknown_fields)]
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
#[serde(deny_unknown_fields, default)]
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
#[serde(deny_unknown_fields)]
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
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
    pub launch_waits: bool,
}

/// No swap: what a file without `[swap]` gets. A key a file leaves out takes its value here:
/// the kernel's compressor, SWAM's 30 s between files, no growth for a bad ratio.
impl Default for SwapPolicy {
    fn default() -> SwapPolicy {
        SwapPolicy {
            zram_pct: None,
            zram_algorithm: "lzo-rle".into(),
            swap_files: false,
            grow_below_ratio: 0.0,
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
}

/// How long a launch counts as in flight without a report that it finished: longer than the
/// slowest first launch measured on `realapps` (2.7 s).
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

    /// A preset from its TOML text, named `name`: a key the engine does not know or a value
    /// of the wrong type is refused with its line, a value out of range with its key.
    pub fn from_toml(name: &str, text: &str) -> Result<Preset, String> {
        let mut p: Preset = toml::from_str(text).map_err(|e| e.to_string().trim_end().to_string())?;
        p.name = name.to_string();
        p.check_ranges()?;
        Ok(p)
    }

    /// Values a type allows but the engine cannot use (the type alone is checked by serde).
    pub fn check_ranges(&self) -> Result<(), String> {
        if let Some(n) = self.work_nice.filter(|n| !(-20..=19).contains(n)) {
            return Err(format!("work_nice is the nice value the daemon's background memory work runs at: give -20 to 19 (0 is the apps' own), or null for the daemon's own ({n} given)"));
        }
        Ok(())
    }

    /// Every preset: the systems, then the papers' baselines.
    pub fn all() -> Vec<Preset> {
        NAMES.iter().chain(BASELINES.iter()).map(|n| Preset::by_name(n).expect("every listed preset exists")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::model::MIB;

    #[test]
    fn every_name_has_a_preset() {
        for n in NAMES.iter().chain(BASELINES.iter()) {
            assert_eq!(Preset::by_name(n).unwrap().name, *n);
        }
        assert!(Preset::by_name("nope").is_none());
    }

    #[test]
    fn every_file_is_a_listed_preset_and_only_the_memorch_preset_has_bands() {
        assert_eq!(FILES.len(), NAMES.len() + BASELINES.len());
        for p in Preset::all() {
            assert_eq!(matches!(p.detection, Detection::Bands(_)), p.name == "memorch", "{}", p.name);
        }
    }

    #[test]
    fn a_file_with_an_unknown_key_or_a_bad_value_is_refused_with_its_line() {
        let text = Preset::file_text("memorch").unwrap();
        let typo = text.replace("max_files = 8", "max_file = 8");
        let e = Preset::from_toml("mine", &typo).unwrap_err();
        assert!(e.contains("max_file") && e.contains("line"), "{e}");
        let bad = text.replace("max_files = 8", "max_files = \"eight\"");
        let e = Preset::from_toml("mine", &bad).unwrap_err();
        assert!(e.contains("max_files") && e.contains("line"), "{e}");
        let range = text.replace("work_nice = 0", "work_nice = 40");
        assert!(Preset::from_toml("mine", &range).unwrap_err().contains("work_nice"));
        assert_eq!(Preset::from_toml("mine", text).unwrap().name, "mine");
    }

    #[test]
    fn minfree_scales_and_picks_the_most_severe_level() {
        let Detection::Minfree(m) = Preset::by_name("lmk-classic").unwrap().detection else { panic!("minfree") };
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
