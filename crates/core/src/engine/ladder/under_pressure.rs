//! Step 4, under pressure: compress background apps in small steps. The thesis takes 32 pages of an empty app a step
//! under "slight shortage"; SWAM takes unshared shared-object pages first (OOM cleaner); memorch frees what is short in
//! proportion, from the apps least likely to be wanted soon first, and takes background anon before anything of the
//! foreground (refault study, idea 2).

use super::ctx::Ctx;
use super::shortage::{pressure, PRESSURE_MARGIN_FRAC};
use super::shrink;
use crate::engine::model::App;
use crate::engine::model::{mib, CompactScope, Step};
use crate::engine::preset::Detection;
use crate::Class;

pub fn run(ctx: &mut Ctx) {
    let Some(c) = ctx.preset.compaction.clone() else { return };
    let Some(min_class) = c.pressure_min_class else { return };
    let Some(why) = pressure(ctx) else { return };
    if ctx.swap_room() == 0 {
        ctx.quiet(ctx.reason(Step::UnderPressure, format!("{why}, but no swap room is left to compress into")));
        return;
    }
    if let Detection::Bands(b) = &ctx.preset.detection {
        return in_proportion(ctx, b.low_available_frac, min_class, &why);
    }
    if let (Detection::Psi(l), true) = (&ctx.preset.detection, c.shared_objects_first) {
        return swam_cleaner(ctx, l.wmark_high_frac, min_class, c.step_pages, &why);
    }
    let mut apps: Vec<(&App, f64)> = ctx
        .free_apps()
        .filter(|a| a.class >= min_class)
        .filter(|a| {
            a.anon_bytes >= c.min_anon_bytes.max(1) || (c.shared_objects_first && a.so_unshared_bytes.unwrap_or(0) > 0)
        })
        .map(|a| (a, ctx.state.stats.get(&a.name).and_then(|s| s.refault_ratio).unwrap_or(0.0)))
        .collect();
    apps.sort_by(|(a, _), (b, _)| {
        b.class
            .cmp(&a.class)
            .then_with(|| {
                // Least recently in front first; process age where nothing was said.
                let last = |x: &App| ctx.state.last_front_ms.get(&x.pid).copied();
                match (last(a), last(b)) {
                    (Some(x), Some(y)) => x.cmp(&y),
                    _ => b.age_ms.cmp(&a.age_ms),
                }
            })
            .then(a.pid.cmp(&b.pid))
    });
    for (a, refault) in apps.into_iter().take(c.max_apps_per_decision.max(1)) {
        if c.shared_objects_first && a.so_unshared_bytes.unwrap_or(0) > 0 && !ctx.state.so_done.contains(&a.pid) {
            drop_shared_objects_of(ctx, a, why.as_str());
            continue;
        }
        let step = c.step_pages;
        let r = ctx
            .reason(Step::UnderPressure, format!("{why}: compress {step} pages of {} app '{}'", a.class, a.name))
            .with("step_pages", step as f64)
            .with("refault_ratio", refault);
        super::squeeze::compact(ctx, a, CompactScope::Anon, Some(step), r);
    }
}

/// SWAM's OOM cleaner: the resident shared-object pages only one app maps, of at most `max` apps of at least
/// `min_class` not cleaned yet.
fn drop_shared_objects(ctx: &mut Ctx, min_class: Class, max: usize, why: &str) {
    let so: Vec<&App> = ctx
        .free_apps()
        .filter(|a| a.class >= min_class && a.so_unshared_bytes.unwrap_or(0) > 0 && !ctx.state.so_done.contains(&a.pid))
        .take(max)
        .collect();
    for a in so {
        drop_shared_objects_of(ctx, a, why);
    }
}

/// SWAM's OOM cleaner for one app: the resident shared-object pages only it maps.
fn drop_shared_objects_of(ctx: &mut Ctx, a: &App, why: &str) {
    let so = a.so_unshared_bytes.unwrap_or(0);
    let text = format!("{why}: drop the {} of shared objects only '{}' maps first (SWAM OOM cleaner)", mib(so), a.name);
    let r = ctx.reason(Step::UnderPressure, text).with("so_bytes", so as f64);
    super::squeeze::compact(ctx, a, CompactScope::SharedObjects, None, r);
}

/// SWAM (§4.1-4.2): when memory is short, the shared-object pages only one app maps go first, every background app's
/// ("Adaptive Swap first selects SO pages as victims ... until treating the whole SO pages"); then normal pages for
/// what is still short, free memory to the high watermark, at least one unmap unit, from the background apps least
/// likely to be wanted soon. (The 4 MiB unmap unit is the kernel's unmapping granularity in SWAM, not a reclaim size:
/// here it is only the least asked.)
fn swam_cleaner(ctx: &mut Ctx, high_frac: f64, min_class: Class, unit_pages: u64, why: &str) {
    drop_shared_objects(ctx, min_class, usize::MAX, why);
    let short = ctx.frac(high_frac).saturating_sub(ctx.free()).max(unit_pages * crate::engine::model::PAGE);
    shrink::free(ctx, Step::UnderPressure, min_class, short, None, why);
}

/// memorch: unshared shared objects first (SWAM's cleaner, if on), then what the gap to the low band plus the margin
/// is, in bytes, from the apps least likely to be wanted soon. A PSI stall with memory above the band asks for the
/// margin alone.
fn in_proportion(ctx: &mut Ctx, low_frac: f64, min_class: Class, why: &str) {
    let c = ctx.preset.compaction.clone().expect("compaction");
    if c.shared_objects_first {
        drop_shared_objects(ctx, min_class, c.max_apps_per_decision.max(1), why);
    }
    let margin = ctx.frac(PRESSURE_MARGIN_FRAC * ctx.state.aggression.min(1.0));
    let target = ctx.frac(low_frac) + margin;
    let short = target.saturating_sub(ctx.available()).max(margin / 2);
    // A stall with memory above the band is no shortage yet: the apps likely to be wanted soon give nothing to it
    // (issue 11: on realapps 20 small squeezes of the most visited JVM on such stalls made most of its returns warm).
    let spare = ctx.available() >= ctx.frac(low_frac);
    let max_p_return = spare.then_some(shrink::LIKELY_RETURN);
    shrink::free_below(ctx, Step::UnderPressure, min_class, short, None, why, max_p_return);
}
