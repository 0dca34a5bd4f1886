//! Android lmkd's PSI strategy (AOSP lmkd `mp_event_psi`, as anchors.md records it): a
//! partial or complete stall wakes it; watermarks, low swap and thrashing (file refaults as a
//! share of the file LRU, with a limit that decays after each kill) decide whether to kill and
//! the least important class it may; one victim, then wait for it to die. SWAM's EOOM killer
//! runs on the same triggers with its own victim order.

use super::{mib, Ctx, PressureLevel, Step, PAGE};
use crate::engine::preset::{Detection, KillMode};

/// The reason field that marks a kill for thrashing (its limit decays once it is done).
pub const THRASH_KILL: &str = "thrash_kill";

pub fn run(ctx: &mut Ctx) {
    let Detection::Psi(l) = ctx.preset.detection.clone() else { return };
    if ctx.preset.kill.mode == KillMode::Never {
        return;
    }
    let now = ctx.input.now_ms;
    // Thrashing over the current window.
    let refaults = ctx.input.snapshot.counters.refault_file_pages.unwrap_or(0);
    if ctx.state.lmkd.window_start_ms == 0 && ctx.state.lmkd.window_start_refaults == 0 {
        ctx.state.lmkd.window_start_ms = now;
        ctx.state.lmkd.window_start_refaults = refaults;
    }
    let file_lru = ctx.file_bytes().max(PAGE);
    let thrashing = refaults.saturating_sub(ctx.state.lmkd.window_start_refaults) as f64 * PAGE as f64 * 100.0 / file_lru as f64;
    if now.saturating_sub(ctx.state.lmkd.window_start_ms) >= l.thrashing_window_ms {
        ctx.state.lmkd.window_start_ms = now;
        ctx.state.lmkd.window_start_refaults = refaults;
        if thrashing < l.thrashing_limit_pct {
            ctx.state.lmkd.limit_pct = None;
        }
    }
    let partial_pct = l.psi_partial_stall_us as f64 * 100.0 / l.psi_window_us as f64;
    let level = ctx.pressure_event().or((ctx.psi_some_avg10() > partial_pct).then_some(PressureLevel::Partial));
    let Some(level) = level else { return };
    let base = if ctx.total() <= l.low_ram_bytes { l.thrashing_limit_low_ram_pct } else { l.thrashing_limit_pct };
    let limit = ctx.state.lmkd.limit_pct.unwrap_or(base);
    let swap = &ctx.input.snapshot.swap;
    let swap_low = swap.total_bytes > 0 && (swap.total_bytes - swap.used_bytes.min(swap.total_bytes)) as f64 * 100.0 / (swap.total_bytes as f64) < l.swap_free_low_pct;
    let free = ctx.free();
    let (wmin, wlow, whigh) = (ctx.frac(l.wmark_min_frac), ctx.frac(l.wmark_low_frac), ctx.frac(l.wmark_high_frac));
    let (min_class, why, thrash_kill) = if level == PressureLevel::Complete {
        (l.min_class_critical, "critical: complete stall".to_string(), false)
    } else if swap_low && thrashing > limit {
        (l.min_class_thrashing, format!("low swap and thrashing {thrashing:.0} % > {limit:.0} %"), true)
    } else if swap_low && free < whigh {
        (l.min_class_thrashing, format!("low swap and free {} below the high watermark", mib(free)), false)
    } else if free < whigh && thrashing > limit {
        let heavy = free < wmin || thrashing > 2.0 * limit;
        let c = if heavy { l.min_class_critical } else { l.min_class_thrashing };
        (c, format!("free {} below the high watermark and thrashing {thrashing:.0} % > {limit:.0} %", mib(free)), true)
    } else if free < wlow {
        (l.min_class_low_memory, format!("free {} below the low watermark", mib(free)), false)
    } else {
        ctx.quiet(ctx.reason(Step::Lmkd, format!("{level:?} stall, but free {} is above the watermarks and thrashing {thrashing:.0} % under {limit:.0} %", mib(free))));
        return;
    };
    if ctx.kill_pending(l.kill_timeout_ms) {
        ctx.quiet(ctx.reason(Step::Lmkd, "a victim is still dying: one kill, then wait"));
        return;
    }
    let Some(victim) = ctx.candidates(min_class).into_iter().next() else {
        ctx.quiet(ctx.reason(Step::Lmkd, format!("{why}, but no app of class {min_class} or less important to kill")));
        return;
    };
    // The limit decays once the kill is done (Engine::learn), for a thrashing kill only.
    let r = ctx
        .reason(Step::Lmkd, format!("{why}: kill one app of class {min_class} or less important"))
        .with("thrashing_pct", thrashing)
        .with("thrashing_limit_pct", limit)
        .with(THRASH_KILL, if thrash_kill { 1.0 } else { 0.0 });
    let target = whigh.saturating_sub(free);
    ctx.kill(vec![victim], target, min_class, r);
}
