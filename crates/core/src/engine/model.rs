//! What the engine reads (apps, events) and what it decides (actions, each with its reason).

use crate::Class;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// An app as the engine sees it: one process of the domain with its class and memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct App {
    pub pid: u32,
    /// The app's name: what learned statistics are kept under.
    pub name: String,
    pub class: Class,
    pub ppid: u32,
    pub anon_bytes: u64,
    pub file_bytes: u64,
    pub shmem_bytes: u64,
    pub swap_bytes: u64,
    pub pss_bytes: Option<u64>,
    /// Resident shared-object pages no other process maps (SWAM's OOM cleaner's prey), when known.
    pub so_unshared_bytes: Option<u64>,
    /// Started with KSM merging on (`memorch spawn --ksm`).
    pub ksm_mergeable: bool,
    /// What KSM has merged of it (`/proc/PID/ksm_merging_pages`, in bytes), read fresh where it opted in: what KSM's
    /// trial weighs (ladder/prepare_idle.rs).
    #[serde(default)]
    pub ksm_merged_bytes: Option<u64>,
    /// Frozen by memorch (`Some(true)`), freezable (`Some(false)`: in a group of its own), or not freezable (`None`).
    #[serde(default)]
    pub frozen: Option<bool>,
    pub age_ms: u64,
    /// On the protected list of the config: never acted on.
    pub protected: bool,
}

impl App {
    pub fn rss_bytes(&self) -> u64 {
        self.anon_bytes + self.file_bytes + self.shmem_bytes
    }

    /// Whether memorch may act on it at all.
    pub fn actionable(&self) -> bool {
        !self.protected && !self.class.is_protected()
    }

    /// Background in the thesis's sense: not the foreground, not visible, not perceptible.
    pub fn is_background(&self) -> bool {
        self.class >= Class::Service
    }

    pub fn is_cached(&self) -> bool {
        self.class >= Class::Cached
    }

    /// What KSM has merged of the apps that opted in, as far as the daemon read it.
    pub fn ksm_merged_total(apps: &[App]) -> u64 {
        apps.iter().filter(|a| a.ksm_mergeable).filter_map(|a| a.ksm_merged_bytes).sum()
    }

    /// An app from a process of a full snapshot.
    pub fn from_process(p: &crate::ProcessInfo) -> App {
        App {
            pid: p.pid,
            name: p.name.clone(),
            class: p.class,
            ppid: p.ppid,
            anon_bytes: p.rss_anon_bytes,
            file_bytes: p.rss_file_bytes,
            shmem_bytes: p.rss_shmem_bytes,
            swap_bytes: p.swap_bytes,
            pss_bytes: p.pss_bytes,
            so_unshared_bytes: None,
            ksm_mergeable: false,
            ksm_merged_bytes: None,
            frozen: None,
            age_ms: p.age_ms,
            protected: false,
        }
    }
}

/// How hard the kernel says memory is stalling: a PSI trigger's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PressureLevel {
    /// Some tasks stalled (PSI `some`): partial.
    Partial,
    /// All tasks stalled (PSI `full`): complete.
    Complete,
}

/// Something that happened since the last decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// A PSI trigger fired.
    Pressure {
        level: PressureLevel,
    },
    /// A launcher or session manager says an app changed class.
    AppState {
        pid: u32,
        class: Class,
    },
    /// An app is about to launch; `expected_bytes` is the caller's estimate of its peak.
    LaunchIntent {
        app: String,
        expected_bytes: Option<u64>,
    },
    /// An app finished launching.
    Launched {
        app: String,
        pid: u32,
        ms: u64,
        cold: bool,
    },
    /// A victim of a kill is gone and its memory is back (its pidfd said so).
    VictimGone {
        pid: u32,
    },
    /// The home screen (launcher) came to the front: between apps.
    Home,
    Screen {
        on: bool,
    },
    /// The periodic tick.
    Timer,
    /// A look between ticks while pressure lasts (lmkd's polling after a PSI trigger): memory and counters are fresh,
    /// the apps are those of the last full look, so only the kill steps act on it.
    Poll,
}

/// Which pages a compaction moves (as `memorch compact` takes them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactScope {
    Anon,
    File,
    SharedObjects,
    All,
}

/// A victim of a kill, with what the engine expects its death to free.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Victim {
    pub pid: u32,
    pub app: String,
    pub class: Class,
    pub freeable_bytes: u64,
}

/// What to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum ActionKind {
    /// process_madvise the app's pages; `max_pages: None` = all of them. `to_storage`: to a storage swap file made for
    /// this squeeze, above zram in priority (where the cost model finds storage cheaper for the user:
    /// `Ctx::storage_costs_less`); absent in JSON when false.
    Compact {
        pid: u32,
        app: String,
        scope: CompactScope,
        max_pages: Option<u64>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        to_storage: bool,
    },
    /// Reclaim this much from the domain (page cache first). Its JSON key is not `bytes`: an action event flattens the
    /// action beside its own `bytes` (what was done), and a line with the key twice is no event to a client (both were
    /// lost to every subscriber).
    Reclaim {
        #[serde(rename = "reclaim_bytes", alias = "bytes")]
        bytes: u64,
    },
    /// Run or stop ksmd at this pace.
    Ksm {
        run: bool,
        pages_to_scan: u64,
    },
    /// Add a storage swap file of this size (JSON `file_bytes`, as `Reclaim`'s).
    SwapGrow {
        #[serde(rename = "file_bytes", alias = "bytes")]
        bytes: u64,
    },
    /// Remove storage swap files that hold nothing.
    SwapShrink,
    /// Remove this storage file made for an unlikely app's squeeze, which holds little now (its app came back or went):
    /// above zram in priority, its free room would take any page the kernel swaps out next, ahead of zram. What it
    /// still holds is read back in.
    SwapDropCold {
        path: String,
    },
    Freeze {
        pid: u32,
    },
    Thaw {
        pid: u32,
    },
    /// Read up to `max_pages` of the app's swapped-out pages back ahead of its touching them
    /// (`process_madvise(MADV_WILLNEED)`: into the swap cache, so its touch is a minor fault).
    Prefetch {
        pid: u32,
        app: String,
        max_pages: u64,
    },
    /// Tell apps that listen to give memory back (`pid`: only that app; else all of them).
    Trim {
        level: TrimLevel,
        pid: Option<u32>,
    },
    /// Kill these apps at once; `min_class` is the most important class the step allowed.
    Kill {
        victims: Vec<Victim>,
        target_bytes: u64,
        min_class: Class,
    },
    /// Nothing to do (the reason says why not).
    Nothing,
}

impl ActionKind {
    /// Its name, as the `action` field of its JSON says it.
    pub fn name(&self) -> &'static str {
        match self {
            ActionKind::Compact { .. } => "compact",
            ActionKind::Reclaim { .. } => "reclaim",
            ActionKind::Ksm { .. } => "ksm",
            ActionKind::SwapGrow { .. } => "swap_grow",
            ActionKind::SwapShrink => "swap_shrink",
            ActionKind::SwapDropCold { .. } => "swap_drop_cold",
            ActionKind::Freeze { .. } => "freeze",
            ActionKind::Thaw { .. } => "thaw",
            ActionKind::Prefetch { .. } => "prefetch",
            ActionKind::Trim { .. } => "trim",
            ActionKind::Kill { .. } => "kill",
            ActionKind::Nothing => "nothing",
        }
    }
}

/// Which part of the ladder (or of a paper's system) decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    PrepareIdle,
    Home,
    BeforeLaunch,
    UnderPressure,
    AdaptiveSwap,
    Kill,
    Lmk,
    Lmkd,
    /// Android's activity manager keeping a fixed count of cached apps (MOS's baseline).
    Ams,
    /// Freezing cached apps, thawing them when they come back.
    Freeze,
    /// Telling apps to trim before memorch compresses or kills.
    Trim,
    /// Reading the app in front's swapped-out pages back while memory allows.
    Prefetch,
    Idle,
}

/// Why: a sentence for people and the numbers behind it for programs. Logs, `ctl explain` and the bench report all
/// print the same reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reason {
    pub step: Step,
    pub text: String,
    pub fields: BTreeMap<String, f64>,
}

impl Eq for Reason {}

impl Reason {
    pub fn new(step: Step, text: impl Into<String>) -> Reason {
        Reason { step, text: text.into(), fields: BTreeMap::new() }
    }

    pub fn with(mut self, key: &str, value: impl Into<f64>) -> Reason {
        self.fields.insert(key.to_string(), value.into());
        self
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Action {
    #[serde(flatten)]
    pub kind: ActionKind,
    pub reason: Reason,
}

impl Action {
    /// Every pid this action touches.
    pub fn pids(&self) -> Vec<u32> {
        match &self.kind {
            ActionKind::Compact { pid, .. }
            | ActionKind::Freeze { pid }
            | ActionKind::Thaw { pid }
            | ActionKind::Prefetch { pid, .. } => vec![*pid],
            ActionKind::Kill { victims, .. } => victims.iter().map(|v| v.pid).collect(),
            _ => Vec::new(),
        }
    }
}

pub const MIB: u64 = 1 << 20;
pub const PAGE: u64 = 4096;

/// `bytes` as MiB with one decimal, for reason texts.
pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / MIB as f64)
}

/// How urgently apps are asked to give memory back (Android's `onTrimMemory` levels; the freedesktop `LowMemoryWarning`
/// byte in [`TrimLevel::dbus_level`]). `Hidden` goes to one app only: it left the screen, so what only its UI needs can
/// go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrimLevel {
    Hidden,
    Moderate,
    Low,
    Critical,
}

impl TrimLevel {
    pub fn name(self) -> &'static str {
        match self {
            TrimLevel::Hidden => "hidden",
            TrimLevel::Moderate => "moderate",
            TrimLevel::Low => "low",
            TrimLevel::Critical => "critical",
        }
    }

    /// The freedesktop low-memory-monitor level: 50 low, 100 medium, 255 critical.
    pub fn dbus_level(self) -> Option<u8> {
        match self {
            TrimLevel::Hidden => None,
            TrimLevel::Moderate => Some(50),
            TrimLevel::Low => Some(100),
            TrimLevel::Critical => Some(255),
        }
    }
}
