//! What keeps a virtual device's memory behaving like a phone's, in one thread:
//!
//! - the **balloon**: zram's pool is not charged to a v1 memcg, so the device's limit follows RAM − the pool's
//!   `mem_used_total` (never below a quarter of RAM); without it the device would have RAM a phone does not have;
//! - a **background reclaimer**, as kswapd keeps a zone's watermarks (a memcg has none, so free memory would sit at
//!   zero and pressure show only once the OOM killer acts): below the low watermark it reclaims up to the high one;
//!   allocations that outrun it reclaim directly (`memory.failcnt`), as on a phone whose kswapd falls behind.
//!
//! The reclaim is the kernel's own, done by the device's kswapd (kswapd.rs): a process in the device's groups whose
//! reclaim is memory stall in the device's PSI, as kswapd's is in a phone's. Its own failed charges are counted apart,
//! so `memory.failcnt` minus them is the apps' direct reclaim. Where it cannot run (no disk file system for its sparse
//! file), the keeper reclaims by a write of a lower `memory.limit_in_bytes` (the kernel reclaims inside the write until
//! usage fits, or EBUSY), put back at once: the same reclaim, but no PSI reader sees it. Every manager's device has the
//! same keeper, peers' included.

use crate::kswapd::Kswapd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the keeper looks (kswapd wakes on the allocation that crosses the low watermark; a look every 10 ms is as
/// near as a poll gets for two small reads).
const PERIOD: Duration = Duration::from_millis(10);
/// The balloon follows zram's pool this often.
const BALLOON_EVERY: u32 = 10;

/// The device's watermarks, as free memory below its limit (the limit itself plays the zone's `min`: below it
/// allocations reclaim for themselves). Low 1 % and high 1.5 % of RAM: the lmkd preset's zone watermarks
/// (docs/presets.md), and near Android's display-sized reserve (`extra_free_kbytes`, ~24 MB on a 1080p phone of 2 GB).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Watermarks {
    pub low_bytes: u64,
    pub high_bytes: u64,
}

impl Watermarks {
    pub fn for_ram(ram_bytes: u64) -> Watermarks {
        Watermarks { low_bytes: (ram_bytes / 100) & !4095, high_bytes: (ram_bytes * 3 / 200) & !4095 }
    }

    /// The usage to reclaim down to, if free memory under `limit` is below the low mark (never with a low mark of 0: no
    /// background reclaim).
    pub fn reclaim_to(&self, limit: u64, usage: u64) -> Option<u64> {
        (limit.saturating_sub(usage) < self.low_bytes).then(|| limit.saturating_sub(self.high_bytes) & !4095)
    }
}

/// What the background reclaimer did in a run.
#[derive(Debug, Default)]
pub struct KeeperStats {
    /// Times it woke below the low watermark.
    pub wakeups: AtomicU64,
    /// Bytes by which usage fell across its reclaims.
    pub reclaimed_bytes: AtomicU64,
    /// Growth of `memory.failcnt` during its own reclaims (the device's kswapd charging past the limit): not the apps'
    /// direct reclaim.
    pub own_failcnt: AtomicU64,
    /// Its stall (µs of `some` in its own v2 group): what it added to the device's PSI.
    pub stall_us: AtomicU64,
    /// Whether it reclaimed through the device's kswapd (else by limit writes).
    pub in_psi: AtomicBool,
}

pub struct Keeper {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    pub stats: Arc<KeeperStats>,
    pub watermarks: Watermarks,
}

impl Keeper {
    /// Start keeping the v1 memory group `v1` (and v2 group `v2`, for PSI) of a device of `ram_bytes`, whose zram's
    /// `mm_stat` is `mm_stat` (none: no balloon); `background_reclaim` false: the balloon only (the refault study's
    /// "kswapd off").
    pub fn start(
        v1: &Path,
        v2: Option<&Path>,
        ram_bytes: u64,
        mm_stat: Option<PathBuf>,
        background_reclaim: bool,
    ) -> Keeper {
        let stop = Arc::new(AtomicBool::new(false));
        let stats = Arc::new(KeeperStats::default());
        let watermarks = if background_reclaim {
            Watermarks::for_ram(ram_bytes)
        } else {
            Watermarks { low_bytes: 0, high_bytes: 0 }
        };
        let (s, st, dir, v2) = (stop.clone(), stats.clone(), v1.to_path_buf(), v2.map(Path::to_path_buf));
        let thread =
            std::thread::spawn(move || keep(&dir, v2.as_deref(), ram_bytes, mm_stat.as_deref(), watermarks, &s, &st));
        Keeper { stop, thread: Some(thread), stats, watermarks }
    }
}

impl Drop for Keeper {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn read_u64(p: &Path) -> Option<u64> {
    std::fs::read_to_string(p).ok()?.trim().parse().ok()
}

fn keep(
    dir: &Path,
    v2: Option<&Path>,
    ram_bytes: u64,
    mm_stat: Option<&Path>,
    wm: Watermarks,
    stop: &AtomicBool,
    stats: &KeeperStats,
) {
    let limit_file = dir.join("memory.limit_in_bytes");
    let usage_file = dir.join("memory.usage_in_bytes");
    let failcnt_file = dir.join("memory.failcnt");
    // Started in this thread: the helper dies with it.
    let mut kswapd = (wm.high_bytes > 0).then(|| Kswapd::start(dir, v2, wm.high_bytes)).and_then(|r| {
        r.map_err(|e| eprintln!("memorch bench: the device's background reclaim will not show in its PSI: {e}")).ok()
    });
    stats.in_psi.store(kswapd.is_some(), Ordering::Relaxed);
    let mut limit = ram_bytes;
    let mut n = 0u32;
    while !stop.load(Ordering::Relaxed) {
        if let (Some(mm), 0) = (mm_stat, n % BALLOON_EVERY) {
            limit = balloon(&limit_file, mm, ram_bytes, limit);
        }
        n = n.wrapping_add(1);
        let Some(before) = read_u64(&usage_file) else {
            std::thread::sleep(PERIOD);
            continue;
        };
        if let Some(to) = wm.reclaim_to(limit, before) {
            stats.wakeups.fetch_add(1, Ordering::Relaxed);
            let files = Files { limit: &limit_file, failcnt: &failcnt_file };
            reclaim(&files, &mut kswapd, wm.high_bytes, (to, limit), stats);
            if let Some(after) = read_u64(&usage_file) {
                stats.reclaimed_bytes.fetch_add(before.saturating_sub(after), Ordering::Relaxed);
            }
        }
        std::thread::sleep(PERIOD);
    }
}

/// zram's pool taken out of the device's limit (a phone's zram is in its RAM), never below a quarter of it; the limit
/// now.
fn balloon(limit_file: &Path, mm_stat: &Path, ram_bytes: u64, limit: u64) -> u64 {
    let pool = std::fs::read_to_string(mm_stat)
        .ok()
        .and_then(|t| t.split_whitespace().nth(2).and_then(|v| v.parse::<u64>().ok()))
        .unwrap_or(0);
    let to = ram_bytes.saturating_sub(pool).max(ram_bytes / 4) & !4095;
    // Only move it by a page or more; the kernel reclaims inside the write when the limit falls below usage.
    if to.abs_diff(limit) >= 4096 && std::fs::write(limit_file, to.to_string()).is_ok() {
        to
    } else {
        limit
    }
}

/// The device's control files the keeper writes and reads.
struct Files<'a> {
    limit: &'a Path,
    failcnt: &'a Path,
}

/// Reclaim down to `to` (the limit being `limit`): by the device's kswapd, whose reclaim shows in the device's PSI, or
/// by a limit write where it failed.
fn reclaim(f: &Files, kswapd: &mut Option<Kswapd>, high_bytes: u64, (to, limit): (u64, u64), stats: &KeeperStats) {
    if let Some(k) = kswapd {
        // Charging the high mark's worth past the limit leaves usage at `to` once dropped; what cannot be reclaimed
        // (swap full, everything in use) is not, and free memory stays low, as on a phone.
        let f0 = read_u64(f.failcnt).unwrap_or(0);
        let done = k.reclaim(high_bytes);
        let f1 = read_u64(f.failcnt).unwrap_or(f0);
        stats.own_failcnt.fetch_add(f1.saturating_sub(f0), Ordering::Relaxed);
        stats.stall_us.store(k.stall_us().unwrap_or(0), Ordering::Relaxed);
        if let Err(e) = done {
            eprintln!("memorch bench: the device's kswapd: {e}; reclaiming by limit writes from now on");
            *kswapd = None;
            stats.in_psi.store(false, Ordering::Relaxed);
        }
        return;
    }
    // Reclaims until usage fits under `to`, or EBUSY when nothing more will go.
    let _ = std::fs::write(f.limit, to.to_string());
    if let Err(e) = std::fs::write(f.limit, limit.to_string()) {
        eprintln!("memorch bench: putting the device's limit back to {limit} failed: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reclaims_to_the_high_mark_only_below_the_low_one() {
        let w = Watermarks::for_ram(2 << 30);
        assert_eq!(w.low_bytes, ((2u64 << 30) / 100) & !4095);
        let limit = 2u64 << 30;
        assert_eq!(w.reclaim_to(limit, limit - w.low_bytes), None, "at the low mark: asleep");
        assert_eq!(w.reclaim_to(limit, limit - w.low_bytes + 4096), Some(limit - w.high_bytes));
        assert_eq!(w.reclaim_to(limit, limit), Some(limit - w.high_bytes), "full: reclaim");
    }
}
