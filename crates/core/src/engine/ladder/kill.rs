//! Step 5, kill (memorch): when compression cannot keep available memory above the critical band, or everything stalls,
//! kill enough apps at once to get back to the target, by class first, then the least expected cost to the user.
//! Background apps only, unless memory is extreme; the foreground only when nothing else is left.

use super::ctx::Ctx;
use crate::engine::model::{mib, PressureLevel, Step};
use crate::engine::preset::{Bands, Detection, KillMode};
use crate::Class;

pub fn run(ctx: &mut Ctx) {
    let Detection::Bands(b) = ctx.preset.detection.clone() else { return };
    if ctx.preset.kill.mode != KillMode::Batch {
        return;
    }
    // What compression and storage swap could still take counts: kill only when they cannot keep up. A storage file
    // added now counts unless memory is already extreme (its writeback would come after the OOM killer).
    let extreme = ctx.available() < ctx.frac(b.extreme_available_frac);
    let headroom = ctx.swap_headroom(!extreme);
    let avail = ctx.available() + headroom;
    let target = ctx.frac(b.kill_target_frac).saturating_sub(avail).max(ctx.frac(0.01));
    let Some(why) = why_kill(ctx, &b, avail, headroom) else { return };
    if ctx.kill_pending(1000) {
        ctx.quiet(ctx.reason(Step::Kill, format!("{why}; the last victims are still dying")));
        return;
    }
    let ladder: &[Class] = if extreme {
        &[Class::Service, Class::Perceptible, Class::Visible, Class::Foreground]
    } else {
        &[Class::Service]
    };
    for (i, &min_class) in ladder.iter().enumerate() {
        if kill_from(ctx, &why, target, min_class, i + 1 == ladder.len()) {
            return;
        }
    }
}

/// Why kill: available memory (with what swap could still take) under the critical band, or a full stall below the low
/// band; `None` otherwise.
fn why_kill(ctx: &Ctx, b: &Bands, avail: u64, headroom: u64) -> Option<String> {
    let critical = ctx.frac(b.critical_available_frac);
    let low = ctx.frac(b.low_available_frac);
    if avail < critical {
        Some(format!(
            "available {} (with {} zram could still take) below the critical band {}",
            mib(avail),
            mib(headroom),
            mib(critical)
        ))
    } else if ctx.psi_full_avg10() > b.psi_full_kill_pct && ctx.available() < low {
        Some(format!(
            "PSI full {:.1} % over {:.0} % with available {} below the low band",
            ctx.psi_full_avg10(),
            b.psi_full_kill_pct,
            mib(ctx.available())
        ))
    } else if ctx.pressure_event() == Some(PressureLevel::Complete) && ctx.available() < low {
        Some(format!("complete stall with available {} below the low band", mib(ctx.available())))
    } else {
        None
    }
}

/// Kill from the apps of at least `min_class` if they hold the target (or this is the `last` class the ladder allows);
/// the foreground only when nothing less important is left at all. Whether it killed.
fn kill_from(ctx: &mut Ctx, why: &str, target: u64, min_class: Class, last: bool) -> bool {
    let cands = ctx.candidates(min_class);
    let total: u64 = cands.iter().map(|c| c.freeable_bytes).sum();
    if min_class == Class::Foreground && cands.iter().any(|c| c.class > Class::Foreground) {
        let spare: Vec<_> = cands.into_iter().filter(|c| c.class > Class::Foreground).collect();
        let held: u64 = spare.iter().map(|c| c.freeable_bytes).sum();
        let victims = ctx.select(&spare, target);
        let text = format!("{why}: kill the least costly apps at once, everything but the foreground that it takes");
        let r = ctx.reason(Step::Kill, text).with("candidate_bytes", held as f64);
        ctx.kill(victims, target, Class::Visible, r);
        return true;
    }
    if total < target && !last {
        return false;
    }
    let victims = ctx.select(&cands, target);
    let text = format!("{why}: kill the least costly apps at once to get {} back", mib(target));
    let r = ctx.reason(Step::Kill, text).with("candidate_bytes", total as f64);
    ctx.kill(victims, target, min_class, r);
    true
}
