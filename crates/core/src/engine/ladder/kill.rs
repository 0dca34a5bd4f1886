//! Step 5, kill (memorch): when compression cannot keep available memory above the critical
//! band, or everything stalls, kill enough apps at once to get back to the target, by class
//! first, then relaunch cost per MB freed. Background apps only, unless available memory is
//! extreme; the foreground only when nothing else is left. Once swap is full and cannot grow
//! (`kill.when_swap_full`), already at the low band: compression has nothing left to give,
//! and what the kernel reclaims in its place is the apps' code and the likely apps' pages.

use super::{mib, Ctx, PressureLevel, Step};
use crate::engine::preset::{Detection, KillMode};
use crate::Class;

/// Swap counts as full with less room than this share of the domain: less than a step's worth
/// for the pressure step, which then has nothing to compress into.
const SWAP_FULL_ROOM_FRAC: f64 = 0.01;

/// What a kill for a full swap frees beyond the low band, as a share of the domain: room for
/// the pressure step to compress into again. Sized to the gap alone (below the low band, as the
/// critical band's target is), it took the smallest app there was (realapps: `tasks`, `queue`,
/// 60 MiB each) and moved no figure (docs/results.md).
const SWAP_FULL_RELIEF_FRAC: f64 = 0.1;

pub fn run(ctx: &mut Ctx) {
    let Detection::Bands(b) = ctx.preset.detection.clone() else { return };
    if ctx.preset.kill.mode != KillMode::Batch {
        return;
    }
    // What compression and storage swap could still take counts: kill only when they cannot
    // keep up. A storage file added now counts unless memory is already extreme (its
    // writeback would come after the OOM killer).
    let extreme = ctx.available() < ctx.frac(b.extreme_available_frac);
    let headroom = ctx.swap_headroom(!extreme);
    let avail = ctx.available() + headroom;
    let critical = ctx.frac(b.critical_available_frac);
    let low = ctx.frac(b.low_available_frac);
    let swap_full = ctx.preset.kill.when_swap_full && ctx.swap_room() < ctx.frac(SWAP_FULL_ROOM_FRAC) && !super::adaptive_swap::can_grow(ctx);
    let mut target = ctx.frac(b.kill_target_frac).saturating_sub(avail).max(ctx.frac(0.01));
    let why = if avail < critical {
        format!("available {} (with {} zram could still take) below the critical band {}", mib(avail), mib(headroom), mib(critical))
    } else if swap_full && avail < low {
        target = low.saturating_sub(avail) + ctx.frac(SWAP_FULL_RELIEF_FRAC);
        format!("available {} below the low band {} and swap full ({} left, no file can be added)", mib(avail), mib(low), mib(ctx.swap_room()))
    } else if ctx.psi_full_avg10() > b.psi_full_kill_pct && ctx.available() < low {
        format!("PSI full {:.1} % over {:.0} % with available {} below the low band", ctx.psi_full_avg10(), b.psi_full_kill_pct, mib(ctx.available()))
    } else if ctx.pressure_event() == Some(PressureLevel::Complete) && ctx.available() < low {
        format!("complete stall with available {} below the low band", mib(ctx.available()))
    } else {
        return;
    };
    if ctx.kill_pending(1000) {
        ctx.quiet(ctx.reason(Step::Kill, format!("{why}; the last victims are still dying")));
        return;
    }
    let ladder: &[Class] = if extreme { &[Class::Service, Class::Perceptible, Class::Visible, Class::Foreground] } else { &[Class::Service] };
    for (i, &min_class) in ladder.iter().enumerate() {
        let cands = ctx.candidates(min_class);
        let total: u64 = cands.iter().map(|c| c.freeable_bytes).sum();
        let last = i + 1 == ladder.len();
        // The foreground only when nothing less important is left at all.
        if min_class == Class::Foreground && cands.iter().any(|c| c.class > Class::Foreground) {
            let spare: Vec<_> = cands.into_iter().filter(|c| c.class > Class::Foreground).collect();
            let held: u64 = spare.iter().map(|c| c.freeable_bytes).sum();
            let victims = ctx.select(&spare, target);
            let r = ctx
                .reason(Step::Kill, format!("{why}: kill the least costly apps at once, everything but the foreground that it takes"))
                .with("candidate_bytes", held as f64);
            return ctx.kill(victims, target, Class::Visible, r);
        }
        if total >= target || last {
            let victims = ctx.select(&cands, target);
            let r = ctx
                .reason(Step::Kill, format!("{why}: kill the least costly apps at once to get {} back", mib(target)))
                .with("candidate_bytes", total as f64);
            return ctx.kill(victims, target, min_class, r);
        }
    }
}
