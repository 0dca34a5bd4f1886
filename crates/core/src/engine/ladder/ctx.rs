//! What every step of the ladder sees and adds to: the input, the preset, the engine's state, and the actions decided
//! so far with the memory they are expected to free.

use crate::engine::input::Input;
use crate::engine::model::{mib, Action, ActionKind, App, CompactScope, Event, PressureLevel, Reason, Step, PAGE};
use crate::engine::preset::Preset;
use crate::engine::state::State;
use crate::engine::victims::{self, Candidate};
use crate::Class;
use std::collections::BTreeSet;

/// The zram compression ratio assumed before zram has data (ChromeOS's typical 2.6×, measured here 2.2–2.6× on
/// realistic pages).
pub const DEFAULT_ZRAM_RATIO: f64 = 2.5;

/// The compression ratio of a snapshot's zram swap (orig / compr), or the default before it has data: what the engine
/// assumes a compressed page saves.
pub fn zram_ratio(snapshot: &crate::Snapshot) -> f64 {
    let z = snapshot.zram.get();
    let (orig, compr) = z.map_or((0, 0), |z| {
        z.devices.iter().filter(|d| d.is_swap).fold((0, 0), |(o, c), d| (o + d.orig_data_bytes, c + d.compr_data_bytes))
    });
    if orig > 16 * PAGE && compr > 0 {
        orig as f64 / compr as f64
    } else {
        DEFAULT_ZRAM_RATIO
    }
}

pub struct Ctx<'a> {
    pub input: &'a Input<'a>,
    pub preset: &'a Preset,
    pub state: &'a State,
    /// The actions so far, each with the bytes it is expected to give back.
    pub(super) actions: Vec<(Action, u64)>,
    /// Pids already in an action of this decision.
    touched: BTreeSet<u32>,
    /// Pids chosen as kill victims in this decision.
    pub(super) killed: BTreeSet<u32>,
    /// Bytes the actions so far are expected to give back.
    projected_bytes: u64,
    /// Anonymous bytes this decision's compactions swap out (where the kernel puts them).
    pub(super) moved_bytes: u64,
    /// Anonymous bytes this decision's compactions send to storage files of their own (`to_storage`): room taken from
    /// the preset's storage swap.
    pub(super) cold_bytes: u64,
    /// Why nothing was done, if nothing is.
    quiet: Option<Reason>,
    /// The quickest return of the running apps, the scale of [`Ctx::return_weight`]: counted once a decision, and only
    /// under the cost model.
    pub(super) quickest_return_ms: Option<f64>,
}

impl<'a> Ctx<'a> {
    pub fn new(input: &'a Input<'a>, preset: &'a Preset, state: &'a State) -> Ctx<'a> {
        let quickest_return_ms = preset
            .cost_model
            .then(|| {
                let apps = input.apps.iter().filter(|x| x.actionable());
                apps.filter_map(|x| state.stats.get(&x.name)?.quickest_return_ms).reduce(f64::min)
            })
            .flatten();
        Ctx {
            input,
            preset,
            state,
            actions: Vec::new(),
            touched: BTreeSet::new(),
            killed: BTreeSet::new(),
            projected_bytes: 0,
            moved_bytes: 0,
            cold_bytes: 0,
            quiet: None,
            quickest_return_ms,
        }
    }

    pub fn total(&self) -> u64 {
        self.input.snapshot.memory.total_bytes
    }

    /// Free memory, with what this decision's actions are expected to free.
    pub fn free(&self) -> u64 {
        (self.input.snapshot.memory.free_bytes + self.projected_bytes).min(self.total())
    }

    /// Available memory, with what this decision's actions are expected to free.
    pub fn available(&self) -> u64 {
        (self.input.snapshot.memory.available_bytes + self.projected_bytes).min(self.total())
    }

    pub fn file_bytes(&self) -> u64 {
        let m = &self.input.snapshot.memory;
        m.file_active_bytes + m.file_inactive_bytes
    }

    pub fn frac(&self, f: f64) -> u64 {
        (self.total() as f64 * f) as u64
    }

    pub fn has_event(&self, f: impl Fn(&Event) -> bool) -> bool {
        self.input.events.iter().any(f)
    }

    pub fn pressure_event(&self) -> Option<PressureLevel> {
        self.input
            .events
            .iter()
            .filter_map(|e| match e {
                Event::Pressure { level } => Some(*level),
                _ => None,
            })
            .max()
    }

    pub fn psi_some_avg10(&self) -> f64 {
        self.input.snapshot.psi.get().map_or(0.0, |p| p.some.avg10)
    }

    /// Whether the stall over the last looks (`State::recent_stall_pct`) is over `target_pct`; with too few looks to
    /// tell, `avg10` says.
    pub fn stall_goes_on(&self, target_pct: f64) -> bool {
        self.state.recent_stall_pct().unwrap_or_else(|| self.psi_some_avg10()) > target_pct
    }

    pub fn psi_full_avg10(&self) -> f64 {
        self.input.snapshot.psi.get().map_or(0.0, |p| p.full.avg10)
    }

    /// The zram compression ratio now (orig / compr), or the default before it has data.
    pub fn zram_ratio(&self) -> f64 {
        zram_ratio(self.input.snapshot)
    }

    /// Apps memorch may act on and no action of this decision touches yet.
    pub fn free_apps(&self) -> impl Iterator<Item = &'a App> + '_ {
        self.input.apps.iter().filter(|a| a.actionable() && !self.touched.contains(&a.pid))
    }

    /// Kill candidates of at least `min_class`, in the preset's victim order, each with the chance the user comes back
    /// to it soon. Apps compacted in this decision stay candidates: a kill outranks a compaction.
    pub fn candidates(&self, min_class: Class) -> Vec<Candidate<'a>> {
        let ratio = self.zram_ratio();
        let apps: Vec<&App> = self
            .input
            .apps
            .iter()
            .filter(|a| a.actionable() && a.class >= min_class && !self.killed.contains(&a.pid))
            .collect();
        let total = self.total();
        let mut c: Vec<Candidate> = apps
            .iter()
            .map(|a| Candidate {
                p_return: self.p_return(a),
                idle_ms: self.away_ms(a),
                oom_badness: victims::oom_badness(a, total),
                ..Candidate::new(a, &self.state.stats, ratio)
            })
            .collect();
        victims::order(&mut c, self.preset.kill.order);
        c
    }

    /// The victims of a batch that free `target` bytes, as the preset chooses: the least expected cost, or the first in
    /// its order with the spare ones pruned.
    pub fn select(&self, cands: &[Candidate<'a>], target: u64) -> Vec<Candidate<'a>> {
        match self.preset.kill.order {
            victims::VictimOrder::LeastExpectedCost => victims::select_least_cost(cands, target),
            _ => victims::select_batch(cands, target),
        }
    }

    /// Keep these pids out of the rest of this decision's actions (they are about to be chosen for something else: a
    /// kill decided before the compressions listed ahead of it).
    pub fn reserve(&mut self, pids: impl Iterator<Item = u32>) {
        self.touched.extend(pids);
    }

    /// Whether an action of this decision already names this pid.
    pub fn is_touched(&self, pid: u32) -> bool {
        self.touched.contains(&pid)
    }

    /// A kill is on its way (decided in this decision, or carried out and its victims' memory not back yet, for at most
    /// `timeout_ms`): wait for it (one kill, then wait).
    pub fn kill_pending(&self, timeout_ms: u64) -> bool {
        !self.killed.is_empty()
            || self
                .state
                .pending_kill
                .as_ref()
                .is_some_and(|(_, at)| self.input.now_ms.saturating_sub(*at) < timeout_ms)
    }

    /// How many storage files of their own this decision's squeezes to storage make.
    pub(super) fn files_of_their_own(&self) -> usize {
        self.actions.iter().filter(|(a, _)| matches!(a.kind, ActionKind::Compact { to_storage: true, .. })).count()
    }

    /// Whether an action of this decision is of this kind already.
    pub fn has_pushed(&self, kind: impl Fn(&ActionKind) -> bool) -> bool {
        self.actions.iter().any(|(a, _)| kind(&a.kind))
    }

    pub fn push(&mut self, kind: ActionKind, reason: Reason, expected_bytes: u64) {
        let a = Action { kind, reason };
        self.touched.extend(a.pids());
        self.projected_bytes += expected_bytes;
        self.actions.push((a, expected_bytes));
    }

    /// Compact an app, to a storage file of its own when `cold` gives its chance of a return (squeeze.rs decides): the
    /// engine watches its pages once it learns the compaction was done. Returns the bytes it is expected to give back.
    pub fn compact_as(
        &mut self,
        app: &App,
        scope: CompactScope,
        max_pages: Option<u64>,
        mut reason: Reason,
        cold: Option<f64>,
    ) -> u64 {
        let anon_moved = anon_moved(app, scope, max_pages);
        let file_freed = match scope {
            CompactScope::File | CompactScope::All => {
                max_pages.map_or(app.file_bytes, |p| (p * PAGE).min(app.file_bytes))
            }
            CompactScope::SharedObjects => app.so_unshared_bytes.unwrap_or(0),
            CompactScope::Anon => 0,
        };
        let expected = match cold {
            Some(p) => {
                reason.text.push_str(&format!(
                    ", to a storage file of its own (a return is unlikely: {p:.2}), zram kept for the likely apps"
                ));
                reason = reason.with("p_return", p);
                self.cold_bytes += anon_moved;
                anon_moved + file_freed
            }
            None => {
                let saved = self.saved_by_moving(anon_moved) + file_freed;
                self.moved_bytes += anon_moved;
                saved
            }
        };
        // A file of its own is made to the squeeze's size: it is given in pages.
        let max_pages = if cold.is_some() { max_pages.or(Some(anon_moved.div_ceil(PAGE))) } else { max_pages };
        self.push(
            ActionKind::Compact { pid: app.pid, app: app.name.clone(), scope, max_pages, to_storage: cold.is_some() },
            reason,
            expected,
        );
        expected
    }

    /// Kill a batch (or one); no other kill in this decision, nor after it until the victims are gone (once the engine
    /// learns the kill was done).
    pub fn kill(&mut self, victims: Vec<Candidate>, target_bytes: u64, min_class: Class, reason: Reason) {
        if victims.is_empty() {
            return;
        }
        let freed: u64 = victims.iter().map(|v| v.freeable_bytes).sum();
        let pids: Vec<u32> = victims.iter().map(|v| v.pid).collect();
        // Compacting a process about to die is wasted work: drop those compactions.
        let (mut dropped, mut unmoved, mut uncold) = (0, 0, 0);
        let apps = &self.input.apps;
        self.actions.retain(|(a, expected)| {
            let ActionKind::Compact { pid, scope, max_pages, to_storage, .. } = a.kind else { return true };
            if !pids.contains(&pid) {
                return true;
            }
            dropped += expected;
            let moved = apps.iter().find(|x| x.pid == pid).map_or(0, |x| anon_moved(x, scope, max_pages));
            *if to_storage { &mut uncold } else { &mut unmoved } += moved;
            false
        });
        self.projected_bytes -= dropped;
        self.moved_bytes = self.moved_bytes.saturating_sub(unmoved);
        self.cold_bytes = self.cold_bytes.saturating_sub(uncold);
        self.killed.extend(pids.iter().copied());
        let reason = reason.with("target_bytes", target_bytes as f64).with("victims", victims.len() as f64);
        self.push(
            ActionKind::Kill { victims: victims.iter().map(Candidate::victim).collect(), target_bytes, min_class },
            reason,
            freed,
        );
    }

    /// Note why a step did nothing (shown if the whole decision does nothing).
    pub fn quiet(&mut self, reason: Reason) {
        if self.quiet.is_none() {
            self.quiet = Some(reason);
        }
    }

    /// A reason with the memory figures every reason carries.
    pub fn reason(&self, step: Step, text: impl Into<String>) -> Reason {
        Reason::new(step, text)
            .with("free_bytes", self.free() as f64)
            .with("available_bytes", self.available() as f64)
            .with("total_bytes", self.total() as f64)
            .with("psi_some_avg10", self.psi_some_avg10())
            .with("psi_full_avg10", self.psi_full_avg10())
    }

    pub fn finish(self) -> Vec<Action> {
        if !self.actions.is_empty() {
            return self.actions.into_iter().map(|(a, _)| a).collect();
        }
        let default = format!(
            "{}: nothing to do ({} free, {} available)",
            self.preset.name,
            mib(self.free()),
            mib(self.available())
        );
        let reason = self.quiet.unwrap_or_else(|| Reason::new(Step::Idle, default));
        vec![Action { kind: ActionKind::Nothing, reason }]
    }
}

/// The anonymous bytes a compaction of `app` swaps out.
pub fn anon_moved(app: &App, scope: CompactScope, max_pages: Option<u64>) -> u64 {
    match (scope, max_pages) {
        (CompactScope::File | CompactScope::SharedObjects, _) => 0,
        (_, Some(p)) => (p * PAGE).min(app.anon_bytes),
        (_, None) => app.anon_bytes,
    }
}
