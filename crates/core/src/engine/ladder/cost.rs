//! What taking memory costs the user against leaving it to the kernel: the cost model's first
//! term (docs/design.md, "What memorch takes"). The kernel's LRU reclaims the domain's coldest
//! pages at no cost to memorch; a squeeze beats it only where it knows more: which app the user
//! will not come back to soon, and, with the app in a memory group of its own, the app's
//! coldest pages (its limit lowered, the kernel chooses). Over an app without one,
//! `process_madvise` takes hot pages with cold, so the next return reads its working set
//! back: the kernel's own reclaim is the cheaper path, and memorch leaves it that.

use super::ctx::Ctx;
use crate::engine::model::App;
use crate::engine::victims::VictimOrder;

impl Ctx<'_> {
    /// Whether a squeeze of `a` costs the user less than the kernel's reclaim of as much.
    /// The papers' presets keep their own rules: only a preset that weighs the expected cost
    /// to the user (memorch's victim order) is asked.
    pub fn squeeze_pays(&self, a: &App) -> bool {
        self.preset.kill.order != VictimOrder::LeastExpectedCost || a.own_group
    }

    /// Whether the kernel does all the reclaiming here: no background app is worth a squeeze.
    /// Then memory under the low band is the kernel's working state and a stall its reclaim,
    /// not a sign that memorch's squeezes fall behind.
    pub fn kernel_reclaims(&self) -> bool {
        !self.input.apps.iter().any(|a| a.actionable() && a.is_background() && self.squeeze_pays(a))
    }
}
