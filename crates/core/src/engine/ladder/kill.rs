//! Step 5, kill (memorch): when compression cannot keep available memory above the critical
//! band, or everything stalls, kill enough apps at once to get back to the target, by class
//! first, then relaunch cost per MB freed. Background apps only, unless available memory is
//! extreme; the foreground only when nothing else is left. Once swap is full and cannot grow
//! (`kill.when_swap_full`), already at the low band: compression has nothing left to give,
//! and what the kernel reclaims in its place is the apps' code and the likely apps' pages.
//! Once the apps in use go round through swap (`kill.when_read_back_churns`), below the low
//! band: the cached apps least costly to lose die, so that those the user switches between
//! fit together.

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

/// How long what was read back of the apps in front is summed over
/// (`kill.when_read_back_churns`): a few usage sessions' switches (realapps: 18 visits in the
/// last 54 s of seed 4).
pub const CHURN_WINDOW_MS: u64 = 60_000;

/// What must have been read back of the apps in front over [`CHURN_WINDOW_MS`], as a share
/// of the domain, for the apps in use to count as going round through swap: as much as one
/// app's whole read-back may take in a stint (ladder/prefetch.rs). On realapps' seeds 6-8
/// (debug logs of the preset as shipped, 2026-12-03) the most read back in a minute was 860,
/// 393 and 649 MiB, the domain 755-890 MiB (the device's RAM less the platform); on seed 6
/// nearly every return from 84 s to 185 s was warm. Off by measurement (docs/results.md).
const CHURN_READ_BACK_FRAC: f64 = 0.5;

/// What a kill that ends such a round frees, as a share of the domain.
const CHURN_RELIEF_FRAC: f64 = 0.15;

/// What was read back of the apps in front over the last [`CHURN_WINDOW_MS`], where it
/// passes [`CHURN_READ_BACK_FRAC`] of the domain: the apps in use go round through swap (also
/// what `detection.whole_stops_when_churning` weighs, ladder/prefetch.rs).
pub fn read_back_churns(ctx: &Ctx) -> Option<u64> {
    let now = ctx.input.now_ms;
    let read: u64 = ctx
        .state
        .read_back_front
        .iter()
        .filter(|(at, _)| now.saturating_sub(*at) < CHURN_WINDOW_MS)
        .map(|(_, b)| b)
        .sum();
    (read > ctx.frac(CHURN_READ_BACK_FRAC)).then_some(read)
}

/// [`read_back_churns`], where the preset kills for it and no kill for it was decided within
/// the window.
fn churning(ctx: &Ctx) -> Option<u64> {
    if !ctx.preset.kill.when_read_back_churns {
        return None;
    }
    if ctx.state.churn_kill_ms.is_some_and(|at| ctx.input.now_ms.saturating_sub(at) < CHURN_WINDOW_MS) {
        return None;
    }
    read_back_churns(ctx)
}

/// The round through swap ended (`kill.when_read_back_churns`): below the low band, once the
/// apps in front read back more than [`CHURN_READ_BACK_FRAC`] of the domain over the last
/// minute, the cached apps that cost the least to lose die, enough to free
/// [`CHURN_RELIEF_FRAC`] of it (with `kill.churn_kills_largest`, the one cached app with the
/// most to free, as the peers' kills that end such rounds choose). It runs before the
/// pressure step, which then squeezes only what is still short: squeezed first, the apps in
/// use would pay for the round once more (the gap would be met, and no kill needed). Not the
/// app just left (`previous`): it is likely the next return. Once a window at most.
pub fn churn(ctx: &mut Ctx) {
    let Detection::Bands(b) = &ctx.preset.detection else { return };
    if ctx.preset.kill.mode != KillMode::Batch {
        return;
    }
    let low = ctx.frac(b.low_available_frac);
    let Some(read) = churning(ctx).filter(|_| ctx.available() < low) else { return };
    if ctx.kill_pending(1000) {
        return;
    }
    let cands: Vec<_> = ctx.candidates(Class::Cached).into_iter().filter(|c| !ctx.is_touched(c.pid)).collect();
    let largest = ctx.preset.kill.churn_kills_largest;
    let (victims, target) = if largest {
        let victim = cands.iter().max_by_key(|c| c.freeable_bytes).cloned();
        let frees = victim.as_ref().map_or(0, |c| c.freeable_bytes);
        (victim.into_iter().collect(), frees)
    } else {
        let target = ctx.frac(CHURN_RELIEF_FRAC);
        (ctx.select(&cands, target), target)
    };
    if victims.is_empty() {
        return;
    }
    ctx.state.churn_kill_ms = Some(ctx.input.now_ms);
    let which = if largest { "the cached app with the most to free" } else { "the cached apps least costly to lose" };
    let text = format!(
        "the apps in front read back {} from swap in the last {} s with available {} below the low band {}: the apps in use do not fit together; kill {which} to get {} back",
        mib(read),
        CHURN_WINDOW_MS / 1000,
        mib(ctx.available()),
        mib(low),
        mib(target)
    );
    let r = ctx.reason(Step::Kill, text).with("read_back_bytes", read as f64);
    ctx.kill(victims, target, Class::Cached, r);
}

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
    let swap_full = ctx.preset.kill.when_swap_full
        && ctx.swap_room() < ctx.frac(SWAP_FULL_ROOM_FRAC)
        && !super::adaptive_swap::can_grow(ctx);
    let mut target = ctx.frac(b.kill_target_frac).saturating_sub(avail).max(ctx.frac(0.01));
    let why = if avail < critical {
        format!(
            "available {} (with {} zram could still take) below the critical band {}",
            mib(avail),
            mib(headroom),
            mib(critical)
        )
    } else if swap_full && avail < low {
        target = low.saturating_sub(avail) + ctx.frac(SWAP_FULL_RELIEF_FRAC);
        format!(
            "available {} below the low band {} and swap full ({} left, no file can be added)",
            mib(avail),
            mib(low),
            mib(ctx.swap_room())
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
