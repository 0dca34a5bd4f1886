//! A PSI trigger's rule run on the daemon's own reads of a stall total, beside the kernel's.
//!
//! Why: a trigger armed without `CAP_SYS_RESOURCE` is checked by the kernel's averaging work every 2 s, and a read of
//! the same `memory.pressure` file folds that period first (`psi_show`), so a group whose file is read often can stall
//! for seconds and never fire. The daemon reads the file every tick anyway; this checks each read against the trigger.
//!
//! Never sooner than the kernel's rule: growth is counted only over reads within the last window (the kernel also
//! counts a share of the window before). One event a window, whoever raises it first: a kernel event within a window of
//! a read's is the same stall again.

use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// A PSI stall total's reads within a window: how much the stall grew over it. The trigger below and the engine's "is
/// the stall going on" (`State::recent_stall_pct`) both count so.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StallWindow {
    /// (time µs, stall total µs) of the reads within the last window, oldest first.
    reads: VecDeque<(u64, u64)>,
}

impl StallWindow {
    /// Keep the read of `total_us` at `now_us` and those within `window_us` before it; a total that went back (the
    /// group made anew) starts the count again.
    pub fn push(&mut self, now_us: u64, total_us: u64, window_us: u64) {
        if self.reads.back().is_some_and(|&(t, v)| now_us < t || total_us < v) {
            self.reads.clear();
        }
        while self.reads.front().is_some_and(|&(t, _)| t + window_us < now_us) {
            self.reads.pop_front();
        }
        self.reads.push_back((now_us, total_us));
    }

    /// The time the kept reads span and the stall's growth over it (µs).
    pub fn growth(&self) -> (u64, u64) {
        match (self.reads.front(), self.reads.back()) {
            (Some(&(t0, v0)), Some(&(t1, v1))) => (t1 - t0, v1 - v0),
            _ => (0, 0),
        }
    }
}

#[derive(Debug, Clone)]
pub struct StallTrigger {
    pub stall_us: u64,
    pub window_us: u64,
    reads: StallWindow,
    last_event_us: Option<u64>,
}

impl StallTrigger {
    pub fn new(stall_us: u64, window_us: u64) -> StallTrigger {
        StallTrigger { stall_us, window_us, reads: StallWindow::default(), last_event_us: None }
    }

    fn within_window_of_last(&self, now_us: u64) -> bool {
        self.last_event_us.is_some_and(|t| now_us < t + self.window_us)
    }

    /// The kernel's trigger fired at `now_us`: whether it is news (no event of this trigger, from either source, within
    /// the window before).
    pub fn kernel_fired(&mut self, now_us: u64) -> bool {
        let new = !self.within_window_of_last(now_us);
        if new {
            self.last_event_us = Some(now_us);
        }
        new
    }

    /// A read of the stall total (`total_us`, the `some` or `full` line the trigger watches) at `now_us`: whether the
    /// stall within the last window reached the threshold and no event came within the window, so the trigger should
    /// have fired and did not.
    pub fn read(&mut self, now_us: u64, total_us: u64) -> bool {
        self.reads.push(now_us, total_us, self.window_us);
        if self.reads.growth().1 < self.stall_us || self.within_window_of_last(now_us) {
            return false;
        }
        self.last_event_us = Some(now_us);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1000;

    #[test]
    fn stall_over_the_threshold_within_a_window_fires_once_a_window() {
        let mut t = StallTrigger::new(10 * MS, 2000 * MS);
        assert!(!t.read(0, 0));
        assert!(!t.read(250 * MS, 9 * MS), "below the threshold");
        assert!(t.read(500 * MS, 11 * MS), "11 ms of stall within 500 ms");
        assert!(!t.read(750 * MS, 40 * MS), "one event a window");
        assert!(!t.read(2400 * MS, 60 * MS), "still within the window of the last event");
        assert!(t.read(2600 * MS, 80 * MS), "a window on, still stalling");
    }

    #[test]
    fn stall_spread_over_more_than_a_window_does_not_fire() {
        let mut t = StallTrigger::new(10 * MS, 2000 * MS);
        // 6 ms a second: never 10 ms within 2 s once the older reads leave the window.
        for s in 0..20 {
            assert!(!t.read(s * 1000 * MS, s * 4 * MS), "second {s}");
        }
    }

    #[test]
    fn a_kernel_event_and_a_read_within_one_window_are_one_event() {
        let mut t = StallTrigger::new(10 * MS, 2000 * MS);
        assert!(t.kernel_fired(100 * MS));
        assert!(!t.read(0, 0) && !t.read(500 * MS, 50 * MS), "the kernel told already");
        assert!(t.read(2200 * MS, 80 * MS), "the next window's stall is news");
        assert!(!t.kernel_fired(2300 * MS), "the kernel's event for it is not");
        assert!(t.kernel_fired(4300 * MS));
    }

    #[test]
    fn a_total_that_goes_back_starts_again() {
        let mut t = StallTrigger::new(10 * MS, 2000 * MS);
        assert!(!t.read(0, 500 * MS));
        assert!(!t.read(100 * MS, 5 * MS), "a new group: no growth from the old total");
        assert!(t.read(200 * MS, 16 * MS));
    }
}
