//! What the engine learns from what was *done*, never from what it only decided: a compaction refused by the kernel, a
//! dry run or a kill of a process that had already gone leaves no mark, and a compaction is confirmed by the memory it
//! actually moved. The daemon (or a test) calls [`Engine::learn`] with each action's [`Outcome`].

use super::costs::Swap;
use super::decide::Engine;
use super::input::Input;
use super::ladder::home::MOS_NEXT_PAGES;
use super::ladder::lmkd::THRASH_KILL;
use super::model::{Action, ActionKind, App, CompactScope, Victim, PAGE};
use super::preset::{Detection, KsmPolicy};
use super::state::{Compacted, KsmTrial};

/// A compaction that moved less than this share of what it asked found little cold memory left, and a read-back that
/// read less found little in swap it can reach: asking again soon would only cost CPU.
const DRY_SHARE: f64 = 0.25;

/// What became of an action.
#[derive(Debug, Clone, Copy)]
pub struct Outcome<'a> {
    pub action: &'a Action,
    /// Carried out (not a dry run, not refused).
    pub done: bool,
    /// Tried and refused by the kernel or the executor, as against not tried (a dry run): what is refused for a reason
    /// of the app's or the device's may be refused again.
    pub failed: bool,
    /// Bytes it moved, reclaimed or (a kill) found resident, as measured; `None`: not measured (taken as asked).
    pub bytes: Option<u64>,
    /// The daemon's thread CPU it took, in µs, where measured: what a squeeze's compression costs (costs.rs).
    pub cpu_us: Option<u64>,
}

impl<'a> Outcome<'a> {
    /// Carried out as asked (a trace or a test with no kernel to measure).
    pub fn done(action: &'a Action) -> Outcome<'a> {
        Outcome { action, done: true, failed: false, bytes: None, cpu_us: None }
    }

    /// Not carried out, nor tried (a dry run).
    pub fn undone(action: &'a Action) -> Outcome<'a> {
        Outcome { action, done: false, failed: false, bytes: None, cpu_us: None }
    }

    /// Tried, and refused.
    pub fn failed(action: &'a Action) -> Outcome<'a> {
        Outcome { action, done: false, failed: true, bytes: None, cpu_us: None }
    }
}

impl Engine {
    /// Learn from the outcomes of the decision on `input`.
    pub fn learn(&mut self, input: &Input, outcomes: &[Outcome]) {
        let now = input.now_ms;
        for o in outcomes {
            let (action, done) = (o.action, o.done);
            if !o.failed {
                self.learn_tried(input, action);
            }
            match &action.kind {
                // An attempt to grow swap is throttled whether it worked or not: a full disk does not get emptier by
                // asking every tick.
                ActionKind::SwapGrow { .. } => self.state.last_swap_grow_ms = Some(now),
                // A read-back that found little of what it asked for in swap (a JVM's swap held in shared memory, say),
                // or was refused: asking again each decision would walk the app's page map (or be refused) for nothing,
                // so not again until it comes back to the front.
                ActionKind::Prefetch { pid, max_pages, .. }
                    if o.failed
                        || o.bytes.is_some_and(|read| (read as f64) < (*max_pages * PAGE) as f64 * DRY_SHARE) =>
                {
                    let stint = self.state.stint(*pid);
                    self.state.read_back_dry.insert(*pid, stint);
                }
                _ if !done => {}
                ActionKind::Compact { pid, app, scope, max_pages, to_storage } => {
                    self.learn_compaction(input, o, (*pid, app, *scope, *max_pages));
                    self.learn_squeeze_cost(o, *pid, *to_storage);
                }
                ActionKind::Kill { victims, .. } => self.learn_kill(input, action, victims),
                ActionKind::Ksm { run, .. } => self.learn_ksm(input, *run),
                _ => {}
            }
        }
    }

    /// What a step keeps of an action carried out or, in a dry run, only decided: the level told to apps, MOS's next
    /// reclaim count, what the app in front has had read back.
    fn learn_tried(&mut self, input: &Input, action: &Action) {
        match &action.kind {
            ActionKind::Trim { level, pid: None } => self.state.trim_sent = Some((*level, input.now_ms)),
            ActionKind::Reclaim { .. } => {
                if let Some(n) = action.reason.fields.get(MOS_NEXT_PAGES) {
                    self.state.mos_reclaim_pages = Some(*n as u64);
                }
            }
            ActionKind::Prefetch { pid, max_pages, .. } => {
                let stint = self.state.stint(*pid);
                let e = self.state.read_back_whole.entry(*pid).or_insert((stint, 0));
                *e = (stint, if e.0 == stint { e.1 } else { 0 } + max_pages * PAGE);
            }
            _ => {}
        }
    }

    /// A compaction done: watched for pages that come back, marked whole, or dry when it gave much less than asked
    /// (nothing cold left to take).
    fn learn_compaction(
        &mut self,
        input: &Input,
        o: &Outcome,
        (pid, app, scope, max_pages): (u32, &str, CompactScope, Option<u64>),
    ) {
        let now = input.now_ms;
        if scope == CompactScope::SharedObjects {
            self.state.so_done.insert(pid);
        }
        let before = input.apps.iter().find(|a| a.pid == pid).map_or(0, |a| a.swap_bytes);
        if matches!(scope, CompactScope::Anon | CompactScope::All) {
            self.state.compacted.entry(pid).or_insert(Compacted {
                app: app.to_string(),
                at_ms: now,
                swap_before: before,
                swap_peak: before,
                came_back: 0,
            });
        }
        if max_pages.is_none() {
            self.state.whole.insert(pid, now);
        }
        let asked = max_pages.map(|p| p * PAGE);
        if let (Some(asked), Some(moved), CompactScope::Anon) = (asked, o.bytes, scope) {
            if (moved as f64) < asked as f64 * DRY_SHARE {
                self.state.dry.insert(pid, now);
            }
        }
    }

    /// What a squeeze's pages cost the daemon's CPU, into zram or to storage; an app squeezed to storage reads from
    /// there on its return (feedback.rs).
    fn learn_squeeze_cost(&mut self, o: &Outcome, pid: u32, to_storage: bool) {
        let swap = if to_storage { Swap::Storage } else { Swap::Zram };
        if to_storage {
            self.state.on_storage.insert(pid);
        }
        if let (Some(cpu_us), Some(bytes)) = (o.cpu_us, o.bytes) {
            self.state.stats.device.observe_squeeze(swap, cpu_us, bytes / PAGE);
        }
    }

    /// A kill done: held pending until its victims are gone; a thrashing kill cuts lmkd's limit.
    fn learn_kill(&mut self, input: &Input, action: &Action, victims: &[Victim]) {
        self.state.pending_kill = Some((victims.iter().map(|v| v.pid).collect(), input.now_ms));
        self.state.lmkd.killing = true;
        let thrash = action.reason.fields.get(THRASH_KILL).is_some_and(|v| *v > 0.0);
        if let (true, Detection::Psi(l)) = (thrash, &self.preset.detection) {
            let total = input.snapshot.memory.total_bytes;
            let limit = self.state.lmkd.limit_pct.unwrap_or(l.thrashing_base_pct(total));
            self.state.lmkd.limit_pct = Some(limit * (100.0 - l.thrashing_decay(total)) / 100.0);
        }
    }

    /// ksmd run or stopped; KSM's trial counts its passes and what it merged from its first run.
    fn learn_ksm(&mut self, input: &Input, run: bool) {
        self.state.ksm_running = run;
        let trial = self.preset.ksm.as_ref().is_some_and(KsmPolicy::counts_passes);
        if let (true, true, None, crate::Facility::Available(k)) =
            (run, trial, self.state.ksm_trial, &input.snapshot.ksm)
        {
            self.state.ksm_trial = Some(KsmTrial {
                scans_from: k.full_scans,
                saved_from: App::ksm_merged_total(input.apps),
                off_since_ms: None,
            });
        }
    }

    /// Decide, and learn as if every action were carried out: for tests and traces that have no kernel to act on.
    pub fn decide_and_assume_done(&mut self, input: &Input) -> Vec<Action> {
        let actions = self.decide(input);
        self.learn(input, &actions.iter().map(Outcome::done).collect::<Vec<_>>());
        actions
    }
}
