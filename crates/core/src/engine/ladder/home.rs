//! Step 2, home / between apps: bring free memory up to the launch threshold (MOS phase 1): page cache first, then app
//! cache: MOS kills cached apps for the rest; memorch compresses them instead.

use super::ctx::Ctx;
use crate::engine::input::Input;
use crate::engine::model::{mib, ActionKind, Event, Step, PAGE};
use crate::engine::preset::Preset;
use crate::engine::state::State;
use crate::engine::victims::Candidate;
use crate::Class;

/// Page cache MOS's phase 1 leaves: a share of the domain (the launcher's and the app in front's own files).
const PAGE_CACHE_FLOOR_FRAC: f64 = 0.02;

/// The reason field of MOS's reclaim steps: the page count its next call starts from.
pub const MOS_NEXT_PAGES: &str = "mos_next_pages";

/// Before a decision: MOS's reclaim count starts again once free memory is at the launch threshold when the user goes
/// home (`thresReclaimPageCount` doubles while the need remains).
pub fn observe(state: &mut State, preset: &Preset, input: &Input) {
    let Some(ahead) = preset.ahead.as_ref().filter(|a| a.doubling_start_pages.is_some()) else { return };
    let home = input.events.iter().any(|e| matches!(e, Event::Home));
    let m = &input.snapshot.memory;
    if home && m.free_bytes >= (m.total_bytes as f64 * ahead.threshold_frac) as u64 {
        state.mos_reclaim_pages = None;
    }
}

pub fn run(ctx: &mut Ctx) {
    if ctx.has_event(|e| matches!(e, Event::Home)) {
        phase1(ctx, Step::Home);
    }
}

/// MOS Algorithm 1, doMosPhase1: memToReclaim = tLmk − free; page cache (above its floor) first, in reclaim steps that
/// double (MOS) or at once (memorch); the rest from app cache.
pub fn phase1(ctx: &mut Ctx, step: Step) {
    let Some(ahead) = ctx.preset.ahead.clone() else { return };
    let threshold = ctx.frac(ahead.threshold_frac);
    let need = threshold.saturating_sub(ctx.free());
    // A need under one compaction step is the wobble of the group's usage (a v1 memcg's counts the charges each CPU
    // keeps in stock), not memory taken: chased, it was a reclaim of ~1 MiB every tick of an idle screen that freed
    // nothing the next look saw (realapps: 20 in 5 s). MOS has no compaction steps and reclaims whatever is short, as
    // its paper does.
    let min_step = ctx.preset.compaction.as_ref().map_or(0, |c| c.min_step_pages) * PAGE;
    if need > 0 && need < min_step {
        ctx.quiet(ctx.reason(
            step,
            format!("free {} is within a step of the launch threshold {}", mib(ctx.free()), mib(threshold)),
        ));
        return;
    }
    if need == 0 {
        // MOS's reclaim count starts again (observe, below).
        ctx.quiet(ctx.reason(step, format!("free {} is at the launch threshold {}", mib(ctx.free()), mib(threshold))));
        return;
    }
    let from_cache = reclaim_page_cache(ctx, step, need, threshold, ahead.doubling_start_pages);
    let rest = need - from_cache;
    if rest == 0 {
        return;
    }
    if ahead.home_kills {
        let cands = ctx.candidates(Class::Cached);
        let victims = greedy_prefix(&cands, rest);
        let r = ctx.reason(
            step,
            format!("MOS phase 1: {} more than page cache gives: kill cached apps with the highest oom_adj", mib(rest)),
        );
        ctx.kill(victims, rest, Class::Cached, r);
    } else {
        super::shrink::free(ctx, step, Class::Cached, rest, None, "reach the launch threshold");
    }
}

/// Page cache above its floor reclaimed for `need`, in steps that double from `doubling` pages (MOS: reclaimPageCache,
/// then thresReclaimPageCount ×2), or at once; the bytes asked.
fn reclaim_page_cache(ctx: &mut Ctx, step: Step, need: u64, threshold: u64, doubling: Option<u64>) -> u64 {
    let from_cache = need.min(ctx.file_bytes().saturating_sub(ctx.frac(PAGE_CACHE_FLOOR_FRAC)));
    if from_cache == 0 {
        return 0;
    }
    let Some(start) = doubling else {
        let text = format!(
            "bring free memory to the launch threshold {}: reclaim {} of page cache first",
            mib(threshold),
            mib(from_cache)
        );
        let r = ctx.reason(step, text).with("threshold_bytes", threshold as f64);
        ctx.push(ActionKind::Reclaim { bytes: from_cache }, r, from_cache);
        return from_cache;
    };
    let mut left = from_cache;
    let mut pages = ctx.state.mos_reclaim_pages.unwrap_or(start);
    while left > 0 {
        let bytes = left.min(pages * PAGE);
        let text = format!("MOS phase 1: reclaim {} of page cache ({} pages a step, doubling)", mib(bytes), pages);
        pages *= 2;
        // The count the next call starts from, once this reclaim is done (learn.rs).
        let r = ctx.reason(step, text).with("threshold_bytes", threshold as f64).with(MOS_NEXT_PAGES, pages as f64);
        ctx.push(ActionKind::Reclaim { bytes }, r, bytes);
        left -= bytes;
    }
    from_cache
}

/// MOS reclaimAppCache: kill the highest-oom_adj apps until the total reaches the request.
pub fn greedy_prefix<'a>(ordered: &[Candidate<'a>], target: u64) -> Vec<Candidate<'a>> {
    let mut sum = 0;
    ordered
        .iter()
        .take_while(|c| {
            let take = sum < target;
            sum += c.freeable_bytes;
            take
        })
        .cloned()
        .collect()
}
