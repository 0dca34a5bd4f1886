//! The chance the user comes back to an app soon, as every step that weighs apps reads it:
//! by usage sessions once a screen-off has divided use, else by how long it has been away.

use super::ctx::Ctx;
use crate::engine::model::App;

/// Time away from the front after which a return is half as likely (see `p_return`).
const RETURN_HALF_MS: f64 = 120_000.0;

/// A return this quick is instant to the user (a frame at 60 Hz): a read-back added to it is
/// the whole of the wait (see `Ctx::return_weight`).
pub const INSTANT_RETURN_MS: f64 = 16.0;

impl Ctx<'_> {
    /// How long `a` has been away from the front (its age where it never was in front).
    pub fn away_ms(&self, a: &App) -> u64 {
        self.state.last_front_ms.get(&a.pid).map_or(a.age_ms, |t| self.input.now_ms.saturating_sub(*t))
    }

    /// How likely a return to `a` is soon: halved after two minutes away (the length of a
    /// usage session: LSApp's median is 1 min 46 s), never below a half. With
    /// `kill.return_by_sessions`, once a screen-off has divided use into sessions: half
    /// whether the app was in front in the session in progress, half the share of sessions it
    /// was in front in.
    pub fn p_return(&self, a: &App) -> f64 {
        let stats = &self.state.stats;
        if self.preset.kill.return_by_sessions && stats.sessions >= 2 {
            let coming = if stats.in_this_session(&a.name) { 1.0 } else { 0.0 };
            return (0.5 * coming + 0.5 * stats.session_share(&a.name)).clamp(0.02, 1.0);
        }
        let recency = 1.0 / (1.0 + self.away_ms(a) as f64 / RETURN_HALF_MS);
        (0.5 * recency + 0.5).clamp(0.02, 1.0)
    }

    /// What a squeeze of `a` is weighed at (`Compaction::slow_returns_give_first`): its chance
    /// of a return soon, times how much of that return a read-back would be. A read-back adds
    /// about the same milliseconds to any app's return; to one answered as quickly as the
    /// quickest app running (or within a frame, [`INSTANT_RETURN_MS`], if that is slower) it
    /// is all the wait the user sees, to one that takes 50 ms anyway a third of it. Measured
    /// against the quickest app running, not a frame alone, so that on a device where every
    /// return takes 300 ms the apps weigh as their chances do. Its chance alone without the
    /// switch, or before any return of it was reported.
    pub fn return_weight(&self, a: &App) -> f64 {
        let p = self.p_return(a);
        // Without the switch there is no scale (`quickest_return_ms` is None).
        let Some(quickest) = self.quickest_return_ms else { return p };
        match self.state.stats.get(&a.name).and_then(|s| s.quickest_return_ms) {
            Some(ms) => p * (quickest.max(INSTANT_RETURN_MS) / ms.max(1.0)).min(1.0),
            None => p,
        }
    }
}
