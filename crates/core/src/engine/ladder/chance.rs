//! The chance the user comes back to an app soon, as every step that weighs apps reads it: by usage sessions once a
//! screen-off has divided use, else by how long it has been away.

use super::ctx::Ctx;
use crate::engine::model::App;

/// Time away from the front after which a return is half as likely (see `p_return`).
const RETURN_HALF_MS: f64 = 120_000.0;

impl Ctx<'_> {
    /// How long `a` has been away from the front (its age where it never was in front).
    pub fn away_ms(&self, a: &App) -> u64 {
        self.state.last_front_ms.get(&a.pid).map_or(a.age_ms, |t| self.input.now_ms.saturating_sub(*t))
    }

    /// How likely a return to `a` is soon: halved after two minutes away (the length of a usage session: LSApp's median
    /// is 1 min 46 s), never below a half. With `kill.return_by_sessions`, once a screen-off has divided use into
    /// sessions: half whether the app was in front in the session in progress, half the share of sessions it was in
    /// front in.
    pub fn p_return(&self, a: &App) -> f64 {
        let stats = &self.state.stats;
        if self.preset.kill.return_by_sessions && stats.sessions >= 2 {
            let coming = if stats.in_this_session(&a.name) { 1.0 } else { 0.0 };
            return (0.5 * coming + 0.5 * stats.session_share(&a.name)).clamp(0.02, 1.0);
        }
        let recency = 1.0 / (1.0 + self.away_ms(a) as f64 / RETURN_HALF_MS);
        (0.5 * recency + 0.5).clamp(0.02, 1.0)
    }
}
