//! When the daemon decides. It decides on every pressure trigger, request and idle change,
//! at least every `full_snapshot_ms`, and, between those, whenever a cheap look (memory and
//! PSI, no process list) finds memory getting short: the rule here.

use crate::snapshot::{MemoryState, Psi};
use crate::Facility;

/// Available memory below this share of the domain is worth a decision now.
pub const LOW_AVAILABLE_FRAC: f64 = 0.30;
/// So is PSI some (avg10) above this many percent.
pub const PSI_SOME_PCT: f64 = 1.0;

/// Whether a look at memory and PSI alone (no swap, zram, KSM or process reads: the daemon's
/// every tick) calls for a decision before the next periodic one.
pub fn memory_short(m: &MemoryState, psi: &Facility<Psi>) -> bool {
    (m.available_bytes as f64) < m.total_bytes as f64 * LOW_AVAILABLE_FRAC || psi.get().is_some_and(|p| p.some.avg10 > PSI_SOME_PCT)
}
