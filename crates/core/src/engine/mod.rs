//! The engine: given what memorch sees, what should it do now, and why.
//!
//! Pure: a [`Snapshot`], the [`App`]s, the [`Event`]s since last time and the time come in; [`Action`]s with their
//! reasons go out. The engine keeps what it learns (app statistics, feedback, what it did last) in its own [`State`],
//! so the same state and input always give the same actions.

pub mod costs;
pub mod decide;
pub mod explain;
pub mod feedback;
pub mod infer;
pub mod input;
pub mod ladder;
pub mod learn;
pub mod margins;
pub mod model;
pub mod preset;
mod ranges;
pub mod spec;
pub mod stall_trigger;
pub mod state;
pub mod stats;
pub mod victims;
pub mod wake;

pub use decide::Engine;
pub use input::{is_poll, Input};
pub use learn::Outcome;
pub use model::{Action, ActionKind, App, CompactScope, Event, PressureLevel, Reason, Step, Victim};
pub use preset::Preset;
pub use state::{Compacted, KsmTrial, LmkdState, Seen, State, RECENT_STALL_WINDOW_MS};
pub use stats::{AppStats, Stats};
