//! What memorch learns about each app, kept across restarts (docs/presets.md, "Learned app statistics" writes the rules
//! down).
//!
//! - `peak_bytes`: the largest PSS (RSS where PSS is unknown) seen, plus the largest size announced in a launch intent.
//!   Never decays: a launch must fit the app's worst case.
//! - `cold_launch_ms`, `warm_launch_ms`: exponentially weighted moving averages (weight `EWMA_WEIGHT` for the new
//!   sample) of launch reports.
//! - `quickest_return_ms`: how long a return to the app takes when nothing of it has to be read back: it drops at once
//!   to a quicker return a launcher reports and creeps toward a slower one by `RETURN_CREEP` (a return that read pages
//!   back is slower for that, not for the app's own work).
//! - `refault_ratio`: of the bytes memorch compacted out of the app, the share that came back (its swap fell) within
//!   `REFAULT_WINDOW_MS`; an EWMA per compaction episode.
//! - `return_touch`: of the app's swap when a return began, the share the return read back (an EWMA), where a launcher
//!   reports the return.
//! - `sessions`, `last_session`: how many usage sessions (from one screen-on to the next screen-off;
//!   [`Stats::sessions`] counts them) had the app in front, and the last one.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const EWMA_WEIGHT: f64 = 0.3;
pub const REFAULT_WINDOW_MS: u64 = 60_000;
/// How far toward a slower return the quickest return moves: a return slowed by a read-back says little of the app's
/// own time, a run of them that it has become slower.
pub const RETURN_CREEP: f64 = 0.05;
/// A return's share read back says little of an app with less than this in swap (1 MiB).
pub const MIN_TOUCH_SWAP: u64 = 1 << 20;
/// Apps remembered at most; the one learned about least recently goes first.
pub const MAX_APPS: usize = 512;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AppStats {
    pub peak_bytes: u64,
    pub cold_launch_ms: Option<f64>,
    pub warm_launch_ms: Option<f64>,
    pub launches: u64,
    pub refault_ratio: Option<f64>,
    /// How long a return to it takes with nothing to read back, as launchers report returns.
    #[serde(default)]
    pub quickest_return_ms: Option<f64>,
    /// Times it came to the front (launched or returned to): its popularity.
    #[serde(default)]
    pub fronts: u64,
    /// When it was last learned about ([`Stats::seq`] then): the oldest is forgotten first.
    #[serde(default)]
    pub touched: u64,
    /// Sessions it came to the front in, and the number of the last ([`Stats::sessions`]).
    #[serde(default)]
    pub sessions: u64,
    #[serde(default)]
    pub last_session: u64,
    /// Of its swap when a return began, the share the return read back: what a return touches of what was taken (the
    /// cost model's `h`, ladder/cost.rs).
    #[serde(default)]
    pub return_touch: Option<f64>,
}

fn ewma(old: Option<f64>, sample: f64) -> f64 {
    super::costs::ewma_by(old, sample, EWMA_WEIGHT)
}

impl AppStats {
    pub fn observe_size(&mut self, bytes: u64) {
        self.peak_bytes = self.peak_bytes.max(bytes);
    }

    pub fn observe_launch(&mut self, ms: u64, cold: bool) {
        let slot = if cold { &mut self.cold_launch_ms } else { &mut self.warm_launch_ms };
        *slot = Some(ewma(*slot, ms as f64));
        self.launches += 1;
    }

    /// A return to the running app took `ms` (as a launcher reports a warm start).
    pub fn observe_return(&mut self, ms: f64) {
        self.quickest_return_ms = Some(match self.quickest_return_ms {
            Some(q) if ms > q => q + RETURN_CREEP * (ms - q),
            _ => ms,
        });
    }

    /// After a compaction episode: `moved` bytes went out, `came_back` of them returned soon.
    pub fn observe_refault(&mut self, moved: u64, came_back: u64) {
        if moved == 0 {
            return;
        }
        let r = (came_back as f64 / moved as f64).min(1.0);
        self.refault_ratio = Some(ewma(self.refault_ratio, r));
    }

    /// A return read back `back` of the `swapped` bytes it had in swap when it began.
    pub fn observe_return_touch(&mut self, swapped: u64, back: u64) {
        if swapped >= MIN_TOUCH_SWAP {
            self.return_touch = Some(ewma(self.return_touch, (back as f64 / swapped as f64).min(1.0)));
        }
    }

    /// The cost of a cold relaunch: learned, else estimated from size (about 1 ms a MiB over a 300 ms base, the shape
    /// of the thesis's and SWAM's launch figures).
    pub fn relaunch_ms(&self, size_bytes: u64) -> f64 {
        self.cold_launch_ms.unwrap_or(300.0 + size_bytes as f64 / (1 << 20) as f64)
    }
}

/// Statistics of every app, by name. A BTreeMap: iteration order is deterministic.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub apps: BTreeMap<String, AppStats>,
    /// Counts every learning, to order apps by when they were last learned about.
    #[serde(default)]
    pub seq: u64,
    /// Usage sessions seen: one at the first app in front, one more at each screen-on after a screen-off.
    #[serde(default)]
    pub sessions: u64,
    /// What moving a page costs on this device (costs.rs).
    #[serde(default)]
    pub device: super::costs::DeviceCosts,
}

impl Stats {
    pub fn get(&self, app: &str) -> Option<&AppStats> {
        self.apps.get(app)
    }

    /// The screen came on after being off: a new usage session.
    pub fn session_begins(&mut self) {
        self.sessions += 1;
    }

    /// `app` came to the front (launched or returned to): it counts once for this session.
    pub fn came_to_front(&mut self, app: &str) {
        // The session in progress when memorch started (or the screen was never off).
        self.sessions = self.sessions.max(1);
        let session = self.sessions;
        let s = self.entry(app);
        s.fronts += 1;
        if s.last_session != session {
            s.sessions += 1;
            s.last_session = session;
        }
    }

    /// Whether `app` came to the front in the session in progress.
    pub fn in_this_session(&self, app: &str) -> bool {
        self.get(app).is_some_and(|s| s.last_session == self.sessions)
    }

    /// The share of the sessions seen that `app` came to the front in (0 for an app never in front, or before any
    /// session).
    pub fn session_share(&self, app: &str) -> f64 {
        self.get(app).map_or(0.0, |s| s.sessions as f64 / self.sessions.max(1) as f64)
    }

    /// Keep only the [`MAX_APPS`] apps learned about most recently (a file written by hand, or by an older memorch, may
    /// hold more; trimming one at a time would be quadratic).
    pub fn keep_most_recent(&mut self) {
        if self.apps.len() <= MAX_APPS {
            return;
        }
        let mut recent: Vec<(u64, String)> = self.apps.iter().map(|(k, s)| (s.touched, k.clone())).collect();
        recent.sort_unstable_by(|a, b| b.cmp(a));
        let keep: std::collections::BTreeSet<String> = recent.into_iter().take(MAX_APPS).map(|(_, k)| k).collect();
        self.apps.retain(|k, _| keep.contains(k));
    }

    /// An app's statistics to learn into, made if new; at most [`MAX_APPS`] are kept.
    pub fn entry(&mut self, app: &str) -> &mut AppStats {
        self.seq += 1;
        let seq = self.seq;
        // get_mut first: no allocation for apps already known (the common case, every tick).
        if self.apps.contains_key(app) {
            let s = self.apps.get_mut(app).expect("present");
            s.touched = seq;
            return s;
        }
        while self.apps.len() >= MAX_APPS {
            let oldest = self.apps.iter().min_by_key(|(_, s)| s.touched).map(|(k, _)| k.clone()).expect("not empty");
            self.apps.remove(&oldest);
        }
        let s = self.apps.entry(app.to_string()).or_default();
        s.touched = seq;
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_costs_are_moving_averages() {
        let mut s = AppStats::default();
        s.observe_launch(1000, true);
        assert_eq!(s.cold_launch_ms, Some(1000.0));
        s.observe_launch(2000, true);
        assert_eq!(s.cold_launch_ms, Some(1300.0));
        s.observe_launch(100, false);
        assert_eq!(s.warm_launch_ms, Some(100.0));
        assert_eq!(s.launches, 3);
    }

    #[test]
    fn the_quickest_return_drops_at_once_and_creeps_up() {
        let mut s = AppStats::default();
        assert_eq!(s.quickest_return_ms, None);
        s.observe_return(40.0);
        s.observe_return(5.0);
        assert_eq!(s.quickest_return_ms, Some(5.0), "a quicker return is the app's own time");
        s.observe_return(105.0);
        assert_eq!(s.quickest_return_ms, Some(10.0), "one slow return, read back, moves it a twentieth of the way");
        for _ in 0..100 {
            s.observe_return(50.0);
        }
        assert!((s.quickest_return_ms.unwrap() - 50.0).abs() < 1.0, "an app that became slower is learned so");
    }

    #[test]
    fn an_app_counts_once_a_session_however_often_it_comes_to_the_front() {
        let mut s = Stats::default();
        s.came_to_front("mail");
        s.came_to_front("mail");
        s.came_to_front("maps");
        assert_eq!(s.sessions, 1, "the session in progress at the first app in front");
        s.session_begins();
        s.came_to_front("mail");
        s.came_to_front("mail");
        let mail = s.get("mail").unwrap();
        assert_eq!((mail.fronts, mail.sessions, mail.last_session), (4, 2, 2));
        let maps = s.get("maps").unwrap();
        assert_eq!((maps.fronts, maps.sessions, maps.last_session), (1, 1, 1));
        assert_eq!(s.sessions, 2);
    }

    #[test]
    fn peak_only_grows() {
        let mut s = AppStats::default();
        s.observe_size(100);
        s.observe_size(50);
        assert_eq!(s.peak_bytes, 100);
    }

    #[test]
    fn refault_ratio_tracks_what_came_back() {
        let mut s = AppStats::default();
        s.observe_refault(100, 50);
        assert_eq!(s.refault_ratio, Some(0.5));
        s.observe_refault(100, 0);
        assert!((s.refault_ratio.unwrap() - 0.35).abs() < 1e-9);
        s.observe_refault(0, 0);
        assert!((s.refault_ratio.unwrap() - 0.35).abs() < 1e-9);
    }

    #[test]
    fn at_most_max_apps_are_kept_and_the_stalest_goes() {
        let mut s = Stats::default();
        s.entry("kept").observe_launch(100, true);
        for i in 0..MAX_APPS {
            s.entry(&format!("app{i}"));
            s.entry("kept");
        }
        assert_eq!(s.apps.len(), MAX_APPS);
        assert!(s.get("kept").is_some(), "an app learned about all along stays");
        assert!(s.get("app0").is_none(), "the one learned about least recently went");
        assert!(s.get(&format!("app{}", MAX_APPS - 1)).is_some());
    }

    #[test]
    fn relaunch_cost_learned_or_estimated() {
        let s = AppStats::default();
        assert_eq!(s.relaunch_ms(100 << 20), 400.0);
        let mut t = AppStats::default();
        t.observe_launch(2000, true);
        assert_eq!(t.relaunch_ms(1), 2000.0);
    }
}
