//! Swap that grows and shrinks (SWAM's adaptive swap, slow path): add a storage swap file when zram is nearly full (or
//! compresses badly) under pressure; remove files that hold nothing (SWAM's ISOP eraser).

use super::ctx::Ctx;
use super::shortage::{critical_floor, pressure};
use super::storage::{cold_priority, plain_file, storage_room, zram_used, FILE_FRAC};
use crate::engine::model::{mib, ActionKind, Step};

/// Zram this full (of its disksize) grows storage swap (SWAM adds a file once zram is 80 % full).
pub const GROW_AT_ZRAM_USED_FRAC: f64 = 0.8;
/// At most one new file this often: SWAM checks its swap every 5 s.
const GROW_INTERVAL_MS: u64 = 5_000;

/// A storage file made for an unlikely app's squeeze (above zram in priority) is removed once it holds under this share
/// of its size: its free room would take any page ahead of zram.
pub const COLD_DROP_BELOW_FRAC: f64 = 0.125;

fn has_zram_data(ctx: &Ctx) -> bool {
    ctx.input.snapshot.zram.get().is_some_and(|z| z.devices.iter().any(|d| d.is_swap && d.orig_data_bytes > 0))
}

pub fn run(ctx: &mut Ctx) {
    let p = ctx.preset.swap.clone();
    if !p.swap_files {
        return;
    }
    if let Some((path, used)) = drained_cold_file(ctx) {
        let r = ctx.reason(Step::AdaptiveSwap, format!("{path}, made for an unlikely app's pages above zram in priority, holds under {:.0} % of its size now ({} left, read back in): remove it, before its room takes the next pages swapped out ahead of zram", COLD_DROP_BELOW_FRAC * 100.0, mib(used)));
        ctx.push(ActionKind::SwapDropCold { path }, r, 0);
    }
    let zram_used = zram_used(ctx);
    let on_demand = (p.grow_on_fill && zram_used >= GROW_AT_ZRAM_USED_FRAC).then(|| "swap is filling".to_string());
    match pressure(ctx).or_else(|| ctx.pressure_event().map(|l| format!("PSI {l:?} stall trigger"))).or(on_demand) {
        Some(why) => grow(ctx, &why, 0),
        None if idle_file_removable(ctx) => {
            let r = ctx.reason(
                Step::AdaptiveSwap,
                "a storage swap file holds nothing and zram has room: remove it (SWAM ISOP eraser)",
            );
            ctx.push(ActionKind::SwapShrink, r, 0);
        }
        None => {}
    }
}

/// A swap file above zram in priority that holds under [`COLD_DROP_BELOW_FRAC`] of its size (its app came back, or
/// went), the one holding least, with what it holds: its free room would take any page swapped out, ahead of zram.
/// Removing it reads that back in, so only where it fits above the critical band and its margin.
fn drained_cold_file(ctx: &Ctx) -> Option<(String, u64)> {
    let cold = cold_priority(ctx)?;
    let floor = critical_floor(ctx);
    let room = ctx.available().saturating_sub(floor);
    let below = COLD_DROP_BELOW_FRAC;
    ctx.input
        .snapshot
        .swap
        .devices
        .iter()
        .filter(|d| d.kind == "file" && d.priority >= cold && d.holds_under(below) && d.used_bytes <= room)
        .min_by_key(|d| d.used_bytes)
        .map(|d| (d.path.clone(), d.used_bytes))
}

/// A storage file is kept at least this long after one was added, empty or not: the launch it was added for takes
/// seconds to fill it, and until then zram may look roomy (a domain without zram has only the new, empty file: removed
/// at the next look, the launch's pages had nowhere to go; found by the daemon's live tests).
pub const FILE_HOLD_MS: u64 = 30_000;

/// Whether a storage swap file holding nothing may go: zram has room again (below half the fill at which a file is
/// added), so it is not the file the last shortage asked for and the next would ask for again (added and removed within
/// a second, found on realapps), and none was added within [`FILE_HOLD_MS`]; one removal a decision.
pub fn idle_file_removable(ctx: &Ctx) -> bool {
    let p = &ctx.preset.swap;
    let held = ctx.state.last_swap_grow_ms.is_some_and(|t| ctx.input.now_ms.saturating_sub(t) < FILE_HOLD_MS);
    p.swap_files
        && !held
        && ctx.input.snapshot.swap.devices.iter().any(|d| plain_file(ctx, d) && d.used_bytes == 0)
        && zram_used(ctx) < GROW_AT_ZRAM_USED_FRAC / 2.0
        && !ctx.has_pushed(|k| matches!(k, ActionKind::SwapShrink))
}

/// Add a storage swap file for `why` if zram is nearly full (or, under the cost model, compresses so badly that storage
/// saves a page for less of the user's wait), the preset allows another file, none was added within its interval and
/// none stands empty (a launch short even of an empty file's room may have another). `short`: what a launch needs
/// beyond what zram's room and compression can cover; under the cost model that much is added (in whole files, within
/// the preset's room) even while zram has room, rather than a kill.
pub fn grow(ctx: &mut Ctx, why: &str, short: u64) {
    let p = ctx.preset.swap.clone();
    let zram_used = zram_used(ctx);
    let swap = &ctx.input.snapshot.swap;
    let idle_file = swap.devices.iter().any(|d| plain_file(ctx, d) && d.used_bytes == 0);
    let bad_ratio = ctx.preset.cost_model && has_zram_data(ctx) && ctx.storage_cheaper_than_zram();
    let to_need = ctx.preset.cost_model && short > 0;
    let recent = ctx.state.last_swap_grow_ms.is_some_and(|t| ctx.input.now_ms.saturating_sub(t) < GROW_INTERVAL_MS);
    let grown = ctx.has_pushed(|k| matches!(k, ActionKind::SwapGrow { .. }));
    let room = storage_room(ctx);
    if !p.swap_files
        || !(zram_used >= GROW_AT_ZRAM_USED_FRAC || bad_ratio || to_need)
        || room == 0
        || recent
        || (idle_file && !to_need)
        || grown
    {
        return;
    }
    let unit = ctx.frac(FILE_FRAC);
    let bytes = if to_need { short.div_ceil(unit.max(1)).max(1) * unit } else { unit }.min(room);
    let what = if bad_ratio {
        format!("zram compresses only {:.2}×: storage saves a page for less wait", ctx.zram_ratio())
    } else if zram_used >= GROW_AT_ZRAM_USED_FRAC {
        format!("zram is {:.0} % full", zram_used * 100.0)
    } else {
        format!("zram's room ({:.0} % full) and compression leave {} short", zram_used * 100.0, mib(short))
    };
    let r = ctx
        .reason(
            Step::AdaptiveSwap,
            format!("{why} and {what}: add a {} storage swap file (SWAM slow path)", mib(bytes)),
        )
        .with("zram_used_frac", zram_used);
    ctx.push(ActionKind::SwapGrow { bytes }, r, 0);
}
