//! Step 3, before a launch with a known peak (learned max size, or the caller's estimate): secure it now, in one
//! decision. MOS phase 2 kills as many cached apps at once as the launch needs; memorch compresses first, within a time
//! budget, then kills the rest at once.

use super::ctx::Ctx;
use super::home::greedy_prefix;
use super::shrink;
use crate::engine::model::{mib, Event, Step};
use crate::engine::preset::Ahead;
use crate::engine::victims::Candidate;
use crate::Class;

pub fn run(ctx: &mut Ctx) {
    let Some(ahead) = ctx.preset.ahead.clone() else { return };
    let intents: Vec<(String, Option<u64>)> = ctx
        .input
        .events
        .iter()
        .filter_map(|e| match e {
            Event::LaunchIntent { app, expected_bytes } => Some((app.clone(), *expected_bytes)),
            _ => None,
        })
        .collect();
    for (app, given) in intents {
        let learned = ctx.state.stats.get(&app).map(|s| s.peak_bytes).filter(|&b| b > 0);
        let Some(expected) = given.or(learned) else {
            ctx.quiet(
                ctx.reason(Step::BeforeLaunch, format!("launch of '{app}': size unknown until its first launch")),
            );
            continue;
        };
        let threshold = ctx.frac(ahead.threshold_frac);
        if ahead.compress_budget_ms.is_none() {
            mos_phase2(ctx, &app, expected, threshold);
        } else {
            memorch_prepare(ctx, &app, expected, &ahead);
        }
    }
}

/// MOS doMosPhase2: if the app's max PSS exceeds tLmk, kill cached apps for maxAppMem − free.
fn mos_phase2(ctx: &mut Ctx, app: &str, expected: u64, threshold: u64) {
    if expected <= threshold {
        ctx.quiet(ctx.reason(
            Step::BeforeLaunch,
            format!("launch of '{app}' ({}) fits under the LMK threshold {}", mib(expected), mib(threshold)),
        ));
        return;
    }
    let need = expected.saturating_sub(ctx.free());
    if need == 0 {
        return;
    }
    let cands: Vec<_> = ctx.candidates(Class::Cached).into_iter().filter(|c| c.app != app).collect();
    let victims = greedy_prefix(&cands, need);
    let r = ctx
        .reason(
            Step::BeforeLaunch,
            format!(
                "MOS phase 2: '{app}' needs up to {} with {} free: kill cached apps at once",
                mib(expected),
                mib(ctx.free())
            ),
        )
        .with("expected_bytes", expected as f64);
    ctx.kill(victims, need, Class::Cached, r);
}

/// What the kernel compresses into zram a millisecond of one CPU (lz4, docs/performance.md): what a launch's squeeze
/// budget (`ahead.compress_budget_ms`) buys.
pub const COMPRESS_BYTES_PER_MS: u64 = 350_000;

/// memorch: need = expected + margin − available. What compression (within the time budget) and the kernel's swapping
/// (within swap room) can cover is left to them; the rest, if any, is killed at once, at the least expected cost, among
/// cached apps, then background ones. The victims are chosen first, then the survivors give their coldest pages for
/// what is left; the actions list the compression first (the executor kills first all the same).
fn memorch_prepare(ctx: &mut Ctx, app: &str, expected: u64, ahead: &Ahead) {
    let budget_bytes = ahead.compress_budget_ms.unwrap_or(0) * COMPRESS_BYTES_PER_MS;
    let margin = ctx.frac(0.02);
    let need = (expected + margin).saturating_sub(ctx.available());
    if need == 0 {
        ctx.quiet(ctx.reason(
            Step::BeforeLaunch,
            format!("launch of '{app}' ({}) fits in {} available", mib(expected), mib(ctx.available())),
        ));
        return;
    }
    let compressible = shrink::capacity(ctx, Class::Cached, Some(budget_bytes));
    // What zram cannot take goes to storage swap: grow it now, not after the launch stalls.
    if need > compressible {
        let short = ctx.beyond_swap_rooms(need.saturating_sub(compressible.max(ctx.swap_headroom(true))));
        super::adaptive_swap::grow(
            ctx,
            &format!("launching '{app}' needs {} more than compression can free now", mib(need - compressible)),
            short,
        );
    }
    let coverable = compressible.max(ctx.swap_headroom(true));
    let rest = need.saturating_sub(coverable);
    let plan = (rest > 0).then(|| victims_for(ctx, app, rest)).flatten();
    let killed: u64 = plan.as_ref().map_or(0, |(v, _, _)| v.iter().map(|c| c.freeable_bytes).sum());
    if let Some((v, _, _)) = &plan {
        ctx.reserve(v.iter().map(|c| c.pid));
    }
    let left = need.saturating_sub(killed);
    if left > 0 {
        let why = format!("before launching '{app}' ({})", mib(expected));
        shrink::free_below(ctx, Step::BeforeLaunch, Class::Cached, left, Some(budget_bytes), &why, None);
    }
    if let Some((victims, min_class, held)) = plan {
        let r = ctx
            .reason(Step::BeforeLaunch, format!("before launching '{app}' ({}): {} more than compression and swap can cover: kill the least costly at once", mib(expected), mib(rest)))
            .with("expected_bytes", expected as f64)
            .with("candidate_bytes", held as f64);
        ctx.kill(victims, rest, min_class, r);
    }
}

/// Victims for what compression cannot cover before a launch: cached apps if they hold enough, else background ones
/// too; with the class allowed and what the candidates held.
fn victims_for<'a>(ctx: &Ctx<'a>, app: &str, rest: u64) -> Option<(Vec<Candidate<'a>>, Class, u64)> {
    for min_class in [Class::Cached, Class::Service] {
        let spare: Vec<_> = ctx.candidates(min_class).into_iter().filter(|c| c.app != app).collect();
        let held: u64 = spare.iter().map(|c| c.freeable_bytes).sum();
        if held >= rest || min_class == Class::Service {
            let victims = ctx.select(&spare, rest);
            return (!victims.is_empty()).then_some((victims, min_class, held));
        }
    }
    None
}
