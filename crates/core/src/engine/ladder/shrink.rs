//! Freeing memory in proportion to what is short (memorch): the amount comes from the gap in
//! bytes, taken from the background apps least likely to be wanted soon first (the same
//! chance of a return the killer weighs), most of each before the next, so that few returns
//! are warm; their coldest pages first where the kernel can tell (an app in a memory group of
//! its own is squeezed, and the kernel's LRU chooses; docs/presets.md). Feedback orders the
//! apps (an app whose pages came back soon goes last, and gives less) but never makes the
//! response smaller than the gap: what is short is asked for, and the next decision measures
//! what came back.
//!
//! With `kill.forget_after_switches` (`memorch:forget=on`, off in every preset by measurement:
//! docs/results.md), a cached app out of sight for that many switches is killed before an app
//! likely to be wanted soon gives anything. With `kill.forget_below_session_share` (judged by
//! usage sessions), a cached app not used in the session in progress and used in few
//! sessions is killed, once a session, before an app used in this session gives anything.

use super::{mib, CompactScope, Ctx, Step, PAGE};
use crate::engine::model::App;
use crate::engine::preset::KillMode;
use crate::engine::victims::{Candidate, FORGET_MIN_SESSIONS};
use crate::engine::ShareWindow;
use crate::Class;

/// An app at least this likely to come back soon is one the user is likely to want: what is
/// taken from it is read back on a return that is probably near.
pub const LIKELY_RETURN: f64 = 0.5;

/// The most of an app's anonymous memory one decision takes, as presets ship
/// (`Compaction::max_share`): the rest is what its next return most likely needs. High, so
/// that what is short warms few apps' returns rather than a little of many.
pub const MAX_SHARE: f64 = 0.8;

/// The preset's [`MAX_SHARE`] (`Compaction::max_share`).
fn max_share(ctx: &Ctx) -> f64 {
    ctx.preset.compaction.as_ref().map_or(MAX_SHARE, |c| c.max_share)
}

/// The share window of `memorch:spread=on` (`Compaction::share_window_ms`): long enough to
/// hold the few decisions of one launch's shortage (realapps: five within five seconds).
pub const SHARE_WINDOW_MS: u64 = 10_000;

/// What [`free`] could get back from apps of at least `min_class` within `budget` bytes moved
/// (and the swap room left): the most it would ask of each (the preset's share of it),
/// saving what compression saves while zram has room and all of it on storage swap.
pub fn capacity(ctx: &Ctx, min_class: Class, budget: Option<u64>) -> u64 {
    let movable = movable(ctx, ctx.free_apps(), min_class);
    ctx.saved_by_moving(movable.min(budget.unwrap_or(u64::MAX)))
}

/// What the apps of at least `min_class` that `payer` picks could give from what the
/// snapshot shows, those squeezed in this decision included (the room
/// `detection.whole_paid_by_rare` lets the whole read-back take).
pub fn capacity_of(ctx: &Ctx, min_class: Class, payer: impl Fn(&App) -> bool) -> u64 {
    let apps = ctx.input.apps.iter().filter(|a| a.actionable() && !ctx.killed.contains(&a.pid) && payer(a));
    ctx.saved_by(0, movable(ctx, apps, min_class), true)
}

/// The most [`free`] would ask of `apps` (the preset's share of each one's anonymous memory),
/// those of at least `min_class` with enough to give and not dry.
fn movable<'a>(ctx: &Ctx, apps: impl Iterator<Item = &'a App>, min_class: Class) -> u64 {
    let min_anon = ctx.preset.compaction.as_ref().map_or(0, |c| c.min_anon_bytes);
    let share = max_share(ctx);
    apps.filter(|a| a.class >= min_class && a.anon_bytes > min_anon && !ctx.state.dry.contains_key(&a.pid))
        .map(|a| (a.anon_bytes as f64 * share) as u64)
        .sum()
}

/// Free about `bytes` from apps of at least `min_class`, the least likely to be wanted soon
/// first (with feedback, those whose pages came back soon last), at most the preset's share
/// ([`MAX_SHARE`] as shipped) of each and at most `budget` bytes moved in all; apps whose last
/// compaction gave little are passed over (`State::dry`). Returns the bytes expected back.
pub fn free(ctx: &mut Ctx, step: Step, min_class: Class, bytes: u64, budget: Option<u64>, why: &str) -> u64 {
    free_below(ctx, step, min_class, bytes, budget, why, None)
}

/// [`free`] from the apps less likely than `max_p_return` to be wanted soon only (all of them
/// with `None`): a squeeze turns the app's next return warm whatever it takes, so a likely
/// app gives nothing where memory is not yet short. Likelihood here is the app's
/// [`Ctx::return_weight`]: with `Compaction::slow_returns_give_first`, an app whose returns
/// are slow anyway counts as less likely, since a read-back is less of its wait.
pub fn free_below(
    ctx: &mut Ctx,
    step: Step,
    min_class: Class,
    bytes: u64,
    budget: Option<u64>,
    why: &str,
    max_p_return: Option<f64>,
) -> u64 {
    free_from(ctx, step, min_class, bytes, budget, why, &|c: &Ctx, a: &App| {
        max_p_return.is_none_or(|m| c.return_weight(a) < m)
    })
}

/// [`free`] from the apps `payer` picks only.
pub fn free_from(
    ctx: &mut Ctx,
    step: Step,
    min_class: Class,
    bytes: u64,
    budget: Option<u64>,
    why: &str,
    payer: &dyn Fn(&Ctx, &App) -> bool,
) -> u64 {
    let min_step = ctx.preset.compaction.as_ref().map_or(32, |c| c.min_step_pages) * PAGE;
    let min_anon = ctx.preset.compaction.as_ref().map_or(0, |c| c.min_anon_bytes);
    let feedback = ctx.preset.compaction.as_ref().is_some_and(|c| c.feedback);
    let refault = |a: &App| {
        if feedback {
            ctx.state.stats.get(&a.name).and_then(|s| s.refault_ratio).unwrap_or(0.0)
        } else {
            0.0
        }
    };
    let mut apps: Vec<(&App, f64, f64)> = ctx
        .free_apps()
        .filter(|a| {
            a.class >= min_class && a.anon_bytes > min_anon.max(min_step) && !ctx.state.dry.contains_key(&a.pid)
        })
        .filter(|a| payer(ctx, a))
        .map(|a| (a, refault(a), ctx.return_weight(a)))
        .collect();
    let cmp = |x: f64, y: f64| x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal);
    apps.sort_by(|(a, ra, wa), (b, rb, wb)| {
        b.class.cmp(&a.class).then(cmp(*ra, *rb)).then(cmp(*wa, *wb)).then(a.pid.cmp(&b.pid))
    });
    let mut to_move = ctx.moved_to_save(bytes);
    if let Some(b) = budget {
        to_move = to_move.min(b);
    }
    to_move = to_move.min(ctx.swap_room());
    let mut got = 0;
    let mut forgotten: Option<u32> = None;
    for (a, refault, weight) in apps {
        if to_move < min_step {
            break;
        }
        if forgotten == Some(a.pid) {
            continue;
        }
        let p_return = ctx.p_return(a);
        if let Some((victim, by_sessions)) = forgotten_instead_of(ctx, step, a, p_return, min_step) {
            let freed = victim.freeable_bytes;
            forgotten = Some(victim.pid);
            let share = ctx.state.stats.session_share(victim.app);
            let forgotten_how = if by_sessions {
                ctx.state.forgot_in_session = Some(ctx.state.stats.sessions);
                format!("used in {:.0} % of {} sessions and not in this one", share * 100.0, ctx.state.stats.sessions)
            } else {
                format!("not in front for {} switches", ctx.switches_away(victim.pid))
            };
            let r = ctx
                .reason(step, format!("{why}: {} short: kill '{}', {forgotten_how}, rather than take from '{}', {:.0} % likely to be wanted soon (the forgotten before the favourite)", mib(bytes), victim.app, a.name, p_return * 100.0))
                .with("need_bytes", bytes as f64)
                .with("switches_away", ctx.switches_away(victim.pid) as f64)
                .with("session_share", share)
                .with("p_return", victim.p_return)
                .with("spared_p_return", p_return);
            ctx.kill(vec![victim], bytes, Class::Cached, r);
            got += freed;
            to_move = to_move.saturating_sub(ctx.moved_to_save(freed));
            if to_move < min_step {
                break;
            }
        }
        // An app whose pages came back soon gives less: those were not cold.
        let allowed = allowance(ctx, a);
        if allowed < min_step && allowed < (a.anon_bytes as f64 * max_share(ctx)) as u64 {
            // Its share window is spent (without one, the smallest step is taken as before).
            continue;
        }
        let cap = (allowed as f64 * (1.0 - refault.min(0.9))) as u64;
        let take = to_move.min(cap).max(min_step) / PAGE * PAGE;
        given(ctx, a, take);
        let r = ctx
            .reason(
                step,
                format!(
                    "{why}: {} short, take {} of {} app '{}', its coldest first",
                    mib(bytes),
                    mib(take),
                    a.class,
                    a.name
                ),
            )
            .with("need_bytes", bytes as f64)
            .with("take_bytes", take as f64)
            .with("refault_ratio", refault)
            .with("return_weight", weight);
        got += ctx.compact(a, CompactScope::Anon, Some(take / PAGE), r);
        to_move = to_move.saturating_sub(take);
    }
    got
}

/// What `a` may give in this decision: the preset's share of the anonymous memory it holds, and
/// with a share window (`Compaction::share_window_ms`) no more than that share of what it
/// held at its first squeeze of the window, less what it gave since.
fn allowance(ctx: &Ctx, a: &App) -> u64 {
    let share = |bytes: u64| (bytes as f64 * max_share(ctx)) as u64;
    let window = ctx.preset.compaction.as_ref().and_then(|c| c.share_window_ms);
    match (window, ctx.state.share_window.get(&a.pid)) {
        (Some(ms), Some(w)) if ctx.input.now_ms.saturating_sub(w.since_ms) < ms => {
            share(w.held_bytes).saturating_sub(w.given_bytes).min(share(a.anon_bytes))
        }
        _ => share(a.anon_bytes),
    }
}

/// Count `bytes` taken from `a` against its share window (a new window if none is open).
fn given(ctx: &mut Ctx, a: &App, bytes: u64) {
    let Some(ms) = ctx.preset.compaction.as_ref().and_then(|c| c.share_window_ms) else { return };
    let now = ctx.input.now_ms;
    let w = ctx.state.share_window.entry(a.pid).or_insert(ShareWindow {
        since_ms: now,
        held_bytes: a.anon_bytes,
        given_bytes: 0,
    });
    if now.saturating_sub(w.since_ms) >= ms {
        *w = ShareWindow { since_ms: now, held_bytes: a.anon_bytes, given_bytes: 0 };
    }
    w.given_bytes += bytes;
}

/// The cached app to kill instead of taking memory from `a`, if the preset forgets apps,
/// and whether it was judged forgotten by its share of sessions: under pressure or before a
/// launch, when `a` is likely to be wanted soon, the least costly cached app that the user
/// has not come back to for `KillPolicy::forget_after_switches` switches, or (with
/// `KillPolicy::forget_below_session_share`, once a session) that was not used in the
/// session in progress and in fewer than that share of the sessions, if its death frees at
/// least a step. An app kept alive in swap still holds a share of RAM (zram keeps 1/ratio
/// of it; real programs' data compress ~1.7×), so keeping a forgotten app costs the likely
/// apps' hot pages on their returns, where its kill costs one relaunch if the user ever
/// comes back. One a decision, none while a kill is pending.
fn forgotten_instead_of<'a>(
    ctx: &Ctx<'a>,
    step: Step,
    a: &App,
    p_return: f64,
    min_bytes: u64,
) -> Option<(Candidate<'a>, bool)> {
    let after = ctx.preset.kill.forget_after_switches;
    let stats = &ctx.state.stats;
    let below_share = ctx.preset.kill.forget_below_session_share.filter(|_| {
        ctx.preset.kill.return_by_sessions
            && stats.sessions >= FORGET_MIN_SESSIONS
            && ctx.state.forgot_in_session != Some(stats.sessions)
    });
    if after.is_none() && below_share.is_none() {
        return None;
    }
    if !matches!(step, Step::UnderPressure | Step::BeforeLaunch)
        || ctx.preset.kill.mode == KillMode::Never
        || p_return < LIKELY_RETURN
        || ctx.kill_pending(1000)
    {
        return None;
    }
    let by_sessions = |c: &Candidate| {
        below_share.is_some_and(|max| !stats.in_this_session(c.app) && stats.session_share(c.app) < max)
    };
    // In the preset's kill order: the least expected cost first.
    ctx.candidates(Class::Cached)
        .into_iter()
        .filter(|c| {
            c.class >= Class::Cached && c.pid != a.pid && !ctx.is_touched(c.pid) && c.freeable_bytes >= min_bytes
        })
        .find_map(|c| {
            if after.is_some_and(|n| ctx.switches_away(c.pid) >= n) {
                Some((c, false))
            } else if by_sessions(&c) {
                Some((c, true))
            } else {
                None
            }
        })
}
