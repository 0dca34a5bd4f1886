//! One run: a manager on a scenario, on a fresh virtual device. Apps are started with
//! `memorch spawn` inside the device; the driver plays the user (launches, switches, home)
//! and the activity manager (classes, launch intents and reports), and measures every visit:
//! hot (alive, nothing read back), warm (alive, pages read back from zram) or cold
//! (relaunched).

use crate::device::Device;
use crate::peer::{self, Peer};
use crate::scenario::{AppDef, Probe, Scenario, IDLE};
use memorch_core::Class;
use memorch_linux::{process, snapshot, Domain, DomainSpec, SysRoot};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Longest an app may take to launch or answer before the run gives up on it.
const APP_TIMEOUT: Duration = Duration::from_secs(60);

/// Run with SIGPIPE ignored (the `memorch bench` command does): apps and the daemon may die
/// at any moment, and a write to them must fail with EPIPE rather than end the run.
pub struct RunConfig<'a> {
    pub scenario: &'a Scenario,
    pub manager: &'a str,
    pub seed: u64,
    /// The memorch binary (apps, spawn and the daemon are it).
    pub exe: &'a Path,
    /// Where app files and the daemon's state go.
    pub work_dir: &'a Path,
    /// Set by Ctrl-C: stop after the current step.
    pub stop: &'a AtomicBool,
    pub progress: &'a dyn Fn(&str),
    /// lxcfs for the device's `/proc/meminfo`; peers need it.
    pub lxcfs: Option<&'a memorch_linux::lxcfs::Lxcfs>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Visit {
    pub app: String,
    /// hot, warm, cold, or failed (the launch itself was killed).
    pub kind: String,
    pub latency_ms: f64,
    pub at_ms: u64,
    /// Frames drawn while in front (synthetic apps), those over 16.7 ms, and their p95.
    pub frames: u32,
    pub janky_frames: u32,
    pub frame_p95_ms: f64,
}

impl Visit {
    pub fn new(app: &str, kind: &str, latency_ms: f64) -> Visit {
        Visit { app: app.into(), kind: kind.into(), latency_ms, at_ms: 0, frames: 0, janky_frames: 0, frame_p95_ms: 0.0 }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Kill {
    pub app: String,
    pub class: Class,
    /// memorch (the daemon's kill), kernel (the memcg OOM killer) or the peer's name.
    pub by: String,
    pub at_ms: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Sample {
    pub at_ms: u64,
    pub free_bytes: u64,
    pub available_bytes: u64,
    pub live_apps: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    pub manager: String,
    pub scenario: String,
    pub seed: u64,
    pub ram_mb: u64,
    pub visits: Vec<Visit>,
    pub kills: Vec<Kill>,
    pub refault_pages: u64,
    pub major_faults: u64,
    /// Pages read from and written to the device's zram: swap-ins and swap-outs (v1 memcgs
    /// count neither; the device's zram is its own). None without zram.
    #[serde(default)]
    pub swap_in_pages: Option<u64>,
    #[serde(default)]
    pub swap_out_pages: Option<u64>,
    /// Anonymous refaults per swapped-out page: how much of what went out came back soon.
    #[serde(default)]
    pub refault_ratio: Option<f64>,
    pub psi_some_s: f64,
    pub psi_full_s: f64,
    pub zram_ratio: Option<f64>,
    /// What KSM's savings (pages_sharing) grew by over the run. KSM is machine-wide: only a
    /// manager that runs it makes this grow, and only for apps that opted in.
    #[serde(default)]
    pub ksm_saved_bytes: u64,
    pub manager_cpu_s: f64,
    pub manager_rss_bytes: u64,
    /// Times a peer exited and was started again (its service's Restart=always).
    #[serde(default)]
    pub manager_restarts: u32,
    /// Available memory at the end of each idle step (home, screen off).
    #[serde(default)]
    pub idle_available_bytes: Vec<u64>,
    pub duration_s: f64,
    pub timeline: Vec<Sample>,
    /// Set when Ctrl-C cut the run short.
    pub interrupted: bool,
}

struct Running {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    class: Class,
}

impl Running {
    fn alive(&mut self) -> bool {
        self.child.try_wait().ok().flatten().is_none()
    }
}

impl Drop for Running {
    /// Reap it: a zombie of ours would keep its namespace's init from ever exiting.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How often waits look after the peer (its service restarts it after 100 ms).
const TICK: Duration = Duration::from_millis(100);

/// The next line from an app, looking after the peer while waiting.
fn wait_line(lines: &Receiver<String>, timeout: Duration, tick: &mut dyn FnMut()) -> Option<String> {
    let deadline = Instant::now() + timeout;
    loop {
        match lines.recv_timeout(TICK.min(deadline.saturating_duration_since(Instant::now()))) {
            Ok(l) => return Some(l),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return None,
            Err(_) if Instant::now() >= deadline => return None,
            Err(_) => tick(),
        }
    }
}

/// The daemon of a memorch preset, for the run.
struct Daemon {
    child: Child,
    socket: PathBuf,
    victims: Arc<Mutex<BTreeSet<u32>>>,
}

impl Daemon {
    fn start(exe: &Path, preset: &str, domain: &str, dir: &Path) -> Result<Daemon, String> {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        let cfg = dir.join("memorch.toml");
        let swap_dir = dir.join("swap");
        std::fs::write(&cfg, format!("[loop]\ntick_ms = 250\nfull_snapshot_ms = 1000\n[manage]\nzram = false\nswap_file_dir = \"{}\"\n", swap_dir.display())).map_err(|e| e.to_string())?;
        let socket = dir.join("ctl.sock");
        let mut cmd = Command::new(exe);
        // The daemon must not outlive the run, even if the bench is killed outright.
        // SAFETY: prctl in the child between fork and exec.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
        let child = cmd
            .args(["run", "--config", cfg.to_str().unwrap_or_default(), "--preset", preset, "--domain", domain])
            .args(["--socket", socket.to_str().unwrap_or_default(), "--state-dir", dir.join("state").to_str().unwrap_or_default()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("daemon.log")).map_err(|e| e.to_string())?)
            .spawn()
            .map_err(|e| format!("starting memorch run: {e}"))?;
        let mut d = Daemon { child, socket, victims: Arc::new(Mutex::new(BTreeSet::new())) };
        let deadline = Instant::now() + Duration::from_secs(20);
        while UnixStream::connect(&d.socket).is_err() {
            if Instant::now() > deadline || d.child.try_wait().ok().flatten().is_some() {
                return Err(format!("memorch run did not come up; see {}", dir.join("daemon.log").display()));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // Follow its kills, to tell them from the kernel's.
        let mut s = UnixStream::connect(&d.socket).map_err(|e| e.to_string())?;
        writeln!(s, "{{\"cmd\":\"events\"}}").map_err(|e| e.to_string())?;
        let victims = d.victims.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(s).lines().map_while(Result::ok) {
                let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else { continue };
                if v["action"] == "kill" && v["done"] == true {
                    for x in v["victims"].as_array().into_iter().flatten() {
                        if let Some(p) = x["pid"].as_u64() {
                            victims.lock().expect("victims").insert(p as u32);
                        }
                    }
                }
            }
        });
        Ok(d)
    }

    fn request(&self, req: serde_json::Value) -> serde_json::Value {
        let Ok(mut s) = UnixStream::connect(&self.socket) else { return serde_json::Value::Null };
        let _ = s.set_read_timeout(Some(Duration::from_secs(30)));
        if writeln!(s, "{req}").is_err() {
            return serde_json::Value::Null;
        }
        let mut line = String::new();
        let _ = BufReader::new(s).read_line(&mut line);
        serde_json::from_str(&line).unwrap_or(serde_json::Value::Null)
    }

    /// (CPU seconds, RSS bytes) of the daemon.
    fn usage(&self) -> (f64, u64) {
        let st = self.request(serde_json::json!({"cmd": "status"}));
        (st["data"]["cpu_seconds"].as_f64().unwrap_or(0.0), st["data"]["rss_bytes"].as_u64().unwrap_or(0))
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        // SAFETY: signalling the daemon this run started.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How an app starts: `memorch spawn` (its class, as the activity manager sets it) of the
/// synthetic app or of the scenario's real program.
fn app_command(exe: &Path, domain: &str, a: &AppDef, seed: u64, file: &Path) -> Command {
    let mut c = Command::new(exe);
    c.args(["spawn", "--domain", domain, "--class", "foreground", "--"]);
    if !a.command.is_empty() {
        c.args(&a.command);
        c.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        return c;
    }
    c.arg(exe).arg("app");
    c.args(["--name", &a.name, "--anon-mb", &a.anon_mb.to_string(), "--content", &a.content, "--seed", &seed.to_string()]);
    c.args(["--init-ms", &a.init_ms.to_string(), "--working-set", &a.working_set.to_string(), "--front"]);
    if a.file_mb > 0 {
        c.arg("--file").arg(file).args(["--file-mb", &a.file_mb.to_string()]);
    }
    c.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
    c
}

/// Lines of a child's stdout, on a channel (so waits can time out).
fn line_channel(out: std::process::ChildStdout) -> Receiver<String> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for l in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    rx
}

fn field(line: &str, key: &str) -> Option<u64> {
    line.split_whitespace().find_map(|w| w.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
}

pub fn run(cfg: &RunConfig) -> Result<RunResult, String> {
    let s = cfg.scenario;
    let root = SysRoot::live();
    let name = memorch_linux::testkit::unique_name(&format!("memorch-bench-{}", cfg.manager));
    let ram = s.ram_mb << 20;
    // Swap is part of each system compared: the device gets the preset's zram (none for
    // lmk-classic, 25 % lzo-rle for the thesis's comp-cache, …).
    // A peer gets the device's own zram (the scenario's), as a phone or laptop ships it.
    let is_peer = peer::is_peer(cfg.manager);
    let (zram_pct, alg) = if is_peer {
        if cfg.lxcfs.is_none() {
            return Err(format!("{} needs lxcfs to see the device's memory: apt-get install lxcfs (scripts/setup does)", cfg.manager));
        }
        (Some(s.zram_pct), s.zram_algorithm.clone())
    } else {
        let preset = memorch_core::engine::Preset::by_name(cfg.manager).ok_or_else(|| format!("unknown manager '{}'", cfg.manager))?;
        (preset.swap.zram_pct, preset.swap.zram_algorithm.clone())
    };
    let zram = zram_pct.map_or(0, |p| (ram as f64 * p / 100.0) as u64);
    let mut device = Device::create(&name, ram, zram, &alg)?;
    device.enter_namespace(cfg.exe, cfg.lxcfs)?;
    let domain_name = device.domain();
    let domain = Domain::open(&root, &DomainSpec::Cgroup(device.sandbox.path.clone())).map_err(|e| e.to_string())?;
    let daemon = match cfg.manager {
        "kernel" => None,
        _ if is_peer => None,
        preset => Some(Daemon::start(cfg.exe, preset, &domain_name, &cfg.work_dir.join(format!("daemon-{name}")))?),
    };
    let mut peer = if is_peer { Some(Peer::start(cfg.manager, &device, &cfg.work_dir.join(format!("{name}.log")))?) } else { None };
    let mut book = KillBook { peer: is_peer.then(|| cfg.manager.to_string()), oom_kills: 0 };
    let t0 = Instant::now();
    let ms = |t: Instant| t.duration_since(t0).as_millis() as u64;
    let zram_io = || device.zram.as_ref().and_then(|z| memorch_linux::zram::io_pages(&root, &z.setup.device).ok());
    let io0 = zram_io();
    let before = snapshot::cheap(&root, &domain).map_err(|e| e.to_string())?;
    book.oom_kills = before.counters.oom_kills.unwrap_or(0);
    let mut running: BTreeMap<String, Running> = BTreeMap::new();
    let mut visits = Vec::new();
    let mut kills = Vec::new();
    let mut timeline = Vec::new();
    let mut fg: Option<String> = None;
    let mut prev: Option<String> = None;
    let order = s.visit_order(cfg.seed);
    let mut interrupted = false;
    // The visit of the app in front, whose frames it reports when it leaves.
    let mut fg_visit: Option<usize> = None;
    let mut idle_available = Vec::new();
    for (i, step) in order.iter().enumerate() {
        if cfg.stop.load(Ordering::Relaxed) {
            interrupted = true;
            break;
        }
        (cfg.progress)(&format!("{} step {}/{}: {step}", cfg.manager, i + 1, order.len()));
        // Notice deaths since the last step.
        reap(&root, &domain, &mut running, &daemon, &mut book, &mut kills, ms(Instant::now()));
        if let (Some(f), Some(v)) = (&fg, fg_visit.take()) {
            if let Some(r) = running.get_mut(f) {
                end_frames(r, &mut visits[v], &mut || supervise(&mut peer, &device));
            }
        }
        // Switching: the app in front becomes previous, the previous one cached; an app
        // with a background class of its own takes that at once.
        if let Some(p) = prev.take() {
            set_class(&root, &daemon, &mut running, &p, Class::Cached);
        }
        if let Some(f) = fg.take() {
            match s.apps.iter().find(|a| a.name == f).and_then(|a| a.background.as_deref()).and_then(Class::from_name) {
                Some(c) => set_class(&root, &daemon, &mut running, &f, c),
                None => {
                    set_class(&root, &daemon, &mut running, &f, Class::Previous);
                    prev = Some(f);
                }
            }
        }
        if let Some(d) = &daemon {
            d.request(serde_json::json!({"cmd": "home"}));
        }
        if step == IDLE {
            // Home, screen off: the managers' idle work, then what it left free.
            if let Some(d) = &daemon {
                d.request(serde_json::json!({"cmd": "screen", "on": false}));
            }
            scenario_time(s.visits.idle_ms, &mut || supervise(&mut peer, &device));
            if let Some(d) = &daemon {
                d.request(serde_json::json!({"cmd": "screen", "on": true}));
            }
            let at = sample(&root, &domain, &mut running, ms(Instant::now()))?;
            idle_available.push(at.available_bytes);
            timeline.push(at);
            continue;
        }
        let app_name = step;
        let def = s.apps.iter().find(|a| a.name == *app_name).expect("validated");
        let t = Instant::now();
        let alive = running.get_mut(app_name).is_some_and(|r| r.alive());
        let visit = match running.get_mut(app_name).filter(|_| alive) {
            Some(r) => resume(def, r, &mut || supervise(&mut peer, &device)),
            _ => {
                reap(&root, &domain, &mut running, &daemon, &mut book, &mut kills, ms(Instant::now()));
                running.remove(app_name);
                if let Some(d) = &daemon {
                    d.request(serde_json::json!({"cmd": "launch", "app": app_name, "expect_mb": def.anon_mb + def.file_mb}));
                }
                let file = cfg.work_dir.join(format!("{}.bin", def.name));
                let cmd = app_command(cfg.exe, &domain_name, def, s.seed + i as u64, &file);
                let t = Instant::now();
                let mut child = device.spawn(cmd, true)?;
                let stdin = child.stdin.take().expect("piped");
                let lines = line_channel(child.stdout.take().expect("piped"));
                let pid = child.id();
                let mut started = Running { child, stdin, lines, class: Class::Foreground };
                let ok = launched(def, &mut started, &mut || supervise(&mut peer, &device));
                let latency = t.elapsed().as_secs_f64() * 1000.0;
                if ok {
                    running.insert(app_name.clone(), started);
                    if let Some(d) = &daemon {
                        d.request(serde_json::json!({"cmd": "launched", "app": app_name, "pid": pid, "ms": latency as u64, "cold": true}));
                    }
                }
                Visit::new(app_name, if ok { "cold" } else { "failed" }, latency)
            }
        };
        visits.push(Visit { at_ms: ms(t), ..visit });
        fg_visit = Some(visits.len() - 1);
        set_class(&root, &daemon, &mut running, app_name, Class::Foreground);
        fg = Some(app_name.clone());
        // The user uses the app for a while.
        scenario_time(s.use_ms, &mut || supervise(&mut peer, &device));
        timeline.push(sample(&root, &domain, &mut running, ms(Instant::now()))?);
    }
    if let (Some(f), Some(v)) = (&fg, fg_visit) {
        if let Some(r) = running.get_mut(f) {
            end_frames(r, &mut visits[v], &mut || supervise(&mut peer, &device));
        }
    }
    reap(&root, &domain, &mut running, &daemon, &mut book, &mut kills, ms(Instant::now()));
    let after = snapshot::cheap(&root, &domain).map_err(|e| e.to_string())?;
    let delta = |a: Option<u64>, b: Option<u64>| b.unwrap_or(0).saturating_sub(a.unwrap_or(0));
    let c0 = &before.counters;
    let c1 = &after.counters;
    let psi = |s: &memorch_core::Snapshot| s.psi.get().map_or((0.0, 0.0), |p| (p.some.total_us as f64 / 1e6, p.full.total_us as f64 / 1e6));
    let ((s0, f0), (s1, f1)) = (psi(&before), psi(&after));
    let zram_ratio = device.zram.as_ref().and_then(|z| {
        after.zram.get().and_then(|st| st.devices.iter().find(|d| d.name == z.setup.device)).and_then(|d| d.compression_ratio)
    });
    let swap_io = zram_io().zip(io0).map(|((r1, w1), (r0, w0))| (r1.saturating_sub(r0), w1.saturating_sub(w0)));
    let anon_refaults = delta(c0.refault_anon_pages, c1.refault_anon_pages);
    let restarts = peer.as_ref().map_or(0, |p| p.restarts);
    let (cpu, rss) = match (&daemon, &peer) {
        (Some(d), _) => d.usage(),
        (_, Some(p)) => p.usage(),
        _ => (0.0, 0),
    };
    drop(daemon);
    drop(peer);
    for r in running.values_mut() {
        let _ = writeln!(r.stdin, "exit");
    }
    drop(running);
    drop(device);
    Ok(RunResult {
        manager: cfg.manager.to_string(),
        scenario: s.name.clone(),
        seed: cfg.seed,
        ram_mb: s.ram_mb,
        visits,
        kills,
        refault_pages: delta(c0.refault_anon_pages, c1.refault_anon_pages) + delta(c0.refault_file_pages, c1.refault_file_pages),
        major_faults: delta(c0.major_faults, c1.major_faults),
        swap_in_pages: swap_io.map(|io| io.0),
        swap_out_pages: swap_io.map(|io| io.1),
        refault_ratio: swap_io.filter(|io| io.1 > 0).map(|io| anon_refaults as f64 / io.1 as f64),
        psi_some_s: s1 - s0,
        psi_full_s: f1 - f0,
        zram_ratio,
        ksm_saved_bytes: after.ksm.get().map_or(0, |k| k.saved_bytes).saturating_sub(before.ksm.get().map_or(0, |k| k.saved_bytes)),
        manager_cpu_s: cpu,
        manager_rss_bytes: rss,
        manager_restarts: restarts,
        idle_available_bytes: idle_available,
        duration_s: t0.elapsed().as_secs_f64(),
        timeline,
        interrupted,
    })
}

fn supervise(peer: &mut Option<Peer>, device: &Device) {
    if let Some(p) = peer {
        p.supervise(device);
    }
}

/// The device's memory and live apps now.
fn sample(root: &SysRoot, domain: &Domain, running: &mut BTreeMap<String, Running>, at_ms: u64) -> Result<Sample, String> {
    let snap = snapshot::cheap(root, domain).map_err(|e| e.to_string())?;
    let live = running.values_mut().map(|r| r.alive()).filter(|&a| a).count();
    Ok(Sample { at_ms, free_bytes: snap.memory.free_bytes, available_bytes: snap.memory.available_bytes, live_apps: live })
}

/// Scenario time (the user in an app, the screen off): not a wait for a condition.
fn scenario_time(ms: u64, tick: &mut dyn FnMut()) {
    let until = Instant::now() + Duration::from_millis(ms);
    while Instant::now() < until {
        std::thread::sleep(TICK.min(until.saturating_duration_since(Instant::now())));
        tick();
    }
}

/// Whether a just-started app came up: a synthetic app says `ready`; a real program passes
/// its scenario's probe.
fn launched(def: &AppDef, r: &mut Running, tick: &mut dyn FnMut()) -> bool {
    match def.ready.as_deref().and_then(Probe::parse) {
        None => matches!(wait_line(&r.lines, APP_TIMEOUT, tick), Some(l) if l.starts_with("ready")),
        Some(Probe::Line(text)) => {
            let deadline = Instant::now() + APP_TIMEOUT;
            while let Some(l) = wait_line(&r.lines, deadline.saturating_duration_since(Instant::now()), tick) {
                if l.contains(&text) {
                    return true;
                }
            }
            false
        }
        Some(Probe::Shell(cmd)) => {
            let deadline = Instant::now() + APP_TIMEOUT;
            while Instant::now() < deadline && r.alive() {
                if shell(&cmd, r.child.id()).is_ok_and(|st| st.success()) {
                    return true;
                }
                // The probe's polling interval, as a launcher checks a starting app.
                std::thread::sleep(TICK);
                tick();
            }
            false
        }
    }
}

fn shell(cmd: &str, pid: u32) -> std::io::Result<std::process::ExitStatus> {
    Command::new("sh").args(["-c", cmd]).env("MEMORCH_APP_PID", pid.to_string()).stdin(Stdio::null()).stdout(Stdio::null()).status()
}

/// Bring a live app to the front: hot if nothing was read back, warm if pages were.
fn resume(def: &AppDef, r: &mut Running, tick: &mut dyn FnMut()) -> Visit {
    let t = Instant::now();
    let failed = |t: Instant| Visit::new(&def.name, "failed", t.elapsed().as_secs_f64() * 1000.0);
    if def.command.is_empty() {
        let _ = writeln!(r.stdin, "resume");
        return match wait_line(&r.lines, APP_TIMEOUT, tick) {
            Some(l) if l.starts_with("resumed") => {
                let faults = field(&l, "major_faults").unwrap_or(0);
                Visit::new(&def.name, if faults > 0 { "warm" } else { "hot" }, field(&l, "us").unwrap_or(0) as f64 / 1000.0)
            }
            _ => failed(t),
        };
    }
    let root = SysRoot::live();
    let faults = |pid| process::read_stat(&root, pid).map_or(0, |s| s.major_faults);
    let f0 = faults(r.child.id());
    let ok = match def.resume.as_deref().and_then(Probe::parse) {
        None => true,
        Some(Probe::Line(text)) => writeln!(r.stdin, "{text}").is_ok() && wait_line(&r.lines, APP_TIMEOUT, tick).is_some(),
        Some(Probe::Shell(cmd)) => shell(&cmd, r.child.id()).is_ok_and(|st| st.success()),
    };
    if !ok || !r.alive() {
        return failed(t);
    }
    let kind = if faults(r.child.id()) > f0 { "warm" } else { "hot" };
    Visit::new(&def.name, kind, t.elapsed().as_secs_f64() * 1000.0)
}

/// The app leaves the front: a synthetic app reports the frames it drew.
fn end_frames(r: &mut Running, v: &mut Visit, tick: &mut dyn FnMut()) {
    if !r.alive() || writeln!(r.stdin, "back").is_err() {
        return;
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while let Some(l) = wait_line(&r.lines, deadline.saturating_duration_since(Instant::now()), tick) {
        if l.starts_with("frames") {
            v.frames = field(&l, "n").unwrap_or(0) as u32;
            v.janky_frames = field(&l, "janky").unwrap_or(0) as u32;
            v.frame_p95_ms = field(&l, "p95_us").unwrap_or(0) as f64 / 1000.0;
            return;
        }
    }
}

/// Who killed what: memorch's daemon names its victims; the device's memcg counts the
/// kernel's OOM kills (each a SIGKILL); the rest are the peer's.
struct KillBook {
    peer: Option<String>,
    /// The device's OOM-kill counter when last looked at.
    oom_kills: u64,
}

/// Apps that died since the last look, and by whose hand.
fn reap(root: &SysRoot, domain: &Domain, running: &mut BTreeMap<String, Running>, daemon: &Option<Daemon>, book: &mut KillBook, kills: &mut Vec<Kill>, at_ms: u64) {
    let dead: Vec<String> = running.iter_mut().filter_map(|(n, r)| (!r.alive()).then(|| n.clone())).collect();
    if dead.is_empty() {
        return;
    }
    let now = snapshot::cheap(root, domain).ok().and_then(|s| s.counters.oom_kills).unwrap_or(book.oom_kills);
    let mut kernel_kills = now.saturating_sub(book.oom_kills);
    book.oom_kills = now;
    for n in dead {
        let mut r = running.remove(&n).expect("listed");
        let sigkill = r.child.try_wait().ok().flatten().and_then(|st| std::os::unix::process::ExitStatusExt::signal(&st)) == Some(libc::SIGKILL);
        let by = if daemon.as_ref().is_some_and(|d| d.victims.lock().expect("victims").contains(&r.child.id())) {
            "memorch".to_string()
        } else if sigkill && kernel_kills > 0 {
            kernel_kills -= 1;
            "kernel".to_string()
        } else {
            book.peer.clone().unwrap_or_else(|| "kernel".into())
        };
        kills.push(Kill { app: n, class: r.class, by, at_ms });
    }
}

/// Tell the kernel (oom_score_adj, as Android's activity manager does whatever the killer)
/// and the daemon an app's class.
fn set_class(root: &SysRoot, daemon: &Option<Daemon>, running: &mut BTreeMap<String, Running>, app: &str, class: Class) {
    let Some(r) = running.get_mut(app) else { return };
    if !r.alive() {
        return;
    }
    r.class = class;
    let pid = r.child.id();
    let _ = process::write_oom_score_adj(root, &pid.to_string(), class.oom_score_adj());
    if let Some(d) = daemon {
        d.request(serde_json::json!({"cmd": "state", "pid": pid, "class": class.name()}));
    }
}
