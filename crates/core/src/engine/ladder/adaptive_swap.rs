//! Swap that grows and shrinks (SWAM's adaptive swap, slow path): add a storage swap file
//! when zram is nearly full (or compresses badly) under pressure; remove files that hold
//! nothing (SWAM's ISOP eraser).

use super::under_pressure::pressure;
use super::{mib, ActionKind, Ctx, Step};

/// How full zram is (its swap devices' data against their disksize), or the swap devices'
/// own fill where there are no zram statistics; 1 without swap.
fn zram_used(ctx: &Ctx) -> f64 {
    let snap = ctx.input.snapshot;
    let (orig, disksize) = snap.zram.get().map_or((0, 0), |z| {
        z.devices.iter().filter(|d| d.is_swap).fold((0, 0), |(o, s), d| (o + d.orig_data_bytes, s + d.disksize_bytes))
    });
    let swap = &snap.swap;
    if disksize > 0 {
        orig as f64 / disksize as f64
    } else if swap.total_bytes > 0 {
        swap.used_bytes as f64 / swap.total_bytes as f64
    } else {
        1.0
    }
}

fn has_zram_data(ctx: &Ctx) -> bool {
    ctx.input.snapshot.zram.get().is_some_and(|z| z.devices.iter().any(|d| d.is_swap && d.orig_data_bytes > 0))
}

pub fn run(ctx: &mut Ctx) {
    let p = ctx.preset.swap.clone();
    if !p.swap_files {
        return;
    }
    let zram_used = zram_used(ctx);
    let on_demand = (p.grow_on_fill && zram_used >= p.grow_at_zram_used_frac).then(|| "swap is filling".to_string());
    match pressure(ctx).or_else(|| ctx.pressure_event().map(|l| format!("PSI {l:?} stall trigger"))).or(on_demand) {
        Some(why) => grow(ctx, &why, 0),
        None if idle_file_removable(ctx) => {
            let r = ctx.reason(Step::AdaptiveSwap, "a storage swap file holds nothing and zram has room: remove it (SWAM ISOP eraser)");
            ctx.push(ActionKind::SwapShrink, r, 0);
        }
        None => {}
    }
}

/// Whether the preset could still add a storage swap file (it grows swap, and its files
/// leave room for another): while it can, full swap is not the end of compression.
pub fn can_grow(ctx: &Ctx) -> bool {
    ctx.preset.swap.swap_files && storage_room(ctx) > 0
}

/// The storage swap the preset may still add: `max_files` files of `file_frac`, less what
/// its files hold in size; 0 when not half a file is left (a file's size in `/proc/swaps`
/// is its own less a header page, so four files leave a sliver, not room for a fifth).
fn storage_room(ctx: &Ctx) -> u64 {
    let p = &ctx.preset.swap;
    let unit = ctx.frac(p.file_frac);
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
        && ctx.input.snapshot.swap.devices.iter().any(|d| d.kind == "file" && d.used_bytes == 0)
        && zram_used(ctx) < p.grow_at_zram_used_frac / 2.0
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
    let idle_file = swap.devices.iter().any(|d| d.kind == "file" && d.used_bytes == 0);
    let bad_ratio = has_zram_data(ctx) && ctx.zram_ratio() < p.grow_below_ratio;
    let to_need = p.grow_to_need && short > 0;
    let recent = ctx.state.last_swap_grow_ms.is_some_and(|t| ctx.input.now_ms.saturating_sub(t) < p.grow_interval_ms);
    let grown = ctx.has_pushed(|k| matches!(k, ActionKind::SwapGrow { .. }));
    let room = storage_room(ctx);
    if !p.swap_files || !(zram_used >= p.grow_at_zram_used_frac || bad_ratio || to_need) || room == 0 || recent || (idle_file && !to_need) || grown {
        return;
    }
    let unit = ctx.frac(p.file_frac);
    let bytes = if to_need { short.div_ceil(unit.max(1)).max(1) * unit } else { unit }.min(room);
    let what = if bad_ratio {
        format!("zram compresses only {:.2}×", ctx.zram_ratio())
    } else if zram_used >= p.grow_at_zram_used_frac {
        format!("zram is {:.0} % full", zram_used * 100.0)
    } else {
        format!("zram's room ({:.0} % full) and compression leave {} short", zram_used * 100.0, mib(short))
    };
    let r = ctx
        .reason(Step::AdaptiveSwap, format!("{why} and {what}: add a {} storage swap file (SWAM slow path)", mib(bytes)))
        .with("zram_used_frac", zram_used);
    ctx.push(ActionKind::SwapGrow { bytes }, r, 0);
}
