//! Carrying out the engine's actions through the actuators of `memorch-linux`, or, in a dry
//! run, only saying what would be done. One log line per action with its reason; kills in
//! lmkd's familiar form. Killed processes are watched on their pidfds until they are gone.

use crate::config::Manage;
use memorch_core::engine::{Action, ActionKind, CompactScope};
use memorch_linux::compact::{self, Advice, Scope};
use memorch_linux::ksm::{KsmGuard, KsmSettings};
use memorch_linux::pidfd::Pidfd;
use memorch_linux::swapfile::SwapFileGuard;
use memorch_linux::{ksm, reclaim, snapshot, target, Domain, SysRoot};
use serde::Serialize;
use std::time::Instant;

/// A killed process, until its pidfd says it is gone.
pub struct Reaping {
    pub pidfd: Pidfd,
    pub name: String,
    pub rss_bytes: u64,
    pub swap_bytes: u64,
    pub used_before: u64,
    pub at: Instant,
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
}

pub struct Executor {
    pub root: SysRoot,
    pub domain: Domain,
    pub dry_run: bool,
    pub manage: Manage,
    /// Swap files this daemon added, removed on exit.
    pub swap_files: Vec<SwapFileGuard>,
    /// KSM settings as they were when the daemon started, put back on exit.
    pub ksm_guard: Option<KsmGuard>,
    pub reaping: Vec<Reaping>,
}

impl Executor {
    pub fn new(root: SysRoot, domain: Domain, dry_run: bool, manage: Manage) -> Executor {
        Executor { root, domain, dry_run, manage, swap_files: Vec::new(), ksm_guard: None, reaping: Vec::new() }
    }

    /// Carry out a decision. Kills go first (the fastest way to memory when it is short);
    /// outcomes come back in the engine's order. `used_before` is the domain's used memory in
    /// the decision's snapshot: reading it again would flush memcg statistics on the way to
    /// a kill.
    pub fn execute(&mut self, actions: &[Action], used_before: u64) -> Vec<Outcome> {
        let is_kill = |a: &Action| matches!(a.kind, ActionKind::Kill { .. });
        let mut out: Vec<Option<Outcome>> = vec![None; actions.len()];
        for pass in [true, false] {
            for (i, a) in actions.iter().enumerate().filter(|(_, a)| is_kill(a) == pass) {
                out[i] = Some(self.one(a, used_before));
            }
        }
        out.into_iter().map(|o| o.expect("every action carried out")).collect()
    }

    fn one(&mut self, a: &Action, used_before: u64) -> Outcome {
        let mut out = Outcome { action: a.clone(), done: false, dry_run: self.dry_run, result: String::new(), bytes: 0, at: None };
        if matches!(a.kind, ActionKind::Nothing) {
            out.result = "nothing".into();
            return out;
        }
        if self.dry_run {
            out.result = "dry run: not done".into();
            tracing::info!(action = ?a.kind, reason = %a.reason.text, "dry-run: would act");
            return out;
        }
        let r = match &a.kind {
            ActionKind::Compact { pid, app, scope, max_pages } => self.compact(*pid, app, *scope, *max_pages),
            ActionKind::Kill { victims, .. } => {
                let mut total = 0;
                let mut done = Vec::new();
                let first = self.reaping.len();
                // Signal every victim first, then reap their memory: the last victim's signal
                // must not wait for the first one's address space to be torn down.
                for v in victims {
                    match self.kill(v.pid, &a.reason.text, used_before) {
                        Ok(b) => {
                            total += b;
                            done.push(v.pid.to_string());
                            out.at.get_or_insert_with(Instant::now);
                        }
                        Err(e) => tracing::warn!(pid = v.pid, app = %v.app, error = %e, "kill not done"),
                    }
                }
                for r in &self.reaping[first..] {
                    r.pidfd.mrelease();
                }
                if done.is_empty() { Err("no victim could be killed".into()) } else { Ok((format!("killed {}", done.join(", ")), total)) }
            }
            ActionKind::Reclaim { bytes } => reclaim::reclaim(&self.root, &self.domain, *bytes, false)
                .map(|r| (format!("reclaimed {} of {} bytes in {} µs", r.reclaimed_bytes, r.requested_bytes, r.elapsed_us), r.reclaimed_bytes))
                .map_err(|e| e.to_string()),
            ActionKind::Ksm { run, pages_to_scan, sleep_ms } => self.ksm(*run, *pages_to_scan, *sleep_ms),
            ActionKind::SwapGrow { bytes } => self.swap_grow(*bytes),
            ActionKind::SwapShrink => self.swap_shrink(),
            ActionKind::Freeze { .. } | ActionKind::Thaw { .. } => Err("freezing single processes needs a cgroup per app; not done".into()),
            ActionKind::Nothing => unreachable!(),
        };
        out.at.get_or_insert_with(Instant::now);
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

    fn compact(&self, pid: u32, app: &str, scope: CompactScope, max_pages: Option<u64>) -> Result<(String, u64), String> {
        let t = target::check(&self.root, pid, &self.domain).map_err(|e| e.to_string())?;
        let scope = match scope {
            CompactScope::Anon => Scope::Anon,
            CompactScope::File => Scope::File,
            CompactScope::SharedObjects => Scope::SharedObjects,
            CompactScope::All => Scope::All,
        };
        let r = compact::compact(&self.root, &t, scope, Advice::Pageout, max_pages, false).map_err(|e| e.to_string())?;
        Ok((format!("compacted '{app}' ({pid}): {} bytes out in {} µs{}", r.moved_bytes, r.elapsed_us, if r.exited { ", exited mid-way" } else { "" }), r.moved_bytes))
    }

    /// Signal one process; it is reaped (process_mrelease) by the caller and watched until
    /// gone. Returns its resident bytes.
    fn kill(&mut self, pid: u32, why: &str, used_before: u64) -> Result<u64, String> {
        let t = target::check(&self.root, pid, &self.domain).map_err(|e| e.to_string())?;
        let s = memorch_linux::kill::signal(&self.root, &t).map_err(|e| e.to_string())?;
        let res = s.resident;
        tracing::info!(
            pid, uid = s.uid, app = %t.name, class = %t.class, oom_score_adj = t.oom_score_adj,
            rss_kb = res.rss_bytes() / 1024, swap_kb = res.swap_bytes / 1024, reason = %why,
            "Kill '{}' ({}), uid {}, oom_score_adj {} to free {}kB rss, {}kB swap; reason: {}",
            t.name, pid, s.uid, t.oom_score_adj, res.rss_bytes() / 1024, res.swap_bytes / 1024, why
        );
        self.reaping.push(Reaping { pidfd: t.pidfd, name: t.name, rss_bytes: res.rss_bytes(), swap_bytes: res.swap_bytes, used_before, at: s.at });
        Ok(res.rss_bytes())
    }

    /// A victim's pidfd turned readable: it is gone. Log what came back; returns its pid,
    /// name, the bytes regained and how long it took.
    pub fn reaped(&mut self, index: usize) -> Option<(u32, String, u64, u64)> {
        let r = self.reaping.swap_remove(index);
        let used = snapshot::cheap(&self.root, &self.domain).map(|s| s.memory.used_bytes).unwrap_or(r.used_before);
        let regained = r.used_before.saturating_sub(used);
        let ms = r.at.elapsed().as_millis() as u64;
        tracing::info!(pid = r.pidfd.pid, app = %r.name, regained_bytes = regained, ms, "victim gone");
        Some((r.pidfd.pid, r.name, regained, ms))
    }

    fn ksm(&mut self, run: bool, pages_to_scan: u64, sleep_ms: u64) -> Result<(String, u64), String> {
        if !self.manage.ksm {
            return Err("[manage] ksm = false: KSM left alone".into());
        }
        if self.ksm_guard.is_none() {
            // Remember every knob as it is, to put back on exit.
            let now = ksm::read(&self.root);
            let k = now.get().ok_or("KSM is not available")?;
            let same = KsmSettings { run: Some(k.run), pages_to_scan: Some(k.pages_to_scan), sleep_ms: Some(k.sleep_ms) };
            self.ksm_guard = Some(KsmGuard::tune(&self.root, &same).map_err(|e| e.to_string())?);
        }
        ksm::tune(&self.root, &KsmSettings { run: Some(run as u8), pages_to_scan: Some(pages_to_scan), sleep_ms: Some(sleep_ms) }).map_err(|e| e.to_string())?;
        Ok((format!("ksm {}", if run { "running" } else { "stopped" }), 0))
    }

    fn swap_grow(&mut self, bytes: u64) -> Result<(String, u64), String> {
        if !self.manage.swap_files {
            return Err("[manage] swap_files = false: no swap file added".into());
        }
        let g = SwapFileGuard::add(&self.root, &self.manage.swap_file_dir, bytes, memorch_linux::swapfile::DEFAULT_PRIORITY).map_err(|e| e.to_string())?;
        let what = format!("added swap file {}", g.path.display());
        self.swap_files.push(g);
        Ok((what, bytes))
    }

    fn swap_shrink(&mut self) -> Result<(String, u64), String> {
        let swaps = memorch_linux::swaps::read(&self.root).map_err(|e| e.to_string())?;
        let idle = |g: &SwapFileGuard| swaps.devices.iter().any(|d| std::path::Path::new(&d.path) == g.path && d.used_bytes == 0);
        let before = self.swap_files.len();
        self.swap_files.retain(|g| !idle(g));
        let n = before - self.swap_files.len();
        if n == 0 {
            return Err("no idle swap file of this daemon to remove".into());
        }
        Ok((format!("removed {n} idle swap files"), 0))
    }
}
