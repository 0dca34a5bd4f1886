//! The cached-app freezer (Android's CachedAppOptimizer, issue 14): an app cached for `freeze_after_ms` is frozen, so
//! it touches no memory and uses no CPU while the user is elsewhere; one that is no longer cached, or is about to
//! launch again, is thawed. Only apps in a group of their own can be frozen (`App::frozen` is `None` otherwise);
//! protected and foreground apps never are. A kill or compaction needs no thaw: the kernel delivers SIGKILL to frozen
//! tasks and reclaims their pages without running them (cgroup-v2.rst), and a thaw would let the app touch the pages
//! being compressed.
//!
//! A launcher's `state` request thaws at once in the daemon, before it is answered (the app is brought back right
//! after); this step thaws where nobody said so (inferred classes).

use super::ctx::Ctx;
use crate::engine::input::Input;
use crate::engine::model::Step;
use crate::engine::model::{ActionKind, Event};
use crate::engine::state::State;

/// Before a decision: since when each app has been cached (kept whether the freezer is on or not, so a reload that
/// turns it on does not freeze apps at once).
pub fn observe(state: &mut State, input: &Input) {
    let apps = input.apps;
    state.cached_since.retain(|pid, _| apps.iter().any(|a| a.pid == *pid && a.is_cached()));
    for a in apps.iter().filter(|a| a.is_cached()) {
        state.cached_since.entry(a.pid).or_insert(input.now_ms);
    }
}

pub fn run(ctx: &mut Ctx) {
    let now = ctx.input.now_ms;
    let apps = ctx.input.apps;
    let launching: Vec<&str> = ctx
        .input
        .events
        .iter()
        .filter_map(|e| match e {
            Event::LaunchIntent { app, .. } => Some(app.as_str()),
            _ => None,
        })
        .collect();
    // Thaw even with the freezer off (a reload turned it off): nothing stays frozen.
    let frozen: Vec<_> = apps.iter().filter(|a| a.frozen == Some(true) && !ctx.is_touched(a.pid)).collect();
    for a in frozen {
        let why = if !a.is_cached() {
            format!("'{}' is {} now: thawed to run again", a.name, a.class)
        } else if launching.contains(&a.name.as_str()) {
            format!("'{}' is about to be launched: thawed before it is brought back", a.name)
        } else if ctx.preset.freeze_after_ms.is_none() {
            format!("'{}' thawed: the preset freezes no app", a.name)
        } else {
            continue;
        };
        let reason = ctx.reason(Step::Freeze, why);
        ctx.push(ActionKind::Thaw { pid: a.pid }, reason, 0);
    }
    let Some(after) = ctx.preset.freeze_after_ms else { return };
    let due: Vec<_> = ctx
        .free_apps()
        .filter(|a| a.frozen == Some(false) && a.is_cached() && !launching.contains(&a.name.as_str()))
        .filter_map(|a| ctx.state.cached_since.get(&a.pid).map(|since| (a, now.saturating_sub(*since))))
        .filter(|(_, cached_ms)| *cached_ms >= after)
        .collect();
    for (a, cached_ms) in due {
        let reason = ctx.reason(Step::Freeze, format!("'{}' has been cached for {:.1} s (the freezer waits {:.1} s): frozen, so it touches no memory and uses no CPU", a.name, cached_ms as f64 / 1000.0, after as f64 / 1000.0)).with("cached_ms", cached_ms as f64);
        ctx.push(ActionKind::Freeze { pid: a.pid }, reason, 0);
    }
}
