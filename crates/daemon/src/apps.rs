//! The engine's view of the domain's processes: their classes (said over the socket, else
//! the config's rules, else `oom_score_adj`), who is never acted on, and what the preset needs
//! to know of each that a snapshot does not say (KSM opt-in, unshared shared objects), read
//! only when needed and cached.

use crate::config::Config;
use memorch_core::engine::{App, Preset};
use memorch_core::{Class, Snapshot};
use memorch_linux::{target, SysRoot};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How long an app's unshared shared-object figure is reused.
const SO_REFRESH: Duration = Duration::from_secs(30);

pub struct AppView {
    root: SysRoot,
    /// Classes said over the socket, by pid.
    pub classes: BTreeMap<u32, Class>,
    /// memorch and its ancestors: never acted on.
    own_pids: Vec<u32>,
    /// Unshared shared-object bytes by pid, and when they were read (`smaps` is costly).
    so_cache: BTreeMap<u32, (Instant, u64)>,
}

impl AppView {
    pub fn new(root: &SysRoot) -> AppView {
        AppView { root: root.clone(), classes: BTreeMap::new(), own_pids: target::self_and_ancestors(root), so_cache: BTreeMap::new() }
    }

    /// Fill `apps` from a full snapshot. Under pressure nothing slow is read (smaps, KSM):
    /// cached figures are used.
    pub fn build(&mut self, apps: &mut Vec<App>, snap: &Snapshot, cfg: &Config, preset: &Preset, under_pressure: bool) {
        apps.clear();
        let read_ksm = preset.ksm.is_some();
        // Only presets that drop unshared shared objects first need them, and only for
        // background apps; never read smaps on a decision under pressure (it waits behind
        // reclaim): use what is cached.
        let read_so = preset.compaction.as_ref().is_some_and(|c| c.shared_objects_first);
        for p in snap.processes.iter().flatten() {
            let mut a = App::from_process(p);
            if let Some(c) = self.classes.get(&p.pid).copied().or_else(|| cfg.rule_class(&p.name)) {
                a.class = c;
            }
            // Never memorch, its ancestors, a name the config protects, or the init of a PID
            // namespace (its death would take every process of the namespace with it).
            a.protected = self.own_pids.contains(&p.pid) || p.pid_ns_init || cfg.apps.protected.iter().any(|n| *n == p.name);
            // One more read per app: not on a decision woken by pressure (KSM runs at idle).
            if read_ksm && !under_pressure && a.is_background() {
                a.ksm_mergeable = memorch_linux::ksm::read_process(&self.root, p.pid).is_ok_and(|k| k.merge_any);
            }
            if read_so && a.is_background() && a.actionable() {
                a.so_unshared_bytes = self.so_unshared(p.pid, under_pressure);
            }
            apps.push(a);
        }
    }

    fn so_unshared(&mut self, pid: u32, under_pressure: bool) -> Option<u64> {
        let fresh = self.so_cache.get(&pid).is_some_and(|(t, _)| t.elapsed() < SO_REFRESH);
        if !fresh && !under_pressure {
            if let Ok(b) = memorch_linux::maps::unshared_so_bytes(&self.root, pid) {
                self.so_cache.insert(pid, (Instant::now(), b));
            }
        }
        self.so_cache.get(&pid).map(|(_, b)| *b)
    }

    /// Forget what was said or read of processes that are gone.
    pub fn forget_gone(&mut self, live: &[u32]) {
        self.classes.retain(|p, _| live.contains(p));
        self.so_cache.retain(|p, _| live.contains(p));
    }
}
