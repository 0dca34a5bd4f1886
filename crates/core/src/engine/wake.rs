//! When the daemon decides. It decides on every pressure trigger, request and idle change, at least every
//! `full_snapshot_ms`, and, between those, whenever a cheap look (memory and PSI, no process list) finds memory getting
//! short: the rule here. After a pressure trigger a preset that kills is polled as Android's lmkd is (`mp_event_psi`):
//! a PSI trigger fires at most once a window, so for a window after it (restarted by each trigger, each kill and each
//! direct reclaim seen) the daemon looks again every 100 ms, every 10 ms while a victim dies or swap is low, on fresh
//! memory figures and the last full look's apps.

use crate::snapshot::{MemoryState, Psi, SwapState};
use crate::Facility;

/// lmkd's `PSI_POLL_PERIOD_LONG_MS` and `PSI_POLL_PERIOD_SHORT_MS`.
pub const POLL_SLOW_MS: u64 = 100;
pub const POLL_FAST_MS: u64 = 10;
/// Swap is low below this share free (lmkd's `swap_free_low_percentage`), where a preset sets no share of its own.
pub const SWAP_LOW_PCT: f64 = 10.0;

/// Whether swap is nearly full: less than `low_pct` of it free, as lmkd's `swap_is_low` (and polling should be fast).
pub fn swap_low(swap: &SwapState, low_pct: f64) -> bool {
    swap.total_bytes > 0
        && swap.total_bytes.saturating_sub(swap.used_bytes) as f64 * 100.0 / (swap.total_bytes as f64) < low_pct
}

/// How often to poll within a window: fast while a victim dies or swap is low.
pub fn poll_interval_ms(killing: bool, swap_low: bool) -> u64 {
    if killing || swap_low {
        POLL_FAST_MS
    } else {
        POLL_SLOW_MS
    }
}

/// Available memory below this share of the domain is worth a decision now.
pub const LOW_AVAILABLE_FRAC: f64 = 0.30;
/// So is PSI some (avg10) above this many percent.
pub const PSI_SOME_PCT: f64 = 1.0;

/// Whether a look at memory and PSI alone (no swap, zram, KSM or process reads: the daemon's every tick) calls for a
/// decision before the next periodic one.
pub fn memory_short(m: &MemoryState, psi: &Facility<Psi>) -> bool {
    (m.available_bytes as f64) < m.total_bytes as f64 * LOW_AVAILABLE_FRAC
        || psi.get().is_some_and(|p| p.some.avg10 > PSI_SOME_PCT)
}
