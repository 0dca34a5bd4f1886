//! The engine's view of the domain's processes: their classes (said over the socket, else the config's rules, else
//! `oom_score_adj`), who is never acted on, and what the preset needs to know of each that a snapshot does not say (KSM
//! opt-in, unshared shared objects), read only when needed and cached.

use crate::config::Config;
use memorch_core::engine::{App, Preset};
use memorch_core::{Class, Snapshot};
use memorch_linux::{target, Domain, SysRoot};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// How long an app's unshared shared-object figure is reused.
const SO_REFRESH: Duration = Duration::from_secs(30);

/// How long a process's KSM opt-in (`ksm_merge_any` of `/proc/PID/ksm_stat`, set at start as a rule) is reused: the
/// file walks every VMA of the process, and read on every full look it was 7 % of the daemon's CPU.
const KSM_REFRESH: Duration = Duration::from_secs(60);

pub struct AppView {
    root: SysRoot,
    /// The daemon's domain (fixed for its life: a reload keeps it): what an app's group and identity are read below.
    domain: Domain,
    /// Classes said over the socket, by pid.
    classes: BTreeMap<u32, Class>,
    /// Names a launcher gave over the socket (`launched`), by pid.
    names: BTreeMap<u32, String>,
    /// Identities read from the processes themselves, by pid (read once).
    identities: BTreeMap<u32, String>,
    /// memorch and its ancestors: never acted on.
    own_pids: Vec<u32>,
    /// Unshared shared-object bytes by pid, and when they were read (`smaps` is costly).
    so_cache: BTreeMap<u32, (Instant, u64)>,
    /// KSM opt-in by pid, and when it was read.
    ksm_cache: BTreeMap<u32, (Instant, bool)>,
    /// Each process's app group of its own, if it is in one (for freezing and its refault count), read once.
    groups: BTreeMap<u32, Option<memorch_linux::appgroup::AppGroup>>,
    /// When each process started, ms after boot, by pid: a pid found with another start is another process, and nothing
    /// said or read of the old one is its ([`Self::owned_by`]).
    starts: BTreeMap<u32, u64>,
}

impl AppView {
    pub fn new(root: &SysRoot, domain: &Domain) -> AppView {
        AppView {
            root: root.clone(),
            domain: domain.clone(),
            classes: BTreeMap::new(),
            names: BTreeMap::new(),
            identities: BTreeMap::new(),
            own_pids: target::self_and_ancestors(root),
            so_cache: BTreeMap::new(),
            ksm_cache: BTreeMap::new(),
            groups: BTreeMap::new(),
            starts: BTreeMap::new(),
        }
    }

    /// A launcher named the process at `pid` (`launched`): its statistics are kept under `name` from now on.
    pub fn tell_name(&mut self, pid: u32, name: String) {
        self.told_of(pid);
        self.names.insert(pid, name);
    }

    /// An activity manager said the process at `pid` is of `class`.
    pub fn tell_class(&mut self, pid: u32, class: Class) {
        self.told_of(pid);
        self.classes.insert(pid, class);
    }

    /// What is said over the socket is said of the process that has `pid` now: if it is not the one last seen with it,
    /// what was kept of that one goes first.
    fn told_of(&mut self, pid: u32) {
        if let Ok(stat) = memorch_linux::process::read_stat(&self.root, pid) {
            self.owned_by(pid, stat.start_ms(&self.root));
        }
    }

    /// `pid` belongs to the process that started at `start_ms`: where another had it, forget what was said or read of
    /// that one, so the new process is not named, classed or acted on as the old (to a clock tick, as `owner.rs`).
    fn owned_by(&mut self, pid: u32, start_ms: u64) {
        if self.starts.insert(pid, start_ms).is_some_and(|before| before != start_ms) {
            self.keep_only(|p| p != pid);
        }
    }

    /// Fill `apps` from a full snapshot. Under pressure nothing slow is read (smaps, KSM): cached figures are used.
    /// `frozen`: the apps the daemon froze (the executor's set).
    pub fn build(
        &mut self,
        apps: &mut Vec<App>,
        snap: &Snapshot,
        cfg: &Config,
        preset: &Preset,
        under_pressure: bool,
        frozen: &BTreeSet<u32>,
    ) {
        apps.clear();
        let freezer = preset.freeze_after_ms.is_some() || !frozen.is_empty();
        let read_ksm = preset.ksm.is_some();
        // What KSM merged of each opted-in app, for KSM's trial only.
        let weigh_ksm = preset.ksm.as_ref().is_some_and(memorch_core::engine::preset::KsmPolicy::has_trial);
        // Only presets that drop unshared shared objects first need them, and only for background apps; never read
        // smaps on a decision under pressure (it waits behind reclaim): use what is cached. Nor while memory is
        // plentiful: the figure serves a step under pressure only, and smaps of every background app was a seventh of
        // the daemon's CPU in a light run.
        let near_short = memorch_core::engine::wake::memory_short(&snap.memory, &snap.psi);
        let read_so =
            preset.compaction.as_ref().is_some_and(|c| c.shared_objects_first) && (near_short || under_pressure);
        for p in snap.processes.iter().flatten() {
            self.owned_by(p.pid, snap.uptime_ms.saturating_sub(p.age_ms));
            let mut a = App::from_process(p);
            a.name = self.name_of(p.pid, &p.name);
            a.class = self.class_of(p.pid, &p.name, p.class, cfg);
            // Never memorch, its ancestors, a name the config protects, or the init of a PID namespace (its death would
            // take every process of the namespace with it).
            a.protected = self.own_pids.contains(&p.pid) || p.pid_ns_init || cfg.apps.protected.contains(&p.name);
            // One more read per app: not on a decision woken by pressure (KSM runs at idle). Targeted KSM looks at
            // background apps only; stock KSM at every app.
            let stock_ksm = preset.ksm.as_ref().is_some_and(|k| !k.idle_targeted);
            if read_ksm && !under_pressure && (a.is_background() || stock_ksm) {
                a.ksm_mergeable = self.ksm_opted_in(p.pid);
                // What KSM merged of it now (a counter, not a walk; the snapshot's figure is the PSS cache's, minutes
                // old): KSM's trial weighs it.
                if weigh_ksm && a.ksm_mergeable {
                    a.ksm_merged_bytes =
                        memorch_linux::process::ksm_merging_pages(&self.root, p.pid).map(|n| n * self.root.page_size);
                }
            }
            if read_so && a.is_background() && a.actionable() {
                a.so_unshared_bytes = self.so_unshared(p.pid, under_pressure);
            }
            if frozen.contains(&p.pid) {
                a.frozen = Some(true);
            } else if freezer && !under_pressure && a.actionable() && self.is_freezable(p.pid) {
                a.frozen = Some(false);
            }
            apps.push(a);
        }
    }

    /// An app's class: said over the socket, else the config's rule for its name, else what its `oom_score_adj` says
    /// (`seen`).
    pub fn class_of(&self, pid: u32, comm: &str, seen: Class, cfg: &Config) -> Class {
        self.classes.get(&pid).copied().or_else(|| cfg.rule_class(comm)).unwrap_or(seen)
    }

    /// In an app group of its own that has a v2 group (where `cgroup.freeze` is).
    fn group(&mut self, pid: u32) -> Option<&memorch_linux::appgroup::AppGroup> {
        let (root, domain) = (&self.root, &self.domain);
        self.groups.entry(pid).or_insert_with(|| memorch_linux::appgroup::of_process(root, pid, domain)).as_ref()
    }

    /// Only a group memorch made is frozen: nothing would undo it in a group of the system's if memorch died.
    fn is_freezable(&mut self, pid: u32) -> bool {
        self.group(pid).is_some_and(|g| g.made_by_memorch && g.v2_dir().is_some())
    }

    /// Whether the process opted in to KSM, read again after [`KSM_REFRESH`].
    fn ksm_opted_in(&mut self, pid: u32) -> bool {
        if let Some((_, on)) = self.ksm_cache.get(&pid).filter(|(t, _)| t.elapsed() < KSM_REFRESH) {
            return *on;
        }
        // Opted in for the whole process (prctl), or for some of its memory (madvise MADV_MERGEABLE: ksmd keeps rmap
        // items for it).
        let on = memorch_linux::ksm::read_process(&self.root, pid).is_ok_and(|k| k.merge_any || k.rmap_items > 0);
        self.ksm_cache.insert(pid, (Instant::now(), on));
        on
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

    /// What a user would call the app: the name its launcher gave, else an identity stable across restarts of the same
    /// program (see [`identity`]), never the command name alone (four Redis servers are four apps).
    fn name_of(&mut self, pid: u32, comm: &str) -> String {
        if let Some(n) = self.names.get(&pid) {
            return n.clone();
        }
        if let Some(id) = self.identities.get(&pid) {
            return id.clone();
        }
        match identity(&self.root, pid, comm, &self.domain) {
            Some(id) => self.identities.entry(pid).or_insert(id).clone(),
            // Caught between fork and exec (no arguments yet): its command for now.
            None => comm.to_string(),
        }
    }

    /// Forget what was said or read of processes that are gone.
    pub fn forget_gone(&mut self, live: &[u32]) {
        self.keep_only(|p| live.contains(&p));
        self.starts.retain(|p, _| live.contains(p));
    }

    /// Keep what was said or read of the pids `keep` holds to only (their starts aside).
    fn keep_only(&mut self, keep: impl Fn(u32) -> bool) {
        self.classes.retain(|p, _| keep(*p));
        self.names.retain(|p, _| keep(*p));
        self.identities.retain(|p, _| keep(*p));
        self.so_cache.retain(|p, _| keep(*p));
        self.ksm_cache.retain(|p, _| keep(*p));
        self.groups.retain(|p, _| keep(*p));
    }
}

/// `NAME#HASH`: the app's label (its command's name, or its scope's application id or Android package:
/// `memorch_linux::app_label`), and a hash of the program, its arguments and its cgroup below the domain, so that a
/// restart of the same app finds its learned history and two instances of one program with other arguments do not share
/// it. The groups made per launch are left out of the cgroup: the app's own group below the domain (the one a squeeze
/// of it acts on, [`memorch_linux::appgroup::of_process`]: memorch's `app-PID`, a systemd scope, Android's `pid_N`) and
/// any `app-…` group (systemd's scopes, named with a pid). `None` while the process shows no arguments (between fork
/// and exec, or a kernel thread). Read once a process.
pub fn identity(root: &SysRoot, pid: u32, comm: &str, domain: &Domain) -> Option<String> {
    let args = memorch_linux::process::cmdline(root, pid).ok().filter(|a| !a.is_empty())?;
    let below = memorch_linux::app_label::below_domain(root, pid, domain);
    let label = memorch_linux::app_label::label(&below, args.first().map(String::as_str), comm);
    let mut below: Vec<&str> = below.split('/').filter(|p| !p.is_empty()).collect();
    if memorch_linux::appgroup::of_process(root, pid, domain).is_some() {
        below.pop();
    }
    below.retain(|p| !p.starts_with(memorch_linux::appgroup::PREFIX));
    // FNV-1a: stable across builds and machines, unlike std's hasher.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in args.iter().map(String::as_str).chain(std::iter::once("\0")).chain(below) {
        for b in part.bytes().chain(std::iter::once(0)) {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
    Some(format!("{label}#{:08x}", h >> 32))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The identity tests start processes and read their groups: one at a time (a run of the whole suite once saw a
    /// restart of `sleep 30` hash to another identity while the test that moves processes between groups ran beside
    /// it).
    static IDENTITY_TESTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn identity_tells_instances_of_one_program_apart_and_finds_a_restart() {
        let _one_at_a_time = IDENTITY_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let root = SysRoot::live();
        // A child's arguments show only once its exec is through, a moment after spawn().
        let start = |arg: &str| {
            let c = std::process::Command::new("sleep").arg(arg).spawn().unwrap();
            assert!(memorch_linux::wait::wait_for(std::time::Duration::from_secs(5), || {
                memorch_linux::process::cmdline(&root, c.id()).is_ok_and(|a| !a.is_empty())
            }));
            c
        };
        let (mut a, mut b) = (start("30"), start("31"));
        let system = Domain::open(&root, &memorch_linux::DomainSpec::System).unwrap();
        let (ia, ib) =
            (identity(&root, a.id(), "sleep", &system).unwrap(), identity(&root, b.id(), "sleep", &system).unwrap());
        assert!(ia.starts_with("sleep#") && ib.starts_with("sleep#"), "{ia} {ib}");
        assert_ne!(ia, ib, "two instances with other arguments are two apps");
        a.kill().unwrap();
        a.wait().unwrap();
        let mut again = start("30");
        assert_eq!(
            identity(&root, again.id(), "sleep", &system).unwrap(),
            ia,
            "a restart of the same app finds its history"
        );
        for c in [&mut b, &mut again] {
            c.kill().unwrap();
            c.wait().unwrap();
        }
    }

    /// A program started in a group of its own made per launch (a systemd scope: `chat-1.scope`, then `chat-2.scope`)
    /// is the same app at each launch; in a group it shares with another app, the group is part of what tells it apart.
    #[test]
    fn identity_leaves_out_a_group_made_for_one_launch() {
        use memorch_linux::{sandbox::Sandbox, testkit};
        let _one_at_a_time = IDENTITY_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        if !testkit::sandbox_facility() {
            return;
        }
        let root = SysRoot::live();
        let mut sb = Sandbox::create(&testkit::unique_name("memorch-identity"), None).unwrap();
        let dirs: Vec<std::path::PathBuf> = sb.dirs().cloned().collect();
        let mut start_in = |group: &str, arg: &str| {
            let pid = sb.spawn(std::process::Command::new("sleep").arg(arg)).unwrap().id();
            for d in &dirs {
                let g = d.join(group);
                if !g.is_dir() {
                    std::fs::create_dir(&g).unwrap();
                }
                std::fs::write(g.join("cgroup.procs"), pid.to_string()).unwrap();
            }
            assert!(memorch_linux::wait::wait_for(std::time::Duration::from_secs(5), || {
                memorch_linux::process::cmdline(&root, pid).is_ok_and(|a| !a.is_empty())
            }));
            pid
        };
        let first = start_in("chat-1.scope", "30");
        let again = start_in("chat-2.scope", "30");
        let shared = start_in("pool", "30");
        start_in("pool", "31");
        let domain = Domain::open(&root, &memorch_linux::DomainSpec::Cgroup(sb.path.clone())).unwrap();
        let id = |pid| identity(&root, pid, "sleep", &domain).unwrap();
        assert_eq!(id(first), id(again), "a second launch in a group of its own is the same app");
        assert_ne!(id(first), id(shared), "in a group it shares, the group tells it apart");
        drop(sb);
    }

    /// When the process at `pid` started, ms after boot, as a look computes it.
    fn start_ms(root: &SysRoot, pid: u32) -> u64 {
        memorch_linux::process::read_stat(root, pid).unwrap().start_ms(root)
    }

    /// A launcher named and classed a process; it exited and the kernel gave its pid to another (made on demand: clone3
    /// at the chosen pid). Neither the name nor the class is the new process's, whether a look or a launcher's word
    /// finds the new one first.
    #[test]
    fn what_was_said_of_a_process_is_not_said_of_the_next_at_its_pid() {
        let root = SysRoot::live();
        for told_first in [false, true] {
            let mut view = AppView::new(&root, &Domain::open(&root, &memorch_linux::DomainSpec::System).unwrap());
            let mut old = std::process::Command::new("/bin/sleep").arg("30").spawn().unwrap();
            let pid = old.id();
            view.tell_name(pid, "mail".into());
            view.tell_class(pid, Class::Foreground);
            view.owned_by(pid, start_ms(&root, pid));
            assert_eq!(
                view.names.get(&pid).map(String::as_str),
                Some("mail"),
                "a look at the same process keeps what was said"
            );
            assert_eq!(view.classes.get(&pid), Some(&Class::Foreground));
            // Start times are kept in clock ticks: the next process at the pid starts a few ticks later, as any reuse
            // of a pid does outside a test.
            let later = start_ms(&root, pid) + 3 * 1000 / root.clock_ticks;
            assert!(memorch_linux::wait::wait_for(std::time::Duration::from_secs(5), || {
                memorch_linux::process::uptime_ms(&root).is_ok_and(|t| t > later)
            }));
            old.kill().unwrap();
            old.wait().unwrap();
            let new = memorch_linux::testkit::spawn_at_pid(pid, &["/bin/sleep", "30"]);
            if !memorch_linux::testkit::facility(
                "a process started at a chosen pid (clone3 set_tid)",
                new.as_ref().map(|_| ()).map_err(|e| e.clone()),
            ) {
                return;
            }
            let new = new.unwrap();
            if told_first {
                view.tell_name(pid, "game".into());
            }
            view.owned_by(pid, start_ms(&root, new.pid));
            let name = if told_first { Some("game") } else { None };
            assert_eq!(view.names.get(&pid).map(String::as_str), name, "told first: {told_first}");
            assert_eq!(
                view.classes.get(&pid),
                None,
                "the old process's class was kept for the new one (told first: {told_first})"
            );
        }
    }
}
