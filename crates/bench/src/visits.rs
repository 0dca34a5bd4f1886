//! The order in which the user visits a scenario's apps: an explicit sequence, every app launched then revisits by Zipf
//! popularity, or LSApp sessions (the LSApp usage study): 1 to 4 apps a session chosen by popularity, switches among
//! them, the screen off between sessions. Deterministic for a seed, so every manager sees the same day.

use crate::scenario::{Scenario, IDLE};

impl Scenario {
    /// The visits, in order, with [`IDLE`] steps: deterministic for a seed.
    pub fn visit_order(&self, seed: u64) -> Vec<String> {
        let visits = self.app_visits(seed);
        if self.visits.idle_every == 0 {
            return visits;
        }
        let mut out = Vec::new();
        for (i, v) in visits.into_iter().enumerate() {
            if i > 0 && i % self.visits.idle_every == 0 {
                out.push(IDLE.to_string());
            }
            out.push(v);
        }
        out
    }

    fn app_visits(&self, seed: u64) -> Vec<String> {
        if !self.visits.sequence.is_empty() {
            return self.visits.sequence.clone();
        }
        let mut out: Vec<String> =
            if self.visits.launch_all { self.apps.iter().map(|a| a.name.clone()).collect() } else { Vec::new() };
        let mut rng = Rng(seed ^ 0x5eed);
        if self.visits.sessions > 0 {
            self.session_visits(&mut rng, &mut out);
            return out;
        }
        // Zipf over the apps in their listed order: the first is the most popular.
        let everyone = self.visitable();
        for _ in 0..self.visits.revisits {
            let mut pick = self.zipf_pick(&mut rng, &everyone);
            // Never the app just used: a visit is a switch.
            if out.last() == Some(&self.apps[pick].name) {
                let at = everyone.iter().position(|&i| i == pick).unwrap_or(0);
                pick = everyone[(at + 1) % everyone.len()];
            }
            out.push(self.apps[pick].name.clone());
        }
        out
    }

    /// The apps a user comes back to (not those only launched once: `visited = false`).
    fn visitable(&self) -> Vec<usize> {
        (0..self.apps.len()).filter(|&i| self.apps[i].visited).collect()
    }

    /// LSApp sessions: 1 to 4 distinct apps (P = .30 .35 .22 .13: 2.18 on average), each visited once in the order
    /// drawn, then switches among them (never to the app in front) up to the session's count; the screen goes off
    /// between sessions.
    fn session_visits(&self, rng: &mut Rng, out: &mut Vec<String>) {
        const DISTINCT: [f64; 4] = [0.30, 0.35, 0.22, 0.13];
        // Single-app sessions have no switch: the others carry the mean.
        let multi_mean = self.visits.session_switches / (1.0 - DISTINCT[0]);
        for s in 0..self.visits.sessions {
            if s > 0 || !out.is_empty() {
                out.push(IDLE.to_string());
            }
            let mut r = rng.unit();
            let k = DISTINCT.iter().position(|p| {
                r -= p;
                r < 0.0
            });
            let visitable = self.visitable();
            let k = (k.unwrap_or(3) + 1).min(visitable.len());
            let mut set: Vec<usize> = Vec::new();
            while set.len() < k {
                let rest: Vec<usize> = visitable.iter().copied().filter(|i| !set.contains(i)).collect();
                set.push(self.zipf_pick(rng, &rest));
            }
            // Exponentially distributed switch count, at least enough to visit every app.
            let switches =
                if k == 1 { 0 } else { ((-multi_mean * (1.0 - rng.unit()).ln()).round() as usize).max(k - 1) };
            let mut current = set[0];
            out.push(self.apps[current].name.clone());
            for i in 1..=switches {
                let next = if i < k {
                    set[i]
                } else {
                    self.zipf_pick(rng, &set.iter().copied().filter(|&a| a != current).collect::<Vec<_>>())
                };
                out.push(self.apps[next].name.clone());
                current = next;
            }
        }
    }

    /// One of `among` (indexes into the apps), by Zipf popularity of their listed rank.
    fn zipf_pick(&self, rng: &mut Rng, among: &[usize]) -> usize {
        // Popularity by rank among the apps a user comes back to.
        let rank = |i: usize| self.apps[..i].iter().filter(|a| a.visited).count();
        let weight = |i: usize| 1.0 / ((rank(i) + 1) as f64).powf(self.visits.zipf_s);
        let total: f64 = among.iter().map(|&i| weight(i)).sum();
        let mut r = rng.unit() * total;
        for &i in among {
            if r < weight(i) {
                return i;
            }
            r -= weight(i);
        }
        *among.last().expect("a non-empty choice")
    }
}

/// The visit order's random numbers: deterministic for a seed.
struct Rng(u64);

impl Rng {
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        self.0 = crate::content::splitmix(self.0);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_follow_the_usage_study() {
        let mut s = Scenario::load("quick").unwrap();
        s.visits.launch_all = false;
        s.visits.sessions = 400;
        let order = s.visit_order(3);
        assert_eq!(order, s.visit_order(3), "deterministic");
        let sessions: Vec<&[String]> = order.split(|v| v == IDLE).collect();
        assert_eq!(sessions.len(), 400, "the screen goes off between sessions");
        let distinct: Vec<usize> =
            sessions.iter().map(|v| v.iter().collect::<std::collections::BTreeSet<_>>().len()).collect();
        assert!(distinct.iter().all(|&k| (1..=4).contains(&k)), "1 to 4 apps a session");
        let mean = |v: &[usize]| v.iter().sum::<usize>() as f64 / v.len() as f64;
        let d = mean(&distinct);
        assert!((1.9..=2.4).contains(&d), "LSApp: 2.18 apps a session on average, got {d}");
        let switches: Vec<usize> = sessions.iter().map(|v| v.len() - 1).collect();
        let m = mean(&switches);
        assert!((4.5..=6.5).contains(&m), "LSApp: 5.46 switches a session on average, got {m}");
        assert!(order.windows(2).all(|w| w[0] != w[1]), "every visit is a switch");
        let first = order.iter().filter(|v| *v == &s.apps[0].name).count();
        let last = order.iter().filter(|v| *v == &s.apps[7].name).count();
        assert!(first > 2 * last, "popular apps come back more often: {first} vs {last}");
    }

    #[test]
    fn idle_steps_fall_between_visits() {
        let mut s = Scenario::load("quick").unwrap();
        s.visits.idle_every = 5;
        let order = s.visit_order(1);
        assert_eq!(order.iter().filter(|v| *v == IDLE).count(), (22 - 1) / 5);
        assert_eq!(order[5], IDLE);
        assert_ne!(order.last().map(String::as_str), Some(IDLE));
    }
}
