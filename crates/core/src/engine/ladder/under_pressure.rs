//! Step 4, under pressure: compress background apps in small steps. The thesis takes 32
//! pages of an empty app a step under "slight shortage"; SWAM takes unshared shared-object
//! pages first (OOM cleaner); memorch sizes each app's step by refault feedback and PSI,
//! orders apps so those whose pages come back soon go last, and takes background anon
//! before anything of the foreground (refault study, idea 2).

use super::{mib, CompactScope, Ctx, Step};
use crate::engine::model::App;
use crate::engine::preset::Detection;

/// Whether this preset sees "pressure" now, and why.
pub fn pressure(ctx: &Ctx) -> Option<String> {
    let c = ctx.preset.compaction.as_ref()?;
    match &ctx.preset.detection {
        Detection::None => None,
        Detection::Minfree(m) => {
            let band = (c.slight_pressure_pages_at_1gib as f64 * 4096.0 * ctx.total() as f64 / m.reference_bytes as f64) as u64;
            (ctx.free() < band).then(|| format!("slight shortage: free {} below {}", mib(ctx.free()), mib(band)))
        }
        Detection::Psi(l) => {
            let partial_pct = l.psi_partial_stall_us as f64 * 100.0 / l.psi_window_us as f64;
            if let Some(level) = ctx.pressure_event() {
                Some(format!("PSI {level:?} stall trigger"))
            } else {
                (ctx.psi_some_avg10() > partial_pct).then(|| format!("PSI some {:.1} % over {partial_pct:.0} %", ctx.psi_some_avg10()))
            }
        }
        Detection::Bands(b) => {
            let low = ctx.frac(b.low_available_frac);
            if ctx.available() < low {
                Some(format!("available {} below the low band {}", mib(ctx.available()), mib(low)))
            } else if ctx.psi_some_avg10() > b.psi_some_target_pct {
                Some(format!("PSI some {:.1} % over the {:.1} % target", ctx.psi_some_avg10(), b.psi_some_target_pct))
            } else {
                ctx.pressure_event().map(|l| format!("PSI {l:?} stall trigger"))
            }
        }
    }
}

pub fn run(ctx: &mut Ctx) {
    let Some(c) = ctx.preset.compaction.clone() else { return };
    let Some(min_class) = c.pressure_min_class else { return };
    let Some(why) = pressure(ctx) else { return };
    if ctx.swap_room() == 0 {
        ctx.quiet(ctx.reason(Step::UnderPressure, format!("{why}, but no swap room is left to compress into")));
        return;
    }
    let mut apps: Vec<(&App, f64)> = ctx
        .free_apps()
        .filter(|a| a.class >= min_class)
        .filter(|a| a.anon_bytes >= c.min_anon_bytes.max(1) || (c.shared_objects_first && a.so_unshared_bytes.unwrap_or(0) > 0))
        .map(|a| (a, ctx.state.stats.get(&a.name).and_then(|s| s.refault_ratio).unwrap_or(0.0)))
        .collect();
    apps.sort_by(|(a, ra), (b, rb)| {
        b.class
            .cmp(&a.class)
            .then_with(|| if c.feedback { ra.partial_cmp(rb).unwrap_or(std::cmp::Ordering::Equal) } else { std::cmp::Ordering::Equal })
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
            let r = ctx
                .reason(Step::UnderPressure, format!("{why}: drop the {} of shared objects only '{}' maps first (SWAM OOM cleaner)", mib(a.so_unshared_bytes.unwrap_or(0)), a.name))
                .with("so_bytes", a.so_unshared_bytes.unwrap_or(0) as f64);
            ctx.compact(a, CompactScope::SharedObjects, None, r);
            continue;
        }
        let step = if c.feedback {
            let base = *ctx.state.step_pages.get(&a.name).unwrap_or(&c.step_pages);
            ((base as f64 * ctx.state.aggression) as u64).clamp(c.min_step_pages, c.max_step_pages)
        } else {
            c.step_pages
        };
        let r = ctx
            .reason(Step::UnderPressure, format!("{why}: compress {step} pages of {} app '{}'", a.class, a.name))
            .with("step_pages", step as f64)
            .with("refault_ratio", refault);
        ctx.compact(a, CompactScope::Anon, Some(step), r);
    }
}
