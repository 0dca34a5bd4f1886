//! The engine and its decision: inputs first teach it (feedback.rs, infer.rs), then the ladder runs (ladder/); the
//! actions come back with their reasons.

use super::input::Input;
use super::model::{Action, Event};
use super::preset::Preset;
use super::state::State;
use super::stats::Stats;
use super::{feedback, ladder};

#[derive(Debug, Clone)]
pub struct Engine {
    pub preset: Preset,
    pub state: State,
}

impl Engine {
    pub fn new(preset: Preset) -> Engine {
        Engine { preset, state: State::default() }
    }

    /// With statistics learned before (from the state file).
    pub fn with_stats(preset: Preset, stats: Stats) -> Engine {
        Engine { preset, state: State { stats, ..State::default() } }
    }

    /// Decide what to do now. Never empty: "nothing" comes with its reason. Where no launcher speaks, what the user
    /// does is inferred from the apps first (infer.rs).
    pub fn decide(&mut self, input: &Input) -> Vec<Action> {
        if input.is_poll() {
            feedback::observe_deaths(&mut self.state, input.events);
            ladder::observe_kills(&mut self.state, &self.preset, input);
            let mut ctx = ladder::Ctx::new(input, &self.preset, &self.state);
            ladder::run_kills(&mut ctx);
            return ctx.finish();
        }
        feedback::forget_reborn(&mut self.state, input);
        let inferred = self.state.observed.infer(input.now_ms, input.apps, input.events);
        let events: Vec<Event>;
        let input = &if inferred.is_empty() {
            *input
        } else {
            events = input.events.iter().cloned().chain(inferred).collect();
            Input { events: &events, ..*input }
        };
        feedback::observe(&mut self.state, &self.preset, input);
        ladder::observe(&mut self.state, &self.preset, input);
        let mut ctx = ladder::Ctx::new(input, &self.preset, &self.state);
        ladder::run(&mut ctx);
        let actions = ctx.finish();
        debug_assert!(actions
            .iter()
            .flat_map(Action::pids)
            .all(|p| input.apps.iter().any(|a| a.pid == p && a.actionable())));
        actions
    }
}
