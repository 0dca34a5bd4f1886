//! Android's activity manager before the LMK (Android 4.4, the baseline MOS measured against, MOS §II): it keeps at
//! most a fixed number of cached apps and kills the least recently used beyond it, "although there is enough free
//! memory", whatever the memory situation. All the excess goes in one pass, as `updateOomAdjLocked` does.

use super::ctx::Ctx;
use crate::engine::model::Step;
use crate::engine::preset::KillMode;
use crate::Class;

pub fn run(ctx: &mut Ctx) {
    let Some(max) = ctx.preset.max_cached_apps else { return };
    if ctx.preset.kill.mode == KillMode::Never || ctx.kill_pending(1000) {
        return;
    }
    let mut cached: Vec<_> = ctx.candidates(Class::Cached).into_iter().filter(|c| c.class >= Class::Cached).collect();
    if cached.len() <= max as usize {
        return;
    }
    // The least recently used first: the longest away from the front.
    cached.sort_by(|a, b| b.idle_ms.cmp(&a.idle_ms).then(a.pid.cmp(&b.pid)));
    let n = cached.len() - max as usize;
    let victims: Vec<_> = cached.into_iter().take(n).collect();
    let r = ctx
        .reason(
            Step::Ams,
            format!(
                "{} cached apps, more than the {max} the activity manager keeps: kill the {n} least recently used",
                n + max as usize
            ),
        )
        .with("max_cached_apps", max as f64);
    ctx.kill(victims, 0, Class::Cached, r);
}
