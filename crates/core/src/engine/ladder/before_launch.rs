//! Step 3, before a launch with a known peak (learned max size, or the caller's estimate):
//! secure it now, in one decision. MOS phase 2 kills as many cached apps at once as the
//! launch needs; memorch compresses first, within a time budget, then kills the rest at once.

use super::home::{compress_for, greedy_prefix};
use super::{mib, Ctx, Event, Step};
use crate::engine::victims::select_batch;
use crate::Class;

pub fn run(ctx: &mut Ctx) {
    let Some(ahead) = ctx.preset.ahead.clone() else { return };
    if !ahead.launch {
        return;
    }
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
            ctx.quiet(ctx.reason(Step::BeforeLaunch, format!("launch of '{app}': size unknown until its first launch")));
            continue;
        };
        let threshold = ctx.frac(ahead.threshold_frac);
        if ahead.compress_budget_ms.is_none() {
            mos_phase2(ctx, &app, expected, threshold);
        } else {
            memorch_prepare(ctx, &app, expected, ahead.compress_budget_ms.unwrap_or(0) * ahead.compress_bytes_per_ms);
        }
    }
}

/// MOS doMosPhase2: if the app's max PSS exceeds tLmk, kill cached apps for maxAppMem − free.
fn mos_phase2(ctx: &mut Ctx, app: &str, expected: u64, threshold: u64) {
    if expected <= threshold {
        ctx.quiet(ctx.reason(Step::BeforeLaunch, format!("launch of '{app}' ({}) fits under the LMK threshold {}", mib(expected), mib(threshold))));
        return;
    }
    let need = expected.saturating_sub(ctx.free());
    if need == 0 {
        return;
    }
    let cands: Vec<_> = ctx.candidates(Class::Cached).into_iter().filter(|c| c.app != app).collect();
    let victims = greedy_prefix(&cands, need);
    let r = ctx
        .reason(Step::BeforeLaunch, format!("MOS phase 2: '{app}' needs up to {} with {} free: kill cached apps at once", mib(expected), mib(ctx.free())))
        .with("expected_bytes", expected as f64);
    ctx.kill(victims, need, Class::Cached, r);
}

/// memorch: need = expected + margin − available; compress cached apps within the budget,
/// then kill the least costly at once for what is left: cached first, then background.
fn memorch_prepare(ctx: &mut Ctx, app: &str, expected: u64, budget_bytes: u64) {
    let margin = ctx.frac(0.02);
    let need = (expected + margin).saturating_sub(ctx.available());
    if need == 0 {
        ctx.quiet(ctx.reason(Step::BeforeLaunch, format!("launch of '{app}' ({}) fits in {} available", mib(expected), mib(ctx.available()))));
        return;
    }
    let got = compress_for(ctx, Step::BeforeLaunch, need, Some(budget_bytes), &format!("before launching '{app}' ({})", mib(expected)));
    // What the kernel can still swap out of background apps while the app starts is not a
    // reason to kill.
    let headroom = ctx.swap_headroom();
    let rest = need.saturating_sub(got).saturating_sub(headroom);
    if rest == 0 {
        if need > got {
            ctx.quiet(ctx.reason(Step::BeforeLaunch, format!("launch of '{app}': {} short after compression, which zram can still take: no kill", mib(need - got))));
        }
        return;
    }
    // Kill among the apps not being compressed, cached first, then background…
    for min_class in [Class::Cached, Class::Service] {
        let spare: Vec<_> = ctx.candidates(min_class).into_iter().filter(|c| c.app != app && !ctx.is_touched(c.pid)).collect();
        let held: u64 = spare.iter().map(|c| c.freeable_bytes).sum();
        if held >= rest {
            let victims = select_batch(&spare, rest);
            let r = ctx
                .reason(Step::BeforeLaunch, format!("before launching '{app}': {} still short after compression: kill the least costly at once", mib(rest)))
                .with("expected_bytes", expected as f64)
                .with("candidate_bytes", held as f64);
            return ctx.kill(victims, rest, min_class, r);
        }
    }
    // …or, if they cannot cover it, plan on kills alone (the compactions of victims are dropped).
    let all: Vec<_> = ctx.candidates(Class::Service).into_iter().filter(|c| c.app != app).collect();
    let victims = select_batch(&all, need);
    let r = ctx
        .reason(Step::BeforeLaunch, format!("before launching '{app}': compression cannot cover {}: kill the least costly at once", mib(need)))
        .with("expected_bytes", expected as f64)
        .with("candidate_bytes", all.iter().map(|c| c.freeable_bytes).sum::<u64>() as f64);
    ctx.kill(victims, need, Class::Service, r);
}
