//! Polling after a pressure trigger, as Android's lmkd does (core `wake.rs` has the rule): a PSI trigger fires at most
//! once a window, and the memcg's OOM killer does not wait for the next one. So for a window after a trigger (restarted
//! by each trigger, each kill and each direct reclaim seen while polling) a preset that kills is looked at again every
//! 100 ms, every 10 ms after a kill or while swap is low, and not while a victim is still dying (its pidfd wakes the
//! daemon). Those looks are light (look.rs); the engine takes only kill decisions on them (`Input::is_poll`).

use memorch_core::engine::preset::{Detection, KillMode, Preset};
use memorch_core::engine::wake;
use memorch_core::Snapshot;
use std::time::{Duration, Instant};

/// Whether `preset` is polled after a trigger: it kills, and notices pressure itself.
pub fn polls(preset: &Preset) -> bool {
    preset.kill.mode != KillMode::Never && !matches!(preset.detection, Detection::None)
}

/// A polling window under way.
#[derive(Debug, Clone, Copy)]
struct Window {
    /// When the window began, or was last restarted.
    since: Instant,
    interval: Duration,
}

/// The polling window, if one is open, and the direct reclaims the last look saw.
#[derive(Debug, Default)]
pub struct Polling {
    window: Option<Window>,
    last_direct_reclaims: Option<u64>,
}

impl Polling {
    /// Whether a window is open, closing one older than `length`.
    pub fn is_open(&mut self, length: Duration) -> bool {
        if self.window.is_some_and(|w| w.since.elapsed() > length) {
            self.window = None;
        }
        self.window.is_some()
    }

    /// Whether a window was open at the last look (no clock read).
    pub fn was_open(&self) -> bool {
        self.window.is_some()
    }

    /// How often to look while the window is open.
    pub fn interval(&self) -> Option<Duration> {
        self.window.map(|w| w.interval)
    }

    /// After a decision of `preset`: start or extend the window on a trigger, a kill, or direct reclaim while polling,
    /// and choose the interval.
    pub fn after_decision(&mut self, preset: &Preset, pressure: bool, killed: bool, snap: &Snapshot) {
        let direct = snap.counters.direct_reclaims;
        let direct_grew = direct.zip(self.last_direct_reclaims).is_some_and(|(now, before)| now > before);
        self.last_direct_reclaims = direct.or(self.last_direct_reclaims);
        if !polls(preset) || !(pressure || killed || (direct_grew && self.window.is_some())) {
            return;
        }
        let low_pct = match &preset.detection {
            Detection::Psi(l) => l.swap_free_low_pct,
            _ => wake::SWAP_LOW_PCT,
        };
        let interval = Duration::from_millis(wake::poll_interval_ms(killed, wake::swap_low(&snap.swap, low_pct)));
        self.window = Some(Window { since: Instant::now(), interval });
    }
}
