//! Android lmkd's PSI strategy, in the order of AOSP lmkd's `mp_event_psi`: it runs on a PSI trigger and on each poll
//! after one (the daemon polls every 100 ms, 10 ms while a victim dies or swap is low: `wake::poll_interval_ms`), and
//! on a victim's death. While a victim is still dying it waits; with no reclaim and no new refaults it stops there;
//! else it weighs, first to last: pressure right after a kill (free below the low watermark), a complete stall, low
//! swap with thrashing, low swap with free below the high watermark, thrashing with free below the high watermark,
//! thrashing in direct reclaim. Thrashing is file refaults since the window began as a share of the file LRU at its
//! start, a window a second, the share of an over-limit window carried into the next, halved a window; the limit is cut
//! after each thrashing kill and restored when a window ends. One victim (the least recently used of the least
//! important class; from perceptible up the heaviest), then wait for it to die. SWAM's EOOM killer runs on the same
//! triggers with its own victim order, and kills also on a low watermark alone.

use super::ctx::Ctx;
use crate::engine::input::Input;
use crate::engine::model::Event;
use crate::engine::model::{mib, PressureLevel, Step, PAGE};
use crate::engine::preset::{Detection, KillMode, Lmkd, Preset};
use crate::engine::state::{LmkdLook, LmkdState, State};
use crate::Class;

/// The reason field that marks a kill for thrashing (its limit decays once it is done).
pub const THRASH_KILL: &str = "thrash_kill";

impl Lmkd {
    /// `ro.config.low_ram`: a domain of at most `low_ram_bytes`.
    pub fn low_ram(&self, total_bytes: u64) -> bool {
        total_bytes <= self.low_ram_bytes
    }

    /// The partial-stall trigger for a domain of this size.
    pub fn partial_stall_us(&self, total_bytes: u64) -> u64 {
        self.psi_partial_stall_low_ram_us.filter(|_| self.low_ram(total_bytes)).unwrap_or(self.psi_partial_stall_us)
    }

    pub fn thrashing_base_pct(&self, total_bytes: u64) -> f64 {
        if self.low_ram(total_bytes) {
            self.thrashing_limit_low_ram_pct
        } else {
            self.thrashing_limit_pct
        }
    }

    pub fn thrashing_decay(&self, total_bytes: u64) -> f64 {
        self.thrashing_decay_low_ram_pct.filter(|_| self.low_ram(total_bytes)).unwrap_or(self.thrashing_decay_pct)
    }
}

/// The watermark free memory is below, as lmkd's `get_lowest_watermark` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Wmark {
    Min,
    Low,
    High,
    None,
}

/// Before a decision (a poll's too): when lmkd looks now (on a trigger, a poll after one, a victim's death; not while a
/// victim is still dying), what the counters say since its last look and the thrashing of the window
/// (`LmkdState::look`; `None` when it does not look).
pub fn observe(state: &mut State, preset: &Preset, input: &Input) {
    state.lmkd.look = None;
    let Detection::Psi(l) = &preset.detection else { return };
    let event = pressure_event(input);
    let looks = event.is_some() || input.events.iter().any(|e| matches!(e, Event::Poll | Event::VictimGone { .. }));
    let dying = state.pending_kill.as_ref().is_some_and(|(_, at)| input.now_ms.saturating_sub(*at) < l.kill_timeout_ms);
    if preset.kill.mode == KillMode::Never || !looks || dying {
        return;
    }
    let r = observe_reclaim(state, input);
    let weighs = r.direct || r.background || r.new_refaults || r.after_kill || event.is_some();
    let thrashing = if weighs { thrashing_pct(state, l, &r, input) } else { 0.0 };
    state.lmkd.look = Some(LmkdLook { thrashing, ..r });
}

/// The strongest pressure event of the input.
fn pressure_event(input: &Input) -> Option<PressureLevel> {
    input.events.iter().filter_map(|e| if let Event::Pressure { level } = e { Some(*level) } else { None }).max()
}

pub fn run(ctx: &mut Ctx) {
    let Detection::Psi(l) = ctx.preset.detection.clone() else { return };
    if ctx.preset.kill.mode == KillMode::Never {
        return;
    }
    // lmkd runs on its triggers, its polls after one, and a victim's death; not on every look.
    let event = ctx.pressure_event();
    if event.is_none() && !ctx.has_event(|e| matches!(e, Event::Poll | Event::VictimGone { .. })) {
        return;
    }
    if ctx.kill_pending(l.kill_timeout_ms) {
        ctx.quiet(ctx.reason(Step::Lmkd, "a victim is still dying: one kill, then wait"));
        return;
    }
    let Some(look) = ctx.state.lmkd.look else { return };
    if !look.direct && !look.background && !look.new_refaults && !look.after_kill && event.is_none() {
        ctx.quiet(ctx.reason(Step::Lmkd, "no reclaim and no new refaults since the last look"));
        return;
    }
    match why_kill(ctx, &l, event, &look) {
        Ok(why) => kill_one(ctx, &l, why, look.thrashing),
        Err(quiet) => ctx.quiet(ctx.reason(Step::Lmkd, quiet)),
    }
}

fn observe_reclaim(state: &mut State, input: &Input) -> LmkdLook {
    let now = input.now_ms;
    let counters = &input.snapshot.counters;
    let refaults = counters.refault_file_pages.unwrap_or(0);
    let m = &input.snapshot.memory;
    let file_lru = (m.file_active_bytes + m.file_inactive_bytes) / PAGE;
    let direct = counters.direct_reclaims;
    // Reclaim work other than direct: scans where the domain counts them (the machine's kswapd); a v1 memcg counts
    // none, so pages going to swap stand for it.
    let background = counters.scan_pages.or(Some(m.swap_used_bytes / PAGE));
    let s = &mut state.lmkd;
    // The first look after a kill: the file LRU and refaults are measured afresh.
    let after_kill = std::mem::take(&mut s.killing);
    if after_kill {
        s.base_file_lru = file_lru;
        s.window_start_refaults = refaults;
        s.window_start_ms = now;
        s.prev_thrash_growth = 0.0;
    }
    let grew = |now: Option<u64>, before: Option<u64>| now.zip(before).is_some_and(|(n, b)| n > b);
    let r = LmkdLook {
        direct: grew(direct, s.direct_reclaims),
        background: grew(background, s.background_reclaim),
        new_refaults: s.prev_refaults != Some(refaults),
        after_kill,
        refaults,
        file_lru,
        thrashing: 0.0,
    };
    s.direct_reclaims = direct.or(s.direct_reclaims);
    s.background_reclaim = background.or(s.background_reclaim);
    s.prev_refaults = Some(refaults);
    r
}

/// Thrashing over the current window (file refaults as % of the file LRU at its start), with what an earlier over-limit
/// window carried, halved a window; a window that ends restores the limit.
fn thrashing_pct(state: &mut State, l: &Lmkd, r: &LmkdLook, input: &Input) -> f64 {
    let now = input.now_ms;
    let base = l.thrashing_base_pct(input.snapshot.memory.total_bytes);
    let s = &mut state.lmkd;
    let limit = s.limit_pct.unwrap_or(base);
    let since = now.saturating_sub(s.window_start_ms);
    let growth = |s: &LmkdState| {
        r.refaults.saturating_sub(s.window_start_refaults) as f64 * 100.0 / (s.base_file_lru + 1) as f64
    };
    let mut thrashing = 0.0;
    if !s.started || since > l.thrashing_window_ms {
        if s.started {
            let g = growth(s);
            let windows = (since / l.thrashing_window_ms.max(1)).max(1);
            s.prev_thrash_growth =
                if windows > 1 || g < limit { g / f64::powi(2.0, windows.min(60) as i32) } else { g };
            s.limit_pct = None;
        }
        s.started = true;
        s.base_file_lru = r.file_lru;
        s.window_start_refaults = r.refaults;
        s.window_start_ms = now;
    } else {
        thrashing = growth(s);
    }
    thrashing + s.prev_thrash_growth
}

/// Why kill, as `mp_event_psi` weighs it, first to last: the least important class that may die, the reason, and
/// whether it is a thrashing kill; or why not.
fn why_kill(ctx: &Ctx, l: &Lmkd, event: Option<PressureLevel>, r: &LmkdLook) -> Result<(Class, String, bool), String> {
    let thrashing = r.thrashing;
    let base = l.thrashing_base_pct(ctx.total());
    let limit = ctx.state.lmkd.limit_pct.unwrap_or(base);
    let critical = thrashing >= 2.0 * base;
    let swap_low = crate::engine::wake::swap_low(&ctx.input.snapshot.swap, l.swap_free_low_pct);
    let free = ctx.free();
    let wmark = watermark(ctx, l, free);
    let class = |heavy: bool| if heavy { l.min_class_critical } else { l.min_class_thrashing };
    Ok(if r.after_kill && wmark < Wmark::Low {
        (l.min_class_critical, format!("free {} below the low watermark even after a kill", mib(free)), false)
    } else if event == Some(PressureLevel::Complete) {
        (l.min_class_critical, "the device is not responding: complete stall".to_string(), false)
    } else if swap_low && thrashing > base {
        (
            class(wmark == Wmark::Min || critical),
            format!("low on swap and thrashing {thrashing:.0} % > {base:.0} %"),
            false,
        )
    } else if swap_low && wmark < Wmark::High {
        (
            class(wmark == Wmark::Min || critical),
            format!("free {} below the high watermark and swap low", mib(free)),
            false,
        )
    } else if wmark < Wmark::High && thrashing > limit {
        let why = format!("free {} below the high watermark and thrashing {thrashing:.0} % > {limit:.0} %", mib(free));
        (class(critical), why, true)
    } else if r.direct && thrashing > limit {
        (class(critical), format!("in direct reclaim and thrashing {thrashing:.0} % > {limit:.0} %"), true)
    } else if let Some(c) = l.min_class_low_memory.filter(|_| wmark < Wmark::Low) {
        (c, format!("free {} below the low watermark", mib(free)), false)
    } else {
        return Err(format!(
            "free {} is above the watermarks or nothing thrashes ({thrashing:.0} % of {limit:.0} %)",
            mib(free)
        ));
    })
}

/// The lowest watermark `free` is under.
fn watermark(ctx: &Ctx, l: &Lmkd, free: u64) -> Wmark {
    if free < ctx.frac(l.wmark_min_frac) {
        Wmark::Min
    } else if free < ctx.frac(l.wmark_low_frac) {
        Wmark::Low
    } else if free < ctx.frac(l.wmark_high_frac) {
        Wmark::High
    } else {
        Wmark::None
    }
}

/// One victim of at least `min_class`, to free memory up to the high watermark. The limit is cut once the kill is done
/// (Engine::learn), for a thrashing kill only.
fn kill_one(ctx: &mut Ctx, l: &Lmkd, (min_class, why, thrash_kill): (Class, String, bool), thrashing: f64) {
    let limit = ctx.state.lmkd.limit_pct.unwrap_or(l.thrashing_base_pct(ctx.total()));
    let Some(victim) = ctx.candidates(min_class).into_iter().next() else {
        ctx.quiet(ctx.reason(Step::Lmkd, format!("{why}, but no app of class {min_class} or less important to kill")));
        return;
    };
    let r = ctx
        .reason(Step::Lmkd, format!("{why}: kill one app of class {min_class} or less important"))
        .with("thrashing_pct", thrashing)
        .with("thrashing_limit_pct", limit)
        .with(THRASH_KILL, if thrash_kill { 1.0 } else { 0.0 });
    let target = ctx.frac(l.wmark_high_frac).saturating_sub(ctx.free());
    ctx.kill(vec![victim], target, min_class, r);
}
