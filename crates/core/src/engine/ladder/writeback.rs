//! zram written back to storage while the screen is off (`swap.writeback_below`; issue 11).
//!
//! zram's pool is RAM: each page in it costs the device a share of a page (1/1.7 on
//! `realapps`), and once zram is full its pool held 300 of the device's 1024 MiB there, much
//! of it pages of apps nobody came back to, squeezed when zram still had room. Android and
//! ChromeOS write such pages from zram to a backing file in the kernel (`backing_dev`,
//! `writeback` of idle pages); this kernel has no zram writeback, so the executor reads an
//! app's zram pages back into it and pages them out again to a storage file of its own above
//! zram (linux `writeback.rs`). An unlikely app's pages then cost no RAM, as a killed app's
//! do, and stay there for the rare return; the likely apps keep zram and its fast reads.
//!
//! Only while the screen is off (nobody waits, and each piece read back holds a piece of RAM
//! until it is paged out again), only once zram is `cold_at_zram_used` full (below that a
//! squeeze still finds room in zram, and every page there is read back faster than from
//! storage) and down to that fill, only of apps less likely than `writeback_below` to be
//! wanted soon, the least likely first, one app a decision and at most [`STEP_FRAC`] of the
//! domain, into the room the files above zram have or a new file of its own within the storage
//! the preset may add, and only with the critical band, its margin and a piece still available
//! (a piece read back is paged out again before the next is read). An app whose writeback
//! found little of it in zram is not asked again until it has been in front (learn.rs).

use super::adaptive_swap::{can_make_file_of_its_own, zram_bytes, COLD_MIN_BYTES};
use super::{mib, ActionKind, Ctx, Step, PAGE};
use crate::engine::preset::Detection;
use crate::Class;

/// What one decision moves at most, as a share of the domain (64 MiB on 1 GiB: about 40 ms
/// to read back from zram and as long to page out again, measured here).
const STEP_FRAC: f64 = 1.0 / 16.0;

/// What the executor reads back and pages out again at a time: RAM a writeback holds at most
/// beyond what it found resident (linux `writeback::write_back`).
pub const PIECE_BYTES: u64 = 8 << 20;

pub fn run(ctx: &mut Ctx) {
    let Some(below) = ctx.preset.swap.writeback_below else { return };
    let Detection::Bands(_) = &ctx.preset.detection else { return };
    if ctx.state.screen_on || !ctx.preset.swap.swap_files {
        return;
    }
    // A piece read back is paged out again before the next is read: beyond what is there,
    // the writeback holds a piece at most, and gives back more than it takes.
    let floor = super::under_pressure::critical_floor(ctx) + PIECE_BYTES;
    let (orig, disksize) = zram_bytes(ctx);
    let over = orig.saturating_sub((disksize as f64 * ctx.preset.swap.cold_at_zram_used) as u64);
    if over < COLD_MIN_BYTES {
        return;
    }
    let mut unlikely: Vec<(u32, String, u64, f64)> = ctx
        .free_apps()
        .filter(|a| a.class > Class::Foreground && a.swap_bytes >= COLD_MIN_BYTES && !dry(ctx, a.pid))
        .map(|a| (a.pid, a.name.clone(), a.swap_bytes, ctx.p_return(a)))
        .filter(|(.., p)| *p < below)
        .collect();
    unlikely.sort_by(|x, y| {
        x.3.partial_cmp(&y.3).unwrap_or(std::cmp::Ordering::Equal).then(y.2.cmp(&x.2)).then(x.0.cmp(&y.0))
    });
    let Some((pid, name, swap_bytes, p)) = unlikely.into_iter().next() else { return };
    let bytes = swap_bytes.min(over).min(ctx.frac(STEP_FRAC));
    let room_above = ctx.input.snapshot.swap.room_above_zram().saturating_sub(ctx.cold_bytes);
    if room_above < bytes && !can_make_file_of_its_own(ctx, bytes) {
        let r = ctx.reason(Step::Writeback, format!("idle: '{name}' ({:.2} likely to be wanted soon) has {} in swap and zram is {} over {:.0} % full, but the storage swap the preset may add has no room for a file of its own", p, mib(swap_bytes), mib(over), ctx.preset.swap.cold_at_zram_used * 100.0));
        return ctx.quiet(r);
    }
    if ctx.available() < floor {
        let r = ctx.reason(Step::Writeback, format!("idle: '{name}' not written back from zram: available {} is under the critical band, its margin and a piece ({})", mib(ctx.available()), mib(floor)));
        return ctx.quiet(r);
    }
    let ratio = ctx.zram_ratio();
    let text = format!(
        "idle: move up to {} of '{name}' ({:.2} likely to be wanted soon, {} in swap) from zram to a storage file of its own: zram is {} over {:.0} % full, and its pool would give back about {}",
        mib(bytes),
        p,
        mib(swap_bytes),
        mib(over),
        ctx.preset.swap.cold_at_zram_used * 100.0,
        mib((bytes as f64 / ratio) as u64)
    );
    let reason = ctx
        .reason(Step::Writeback, text)
        .with("swap_bytes", swap_bytes as f64)
        .with("writeback_bytes", bytes as f64)
        .with("p_return", p);
    ctx.cold_bytes += bytes;
    ctx.push(
        ActionKind::Writeback { pid, app: name, max_pages: bytes.div_ceil(PAGE) },
        reason,
        (bytes as f64 / ratio) as u64,
    );
}

/// Whether the app's last writeback, since it was last in front, found little of it in zram.
fn dry(ctx: &Ctx, pid: u32) -> bool {
    ctx.state.writeback_dry.get(&pid) == Some(&ctx.state.stint(pid))
}
