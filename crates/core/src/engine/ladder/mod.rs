//! The ladder (docs/design.md): cheapest and least harmful steps first, one file a step. Each step looks at the [`Ctx`]
//! (what is seen, what earlier steps already decided) and adds actions with their reasons. The preset decides which
//! steps act and how.

mod adaptive_swap;
mod ams;
mod before_launch;
mod chance;
mod cost;
mod ctx;
mod freeze;
pub mod home;
pub mod kill;
mod lmk;
pub mod lmkd;
mod prefetch;
mod prepare_idle;
mod room;
mod shortage;
pub mod shrink;
mod squeeze;
mod storage;
mod trim;
mod under_pressure;

use crate::engine::input::Input;
use crate::engine::preset::Preset;
use crate::engine::state::State;

pub use adaptive_swap::FILE_HOLD_MS;
pub use ctx::{zram_ratio, Ctx, DEFAULT_ZRAM_RATIO};

/// What the steps keep between decisions, taught by this input before they decide (a step only reads the engine's state
/// while it decides; what it did is learned from outcomes).
pub fn observe(state: &mut State, preset: &Preset, input: &Input) {
    trim::observe(state, preset, input);
    prepare_idle::observe_ksm(state, preset, input);
    home::observe(state, preset, input);
    freeze::observe(state, input);
    lmkd::observe(state, preset, input);
}

/// [`observe`] for a poll, which runs only the steps that kill.
pub fn observe_kills(state: &mut State, preset: &Preset, input: &Input) {
    lmkd::observe(state, preset, input);
}

/// Only the steps that kill: a poll between full looks (`Input::is_poll`) decides on fresh memory figures and the last
/// look's apps, which are good enough to choose a victim by but not to size compactions by.
pub fn run_kills(ctx: &mut Ctx) {
    ams::run(ctx);
    lmk::run(ctx);
    lmkd::run(ctx);
    kill::run(ctx);
}

/// Run the ladder, cheapest first.
pub fn run(ctx: &mut Ctx) {
    trim::run(ctx);
    prepare_idle::run(ctx);
    home::run(ctx);
    before_launch::run(ctx);
    under_pressure::run(ctx);
    adaptive_swap::run(ctx);
    ams::run(ctx);
    lmk::run(ctx);
    lmkd::run(ctx);
    kill::run(ctx);
    freeze::run(ctx);
    prefetch::run(ctx);
}
