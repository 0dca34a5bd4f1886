//! Step 0, trim notices (issue 14): before memorch compresses or kills, apps that listen are told to give memory back
//! themselves (Android's `onTrimMemory`, the freedesktop `LowMemoryWarning`), at the levels of [`Margins::trim_level`]:
//! once when the level rises, again while it holds every [`REPEAT_MS`]; and an app that leaves the screen is told it is
//! hidden. Runs first, so the notice goes out before any step of the same decision acts.

use super::ctx::Ctx;
use crate::engine::input::Input;
use crate::engine::margins::{Margins, TrimLevel};
use crate::engine::model::Step;
use crate::engine::model::{mib, ActionKind, Event};
use crate::engine::preset::Preset;
use crate::engine::state::State;
use crate::Class;

/// A level that holds is said again this often (apps that freed what they could may have more to give by now).
pub const REPEAT_MS: u64 = 10_000;

/// Before a decision: the apps that left the screen since the last (an app on screen at an earlier decision said to be
/// behind it now, once, not again as it goes on from previous to cached), and the level told forgotten once memory is
/// above every margin.
pub fn observe(state: &mut State, preset: &Preset, input: &Input) {
    state.hidden.clear();
    if !preset.trim_notices {
        return;
    }
    let on_screen = &mut state.on_screen;
    let left = input.events.iter().filter_map(|e| match e {
        Event::AppState { pid, class } if *class >= Class::Previous && on_screen.remove(pid) => Some(*pid),
        _ => None,
    });
    state.hidden = left.collect();
    state.on_screen.retain(|p| input.apps.iter().any(|a| a.pid == *p));
    state.on_screen.extend(input.apps.iter().filter(|a| a.class < Class::Previous).map(|a| a.pid));
    let m = &input.snapshot.memory;
    if Margins::of(preset, m.total_bytes).trim_level(m.available_bytes).is_none() {
        state.trim_sent = None;
    }
}

pub fn run(ctx: &mut Ctx) {
    if !ctx.preset.trim_notices {
        return;
    }
    for &pid in &ctx.state.hidden {
        let Some(a) = ctx.input.apps.iter().find(|a| a.pid == pid && a.actionable()) else { continue };
        let reason = ctx.reason(
            Step::Trim,
            format!("'{}' left the screen ({}): told it is hidden, so what only its UI needs can go", a.name, a.class),
        );
        ctx.push(ActionKind::Trim { level: TrimLevel::Hidden, pid: Some(pid) }, reason, 0);
    }
    let margins = Margins::of(ctx.preset, ctx.total());
    let available = ctx.available();
    let level = margins.trim_level(available);
    let now = ctx.input.now_ms;
    let due = match (level, ctx.state.trim_sent) {
        (None, _) => false,
        (Some(l), Some((sent, at))) => l > sent || (l == sent && now.saturating_sub(at) >= REPEAT_MS),
        (Some(_), None) => true,
    };
    let Some(level) = level.filter(|_| due) else { return };
    let reason = ctx
        .reason(
            Step::Trim,
            format!(
                "available {} is {} the {} margin ({} to compress, {} to kill): apps told '{}' first",
                mib(available),
                if available < margins.moderate_bytes { "below" } else { "near" },
                if level == TrimLevel::Critical { "kill" } else { "compression" },
                mib(margins.moderate_bytes),
                mib(margins.critical_bytes),
                level.name()
            ),
        )
        .with("reclaim_target_bytes", margins.reclaim_target(available) as f64);
    ctx.push(ActionKind::Trim { level, pid: None }, reason, 0);
}
