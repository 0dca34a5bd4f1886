//! Freeing memory in proportion to what is short (memorch): the amount comes from the gap in bytes, taken from the
//! background apps least likely to be wanted soon first (the same chance of a return the killer weighs), most of each
//! before the next, so that few returns are warm; their coldest pages first where the kernel can tell (an app in a
//! memory group of its own is squeezed, and the kernel's LRU chooses; docs/presets.md). What is short is asked for, and
//! the next decision measures what came back.

use super::ctx::Ctx;
use super::storage::cold_to_storage;
use crate::engine::model::App;
use crate::engine::model::{mib, CompactScope, Step, PAGE};
use crate::Class;

/// An app at least this likely to come back soon is one the user is likely to want: what is taken from it is read back
/// on a return that is probably near.
pub const LIKELY_RETURN: f64 = 0.5;

/// The most of an app's anonymous memory one decision takes: the rest is what its next return most likely needs. High,
/// so that what is short warms few apps' returns rather than a little of many (0.5 and 0.35 made warm returns no
/// cheaper on realapps).
pub const MAX_SHARE: f64 = 0.8;

/// What [`free`] could get back from apps of at least `min_class` within `budget` bytes moved (and the swap room left):
/// the most it would ask of each (the preset's share of it), saving what compression saves while zram has room and all
/// of it on storage swap.
pub fn capacity(ctx: &Ctx, min_class: Class, budget: Option<u64>) -> u64 {
    let movable = movable(ctx, ctx.free_apps(), min_class);
    ctx.saved_by_moving(movable.min(budget.unwrap_or(u64::MAX)))
}

/// The most [`free`] would ask of `apps` (the preset's share of each one's anonymous memory), those of at least
/// `min_class` with enough to give and not dry.
fn movable<'a>(ctx: &Ctx, apps: impl Iterator<Item = &'a App>, min_class: Class) -> u64 {
    let min_anon = ctx.preset.compaction.as_ref().map_or(0, |c| c.min_anon_bytes);
    let share = MAX_SHARE;
    apps.filter(|a| a.class >= min_class && a.anon_bytes > min_anon && !ctx.state.dry.contains_key(&a.pid))
        .map(|a| (a.anon_bytes as f64 * share) as u64)
        .sum()
}

/// Free about `bytes` from apps of at least `min_class`, the least likely to be wanted soon first, at most the preset's
/// share ([`MAX_SHARE`] as shipped) of each and at most `budget` bytes moved in all; apps whose last compaction gave
/// little are passed over (`State::dry`). Returns the bytes expected back.
pub fn free(ctx: &mut Ctx, step: Step, min_class: Class, bytes: u64, budget: Option<u64>, why: &str) -> u64 {
    free_below(ctx, step, min_class, bytes, budget, why, None)
}

/// [`free`] from the apps less likely than `max_p_return` to be wanted soon only (all of them with `None`): a squeeze
/// turns the app's next return warm whatever it takes, so a likely app gives nothing where memory is not yet short.
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
        max_p_return.is_none_or(|m| c.p_return(a) < m)
    })
}

/// [`free`] from the apps `payer` picks only, those whose pages cost the user least first (`Ctx::return_weight`: the
/// least likely to be wanted soon, or whose returns read back least of what is taken).
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
    let mut apps: Vec<(&App, f64)> = ctx
        .free_apps()
        .filter(|a| {
            a.class >= min_class && a.anon_bytes > min_anon.max(min_step) && !ctx.state.dry.contains_key(&a.pid)
        })
        .filter(|a| payer(ctx, a))
        .map(|a| (a, ctx.return_weight(a)))
        .collect();
    let cmp = |x: f64, y: f64| x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal);
    apps.sort_by(|(a, wa), (b, wb)| b.class.cmp(&a.class).then(cmp(*wa, *wb)).then(a.pid.cmp(&b.pid)));
    let mut moved_left = budget.unwrap_or(u64::MAX).min(ctx.swap_room());
    let mut got = 0;
    for (a, weight) in apps {
        let (take, cold) = take_from(ctx, a, bytes.saturating_sub(got), moved_left, min_step);
        if take < min_step {
            break;
        }
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
            .with("return_weight", weight);
        got += ctx.compact_as(a, CompactScope::Anon, Some(take / PAGE), r, cold);
        moved_left = moved_left.saturating_sub(take);
    }
    got
}

/// What to take of `app` to save `short` bytes, at most its share and `moved_left`, and where it goes
/// (`cold_to_storage`): all of it saved on a file of its own, zram's saving elsewhere.
fn take_from(ctx: &Ctx, app: &App, short: u64, moved_left: u64, min_step: u64) -> (u64, Option<f64>) {
    if short == 0 {
        return (0, None);
    }
    let allowed = ((app.anon_bytes as f64 * MAX_SHARE) as u64).min(moved_left);
    let whole = short.min(allowed).max(min_step) / PAGE * PAGE;
    if let Some(p) = cold_to_storage(ctx, app, whole) {
        return (whole, Some(p));
    }
    let to_move = ctx.moved_to_save(short).min(moved_left);
    if to_move < min_step {
        return (0, None);
    }
    (to_move.min(allowed).max(min_step) / PAGE * PAGE, None)
}
