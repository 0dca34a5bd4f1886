//! Android lmkd's PSI strategy, in the order of AOSP lmkd's `mp_event_psi`: it runs on a PSI
//! trigger and on each poll after one (the daemon polls every 100 ms, 10 ms while a victim
//! dies or swap is low: `wake::poll_interval_ms`), and on a victim's death. While a victim is
//! still dying it waits; with no reclaim and no new refaults it stops there; else it weighs,
//! first to last: pressure right after a kill (free below the low watermark), a complete
//! stall, low swap with thrashing, low swap with free below the high watermark, thrashing with
//! free below the high watermark, thrashing in direct reclaim. Thrashing is file refaults since
//! the window began as a share of the file LRU at its start, a window a second, the share of
//! an over-limit window carried into the next, halved a window; the limit is cut after each
//! thrashing kill and restored when a window ends. One victim (the least recently used of the
//! least important class; from perceptible up the heaviest), then wait for it to die.
//! SWAM's EOOM killer runs on the same triggers with its own victim order, and kills also on a
//! low watermark alone.

use super::ctx::Ctx;
use crate::engine::model::Event;
use crate::engine::model::{mib, PressureLevel, Step, PAGE};
use crate::engine::preset::{Detection, KillMode, Lmkd};

/// The reason field that marks a kill for thrashing (its limit decays once it is done).
pub const THRASH_KILL: &str = "thrash_kill";

impl Lmkd {
    /// `ro.config.low_ram`: a domain of at most `low_ram_bytes`.
    pub fn low_ram(&self, total_bytes: u64) -> bool {
        total_bytes <= self.low_ram_bytes
    }

    /// The partial-stall trigger for a domain of this size.
    pub fn partial_stall_us(&self, total_bytes: u64) -> u64 {
        self.psi_partial_stall_low_ram_us.filter(|_| self.low_ram(total_bytes)).unwrap_or(self.psi_partial_stall_us)
    }

    pub fn thrashing_base_pct(&self, total_bytes: u64) -> f64 {
        if self.low_ram(total_bytes) {
            self.thrashing_limit_low_ram_pct
        } else {
            self.thrashing_limit_pct
        }
    }

    pub fn thrashing_decay(&self, total_bytes: u64) -> f64 {
        self.thrashing_decay_low_ram_pct.filter(|_| self.low_ram(total_bytes)).unwrap_or(self.thrashing_decay_pct)
    }
}

/// The watermark free memory is below, as lmkd's `get_lowest_watermark` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Wmark {
    Min,
    Low,
    High,
    None,
}

pub fn run(ctx: &mut Ctx) {
    let Detection::Psi(l) = ctx.preset.detection.clone() else { return };
    if ctx.preset.kill.mode == KillMode::Never {
        return;
    }
    // lmkd runs on its triggers, its polls after one, and a victim's death; not on every look.
    let event = ctx.pressure_event();
    if event.is_none() && !ctx.has_event(|e| matches!(e, Event::Poll | Event::VictimGone { .. })) {
        return;
    }
    if ctx.kill_pending(l.kill_timeout_ms) {
        ctx.quiet(ctx.reason(Step::Lmkd, "a victim is still dying: one kill, then wait"));
        return;
    }
    let now = ctx.input.now_ms;
    let counters = &ctx.input.snapshot.counters;
    let refaults = counters.refault_file_pages.unwrap_or(0);
    let file_lru = ctx.file_bytes() / PAGE;
    let direct = counters.direct_reclaims;
    // Reclaim work other than direct: scans where the domain counts them (the machine's
    // kswapd); a v1 memcg counts none, so pages going to swap stand for it.
    let background = counters.scan_pages.or(Some(ctx.input.snapshot.memory.swap_used_bytes / PAGE));
    let total = ctx.total();
    let s = &mut ctx.state.lmkd;
    // Reset after a kill: the file LRU and refaults are measured afresh.
    let cycle_after_kill = std::mem::take(&mut s.killing);
    if cycle_after_kill {
        s.base_file_lru = file_lru;
        s.window_start_refaults = refaults;
        s.window_start_ms = now;
        s.prev_thrash_growth = 0.0;
    }
    // Which reclaim is under way; with none and no new refaults, nothing to weigh.
    let grew = |now: Option<u64>, before: Option<u64>| now.zip(before).is_some_and(|(n, b)| n > b);
    let direct_reclaim = grew(direct, s.direct_reclaims);
    let background_reclaim = grew(background, s.background_reclaim);
    s.direct_reclaims = direct.or(s.direct_reclaims);
    s.background_reclaim = background.or(s.background_reclaim);
    let new_refaults = s.prev_refaults != Some(refaults);
    s.prev_refaults = Some(refaults);
    if !direct_reclaim && !background_reclaim && !new_refaults && !cycle_after_kill && event.is_none() {
        ctx.quiet(ctx.reason(Step::Lmkd, "no reclaim and no new refaults since the last look"));
        return;
    }
    // Thrashing over the current window, with what an earlier over-limit window carried.
    let base = l.thrashing_base_pct(total);
    let limit = s.limit_pct.unwrap_or(base);
    let since = now.saturating_sub(s.window_start_ms);
    let mut thrashing = 0.0;
    if !s.started {
        s.started = true;
        s.base_file_lru = file_lru;
        s.window_start_refaults = refaults;
        s.window_start_ms = now;
    } else if since > l.thrashing_window_ms {
        let growth = refaults.saturating_sub(s.window_start_refaults) as f64 * 100.0 / (s.base_file_lru + 1) as f64;
        let windows = (since / l.thrashing_window_ms.max(1)).max(1);
        s.prev_thrash_growth =
            if windows > 1 || growth < limit { growth / f64::powi(2.0, windows.min(60) as i32) } else { growth };
        s.base_file_lru = file_lru;
        s.window_start_refaults = refaults;
        s.window_start_ms = now;
        s.limit_pct = None;
    } else {
        thrashing = refaults.saturating_sub(s.window_start_refaults) as f64 * 100.0 / (s.base_file_lru + 1) as f64;
    }
    thrashing += s.prev_thrash_growth;
    let limit = s.limit_pct.unwrap_or(base);
    let critical_thrashing = 2.0 * base;
    let swap_low = crate::engine::wake::swap_low(&ctx.input.snapshot.swap, l.swap_free_low_pct);
    let free = ctx.free();
    let wmark = if free < ctx.frac(l.wmark_min_frac) {
        Wmark::Min
    } else if free < ctx.frac(l.wmark_low_frac) {
        Wmark::Low
    } else if free < ctx.frac(l.wmark_high_frac) {
        Wmark::High
    } else {
        Wmark::None
    };
    let above_perceptible = |heavy: bool| if heavy { l.min_class_critical } else { l.min_class_thrashing };
    let (min_class, why, thrash_kill) = if cycle_after_kill && wmark < Wmark::Low {
        (l.min_class_critical, format!("free {} below the low watermark even after a kill", mib(free)), false)
    } else if event == Some(PressureLevel::Complete) {
        (l.min_class_critical, "the device is not responding: complete stall".to_string(), false)
    } else if swap_low && thrashing > base {
        let c = above_perceptible(wmark == Wmark::Min || thrashing >= critical_thrashing);
        (c, format!("low on swap and thrashing {thrashing:.0} % > {base:.0} %"), false)
    } else if swap_low && wmark < Wmark::High {
        let c = above_perceptible(wmark == Wmark::Min || thrashing >= critical_thrashing);
        (c, format!("free {} below the high watermark and swap low", mib(free)), false)
    } else if wmark < Wmark::High && thrashing > limit {
        (
            above_perceptible(thrashing >= critical_thrashing),
            format!("free {} below the high watermark and thrashing {thrashing:.0} % > {limit:.0} %", mib(free)),
            true,
        )
    } else if direct_reclaim && thrashing > limit {
        (
            above_perceptible(thrashing >= critical_thrashing),
            format!("in direct reclaim and thrashing {thrashing:.0} % > {limit:.0} %"),
            true,
        )
    } else if let Some(c) = l.min_class_low_memory.filter(|_| wmark < Wmark::Low) {
        (c, format!("free {} below the low watermark", mib(free)), false)
    } else {
        ctx.quiet(ctx.reason(
            Step::Lmkd,
            format!(
                "free {} is above the watermarks or nothing thrashes ({thrashing:.0} % of {limit:.0} %)",
                mib(free)
            ),
        ));
        return;
    };
    let Some(victim) = ctx.candidates(min_class).into_iter().next() else {
        ctx.quiet(ctx.reason(Step::Lmkd, format!("{why}, but no app of class {min_class} or less important to kill")));
        return;
    };
    // The limit is cut once the kill is done (Engine::learn), for a thrashing kill only.
    let r = ctx
        .reason(Step::Lmkd, format!("{why}: kill one app of class {min_class} or less important"))
        .with("thrashing_pct", thrashing)
        .with("thrashing_limit_pct", limit)
        .with(THRASH_KILL, if thrash_kill { 1.0 } else { 0.0 });
    let target = ctx.frac(l.wmark_high_frac).saturating_sub(free);
    ctx.kill(vec![victim], target, min_class, r);
}
