//! Who dies first, and how few die: victim ordering and batch selection.
//!
//! Class always comes first (an app of a less important class dies before any app of a more important one). Within a
//! class the preset decides: the classic LMK takes the largest; SWAM's EOOM killer the cheapest to relaunch; memorch
//! the cheapest to relaunch *per MB it frees*, so one big cheap app goes before three small ones.

use super::model::{App, Victim, MIB};
use super::stats::Stats;
use crate::Class;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VictimOrder {
    /// `lowmem_shrink` (thesis §2.6.4): highest class, then largest RSS.
    ClassThenSize,
    /// SWAM's EOOM killer (§4.3): class, then the cheapest relaunch, then size.
    ClassThenRelaunchCost,
    /// Android lmkd (`find_and_kill_process`, `kill_heaviest_task` off): within a class the least recently used
    /// (`proc_adj_lru`: the longest away from the front), and from perceptible up the heaviest, "to hopefully minimize
    /// the number of victims".
    ClassThenLru,
    /// SWAM's EOOM killer as its paper describes it (§4.3): it "inherits the functions of the traditional OOMK" and
    /// "extends" its victim selection with the relaunch cost. Within a class (which the OOM killer's `oom_score_adj`
    /// term puts first), the kernel's badness (resident + swap) divided by the relaunch cost relative to the cheapest
    /// candidate's: an app twice as costly to relaunch must be twice as bad to die first. (The paper gives no formula;
    /// this is the nearest that keeps both terms.)
    OomBadnessOverRelaunch,
    /// memorch (first version): class, then relaunch cost per MB freed, then size.
    ClassThenCostPerMb,
    /// memorch: class, then the least *expected* cost to the user: the chance of a return soon (recency, popularity)
    /// times what a relaunch costs; a batch is the set of victims that meets the target at the least total expected
    /// cost ([`select_least_cost`]).
    LeastExpectedCost,
}

/// What a kill costs the user beyond the relaunch, in the relaunch's units: the state the app held. Without it, two
/// small apps left long ago always cost less than one larger app, and a batch kills more apps for the same memory
/// (swam40: 11 kills against 7 by cost per MB).
pub const STATE_LOSS_MS: f64 = 200.0;

/// An app that may be killed, with what its death frees and costs.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate<'a> {
    pub pid: u32,
    pub app: &'a str,
    pub class: Class,
    pub freeable_bytes: u64,
    pub relaunch_ms: f64,
    /// How likely the user is to come back to it soon (0..=1); 1 where unknown.
    pub p_return: f64,
    /// How long since it was last in front (its age where it never was): lmkd's LRU.
    pub idle_ms: u64,
    /// The kernel OOM killer's badness: resident + swap bytes, plus `oom_score_adj` × the domain's memory / 1000
    /// (`oom_badness`).
    pub oom_badness: f64,
}

impl<'a> Candidate<'a> {
    pub fn new(app: &'a App, stats: &Stats, zram_ratio: f64) -> Candidate<'a> {
        let freeable = freeable_bytes(app, zram_ratio);
        let relaunch_ms = stats.get(&app.name).map_or_else(
            || super::stats::AppStats::default().relaunch_ms(app.rss_bytes()),
            |s| s.relaunch_ms(app.rss_bytes()),
        );
        Candidate {
            pid: app.pid,
            app: &app.name,
            class: app.class,
            freeable_bytes: freeable,
            relaunch_ms,
            p_return: 1.0,
            idle_ms: app.age_ms,
            oom_badness: 0.0,
        }
    }

    /// What killing it is expected to cost the user: a relaunch, if they come back soon, and the state the app held
    /// (where they were in it), which every kill loses whenever they come back.
    pub fn expected_cost_ms(&self) -> f64 {
        self.p_return * self.relaunch_ms + STATE_LOSS_MS
    }

    pub fn cost_per_mb(&self) -> f64 {
        self.relaunch_ms / (self.freeable_bytes as f64 / MIB as f64).max(0.01)
    }

    pub fn victim(&self) -> Victim {
        Victim { pid: self.pid, app: self.app.to_string(), class: self.class, freeable_bytes: self.freeable_bytes }
    }
}

/// What killing an app gives back: its proportional share of resident memory, and the zram pool its swapped pages take
/// (swap ÷ compression ratio).
pub fn freeable_bytes(app: &App, zram_ratio: f64) -> u64 {
    let resident = app.pss_bytes.unwrap_or(app.rss_bytes());
    resident + (app.swap_bytes as f64 / zram_ratio.max(1.0)) as u64
}

fn cmp_f64(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b).unwrap_or(Ordering::Equal)
}

/// The kernel's `oom_badness` of an app in a domain of `total_bytes`: what it holds (resident and swapped) plus its
/// `oom_score_adj` in thousandths of the domain.
pub fn oom_badness(app: &App, total_bytes: u64) -> f64 {
    (app.rss_bytes() + app.swap_bytes) as f64 + app.class.oom_score_adj().max(0) as f64 * total_bytes as f64 / 1000.0
}

/// Sort candidates: the first is the first to die.
pub fn order(cands: &mut [Candidate], order: VictimOrder) {
    // One scale for EOOM's score: the cheapest relaunch among them is the unit.
    let unit = cands.iter().map(|c| c.relaunch_ms).fold(f64::INFINITY, f64::min).max(1.0);
    let eoom = |c: &Candidate| c.oom_badness * unit / c.relaunch_ms.max(1.0);
    cands.sort_by(|a, b| {
        b.class
            .cmp(&a.class)
            .then_with(|| match order {
                VictimOrder::ClassThenSize => Ordering::Equal,
                VictimOrder::ClassThenRelaunchCost => cmp_f64(a.relaunch_ms, b.relaunch_ms),
                VictimOrder::ClassThenCostPerMb => cmp_f64(a.cost_per_mb(), b.cost_per_mb()),
                VictimOrder::LeastExpectedCost => cmp_f64(a.expected_cost_ms(), b.expected_cost_ms()),
                VictimOrder::ClassThenLru if a.class > Class::Perceptible => b.idle_ms.cmp(&a.idle_ms),
                VictimOrder::ClassThenLru => Ordering::Equal,
                VictimOrder::OomBadnessOverRelaunch => cmp_f64(eoom(b), eoom(a)),
            })
            .then(b.freeable_bytes.cmp(&a.freeable_bytes))
            .then(a.pid.cmp(&b.pid))
    });
}

/// Victims that together free at least `target_bytes`, taken in order, then pruned: any victim whose death is not
/// needed to reach the target is spared (the most important and the most costly are tried first). The result never
/// includes an app of a class while the less important classes alone would meet the target, and no victim in it could
/// be dropped. If all candidates together fall short, all are returned.
pub fn select_batch<'a>(ordered: &[Candidate<'a>], target_bytes: u64) -> Vec<Candidate<'a>> {
    let mut chosen: Vec<Candidate> = Vec::new();
    let mut sum = 0u64;
    for c in ordered {
        if sum >= target_bytes {
            break;
        }
        sum += c.freeable_bytes;
        chosen.push(c.clone());
    }
    if sum < target_bytes {
        return chosen;
    }
    // Spare whoever is not needed, trying the last chosen (most important, costliest) first.
    spare_unneeded(chosen, target_bytes)
}

/// `chosen`, which frees at least `target_bytes`, without the victims whose deaths are not needed for it: tried from
/// the last to the first, so put the one to spare first last.
fn spare_unneeded(mut chosen: Vec<Candidate<'_>>, target_bytes: u64) -> Vec<Candidate<'_>> {
    let mut sum: u64 = chosen.iter().map(|c| c.freeable_bytes).sum();
    let mut i = chosen.len();
    while i > 0 {
        i -= 1;
        if sum - chosen[i].freeable_bytes >= target_bytes {
            sum -= chosen[i].freeable_bytes;
            chosen.remove(i);
        }
    }
    chosen
}

/// The victims that free at least `target_bytes` at the least total expected cost, within the least important classes
/// that can: a class is only touched when the less important ones cannot meet the target alone. Exact (a knapsack over
/// MiB): a 24 MiB shortfall is met by a small app cheap to relaunch, not by the largest, however low its cost per MB.
/// Ties go to fewer victims. If all candidates together fall short, all are returned.
pub fn select_least_cost<'a>(cands: &[Candidate<'a>], target_bytes: u64) -> Vec<Candidate<'a>> {
    if target_bytes == 0 {
        return Vec::new();
    }
    let mut classes: Vec<Class> = cands.iter().map(|c| c.class).collect();
    classes.sort_by(|a, b| b.cmp(a));
    classes.dedup();
    for (i, _) in classes.iter().enumerate() {
        let pool: Vec<&Candidate> = cands.iter().filter(|c| classes[..=i].contains(&c.class)).collect();
        if pool.iter().map(|c| c.freeable_bytes).sum::<u64>() >= target_bytes {
            // The knapsack counts whole MiB (what an app frees rounded down, the target up): a set it picks may hold a
            // victim the exact bytes do not need. Spare it, the costliest tried first.
            let mut set: Vec<Candidate> = knapsack(&pool, target_bytes).into_iter().cloned().collect();
            set.sort_by(|a, b| cmp_f64(a.expected_cost_ms(), b.expected_cost_ms()));
            return spare_unneeded(set, target_bytes);
        }
    }
    cands.to_vec()
}

/// Min total expected cost (then fewest victims) of a subset freeing at least `target`, over freed MiB capped at the
/// target.
fn knapsack<'a, 'b>(pool: &[&'b Candidate<'a>], target_bytes: u64) -> Vec<&'b Candidate<'a>> {
    let mib = |b: u64| b.div_ceil(MIB) as usize;
    let t = mib(target_bytes);
    // best[j]: (cost, victims, chosen indexes) to free at least j MiB.
    let mut best: Vec<Option<(f64, usize, Vec<usize>)>> = vec![None; t + 1];
    best[0] = Some((0.0, 0, Vec::new()));
    for (k, c) in pool.iter().enumerate() {
        let gain = (c.freeable_bytes / MIB) as usize;
        for j in (0..=t).rev() {
            let Some((cost, n, set)) = best[j].clone() else { continue };
            let to = (j + gain).min(t);
            let cand = (cost + c.expected_cost_ms(), n + 1);
            let better = match &best[to] {
                None => true,
                Some((bc, bn, _)) => cand.0 < *bc - 1e-9 || ((cand.0 - *bc).abs() <= 1e-9 && cand.1 < *bn),
            };
            if better && to > j {
                let mut s = set;
                s.push(k);
                best[to] = Some((cand.0, cand.1, s));
            }
        }
    }
    match &best[t] {
        Some((_, _, set)) => set.iter().map(|&k| pool[k]).collect(),
        None => pool.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub fn cand(pid: u32, class: Class, mb: u64, relaunch_ms: f64) -> Candidate<'static> {
        Candidate {
            pid,
            app: "app",
            class,
            freeable_bytes: mb * MIB,
            relaunch_ms,
            p_return: 1.0,
            idle_ms: 0,
            oom_badness: 0.0,
        }
    }

    #[test]
    fn least_cost_spares_a_victim_the_exact_bytes_do_not_need() {
        // 315.2 MiB meets a target of 315.05 MiB alone, though in whole MiB (315 of 316) it does not: the knapsack adds
        // the small app, the exact count spares it (proptest found it, engine_properties).
        let big = Candidate { freeable_bytes: 330_511_155, ..cand(1, Class::Cached, 0, 3000.0) };
        let small = Candidate { freeable_bytes: 80_530_636, ..cand(2, Class::Cached, 0, 500.0) };
        let chosen = select_least_cost(&[small, big], 330_353_868);
        assert_eq!(chosen.iter().map(|c| c.pid).collect::<Vec<_>>(), vec![1]);
    }

    #[test]
    fn least_cost_meets_a_small_shortfall_with_a_small_app() {
        // Issue "act in proportion": 24 MiB must not cost a 3-second relaunch when a small app frees it; cost per MB
        // alone would take the big one (9 ms/MB against 13).
        let c = vec![
            cand(1, Class::Cached, 335, 3000.0),
            cand(2, Class::Cached, 30, 400.0),
            cand(3, Class::Cached, 10, 100.0),
        ];
        let picked: Vec<u32> = select_least_cost(&c, 24 * MIB).iter().map(|c| c.pid).collect();
        assert_eq!(picked, vec![2]);
        let mut by_mb = c.clone();
        order(&mut by_mb, VictimOrder::ClassThenCostPerMb);
        assert_eq!(select_batch(&by_mb, 24 * MIB)[0].pid, 1, "what cost per MB would have done");
        // Two small ones when together they are cheaper than one that alone suffices.
        let c = vec![
            cand(1, Class::Cached, 60, 2000.0),
            cand(2, Class::Cached, 30, 300.0),
            cand(3, Class::Cached, 30, 300.0),
        ];
        let mut picked: Vec<u32> = select_least_cost(&c, 55 * MIB).iter().map(|c| c.pid).collect();
        picked.sort();
        assert_eq!(picked, vec![2, 3]);
    }

    #[test]
    fn a_kill_costs_the_state_it_loses_so_one_victim_beats_two_of_little_more_relaunch() {
        // Two small apps left long ago (each 0.1 × 500 ms) against one larger (0.2 × 1000 ms): relaunch alone says two
        // (100 < 200 ms); with each kill's lost state, one.
        let small = |pid| Candidate { p_return: 0.1, ..cand(pid, Class::Cached, 40, 500.0) };
        let big = Candidate { p_return: 0.2, ..cand(3, Class::Cached, 80, 1000.0) };
        let picked: Vec<u32> = select_least_cost(&[small(1), small(2), big], 70 * MIB).iter().map(|c| c.pid).collect();
        assert_eq!(picked, vec![3]);
    }

    #[test]
    fn least_cost_weighs_the_chance_of_a_return_and_keeps_class_order() {
        let mut soon = cand(1, Class::Cached, 100, 1000.0);
        soon.p_return = 0.9;
        let mut rare = cand(2, Class::Cached, 100, 1000.0);
        rare.p_return = 0.1;
        assert_eq!(
            select_least_cost(&[soon.clone(), rare.clone()], 50 * MIB)[0].pid,
            2,
            "the one less likely to be wanted soon"
        );
        // A cheap previous app is spared while cached apps can meet the target.
        let prev = Candidate { p_return: 0.01, ..cand(3, Class::Previous, 100, 10.0) };
        assert_eq!(select_least_cost(&[prev.clone(), soon.clone()], 50 * MIB)[0].pid, 1);
        // All together short: all of them.
        assert_eq!(select_least_cost(&[prev, soon], 500 * MIB).len(), 2);
        assert!(select_least_cost(&[rare], 0).is_empty());
    }

    #[test]
    fn lmk_order_is_class_then_size() {
        // Thesis fig. 2-18: empty before content provider before hidden … before foreground; lowmem_shrink takes the
        // largest within the highest oom_adj.
        let mut c = vec![
            cand(1, Class::Foreground, 500, 1.0),
            cand(2, Class::Cached, 20, 1.0),
            cand(3, Class::Empty, 5, 1.0),
            cand(4, Class::Cached, 80, 1.0),
            cand(5, Class::Previous, 300, 1.0),
        ];
        order(&mut c, VictimOrder::ClassThenSize);
        assert_eq!(c.iter().map(|c| c.pid).collect::<Vec<_>>(), vec![3, 4, 2, 5, 1]);
    }

    #[test]
    fn eoom_kills_the_cheaper_relaunch_of_two_equal_cached_apps() {
        // SWAM §4.3: of two equal cached apps, the one cheaper to relaunch dies.
        let mut c = vec![cand(1, Class::Cached, 100, 2500.0), cand(2, Class::Cached, 100, 600.0)];
        order(&mut c, VictimOrder::ClassThenRelaunchCost);
        assert_eq!(c[0].pid, 2);
        order(&mut c, VictimOrder::ClassThenCostPerMb);
        assert_eq!(c[0].pid, 2);
    }

    #[test]
    fn cost_per_mb_prefers_one_big_cheap_app() {
        let mut c = vec![cand(1, Class::Cached, 10, 500.0), cand(2, Class::Cached, 200, 1000.0)];
        order(&mut c, VictimOrder::ClassThenCostPerMb);
        assert_eq!(c[0].pid, 2, "5 ms/MB beats 50 ms/MB");
    }

    #[test]
    fn batch_meets_target_with_no_spare_victim() {
        let c = vec![cand(1, Class::Empty, 10, 1.0), cand(2, Class::Cached, 200, 1.0), cand(3, Class::Cached, 30, 1.0)];
        let b = select_batch(&c, 150 * MIB);
        assert_eq!(b.iter().map(|c| c.pid).collect::<Vec<_>>(), vec![2], "the 200 MB app alone meets it");
        // 10 + 200 falls short; with 30 added, the 10 MB empty app is no longer needed.
        let b = select_batch(&c, 215 * MIB);
        assert_eq!(b.iter().map(|c| c.pid).collect::<Vec<_>>(), vec![2, 3]);
        let b = select_batch(&c, 235 * MIB);
        assert_eq!(b.iter().map(|c| c.pid).collect::<Vec<_>>(), vec![1, 2, 3]);
    }

    #[test]
    fn batch_returns_everything_when_short() {
        let c = vec![cand(1, Class::Empty, 10, 1.0), cand(2, Class::Cached, 20, 1.0)];
        assert_eq!(select_batch(&c, 100 * MIB).len(), 2);
        assert!(select_batch(&c, 0).is_empty());
    }

    #[test]
    fn freeable_counts_the_zram_pool() {
        let app = App {
            pid: 1,
            name: "a".into(),
            class: Class::Cached,
            ppid: 1,
            anon_bytes: 10 * MIB,
            file_bytes: 0,
            shmem_bytes: 0,
            swap_bytes: 30 * MIB,
            pss_bytes: Some(8 * MIB),
            so_unshared_bytes: None,
            ksm_mergeable: false,
            ksm_merged_bytes: None,
            frozen: None,
            age_ms: 0,
            protected: false,
        };
        assert_eq!(freeable_bytes(&app, 3.0), 18 * MIB);
    }
}
