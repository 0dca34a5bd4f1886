//! One run: a manager on a scenario, on a fresh virtual device. Apps are started with
//! `memorch spawn` inside the device; the driver plays the user (launches, switches, home)
//! and the activity manager (classes, launch intents and reports), and measures every visit:
//! hot (alive, nothing read back), warm (alive, pages read back from zram) or cold
//! (relaunched).

use crate::device::Device;
use crate::scenario::{AppDef, Scenario};
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
}

#[derive(Debug, Clone, Serialize)]
pub struct Visit {
    pub app: String,
    /// hot, warm, cold, or failed (the launch itself was killed).
    pub kind: String,
    pub latency_ms: f64,
    pub at_ms: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Kill {
    pub app: String,
    pub class: Class,
    /// memorch (the daemon's kill) or kernel (the memcg OOM killer).
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
    pub psi_some_s: f64,
    pub psi_full_s: f64,
    pub zram_ratio: Option<f64>,
    pub manager_cpu_s: f64,
    pub manager_rss_bytes: u64,
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

fn app_command(exe: &Path, domain: &str, a: &AppDef, seed: u64, file: &Path) -> Command {
    let mut c = Command::new(exe);
    c.args(["spawn", "--domain", domain, "--class", "foreground", "--"]).arg(exe).arg("app");
    c.args(["--name", &a.name, "--anon-mb", &a.anon_mb.to_string(), "--content", &a.content, "--seed", &seed.to_string()]);
    c.args(["--init-ms", &a.init_ms.to_string(), "--working-set", &a.working_set.to_string()]);
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
    let preset = memorch_core::engine::Preset::by_name(cfg.manager).ok_or_else(|| format!("unknown manager '{}'", cfg.manager))?;
    let (zram, alg) = match preset.swap.zram_pct {
        Some(p) => ((ram as f64 * p / 100.0) as u64, preset.swap.zram_algorithm.clone()),
        None => (0, s.zram_algorithm.clone()),
    };
    let mut device = Device::create(&name, ram, zram, &alg)?;
    let domain_name = device.domain();
    let domain = Domain::open(&root, &DomainSpec::Cgroup(device.sandbox.path.clone())).map_err(|e| e.to_string())?;
    let daemon = match cfg.manager {
        "kernel" => None,
        preset => Some(Daemon::start(cfg.exe, preset, &domain_name, &cfg.work_dir.join(format!("daemon-{name}")))?),
    };
    let t0 = Instant::now();
    let ms = |t: Instant| t.duration_since(t0).as_millis() as u64;
    let before = snapshot::cheap(&root, &domain).map_err(|e| e.to_string())?;
    let mut running: BTreeMap<String, Running> = BTreeMap::new();
    let mut visits = Vec::new();
    let mut kills = Vec::new();
    let mut timeline = Vec::new();
    let mut fg: Option<String> = None;
    let mut prev: Option<String> = None;
    let order = s.visit_order(cfg.seed);
    let mut interrupted = false;
    for (i, app_name) in order.iter().enumerate() {
        if cfg.stop.load(Ordering::Relaxed) {
            interrupted = true;
            break;
        }
        (cfg.progress)(&format!("{} visit {}/{}: {app_name}", cfg.manager, i + 1, order.len()));
        let def = s.apps.iter().find(|a| a.name == *app_name).expect("validated");
        // Notice deaths since the last step.
        reap(&mut running, &daemon, &mut kills, ms(Instant::now()));
        // Switching: the app in front becomes previous, the previous one cached.
        if let Some(p) = prev.take() {
            set_class(&root, &daemon, &mut running, &p, Class::Cached);
        }
        if let Some(f) = fg.take() {
            set_class(&root, &daemon, &mut running, &f, Class::Previous);
            prev = Some(f);
        }
        if let Some(d) = &daemon {
            d.request(serde_json::json!({"cmd": "home"}));
        }
        let t = Instant::now();
        let alive = running.get_mut(app_name).is_some_and(|r| r.alive());
        let visit = match running.get_mut(app_name).filter(|_| alive) {
            Some(r) => {
                let _ = writeln!(r.stdin, "resume");
                match r.lines.recv_timeout(APP_TIMEOUT) {
                    Ok(l) if l.starts_with("resumed") => {
                        let faults = field(&l, "major_faults").unwrap_or(0);
                        Visit { app: app_name.clone(), kind: if faults > 0 { "warm" } else { "hot" }.into(), latency_ms: field(&l, "us").unwrap_or(0) as f64 / 1000.0, at_ms: ms(t) }
                    }
                    _ => Visit { app: app_name.clone(), kind: "failed".into(), latency_ms: t.elapsed().as_secs_f64() * 1000.0, at_ms: ms(t) },
                }
            }
            _ => {
                reap(&mut running, &daemon, &mut kills, ms(Instant::now()));
                running.remove(app_name);
                if let Some(d) = &daemon {
                    d.request(serde_json::json!({"cmd": "launch", "app": app_name, "expect_mb": def.anon_mb + def.file_mb}));
                }
                let file = cfg.work_dir.join(format!("{}.bin", def.name));
                let mut cmd = app_command(cfg.exe, &domain_name, def, s.seed + i as u64, &file);
                let t = Instant::now();
                let child = device.sandbox.spawn(&mut cmd).map_err(|e| e.to_string())?;
                let stdin = child.stdin.take().expect("piped");
                let lines = line_channel(child.stdout.take().expect("piped"));
                let pid = child.id();
                let ok = matches!(lines.recv_timeout(APP_TIMEOUT), Ok(l) if l.starts_with("ready"));
                let latency = t.elapsed().as_secs_f64() * 1000.0;
                if ok {
                    // The sandbox hands back its Child to watch; it still kills it on drop.
                    let child = device.sandbox.take_child(pid).expect("the sandbox started it");
                    running.insert(app_name.clone(), Running { child, stdin, lines, class: Class::Foreground });
                    if let Some(d) = &daemon {
                        d.request(serde_json::json!({"cmd": "launched", "app": app_name, "pid": pid, "ms": latency as u64, "cold": true}));
                    }
                    Visit { app: app_name.clone(), kind: "cold".into(), latency_ms: latency, at_ms: ms(t) }
                } else {
                    Visit { app: app_name.clone(), kind: "failed".into(), latency_ms: latency, at_ms: ms(t) }
                }
            }
        };
        visits.push(visit);
        set_class(&root, &daemon, &mut running, app_name, Class::Foreground);
        fg = Some(app_name.clone());
        // The user uses the app for a while (scenario time, not a wait for a condition).
        std::thread::sleep(Duration::from_millis(s.use_ms));
        let snap = snapshot::cheap(&root, &domain).map_err(|e| e.to_string())?;
        let live = running.values_mut().map(|r| r.alive()).filter(|&a| a).count();
        timeline.push(Sample { at_ms: ms(Instant::now()), free_bytes: snap.memory.free_bytes, available_bytes: snap.memory.available_bytes, live_apps: live });
    }
    reap(&mut running, &daemon, &mut kills, ms(Instant::now()));
    let after = snapshot::cheap(&root, &domain).map_err(|e| e.to_string())?;
    let delta = |a: Option<u64>, b: Option<u64>| b.unwrap_or(0).saturating_sub(a.unwrap_or(0));
    let c0 = &before.counters;
    let c1 = &after.counters;
    let psi = |s: &memorch_core::Snapshot| s.psi.get().map_or((0.0, 0.0), |p| (p.some.total_us as f64 / 1e6, p.full.total_us as f64 / 1e6));
    let ((s0, f0), (s1, f1)) = (psi(&before), psi(&after));
    let zram_ratio = device.zram.as_ref().and_then(|z| {
        after.zram.get().and_then(|st| st.devices.iter().find(|d| d.name == z.setup.device)).and_then(|d| d.compression_ratio)
    });
    let (cpu, rss) = daemon.as_ref().map_or((0.0, 0), |d| d.usage());
    drop(daemon);
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
        psi_some_s: s1 - s0,
        psi_full_s: f1 - f0,
        zram_ratio,
        manager_cpu_s: cpu,
        manager_rss_bytes: rss,
        duration_s: t0.elapsed().as_secs_f64(),
        timeline,
        interrupted,
    })
}

/// Apps that died since the last look: killed by memorch if its events named them, else by
/// the kernel.
fn reap(running: &mut BTreeMap<String, Running>, daemon: &Option<Daemon>, kills: &mut Vec<Kill>, at_ms: u64) {
    let dead: Vec<String> = running.iter_mut().filter_map(|(n, r)| (!r.alive()).then(|| n.clone())).collect();
    for n in dead {
        let r = running.remove(&n).expect("listed");
        let by = daemon.as_ref().is_some_and(|d| d.victims.lock().expect("victims").contains(&r.child.id()));
        kills.push(Kill { app: n, class: r.class, by: if by { "memorch" } else { "kernel" }.into(), at_ms });
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
