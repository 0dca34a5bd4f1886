//! Step 5, kill (memorch): when compression cannot keep available memory above the critical
//! band, or everything stalls, kill enough apps at once to get back to the target, by class
//! first, then relaunch cost per MB freed. Background apps only, unless available memory is
//! extreme; the foreground only when nothing else is left.

use super::ctx::Ctx;
use crate::engine::model::{mib, PressureLevel, Step};
use crate::engine::preset::{Detection, KillMode};
use crate::Class;

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
    let target = ctx.frac(b.kill_target_frac).saturating_sub(avail).max(ctx.frac(0.01));
    let why = if avail < critical {
        format!(
            "available {} (with {} zram could still take) below the critical band {}",
            mib(avail),
            mib(headroom),
            mib(critical)
        )
    } else if ctx.psi_full_avg10() > b.psi_full_kill_pct && ctx.available() < low {
        format!(
            "PSI full {:.1} % over {:.0} % with available {} below the low band",
            ctx.psi_full_avg10(),
            b.psi_full_kill_pct,
            mib(ctx.available())
        )
    } else if ctx.pressure_event() == Some(PressureLevel::Complete) && ctx.available() < low {
        format!("complete stall with available {} below the low band", mib(ctx.available()))
    } else {
        return;
    };
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
        let cands = ctx.candidates(min_class);
        let total: u64 = cands.iter().map(|c| c.freeable_bytes).sum();
        let last = i + 1 == ladder.len();
        // The foreground only when nothing less important is left at all.
        if min_class == Class::Foreground && cands.iter().any(|c| c.class > Class::Foreground) {
            let spare: Vec<_> = cands.into_iter().filter(|c| c.class > Class::Foreground).collect();
            let held: u64 = spare.iter().map(|c| c.freeable_bytes).sum();
            let victims = ctx.select(&spare, target);
            let r = ctx
                .reason(
                    Step::Kill,
                    format!("{why}: kill the least costly apps at once, everything but the foreground that it takes"),
                )
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
