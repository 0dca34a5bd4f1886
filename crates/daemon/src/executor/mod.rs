//! Carrying out the engine's actions through [`Actuators`], or, in a dry run, only saying what would be done. The
//! executor decides what the config allows ([manage]), in what order (kills first), and turns each call's result into
//! an [`Outcome`]; the actuators only act: the live ones through memorch-linux (live.rs), a recording fake in tests
//! (fake.rs), so decide → execute → learn can be tested without a kernel to act on.

pub mod fake;
pub mod live;

use crate::config::Manage;
use memorch_core::engine::{Action, ActionKind, CompactScope, Step};
use memorch_linux::pidfd::Pidfd;
use memorch_protocol::VictimGone;
use serde::Serialize;
use std::collections::BTreeSet;
use std::time::Instant;

/// A victim signalled, until it is gone.
pub struct Killed {
    pub pid: u32,
    pub name: String,
    /// Its pidfd, readable once it is gone (the fake has none).
    pub pidfd: Option<Pidfd>,
    pub rss_bytes: u64,
    pub swap_bytes: u64,
    pub at: Instant,
    /// Why it was killed (the kill's reason).
    pub why: String,
}

/// One process's pages to page out: what [`Actuators::compact`] takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Squeeze<'a> {
    pub pid: u32,
    pub app: &'a str,
    pub scope: CompactScope,
    pub max_pages: Option<u64>,
}

/// What the executor asks of the kernel. Each call acts on one thing and says what it did, or why not, in words.
pub trait Actuators {
    /// Page out a process's pages; the bytes moved.
    fn compact(
        &mut self,
        pid: u32,
        app: &str,
        scope: CompactScope,
        max_pages: Option<u64>,
    ) -> Result<(String, u64), String>;
    /// Send SIGKILL (not waiting); `why` goes into the kill's log line. Refused if its `oom_score_adj` is now below
    /// `seen_adj`, what the decision saw: it came back to the front since (an activity manager lowers it first).
    fn kill(&mut self, pid: u32, why: &str, seen_adj: Option<i32>) -> Result<Killed, String>;
    /// Reap a signalled victim's memory now (process_mrelease).
    fn reap(&mut self, victim: &Killed);
    fn reclaim(&mut self, bytes: u64) -> Result<(String, u64), String>;
    fn ksm(&mut self, run: bool, pages_to_scan: u64) -> Result<String, String>;
    fn swap_grow(&mut self, bytes: u64) -> Result<String, String>;
    /// Remove this daemon's swap files that hold nothing.
    fn swap_shrink(&mut self) -> Result<String, String>;
    /// Page out a process's anonymous pages to a storage swap file made for them, sized to the squeeze and enabled
    /// above zram in priority (the kernel fills the highest first), so that zram keeps its room; the bytes moved. The
    /// file stays until [`Actuators::swap_drop_cold`] removes it. A file that cannot be made (no room, no swap area
    /// left) leaves the squeeze to go where the kernel puts it, and says why; a squeeze that cannot be done leaves no
    /// file.
    fn compact_to_storage(&mut self, squeeze: Squeeze) -> Result<(String, u64), String>;
    /// Remove this file, one [`Actuators::compact_to_storage`] made (what it still holds is read back in); the engine
    /// chooses it, once it holds little (`swap.cold_drop_below`).
    fn swap_drop_cold(&mut self, path: &str) -> Result<String, String>;
    /// Freeze (or thaw) the app's own group, and wait until the kernel says it is done.
    fn set_frozen(&mut self, pid: u32, frozen: bool) -> Result<String, String>;
    /// Read up to `max_pages` of a process's swapped-out pages back into its page tables; the bytes the reads returned
    /// (fewer than asked where the pagemap found fewer in swap).
    fn prefetch(&mut self, pid: u32, app: &str, max_pages: u64) -> Result<(String, u64), String>;
    /// Whether a read-back asks for its pages on storage swap all at once before it touches them (with the preset's
    /// `prefetch_whole`); zram's swap type is then worth a probe page too, to tell them from the pages in zram.
    fn set_read_back_ahead(&mut self, _on: bool) {}
    /// The domain's used memory now (what a victim's death gave back is measured by it).
    fn used_bytes(&self) -> Option<u64>;
    /// The swap files this daemon added.
    fn swap_files(&self) -> Vec<String>;
    /// Put back what was changed machine-wide: (what was, what could not be).
    fn put_back(&mut self) -> (Vec<String>, Vec<String>);
}

/// What became of one action.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    #[serde(flatten)]
    pub action: Action,
    pub done: bool,
    pub dry_run: bool,
    /// What it did, in words (or why it failed).
    pub result: String,
    /// Bytes moved, reclaimed or (for a kill) resident in the victims.
    pub bytes: u64,
    /// When it was carried out (for a kill: when the last signal was sent).
    #[serde(skip)]
    pub at: Option<Instant>,
    /// The daemon's thread CPU a squeeze took (its compression), in µs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_us: Option<u64>,
}

impl Outcome {
    /// As the engine learns it: done, refused or not tried (a dry run), and the bytes measured where it was done.
    pub fn learned(&self) -> memorch_core::engine::Outcome<'_> {
        let failed = !self.done && !self.dry_run && !matches!(self.action.kind, ActionKind::Nothing);
        memorch_core::engine::Outcome {
            action: &self.action,
            done: self.done,
            failed,
            bytes: self.done.then_some(self.bytes),
            cpu_us: self.cpu_us,
        }
    }
}

pub struct Executor {
    pub dry_run: bool,
    pub manage: Manage,
    pub actuators: Box<dyn Actuators>,
    /// Victims signalled and not yet gone, with the domain's used memory before.
    pub reaping: Vec<(Killed, u64)>,
    /// Apps this daemon froze: thawed when they come back, and all of them when it stops.
    pub frozen: BTreeSet<u32>,
    /// The nice value the memory work no launcher waits for runs at (the preset's `work_nice`); `None`: the daemon's
    /// own. Set by the daemon with [`Self::set_preset`].
    pub work_nice: Option<i32>,
    /// Whether a launcher waits for the before-launch squeezes (`ahead.launch_waits`): those keep the daemon's
    /// priority, the user waiting for them.
    pub launcher_waits: bool,
}

impl Executor {
    pub fn new(actuators: Box<dyn Actuators>, dry_run: bool, manage: Manage) -> Executor {
        Executor {
            dry_run,
            manage,
            actuators,
            reaping: Vec::new(),
            frozen: BTreeSet::new(),
            work_nice: None,
            launcher_waits: true,
        }
    }

    /// What the executor takes from the preset: how many waited squeezes run at once on this machine, the priority of
    /// the work nobody waits for, whether zram is written back, and whether a read-back (and a return) asks for its
    /// pages on storage at once.
    pub fn set_preset(&mut self, preset: &memorch_core::engine::Preset) {
        self.work_nice = preset.work_nice;
        self.launcher_waits = preset.ahead.as_ref().is_some_and(|a| a.launch_waits);
        self.actuators.set_read_back_ahead(preset.prefetch_whole);
    }

    /// This thread at the work priority while `a` is done, if `a` is memory work no launcher waits for (a squeeze, a
    /// reclaim, a read-back) and the preset gives one. The kernel does that work in this thread's context: at the
    /// daemon's priority it would take the CPU from the app in front and from a launch.
    fn work_priority(&self, a: &Action) -> Option<memorch_linux::priority::NiceGuard> {
        let nice = self.work_nice?;
        let memory_work =
            matches!(a.kind, ActionKind::Compact { .. } | ActionKind::Reclaim { .. } | ActionKind::Prefetch { .. });
        let launch_squeeze = a.reason.step == Step::BeforeLaunch && matches!(a.kind, ActionKind::Compact { .. });
        if !memory_work || (self.launcher_waits && launch_squeeze) {
            return None;
        }
        memorch_linux::priority::NiceGuard::at(nice).inspect_err(|e| tracing::warn!(nice, error = %e, "could not lower this thread's priority for the work; it runs at the daemon's")).ok()
    }

    /// Thaw `pid` now if this daemon froze it (a launcher brings it back): before the launcher is answered, so the app
    /// runs when it is resumed. `None` if it was not frozen.
    pub fn thaw_now(&mut self, pid: u32) -> Option<Result<String, String>> {
        if !self.frozen.contains(&pid) {
            return None;
        }
        let r = self.actuators.set_frozen(pid, false);
        match &r {
            Ok(what) => {
                tracing::info!(pid, result = %what, "thawed on request");
                self.frozen.remove(&pid);
            }
            // Still ours to thaw: the next decision tries again, and so does the exit.
            Err(e) => tracing::warn!(pid, error = %e, "thaw on request failed"),
        }
        Some(r)
    }

    /// Thaw every app this daemon froze (it is stopping): (what was thawed, what could not be).
    pub fn thaw_all(&mut self) -> (Vec<String>, Vec<String>) {
        let pids = std::mem::take(&mut self.frozen);
        self.undo_each(pids, "thawing", |a, pid| a.set_frozen(pid, false))
    }

    /// Undo what this daemon did to each app, saying what was undone and what could not be.
    fn undo_each(
        &mut self,
        pids: BTreeSet<u32>,
        doing: &str,
        undo: fn(&mut dyn Actuators, u32) -> Result<String, String>,
    ) -> (Vec<String>, Vec<String>) {
        let (mut done, mut failed) = (Vec::new(), Vec::new());
        for pid in pids {
            match undo(self.actuators.as_mut(), pid) {
                Ok(what) => done.push(what),
                Err(e) => failed.push(format!("{doing} {pid}: {e}")),
            }
        }
        (done, failed)
    }

    /// Forget frozen apps that are gone (their groups go with them).
    pub fn forget_gone(&mut self, live: &[u32]) {
        self.frozen.retain(|p| live.contains(p));
    }

    /// Carry out a decision. Kills go first (the fastest way to memory when it is short); outcomes come back in the
    /// engine's order. `used_before` is the domain's used memory in the decision's snapshot: reading it again would
    /// flush memcg statistics on the way to a kill. `seen_adj`: each process's `oom_score_adj` in that snapshot.
    pub fn execute(
        &mut self,
        actions: &[Action],
        used_before: u64,
        seen_adj: &dyn Fn(u32) -> Option<i32>,
    ) -> Vec<Outcome> {
        let is_kill = |a: &Action| matches!(a.kind, ActionKind::Kill { .. });
        let mut out: Vec<Option<Outcome>> = vec![None; actions.len()];
        for pass in [true, false] {
            for (i, a) in actions.iter().enumerate().filter(|(_, a)| is_kill(a) == pass) {
                out[i] = Some(self.one(a, used_before, seen_adj));
            }
        }
        out.into_iter().map(|o| o.expect("every action carried out")).collect()
    }

    fn one(&mut self, a: &Action, used_before: u64, seen_adj: &dyn Fn(u32) -> Option<i32>) -> Outcome {
        if matches!(a.kind, ActionKind::Nothing) {
            return self.not_done(a, "nothing", None);
        }
        if self.dry_run {
            tracing::info!(action = ?a.kind, reason = %a.reason.text, "dry-run: would act");
            return self.not_done(a, "dry run: not done", None);
        }
        let priority = self.work_priority(a);
        let mut first_signal = None;
        // A squeeze's CPU is the compression it makes this thread do; nothing else is timed.
        let squeeze = matches!(a.kind, ActionKind::Compact { .. });
        let cpu_from = squeeze.then(memorch_linux::process::thread_cpu_us);
        let r = match &a.kind {
            ActionKind::Kill { victims, .. } => self.kill(
                victims.iter().map(|v| (v.pid, v.app.as_str())),
                &a.reason.text,
                seen_adj,
                used_before,
                &mut first_signal,
            ),
            kind => self.carry_out(kind),
        };
        let cpu_us = cpu_from.map(|from| memorch_linux::process::thread_cpu_us().saturating_sub(from));
        drop(priority);
        // A kill's time is its first signal's; any other action's, now.
        let mut done = self.outcome(a, r);
        done.at = first_signal.or(done.at);
        done.cpu_us = cpu_us;
        done
    }

    /// Carry out an action other than a kill: what it did and the bytes it moved, or why not.
    fn carry_out(&mut self, kind: &ActionKind) -> Result<(String, u64), String> {
        match kind {
            ActionKind::Compact { pid, app, scope, max_pages, to_storage: false } => {
                self.actuators.compact(*pid, app, *scope, *max_pages)
            }
            // Without files of its own to make, the squeeze goes where the kernel puts it.
            ActionKind::Compact { pid, app, scope, max_pages, to_storage: true } if !self.manage.swap_files => self
                .actuators
                .compact(*pid, app, *scope, *max_pages)
                .map(|(w, b)| (format!("{w} (not to storage: [manage] swap_files = false)"), b)),
            ActionKind::Compact { pid, app, scope, max_pages, to_storage: true } => {
                self.actuators.compact_to_storage(Squeeze { pid: *pid, app, scope: *scope, max_pages: *max_pages })
            }
            ActionKind::Reclaim { bytes } => self.actuators.reclaim(*bytes),
            ActionKind::Ksm { .. } if !self.manage.ksm => Err("[manage] ksm = false: KSM left alone".into()),
            ActionKind::Ksm { run, pages_to_scan } => self.actuators.ksm(*run, *pages_to_scan).map(|w| (w, 0)),
            ActionKind::SwapGrow { .. } if !self.manage.swap_files => {
                Err("[manage] swap_files = false: no swap file added".into())
            }
            ActionKind::SwapGrow { bytes } => self.actuators.swap_grow(*bytes).map(|w| (w, *bytes)),
            ActionKind::SwapShrink => self.actuators.swap_shrink().map(|w| (w, 0)),
            ActionKind::SwapDropCold { path } => self.actuators.swap_drop_cold(path).map(|w| (w, 0)),
            // Sent by the daemon before the decision's other actions (notify.rs).
            ActionKind::Trim { level, .. } => Ok((format!("'{}' notice sent", level.name()), 0)),
            ActionKind::Freeze { pid } => match self.actuators.set_frozen(*pid, true) {
                Ok(w) => {
                    self.frozen.insert(*pid);
                    Ok((w, 0))
                }
                // Nothing half-applied: a group asked to freeze that did not in time is thawed.
                Err(e) => {
                    let _ = self.actuators.set_frozen(*pid, false);
                    Err(e)
                }
            },
            // A thaw that failed stays ours to try again (an app that is gone is forgotten with the rest of what is
            // known of it: `forget_gone`).
            ActionKind::Thaw { pid } => self.actuators.set_frozen(*pid, false).map(|w| (w, 0)).inspect(|_| {
                self.frozen.remove(pid);
            }),
            // Its bytes are what it read back: memory it took (which the decision allowed for), never counted as freed
            // (metrics.rs); the engine learns from them whether the app's swap was within reach (learn.rs).
            ActionKind::Prefetch { pid, app, max_pages } => self.actuators.prefetch(*pid, app, *max_pages),
            ActionKind::Kill { .. } | ActionKind::Nothing => unreachable!("kills and nothing are carried out by one()"),
        }
    }

    /// What came of an action carried out: logged, and as the daemon publishes it.
    fn outcome(&self, a: &Action, r: Result<(String, u64), String>) -> Outcome {
        let mut out = self.not_done(a, "", Some(Instant::now()));
        match r {
            Ok((what, bytes)) => {
                out.done = true;
                out.bytes = bytes;
                tracing::info!(action = ?a.kind, bytes, result = %what, reason = %a.reason.text, "acted");
                out.result = what;
            }
            Err(e) => {
                tracing::warn!(action = ?a.kind, error = %e, reason = %a.reason.text, "action failed");
                out.result = e;
            }
        }
        out
    }

    /// `a` with nothing carried out (yet): `result` says why.
    fn not_done(&self, a: &Action, result: &str, at: Option<Instant>) -> Outcome {
        Outcome {
            action: a.clone(),
            done: false,
            dry_run: self.dry_run,
            result: result.into(),
            bytes: 0,
            at,
            cpu_us: None,
        }
    }

    /// Signal every victim first, then reap their memory: the last victim's signal must not wait for the first one's
    /// address space to be torn down.
    fn kill<'a>(
        &mut self,
        victims: impl Iterator<Item = (u32, &'a str)>,
        why: &str,
        seen_adj: &dyn Fn(u32) -> Option<i32>,
        used_before: u64,
        at: &mut Option<Instant>,
    ) -> Result<(String, u64), String> {
        let first = self.reaping.len();
        let mut total = 0;
        let mut done = Vec::new();
        for (pid, app) in victims {
            match self.actuators.kill(pid, why, seen_adj(pid)) {
                Ok(k) => {
                    total += k.rss_bytes;
                    done.push(pid.to_string());
                    at.get_or_insert(k.at);
                    self.reaping.push((k, used_before));
                }
                Err(e) => tracing::warn!(pid, app, error = %e, "kill not done"),
            }
        }
        for (k, _) in &self.reaping[first..] {
            self.actuators.reap(k);
        }
        if done.is_empty() {
            Err("no victim could be killed".into())
        } else {
            Ok((format!("killed {}", done.join(", ")), total))
        }
    }

    /// A victim's pidfd turned readable: it is gone. What came back, and how long it took.
    pub fn reaped(&mut self, index: usize) -> Option<VictimGone> {
        let (k, used_before) = self.reaping.swap_remove(index);
        let used = self.actuators.used_bytes().unwrap_or(used_before);
        let regained = used_before.saturating_sub(used);
        let ms = k.at.elapsed().as_millis() as u64;
        tracing::info!(pid = k.pid, app = %k.name, regained_bytes = regained, ms, "victim gone");
        Some(VictimGone { pid: k.pid, app: k.name, regained_bytes: regained, ms, reason: k.why })
    }
}
