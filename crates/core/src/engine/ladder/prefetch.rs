//! The app in front read back from swap (`prefetch_whole`): an app memorch keeps alive rather than kill lives partly in
//! zram (or storage swap), and every return that touches a page of it there waits for the read; a killer's relaunched
//! app is all in RAM, so its returns in the rest of the session are hot. Returns come in runs within a session, so once
//! a return is served (the app has been in front [`SERVED_MS`]) the rest of its swapped-out pages are read back a piece
//! a decision, as long as it is in front, down to the critical band and its margin: what the read-back takes, the
//! device's own reclaim and the pressure step give back from the apps in the background (the least likely first).
//!
//! A piece is small ([`WHOLE_PIECE_FRAC`]) because the daemon answers nothing while it reads; a stint reads at most
//! [`WHOLE_STINT_FRAC`] of the domain, so pages the device takes again as they are read are not read forever. A
//! read-back that found little of what it asked for (learn.rs) is not asked again until the app comes back to the
//! front.

use super::ctx::Ctx;
use super::shortage::critical_floor;
use crate::engine::model::App;
use crate::engine::model::{mib, ActionKind, Step, PAGE};
use crate::engine::preset::Detection;
use crate::Class;

/// Less than this is not worth a call (nor a log line).
const MIN_BYTES: u64 = 4 << 20;

/// How long an app is in front before it is read back: its return is served by then (returns take 2-120 ms on
/// `realapps`), so the read-back does not compete with it.
pub const SERVED_MS: u64 = 200;

/// What one decision reads back, as a share of the domain (16 MiB on 1 GiB: 25 ms of the daemon's time at the median on
/// `realapps`, 217 ms at most).
const WHOLE_PIECE_FRAC: f64 = 1.0 / 64.0;

/// The most read back of one app in one stint in front, as a share of the domain.
const WHOLE_STINT_FRAC: f64 = 0.5;

pub fn run(ctx: &mut Ctx) {
    let Detection::Bands(_) = &ctx.preset.detection else { return };
    if !ctx.state.screen_on || !ctx.preset.prefetch_whole {
        return;
    }
    let floor = critical_floor(ctx);
    // What this decision reads back is no longer available to the next app in front.
    let mut taken = 0;
    // An app another step of this decision acts on (a kill) is left to it.
    let front: Vec<&App> = front_in_swap(ctx).into_iter().filter(|a| !ctx.is_touched(a.pid)).collect();
    for a in front {
        if let Some(bytes) = whole_piece(ctx, a, floor, taken) {
            taken += bytes;
        }
    }
}

/// One piece of `a`'s read-back, down to `floor` bytes available less what this decision already takes; the bytes it
/// reads, or `None` (with the reason noted) if none.
fn whole_piece(ctx: &mut Ctx, a: &App, floor: u64, taken: u64) -> Option<u64> {
    let stint = ctx.state.stint(a.pid);
    let in_front_ms = ctx.input.now_ms.saturating_sub(ctx.state.last_front_ms.get(&a.pid).copied().unwrap_or(0));
    let done = read_back_this_stint(ctx, a.pid);
    let left = ctx.frac(WHOLE_STINT_FRAC).saturating_sub(done);
    let bytes =
        a.swap_bytes.min(ctx.frac(WHOLE_PIECE_FRAC)).min(left).min(ctx.available().saturating_sub(floor + taken));
    let why_not = if ctx.state.read_back_dry.get(&a.pid) == Some(&stint) {
        Some("its last read-back found little of it to read (swap it does not map privately)".to_string())
    } else if in_front_ms < SERVED_MS {
        Some(format!("its return is being served ({in_front_ms} ms in front)"))
    } else if left < MIN_BYTES {
        Some(format!("read back {} this stint already", mib(done)))
    } else if bytes < MIN_BYTES {
        Some(format!("available {} is at the band and margin {} it reads down to", mib(ctx.available()), mib(floor)))
    } else {
        None
    };
    if let Some(why) = why_not {
        let r = ctx.reason(
            Step::Prefetch,
            format!("'{}' in front with {} in swap: not read back, {why}", a.name, mib(a.swap_bytes)),
        );
        ctx.quiet(r);
        return None;
    }
    let text = format!(
        "'{}' in front, its return served: read back {} of its {} in swap (available {}, down to {})",
        a.name,
        mib(bytes),
        mib(a.swap_bytes),
        mib(ctx.available()),
        mib(floor)
    );
    let reason =
        ctx.reason(Step::Prefetch, text).with("swap_bytes", a.swap_bytes as f64).with("prefetch_bytes", bytes as f64);
    ctx.push(ActionKind::Prefetch { pid: a.pid, app: a.name.clone(), max_pages: bytes / PAGE }, reason, 0);
    Some(bytes)
}

/// What has been read back of `pid` since it last came to the front.
fn read_back_this_stint(ctx: &Ctx, pid: u32) -> u64 {
    match ctx.state.read_back_whole.get(&pid) {
        Some(&(s, bytes)) if s == ctx.state.stint(pid) => bytes,
        _ => 0,
    }
}

/// The apps in front with enough in swap to read back.
fn front_in_swap<'a>(ctx: &Ctx<'a>) -> Vec<&'a App> {
    ctx.free_apps().filter(|a| a.class == Class::Foreground && a.swap_bytes >= MIN_BYTES).collect()
}
