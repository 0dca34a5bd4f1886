//! Android's in-kernel low memory killer (thesis §2.6.4, `lowmem_shrink`): when free memory and file cache are both
//! below a level of the minfree table, kill one process of at least that level's class: the least important, then the
//! largest. One victim per trigger; the next waits until it is gone (lowmem_deathpending).

use super::ctx::Ctx;
use crate::engine::model::{mib, Step};
use crate::engine::preset::{Detection, KillMode};

pub fn run(ctx: &mut Ctx) {
    let Detection::Minfree(m) = &ctx.preset.detection else { return };
    if ctx.preset.kill.mode == KillMode::Never {
        return;
    }
    let Some((min_class, level)) = m.min_class(ctx.total(), ctx.free(), ctx.file_bytes()) else {
        ctx.quiet(ctx.reason(Step::Lmk, format!("free {} is above every minfree level", mib(ctx.free()))));
        return;
    };
    if ctx.kill_pending(m.death_pending_ms) {
        ctx.quiet(ctx.reason(Step::Lmk, "a victim is still dying (lowmem_deathpending)"));
        return;
    }
    let Some(victim) = ctx.candidates(min_class).into_iter().next() else {
        ctx.quiet(ctx.reason(
            Step::Lmk,
            format!(
                "free {} below minfree {} but no {} app or less important to kill",
                mib(ctx.free()),
                mib(level),
                min_class
            ),
        ));
        return;
    };
    let r = ctx
        .reason(
            Step::Lmk,
            format!(
                "free {} and file {} below minfree {}: kill one app of class {} or less important",
                mib(ctx.free()),
                mib(ctx.file_bytes()),
                mib(level),
                min_class
            ),
        )
        .with("minfree_bytes", level as f64);
    ctx.kill(vec![victim], level.saturating_sub(ctx.free()), min_class, r);
}
