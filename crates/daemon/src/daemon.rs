//! The daemon: one thread, one poll loop over the signalfd, a timerfd, the domain's PSI triggers, the control socket
//! and its clients, and the pidfds of victims being reaped. Cheap snapshots every tick; a full snapshot and a decision
//! on pressure, on a request, when memory runs short (the engine's wake rule), or at least every `full_snapshot_ms`.
//!
//! What else the daemon does lives beside this file: one decision (decision.rs: look, decide, act, learn), its looks
//! (look.rs), what clients may ask (control.rs), reloading its config (reload.rs), what it sets up on the machine and
//! puts back (machine.rs), and carrying out actions (executor/).

use crate::config::{Config, Overrides};
use crate::executor::Executor;
use crate::look::Looks;
use crate::machine;
use crate::notify::Notifier;
use crate::polling::{polls, Polling};
use crate::server::Server;
use crate::store;
use crate::triggers::Triggers;
use memorch_core::engine::{Engine, Event, PressureLevel, Reason};
use memorch_core::snapshot::Psi;
use memorch_core::Facility;
use memorch_linux::events::{Group, Poller, SignalFd, TimerFd};
use memorch_linux::zram::ZramGuard;
use memorch_linux::{snapshot, Domain, SysRoot};
use memorch_protocol::Counters;
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
    pub(crate) triggers: Triggers,
    /// Polling after a pressure trigger (polling.rs).
    pub(crate) polling: Polling,
    /// Events for the next decision.
    pub(crate) events: Vec<Event>,
    /// The last looks and the apps built from them (look.rs).
    pub(crate) looks: Looks,
    /// When empty app groups were last looked for (`remove_empty`).
    pub(crate) last_cleanup: Instant,
    pub(crate) counters: Counters,
    /// The last reason memorch acted on each pid for (`explain`).
    pub(crate) last_reasons: BTreeMap<u32, Reason>,
    pub(crate) zram: Vec<ZramGuard>,
    /// A preset's fixed storage swap and swappiness (machine.rs).
    pub(crate) swap_extras: machine::SwapExtras,
    pub(crate) notifier: Notifier,
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

/// An armed daemon changes other processes' memory: only root may run one.
fn refuse_unprivileged(cfg: &Config) -> Result<(), String> {
    // SAFETY: geteuid has no preconditions.
    if !cfg.dry_run && unsafe { libc::geteuid() } != 0 {
        return Err("memorch run changes other processes' memory (kills, squeezes, zram, swap): run it as root, or add --dry-run to watch what it would do (with a --socket and --state-dir of your own)".into());
    }
    Ok(())
}

/// What was learned before, from the state dir (made if missing; a dry run makes and moves nothing there).
fn learned(cfg: &Config) -> Result<memorch_core::engine::Stats, String> {
    if !cfg.dry_run {
        std::fs::create_dir_all(&cfg.state_dir).map_err(|e| state_dir_error(cfg, e))?;
    }
    Ok(store::load(&cfg.state_dir, cfg.dry_run).0)
}

fn state_dir_error(cfg: &Config, e: std::io::Error) -> String {
    format!("state dir {}: {e} (as a user other than root, give --state-dir of your own)", cfg.state_dir.display())
}

impl Daemon {
    /// Set up everything the preset needs; nothing is changed if any part fails.
    pub fn start(cfg: Config, config_path: Option<PathBuf>, overrides: Overrides) -> Result<Daemon, String> {
        refuse_unprivileged(&cfg)?;
        let root = SysRoot::live();
        // What a memorch that died left (zram, swap files, KSM settings) goes first: it would otherwise look like the
        // machine's own set-up. A dry run only says what.
        let adopted = machine::recover(&root, cfg.dry_run);
        let spec = cfg.domain_spec();
        let domain = Domain::open(&root, &spec).map_err(|e| format!("domain {spec}: {e}"))?;
        let signals = SignalFd::new(&[libc::SIGTERM, libc::SIGINT, libc::SIGHUP]).map_err(|e| e.to_string())?;
        let timer = TimerFd::new(Duration::from_millis(cfg.loop_.tick_ms)).map_err(|e| e.to_string())?;
        let socket_error = |e: std::io::Error| format!("control socket {}: {e}", cfg.socket.display());
        Server::claim(&cfg.socket).map_err(socket_error)?;
        // Only once no live daemon holds the socket: its frozen apps are not left behind.
        machine::thaw_left_frozen(&domain, cfg.dry_run);
        let stats = learned(&cfg)?;
        let preset = cfg.preset();
        let triggers = Triggers::new(machine::arm_triggers(&domain, &cfg, &preset));
        let mut zram = adopted.zram;
        zram.extend(machine::setup_zram(&cfg, &root, &domain, &preset)?);
        let swap_extras = machine::setup_swap_extras(&cfg, &root, &domain, &preset)?;
        machine::prioritise(&cfg);
        let mut notifier = Notifier::default();
        notifier.follow_bus(&cfg.notify, preset.trim_notices)?;
        // Last: the socket answers once the daemon is set up (zram on if the preset wants it).
        let server = Server::bind(&cfg.socket).map_err(socket_error)?;
        let live = crate::executor::live::Live::new(root.clone(), domain.clone(), cfg.manage.swap_file_dir.clone())
            .with_adopted(adopted.swap_files);
        let mut exec = Executor::new(Box::new(live), cfg.dry_run, cfg.manage.clone());
        exec.set_preset(&preset);
        tracing::info!(preset = %preset.name, domain = %spec, dry_run = cfg.dry_run, socket = %cfg.socket.display(), "memorch running");
        Ok(Daemon {
            timer_period: Duration::from_millis(cfg.loop_.tick_ms),
            looks: Looks::new(&root, &domain),
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
            polling: Polling::default(),
            events: Vec::with_capacity(16),
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
        // Start-up is over: its pages leave, and from here on every page the loop touches is locked as it touches it,
        // the first look's included (the code a decision runs is the code the next one needs, under pressure too).
        machine::lock_memory(&self.cfg);
        machine::adopt_orphans();
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
        self.save();
        let setup =
            machine::Setup { zram: std::mem::take(&mut self.zram), swap_extras: std::mem::take(&mut self.swap_extras) };
        machine::shutdown(&mut self.exec, &self.domain, setup);
        Ok(())
    }

    /// Wait for the next fd to be ready; a client with requests read but not yet handled (its budget ran out) is served
    /// again at once.
    fn wait(&self, poller: &mut Poller) -> Wake {
        poller.clear();
        let wake = Wake {
            signals: poller.add([(self.signals.fd(), libc::POLLIN)]),
            timer: poller.add([(self.timer.fd(), libc::POLLIN)]),
            listener: poller.add([(self.server.fd(), libc::POLLIN)]),
            triggers: poller.add(self.triggers.list.iter().map(|t| (t.kernel.fd(), libc::POLLPRI))),
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
                tracing::warn!(file = %self.triggers.list[i].kernel.path.display(), "PSI trigger failed (group removed?): dropped");
                self.triggers.list.remove(i);
            } else if let Some(level) = (rev & libc::POLLPRI != 0).then(|| self.triggers.kernel_fired(i)).flatten() {
                self.raise(level);
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

    /// Victims whose pidfds say they are gone: the engine waits for this before it kills again; then it looks again.
    fn on_victims(&mut self, poller: &Poller, wake: &Wake, cause: &mut Option<&'static str>) {
        for (i, _) in poller.ready(wake.victims).into_iter().rev() {
            if let Some(gone) = self.exec.reaped(i) {
                self.counters.regained_bytes += gone.regained_bytes;
                self.events.push(Event::VictimGone { pid: gone.pid });
                // Look again at once, lightly, as lmkd resumes on a victim's death.
                if polls(&self.engine.preset) && !self.events.contains(&Event::Poll) {
                    self.events.push(Event::Poll);
                }
                self.notifier.post_kill(&self.cfg.notify, &gone);
                self.server.publish(&memorch_protocol::Event::VictimGone(gone));
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

    /// A cheap look every tick; the cause of a decision it calls for (a stall over a trigger's threshold read here is
    /// pressure, triggers.rs). While a polling window is open (polling.rs), every wake is a poll, but for the full look
    /// that falls due.
    fn tick(&mut self) -> Option<&'static str> {
        self.counters.cheap_snapshots += 1;
        let due = self.looks.last_full.elapsed() >= Duration::from_millis(self.cfg.loop_.full_snapshot_ms);
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

    fn raise(&mut self, level: PressureLevel) {
        if !self.events.contains(&Event::Pressure { level }) {
            self.events.push(Event::Pressure { level });
        }
        self.counters.pressure_events += 1;
    }

    /// A read of the domain's PSI: each trigger whose threshold the stall reached within its window, with no event from
    /// the kernel, raises the event itself. Whether one did.
    pub(crate) fn stall_read(&mut self, psi: &Facility<Psi>) -> bool {
        let raised = self.triggers.read(psi);
        for level in &raised {
            self.raise(*level);
            self.counters.pressure_from_reads += 1;
        }
        !raised.is_empty()
    }

    /// Whether a polling window is open (closed, and the timer back to its tick, once over): as long as the triggers'
    /// own window (a trigger cannot fire again sooner).
    fn polling_now(&mut self) -> bool {
        let window = self.triggers.window().unwrap_or(Duration::from_millis(self.cfg.loop_.psi_window_ms));
        let open = self.polling.is_open(window);
        self.set_timer();
        open
    }

    /// The timer's period: the poll interval while a window is open and no victim is dying (its pidfd wakes the
    /// daemon), else the tick.
    pub(crate) fn set_timer(&mut self) {
        let want = match self.polling.interval() {
            Some(interval) if self.exec.reaping.is_empty() => interval,
            _ => Duration::from_millis(self.cfg.loop_.tick_ms),
        };
        if want != self.timer_period {
            match self.timer.set(want) {
                Ok(()) => self.timer_period = want,
                Err(e) => tracing::warn!(error = %e, "could not set the timer"),
            }
        }
    }

    /// Write the learned statistics (not in a dry run, which writes nothing of the machine's).
    pub(crate) fn save(&mut self) {
        self.last_save = Instant::now();
        if self.cfg.dry_run {
            return;
        }
        if let Err(e) = store::save(&self.cfg.state_dir, &self.engine.state.stats) {
            tracing::warn!(error = %e, "saving learned app statistics failed");
        }
    }
}
