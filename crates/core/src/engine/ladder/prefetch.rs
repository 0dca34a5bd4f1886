//! The app in front read back from swap (issue 11, "returns fast"): an app memorch keeps
//! alive rather than kill lives partly in zram (or storage swap), and every return that
//! touches a page of it there waits for the read; a killer's relaunched app is all in RAM,
//! so its returns in the rest of the session are hot. Once the user is back in an app (it is
//! in front), the rest of its swapped-out pages are read back into the swap cache
//! (`process_madvise(MADV_WILLNEED)`), as far as memory above the low band allows, so the
//! next returns of the session find them in RAM: the kernel's LRU then keeps the apps the
//! user switches between and pushes out the others, instead of the reverse.
//!
//! Once a stint in front (a page read back and dropped again is not read twice for the same
//! visit), never below the low band (reading back is what compression undoes: it must not
//! make the shortage the pressure step answers).
//!
//! Whole (`prefetch_whole`, [`whole_front`]): returns come in runs within a session, and
//! each return of an app with a large heap reads a new window of it, so an app kept partly
//! in swap comes back warm at every return of the session. Once its return is served (it
//! has been in front [`SERVED_MS`]), it is read back a piece a decision, as long as it is in
//! front, down to the critical band and its margin rather than the low band: what the
//! read-back takes, the device's own reclaim and the pressure step give back from the apps
//! in the background (the pressure step from the least likely first). A piece is small
//! ([`WHOLE_PIECE_FRAC`]) because the daemon answers nothing while it reads; a stint reads
//! at most [`WHOLE_STINT_FRAC`] of the domain, so pages the device takes again as they are
//! read are not read forever.
//!
//! At the return (`swap.ahead_at_return`, [`ahead_at_return`]): while the return is being
//! served, the app's own touches read its pages on storage swap one fault at a time, each
//! waiting for the device (25-47 µs a page on `realapps`, where those pages made memorch's
//! warm returns slow). As it comes to the front they are asked for all at once and not
//! waited for, so the device reads them together while the return runs and its touches find
//! them in the swap cache or on their way; zram's pages are left to its touches, which
//! decompress them as fast. Off by measurement: the returns then read far more pages than
//! they touch (docs/results.md).
//!
//! A read-back that found little of what it asked for in swap (learn.rs) is not asked again
//! until the app comes back to the front, in front or at idle: what is left of its swap is
//! where reading its memory does not reach, and each ask walks its page map for nothing.
//!
//! At idle ([`likely_at_idle`], `refill_idle`): with the screen off nobody waits, so the
//! swapped-out pages of the apps likeliest to be wanted in the next session (judged by
//! sessions, those in the most sessions) are read back, a step a decision, and the room for
//! them is made from the apps unlikely to be wanted (their coldest pages into swap), never
//! below what the idle step keeps for the next launch. Apps kept alive then wait in swap in the
//! order the user is least likely to want them, not in the order the last shortage found
//! them (on `realapps` the most visited JVM lost 285 MiB in the first launches' shortage, when
//! nothing was known of the user yet, and read ~20 MiB of it back at each return after).

use super::under_pressure::{critical_floor, low_floor};
use super::{mib, shrink, ActionKind, Ctx, Step, PAGE};
use crate::engine::model::App;
use crate::engine::preset::{Bands, Detection};
use crate::Class;

/// Less than this is not worth a call (nor a log line).
const MIN_BYTES: u64 = 4 << 20;

/// The most one idle decision reads back, as a share of the domain: a screen turned on stops
/// the work within a decision, and each step's room is measured again before the next.
const IDLE_STEP_FRAC: f64 = 1.0 / 16.0;

/// The most one idle period (screen off) reads back, as a share of the domain: each MiB read
/// back costs the unlikely apps more than a MiB pushed out (zram keeps a share of it), so an
/// idle period moves a bounded amount, and the next one carries on.
const IDLE_PERIOD_FRAC: f64 = 1.0 / 8.0;

/// How long an app is in front before [`whole_front`] reads it back: its return is served
/// by then (returns take 2-120 ms on `realapps`), so the read-back does not compete with it.
pub const SERVED_MS: u64 = 200;

/// What [`whole_front`] reads back in one decision, as a share of the domain (16 MiB on
/// 1 GiB: 25 ms of the daemon's time at the median on `realapps`, 217 ms at most).
const WHOLE_PIECE_FRAC: f64 = 1.0 / 64.0;

/// The most [`whole_front`] reads back of one app in one stint in front, as a share of the
/// domain.
const WHOLE_STINT_FRAC: f64 = 0.5;

pub fn run(ctx: &mut Ctx) {
    let Detection::Bands(b) = &ctx.preset.detection else { return };
    if !ctx.state.screen_on {
        return;
    }
    if ctx.preset.swap.ahead_at_return {
        let floor = whole_floor(ctx, b);
        ahead_at_return(ctx, floor);
    }
    if ctx.preset.prefetch_front {
        once_a_stint(ctx, b.low_available_frac);
    }
    if ctx.preset.prefetch_whole {
        let floor = whole_floor(ctx, b);
        whole_front(ctx, floor);
    }
}

/// How far down (available bytes) [`whole_front`] reads the app in front back: to the
/// critical band and its margin, or to the low band and its margin with
/// `whole_stops_at_low_band`. The pressure step's `low_band_spares_likely` spares the likely
/// apps above it.
pub fn whole_floor(ctx: &Ctx, b: &Bands) -> u64 {
    if b.whole_stops_at_low_band {
        low_floor(ctx)
    } else {
        critical_floor(ctx)
    }
}

/// The app in front read back once a stint, as much as memory above the low band (`low_frac`
/// of the domain) holds (`prefetch_front`).
fn once_a_stint(ctx: &mut Ctx, low_frac: f64) {
    let low = ctx.frac(low_frac);
    let front = front_in_swap(ctx);
    // What this decision reads back is no longer available to the next app in front.
    let mut taken = 0;
    for a in front {
        let stint = ctx.state.stint(a.pid);
        if ctx.state.prefetched.get(&a.pid) == Some(&stint) {
            continue;
        }
        let room = ctx.available().saturating_sub(low + taken);
        let bytes = a.swap_bytes.min(room);
        if bytes < MIN_BYTES {
            let r = ctx.reason(
                Step::Prefetch,
                format!(
                    "'{}' in front with {} in swap: not read back, available {} is at the low band {}",
                    a.name,
                    mib(a.swap_bytes),
                    mib(ctx.available()),
                    mib(low)
                ),
            );
            ctx.quiet(r);
            continue;
        }
        ctx.state.prefetched.insert(a.pid, stint);
        let text = format!(
            "'{}' in front: read back {} of its {} in swap while available {} is above the low band {}",
            a.name,
            mib(bytes),
            mib(a.swap_bytes),
            mib(ctx.available()),
            mib(low)
        );
        let reason = ctx
            .reason(Step::Prefetch, text)
            .with("swap_bytes", a.swap_bytes as f64)
            .with("prefetch_bytes", bytes as f64);
        ctx.push(ActionKind::Prefetch { pid: a.pid, app: a.name.clone(), max_pages: bytes / PAGE }, reason, 0);
        taken += bytes;
    }
}

/// The pages on storage swap of an app that comes to the front asked for at once
/// (`swap.ahead_at_return`), while its return is being served ([`SERVED_MS`]): the device
/// reads them together as the return touches them, where each touch would wait for it alone.
/// Once a stint in front, down to `floor` bytes available (what is asked and not touched is
/// clean swap cache, the first memory the kernel takes back), and only while a storage file
/// holds pages: from zram the app's own touch is as fast as any ask.
fn ahead_at_return(ctx: &mut Ctx, floor: u64) {
    if !ctx.input.snapshot.swap.storage_holds_pages() {
        return;
    }
    // What this decision asks for is no longer available to the next app in front.
    let mut taken = 0;
    for a in front_in_swap(ctx) {
        let stint = ctx.state.stint(a.pid);
        // Its return served, what is left is the whole read-back's.
        if ctx.state.asked_ahead.get(&a.pid) == Some(&stint) || in_front_ms(ctx, a.pid) >= SERVED_MS {
            continue;
        }
        let bytes = a.swap_bytes.min(ctx.available().saturating_sub(floor + taken));
        if bytes < MIN_BYTES {
            let r = ctx.reason(Step::Prefetch, format!("'{}' back in front with {} in swap: nothing asked for ahead, available {} is at the band and margin {}", a.name, mib(a.swap_bytes), mib(ctx.available()), mib(floor)));
            ctx.quiet(r);
            continue;
        }
        ctx.state.asked_ahead.insert(a.pid, stint);
        let text = format!("'{}' back in front with {} in swap: its pages on storage asked for at once, at most {} (available {}, down to {})", a.name, mib(a.swap_bytes), mib(bytes), mib(ctx.available()), mib(floor));
        let reason =
            ctx.reason(Step::Prefetch, text).with("swap_bytes", a.swap_bytes as f64).with("ahead_bytes", bytes as f64);
        ctx.push(ActionKind::ReadAhead { pid: a.pid, app: a.name.clone(), max_pages: bytes / PAGE }, reason, 0);
        taken += bytes;
    }
}

/// How long `pid` has been in front (since it last came to the front).
fn in_front_ms(ctx: &Ctx, pid: u32) -> u64 {
    ctx.input.now_ms.saturating_sub(ctx.state.last_front_ms.get(&pid).copied().unwrap_or(0))
}

/// The app in front read back whole, a piece a decision, once its return is served: down to
/// `floor` bytes available ([`whole_floor`]); the room comes back from the apps in the
/// background (the module's doc).
fn whole_front(ctx: &mut Ctx, floor: u64) {
    // What this decision reads back is no longer available to the next app in front.
    let mut taken = 0;
    // An app the once-a-stint step reads back in this decision (both switched on) is left
    // to it.
    for a in front_in_swap(ctx) {
        if ctx.is_touched(a.pid) {
            continue;
        }
        let stint = ctx.state.stint(a.pid);
        if read_back_dry(ctx, a.pid) {
            let r = ctx.reason(Step::Prefetch, format!("'{}' in front with {} in swap: not read back, its last read-back found little of it to read (swap it does not map privately)", a.name, mib(a.swap_bytes)));
            ctx.quiet(r);
            continue;
        }
        let in_front_ms = in_front_ms(ctx, a.pid);
        if in_front_ms < SERVED_MS {
            let r = ctx.reason(
                Step::Prefetch,
                format!(
                    "'{}' in front with {} in swap: its return is being served ({in_front_ms} ms in front)",
                    a.name,
                    mib(a.swap_bytes)
                ),
            );
            ctx.quiet(r);
            continue;
        }
        let done = read_back_whole_this_stint(ctx, a.pid);
        let left = ctx.frac(WHOLE_STINT_FRAC).saturating_sub(done);
        let floor = floor.max(favourites_floor(ctx, a)).max(rare_pay_floor(ctx)).max(churn_floor(ctx));
        let bytes =
            a.swap_bytes.min(ctx.frac(WHOLE_PIECE_FRAC)).min(left).min(ctx.available().saturating_sub(floor + taken));
        if bytes < MIN_BYTES {
            let why = if left < MIN_BYTES {
                format!("read back {} this stint already", mib(done))
            } else {
                format!("available {} is at the band and margin {} it reads down to", mib(ctx.available()), mib(floor))
            };
            let r = ctx.reason(
                Step::Prefetch,
                format!("'{}' in front with {} in swap: not read back, {why}", a.name, mib(a.swap_bytes)),
            );
            ctx.quiet(r);
            continue;
        }
        ctx.state.read_back_whole.insert(a.pid, (stint, done + bytes));
        let text = format!(
            "'{}' in front, its return served: read back {} of its {} in swap (available {}, down to {})",
            a.name,
            mib(bytes),
            mib(a.swap_bytes),
            mib(ctx.available()),
            mib(floor)
        );
        let reason = ctx
            .reason(Step::Prefetch, text)
            .with("swap_bytes", a.swap_bytes as f64)
            .with("prefetch_bytes", bytes as f64);
        ctx.push(ActionKind::Prefetch { pid: a.pid, app: a.name.clone(), max_pages: bytes / PAGE }, reason, 0);
        taken += bytes;
    }
}

/// With `whole_below_low_favourites_only`, the floor of the whole read-back of an app that is
/// not a favourite ([`super::FAVOURITE_POPULARITY`]): the low band and its margin, so that it
/// takes no room the apps in the background would pay for. 0 otherwise.
fn favourites_floor(ctx: &Ctx, a: &App) -> u64 {
    match &ctx.preset.detection {
        Detection::Bands(b) if b.whole_below_low_favourites_only && ctx.popularity(a) < super::FAVOURITE_POPULARITY => {
            low_floor(ctx)
        }
        _ => 0,
    }
}

/// With `whole_stops_when_churning`, while the apps in use go round through swap, the floor
/// of the whole read-back: the low band and its margin. 0 otherwise.
fn churn_floor(ctx: &Ctx) -> u64 {
    match &ctx.preset.detection {
        Detection::Bands(b) if b.whole_stops_when_churning && super::kill::read_back_churns(ctx).is_some() => {
            low_floor(ctx)
        }
        _ => 0,
    }
}

/// With `whole_paid_by_rare`, the floor of the whole read-back: the low band and its margin,
/// less what the rarely visited apps can still give (the pressure step takes from them only
/// while the read-back goes on, [`whole_paid_now`]). 0 otherwise.
fn rare_pay_floor(ctx: &Ctx) -> u64 {
    let Detection::Bands(b) = &ctx.preset.detection else { return 0 };
    if !b.whole_paid_by_rare {
        return 0;
    }
    let min_class = ctx.preset.compaction.as_ref().and_then(|c| c.pressure_min_class).unwrap_or(Class::Cached);
    let low = low_floor(ctx);
    // The payers' room is counted from the snapshot, what this decision's squeezes take of
    // it included; what they free is in `available` already, so it lifts the floor as much
    // (and a favourite's squeeze in this decision pays for no read-back).
    let projected = ctx.available().saturating_sub(ctx.input.snapshot.memory.available_bytes);
    (low + projected).saturating_sub(shrink::capacity_of(ctx, min_class, |a| is_rare(ctx, a)))
}

/// An app that pays for the whole read-back with `whole_paid_by_rare`: brought to the front
/// less than half as often as the most visited app running.
pub fn is_rare(ctx: &Ctx, a: &App) -> bool {
    ctx.front_share(a) < super::FAVOURITE_POPULARITY
}

/// With `whole_paid_by_rare`, whether an app in front is being read back whole (some of it
/// read since it came to the front): then only the rarely visited apps pay for a shortage
/// above the read-back's floor.
pub fn whole_paid_now(ctx: &Ctx) -> bool {
    let Detection::Bands(b) = &ctx.preset.detection else { return false };
    b.whole_paid_by_rare
        && ctx.free_apps().any(|a| a.class == Class::Foreground && read_back_whole_this_stint(ctx, a.pid) > 0)
}

/// What [`whole_front`] has read back of `pid` since it last came to the front.
fn read_back_whole_this_stint(ctx: &Ctx, pid: u32) -> u64 {
    match ctx.state.read_back_whole.get(&pid) {
        Some(&(s, bytes)) if s == ctx.state.stint(pid) => bytes,
        _ => 0,
    }
}

/// Whether the app's last read-back, since it was last in front, found little to read.
fn read_back_dry(ctx: &Ctx, pid: u32) -> bool {
    ctx.state.read_back_dry.get(&pid) == Some(&ctx.state.stint(pid))
}

/// The apps in front with enough in swap to read back.
fn front_in_swap<'a>(ctx: &Ctx<'a>) -> Vec<&'a App> {
    ctx.free_apps().filter(|a| a.class == Class::Foreground && a.swap_bytes >= MIN_BYTES).collect()
}

/// At idle, read back the swapped-out pages of the background app likeliest to be wanted
/// in the next session ([`next_session_chance`]), at most [`IDLE_STEP_FRAC`] of the domain a
/// decision and [`IDLE_PERIOD_FRAC`] an idle period, keeping `floor` bytes (and the low band
/// and its margin) available: what is missing is first freed from apps less likely to be
/// wanted (by sessions, those in half its share of sessions or fewer).
pub fn likely_at_idle(ctx: &mut Ctx, floor: u64) {
    let Detection::Bands(_) = &ctx.preset.detection else { return };
    if ctx.state.screen_on {
        return;
    }
    let floor = floor.max(low_floor(ctx));
    let by_sessions = judged_by_sessions(ctx);
    let mut likely: Vec<(u32, String, u64, f64)> = ctx
        .free_apps()
        .filter(|a| a.class > Class::Foreground && a.swap_bytes >= MIN_BYTES && !read_back_dry(ctx, a.pid))
        .map(|a| (a.pid, a.name.clone(), a.swap_bytes, next_session_chance(ctx, a)))
        .filter(|(.., p)| *p >= if by_sessions { NEXT_SESSION_LIKELY } else { shrink::LIKELY_RETURN })
        .collect();
    likely.sort_by(|x, y| y.3.partial_cmp(&x.3).unwrap_or(std::cmp::Ordering::Equal).then(x.0.cmp(&y.0)));
    let Some((pid, name, swap_bytes, p)) = likely.into_iter().next() else { return };
    let left = ctx.frac(IDLE_PERIOD_FRAC).saturating_sub(ctx.state.refilled_bytes);
    let want = swap_bytes.min(ctx.frac(IDLE_STEP_FRAC)).min(left);
    if want < MIN_BYTES {
        return;
    }
    let short = (floor + want).saturating_sub(ctx.available());
    if short > 0 {
        let min_class = ctx.preset.compaction.as_ref().and_then(|c| c.idle_min_class).unwrap_or(Class::Cached);
        if by_sessions {
            let why = format!("idle: room to read back '{name}' (in {:.0} % of the sessions, {} in swap) from the apps in half as many or fewer", p * 100.0, mib(swap_bytes));
            shrink::free_from(ctx, Step::Prefetch, min_class, short, None, &why, &|c: &Ctx, a: &App| {
                a.pid != pid && next_session_chance(c, a) <= p / 2.0
            });
        } else {
            let why = format!(
                "idle: room to read back '{name}' ({:.0} % likely to be wanted soon, {} in swap)",
                p * 100.0,
                mib(swap_bytes)
            );
            shrink::free_below(ctx, Step::Prefetch, min_class, short, None, &why, Some(shrink::LIKELY_RETURN));
        }
    }
    let bytes = want.min(ctx.available().saturating_sub(floor));
    if bytes < MIN_BYTES {
        let r = ctx.reason(
            Step::Prefetch,
            format!(
                "idle: '{name}' has {} in swap, but nothing less likely to be wanted gives room above {}",
                mib(swap_bytes),
                mib(floor)
            ),
        );
        return ctx.quiet(r);
    }
    let chance = if by_sessions {
        format!("in {:.0} % of the sessions", p * 100.0)
    } else {
        format!("{:.0} % likely to be wanted soon", p * 100.0)
    };
    let text = format!(
        "idle: read back {} of the {} in swap of '{name}', {chance}, keeping {} available",
        mib(bytes),
        mib(swap_bytes),
        mib(floor)
    );
    let reason = ctx
        .reason(Step::Prefetch, text)
        .with("swap_bytes", swap_bytes as f64)
        .with("prefetch_bytes", bytes as f64)
        .with("p_return", p);
    ctx.state.refilled_bytes += bytes;
    ctx.push(ActionKind::Prefetch { pid, app: name, max_pages: bytes / PAGE }, reason, 0);
}

/// The share of sessions an app must have been in for the idle read-back to take it as
/// likely in the next one (with `kill.return_by_sessions`): on `realapps` (LSApp's 2.18 apps
/// a session, Zipf popularity over 12 apps) the two or three most used apps.
const NEXT_SESSION_LIKELY: f64 = 0.25;

/// Whether the idle read-back judges the next session by the sessions seen
/// (`kill.return_by_sessions`, once a screen-off has divided use into two sessions or more).
fn judged_by_sessions(ctx: &Ctx) -> bool {
    ctx.preset.kill.return_by_sessions && ctx.state.stats.sessions >= 2
}

/// How likely `a` is to be wanted in the next session, judged with the screen off. By
/// sessions ([`judged_by_sessions`]): the share of the sessions it was in. The session in
/// progress for [`Ctx::p_return`] is the one the screen-off ended, and its apps are no
/// likelier to open the next than their share says (on `realapps` the apps of the session
/// before a return were hot at 72 of 83 first returns of a session anyway, those not in it
/// warm at 103 of 178: `scripts/returns-by-session.py`). With `kill.next_session_learned`,
/// the chance learned from how the sessions seen followed each other
/// ([`crate::engine::stats::Stats::next_session_chance`]), which says so of such a user and
/// keeps the ended session's apps likely for one who goes on with them. Otherwise its chance
/// of a return soon.
fn next_session_chance(ctx: &Ctx, a: &App) -> f64 {
    let stats = &ctx.state.stats;
    match (judged_by_sessions(ctx), ctx.preset.kill.next_session_learned) {
        (true, true) => stats.next_session_chance(&a.name),
        (true, false) => stats.session_share(&a.name),
        (false, _) => ctx.p_return(a),
    }
}
