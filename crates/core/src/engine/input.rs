//! What one decision reads: the time, the snapshot, the apps and the events since the last.

use super::model::{App, Event};
use crate::Snapshot;

/// What one decision reads.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// Milliseconds on a monotonic clock (the daemon's; a trace's; a test's).
    pub now_ms: u64,
    pub snapshot: &'a Snapshot,
    pub apps: &'a [App],
    pub events: &'a [Event],
}

/// Whether a decision on these events is a poll between full looks: a poll, with at most the deaths of victims since.
/// Its apps are the last full look's, so only kill decisions are taken on it and nothing is learned from the apps.
pub fn is_poll(events: &[Event]) -> bool {
    events.iter().any(|e| matches!(e, Event::Poll))
        && events.iter().all(|e| matches!(e, Event::Poll | Event::VictimGone { .. }))
}

impl Input<'_> {
    pub fn is_poll(&self) -> bool {
        is_poll(self.events)
    }
}
