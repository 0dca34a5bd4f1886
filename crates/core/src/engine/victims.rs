//! Who dies first, and how few die: victim ordering and batch selection.
//!
//! Class always comes first (an app of a less important class dies before any app of a more
//! important one). Within a class the preset decides: the classic LMK takes the largest;
//! SWAM's EOOM killer the cheapest to relaunch; memorch the cheapest to relaunch *per MB it
//! frees*, so one big cheap app goes before three small ones.

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
    /// memorch: class, then relaunch cost per MB freed, then size.
    ClassThenCostPerMb,
}

/// An app that may be killed, with what its death frees and costs.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate<'a> {
    pub pid: u32,
    pub app: &'a str,
    pub class: Class,
    pub freeable_bytes: u64,
    pub relaunch_ms: f64,
}

impl<'a> Candidate<'a> {
    pub fn new(app: &'a App, stats: &Stats, zram_ratio: f64) -> Candidate<'a> {
        let freeable = freeable_bytes(app, zram_ratio);
        let relaunch_ms = stats.get(&app.name).map_or_else(
            || super::stats::AppStats::default().relaunch_ms(app.rss_bytes()),
            |s| s.relaunch_ms(app.rss_bytes()),
        );
        Candidate { pid: app.pid, app: &app.name, class: app.class, freeable_bytes: freeable, relaunch_ms }
    }

    pub fn cost_per_mb(&self) -> f64 {
        self.relaunch_ms / (self.freeable_bytes as f64 / MIB as f64).max(0.01)
    }

    pub fn victim(&self) -> Victim {
        Victim { pid: self.pid, app: self.app.to_string(), class: self.class, freeable_bytes: self.freeable_bytes }
    }
}

/// What killing an app gives back: its proportional share of resident memory, and the zram
/// pool its swapped pages take (swap ÷ compression ratio).
pub fn freeable_bytes(app: &App, zram_ratio: f64) -> u64 {
    let resident = app.pss_bytes.unwrap_or(app.rss_bytes());
    resident + (app.swap_bytes as f64 / zram_ratio.max(1.0)) as u64
}

fn cmp_f64(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b).unwrap_or(Ordering::Equal)
}

/// Sort candidates: the first is the first to die.
pub fn order(cands: &mut [Candidate], order: VictimOrder) {
    cands.sort_by(|a, b| {
        b.class
            .cmp(&a.class)
            .then_with(|| match order {
                VictimOrder::ClassThenSize => Ordering::Equal,
                VictimOrder::ClassThenRelaunchCost => cmp_f64(a.relaunch_ms, b.relaunch_ms),
                VictimOrder::ClassThenCostPerMb => cmp_f64(a.cost_per_mb(), b.cost_per_mb()),
            })
            .then(b.freeable_bytes.cmp(&a.freeable_bytes))
            .then(a.pid.cmp(&b.pid))
    });
}

/// Victims that together free at least `target_bytes`, taken in order, then pruned: any
/// victim whose death is not needed to reach the target is spared (the most important and
/// the most costly are tried first). The result never includes an app of a class while the
/// less important classes alone would meet the target, and no victim in it could be dropped.
/// If all candidates together fall short, all are returned.
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

#[cfg(test)]
mod tests {
    use super::*;

    pub fn cand(pid: u32, class: Class, mb: u64, relaunch_ms: f64) -> Candidate<'static> {
        Candidate { pid, app: "app", class, freeable_bytes: mb * MIB, relaunch_ms }
    }

    #[test]
    fn lmk_order_is_class_then_size() {
        // Thesis fig. 2-18: empty before content provider before hidden … before foreground;
        // lowmem_shrink takes the largest within the highest oom_adj.
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
            pid: 1, name: "a".into(), class: Class::Cached, ppid: 1, anon_bytes: 10 * MIB, file_bytes: 0, shmem_bytes: 0,
            swap_bytes: 30 * MIB, pss_bytes: Some(8 * MIB), so_unshared_bytes: None, ksm_mergeable: false, age_ms: 0, protected: false,
        };
        assert_eq!(freeable_bytes(&app, 3.0), 18 * MIB);
    }
}
