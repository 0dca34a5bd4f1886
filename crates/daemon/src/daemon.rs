//! The daemon: one thread, one poll loop over the signalfd, a timerfd, the domain's PSI
//! triggers, the control socket and its clients, and the pidfds of victims being reaped.
//! Cheap snapshots every tick; a full snapshot and a decision on pressure, on a request, when
//! memory runs low, or at least every `full_snapshot_ms`.

use crate::config::{Config, Overrides};
use crate::executor::{Executor, Outcome};
use crate::metrics::{self, Counters};
use crate::protocol::{self, Answer, Request};
use crate::server::Server;
use crate::store;
use memorch_core::engine::victims::{self, Candidate};
use memorch_core::engine::{ActionKind, App, Engine, Event, Input, PressureLevel, Reason};
use memorch_core::{Class, Snapshot};
use memorch_linux::events::{PsiTrigger, SignalFd, StallKind, TimerFd};
use memorch_linux::zram::ZramGuard;
use memorch_linux::{process, snapshot, target, Domain, SysRoot};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Save learned statistics at least this often.
const SAVE_EVERY: Duration = Duration::from_secs(60);

pub struct Daemon {
    cfg: Config,
    config_path: Option<PathBuf>,
    /// What the command line set: kept on top of every reload.
    overrides: Overrides,
    root: SysRoot,
    engine: Engine,
    exec: Executor,
    server: Server,
    timer: TimerFd,
    signals: SignalFd,
    triggers: Vec<PsiTrigger>,
    events: Vec<Event>,
    /// Classes said over the socket, by pid.
    classes: BTreeMap<u32, Class>,
    snap: Option<Snapshot>,
    apps: Vec<App>,
    last_full: Instant,
    counters: Counters,
    /// The last reason memorch acted on each pid for (`explain`).
    last_reasons: BTreeMap<u32, Reason>,
    zram: Option<ZramGuard>,
    /// memorch and its ancestors: never acted on.
    own_pids: Vec<u32>,
    epoch: Instant,
    last_save: Instant,
    stop: bool,
    /// Cheap snapshots that failed in a row: a domain that is gone ends the daemon.
    failed_reads: u32,
    /// Unshared shared-object bytes by pid, and when they were read (`smaps` is costly).
    so_cache: BTreeMap<u32, (Instant, u64)>,
}

/// How long an app's unshared shared-object figure is reused.
const SO_REFRESH: Duration = Duration::from_secs(30);

impl Daemon {
    /// Set up everything the preset needs; nothing is changed if any part fails.
    pub fn start(cfg: Config, config_path: Option<PathBuf>, overrides: Overrides) -> Result<Daemon, String> {
        let root = SysRoot::live();
        // What a memorch that died left (zram, swap files, KSM settings) goes first: it
        // would otherwise look like the machine's own set-up.
        for r in memorch_linux::recovery::recover_all(&root) {
            match r {
                Ok(done) => tracing::warn!("{done}"),
                Err(e) => tracing::error!(error = %e, "could not undo what a memorch process that died left"),
            }
        }
        let spec = cfg.domain_spec();
        let domain = Domain::open(&root, &spec).map_err(|e| format!("domain {spec}: {e}"))?;
        let signals = SignalFd::new(&[libc::SIGTERM, libc::SIGINT, libc::SIGHUP]).map_err(|e| e.to_string())?;
        let timer = TimerFd::new(Duration::from_millis(cfg.loop_.tick_ms)).map_err(|e| e.to_string())?;
        let server = Server::bind(&cfg.socket).map_err(|e| format!("control socket {}: {e}", cfg.socket.display()))?;
        std::fs::create_dir_all(&cfg.state_dir).map_err(|e| format!("state dir {}: {e}", cfg.state_dir.display()))?;
        let (stats, _) = store::load(&cfg.state_dir);
        let preset = cfg.preset();
        let mut triggers = Vec::new();
        if let Some(psi) = &domain.psi_file {
            let w = cfg.loop_.psi_window_ms * 1000;
            for (kind, stall) in [(StallKind::Some, cfg.loop_.psi_some_stall_ms), (StallKind::Full, cfg.loop_.psi_full_stall_ms)] {
                match PsiTrigger::open(psi, kind, stall * 1000, w) {
                    Ok(t) => {
                        tracing::info!(file = %psi.display(), kind = ?kind, stall_us = t.stall_us, window_us = t.window_us, "PSI trigger armed");
                        triggers.push(t);
                    }
                    Err(e) => tracing::warn!(error = %e, "no PSI trigger: the daemon will only wake on its timer"),
                }
            }
        }
        let zram = setup_zram(&cfg, &root, &domain, &preset)?;
        // SAFETY: setpriority on this process only.
        if unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, cfg.loop_.nice) } != 0 {
            tracing::warn!(nice = cfg.loop_.nice, error = %std::io::Error::last_os_error(), "could not set the daemon's priority");
        }
        if cfg.loop_.lock_memory {
            if let Err(e) = memorch_linux::events::lock_memory() {
                tracing::warn!(error = %e, "memory not locked: the daemon may stall on page faults when memory is short");
            }
        }
        let exec = Executor::new(root.clone(), domain, cfg.dry_run, cfg.manage.clone());
        tracing::info!(preset = %preset.name, domain = %spec, dry_run = cfg.dry_run, socket = %cfg.socket.display(), "memorch running");
        Ok(Daemon {
            own_pids: target::self_and_ancestors(&root),
            engine: Engine::with_stats(preset, stats),
            cfg,
            config_path,
            overrides,
            root,
            exec,
            server,
            timer,
            signals,
            triggers,
            events: Vec::with_capacity(16),
            classes: BTreeMap::new(),
            snap: None,
            apps: Vec::with_capacity(256),
            last_full: Instant::now() - Duration::from_secs(3600),
            counters: Counters::default(),
            last_reasons: BTreeMap::new(),
            zram,
            epoch: Instant::now(),
            last_save: Instant::now(),
            stop: false,
            failed_reads: 0,
            so_cache: BTreeMap::new(),
        })
    }

    /// Run until SIGTERM or SIGINT, then put the machine back as it was.
    pub fn run(mut self) -> Result<(), String> {
        let mut fds: Vec<libc::pollfd> = Vec::with_capacity(128);
        // A first look at once, so status has a snapshot and the preset acts on what it finds.
        self.events.push(Event::Timer);
        self.decide(Instant::now(), "start");
        while !self.stop {
            fds.clear();
            let pfd = |fd, events| libc::pollfd { fd, events, revents: 0 };
            fds.push(pfd(self.signals.fd(), libc::POLLIN));
            fds.push(pfd(self.timer.fd(), libc::POLLIN));
            fds.push(pfd(self.server.fd(), libc::POLLIN));
            let t0 = fds.len();
            fds.extend(self.triggers.iter().map(|t| pfd(t.fd(), libc::POLLPRI)));
            let c0 = fds.len();
            fds.extend(self.server.clients.iter().map(|c| pfd(c.fd(), libc::POLLIN | if c.wants_write() { libc::POLLOUT } else { 0 })));
            let r0 = fds.len();
            fds.extend(self.exec.reaping.iter().map(|r| pfd(r.pidfd.raw(), libc::POLLIN)));
            // SAFETY: polling our own fds.
            // A client with requests read but not yet handled (its budget ran out) is served
            // again at once.
            let wait = if self.server.clients.iter().any(|c| c.has_pending()) { 0 } else { -1 };
            let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, wait) };
            if n < 0 {
                continue; // EINTR
            }
            let woke = Instant::now();
            if fds[0].revents != 0 {
                while let Some(sig) = self.signals.read() {
                    self.on_signal(sig);
                }
            }
            let mut decide_now = false;
            let mut cause = "timer";
            for (i, f) in fds[t0..c0].iter().enumerate().rev() {
                if f.revents & (libc::POLLERR | libc::POLLNVAL) != 0 {
                    // The group was removed: its trigger reports errors forever.
                    tracing::warn!(file = %self.triggers[i].path.display(), "PSI trigger failed (group removed?): dropped");
                    self.triggers.remove(i);
                } else if f.revents & libc::POLLPRI != 0 {
                    let level = if self.triggers[i].kind == StallKind::Full { PressureLevel::Complete } else { PressureLevel::Partial };
                    self.events.push(Event::Pressure { level });
                    self.counters.pressure_events += 1;
                    decide_now = true;
                    cause = "pressure";
                }
            }
            if fds[2].revents != 0 {
                self.server.accept();
            }
            let client_rev: Vec<i16> = fds[c0..r0].iter().map(|f| f.revents).collect();
            for (i, rev) in client_rev.into_iter().enumerate() {
                if rev & libc::POLLOUT != 0 {
                    self.server.clients[i].flush();
                }
                if rev & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 || self.server.clients[i].has_pending() {
                    for line in self.server.clients[i].read_lines() {
                        if self.on_line(i, line, woke) {
                            decide_now = true;
                            if cause == "timer" {
                                cause = "request";
                            }
                        }
                    }
                }
            }
            let gone: Vec<usize> = fds[r0..].iter().enumerate().filter(|(_, f)| f.revents != 0).map(|(i, _)| i).collect();
            for i in gone.into_iter().rev() {
                if let Some((pid, name, regained, ms)) = self.exec.reaped(i) {
                    self.counters.regained_bytes += regained;
                    self.publish(&json!({"event": "victim_gone", "pid": pid, "app": name, "regained_bytes": regained, "ms": ms}));
                    // The engine waits for this before it kills again; then it looks again.
                    self.events.push(Event::VictimGone { pid });
                    decide_now = true;
                }
            }
            if fds[1].revents != 0 {
                self.timer.drain();
                decide_now |= self.tick();
            }
            if decide_now {
                self.decide(woke, cause);
            }
            self.server.reap();
            if self.last_save.elapsed() >= SAVE_EVERY {
                self.save();
            }
        }
        self.shutdown();
        Ok(())
    }

    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    fn on_signal(&mut self, sig: i32) {
        match sig {
            libc::SIGHUP => self.reload(),
            _ => {
                tracing::info!(signal = sig, "stopping");
                self.stop = true;
            }
        }
    }

    /// SIGHUP: read the config again, the command line's settings on top; keep the old one if
    /// the new one is bad. A dry run stays one: only a restart without it arms memorch.
    /// Every change that takes effect is logged.
    fn reload(&mut self) {
        let Some(path) = self.config_path.clone() else {
            tracing::warn!("SIGHUP: started without --config, nothing to reload");
            return;
        };
        let mut new = match Config::load(&path) {
            Ok(c) => c,
            Err(e) => return tracing::error!(error = %e, "SIGHUP: new config rejected, keeping the old one"),
        };
        let file_arms = !new.dry_run;
        self.overrides.apply(&mut new);
        if self.cfg.dry_run && file_arms {
            tracing::warn!("SIGHUP: dry_run stays on: a reload never arms memorch; restart it without --dry-run and with dry_run = false to act");
            new.dry_run = true;
        }
        for key in ["domain", "socket", "state_dir", "log_format"] {
            if new.changes_from(&self.cfg).iter().any(|(k, _, _)| k == key) {
                tracing::warn!(key, "SIGHUP: {key} takes effect on restart only; kept as it was");
            }
        }
        let (domain, socket, state_dir, log_format) = (self.cfg.domain.clone(), self.cfg.socket.clone(), self.cfg.state_dir.clone(), self.cfg.log_format.clone());
        let new = Config { domain, socket, state_dir, log_format, ..new };
        let changes = new.changes_from(&self.cfg);
        if new.preset != self.cfg.preset {
            let stats = self.engine.state.stats.clone();
            self.engine = Engine::with_stats(new.preset(), stats);
        }
        if new.loop_.tick_ms != self.cfg.loop_.tick_ms {
            let _ = self.timer.set(Duration::from_millis(new.loop_.tick_ms));
        }
        self.exec.dry_run = new.dry_run;
        self.exec.manage = new.manage.clone();
        self.cfg = new;
        for (key, old, new) in &changes {
            tracing::info!(key = %key, old = %old, new = %new, "config changed");
        }
        tracing::info!(preset = %self.cfg.preset, dry_run = self.cfg.dry_run, changes = changes.len(), "config reloaded");
    }

    /// A cheap look every tick; whether it calls for a decision.
    fn tick(&mut self) -> bool {
        self.counters.cheap_snapshots += 1;
        let due = self.last_full.elapsed() >= Duration::from_millis(self.cfg.loop_.full_snapshot_ms);
        let low = match snapshot::cheap(&self.root, &self.exec.domain) {
            Ok(s) => {
                self.failed_reads = 0;
                let m = &s.memory;
                m.available_bytes < m.total_bytes * 3 / 10 || s.psi.get().is_some_and(|p| p.some.avg10 > 1.0)
            }
            Err(e) => {
                tracing::warn!(error = %e, "cheap snapshot failed");
                self.failed_reads += 1;
                if self.failed_reads >= 3 && self.exec.domain.cgroup.as_ref().is_some_and(|d| d.dirs().all(|p| !p.exists())) {
                    tracing::error!(domain = %self.exec.domain.spec, "the domain's cgroup is gone: stopping");
                    self.stop = true;
                }
                false
            }
        };
        if due || low || !self.events.is_empty() {
            self.events.push(Event::Timer);
            return true;
        }
        false
    }

    /// Full snapshot, engine, actions. `cause` (pressure, request, timer, start) and the time
    /// from the wake-up to the actions go with each published action.
    fn decide(&mut self, woke: Instant, cause: &str) {
        // Under pressure, every millisecond counts: skip the page-table walks for PSS.
        let take = if cause == "pressure" { snapshot::full_fast } else { snapshot::full };
        let snap = match take(&self.root, &self.exec.domain) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "full snapshot failed; no decision");
                return;
            }
        };
        self.counters.full_snapshots += 1;
        self.last_full = Instant::now();
        let snapshot_us = woke.elapsed().as_micros() as u64;
        self.build_apps(&snap, cause == "pressure");
        let events = std::mem::take(&mut self.events);
        let now = self.now_ms();
        let actions = self.engine.decide(&Input { now_ms: now, snapshot: &snap, apps: &self.apps, events: &events });
        let decided_us = woke.elapsed().as_micros() as u64;
        self.counters.decisions += 1;
        let outcomes = self.exec.execute(&actions, snap.memory.used_bytes);
        for o in &outcomes {
            self.account(o);
            let mut v = serde_json::to_value(o).unwrap_or_default();
            v["event"] = json!("action");
            v["wake_to_act_us"] = json!(o.at.map(|t| t.duration_since(woke).as_micros() as u64));
            v["cause"] = json!(cause);
            v["snapshot_done_us"] = json!(snapshot_us);
            v["decided_us"] = json!(decided_us);
            self.publish(&v);
        }
        let live: Vec<u32> = self.apps.iter().map(|a| a.pid).collect();
        self.last_reasons.retain(|p, _| live.contains(p));
        self.classes.retain(|p, _| live.contains(p));
        self.snap = Some(snap);
    }

    fn account(&mut self, o: &Outcome) {
        if matches!(o.action.kind, ActionKind::Nothing) {
            return;
        }
        for p in o.action.pids() {
            self.last_reasons.insert(p, o.action.reason.clone());
        }
        if !o.done {
            return;
        }
        let kind = match &o.action.kind {
            ActionKind::Compact { .. } => {
                self.counters.compacted_bytes += o.bytes;
                "compact"
            }
            ActionKind::Kill { victims, .. } => {
                for v in victims {
                    *self.counters.kills.entry(v.class.name().to_string()).or_default() += 1;
                }
                "kill"
            }
            ActionKind::Reclaim { .. } => {
                self.counters.reclaimed_bytes += o.bytes;
                "reclaim"
            }
            ActionKind::Ksm { .. } => "ksm",
            ActionKind::SwapGrow { .. } => "swap_grow",
            ActionKind::SwapShrink => "swap_shrink",
            ActionKind::Freeze { .. } => "freeze",
            ActionKind::Thaw { .. } => "thaw",
            ActionKind::Nothing => "nothing",
        };
        *self.counters.actions.entry(kind.to_string()).or_default() += 1;
    }

    /// The engine's view of the domain's processes: classes from the socket, then config
    /// rules, then oom_score_adj; memorch, its ancestors and protected names never acted on.
    fn build_apps(&mut self, snap: &Snapshot, under_pressure: bool) {
        self.apps.clear();
        let read_ksm = self.engine.preset.ksm.is_some();
        // Only presets that drop unshared shared objects first need them, and only for
        // background apps; never read smaps on a decision under pressure (it waits behind
        // reclaim): use what is cached.
        let read_so = self.engine.preset.compaction.as_ref().is_some_and(|c| c.shared_objects_first);
        if read_so {
            let live: Vec<u32> = snap.processes.iter().flatten().map(|p| p.pid).collect();
            self.so_cache.retain(|p, _| live.contains(p));
        }
        for p in snap.processes.iter().flatten() {
            let mut a = App::from_process(p);
            if let Some(c) = self.classes.get(&p.pid).copied().or_else(|| self.cfg.rule_class(&p.name)) {
                a.class = c;
            }
            // Never memorch, its ancestors, a name the config protects, or the init of a PID
            // namespace (its death would take every process of the namespace with it).
            a.protected = self.own_pids.contains(&p.pid) || p.pid_ns_init || self.cfg.apps.protected.iter().any(|n| *n == p.name);
            // One more read per app: not on a decision woken by pressure (KSM runs at idle).
            if read_ksm && !under_pressure && a.is_background() {
                a.ksm_mergeable = memorch_linux::ksm::read_process(&self.root, p.pid).is_ok_and(|k| k.merge_any);
            }
            if read_so && a.is_background() && a.actionable() {
                let fresh = self.so_cache.get(&p.pid).is_some_and(|(t, _)| t.elapsed() < SO_REFRESH);
                if !fresh && !under_pressure {
                    if let Ok(b) = memorch_linux::maps::unshared_so_bytes(&self.root, p.pid) {
                        self.so_cache.insert(p.pid, (Instant::now(), b));
                    }
                }
                a.so_unshared_bytes = self.so_cache.get(&p.pid).map(|(_, b)| *b);
            }
            self.apps.push(a);
        }
    }

    fn publish(&mut self, v: &serde_json::Value) {
        let mut line = v.to_string();
        line.push('\n');
        for c in self.server.clients.iter_mut().filter(|c| c.subscribed) {
            c.send(line.as_bytes());
        }
    }

    /// One request line from client `i`; returns whether it calls for a decision now.
    fn on_line(&mut self, i: usize, line: Result<String, String>, woke: Instant) -> bool {
        self.counters.requests += 1;
        let peer = self.server.clients[i].peer;
        let req = line.and_then(|l| protocol::parse(&l)).and_then(|r| {
            let root = &self.root;
            protocol::authorize(&r, peer, &self.cfg.control.uids, |pid| process::read_uid(root, pid).ok()).map(|_| r)
        });
        self.server.clients[i].judged(req.is_ok());
        let req = match req {
            Ok(r) => r,
            Err(e) => {
                self.counters.bad_requests += 1;
                self.server.clients[i].send(Answer::err(e).line().as_bytes());
                return false;
            }
        };
        let (answer, decide) = self.handle(req, i, woke);
        if answer.is_none() {
            return decide;
        }
        let a = answer.unwrap();
        if !a.ok {
            self.counters.bad_requests += 1;
        }
        self.server.clients[i].send(a.line().as_bytes());
        decide
    }

    fn handle(&mut self, req: Request, client: usize, woke: Instant) -> (Option<Answer>, bool) {
        match req {
            Request::State { pid, class } => {
                let class = Class::from_name(&class).expect("validated");
                if !self.exec.domain.contains(&self.root, pid).unwrap_or(false) {
                    return (Some(Answer::err(format!("pid {pid} is not in domain {}", self.exec.domain.spec))), false);
                }
                if !self.exec.dry_run {
                    if let Err(e) = process::write_oom_score_adj(&self.root, &pid.to_string(), class.oom_score_adj()) {
                        return (Some(Answer::err(e.to_string())), false);
                    }
                }
                self.classes.insert(pid, class);
                self.events.push(Event::AppState { pid, class });
                (Some(Answer::ok(None)), false)
            }
            Request::Launch { app, expect_mb } => {
                self.events.push(Event::LaunchIntent { app, expected_bytes: expect_mb.map(|mb| mb << 20) });
                // Decide now and answer with what was done, so a launcher can wait for it.
                let before = self.counters.decisions;
                self.decide(woke, "request");
                let acted = self.counters.decisions > before;
                (Some(Answer::ok(Some(json!({ "decided": acted })))), false)
            }
            Request::Launched { app, pid, ms, cold } => {
                self.events.push(Event::Launched { app, pid, ms, cold });
                (Some(Answer::ok(None)), false)
            }
            Request::Home {} => {
                self.events.push(Event::Home);
                (Some(Answer::ok(None)), true)
            }
            Request::Screen { on } => {
                self.events.push(Event::Screen { on });
                (Some(Answer::ok(None)), true)
            }
            Request::Status {} => (Some(Answer::ok(Some(self.status()))), false),
            Request::Explain { pid } => (Some(self.explain(pid)), false),
            Request::Events {} => {
                self.server.clients[client].subscribed = true;
                (Some(Answer::ok(None)), false)
            }
            Request::Metrics {} => {
                let text = metrics::prometheus(&self.counters, self.snap.as_ref(), &self.engine.preset.name);
                (Some(Answer::ok(Some(json!({ "text": text })))), false)
            }
        }
    }

    fn status(&self) -> serde_json::Value {
        let (cpu, rss) = metrics::self_usage();
        json!({
            "preset": self.engine.preset.name,
            "domain": self.exec.domain.spec.to_string(),
            "dry_run": self.exec.dry_run,
            "uptime_ms": self.now_ms(),
            "counters": self.counters,
            "memory": self.snap.as_ref().map(|s| &s.memory),
            "psi": self.snap.as_ref().map(|s| &s.psi),
            "apps": self.apps.len(),
            "zram": self.zram.as_ref().map(|z| &z.setup),
            "swap_files": self.exec.swap_files.iter().map(|g| g.path.display().to_string()).collect::<Vec<_>>(),
            "pending_kills": self.exec.reaping.len(),
            "cpu_seconds": cpu,
            "rss_bytes": rss,
        })
    }

    /// Where a process stands in the ladder, and why.
    fn explain(&self, pid: u32) -> Answer {
        let Some(app) = self.apps.iter().find(|a| a.pid == pid) else {
            return Answer::err(format!("pid {pid} was not in domain {} at the last full snapshot", self.exec.domain.spec));
        };
        let ratio = self.snap.as_ref().and_then(|s| s.zram.get()).and_then(|z| z.devices.first()).and_then(|d| d.compression_ratio).unwrap_or(2.5);
        let stats = &self.engine.state.stats;
        let mut order: Vec<Candidate> = self.apps.iter().filter(|a| a.actionable()).map(|a| Candidate::new(a, stats, ratio)).collect();
        victims::order(&mut order, self.engine.preset.kill.order);
        let rank = order.iter().position(|c| c.pid == pid);
        let me = Candidate::new(app, stats, ratio);
        let why = if app.protected {
            "protected: memorch, an ancestor of it, the init of a PID namespace, or a name in [apps] protected".to_string()
        } else if app.class.is_protected() {
            "a system process (oom_score_adj < 0): never acted on".to_string()
        } else {
            match rank {
                Some(r) => format!("{} of {} in the kill order ({} first, then {:?})", r + 1, order.len(), "least important class", self.engine.preset.kill.order),
                None => "not a candidate".into(),
            }
        };
        Answer::ok(Some(json!({
            "pid": pid,
            "app": app.name,
            "class": app.class,
            "protected": !app.actionable(),
            "kill_rank": rank.map(|r| r + 1),
            "candidates": order.len(),
            "freeable_bytes": me.freeable_bytes,
            "relaunch_ms": me.relaunch_ms,
            "cost_ms_per_mb": me.cost_per_mb(),
            "stats": stats.get(&app.name),
            "step_pages": self.engine.state.step_pages.get(&app.name),
            "last_action": self.last_reasons.get(&pid),
            "summary": why,
        })))
    }

    fn save(&mut self) {
        self.last_save = Instant::now();
        if let Err(e) = store::save(&self.cfg.state_dir, &self.engine.state.stats) {
            tracing::warn!(error = %e, "saving learned app statistics failed");
        }
    }

    /// Put back what memorch changed: swap files, KSM settings, zram; and say exactly what
    /// was put back and what could not be.
    fn shutdown(mut self) {
        self.save();
        let mut done = Vec::new();
        let mut failed = Vec::new();
        for mut g in std::mem::take(&mut self.exec.swap_files) {
            match g.remove_now() {
                Ok(()) => done.push(format!("removed swap file {}", g.path.display())),
                Err(e) => failed.push(format!("swap file {}: {e}", g.path.display())),
            }
        }
        if let Some(mut g) = self.exec.ksm_guard.take() {
            match g.restore_now() {
                Ok(()) => done.push(format!("put KSM back (run {:?}, pages_to_scan {:?}, sleep {:?} ms)", g.previous().run, g.previous().pages_to_scan, g.previous().sleep_ms)),
                Err(e) => failed.push(format!("KSM settings: {e}")),
            }
        }
        if let Some(mut z) = self.zram.take() {
            match z.teardown_now() {
                Ok(()) => done.push(format!("removed its zram {}", z.setup.device)),
                Err(e) => failed.push(format!("zram {}: {e}", z.setup.device)),
            }
        }
        if !failed.is_empty() {
            tracing::error!(put_back = ?done, not_put_back = ?failed, "stopped, but not everything memorch changed could be put back");
        } else if done.is_empty() {
            tracing::info!("stopped; memorch had changed nothing machine-wide");
        } else {
            tracing::info!(put_back = ?done, "stopped; everything memorch changed is put back");
        }
    }
}

/// zram as the preset asks, when the domain has no swap and the config lets memorch manage
/// it; changes nothing in a dry run.
fn setup_zram(cfg: &Config, root: &SysRoot, domain: &Domain, preset: &memorch_core::engine::Preset) -> Result<Option<ZramGuard>, String> {
    let Some(pct) = preset.swap.zram_pct else { return Ok(None) };
    if !cfg.manage.zram {
        return Ok(None);
    }
    let swaps = memorch_linux::swaps::read(root).map_err(|e| e.to_string())?;
    if swaps.total_bytes > 0 {
        tracing::info!(swap_bytes = swaps.total_bytes, "swap exists: using it, changing nothing");
        return Ok(None);
    }
    let total = snapshot::cheap(root, domain).map_err(|e| e.to_string())?.memory.total_bytes;
    let size = (total as f64 * pct / 100.0) as u64;
    if cfg.dry_run {
        tracing::info!(size, algorithm = %preset.swap.zram_algorithm, "dry-run: would set up zram");
        return Ok(None);
    }
    let g = ZramGuard::setup(root, size, Some(&preset.swap.zram_algorithm), 100).map_err(|e| format!("zram set-up for preset {}: {e}", preset.name))?;
    tracing::info!(device = %g.setup.device, size, algorithm = %g.setup.algorithm, "zram set up as swap");
    Ok(Some(g))
}
