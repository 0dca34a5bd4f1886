//! Step 0, trim notices (issue 14): before memorch compresses or kills, apps that listen are
//! told to give memory back themselves (Android's `onTrimMemory`, the freedesktop
//! `LowMemoryWarning`), at the levels of [`Margins::trim_level`]: once when the level rises,
//! again while it holds every [`REPEAT_MS`]; and an app that leaves the screen is told it is
//! hidden. Runs first, so the notice goes out before any step of the same decision acts.

use super::ctx::Ctx;
use crate::engine::margins::{Margins, TrimLevel};
use crate::engine::model::Step;
use crate::engine::model::{mib, ActionKind, Event};
use crate::Class;

/// A level that holds is said again this often (apps that freed what they could may have
/// more to give by now).
pub const REPEAT_MS: u64 = 10_000;

pub fn run(ctx: &mut Ctx) {
    if !ctx.preset.trim_notices {
        return;
    }
    // Hidden: an app that was on screen at an earlier decision and is said to be behind it
    // now (once, not again as it goes on from previous to cached).
    let on_screen = &mut ctx.state.on_screen;
    let hidden: Vec<u32> = ctx
        .input
        .events
        .iter()
        .filter_map(|e| match e {
            Event::AppState { pid, class } if *class >= Class::Previous && on_screen.remove(pid) => Some(*pid),
            _ => None,
        })
        .collect();
    on_screen.retain(|p| ctx.input.apps.iter().any(|a| a.pid == *p));
    on_screen.extend(ctx.input.apps.iter().filter(|a| a.class < Class::Previous).map(|a| a.pid));
    for pid in hidden {
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
        (None, _) => {
            ctx.state.trim_sent = None;
            false
        }
        (Some(l), Some((sent, at))) => l > sent || (l == sent && now.saturating_sub(at) >= REPEAT_MS),
        (Some(_), None) => true,
    };
    let Some(level) = level.filter(|_| due) else { return };
    ctx.state.trim_sent = Some((level, now));
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
