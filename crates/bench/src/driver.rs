//! One run: a manager on a scenario, on a fresh virtual device. The driver plays the user (launches, switches, home,
//! screen off) and the activity manager (classes, launch intents and reports), and measures every visit: hot (alive,
//! nothing read back), warm (alive, pages read back from zram) or cold (relaunched), or failed (the app did not come up
//! or answer: its output's tail says why, and is kept in the run's log directory).

use crate::attribution::KillBook;
use crate::conditions::{AppGroups, Launcher, SwapDisk};
use crate::device::Device;
use crate::managed::ManagedDaemon;
use crate::measure;
use crate::peer::Peer;
use crate::results::{Kill, RunResult, Sample, Visit};
use crate::running::{self, Running};
use crate::scenario::{Scenario, IDLE};
use memorch_linux::slow_disk::{self, SlowDisk};
use memorch_linux::{snapshot, Domain, DomainSpec, SysRoot};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Run with SIGPIPE ignored (the `memorch bench` command does): apps and the daemon may die at any moment, and a write
/// to them must fail with EPIPE rather than end the run.
pub struct RunConfig<'a> {
    /// Real programs' commands with `{assets}` and `{data}` expanded and their programs resolved to absolute paths (the
    /// campaign does both).
    pub scenario: &'a Scenario,
    /// `kernel`, a preset spec, or a peer.
    pub manager: &'a str,
    pub seed: u64,
    /// The memorch binary (apps, spawn and the daemon are it).
    pub exe: &'a Path,
    /// How often a memorch daemon looks.
    pub daemon_loop: crate::managed::DaemonLoop,
    /// What the launcher tells the manager, and how apps are grouped.
    pub launcher: Launcher,
    pub app_groups: AppGroups,
    /// The disk under storage swap files.
    pub swap_disk: SwapDisk,
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

/// Launch every real program of the scenario once, alone, unmeasured and stopped once up, on a device with no manager:
/// the programs' own files (the JDK's modules, Python's library) stay cached after, so the first run does not read
/// them from storage where every later one finds them cached (docs/bench.md). Returns the launches made, a failed one
/// with its error.
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
pub(crate) struct Run<'a> {
    pub(crate) cfg: &'a RunConfig<'a>,
    pub(crate) root: SysRoot,
    pub(crate) domain: Domain,
    pub(crate) domain_name: String,
    pub(crate) daemon: Option<ManagedDaemon>,
    pub(crate) peer: Option<Peer>,
    /// The slow disk under the daemon's swap files: after the daemon, which swaps them off.
    pub(crate) slow_disk: Option<SlowDisk>,
    pub(crate) book: KillBook,
    pub(crate) t0: Instant,
    /// The counters at the start (measure.rs).
    pub(crate) start: measure::Start,
    pub(crate) running: BTreeMap<String, Running>,
    pub(crate) visits: Vec<Visit>,
    pub(crate) kills: Vec<Kill>,
    pub(crate) timeline: Vec<Sample>,
    /// The app in front, the one before it, and the visit of the app in front (whose frames it reports when it leaves).
    pub(crate) fg: Option<String>,
    pub(crate) prev: Option<String>,
    pub(crate) fg_visit: Option<usize>,
    pub(crate) idle_available: Vec<u64>,
    /// Every launch so far: `Some(error)` if it failed.
    pub(crate) launches: Vec<Option<String>>,
    /// Apps get a memory group of their own (the manager's preset says).
    pub(crate) app_groups: bool,
    /// The device starts each app in a group of its own making (`MANAGER+scopes`).
    pub(crate) app_scopes: bool,
    pub(crate) interrupted: bool,
    pub(crate) aborted: Option<String>,
    // Last: the device goes after everything in it.
    pub(crate) device: Device,
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
        let (daemon, peer, slow_disk) = start_manager(cfg, manager, is_peer, &device, &name)?;
        let before = snapshot::cheap(&root, &domain).map_err(|e| e.to_string())?;
        let book = KillBook::new(is_peer.then(|| manager.to_string()), before.counters.oom_kills.unwrap_or(0));
        let start = measure::Start::read(&root, &device, before);
        Ok(Run {
            cfg,
            root,
            domain,
            domain_name,
            daemon,
            peer,
            slow_disk,
            book,
            t0: Instant::now(),
            start,
            running: BTreeMap::new(),
            visits: Vec::new(),
            kills: Vec::new(),
            timeline: Vec::new(),
            fg: None,
            prev: None,
            fg_visit: None,
            idle_available: Vec::new(),
            launches: Vec::new(),
            app_groups: cfg.app_groups == AppGroups::Own
                && !is_peer
                && memorch_daemon::preset_file::load(manager).is_ok_and(|p| p.app_groups),
            app_scopes: device_opts.app_scopes,
            interrupted: false,
            aborted: None,
            device,
        })
    }

    pub(crate) fn now_ms(&self) -> u64 {
        self.t0.elapsed().as_millis() as u64
    }

    /// Notice deaths since the last look, and who caused them.
    pub(crate) fn reap(&mut self) {
        let daemon = self.daemon.as_ref();
        let victims = || daemon.map(ManagedDaemon::victims).unwrap_or_default();
        let at = self.now_ms();
        let dead = self.book.reap(&self.root, &self.domain, &mut self.running, &victims, at);
        self.kills.extend(dead);
    }

    /// Scenario time (the user in an app, the screen off): not a wait for a condition.
    pub(crate) fn pass_time(&mut self, ms: u64) {
        let until = Instant::now() + Duration::from_millis(ms);
        while Instant::now() < until {
            std::thread::sleep(running::TICK.min(until.saturating_duration_since(Instant::now())));
            supervise(&mut self.peer, &self.device);
        }
    }

    /// The device's memory and live apps now.
    pub(crate) fn sample(&mut self) -> Result<Sample, String> {
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
        let s = self.cfg.scenario;
        let mut r = RunResult {
            manager: self.cfg.manager.to_string(),
            scenario: s.name.clone(),
            seed: self.cfg.seed,
            ram_mb: s.ram_mb,
            launcher: self.cfg.launcher,
            app_groups: self.cfg.app_groups,
            swap_disk: self.cfg.swap_disk,
            log_dir: self.cfg.log_dir.display().to_string(),
            ..RunResult::default()
        };
        measure::counters(&mut r, &self.start, &after, &self.device);
        measure::zram(&mut r, &self.start, &after, &self.device);
        let manager = match (&self.daemon, &self.peer) {
            (Some(d), _) => measure::Manager::Daemon(d),
            (_, Some(p)) => measure::Manager::Peer(p),
            _ => measure::Manager::Kernel,
        };
        measure::cpu(&mut r, &self.root, &self.start, &self.device, manager);
        r.device = measure::device_info(&self.root, &self.device, s.ksm);
        r.ksm_saved_bytes = self.ksm_saved_bytes();
        self.stop_all();
        (r.visits, r.kills, r.timeline) = (self.visits, self.kills, self.timeline);
        (r.idle_available_bytes, r.interrupted, r.aborted) = (self.idle_available, self.interrupted, self.aborted);
        r.duration_s = self.t0.elapsed().as_secs_f64();
        Ok(r)
    }

    /// What KSM merged of the device's own apps, read from each process: the machine's `pages_sharing` keeps counting
    /// pages of exited processes until ksmd runs again (a run after a KSM run once read 115 MiB less than it had
    /// merged).
    fn ksm_saved_bytes(&self) -> u64 {
        snapshot::full(&self.root, &self.domain)
            .ok()
            .and_then(|s| s.processes)
            .map_or(0, |ps| ps.iter().filter_map(|p| p.ksm_merging_pages).sum::<u64>() * 4096)
    }

    /// The apps first, then the manager: a daemon stopping puts its swap files off, and swapoff reads every page still
    /// in them back into a device that is full (a daemon once took over its 10 s to stop that way, was killed and left
    /// a file for the next start).
    fn stop_all(&mut self) {
        for r in self.running.values_mut() {
            r.ask_exit();
        }
        self.running.clear();
        self.daemon.take();
        self.peer.take();
        self.slow_disk.take();
        let _ = std::fs::remove_dir_all(self.cfg.run_dir);
    }
}

type Manager = (Option<ManagedDaemon>, Option<Peer>, Option<SlowDisk>);

/// The run's manager started on its device: memorch's daemon for a preset (its swap files on a slow disk where the run
/// asks), a peer inside the device, or nothing for `kernel`; its log beside the run's.
fn start_manager(
    cfg: &RunConfig,
    manager: &str,
    is_peer: bool,
    device: &Device,
    name: &str,
) -> Result<Manager, String> {
    let log = cfg.log_dir.join(format!("{}.log", manager.split(':').next().unwrap_or("manager")));
    if is_peer {
        return Ok((None, Some(Peer::start(manager, device, &log)?), None));
    }
    if manager == "kernel" {
        return Ok((None, None, None));
    }
    let dir = cfg.work_dir.join(format!("daemon-{name}"));
    let slow_disk = match cfg.swap_disk {
        SwapDisk::Machine => None,
        SwapDisk::Emmc => Some(slow_swap_disk(&dir, cfg.scenario.ram_mb << 20)?),
    };
    let daemon = ManagedDaemon::start(cfg.exe, manager, cfg.daemon_loop, &device.domain(), &dir, &log)?;
    Ok((Some(daemon), None, slow_disk))
}

/// An eMMC-slow disk mounted where the daemon of `dir` puts its swap files (managed.rs), room for twice the device's
/// RAM: more than any preset's files add up to.
fn slow_swap_disk(dir: &Path, ram_bytes: u64) -> Result<SlowDisk, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    SlowDisk::create(&dir.join("swap.img"), &dir.join("swap"), 2 * ram_bytes + (512 << 20), slow_disk::EMMC)
        .map_err(|e| format!("--swap-disk emmc: {e}"))
}

pub(crate) fn supervise(peer: &mut Option<Peer>, device: &Device) {
    if let Some(p) = peer {
        p.supervise(device);
    }
}
