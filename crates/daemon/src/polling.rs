//! Polling after a pressure trigger, as Android's lmkd does (core `wake.rs` has the rule): a
//! PSI trigger fires at most once a window, and the memcg's OOM killer does not wait for the
//! next one. So for a window after a trigger (restarted by each trigger, each kill and each
//! direct reclaim seen while polling) a preset that kills is looked at again every 100 ms,
//! every 10 ms after a kill or while swap is low, and not while a victim is still dying (its
//! pidfd wakes the daemon). Those looks are light: memory, swap and counters read afresh, the
//! apps those of the last full look, alive ones only (no per-process walk on the pressure
//! path); the engine takes only kill decisions on them (`Input::is_poll`). A decision on a
//! report of what the user did, while memory is plentiful, is made on a light look too
//! (`reusable_look`).

use crate::daemon::Daemon;
use memorch_core::engine::preset::{Detection, KillMode};
use memorch_core::engine::{wake, App, Event};
use memorch_core::{Class, Snapshot};
use memorch_linux::pidfd::{self, Pidfd};
use memorch_linux::{process, snapshot};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// At most this many pidfds held for light looks: a domain of a whole machine may have
/// thousands of processes, and the daemon's fds are limited; the rest are read from `/proc`.
pub const MAX_HANDLES: usize = 256;

/// A polling window under way.
#[derive(Debug, Clone, Copy)]
pub struct Polling {
    /// When the window began, or was last restarted.
    pub since: Instant,
    pub interval: Duration,
}

impl Daemon {
    /// Whether this preset is polled after a trigger: it kills, and notices pressure itself.
    pub(crate) fn polls(&self) -> bool {
        let p = &self.engine.preset;
        p.kill.mode != KillMode::Never && !matches!(p.detection, Detection::None)
    }

    /// How long a window lasts: the triggers' own window (a trigger cannot fire again sooner).
    fn poll_window(&self) -> Duration {
        Duration::from_micros(
            self.triggers.iter().map(|t| t.kernel.window_us).max().unwrap_or(self.cfg.loop_.psi_window_ms * 1000),
        )
    }

    /// The polling window is still open (closed, and the timer back to its tick, once over).
    pub(crate) fn polling_now(&mut self) -> bool {
        if self.polling.is_some_and(|p| p.since.elapsed() > self.poll_window()) {
            self.polling = None;
            self.set_timer();
        }
        self.polling.is_some()
    }

    /// After a decision: start or extend the window on a trigger, a kill, or direct reclaim
    /// while polling; choose the interval; pause while a victim is dying.
    pub(crate) fn after_decision(&mut self, pressure: bool, killed: bool, snap: &Snapshot) {
        let direct = snap.counters.direct_reclaims;
        let direct_grew = direct.zip(self.last_direct_reclaims).is_some_and(|(now, before)| now > before);
        self.last_direct_reclaims = direct.or(self.last_direct_reclaims);
        if !self.polls() {
            return;
        }
        if pressure || killed || (direct_grew && self.polling.is_some()) {
            let low_pct = match &self.engine.preset.detection {
                Detection::Psi(l) => l.swap_free_low_pct,
                _ => wake::SWAP_LOW_PCT,
            };
            let interval = Duration::from_millis(wake::poll_interval_ms(killed, wake::swap_low(&snap.swap, low_pct)));
            self.polling = Some(Polling { since: Instant::now(), interval });
        }
        self.set_timer();
    }

    /// The timer's period: the poll interval while a window is open and no victim is dying
    /// (its pidfd wakes the daemon), else the tick.
    pub(crate) fn set_timer(&mut self) {
        let want = match self.polling {
            Some(p) if self.exec.reaping.is_empty() => p.interval,
            _ => Duration::from_millis(self.cfg.loop_.tick_ms),
        };
        if want != self.timer_period {
            match self.timer.set(want) {
                Ok(()) => self.timer_period = want,
                Err(e) => tracing::warn!(error = %e, "could not set the timer"),
            }
        }
    }

    /// A light look for a decision on what the user did alone, or `None` for a full one: the
    /// events report switches, home, the screen or a finished launch of apps the last full
    /// look saw (no launch to prepare, no victim gone, no pressure), that look is younger than
    /// a full look's period (`loop.full_snapshot_ms`, when the tick takes one anyway), no
    /// polling window is open, and memory is plentiful on the fresh figures (not
    /// `wake::memory_short`: available over 30 % of the domain, no stall). What a preset does
    /// there (the idle and home steps, an LMK level over free memory) acts on the last full
    /// look's sizes, at most a full look's period old as between two ticks, and every class as
    /// it is now. Each visit is two or three such reports; a full look for each was most of
    /// the daemon's CPU in a light run.
    /// `Ok` with the light look, or `Err` with the cheap snapshot read to find memory short,
    /// for the full look to build on (read once either way); `None` when nothing was read.
    pub(crate) fn reusable_look(&self) -> Option<Result<(Snapshot, Vec<App>), Snapshot>> {
        let recent = self.last_full.elapsed() < Duration::from_millis(self.cfg.loop_.full_snapshot_ms);
        if !recent || self.polling.is_some() || self.events.is_empty() {
            return None;
        }
        let seen = |pid: u32, name: Option<&String>| {
            self.apps.iter().any(|a| a.pid == pid && name.is_none_or(|n| a.name == *n))
        };
        let reports_only = self.events.iter().all(|e| match e {
            Event::AppState { pid, .. } => seen(*pid, None),
            // Under the name the launcher gives (a full look names the app anew).
            Event::Launched { pid, app, .. } => seen(*pid, Some(app)),
            Event::Home | Event::Screen { .. } | Event::Timer => true,
            _ => false,
        });
        if !reports_only {
            return None;
        }
        let snap = self.cheap_look()?;
        if wake::memory_short(&snap.memory, &snap.psi) {
            return Some(Err(snap));
        }
        self.light_from(snap).map(Ok)
    }

    /// A light look: memory, swap, zram and counters afresh (KSM's as the last look found
    /// them); the processes and apps of the last full look that are still alive (their pidfds,
    /// one poll for all), with their classes as they are now (said since,
    /// or their `oom_score_adj` read again: an app brought back to the front since the last
    /// full look must not die as the cached app it was). `None` before any full look.
    pub(crate) fn light_look(&self) -> Option<(Snapshot, Vec<App>)> {
        self.light_from(self.cheap_look()?)
    }

    /// Memory, swap, zram and counters afresh, KSM's figures those of the last look, or `None`
    /// (logged) if they could not be read.
    fn cheap_look(&self) -> Option<Snapshot> {
        let ksm = self.snap.as_ref()?.ksm.clone();
        snapshot::cheap_with_ksm(&self.root, &self.domain, ksm)
            .map_err(|e| tracing::warn!(error = %e, "light snapshot failed"))
            .ok()
    }

    /// [`Daemon::light_look`] on a cheap snapshot already read.
    fn light_from(&self, mut snap: Snapshot) -> Option<(Snapshot, Vec<App>)> {
        let last = self.snap.as_ref()?;
        let mut procs = Vec::with_capacity(self.apps.len());
        let mut apps = Vec::with_capacity(self.apps.len());
        let exited = self.exited();
        for p in last.processes.as_ref()? {
            let alive = match exited.get(&p.pid) {
                Some(gone) => !gone,
                None => process::read_stat(&self.root, p.pid).is_ok_and(|s| s.state != 'Z' && s.state != 'X'),
            };
            let Some(adj) = process::read_oom_score_adj(&self.root, p.pid).ok().filter(|_| alive) else { continue };
            let mut p = p.clone();
            p.oom_score_adj = adj;
            p.class = Class::from_oom_score_adj(adj);
            if let Some(a) = self.apps.iter().find(|a| a.pid == p.pid) {
                apps.push(App { class: self.view.class_of(p.pid, &p.name, p.class, &self.cfg), ..a.clone() });
            }
            procs.push(p);
        }
        snap.processes = Some(procs);
        Some((snap, apps))
    }

    /// Which processes held by a pidfd have exited, by pid: one poll for all of them. Empty
    /// if the poll failed (each is then read from `/proc`).
    fn exited(&self) -> BTreeMap<u32, bool> {
        let fds: Vec<&Pidfd> = self.handles.values().collect();
        match pidfd::which_exited(&fds) {
            Some(gone) => self.handles.keys().copied().zip(gone).collect(),
            None => BTreeMap::new(),
        }
    }

    /// After a full look: a pidfd for each of its processes (up to [`MAX_HANDLES`]), none
    /// for those gone. A handle whose process exited while the look saw its pid alive is of
    /// an earlier process (the pid was reused): it is opened again, or the new one would be
    /// taken for gone in every light look. A process that could not be opened (gone since, or
    /// pidfds missing) is read from `/proc` in a light look.
    pub(crate) fn keep_handles(&mut self, snap: &Snapshot) {
        let Some(procs) = snap.processes.as_ref() else { return };
        let exited = self.exited();
        self.handles.retain(|pid, _| !exited.get(pid).copied().unwrap_or(false) && procs.iter().any(|p| p.pid == *pid));
        for p in procs {
            if self.handles.len() >= MAX_HANDLES {
                break;
            }
            if let std::collections::btree_map::Entry::Vacant(e) = self.handles.entry(p.pid) {
                if let Ok(fd) = Pidfd::open(p.pid) {
                    e.insert(fd);
                }
            }
        }
    }
}
