//! Answers: every request gets one line, `ok` and either `data` or why not. The data of each request that has some is a
//! type here.

use memorch_core::engine::costs::DeviceCosts;
use memorch_core::engine::{AppStats, Reason};
use memorch_core::{Class, Facility, MemoryState, Psi};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<serde_json::Value>,
}

impl Answer {
    pub fn ok(data: Option<serde_json::Value>) -> Answer {
        Answer { ok: true, error: None, data }
    }

    /// Success with typed data.
    pub fn with<T: Serialize>(data: &T) -> Answer {
        Answer::ok(Some(serde_json::to_value(data).expect("answers serialise")))
    }

    pub fn err(e: impl Into<String>) -> Answer {
        Answer { ok: false, error: Some(e.into()), data: None }
    }

    pub fn line(&self) -> String {
        let mut s =
            serde_json::to_string(self).unwrap_or_else(|_| "{\"ok\":false,\"error\":\"unprintable answer\"}".into());
        s.push('\n');
        s
    }

    /// The data as `T`, or why not (the daemon's error, or a shape that is not `T`).
    pub fn data<T: for<'de> Deserialize<'de>>(self) -> Result<T, String> {
        if !self.ok {
            return Err(self.error.unwrap_or_else(|| "refused, no reason given".into()));
        }
        serde_json::from_value(self.data.unwrap_or(serde_json::Value::Null))
            .map_err(|e| format!("unexpected answer: {e}"))
    }
}

/// Counters the daemon keeps (`status`, and the Prometheus metrics).
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct Counters {
    pub decisions: u64,
    pub full_snapshots: u64,
    pub cheap_snapshots: u64,
    /// Light looks while polling after a pressure trigger (no process walk).
    #[serde(default)]
    pub polls: u64,
    /// Decisions on reports of what the user did (switches, home, the screen) while memory was plentiful, made on the
    /// last full look's apps (no process walk).
    #[serde(default)]
    pub reused_looks: u64,
    /// Walks of a process's page tables for its PSS (`smaps_rollup`): a full look's one costly read, made only where
    /// the cached figure is old or the process's mapped files moved.
    #[serde(default)]
    pub pss_walks: u64,
    /// PSI trigger events: the kernel's, and those raised from the daemon's own reads of the stall where the kernel's
    /// trigger did not fire (`pressure_from_reads`, counted in both).
    pub pressure_events: u64,
    #[serde(default)]
    pub pressure_from_reads: u64,
    /// Actions done (not dry-run), by kind.
    pub actions: BTreeMap<String, u64>,
    /// Kills by the victim's class.
    pub kills: BTreeMap<String, u64>,
    pub compacted_bytes: u64,
    pub reclaimed_bytes: u64,
    pub regained_bytes: u64,
    pub requests: u64,
    pub bad_requests: u64,
    /// Trim notices sent, and what the processes told fell by in the 30 s after (RSS and swap, measured, not claimed).
    #[serde(default)]
    pub trim_notices: u64,
    #[serde(default)]
    pub trim_freed_bytes: u64,
}

/// `margins`: where memorch compresses (moderate) and kills (critical), in available memory, and what would take the
/// domain clear of the moderate margin; all in KiB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MarginsInfo {
    pub critical_kib: u64,
    pub moderate_kib: u64,
    pub available_kib: u64,
    pub reclaim_target_kib: u64,
}

/// The zram the daemon set up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZramInfo {
    pub device: String,
    pub algorithm: String,
    pub disksize_bytes: u64,
}

/// `status`: what the daemon sees and has done.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Status {
    pub preset: String,
    pub domain: String,
    pub dry_run: bool,
    pub uptime_ms: u64,
    pub counters: Counters,
    pub memory: Option<MemoryState>,
    pub psi: Option<Facility<Psi>>,
    pub apps: usize,
    pub zram: Option<ZramInfo>,
    pub swap_files: Vec<String>,
    pub pending_kills: usize,
    pub cpu_seconds: f64,
    pub rss_bytes: u64,
    /// What moving a page costs on this device, as measured (a cost not measured yet is `null`: the model uses its
    /// prior).
    #[serde(default)]
    pub device_costs: DeviceCosts,
}

/// `explain`: where a process stands in the ladder, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Explanation {
    pub pid: u32,
    pub app: String,
    pub class: Class,
    pub protected: bool,
    /// Its place in the kill order (1 = first to go), if it may be killed at all.
    pub kill_rank: Option<usize>,
    pub candidates: usize,
    pub freeable_bytes: u64,
    pub relaunch_ms: f64,
    pub cost_ms_per_mb: f64,
    pub stats: Option<AppStats>,
    pub last_action: Option<Reason>,
    pub summary: String,
}

/// `launch`: whether the daemon decided at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decided {
    pub decided: bool,
}

/// `metrics`: the Prometheus text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metrics {
    pub text: String,
}
