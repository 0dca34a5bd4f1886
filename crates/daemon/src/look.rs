//! The daemon's looks at its domain: a full look (every process, PSS from a cache) or a light one (memory afresh, the
//! last full look's apps that are still alive, their classes read again: no process walk on the pressure path). A poll
//! is decided on a light look; so is a report of what the user did while memory is plentiful (`reusable`).

use crate::apps::AppView;
use crate::config::Config;
use memorch_core::engine::{wake, App, Event};
use memorch_core::{Class, Snapshot};
use memorch_linux::pidfd::{self, Pidfd};
use memorch_linux::{process, snapshot, Domain, SysRoot};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// At most this many pidfds held for light looks: a domain of a whole machine may have thousands of processes, and the
/// daemon's fds are limited; the rest are read from `/proc`.
pub const MAX_HANDLES: usize = 256;

/// What a look found: the snapshot, and whether it is light (the last full look's apps).
pub struct Look {
    pub snap: Snapshot,
    pub light: bool,
}

/// What the daemon keeps of its looks.
pub struct Looks {
    root: SysRoot,
    domain: Domain,
    pss: snapshot::PssCache,
    /// The engine's view of the processes: names, classes, groups (apps.rs).
    pub view: AppView,
    /// The last look, and the apps of the last decision.
    pub snap: Option<Snapshot>,
    pub apps: Vec<App>,
    pub last_full: Instant,
    /// A pidfd of each process of the last full look (up to [`MAX_HANDLES`]): a light look tells which are gone in one
    /// poll.
    handles: BTreeMap<u32, Pidfd>,
}

impl Looks {
    pub fn new(root: &SysRoot, domain: &Domain) -> Looks {
        Looks {
            root: root.clone(),
            domain: domain.clone(),
            pss: snapshot::PssCache::default(),
            view: AppView::new(root, domain),
            snap: None,
            apps: Vec::with_capacity(256),
            last_full: Instant::now() - Duration::from_secs(3600),
            handles: BTreeMap::new(),
        }
    }

    /// The look a decision on `events` is taken on: light for a poll, or for a report of what the user did on a recent
    /// full look (`reusable`); else a full one, built on the cheap snapshot read to find memory short where there is
    /// one. `None` (logged) if it failed.
    pub fn take(&mut self, events: &[Event], polling: bool, cfg: &Config) -> Option<Look> {
        let poll = memorch_core::engine::is_poll(events);
        let light = if poll { self.light(cfg).map(Ok) } else { self.reusable(events, polling, cfg) };
        let full = match light {
            Some(Ok((snap, apps))) => {
                self.apps = apps;
                return Some(Look { snap, light: true });
            }
            Some(Err(cheap)) => snapshot::full_fast_from(&self.root, &self.domain, cheap),
            None => snapshot::full_fast(&self.root, &self.domain),
        };
        full.map(|snap| Look { snap, light: false })
            .map_err(|e| tracing::warn!(error = %e, "full snapshot failed; no decision"))
            .ok()
    }

    /// After a full look: PSS from its cache (walked again only where old or changed, never while memory is `short`),
    /// the apps built; the number of page-table walks.
    pub fn fill(
        &mut self,
        snap: &mut Snapshot,
        short: bool,
        build: impl FnOnce(&mut AppView, &mut Vec<App>, &Snapshot),
    ) -> usize {
        let walks = self.pss.fill(&self.root, snap, !short);
        self.last_full = Instant::now();
        build(&mut self.view, &mut self.apps, snap);
        walks
    }

    /// Keep `look` as the last one, with a pidfd of each process of a full look.
    pub fn keep(&mut self, look: Look) {
        if !look.light {
            self.keep_handles(&look.snap);
        }
        self.snap = Some(look.snap);
    }

    /// A light look for a decision on what the user did alone, or `None` for a full one: the events report switches,
    /// home, the screen or a finished launch of apps the last full look saw, that look is younger than a full look's
    /// period, no polling window is open, and memory is plentiful on the fresh figures (not `wake::memory_short`).
    /// `Err` with the cheap snapshot read to find memory short, for the full look to build on.
    fn reusable(
        &self,
        events: &[Event],
        polling: bool,
        cfg: &Config,
    ) -> Option<Result<(Snapshot, Vec<App>), Snapshot>> {
        let recent = self.last_full.elapsed() < Duration::from_millis(cfg.loop_.full_snapshot_ms);
        if !recent || polling || events.is_empty() {
            return None;
        }
        let seen = |pid: u32, name: Option<&String>| {
            self.apps.iter().any(|a| a.pid == pid && name.is_none_or(|n| a.name == *n))
        };
        let reports_only = events.iter().all(|e| match e {
            Event::AppState { pid, .. } => seen(*pid, None),
            // Under the name the launcher gives (a full look names the app anew).
            Event::Launched { pid, app, .. } => seen(*pid, Some(app)),
            Event::Home | Event::Screen { .. } | Event::Timer => true,
            _ => false,
        });
        if !reports_only {
            return None;
        }
        let snap = self.cheap()?;
        if wake::memory_short(&snap.memory, &snap.psi) {
            return Some(Err(snap));
        }
        self.light_from(snap, cfg).map(Ok)
    }

    /// A light look: memory, swap, zram and counters afresh (KSM's as the last look found them); the processes and apps
    /// of the last full look still alive, with their classes as they are now (an app brought back to the front since
    /// must not die as the cached app it was). `None` before any full look.
    pub fn light(&self, cfg: &Config) -> Option<(Snapshot, Vec<App>)> {
        self.light_from(self.cheap()?, cfg)
    }

    /// Memory, swap, zram and counters afresh, KSM's figures those of the last look, or `None` (logged) if they could
    /// not be read.
    fn cheap(&self) -> Option<Snapshot> {
        let ksm = self.snap.as_ref()?.ksm.clone();
        snapshot::cheap_with_ksm(&self.root, &self.domain, ksm)
            .map_err(|e| tracing::warn!(error = %e, "light snapshot failed"))
            .ok()
    }

    /// [`Looks::light`] on a cheap snapshot already read.
    fn light_from(&self, mut snap: Snapshot, cfg: &Config) -> Option<(Snapshot, Vec<App>)> {
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
                apps.push(App { class: self.view.class_of(p.pid, &p.name, p.class, cfg), ..a.clone() });
            }
            procs.push(p);
        }
        snap.processes = Some(procs);
        Some((snap, apps))
    }

    /// Which processes held by a pidfd have exited, by pid: one poll for all of them. Empty if the poll failed (each is
    /// then read from `/proc`).
    fn exited(&self) -> BTreeMap<u32, bool> {
        let fds: Vec<&Pidfd> = self.handles.values().collect();
        match pidfd::which_exited(&fds) {
            Some(gone) => self.handles.keys().copied().zip(gone).collect(),
            None => BTreeMap::new(),
        }
    }

    /// After a full look: a pidfd for each of its processes (up to [`MAX_HANDLES`]), none for those gone. A handle
    /// whose process exited while the look saw its pid alive is of an earlier process (the pid was reused): it is
    /// opened again, or the new one would be taken for gone in every light look.
    fn keep_handles(&mut self, snap: &Snapshot) {
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
