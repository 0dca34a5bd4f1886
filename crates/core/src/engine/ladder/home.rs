//! Step 2, home / between apps: bring free memory up to the launch threshold (MOS phase 1):
//! page cache first, then app cache: MOS kills cached apps for the rest; memorch compresses
//! them instead.

use super::{mib, ActionKind, CompactScope, Ctx, Event, Step, PAGE};
use crate::engine::model::App;
use crate::engine::victims::Candidate;
use crate::Class;

pub fn run(ctx: &mut Ctx) {
    if ctx.has_event(|e| matches!(e, Event::Home)) {
        phase1(ctx, Step::Home);
    }
}

/// MOS Algorithm 1, doMosPhase1: memToReclaim = tLmk − free; page cache (above its floor)
/// first, in reclaim steps that double (MOS) or at once (memorch); the rest from app cache.
pub fn phase1(ctx: &mut Ctx, step: Step) {
    let Some(ahead) = ctx.preset.ahead.clone() else { return };
    if !ahead.home {
        return;
    }
    let threshold = ctx.frac(ahead.threshold_frac);
    let need = threshold.saturating_sub(ctx.free());
    if need == 0 {
        ctx.state.mos_reclaim_pages = None;
        ctx.quiet(ctx.reason(step, format!("free {} is at the launch threshold {}", mib(ctx.free()), mib(threshold))));
        return;
    }
    let floor = ctx.frac(ahead.page_cache_floor_frac);
    let from_cache = need.min(ctx.file_bytes().saturating_sub(floor));
    if from_cache > 0 {
        match ahead.doubling_start_pages {
            Some(start) => {
                // MOS: reclaimPageCache, then thresReclaimPageCount ×2, until the need is met.
                let mut left = from_cache;
                let mut pages = ctx.state.mos_reclaim_pages.unwrap_or(start);
                while left > 0 {
                    let bytes = left.min(pages * PAGE);
                    let r = ctx.reason(step, format!("MOS phase 1: reclaim {} of page cache ({} pages a step, doubling)", mib(bytes), pages)).with("threshold_bytes", threshold as f64);
                    ctx.push(ActionKind::Reclaim { bytes }, r, bytes);
                    left -= bytes;
                    pages *= 2;
                }
                ctx.state.mos_reclaim_pages = Some(pages);
            }
            None => {
                let r = ctx
                    .reason(step, format!("bring free memory to the launch threshold {}: reclaim {} of page cache first", mib(threshold), mib(from_cache)))
                    .with("threshold_bytes", threshold as f64);
                ctx.push(ActionKind::Reclaim { bytes: from_cache }, r, from_cache);
            }
        }
    }
    let rest = need - from_cache;
    if rest == 0 {
        return;
    }
    if ahead.home_kills {
        let cands = ctx.candidates(Class::Cached);
        let victims = greedy_prefix(&cands, rest);
        let r = ctx.reason(step, format!("MOS phase 1: {} more than page cache gives: kill cached apps with the highest oom_adj", mib(rest)));
        ctx.kill(victims, rest, Class::Cached, r);
    } else {
        compress_for(ctx, step, rest, None, "reach the launch threshold");
    }
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

/// Compress whole cached apps, least recently in front first (the user is least likely to
/// come back to them soon; CachedAppOptimizer and the thesis go oldest first too), until
/// `bytes` are expected back or `budget` bytes of anonymous memory have been moved; returns
/// the bytes expected back.
pub fn compress_for(ctx: &mut Ctx, step: Step, bytes: u64, budget: Option<u64>, why: &str) -> u64 {
    let ratio = ctx.zram_ratio();
    let keep = 1.0 - 1.0 / ratio;
    let mut apps: Vec<&App> = ctx.free_apps().filter(|a| a.is_cached() && !ctx.state.whole.contains_key(&a.pid) && a.anon_bytes > 0).collect();
    let last = |a: &App| ctx.state.last_front_ms.get(&a.pid).copied().unwrap_or(0);
    apps.sort_by(|a, b| last(a).cmp(&last(b)).then(b.anon_bytes.cmp(&a.anon_bytes)).then(a.pid.cmp(&b.pid)));
    let (mut got, mut moved) = (0u64, 0u64);
    let mut room = ctx.swap_room();
    let scope = ctx.preset.compaction.as_ref().map_or(CompactScope::Anon, |c| c.idle_scope);
    for a in apps {
        if got >= bytes || budget.is_some_and(|b| moved >= b) || room < a.anon_bytes {
            break;
        }
        let saves = (a.anon_bytes as f64 * keep) as u64 + if scope == CompactScope::All { a.file_bytes } else { 0 };
        let r = ctx
            .reason(step, format!("{why}: compress cached app '{}' whole, about {} back", a.name, mib(saves)))
            .with("need_bytes", bytes as f64);
        ctx.compact(a, scope, None, r);
        got += saves;
        moved += a.anon_bytes;
        room -= a.anon_bytes;
    }
    got
}
