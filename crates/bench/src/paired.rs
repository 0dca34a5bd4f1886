//! Two managers run by run: each seed's run of A beside the same seed's run of B, from one bench's results or several
//! (`memorch report --pair A,B FILE…`). A difference between seeds is mostly the seed's; paired, the same work decides
//! each comparison.

use crate::report::quantile;
use crate::results::RunResult;
use std::fmt::Write;

/// What one run gives a comparison: the user's wait (s), p50 and p95 (ms) of the same visits (returns and relaunches,
/// [`RunResult::after_first_launches`]), kills.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct RunFigures {
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub wait_s: f64,
    pub kills: usize,
}

impl RunFigures {
    pub fn of(r: &RunResult) -> Option<RunFigures> {
        let lat: Vec<f64> = r.after_first_launches().iter().map(|v| v.latency_ms).collect();
        Some(RunFigures {
            p50_ms: quantile(lat.clone(), 0.5)?,
            p95_ms: quantile(lat, 0.95)?,
            wait_s: r.wait_s(),
            kills: r.kills.len(),
        })
    }
}

/// A seed's run of each.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Pair {
    pub seed: u64,
    pub a: RunFigures,
    pub b: RunFigures,
}

/// The runs of `a` and of `b` paired by seed, in the order they ran (a seed run twice by each pairs its first runs,
/// then its second).
pub fn pairs(a: &[&RunResult], b: &[&RunResult]) -> Vec<Pair> {
    let mut taken = vec![false; b.len()];
    let mut out = Vec::new();
    for ra in a {
        let Some(j) = (0..b.len()).find(|&j| !taken[j] && b[j].seed == ra.seed) else { continue };
        taken[j] = true;
        if let (Some(fa), Some(fb)) = (RunFigures::of(ra), RunFigures::of(b[j])) {
            out.push(Pair { seed: ra.seed, a: fa, b: fb });
        }
    }
    out
}

/// The geometric mean of A/B over the pairs, and in how many A's was the smaller.
pub fn ratio(pairs: &[Pair], f: fn(&RunFigures) -> f64) -> Option<(f64, usize)> {
    let logs: Vec<f64> = pairs.iter().map(|p| (f(&p.a) / f(&p.b)).ln()).filter(|x| x.is_finite()).collect();
    let shorter = pairs.iter().filter(|p| f(&p.a) < f(&p.b)).count();
    (!logs.is_empty()).then(|| ((logs.iter().sum::<f64>() / logs.len() as f64).exp(), shorter))
}

/// The pairs, one a line, and A/B over them.
pub fn table(a: &str, b: &str, pairs: &[Pair]) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "A = {a}\nB = {b}\n");
    let _ = writeln!(
        o,
        "{:>6} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>7}",
        "seed", "p50 A", "p50 B", "p95 A", "p95 B", "wait A", "wait B", "kills"
    );
    for p in pairs {
        let _ = writeln!(
            o,
            "{:>6} {:>9.1} {:>9.1} {:>9.0} {:>9.0} {:>8.1} {:>8.1} {:>3}/{:<3}",
            p.seed, p.a.p50_ms, p.b.p50_ms, p.a.p95_ms, p.b.p95_ms, p.a.wait_s, p.b.wait_s, p.a.kills, p.b.kills
        );
    }
    let _ = writeln!(o);
    for (name, f) in
        [("wait", (|r: &RunFigures| r.wait_s) as fn(&RunFigures) -> f64), ("p95", |r| r.p95_ms), ("p50", |r| r.p50_ms)]
    {
        if let Some((g, shorter)) = ratio(pairs, f) {
            let _ =
                writeln!(o, "{name:<4} A/B {g:.2}× (geometric mean), A shorter in {shorter} of {} pairs", pairs.len());
        }
    }
    let kills = |f: fn(&Pair) -> usize| pairs.iter().map(f).sum::<usize>();
    let _ = writeln!(o, "kills A {} against B {} in all", kills(|p| p.a.kills), kills(|p| p.b.kills));
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::run;

    #[test]
    fn runs_pair_by_seed_and_the_ratio_is_a_geometric_mean() {
        // The first visit is the app's first launch: left out.
        let mut a1 = run("a", &[("x", 10.0), ("x", 20.0), ("x", 10.0)], &[]);
        let mut a2 = run("a", &[("x", 900.0), ("x", 40.0)], &[]);
        let mut b2 = run("b", &[("x", 1.0), ("x", 10.0)], &[("y", memorch_core::Class::Cached)]);
        let mut b1 = run("b", &[("x", 2.0), ("x", 20.0), ("x", 40.0)], &[]);
        (a1.seed, a2.seed, b1.seed, b2.seed) = (1, 2, 1, 2);
        let p = pairs(&[&a1, &a2], &[&b2, &b1]);
        assert_eq!(p.iter().map(|p| p.seed).collect::<Vec<_>>(), [1, 2], "paired by seed, not by order");
        assert_eq!((p[0].a.wait_s, p[0].b.wait_s), (0.03, 0.06));
        assert_eq!((p[1].a.p50_ms, p[1].a.p95_ms), (40.0, 40.0), "the first launch is not in the quantiles");
        assert_eq!((p[1].a.kills, p[1].b.kills), (0, 1));
        let (g, shorter) = ratio(&p, |r| r.wait_s).unwrap();
        assert!((g - (0.5f64 * 4.0).sqrt()).abs() < 1e-9, "{g}");
        assert_eq!(shorter, 1);
        let t = table("a", "b", &p);
        assert!(t.contains("A shorter in 1 of 2 pairs") && t.contains("kills A 0 against B 1"), "{t}");
    }
}
