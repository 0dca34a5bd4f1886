//! Step 1, prepare while idle (screen off): compress whole cached and empty apps into zram, emptiest and oldest first
//! (thesis §3.3, CachedAppOptimizer); run KSM only now and only when background apps that opted in share an ancestor
//! (thesis optimisations 1 and 2), and where the preset asks, only while what it merges pays for ksmd's CPU (its
//! trial); bring free memory to the launch threshold (MOS phase 1); remove swap files that hold nothing (SWAM's ISOP
//! eraser). With the screen on, stop the KSM this step started.

use super::ctx::Ctx;
use super::home;
use crate::engine::input::Input;
use crate::engine::model::App;
use crate::engine::model::{mib, ActionKind, CompactScope, Step};
use crate::engine::preset::KsmPolicy;
use crate::engine::preset::Preset;
use crate::engine::state::{KsmTrial, KsmVerdict, State};
use crate::Facility;
use std::collections::BTreeMap;

pub fn run(ctx: &mut Ctx) {
    let Some(ksm) = ctx.preset.ksm.clone() else {
        return idle_work(ctx);
    };
    if !ksm.idle_targeted {
        // Stock KSM, the thesis's baseline for its KSM test: ksmd over every app that opted in, all the time, screen on
        // or off.
        if !ctx.state.ksm_running && ctx.input.apps.iter().any(|a| a.actionable() && a.ksm_mergeable) {
            let r = ctx.reason(
                Step::PrepareIdle,
                "apps opted in to KSM: run it over them, all the time (stock KSM, untargeted)",
            );
            ctx.push(ActionKind::Ksm { run: true, pages_to_scan: ksm.pages_to_scan }, r, 0);
        }
        return idle_work(ctx);
    }
    if ctx.state.screen_on {
        if ksm.idle_targeted && ctx.state.ksm_running {
            let r = ctx.reason(
                Step::PrepareIdle,
                "screen on: KSM runs only while idle (thesis §3.3: its CPU cost is not worth it in use)",
            );
            ctx.push(ActionKind::Ksm { run: false, pages_to_scan: ksm.pages_to_scan }, r, 0);
        }
        return;
    }
    // Judged first, so that the decision that gives the verdict logs it.
    let paid_for = ksm_paid_for(ctx, &ksm);
    idle_work(ctx);
    if !paid_for {
        return;
    }
    if ksm.idle_targeted && !ctx.state.ksm_running {
        // Background apps that opted in, grouped by parent: siblings (zygote children) share pages.
        let mut by_parent: BTreeMap<u32, usize> = BTreeMap::new();
        for a in mergeable_background(ctx.input.apps) {
            *by_parent.entry(a.ppid).or_default() += 1;
        }
        let siblings: usize = by_parent.values().filter(|&&n| n >= 2).sum();
        let all_gone_over =
            ksm.once && mergeable_background(ctx.input.apps).all(|a| ctx.state.ksm_went_over.contains(&a.pid));
        if siblings >= 2 && !all_gone_over {
            let r = ctx
                .reason(
                    Step::PrepareIdle,
                    format!("idle: {siblings} mergeable background apps share an ancestor: run KSM over them"),
                )
                .with("apps", siblings as f64);
            ctx.push(ActionKind::Ksm { run: true, pages_to_scan: ksm.pages_to_scan }, r, 0);
        }
    }
}

/// How many passes of ksmd over the apps KSM's trial waits for (`KsmPolicy::min_saving_frac`): a page merges only once
/// unchanged from one pass to the next, and the first pass counted may be the end of one begun before.
pub const KSM_TRIAL_SCANS: u64 = 3;

/// How long KSM stays off once its trial found it did not pay: apps launched since may share more, so it is tried again
/// after this.
pub const KSM_RETRY_MS: u64 = 30 * 60 * 1000;

/// Before a decision with the screen off: KSM's trial (`KsmPolicy::min_saving_frac`; the first starts when memorch
/// first runs ksmd, learn.rs) judged on this input's counters. KSM runs until ksmd has gone over the apps
/// [`KSM_TRIAL_SCANS`] times; then, if what it merged of the domain's opted-in apps in those passes is at least that
/// share of the domain, it pays and the next passes are weighed from here; if not, it is off for [`KSM_RETRY_MS`],
/// after which a new trial starts. So KSM runs while its passes merge, as the thesis's ksmd that did not scan an app's
/// pages again (§3.3) would. No verdict where the preset asks no trial or the machine's KSM counters cannot be read.
pub fn observe_ksm(state: &mut State, preset: &Preset, input: &Input) {
    state.ksm_verdict = None;
    let Some(ksm) = preset.ksm.as_ref().filter(|k| k.counts_passes()) else { return };
    let (Some(trial), Facility::Available(k), false) = (state.ksm_trial, &input.snapshot.ksm, state.screen_on) else {
        return;
    };
    if ksm.once {
        return observe_went_over(state, input, trial.scans_from, k.full_scans);
    }
    let Some(min_frac) = ksm.min_saving_frac else { return };
    let (now, scans_now, merged_now) = (input.now_ms, k.full_scans, App::ksm_merged_total(input.apps));
    if let Some(off) = trial.off_since_ms {
        if now.saturating_sub(off) < KSM_RETRY_MS {
            state.ksm_verdict = Some(KsmVerdict::Off);
        } else {
            state.ksm_trial = None;
        }
        return;
    }
    let scans = scans_now.saturating_sub(trial.scans_from);
    // A look that read no app's KSM figure (on pressure, or the last look's apps reused) would read as nothing merged:
    // it judges nothing.
    let weighed = input.apps.iter().any(|a| a.ksm_mergeable && a.ksm_merged_bytes.is_some());
    if scans < KSM_TRIAL_SCANS || !weighed {
        return;
    }
    let merged_bytes = merged_now.saturating_sub(trial.saved_from);
    if merged_bytes >= (input.snapshot.memory.total_bytes as f64 * min_frac) as u64 {
        state.ksm_trial = Some(KsmTrial { scans_from: scans_now, saved_from: merged_now, off_since_ms: None });
        state.ksm_verdict = Some(KsmVerdict::Pays { merged_bytes, scans });
    } else {
        state.ksm_trial = Some(KsmTrial { off_since_ms: Some(now), ..trial });
        state.ksm_verdict = Some(KsmVerdict::DoesNotPay { merged_bytes, scans });
    }
}

/// Whether KSM may run now, by its trial's verdict on this input (`observe_ksm`); the verdict said, and ksmd stopped
/// when it does not pay.
fn ksm_paid_for(ctx: &mut Ctx, ksm: &KsmPolicy) -> bool {
    let min_frac = ksm.min_saving_frac.unwrap_or(0.0);
    let share = format!("{} ({:.1} % of the domain)", mib(ctx.frac(min_frac)), min_frac * 100.0);
    match ctx.state.ksm_verdict {
        None => true,
        Some(KsmVerdict::Off) => false,
        Some(KsmVerdict::WentOver { scans }) => {
            let r = ctx.reason(Step::PrepareIdle, format!("ksmd went over the background apps {scans} times: stopped; what it merged stays merged, and they are not scanned again (thesis §3.3)"));
            ctx.push(ActionKind::Ksm { run: false, pages_to_scan: ksm.pages_to_scan }, r, 0);
            false
        }
        Some(KsmVerdict::Pays { merged_bytes, scans }) => {
            ctx.quiet(ctx.reason(Step::PrepareIdle, format!("KSM merged {} in {scans} passes of ksmd over the apps, at least {share}: it pays; its next passes are weighed from here", mib(merged_bytes))));
            true
        }
        Some(KsmVerdict::DoesNotPay { merged_bytes, scans }) => {
            let r = ctx
                .reason(Step::PrepareIdle, format!("KSM merged {} in {scans} passes of ksmd over the apps, under {share}: not worth ksmd's CPU; off for {} min", mib(merged_bytes), KSM_RETRY_MS / 60_000))
                .with("merged_bytes", merged_bytes as f64);
            if ctx.state.ksm_running {
                ctx.push(ActionKind::Ksm { run: false, pages_to_scan: ksm.pages_to_scan }, r, 0);
            } else {
                // Judged at the start of an idle window, its passes done in the last: not started.
                ctx.quiet(r);
            }
            false
        }
    }
}

fn idle_work(ctx: &mut Ctx) {
    if ctx.state.screen_on {
        return;
    }
    if matches!(ctx.preset.detection, crate::engine::preset::Detection::Bands(_)) {
        headroom_for_likely_launches(ctx);
    } else {
        compress_whole(ctx);
    }
    if ctx.preset.ahead.is_some() && matches!(ctx.preset.detection, crate::engine::preset::Detection::Bands(_)) {
        home::phase1(ctx, Step::PrepareIdle);
    }
    if super::adaptive_swap::idle_file_removable(ctx) {
        let r = ctx.reason(
            Step::PrepareIdle,
            "idle: a storage swap file holds nothing and zram has room: remove it (SWAM ISOP eraser)",
        );
        ctx.push(ActionKind::SwapShrink, r, 0);
    }
}

/// memorch: prepare only what the next likely launches need, not everything that is idle: the launch threshold plus the
/// learned peak of the most popular app not running. With memory to spare, nothing is done (a compressed app would only
/// come back warm).
fn headroom_for_likely_launches(ctx: &mut Ctx) {
    let Some(c) = ctx.preset.compaction.as_ref() else { return };
    let Some(min_class) = c.idle_min_class else { return };
    let next = likely_launch(ctx);
    let need = next.headroom.saturating_sub(ctx.available());
    if need == 0 {
        ctx.quiet(ctx.reason(
            Step::PrepareIdle,
            format!(
                "idle: {} available covers the next likely launch ({}, {}) and the threshold: nothing to prepare",
                mib(ctx.available()),
                next.what,
                mib(next.peak)
            ),
        ));
        return;
    }
    let why = format!("idle: make room for the next likely launch ({}, {})", next.what, mib(next.peak));
    super::shrink::free_below(ctx, Step::PrepareIdle, min_class, need, None, &why, None);
}

/// The launch the idle step prepares for.
pub struct LikelyLaunch {
    /// What it keeps available: the launch threshold plus the launch's peak.
    pub headroom: u64,
    /// The app, or why there is none, for the log.
    pub what: String,
    /// The launch's peak: learned, or the median of the apps seen for an app not seen yet.
    pub peak: u64,
}

/// The most popular app not running.
pub fn likely_launch(ctx: &Ctx) -> LikelyLaunch {
    let ahead = ctx.preset.ahead.as_ref();
    let threshold = ahead.map_or(0, |a| ctx.frac(a.threshold_frac));
    let stats = &ctx.state.stats;
    let running: Vec<&str> = ctx.input.apps.iter().map(|a| a.name.as_str()).collect();
    let next = stats
        .apps
        .iter()
        .filter(|(n, s)| !running.contains(&n.as_str()) && s.fronts > 0)
        .max_by_key(|(_, s)| (s.fronts, s.touched));
    if let Some((name, s)) = next {
        return LikelyLaunch { headroom: threshold + s.peak_bytes, what: format!("'{name}'"), peak: s.peak_bytes };
    }
    let what = if stats.apps.values().any(|s| s.fronts > 0) { "every app seen is running" } else { "no app seen yet" };
    LikelyLaunch { headroom: threshold, what: what.to_string(), peak: 0 }
}

/// Whole cached apps into zram, emptiest/oldest first, as far as swap room allows.
fn compress_whole(ctx: &mut Ctx) {
    let Some(c) = ctx.preset.compaction.clone() else { return };
    let Some(min_class) = c.idle_min_class else { return };
    let now = ctx.input.now_ms;
    let mut apps: Vec<&App> = ctx
        .free_apps()
        .filter(|a| a.class >= min_class && a.anon_bytes >= c.min_anon_bytes.max(1))
        .filter(|a| {
            ctx.state.whole.get(&a.pid).is_none_or(|&at| {
                now.saturating_sub(at) >= c.recompact_after_ms.max(1)
                    && a.anon_bytes > 2 * c.min_anon_bytes.max(1 << 20)
            })
        })
        .collect();
    apps.sort_by(|a, b| b.class.cmp(&a.class).then(b.age_ms.cmp(&a.age_ms)).then(a.pid.cmp(&b.pid)));
    let mut room = ctx.swap_room();
    for a in apps.into_iter().take(c.max_apps_per_decision.max(1)) {
        if room < a.anon_bytes {
            ctx.quiet(
                ctx.reason(
                    Step::PrepareIdle,
                    format!("idle: swap has {} left, not enough for '{}'", mib(room), a.name),
                ),
            );
            break;
        }
        room -= a.anon_bytes;
        let r = ctx
            .reason(
                Step::PrepareIdle,
                format!(
                    "idle: compress {} app '{}' whole ({} anonymous) while nobody waits",
                    a.class,
                    a.name,
                    mib(a.anon_bytes)
                ),
            )
            .with("anon_bytes", a.anon_bytes as f64);
        super::squeeze::compact(ctx, a, CompactScope::Anon, None, r);
    }
}

/// `KsmPolicy::once`: after [`KSM_TRIAL_SCANS`] passes of the ksmd memorch started, the background apps that opted in
/// are gone over; the next run of ksmd is for a new one.
fn observe_went_over(state: &mut State, input: &Input, scans_from: u64, scans_now: u64) {
    let scans = scans_now.saturating_sub(scans_from);
    if !state.ksm_running || scans < KSM_TRIAL_SCANS {
        return;
    }
    state.ksm_went_over.extend(mergeable_background(input.apps).map(|a| a.pid));
    state.ksm_trial = None;
    state.ksm_verdict = Some(KsmVerdict::WentOver { scans });
}

/// Background apps that opted in to KSM.
fn mergeable_background<'a>(apps: &'a [App]) -> impl Iterator<Item = &'a App> + 'a {
    apps.iter().filter(|a| a.actionable() && a.is_background() && a.ksm_mergeable)
}
