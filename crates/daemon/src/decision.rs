//! One decision, as a pipeline: look (look.rs), decide (the engine), act (notify.rs, then the executor), learn (the
//! engine, from the outcomes), then tell (the events stream) and tidy. `cause` (pressure, request, timer, start) and
//! the time from the wake-up to each action go with each published action.

use crate::daemon::Daemon;
use crate::executor::Outcome;
use crate::look::Look;
use memorch_core::engine::{Action, ActionKind, Event, Input};
use memorch_protocol::ActionEvent;
use std::time::{Duration, Instant};

/// A look, and what it says of pressure.
struct Looked {
    look: Look,
    /// A trigger, a read over a trigger's threshold, or a pressure event: nothing slow is read.
    under_pressure: bool,
    /// Memory short by the engine's wake rule, or under pressure: no housekeeping.
    short: bool,
    snapshot_us: u64,
}

impl Daemon {
    /// Look, decide, act, learn, tell.
    pub(crate) fn decide(&mut self, woke: Instant, cause: &str) {
        let Some(looked) = self.look(woke, cause) else { return };
        let events = std::mem::take(&mut self.events);
        // A light look's read of the stall raises its event for the next decision, after this one's events are taken (a
        // poll decides kills alone, on what it sees).
        let raised_for_next = looked.look.light && self.stall_read(&looked.look.snap.psi);
        let now_ms = self.now_ms();
        let snap = &looked.look.snap;
        let input = Input { now_ms, snapshot: snap, apps: &self.looks.apps, events: &events };
        let actions = self.engine.decide(&input);
        // Every decision with its reasons, quiet ones too (MEMORCH_LOG=debug): why nothing was done.
        tracing::debug!(cause, available = snap.memory.available_bytes, swap_used = snap.swap.used_bytes, swap_total = snap.swap.total_bytes, events = ?events, reasons = ?actions.iter().map(|a| (a.reason.step, &a.reason.text)).collect::<Vec<_>>(), "decided");
        let decided_us = woke.elapsed().as_micros() as u64;
        self.counters.decisions += 1;
        let outcomes = self.act(&actions, &looked.look);
        let killed = outcomes.iter().any(|o| o.done && matches!(o.action.kind, ActionKind::Kill { .. }));
        let input = Input { now_ms, snapshot: &looked.look.snap, apps: &self.looks.apps, events: &events };
        self.engine.learn(&input, &outcomes.iter().map(|o| o.learned()).collect::<Vec<_>>());
        let timing = (woke, looked.snapshot_us, decided_us);
        self.tell(outcomes, cause, timing);
        self.tidy(looked.short);
        self.polling.after_decision(
            &self.engine.preset,
            looked.under_pressure || raised_for_next,
            killed,
            &looked.look.snap,
        );
        self.set_timer();
        self.looks.keep(looked.look);
    }

    /// The look a decision is taken on. A poll (with the deaths it found) is decided on a light look; so is a report of
    /// what the user did while memory is plentiful. A full look's read of the stall counts at once.
    fn look(&mut self, woke: Instant, cause: &str) -> Option<Looked> {
        let poll = memorch_core::engine::is_poll(&self.events);
        let mut look = self.looks.take(&self.events, self.polling.was_open(), &self.cfg)?;
        if look.light {
            *(if poll { &mut self.counters.polls } else { &mut self.counters.reused_looks }) += 1;
        }
        let raised = !look.light && self.stall_read(&look.snap.psi);
        let under_pressure =
            cause == "pressure" || raised || self.events.iter().any(|e| matches!(e, Event::Pressure { .. }));
        let short = under_pressure || memorch_core::engine::wake::memory_short(&look.snap.memory, &look.snap.psi);
        if !look.light {
            let (cfg, preset, frozen) = (&self.cfg, &self.engine.preset, &self.exec.frozen);
            let walks = self.looks.fill(&mut look.snap, short, |view, apps, snap| {
                view.build(apps, snap, cfg, preset, under_pressure, frozen)
            });
            self.counters.pss_walks += walks as u64;
            self.counters.full_snapshots += 1;
        }
        let snapshot_us = woke.elapsed().as_micros() as u64;
        self.counters.trim_freed_bytes += self.notifier.freed_since(&self.looks.apps);
        Some(Looked { look, under_pressure, short, snapshot_us })
    }

    /// Carry the actions out: notices and pre-kill hooks first (not in a dry run), then the executor, kills first. A
    /// kill is refused where the victim's `oom_score_adj` fell since the look (it came back to the front).
    fn act(&mut self, actions: &[Action], look: &Look) -> Vec<Outcome> {
        let snap = &look.snap;
        if !self.exec.dry_run {
            self.tell_before(actions, snap.memory.available_bytes, snap.memory.total_bytes);
        }
        let seen_adj =
            |pid: u32| snap.processes.as_ref().and_then(|ps| ps.iter().find(|p| p.pid == pid)).map(|p| p.oom_score_adj);
        self.exec.execute(actions, snap.memory.used_bytes, &seen_adj)
    }

    /// Each outcome counted, kept for `explain` and published with its timing.
    fn tell(&mut self, outcomes: Vec<Outcome>, cause: &str, (woke, snapshot_us, decided_us): (Instant, u64, u64)) {
        for o in outcomes {
            for p in o.action.pids().into_iter().filter(|_| !matches!(o.action.kind, ActionKind::Nothing)) {
                self.last_reasons.insert(p, o.action.reason.clone());
            }
            crate::metrics::account(&mut self.counters, &o);
            let wake_to_act_us = o.at.map(|t| t.duration_since(woke).as_micros() as u64);
            let e = ActionEvent {
                action: o.action,
                done: o.done,
                dry_run: o.dry_run,
                result: o.result,
                bytes: o.bytes,
                cause: cause.to_string(),
                wake_to_act_us,
                snapshot_done_us: snapshot_us,
                decided_us,
            };
            self.server.publish(&memorch_protocol::Event::Action(e));
        }
    }

    /// Forget what is kept of processes gone; remove app groups that emptied. Housekeeping: not while memory is
    /// `short`, and once a full look's period (it reads every group's `cgroup.procs` in both hierarchies: every
    /// decision, it was half the daemon's reads).
    fn tidy(&mut self, short: bool) {
        let live: Vec<u32> = self.looks.apps.iter().map(|a| a.pid).collect();
        self.last_reasons.retain(|p, _| live.contains(p));
        self.looks.view.forget_gone(&live);
        self.exec.forget_gone(&live);
        if !short && self.last_cleanup.elapsed() >= Duration::from_millis(self.cfg.loop_.full_snapshot_ms) {
            memorch_linux::appgroup::remove_empty(&self.domain);
            self.last_cleanup = Instant::now();
        }
    }
}

impl Daemon {
    /// Before a decision's actions are carried out: its trim notices go out (so apps hear before anything is compressed
    /// or killed), and each kill is announced and waits for the pre-kill hook, within its bound.
    pub(crate) fn tell_before(
        &mut self,
        actions: &[memorch_core::engine::Action],
        available_bytes: u64,
        total_bytes: u64,
    ) {
        use memorch_core::engine::ActionKind;
        for a in actions {
            match &a.kind {
                ActionKind::Trim { level, pid } => {
                    let margins = memorch_core::engine::margins::Margins::of(&self.engine.preset, total_bytes);
                    let notice = memorch_protocol::TrimNotice {
                        level: *level,
                        pid: *pid,
                        available_bytes,
                        reclaim_target_bytes: margins.reclaim_target(available_bytes),
                    };
                    let told = self.server.publish_trim(&notice);
                    self.notifier.watch(&self.looks.apps, &told);
                    if pid.is_none() {
                        self.notifier.dbus(*level);
                    }
                    self.counters.trim_notices += 1;
                    tracing::info!(level = level.name(), listeners = told.len(), available_bytes, "trim notice sent");
                }
                ActionKind::Kill { victims, .. } => {
                    for v in victims {
                        let e = memorch_protocol::PreKill {
                            pid: v.pid,
                            app: v.app.clone(),
                            class: v.class,
                            reason: a.reason.text.clone(),
                            wait_ms: if self.cfg.notify.pre_kill.is_empty() {
                                0
                            } else {
                                self.cfg.notify.pre_kill_wait_ms
                            },
                        };
                        self.server.publish(&memorch_protocol::Event::PreKill(e));
                    }
                    let waited = self.notifier.pre_kill(&self.cfg.notify, victims, &a.reason.text);
                    if !waited.is_zero() {
                        tracing::info!(waited_us = waited.as_micros() as u64, "pre-kill hook done");
                    }
                }
                _ => {}
            }
        }
    }
}
