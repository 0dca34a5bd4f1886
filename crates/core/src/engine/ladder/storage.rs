//! Storage swap files and the room left on them: where an unlikely app's squeeze may go (a file of its own above zram),
//! how full zram is, what storage swap the preset may still add.

use super::ctx::Ctx;
use crate::engine::model::App;

/// A storage swap file's size, as a share of the domain (an eighth).
pub const FILE_FRAC: f64 = 0.125;

/// How full zram is (its swap devices' data against their disksize), or the swap devices' own fill where there are no
/// zram statistics; 1 without swap.
pub(super) fn zram_used(ctx: &Ctx) -> f64 {
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

/// What zram's swap devices hold (their pages' own size) and their disksize, in bytes; 0 and 0 without zram statistics.
pub(super) fn zram_stats_bytes(ctx: &Ctx) -> (u64, u64) {
    ctx.input.snapshot.zram.get().map_or((0, 0), |z| {
        z.devices.iter().filter(|d| d.is_swap).fold((0, 0), |(o, s), d| (o + d.orig_data_bytes, s + d.disksize_bytes))
    })
}

/// The least priority a swap file above zram has: a file made for an unlikely app's squeeze (`to_storage`); `None`
/// without zram (nothing to send pages past).
pub(super) fn cold_priority(ctx: &Ctx) -> Option<i32> {
    ctx.input.snapshot.swap.above_zram_priority()
}

/// At most this many files of unlikely apps' squeezes at a time. The kernel enables at most MAX_SWAPFILES swap areas in
/// all (23 where every option is on); zram and the preset's own files (`max_files`) need theirs. Past this the squeeze
/// goes where the kernel puts it: files rarely drain (a page read back keeps its slot while in the swap cache).
pub const MAX_COLD_FILES: usize = 12;

/// Whether `app`'s squeeze of `anon_moved` bytes goes to a storage file of its own, above zram in priority, and the
/// app's chance of a return soon if so: under the cost model, where that costs the user less than zram
/// (`Ctx::storage_costs_less`) and the preset's storage swap has the room.
pub fn cold_to_storage(ctx: &Ctx, app: &App, anon_moved: u64) -> Option<f64> {
    let fits = anon_moved >= COLD_MIN_BYTES && can_make_file_of_its_own(ctx, anon_moved);
    (ctx.preset.cost_model && fits && ctx.storage_costs_less(app, anon_moved)).then(|| ctx.p_return(app))
}

/// Whether a storage file of its own of `bytes`, above zram, may be made in this decision: the preset grows swap onto
/// files, there is zram to send pages past, the storage swap it may add has the room (less what this decision's files
/// take) and the kernel a swap area ([`MAX_COLD_FILES`]).
pub(super) fn can_make_file_of_its_own(ctx: &Ctx, bytes: u64) -> bool {
    ctx.preset.swap.swap_files
        && cold_priority(ctx).is_some()
        && storage_room(ctx).saturating_sub(ctx.cold_bytes) >= bytes
        && cold_files(ctx) + ctx.files_of_their_own() < MAX_COLD_FILES
}

/// Whether a swap device is one of the preset's own storage files, below zram (not one made for an unlikely app's
/// squeeze, which [`drained_cold_file`] looks after).
pub(super) fn plain_file(ctx: &Ctx, d: &crate::SwapDevice) -> bool {
    d.kind == "file" && cold_priority(ctx).is_none_or(|cold| d.priority < cold)
}

/// How many swap files above zram there are now.
pub(super) fn cold_files(ctx: &Ctx) -> usize {
    cold_priority(ctx).map_or(0, |cold| {
        ctx.input.snapshot.swap.devices.iter().filter(|d| d.kind == "file" && d.priority >= cold).count()
    })
}

/// The storage swap the preset may still add: `max_files` files of [`FILE_FRAC`], less what its files hold in size; 0
/// when not half a file is left (a file's size in `/proc/swaps` is its own less a header page, so four files leave a
/// sliver, not room for a fifth).
pub(super) fn storage_room(ctx: &Ctx) -> u64 {
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

/// Smaller squeezes go where the kernel puts them: a file of its own is not worth making.
pub(super) const COLD_MIN_BYTES: u64 = 8 << 20;
