//! What the engine remembers between decisions: learned statistics, what it did and what it saw last, the marks its
//! steps keep (compactions watched, kills pending, KSM's trial).

use super::infer;
use super::margins;
use super::stall_trigger;
use super::stats::Stats;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// A compaction memorch did, watched for pages that come back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compacted {
    pub app: String,
    pub at_ms: u64,
    pub swap_before: u64,
    /// Highest swap seen since: what went out.
    pub swap_peak: u64,
    /// Largest fall from the peak since: what came back.
    pub came_back: u64,
}

/// lmkd's bookkeeping (`mp_event_psi`'s statics).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LmkdState {
    #[serde(default)]
    pub started: bool,
    /// The thrashing window: when it began, the file refaults and file LRU (pages) then.
    pub window_start_ms: u64,
    pub window_start_refaults: u64,
    #[serde(default)]
    pub base_file_lru: u64,
    /// An over-limit window's thrashing carried into the next, halved a window.
    #[serde(default)]
    pub prev_thrash_growth: f64,
    /// The current limit, decayed after each thrashing kill; `None` = the base limit.
    pub limit_pct: Option<f64>,
    /// File refaults, direct reclaims and other reclaim work at the last look: with none grown, lmkd stops early.
    #[serde(default)]
    pub prev_refaults: Option<u64>,
    #[serde(default)]
    pub direct_reclaims: Option<u64>,
    #[serde(default)]
    pub background_reclaim: Option<u64>,
    /// A kill was done since the last look (the next one is a cycle after a kill).
    #[serde(default)]
    pub killing: bool,
    /// What this input's look found (ladder/lmkd.rs `observe`), for the decision to weigh.
    #[serde(skip)]
    pub look: Option<LmkdLook>,
}

/// What lmkd's look at an input found since its last: reclaim under way, new refaults, a kill done, and the window's
/// thrashing (% of the file LRU).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LmkdLook {
    pub direct: bool,
    pub background: bool,
    pub new_refaults: bool,
    pub after_kill: bool,
    pub refaults: u64,
    pub file_lru: u64,
    pub thrashing: f64,
}

/// What the engine remembers between decisions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    pub stats: Stats,
    pub screen_on: bool,
    /// Compactions under watch, by pid.
    pub compacted: BTreeMap<u32, Compacted>,
    /// Pids compacted whole (idle, home, launch) and when.
    pub whole: BTreeMap<u32, u64>,
    /// Pids whose last compaction gave much less than asked (nothing cold left to take), and when: passed over until
    /// they have been in front again or [`DRY_MS`] has gone.
    #[serde(default)]
    pub dry: BTreeMap<u32, u64>,
    /// Multiplier of every step, from PSI (Senpai-like).
    pub aggression: f64,
    /// Victims sent a kill and not yet gone, and when.
    pub pending_kill: Option<(Vec<u32>, u64)>,
    pub lmkd: LmkdState,
    /// MOS phase-1 reclaim size (doubles while the need remains).
    pub mos_reclaim_pages: Option<u64>,
    pub ksm_running: bool,
    /// KSM's trial at idle (`KsmPolicy::min_saving_frac`), from memorch's first run of it.
    #[serde(default)]
    pub ksm_trial: Option<KsmTrial>,
    /// Background apps ksmd has gone over (`KsmPolicy::once`), by pid: not scanned again.
    #[serde(default)]
    pub ksm_went_over: BTreeSet<u32>,
    pub last_swap_grow_ms: Option<u64>,
    /// Apps whose unshared shared objects were already compacted.
    pub so_done: BTreeSet<u32>,
    /// When each app was last in front (from app-state and launch events), by pid: the least recently used go first.
    pub last_front_ms: BTreeMap<u32, u64>,
    /// How many times any app came to the front, and that count when each app last did, by pid: how many apps the user
    /// has opened since (a clock in the user's own rhythm, the same on a bench that packs an hour into minutes as on a
    /// phone).
    #[serde(default)]
    pub switches: u64,
    #[serde(default)]
    pub last_front_switch: BTreeMap<u32, u64>,
    /// Apps the events last said are in front or visible, by pid: an app-state event that brings one of the others
    /// there is a return (it counts toward the app's popularity).
    #[serde(default)]
    pub in_front: BTreeSet<u32>,
    /// What the user does, inferred where no launcher says it.
    #[serde(default)]
    pub observed: infer::Observed,
    /// Since when each app has been cached, by pid (the freezer waits this long).
    #[serde(default)]
    pub cached_since: BTreeMap<u32, u64>,
    /// The last trim level told to apps, and when.
    #[serde(default)]
    pub trim_sent: Option<(margins::TrimLevel, u64)>,
    /// Apps on screen (above previous) at the last decision: told `hidden` when they leave.
    #[serde(default)]
    pub on_screen: BTreeSet<u32>,
    /// The apps that left the screen since the last decision (trim.rs `observe`).
    #[serde(default)]
    pub hidden: Vec<u32>,
    /// KSM's trial as this input judged it (prepare_idle.rs `observe_ksm`), for the decision to act on and say.
    #[serde(default)]
    pub ksm_verdict: Option<KsmVerdict>,
    /// Apps read back whole in front (`prefetch_whole`), by pid: the app's `last_front_switch` then, and the bytes read
    /// back in that stint.
    #[serde(default)]
    pub read_back_whole: BTreeMap<u32, (u64, u64)>,
    /// Apps whose last read-back found little of what was asked in swap, by pid, with the app's `last_front_switch`
    /// then: what is left of their swap is where reading their memory does not reach (shared memory), so they are not
    /// read back again until they come back to the front (ladder/prefetch.rs).
    #[serde(default)]
    pub read_back_dry: BTreeMap<u32, u64>,
    /// The launch in flight, if any: the app and when its intent came .
    #[serde(default)]
    pub launch_in_flight: Option<(String, u64)>,
    /// Who each pid was at the last look: a pid the kernel has given to another process since starts with nothing of
    /// the old one's (feedback.rs, `forget_reborn`).
    #[serde(default)]
    pub seen: BTreeMap<u32, Seen>,
    /// The domain's PSI `some` stall total at each look within the last [`RECENT_STALL_WINDOW_MS`]: the stall going on
    /// now, which `avg10` (a ten-second average) still shows seconds after it ended.
    #[serde(default)]
    pub psi_some_reads: stall_trigger::StallWindow,
    /// Each returning app's swap when its return began, by pid: what the return read back, which its reported time
    /// prices (costs.rs).
    #[serde(default)]
    pub returning: BTreeMap<u32, u64>,
    /// Apps with pages squeezed to storage since they were last in front, by pid.
    #[serde(default)]
    pub on_storage: BTreeSet<u32>,
}

/// Whether KSM pays for its CPU (`KsmPolicy::min_saving_frac`, ladder/prepare_idle.rs): where KSM stood when its trial
/// began (memorch's first run of ksmd, then each verdict that it paid), and since when it is off for not paying.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KsmTrial {
    /// The machine's `full_scans` then: ksmd's passes over the apps are counted from here.
    pub scans_from: u64,
    /// What KSM had merged of the domain's opted-in apps then (`App::ksm_merged_total`). Not the machine's
    /// `pages_sharing`, which counts pages of apps gone until ksmd runs again (a bench run after thesis-ksm started 116
    /// MiB up, and its trial saw nothing merged).
    pub saved_from: u64,
    /// Judged not to pay at this time: off until `KSM_RETRY_MS` after it.
    pub off_since_ms: Option<u64>,
}

/// What KSM's trial found at a look: it merged `merged_bytes` in `scans` passes of ksmd, which pays (`pays`) or does
/// not; or it is off for not paying.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum KsmVerdict {
    Pays {
        merged_bytes: u64,
        scans: u64,
    },
    DoesNotPay {
        merged_bytes: u64,
        scans: u64,
    },
    Off,
    /// ksmd went over the background apps it was run for (`KsmPolicy::once`): stop it.
    WentOver {
        scans: u64,
    },
}

/// How far back [`State::psi_some_reads`] looks: the kernel's shortest trigger window here.
pub const RECENT_STALL_WINDOW_MS: u64 = 2_000;

/// A process as the last look saw it: enough to tell it from another given its pid later.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seen {
    pub name: String,
    pub age_ms: u64,
}

impl Default for State {
    fn default() -> Self {
        State {
            stats: Stats::default(),
            screen_on: true,
            compacted: BTreeMap::new(),
            whole: BTreeMap::new(),
            dry: BTreeMap::new(),
            aggression: 1.0,
            pending_kill: None,
            lmkd: LmkdState::default(),
            mos_reclaim_pages: None,
            ksm_running: false,
            ksm_trial: None,
            last_swap_grow_ms: None,
            so_done: BTreeSet::new(),
            ksm_went_over: BTreeSet::new(),
            last_front_ms: BTreeMap::new(),
            switches: 0,
            last_front_switch: BTreeMap::new(),
            in_front: BTreeSet::new(),
            observed: infer::Observed::default(),
            cached_since: BTreeMap::new(),
            trim_sent: None,
            on_screen: BTreeSet::new(),
            hidden: Vec::new(),
            ksm_verdict: None,
            read_back_whole: BTreeMap::new(),
            read_back_dry: BTreeMap::new(),
            launch_in_flight: None,
            seen: BTreeMap::new(),
            psi_some_reads: stall_trigger::StallWindow::default(),
            returning: BTreeMap::new(),
            on_storage: BTreeSet::new(),
        }
    }
}

impl State {
    /// Keep the look at `now_ms` with the domain's stall total `total_us`.
    pub fn note_stall(&mut self, now_ms: u64, total_us: u64) {
        self.psi_some_reads.push(now_ms * 1000, total_us, RECENT_STALL_WINDOW_MS * 1000);
    }

    /// The share of time (%) the domain stalled (`some`) over the looks of the last window, if they span at least half
    /// of it: the stall going on now.
    pub fn recent_stall_pct(&self) -> Option<f64> {
        let (span_us, grown_us) = self.psi_some_reads.growth();
        (span_us >= RECENT_STALL_WINDOW_MS * 1000 / 2).then(|| grown_us as f64 / span_us as f64 * 100.0)
    }

    /// The app's stint in front: its `last_front_switch` (0 before it was ever in front).
    pub fn stint(&self, pid: u32) -> u64 {
        self.last_front_switch.get(&pid).copied().unwrap_or(0)
    }
}

/// How long an app whose compaction gave little is passed over (unless it comes to the front, and its pages with it).
pub const DRY_MS: u64 = 60_000;
