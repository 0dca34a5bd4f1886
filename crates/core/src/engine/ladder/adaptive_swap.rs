//! Swap that grows and shrinks (SWAM's adaptive swap, slow path): add a storage swap file
//! when zram is nearly full (or compresses badly) under pressure; remove files that hold
//! nothing (SWAM's ISOP eraser).

use super::under_pressure::{critical_floor, pressure};
use super::{mib, ActionKind, Ctx, Step};
use crate::engine::model::App;

/// Zram this full (of its disksize) grows storage swap (SWAM adds a file once zram is 80 %
/// full).
pub const GROW_AT_ZRAM_USED_FRAC: f64 = 0.8;

/// A storage swap file's size, as a share of the domain (an eighth).
pub const FILE_FRAC: f64 = 0.125;

/// An unlikely app's squeeze goes to a storage file of its own only once zram is this full:
/// with zram half empty, every page it takes still reads back faster than from storage.
pub const COLD_AT_ZRAM_USED_FRAC: f64 = 0.5;

/// A storage file made for an unlikely app's squeeze (above zram in priority) is removed once
/// it holds under this share of its size: its free room would take any page ahead of zram.
pub const COLD_DROP_BELOW_FRAC: f64 = 0.125;

/// How full zram is (its swap devices' data against their disksize), or the swap devices'
/// own fill where there are no zram statistics; 1 without swap.
fn zram_used(ctx: &Ctx) -> f64 {
    let (orig, disksize) = zram_stats_bytes(ctx);
    let swap = &ctx.input.snapshot.swap;
    if disksize > 0 {
        orig as f64 / disksize as f64
    } else if swap.total_bytes > 0 {
        swap.used_bytes as f64 / swap.total_bytes as f64
    } else {
        1.0
    }
}

/// What zram's swap devices hold (their pages' own size) and their disksize, in bytes; 0 and
/// 0 without zram statistics.
fn zram_stats_bytes(ctx: &Ctx) -> (u64, u64) {
    ctx.input.snapshot.zram.get().map_or((0, 0), |z| {
        z.devices.iter().filter(|d| d.is_swap).fold((0, 0), |(o, s), d| (o + d.orig_data_bytes, s + d.disksize_bytes))
    })
}

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

/// The least priority a swap file above zram has: a file made for an unlikely app's
/// squeeze (`to_storage`); `None` without zram (nothing to send pages past).
fn cold_priority(ctx: &Ctx) -> Option<i32> {
    ctx.input.snapshot.swap.above_zram_priority()
}

/// Smaller squeezes go where the kernel puts them: a file of its own is not worth making.
pub(super) const COLD_MIN_BYTES: u64 = 8 << 20;

/// At most this many files of unlikely apps' squeezes at a time. The kernel enables at most
/// MAX_SWAPFILES swap areas in all: 32 less the swap entry types it keeps for itself, 23
/// where every option is on (device-private, migration, hwpoison, PTE markers); zram and the
/// preset's own files (`max_files`, 8 in memorch) need theirs. A file these files leave the
/// kernel no room for is not made, and the squeeze goes where the kernel puts it. On
/// realapps (seeds 3-5) a run had up to 17 at once: files rarely drain, as a page read back
/// keeps its slot while it stays unchanged in the swap cache.
pub const MAX_COLD_FILES: usize = 12;

/// Whether `app`'s squeeze of `anon_moved` bytes goes to a storage file of its own, above
/// zram in priority, and the app's chance of a return soon if so: the preset sends unlikely
/// apps there (`swap.cold_to_storage_below`), zram is at least [`COLD_AT_ZRAM_USED_FRAC`]
/// full, and the preset's storage swap has the room (issue 11: on realapps zram filled with
/// the first squeezes, of the unlikely apps, and the likely apps' pages went to storage,
/// read back three times slower a page).
///
/// With `swap.launch_to_storage`, while a launch is in flight every app's squeeze goes there,
/// whatever zram's fill: storage takes no compression on a CPU the launch needs.
pub fn cold_to_storage(ctx: &Ctx, app: &App, anon_moved: u64) -> Option<f64> {
    let below = ctx.preset.swap.cold_to_storage_below?;
    let launching = ctx.preset.swap.launch_to_storage && ctx.state.launch_in_flight.is_some();
    if anon_moved < COLD_MIN_BYTES
        || (!launching && zram_used(ctx) < COLD_AT_ZRAM_USED_FRAC)
        || !can_make_file_of_its_own(ctx, anon_moved)
    {
        return None;
    }
    let p = ctx.p_return(app);
    (launching || p < below).then_some(p)
}

/// Whether a storage file of its own of `bytes`, above zram, may be made in this decision:
/// the preset grows swap onto files, there is zram to send pages past, the storage swap it
/// may add has the room (less what this decision's files take) and the kernel a swap area
/// ([`MAX_COLD_FILES`]).
pub(super) fn can_make_file_of_its_own(ctx: &Ctx, bytes: u64) -> bool {
    ctx.preset.swap.swap_files
        && cold_priority(ctx).is_some()
        && storage_room(ctx).saturating_sub(ctx.cold_bytes) >= bytes
        && cold_files(ctx) + ctx.files_of_their_own() < MAX_COLD_FILES
}

/// Whether a swap device is one of the preset's own storage files, below zram (not one made
/// for an unlikely app's squeeze, which [`drained_cold_file`] looks after).
fn plain_file(ctx: &Ctx, d: &crate::SwapDevice) -> bool {
    d.kind == "file" && cold_priority(ctx).is_none_or(|cold| d.priority < cold)
}

/// How many swap files above zram there are now.
fn cold_files(ctx: &Ctx) -> usize {
    cold_priority(ctx).map_or(0, |cold| {
        ctx.input.snapshot.swap.devices.iter().filter(|d| d.kind == "file" && d.priority >= cold).count()
    })
}

/// A swap file above zram in priority that holds under [`COLD_DROP_BELOW_FRAC`] of its size
/// (its app came back, or went), the one holding least, with what it holds: its free room
/// takes any page swapped out, ahead of zram. Removing it reads what it holds back in, so
/// only where that fits in available memory above the critical band and its margin, as
/// the app in front's read-back does (on realapps' seed 4 such files took 277 MiB swapped
/// out after their own pages had come back: docs/results.md).
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

/// The storage swap the preset may still add: `max_files` files of [`FILE_FRAC`], less what
/// its files hold in size; 0 when not half a file is left (a file's size in `/proc/swaps`
/// is its own less a header page, so four files leave a sliver, not room for a fifth).
fn storage_room(ctx: &Ctx) -> u64 {
    let p = &ctx.preset.swap;
    let unit = ctx.frac(FILE_FRAC);
    let files: u64 = ctx.input.snapshot.swap.devices.iter().filter(|d| d.kind == "file").map(|d| d.size_bytes).sum();
    let room = (u64::from(p.max_files) * unit).saturating_sub(files);
    if room < unit / 2 {
        0
    } else {
        room
    }
}

/// A storage file is kept at least this long after one was added, empty or not: the launch
/// it was added for takes seconds to fill it, and until then zram may look roomy (a domain
/// without zram has only the new, empty file: removed at the next look, the launch's pages
/// had nowhere to go; found by the daemon's live tests).
pub const FILE_HOLD_MS: u64 = 30_000;

/// Whether a storage swap file holding nothing may go: zram has room again (below half the
/// fill at which a file is added), so it is not the file the last shortage asked for and the
/// next would ask for again (added and removed within a second, found on realapps), and none
/// was added within [`FILE_HOLD_MS`]; one removal a decision.
pub fn idle_file_removable(ctx: &Ctx) -> bool {
    let p = &ctx.preset.swap;
    let held = ctx.state.last_swap_grow_ms.is_some_and(|t| ctx.input.now_ms.saturating_sub(t) < FILE_HOLD_MS);
    p.swap_files
        && !held
        && ctx.input.snapshot.swap.devices.iter().any(|d| plain_file(ctx, d) && d.used_bytes == 0)
        && zram_used(ctx) < GROW_AT_ZRAM_USED_FRAC / 2.0
        && !ctx.has_pushed(|k| matches!(k, ActionKind::SwapShrink))
}

/// Add a storage swap file for `why` if zram is nearly full (or compresses badly), the preset
/// allows another file, none was added within its interval and none stands empty (a launch
/// short even of an empty file's room may have another). `short`:
/// what a launch needs beyond what zram's room and compression can cover; with the preset's
/// `grow_to_need`, that much is added (in whole files' worth, within the preset's room) even
/// while zram has room (issue 11: a launch on `realapps` killed an app for 80 MiB with zram
/// 63 % full, its room worth less than the launch needed, and no file added).
pub fn grow(ctx: &mut Ctx, why: &str, short: u64) {
    let p = ctx.preset.swap.clone();
    let zram_used = zram_used(ctx);
    let swap = &ctx.input.snapshot.swap;
    let idle_file = swap.devices.iter().any(|d| plain_file(ctx, d) && d.used_bytes == 0);
    let bad_ratio = has_zram_data(ctx) && ctx.zram_ratio() < p.grow_below_ratio;
    let to_need = p.grow_to_need && short > 0;
    let recent = ctx.state.last_swap_grow_ms.is_some_and(|t| ctx.input.now_ms.saturating_sub(t) < p.grow_interval_ms);
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
        format!("zram compresses only {:.2}×", ctx.zram_ratio())
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
