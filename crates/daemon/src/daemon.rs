//! The daemon: one thread, one poll loop over the signalfd, a timerfd, the domain's PSI
//! triggers, the control socket and its clients, and the pidfds of victims being reaped.
//! Cheap snapshots every tick; a full snapshot and a decision on pressure, on a request, when
//! memory runs short (the engine's wake rule), or at least every `full_snapshot_ms`.
//!
//! What else the daemon does lives beside this file: what its apps are (apps.rs), what
//! clients may ask (control.rs), reloading its config (reload.rs), what it sets up on the
//! machine and puts back (machine.rs), and carrying out actions (executor.rs).

use crate::apps::AppView;
use crate::config::{Config, Overrides};
use crate::executor::Executor;
use crate::machine;
use crate::server::Server;
use crate::store;
use memorch_core::engine::{ActionKind, App, Engine, Event, Input, Reason};
use memorch_core::Snapshot;
use memorch_linux::events::{Group, Poller, SignalFd, TimerFd};
use memorch_linux::zram::ZramGuard;
use memorch_linux::{snapshot, Domain, SysRoot};
use memorch_protocol::{ActionEvent, Counters};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Save learned statistics at least this often.
const SAVE_EVERY: Duration = Duration::from_secs(60);

pub struct Daemon {
    pub(crate) cfg: Config,
    pub(crate) config_path: Option<PathBuf>,
    /// What the command line set: kept on top of every reload.
    pub(crate) overrides: Overrides,
    pub(crate) root: SysRoot,
    pub(crate) domain: Domain,
    pub(crate) engine: Engine,
    pub(crate) exec: Executor,
    pub(crate) server: Server,
    pub(crate) timer: TimerFd,
    /// The timer's period now: the tick, or the poll interval (polling.rs).
    pub(crate) timer_period: Duration,
    signals: SignalFd,
    /// PSI triggers, each with its rule run on the daemon's reads too (triggers.rs).
    pub(crate) triggers: Vec<crate::triggers::Trigger>,
    /// Polling after a pressure trigger (polling.rs), and the direct reclaims last seen.
    pub(crate) polling: Option<crate::polling::Polling>,
    pub(crate) last_direct_reclaims: Option<u64>,
    /// Events for the next decision.
    pub(crate) events: Vec<Event>,
    pub(crate) view: AppView,
    pss: snapshot::PssCache,
    pub(crate) snap: Option<Snapshot>,
    pub(crate) apps: Vec<App>,
    pub(crate) last_full: Instant,
    /// A pidfd of each process of the last full look (up to `polling::MAX_HANDLES`): a light
    /// look tells which are gone in one poll (polling.rs).
    pub(crate) handles: BTreeMap<u32, memorch_linux::pidfd::Pidfd>,
    /// When empty app groups were last looked for (`remove_empty`).
    last_cleanup: Instant,
    pub(crate) counters: Counters,
    /// The last reason memorch acted on each pid for (`explain`).
    pub(crate) last_reasons: BTreeMap<u32, Reason>,
    pub(crate) zram: Option<ZramGuard>,
    /// A preset's fixed storage swap and swappiness (machine.rs).
    pub(crate) swap_extras: machine::SwapExtras,
    pub(crate) notifier: crate::notify::Notifier,
    pub(crate) epoch: Instant,
    last_save: Instant,
    stop: bool,
    /// Cheap snapshots that failed in a row: a domain that is gone ends the daemon.
    failed_reads: u32,
}

/// Where each kind of fd sits in one wait.
struct Wake {
    signals: Group,
    timer: Group,
    listener: Group,
    triggers: Group,
    clients: Group,
    victims: Group,
}

impl Daemon {
    /// Set up everything the preset needs; nothing is changed if any part fails.
    pub fn start(cfg: Config, config_path: Option<PathBuf>, overrides: Overrides) -> Result<Daemon, String> {
        let root = SysRoot::live();
        // What a memorch that died left (zram, swap files, KSM settings) goes first: it
        // would otherwise look like the machine's own set-up.
        machine::recover(&root);
        let spec = cfg.domain_spec();
        let domain = Domain::open(&root, &spec).map_err(|e| format!("domain {spec}: {e}"))?;
        let signals = SignalFd::new(&[libc::SIGTERM, libc::SIGINT, libc::SIGHUP]).map_err(|e| e.to_string())?;
        let timer = TimerFd::new(Duration::from_millis(cfg.loop_.tick_ms)).map_err(|e| e.to_string())?;
        let socket_error = |e: std::io::Error| format!("control socket {}: {e}", cfg.socket.display());
        Server::claim(&cfg.socket).map_err(socket_error)?;
        // Only once no live daemon holds the socket: its frozen apps are not left behind.
        machine::thaw_left_frozen(&domain, cfg.dry_run);
        std::fs::create_dir_all(&cfg.state_dir).map_err(|e| format!("state dir {}: {e}", cfg.state_dir.display()))?;
        let (stats, _) = store::load(&cfg.state_dir);
        let preset = cfg.preset();
        let triggers = machine::arm_triggers(&domain, &cfg, &preset);
        let zram = machine::setup_zram(&cfg, &root, &domain, &preset)?;
        let swap_extras = machine::setup_swap_extras(&cfg, &root, &domain, &preset)?;
        machine::prioritise(&cfg);
        let notifier = crate::notify::Notifier::start(&cfg.notify)?;
        // Last: the socket answers once the daemon is set up (zram on if the preset wants it).
        let server = Server::bind(&cfg.socket).map_err(socket_error)?;
        let live = crate::executor::live::Live::new(root.clone(), domain.clone(), cfg.manage.swap_file_dir.clone());
        let mut exec = Executor::new(Box::new(live), cfg.dry_run, cfg.manage.clone());
        exec.set_preset(&preset);
        tracing::info!(preset = %preset.name, domain = %spec, dry_run = cfg.dry_run, socket = %cfg.socket.display(), "memorch running");
        Ok(Daemon {
            timer_period: Duration::from_millis(cfg.loop_.tick_ms),
            view: AppView::new(&root, &domain),
            pss: snapshot::PssCache::default(),
            engine: Engine::with_stats(preset, stats),
            cfg,
            config_path,
            overrides,
            root,
            domain,
            exec,
            server,
            timer,
            signals,
            triggers,
            polling: None,
            last_direct_reclaims: None,
            events: Vec::with_capacity(16),
            snap: None,
            apps: Vec::with_capacity(256),
            last_full: Instant::now() - Duration::from_secs(3600),
            handles: BTreeMap::new(),
            last_cleanup: Instant::now(),
            counters: Counters::default(),
            last_reasons: BTreeMap::new(),
            zram,
            swap_extras,
            notifier,
            epoch: Instant::now(),
            last_save: Instant::now(),
            stop: false,
            failed_reads: 0,
        })
    }

    /// Run until SIGTERM or SIGINT, then put the machine back as it was.
    pub fn run(mut self) -> Result<(), String> {
        let mut poller = Poller::with_capacity(128);
        // Start-up is over: its pages leave, and from here on every page the loop touches is
        // locked as it touches it, the first look's included (the code a decision runs is
        // the code the next one needs, under pressure too).
        machine::lock_memory(&self.cfg);
        // A first look at once, so status has a snapshot and the preset acts on what it finds.
        self.events.push(Event::Timer);
        self.decide(Instant::now(), "start");
        while !self.stop {
            let wake = self.wait(&mut poller);
            let woke = Instant::now();
            let mut cause = None;
            self.on_signals(&poller, &wake);
            self.on_triggers(&poller, &wake, &mut cause);
            self.on_clients(&poller, &wake, woke, &mut cause);
            self.on_victims(&poller, &wake, &mut cause);
            self.on_timer(&poller, &wake, &mut cause);
            if let Some(cause) = cause {
                self.decide(woke, cause);
            }
            self.server.reap();
            if self.last_save.elapsed() >= SAVE_EVERY {
                self.save();
            }
        }
        let c = &self.counters;
        tracing::info!(
            decisions = c.decisions,
            full_looks = c.full_snapshots,
            reused_looks = c.reused_looks,
            polls = c.polls,
            cheap_looks = c.cheap_snapshots,
            pss_walks = c.pss_walks,
            "what the daemon read"
        );
        machine::shutdown(self);
        Ok(())
    }

    /// Wait for the next fd to be ready; a client with requests read but not yet handled
    /// (its budget ran out) is served again at once.
    fn wait(&self, poller: &mut Poller) -> Wake {
        poller.clear();
        let wake = Wake {
            signals: poller.add([(self.signals.fd(), libc::POLLIN)]),
            timer: poller.add([(self.timer.fd(), libc::POLLIN)]),
            listener: poller.add([(self.server.fd(), libc::POLLIN)]),
            triggers: poller.add(self.triggers.iter().map(|t| (t.kernel.fd(), libc::POLLPRI))),
            clients: poller.add(
                self.server
                    .clients
                    .iter()
                    .map(|c| (c.fd(), libc::POLLIN | if c.wants_write() { libc::POLLOUT } else { 0 })),
            ),
            // A victim without a pidfd (never, live) keeps its place with fd -1, which poll skips.
            victims: poller
                .add(self.exec.reaping.iter().map(|(k, _)| (k.pidfd.as_ref().map_or(-1, |p| p.raw()), libc::POLLIN))),
        };
        poller.wait(if self.server.clients.iter().any(|c| c.has_pending()) { 0 } else { -1 });
        wake
    }

    fn on_signals(&mut self, poller: &Poller, wake: &Wake) {
        if poller.ready(wake.signals).is_empty() {
            return;
        }
        while let Some(sig) = self.signals.read() {
            if sig == libc::SIGHUP {
                self.reload();
            } else {
                tracing::info!(signal = sig, "stopping");
                self.stop = true;
            }
        }
    }

    fn on_triggers(&mut self, poller: &Poller, wake: &Wake, cause: &mut Option<&'static str>) {
        for (i, rev) in poller.ready(wake.triggers).into_iter().rev() {
            if rev & (libc::POLLERR | libc::POLLNVAL) != 0 {
                // The group was removed: its trigger reports errors forever.
                tracing::warn!(file = %self.triggers[i].kernel.path.display(), "PSI trigger failed (group removed?): dropped");
                self.triggers.remove(i);
            } else if rev & libc::POLLPRI != 0 && self.kernel_trigger_fired(i) {
                *cause = Some("pressure");
            }
        }
    }

    fn on_clients(&mut self, poller: &Poller, wake: &Wake, woke: Instant, cause: &mut Option<&'static str>) {
        if !poller.ready(wake.listener).is_empty() {
            self.server.accept();
        }
        for (i, rev) in poller.revents(wake.clients).into_iter().enumerate() {
            if rev & libc::POLLOUT != 0 {
                self.server.clients[i].flush();
            }
            if rev & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 || self.server.clients[i].has_pending() {
                for line in self.server.clients[i].read_lines() {
                    if self.on_line(i, line, woke) {
                        cause.get_or_insert("request");
                    }
                }
            }
        }
    }

    /// Victims whose pidfds say they are gone: the engine waits for this before it kills
    /// again; then it looks again.
    fn on_victims(&mut self, poller: &Poller, wake: &Wake, cause: &mut Option<&'static str>) {
        for (i, _) in poller.ready(wake.victims).into_iter().rev() {
            if let Some(gone) = self.exec.reaped(i) {
                self.counters.regained_bytes += gone.regained_bytes;
                self.events.push(Event::VictimGone { pid: gone.pid });
                // Look again at once, lightly, as lmkd resumes on a victim's death.
                if self.polls() && !self.events.contains(&Event::Poll) {
                    self.events.push(Event::Poll);
                }
                self.notifier.post_kill(&self.cfg.notify, &gone);
                self.publish(&memorch_protocol::Event::VictimGone(gone));
                cause.get_or_insert("victim gone");
            }
        }
    }

    fn on_timer(&mut self, poller: &Poller, wake: &Wake, cause: &mut Option<&'static str>) {
        if !poller.ready(wake.timer).is_empty() {
            self.timer.drain();
            match self.tick() {
                Some("pressure") => *cause = Some("pressure"),
                Some(c) => _ = cause.get_or_insert(c),
                None => {}
            }
        }
    }

    pub(crate) fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// A cheap look every tick; the cause of a decision it calls for (a stall over a
    /// trigger's threshold read here is pressure, triggers.rs). While a polling window is
    /// open (polling.rs), every wake is a poll, but for the full look that falls due.
    fn tick(&mut self) -> Option<&'static str> {
        self.counters.cheap_snapshots += 1;
        let due = self.last_full.elapsed() >= Duration::from_millis(self.cfg.loop_.full_snapshot_ms);
        if !due && self.polling_now() {
            self.events.push(Event::Poll);
            return Some("poll");
        }
        let short = match snapshot::memory_and_pressure(&self.root, &self.domain) {
            Ok((memory, psi, _)) => {
                self.failed_reads = 0;
                if self.stall_read(&psi) {
                    return Some("pressure");
                }
                memorch_core::engine::wake::memory_short(&memory, &psi)
            }
            Err(e) => {
                tracing::warn!(error = %e, "cheap snapshot failed");
                self.failed_reads += 1;
                if self.failed_reads >= 3 && self.domain.cgroup.as_ref().is_some_and(|d| d.dirs().all(|p| !p.exists()))
                {
                    tracing::error!(domain = %self.domain.spec, "the domain's cgroup is gone: stopping");
                    self.stop = true;
                }
                false
            }
        };
        if due || short || !self.events.is_empty() {
            self.events.push(Event::Timer);
            return Some("timer");
        }
        None
    }

    /// Full snapshot, engine, actions, what became of them; the engine learns from that.
    /// `cause` (pressure, request, timer, start) and the time from the wake-up to each action
    /// go with each published action.
    pub(crate) fn decide(&mut self, woke: Instant, cause: &str) {
        // A poll (with the deaths it found) is decided on a light look: no process walk on
        // the pressure path (polling.rs). So is a report of what the user did, while memory
        // is plentiful, on a recent full look's apps (`reusable_look`).
        let poll = memorch_core::engine::is_poll(&self.events);
        let light = if poll { self.light_look().map(Ok) } else { self.reusable_look() };
        let (light, mut snap) = match light {
            Some(Ok((snap, apps))) => {
                self.apps = apps;
                if poll {
                    self.counters.polls += 1;
                } else {
                    self.counters.reused_looks += 1;
                }
                (true, snap)
            }
            other => {
                // Memory short: the full look builds on what was read to find it so.
                let full = match other {
                    Some(Err(cheap)) => snapshot::full_fast_from(&self.root, &self.domain, cheap),
                    _ => snapshot::full_fast(&self.root, &self.domain),
                };
                match full {
                    Ok(s) => (false, s),
                    Err(e) => return tracing::warn!(error = %e, "full snapshot failed; no decision"),
                }
            }
        };
        // PSS comes from a cache, walked again only where it is old or the process changed;
        // while memory is short, every millisecond counts: never walked (page-table walks wait
        // behind reclaim).
        // A full look's read of the stall counts at once; a poll's raises the event for the
        // next look (a poll decides kills alone, on what it sees; the event makes the next
        // look a full one, as a kernel trigger's would).
        let raised = !light && self.stall_read(&snap.psi);
        let under_pressure =
            cause == "pressure" || raised || self.events.iter().any(|e| matches!(e, Event::Pressure { .. }));
        let short = under_pressure || memorch_core::engine::wake::memory_short(&snap.memory, &snap.psi);
        if !light {
            self.counters.pss_walks += self.pss.fill(&self.root, &mut snap, !short) as u64;
            self.counters.full_snapshots += 1;
            self.last_full = Instant::now();
        }
        let snapshot_us = woke.elapsed().as_micros() as u64;
        if !light {
            self.view.build(&mut self.apps, &snap, &self.cfg, &self.engine.preset, under_pressure, &self.exec.frozen);
        }
        self.counters.trim_freed_bytes += self.notifier.freed_since(&self.apps);
        let events = std::mem::take(&mut self.events);
        let raised_for_next = light && self.stall_read(&snap.psi);
        let now_ms = self.now_ms();
        let actions = self.engine.decide(&Input { now_ms, snapshot: &snap, apps: &self.apps, events: &events });
        // Every decision with its reasons, quiet ones too (MEMORCH_LOG=debug): why nothing was done.
        tracing::debug!(cause, available = snap.memory.available_bytes, swap_used = snap.swap.used_bytes, swap_total = snap.swap.total_bytes, events = ?events, reasons = ?actions.iter().map(|a| (a.reason.step, &a.reason.text)).collect::<Vec<_>>(), "decided");
        let decided_us = woke.elapsed().as_micros() as u64;
        self.counters.decisions += 1;
        if !self.exec.dry_run {
            self.tell_before(&actions, snap.memory.available_bytes, snap.memory.total_bytes);
        }
        let seen_adj =
            |pid: u32| snap.processes.as_ref().and_then(|ps| ps.iter().find(|p| p.pid == pid)).map(|p| p.oom_score_adj);
        let outcomes = self.exec.execute(&actions, snap.memory.used_bytes, &seen_adj);
        let killed = outcomes.iter().any(|o| o.done && matches!(o.action.kind, ActionKind::Kill { .. }));
        let input = Input { now_ms, snapshot: &snap, apps: &self.apps, events: &events };
        self.engine.learn(&input, &outcomes.iter().map(|o| o.learned()).collect::<Vec<_>>());
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
            self.publish(&memorch_protocol::Event::Action(e));
        }
        let live: Vec<u32> = self.apps.iter().map(|a| a.pid).collect();
        self.last_reasons.retain(|p, _| live.contains(p));
        self.view.forget_gone(&live);
        self.exec.forget_gone(&live);
        // Memory groups of apps that exited, once empty (a killed app may still be a zombie
        // in its group for a moment: a later decision finds it empty). Housekeeping: not
        // while memory is short, when every millisecond goes to the decision, and once a full
        // snapshot's period (it reads every group's `cgroup.procs` in both hierarchies: done
        // on every decision, it was half the daemon's reads in a light run).
        if !short && self.last_cleanup.elapsed() >= Duration::from_millis(self.cfg.loop_.full_snapshot_ms) {
            memorch_linux::appgroup::remove_empty(&self.domain);
            self.last_cleanup = Instant::now();
        }
        self.after_decision(under_pressure || raised_for_next, killed, &snap);
        if !light {
            self.keep_handles(&snap);
        }
        self.snap = Some(snap);
    }

    pub(crate) fn publish(&mut self, e: &memorch_protocol::Event) {
        let mut line = serde_json::to_string(e).unwrap_or_default();
        line.push('\n');
        for c in self.server.clients.iter_mut().filter(|c| c.subscribed) {
            c.send(line.as_bytes());
        }
    }

    pub(crate) fn save(&mut self) {
        self.last_save = Instant::now();
        if let Err(e) = store::save(&self.cfg.state_dir, &self.engine.state.stats) {
            tracing::warn!(error = %e, "saving learned app statistics failed");
        }
    }
}
