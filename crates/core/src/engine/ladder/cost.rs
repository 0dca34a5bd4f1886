//! memorch's cost model (docs/design.md, "The cost model"): what a squeezed page is expected to cost the user, the
//! chance of a return soon times the read-back that return then waits for, as the device measured it (costs.rs); during
//! a launch, the CPU the squeeze takes from it too. A squeeze goes where it costs least, and the apps whose pages cost
//! least go first (the least likely to be wanted soon).

use super::ctx::Ctx;
use super::shrink::MAX_SHARE;
use super::storage::zram_used;
use crate::engine::costs::Swap;
use crate::engine::model::App;

/// A return this quick is instant to the user (a frame at 60 Hz): a read-back added to it is the whole of the wait (see
/// `Ctx::return_weight`).
pub const INSTANT_RETURN_MS: f64 = 16.0;

/// zram's room is scarce from this fill on: below it, every page zram takes still reads back faster than from storage
/// and zram has room for what the next squeezes ask.
pub const SCARCE_AT_ZRAM_USED_FRAC: f64 = 0.5;

/// Of the pages taken from an app, the share its next return touches before it has learned one: the refault study's
/// bound on what is worth taking (20 %).
pub const PRIOR_TOUCHED: f64 = 0.2;

impl Ctx<'_> {
    /// The share of what is taken from `a` that its next return reads back: what its returns read back of its swap
    /// (`return_touch`), never below a twentieth.
    pub fn touched_share(&self, a: &App) -> f64 {
        let learned = self.state.stats.get(&a.name).and_then(|s| s.return_touch);
        learned.unwrap_or(PRIOR_TOUCHED).clamp(0.05, 1.0)
    }

    /// What orders the apps a squeeze takes from: the chance of a return soon, times (under the model) the share of
    /// that return a read-back would be: the same milliseconds are all of a quick return, a third of a 50 ms one.
    pub fn return_weight(&self, a: &App) -> f64 {
        let p = self.p_return(a);
        let own = self.state.stats.get(&a.name).and_then(|s| s.quickest_return_ms);
        match (self.preset.cost_model, self.quickest_return_ms, own) {
            (true, Some(quickest), Some(ms)) => p * (quickest.max(INSTANT_RETURN_MS) / ms.max(1.0)).min(1.0),
            _ => p,
        }
    }

    /// The expected cost, in µs of the user's wait, of each page saved by squeezing `a` into `swap`: a read-back on its
    /// return, and, while a launch is in flight, the squeeze's CPU.
    pub fn take_cost(&self, a: &App, swap: Swap) -> f64 {
        let d = &self.state.stats.device;
        let saving = match swap {
            Swap::Zram => self.zram_saving(),
            Swap::Storage => 1.0,
        };
        let launching = if self.state.launch_in_flight.is_some() { d.cpu_us(swap) } else { 0.0 };
        (self.p_return(a) * self.touched_share(a) * d.read_us(swap) + launching) / saving
    }

    /// Whether squeezing `bytes` of `a` to storage costs less than into zram: storage is cheaper a page saved, or
    /// zram's room is getting scarce (half full) and what is left is what the apps the pressure step takes from after
    /// `a` (`return_weight`) would need: each page of theirs it then sends to storage costs more than one of `a`'s.
    pub fn storage_costs_less(&self, a: &App, bytes: u64) -> bool {
        if self.take_cost(a, Swap::Storage) < self.take_cost(a, Swap::Zram) {
            return true;
        }
        if zram_used(self) < SCARCE_AT_ZRAM_USED_FRAC {
            return false;
        }
        let mine = self.return_weight(a);
        let likelier: u64 = self
            .free_apps()
            .filter(|b| b.pid != a.pid && b.is_background() && self.return_weight(b) > mine)
            .map(|b| (b.anon_bytes as f64 * MAX_SHARE) as u64)
            .sum();
        let (zram_room, _) = self.swap_rooms(false);
        likelier + bytes > zram_room.saturating_sub(self.moved_bytes)
    }

    /// Whether storage saves a page for less of the user's wait than zram does, its worse compression counted: then
    /// storage swap grows before zram fills.
    pub fn storage_cheaper_than_zram(&self) -> bool {
        let d = &self.state.stats.device;
        d.read_us(Swap::Storage) < d.read_us(Swap::Zram) / self.zram_saving()
    }
}
