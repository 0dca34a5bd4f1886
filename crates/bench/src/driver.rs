//! One run: a manager on a scenario, on a fresh virtual device. The driver plays the user
//! (launches, switches, home, screen off) and the activity manager (classes, launch intents
//! and reports), and measures every visit: hot (alive, nothing read back), warm (alive, pages
//! read back from zram) or cold (relaunched), or failed (the app did not come up or answer:
//! its output's tail says why, and is kept in the run's log directory).

use crate::attribution::KillBook;
use crate::device::Device;
use crate::managed::ManagedDaemon;
use crate::peer::Peer;
use crate::results::{DeviceInfo, Kill, RunResult, Sample, Visit};
use crate::running::{self, Running};
use crate::scenario::{expand, AppDef, Scenario, IDLE};
use memorch_core::{Class, Snapshot};
use memorch_linux::{process, snapshot, Domain, DomainSpec, SysRoot};
use memorch_protocol::Request;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A run stops when its first this many launches all failed: the scenario cannot work here
/// (a missing program, a bad path), and every later figure would be a lie.
const FIRST_LAUNCHES: usize = 3;

/// zram's ratio is reported only once this many pages went through it.
const RATIO_MIN_PAGES: u64 = 256;

/// Run with SIGPIPE ignored (the `memorch bench` command does): apps and the daemon may die
/// at any moment, and a write to them must fail with EPIPE rather than end the run.
pub struct RunConfig<'a> {
    /// Real programs' commands with `{assets}` and `{data}` expanded and their programs
    /// resolved to absolute paths (the campaign does both).
    pub scenario: &'a Scenario,
    /// `kernel`, a preset spec, or a peer.
    pub manager: &'a str,
    pub seed: u64,
    /// The memorch binary (apps, spawn and the daemon are it).
    pub exe: &'a Path,
    /// How often a memorch daemon looks.
    pub daemon_loop: crate::managed::DaemonLoop,
    /// Absolute: app files and the daemon's state (removed after the bench).
    pub work_dir: &'a Path,
    /// Absolute: the manager's and apps' logs (kept).
    pub log_dir: &'a Path,
    /// Absolute and short: `{run}`, for real programs' sockets.
    pub run_dir: &'a Path,
    /// Set by Ctrl-C: stop after the current step.
    pub stop: &'a AtomicBool,
    /// (step, steps, what): called before each step.
    pub progress: &'a dyn Fn(usize, usize, &str),
    /// Something the user must see now (a failed visit and why).
    pub note: &'a dyn Fn(&str),
    /// lxcfs for the device's `/proc/meminfo`; peers need it.
    pub lxcfs: Option<&'a memorch_linux::lxcfs::Lxcfs>,
}

pub fn run(cfg: &RunConfig) -> Result<RunResult, String> {
    let mut r = Run::start(cfg)?;
    let order = cfg.scenario.visit_order(cfg.seed);
    for (i, step) in order.iter().enumerate() {
        if cfg.stop.load(Ordering::Relaxed) {
            r.interrupted = true;
            break;
        }
        (cfg.progress)(i, order.len(), step);
        r.switch_away();
        if step == IDLE {
            r.idle()?;
        } else {
            r.visit(i, step)?;
        }
        if let Some(e) = r.first_launches_failed() {
            r.aborted = Some(e);
            break;
        }
    }
    r.finish()
}

/// Launch every real program of the scenario once, one at a time and each stopped as soon as
/// it is up, on a device of the scenario's size with no manager; nothing is measured. Why:
/// the pages of the programs' own files (the JDK's modules, Python's library, node's binary)
/// that a run reads outlive its device and stay cached, charged to no later device, so every
/// run after the first finds them cached; the first run of a bench read them from storage,
/// and its first launches were the slower for being first, not for its manager (over 78
/// benches of `realapps`, earlyoom's first run's cold launches took 1.44x the same seed's
/// other runs', its later runs' 1.10x; docs/bench.md). After this every run starts
/// alike. The scenario's data is dropped again before each run (data_cache.rs). Returns the
/// launches in the order made (a failed one with its error).
pub fn warm_up(cfg: &RunConfig) -> Result<Vec<Visit>, String> {
    let mut r = Run::start(cfg)?;
    let mut launched = Vec::new();
    for (i, def) in cfg.scenario.apps.iter().filter(|a| !a.command.is_empty()).enumerate() {
        if cfg.stop.load(Ordering::Relaxed) {
            break;
        }
        let def = r.expanded(def);
        launched.push(r.launch(&def, i)?);
        // Dropped: stopped and reaped before the next, so no launch waits on another's memory.
        r.running.remove(&def.name);
    }
    Ok(launched)
}

/// A run under way.
struct Run<'a> {
    cfg: &'a RunConfig<'a>,
    root: SysRoot,
    domain: Domain,
    domain_name: String,
    daemon: Option<ManagedDaemon>,
    peer: Option<Peer>,
    book: KillBook,
    t0: Instant,
    before: Snapshot,
    zram_io_before: Option<(u64, u64)>,
    cpu_us_before: Option<u64>,
    ksmd_us_before: Option<u64>,
    machine_cpu_before: Option<memorch_linux::cpustat::MachineCpu>,
    running: BTreeMap<String, Running>,
    visits: Vec<Visit>,
    kills: Vec<Kill>,
    timeline: Vec<Sample>,
    /// The app in front, the one before it, and the visit of the app in front (whose frames
    /// it reports when it leaves).
    fg: Option<String>,
    prev: Option<String>,
    fg_visit: Option<usize>,
    idle_available: Vec<u64>,
    /// Every launch so far: `Some(error)` if it failed.
    launches: Vec<Option<String>>,
    /// Apps get a memory group of their own (the manager's preset says).
    app_groups: bool,
    /// The device starts each app in a group of its own making (`MANAGER+scopes`).
    app_scopes: bool,
    interrupted: bool,
    aborted: Option<String>,
    // Last: the device goes after everything in it.
    device: Device,
}

impl<'a> Run<'a> {
    fn start(cfg: &'a RunConfig<'a>) -> Result<Run<'a>, String> {
        let s = cfg.scenario;
        let root = SysRoot::live();
        let (manager, device_opts) = crate::device::split_manager(cfg.manager);
        let is_peer = crate::peers::is_peer(manager);
        if is_peer && cfg.lxcfs.is_none() {
            return Err(format!(
                "{manager} needs lxcfs to see the device's memory: apt-get install lxcfs (scripts/setup does)"
            ));
        }
        let (zram_pct, alg) = crate::device::swap_of(s, manager)?;
        let ram = s.ram_mb << 20;
        let zram = zram_pct.map_or(0, |p| (ram as f64 * p / 100.0) as u64);
        let name =
            memorch_linux::unique::unique_name(&format!("memorch-bench-{}", manager.split(':').next().unwrap_or("x")));
        let mut device = Device::create_with(&name, ram, zram, &alg, device_opts)?;
        device.enter_namespace(cfg.exe, cfg.lxcfs)?;
        let domain_name = device.domain();
        let domain =
            Domain::open(&root, &DomainSpec::Cgroup(device.sandbox.path.clone())).map_err(|e| e.to_string())?;
        for d in [cfg.log_dir, cfg.run_dir] {
            std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
        }
        let log = cfg.log_dir.join(format!("{}.log", manager.split(':').next().unwrap_or("manager")));
        let daemon = match manager {
            "kernel" => None,
            _ if is_peer => None,
            preset => Some(ManagedDaemon::start(
                cfg.exe,
                preset,
                cfg.daemon_loop,
                &domain_name,
                &cfg.work_dir.join(format!("daemon-{name}")),
                &log,
            )?),
        };
        let peer = if is_peer { Some(Peer::start(manager, &device, &log)?) } else { None };
        let before = snapshot::cheap(&root, &domain).map_err(|e| e.to_string())?;
        let book = KillBook::new(is_peer.then(|| manager.to_string()), before.counters.oom_kills.unwrap_or(0));
        let zram_io_before = device.zram_io();
        let cpu_us_before = device.cpu_us();
        let ksmd_us_before = memorch_linux::ksm::ksmd_cpu_us(&root);
        let machine_cpu_before = memorch_linux::cpustat::read(&root).ok();
        Ok(Run {
            cfg,
            root,
            domain,
            domain_name,
            daemon,
            peer,
            book,
            t0: Instant::now(),
            before,
            zram_io_before,
            cpu_us_before,
            ksmd_us_before,
            machine_cpu_before,
            running: BTreeMap::new(),
            visits: Vec::new(),
            kills: Vec::new(),
            timeline: Vec::new(),
            fg: None,
            prev: None,
            fg_visit: None,
            idle_available: Vec::new(),
            launches: Vec::new(),
            app_groups: !is_peer && memorch_daemon::preset_file::load(manager).is_ok_and(|p| p.app_groups),
            app_scopes: device_opts.app_scopes,
            interrupted: false,
            aborted: None,
            device,
        })
    }

    fn now_ms(&self) -> u64 {
        self.t0.elapsed().as_millis() as u64
    }

    /// Notice deaths since the last look, and who caused them.
    fn reap(&mut self) {
        let daemon = self.daemon.as_ref();
        let victims = || daemon.map(ManagedDaemon::victims).unwrap_or_default();
        let at = self.now_ms();
        let dead = self.book.reap(&self.root, &self.domain, &mut self.running, &victims, at);
        self.kills.extend(dead);
    }

    /// Whether `app`, whose resume failed, was killed before it could answer: it exits by
    /// SIGKILL within a second (a crash stays a failed visit). Its death is booked in the
    /// class it had when it was chosen, `class_before`, not the foreground it was moved to.
    fn killed_before_its_resume(&mut self, app: &str, class_before: Class) -> bool {
        let Some(r) = self.running.get_mut(app) else { return false };
        if !memorch_linux::wait::wait_for(Duration::from_secs(1), || !r.alive()) || !r.was_killed() {
            return false;
        }
        r.class = class_before;
        self.reap();
        true
    }

    /// The user leaves the app in front: it reports its frames and becomes previous, the
    /// previous one cached (an app with a background class of its own takes that at once);
    /// then home.
    fn switch_away(&mut self) {
        self.reap();
        if let (Some(f), Some(v)) = (self.fg.clone(), self.fg_visit.take()) {
            let (peer, device) = (&mut self.peer, &self.device);
            if let Some(r) = self.running.get_mut(&f) {
                r.end_frames(&mut self.visits[v], &mut || supervise(peer, device));
            }
        }
        if let Some(p) = self.prev.take() {
            self.set_class(&p, Class::Cached);
        }
        if let Some(f) = self.fg.take() {
            match self
                .cfg
                .scenario
                .apps
                .iter()
                .find(|a| a.name == f)
                .and_then(|a| a.background.as_deref())
                .and_then(Class::from_name)
            {
                Some(c) => self.set_class(&f, c),
                None => {
                    self.set_class(&f, Class::Previous);
                    self.prev = Some(f);
                }
            }
        }
        self.tell(Request::Home {});
    }

    /// Home, screen off: the managers' idle work, then what it left free.
    fn idle(&mut self) -> Result<(), String> {
        self.tell(Request::Screen { on: false });
        self.pass_time(self.cfg.scenario.visits.idle_ms);
        self.tell(Request::Screen { on: true });
        let at = self.sample()?;
        self.idle_available.push(at.available_bytes);
        self.timeline.push(at);
        Ok(())
    }

    /// Visit an app: resume it if alive, else launch it; then use it for a while.
    fn visit(&mut self, number: usize, app: &str) -> Result<(), String> {
        let def = self.cfg.scenario.apps.iter().find(|a| a.name == app).expect("validated").clone();
        let def = self.expanded(&def);
        let t = Instant::now();
        let alive = self.running.get_mut(app).is_some_and(|r| r.alive());
        let after_compaction =
            alive && self.daemon.as_ref().zip(self.running.get(app)).is_some_and(|(d, r)| d.take_compacted(r.pid()));
        let mut launched = !alive;
        let visit = if alive {
            // As an activity manager does: the app is moved to the front (and thawed, where
            // the manager froze it) before it is asked to draw. The user waits from the tap:
            // what moving it to the front took (a thaw, the manager's answer) counts.
            let class_before = self.running.get(app).map_or(Class::Cached, |r| r.class);
            let tap = Instant::now();
            self.set_class(app, Class::Foreground);
            let to_front = tap.elapsed();
            let (peer, device) = (&mut self.peer, &self.device);
            let r = self.running.get_mut(app).expect("alive");
            let before = ReturnCounters::read(&self.root, &self.domain, device);
            let mut resumed = r.resume(&def, number, &mut || supervise(peer, device));
            resumed.latency_ms += to_front.as_secs_f64() * 1000.0;
            resumed.to_front_us = to_front.as_micros() as u64;
            let after = ReturnCounters::read(&self.root, &self.domain, device);
            // A side that could not be read leaves the return's counters at 0 rather than
            // giving it the device's whole count.
            let resumed = match (before, after) {
                (Some(b), Some(a)) => a.since(&b, resumed),
                _ => resumed,
            };
            if resumed.error.is_some() && self.killed_before_its_resume(app, class_before) {
                // A manager killed it at home, as the user tapped it (its SIGKILL was on the
                // way when the bench saw it alive): the tap relaunches it, as on a phone,
                // timed from the tap. Not a failed visit, nor a foreground kill.
                launched = true;
                let relaunch = self.launch(&def, number)?;
                Visit { latency_ms: resumed.latency_ms + relaunch.latency_ms, ..relaunch }
            } else {
                // As Android's activity manager reports a warm start's time: what a return to
                // this app takes is what a read-back would add to (memorch weighs it).
                if let (None, Some(r)) = (&resumed.error, self.running.get(app)) {
                    self.tell_launched(app, r.pid(), resumed.latency_ms, false);
                }
                resumed
            }
        } else {
            self.launch(&def, number)?
        };
        let at_ms = t.duration_since(self.t0).as_millis() as u64;
        if let Some(e) = &visit.error {
            (self.cfg.note)(&format!(
                "{}: visit {} ('{app}') failed: {e}\n  logs: {}",
                self.cfg.manager,
                number + 1,
                self.cfg.log_dir.display()
            ));
        }
        self.visits.push(Visit { at_ms, after_compaction, ..visit });
        self.fg_visit = Some(self.visits.len() - 1);
        if launched {
            // A live app was brought to the front before its resume.
            self.set_class(app, Class::Foreground);
        }
        self.fg = Some(app.to_string());
        // The user uses the app for a while.
        self.pass_time(self.cfg.scenario.use_ms);
        let s = self.sample()?;
        self.timeline.push(s);
        Ok(())
    }

    /// A cold launch: tell the manager, start the app in the device, wait until it is up.
    /// Timed from the tap: what the manager does before it answers the launch (a preset whose
    /// launcher waits answers once what it secured for the launch is done) is in the user's wait.
    fn launch(&mut self, def: &AppDef, number: usize) -> Result<Visit, String> {
        self.reap();
        self.running.remove(&def.name);
        let t = Instant::now();
        self.tell(Request::Launch { app: def.name.clone(), expect_mb: Some(def.anon_mb + def.file_mb + def.so_mb) });
        let trim_socket = self.daemon.as_ref().map(|d| d.socket().to_path_buf());
        // An app the device put in a group of its own needs none of the manager's.
        let start = running::Start {
            app_group: self.app_groups && !self.app_scopes,
            ksm: self.cfg.scenario.ksm,
            trim_socket: trim_socket.as_deref(),
        };
        let domain = if self.app_scopes { self.device.app_scope(&def.name, number)? } else { self.domain_name.clone() };
        let cmd = running::app_command(
            self.cfg.exe,
            &domain,
            def,
            self.cfg.scenario.seed + number as u64,
            self.cfg.work_dir,
            start,
        );
        let log = self.cfg.log_dir.join(format!("{}.{number}.log", def.name));
        let device = &self.device;
        let started = Running::start(def, cmd, &log, |c| device.spawn(c, true));
        let peer = &mut self.peer;
        let (visit, up) = running::cold_visit(def, started, t, &mut || supervise(peer, device));
        self.launches.push(visit.error.clone());
        if let Some(r) = up {
            let pid = r.pid();
            self.running.insert(def.name.clone(), r);
            self.tell_launched(&def.name, pid, visit.latency_ms, true);
        }
        Ok(visit)
    }

    /// The app with `{run}` and `{app}` filled in.
    fn expanded(&self, def: &AppDef) -> AppDef {
        let run = self.cfg.run_dir.to_string_lossy();
        let vars = [("run", run.as_ref()), ("app", def.name.as_str())];
        let e = |s: &String| expand(s, &vars);
        AppDef {
            command: def.command.iter().map(e).collect(),
            ready: def.ready.as_ref().map(e),
            resume: def.resume.as_ref().map(e),
            ..def.clone()
        }
    }

    /// The first launches all failed: the error of the first, to stop the run with.
    fn first_launches_failed(&self) -> Option<String> {
        let n = FIRST_LAUNCHES.min(self.cfg.scenario.apps.len());
        let first = self.launches.get(..n)?;
        first.iter().all(Option::is_some).then(|| {
            format!(
                "the first {n} launches all failed, so the run stopped; the first: {}",
                first[0].clone().unwrap_or_default()
            )
        })
    }

    /// An app's class, as Android's activity manager says it whatever the killer: to
    /// memorch's daemon where it manages the device (it writes `oom_score_adj`, as lmkd does
    /// for the activity manager), else to the kernel directly (`oom_score_adj`, which the
    /// kernel's OOM killer and the peers rank by). One writer either way.
    fn set_class(&mut self, app: &str, class: Class) {
        let Some(r) = self.running.get_mut(app) else { return };
        if !r.alive() {
            return;
        }
        r.class = class;
        let pid = r.pid();
        match &self.daemon {
            Some(d) => d.tell(&Request::state(pid, class)),
            None => {
                let _ = process::write_oom_score_adj(&self.root, &pid.to_string(), class.oom_score_adj());
            }
        }
    }

    /// Tell memorch's daemon that `app` is up after a launch (`cold`) or a return, and how
    /// long the user waited.
    fn tell_launched(&self, app: &str, pid: u32, latency_ms: f64, cold: bool) {
        self.tell(Request::Launched {
            app: app.to_string(),
            pid,
            ms: (latency_ms as u64).clamp(1, memorch_protocol::MAX_LAUNCH_MS),
            cold,
        });
    }

    /// Tell memorch's daemon, if it is the manager.
    fn tell(&self, req: Request) {
        if let Some(d) = &self.daemon {
            d.tell(&req);
        }
    }

    /// Scenario time (the user in an app, the screen off): not a wait for a condition.
    fn pass_time(&mut self, ms: u64) {
        let until = Instant::now() + Duration::from_millis(ms);
        while Instant::now() < until {
            std::thread::sleep(running::TICK.min(until.saturating_duration_since(Instant::now())));
            supervise(&mut self.peer, &self.device);
        }
    }

    /// The device's memory and live apps now.
    fn sample(&mut self) -> Result<Sample, String> {
        let snap = snapshot::cheap(&self.root, &self.domain).map_err(|e| e.to_string())?;
        let live = self.running.values_mut().map(|r| r.alive()).filter(|&a| a).count();
        Ok(Sample {
            at_ms: self.now_ms(),
            free_bytes: snap.memory.free_bytes,
            available_bytes: snap.memory.available_bytes,
            live_apps: live,
        })
    }

    /// The last frames, the counters' deltas, the manager's own cost; then everything down.
    fn finish(mut self) -> Result<RunResult, String> {
        if let (Some(f), Some(v)) = (self.fg.clone(), self.fg_visit) {
            let (peer, device) = (&mut self.peer, &self.device);
            if let Some(r) = self.running.get_mut(&f) {
                r.end_frames(&mut self.visits[v], &mut || supervise(peer, device));
            }
        }
        self.reap();
        let after = snapshot::cheap(&self.root, &self.domain).map_err(|e| e.to_string())?;
        let (c0, c1) = (&self.before.counters, &after.counters);
        let delta = |a: Option<u64>, b: Option<u64>| b.unwrap_or(0).saturating_sub(a.unwrap_or(0));
        let psi = |s: &Snapshot| {
            s.psi.get().map_or((0.0, 0.0), |p| (p.some.total_us as f64 / 1e6, p.full.total_us as f64 / 1e6))
        };
        let ((s0, f0), (s1, f1)) = (psi(&self.before), psi(&after));
        let device_cpu_s =
            self.device.cpu_us().zip(self.cpu_us_before).map(|(c1, c0)| c1.saturating_sub(c0) as f64 / 1e6);
        let swap_io = self
            .device
            .zram_io()
            .zip(self.zram_io_before)
            .map(|((r1, w1), (r0, w0))| (r1.saturating_sub(r0), w1.saturating_sub(w0)));
        let zram_ratio = self.device.zram.as_ref().and_then(|z| {
            after
                .zram
                .get()
                .and_then(|st| st.devices.iter().find(|d| d.name == z.setup.device))
                .and_then(|d| d.compression_ratio)
        });
        let anon_refaults = delta(c0.refault_anon_pages, c1.refault_anon_pages);
        let file_refaults = delta(c0.refault_file_pages, c1.refault_file_pages);
        let usage = match (&self.daemon, &self.peer) {
            (Some(d), _) => d.usage(),
            (_, Some(p)) => p.usage(),
            _ => Default::default(),
        };
        let restarts = self.peer.as_ref().map_or(0, |p| p.restarts);
        // The machine is shared: what else ran on it, and what the host took from its CPUs.
        // A peer runs inside the device (its CPU is in the device's); memorch's daemon outside.
        let machine = memorch_linux::cpustat::read(&self.root).ok().zip(self.machine_cpu_before);
        let steal_s = machine.map(|(m1, m0)| m1.steal_us.saturating_sub(m0.steal_us) as f64 / 1e6);
        let daemon_cpu_s = if self.daemon.is_some() { usage.cpu_us as f64 / 1e6 } else { 0.0 };
        let other_cpu_s = machine
            .zip(device_cpu_s)
            .map(|((m1, m0), dev)| (m1.busy_us.saturating_sub(m0.busy_us) as f64 / 1e6 - dev - daemon_cpu_s).max(0.0));
        // What KSM merged of the device's own apps, read from each process: the machine's
        // `pages_sharing` keeps counting pages of exited processes until ksmd runs again (a
        // run after a KSM run once read 115 MiB less than it had merged).
        let ksm_saved_bytes = snapshot::full(&self.root, &self.domain)
            .ok()
            .and_then(|s| s.processes)
            .map_or(0, |ps| ps.iter().filter_map(|p| p.ksm_merging_pages).sum::<u64>() * 4096);
        let (background_reclaimed_bytes, background_reclaim_wakeups, keeper_failcnt, background_reclaim_stall_s) =
            self.device.keeper.as_ref().map_or((0, 0, 0, None), |k| {
                use std::sync::atomic::Ordering::Relaxed;
                let stall = k.stats.in_psi.load(Relaxed).then(|| k.stats.stall_us.load(Relaxed) as f64 / 1e6);
                (
                    k.stats.reclaimed_bytes.load(Relaxed),
                    k.stats.wakeups.load(Relaxed),
                    k.stats.own_failcnt.load(Relaxed),
                    stall,
                )
            });
        let status = self.daemon.as_ref().and_then(ManagedDaemon::status);
        let trim_freed_bytes = status.as_ref().map_or(0, |s| s.counters.trim_freed_bytes);
        let manager_reclaims = status.as_ref().and_then(|s| s.counters.actions.get("reclaim").copied()).unwrap_or(0);
        let device = DeviceInfo {
            ram_bytes: self.device.ram_bytes,
            zram_bytes: self.device.zram.as_ref().map_or(0, |z| z.setup.disksize_bytes),
            zram_algorithm: self.device.zram.as_ref().map_or(String::new(), |z| z.setup.algorithm.clone()),
            ksm_opt_in: self.cfg.scenario.ksm,
            // Read while the manager still runs: a daemon puts the machine's value back as it stops.
            swap_read_ahead_pages: memorch_linux::readahead::page_cluster(&self.root)
                .ok()
                .map(|n| 1 << n.min(memorch_linux::readahead::MAX_PAGE_CLUSTER)),
        };
        // The apps go first: a daemon stopping puts its swap files off, and swapoff reads every
        // page still in them back into a device that is full (a daemon once took over its
        // 10 s to stop that way, was killed and left a file for the next start to remove).
        for r in self.running.values_mut() {
            r.ask_exit();
        }
        self.running.clear();
        self.daemon.take();
        self.peer.take();
        let _ = std::fs::remove_dir_all(self.cfg.run_dir);
        let s = self.cfg.scenario;
        Ok(RunResult {
            manager: self.cfg.manager.to_string(),
            scenario: s.name.clone(),
            seed: self.cfg.seed,
            ram_mb: s.ram_mb,
            device,
            visits: self.visits,
            kills: self.kills,
            refault_pages: anon_refaults + file_refaults,
            refault_anon_pages: anon_refaults,
            refault_file_pages: file_refaults,
            major_faults: delta(c0.major_faults, c1.major_faults),
            swap_in_pages: swap_io.map(|io| io.0),
            swap_out_pages: swap_io.map(|io| io.1),
            refault_ratio: swap_io.filter(|io| io.1 > 0).map(|io| anon_refaults as f64 / io.1 as f64),
            psi_some_s: s1 - s0,
            psi_full_s: f1 - f0,
            // The device's kswapd charges past the limit to reclaim: its failures are not the apps'.
            direct_reclaims: c1
                .direct_reclaims
                .map(|n| n.saturating_sub(c0.direct_reclaims.unwrap_or(0)).saturating_sub(keeper_failcnt)),
            background_reclaim_stall_s,
            background_reclaimed_bytes,
            background_reclaim_wakeups,
            manager_reclaims,
            trim_freed_bytes,
            device_cpu_s,
            other_cpu_s,
            steal_s,
            zram_ratio: zram_ratio.filter(|_| swap_io.is_some_and(|io| io.1 >= RATIO_MIN_PAGES)),
            ksmd_cpu_s: memorch_linux::ksm::ksmd_cpu_us(&self.root)
                .zip(self.ksmd_us_before)
                .map(|(a, b)| a.saturating_sub(b) as f64 / 1e6),
            ksm_saved_bytes,
            manager_cpu_s: usage.cpu_us as f64 / 1e6,
            manager_rss_bytes: usage.rss_bytes,
            manager_pss_bytes: usage.pss_bytes,
            manager_restarts: restarts,
            idle_available_bytes: self.idle_available,
            duration_s: self.t0.elapsed().as_secs_f64(),
            timeline: self.timeline,
            interrupted: self.interrupted,
            aborted: self.aborted,
            log_dir: self.cfg.log_dir.display().to_string(),
        })
    }
}

fn supervise(peer: &mut Option<Peer>, device: &Device) {
    if let Some(p) = peer {
        p.supervise(device);
    }
}

/// The device's counters around a return: what it read back, and what it did to make room.
struct ReturnCounters {
    refault_anon: u64,
    refault_file: u64,
    /// Pages read from and written to its zram; `None` without zram (or unreadable).
    zram_io: Option<(u64, u64)>,
    direct_reclaims: u64,
    free_bytes: u64,
}

impl ReturnCounters {
    fn read(root: &SysRoot, domain: &Domain, device: &Device) -> Option<ReturnCounters> {
        let s = snapshot::cheap(root, domain).ok()?;
        Some(ReturnCounters {
            refault_anon: s.counters.refault_anon_pages.unwrap_or(0),
            refault_file: s.counters.refault_file_pages.unwrap_or(0),
            zram_io: device.zram_io(),
            direct_reclaims: s.counters.direct_reclaims.unwrap_or(0),
            free_bytes: s.memory.free_bytes,
        })
    }

    /// `visit`, served between `before` and `self`, with what the counters say of it.
    fn since(&self, before: &ReturnCounters, visit: Visit) -> Visit {
        let zram =
            self.zram_io.zip(before.zram_io).map(|((r1, w1), (r0, w0))| (r1.saturating_sub(r0), w1.saturating_sub(w0)));
        Visit {
            refaults_anon: self.refault_anon.saturating_sub(before.refault_anon),
            refaults_file: self.refault_file.saturating_sub(before.refault_file),
            zram_reads: zram.map_or(0, |(r, _)| r),
            swapouts: zram.map_or(0, |(_, w)| w),
            direct_reclaims: self.direct_reclaims.saturating_sub(before.direct_reclaims),
            free_kib_at_return: before.free_bytes / 1024,
            ..visit
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_return_gets_the_counters_moves_and_the_free_memory_it_began_with() {
        let before = ReturnCounters {
            refault_anon: 100,
            refault_file: 50,
            zram_io: Some((10, 7)),
            direct_reclaims: 3,
            free_bytes: 8 << 20,
        };
        let after = ReturnCounters {
            refault_anon: 600,
            refault_file: 50,
            zram_io: Some((410, 207)),
            direct_reclaims: 9,
            free_bytes: 1 << 20,
        };
        let v = after.since(&before, Visit::new("mail", crate::results::WARM, 12.0));
        assert_eq!(
            (v.refaults_anon, v.refaults_file, v.zram_reads, v.swapouts, v.direct_reclaims),
            (500, 0, 400, 200, 6)
        );
        assert_eq!(v.free_kib_at_return, 8 << 10, "free memory as the return began, not as it ended");
        assert_eq!((v.app.as_str(), v.latency_ms), ("mail", 12.0));
        // A counter that went backwards (a device reset) gives 0, not a wrap.
        let reset = ReturnCounters { zram_io: Some((0, 207)), ..after };
        assert_eq!(reset.since(&before, Visit::new("mail", crate::results::WARM, 1.0)).zram_reads, 0);
        // zram unread on one side: no zram figures, not the device's whole count.
        let unread =
            ReturnCounters { zram_io: None, refault_anon: 600, refault_file: 50, direct_reclaims: 9, free_bytes: 0 };
        let v = unread.since(&before, Visit::new("mail", crate::results::WARM, 1.0));
        assert_eq!((v.zram_reads, v.swapouts, v.refaults_anon), (0, 0, 500));
    }
}
