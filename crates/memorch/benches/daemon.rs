//! The daemon's own costs on the live kernel:
//! - from a PSI trigger's wake-up to the kill being sent (the `wake_to_act_us` of kill
//!   actions caused by pressure), on a sandbox filled until it stalls;
//! - CPU time over 60 s idle, and RSS.
//!
//!     sudo cargo bench -p memorch --bench daemon
//!
//! Set MEMORCH_BENCH_IDLE_S to shorten the idle measurement; MEMORCH_BENCH_DEBUG=1 prints
//! every action with the time to its snapshot, decision and act.

use memorch_linux::{sandbox::Sandbox, testkit};
use memorch_protocol::{Client, Event};
use std::io::{BufRead, BufReader};
use std::os::unix::net::UnixStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;

struct Daemon {
    child: Child,
    socket: std::path::PathBuf,
    dir: std::path::PathBuf,
}

impl Daemon {
    fn start(domain: &str, preset: &str, extra: &str) -> Daemon {
        let dir = std::env::temp_dir().join(testkit::unique_name("memorch-bench-daemon"));
        std::fs::create_dir_all(&dir).unwrap();
        let cfg = dir.join("c.toml");
        // Swap files memorch may add go to the bench's own directory, removed with it.
        let swap = format!("swap_file_dir = \"{}\"\n", dir.join("swap").display());
        let extra = if extra.contains("[manage]\n") {
            extra.replace("[manage]\n", &format!("[manage]\n{swap}"))
        } else {
            format!("{extra}[manage]\n{swap}")
        };
        std::fs::write(&cfg, extra).unwrap();
        let socket = dir.join("s.sock");
        let child = Command::new(env!("CARGO_BIN_EXE_memorch"))
            .args([
                "run",
                "--config",
                cfg.to_str().unwrap(),
                "--domain",
                domain,
                "--preset",
                preset,
                "--socket",
                socket.to_str().unwrap(),
                "--state-dir",
                dir.join("st").to_str().unwrap(),
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        assert!(testkit::wait_for(Duration::from_secs(20), || UnixStream::connect(&socket).is_ok()), "daemon up");
        Daemon { child, socket, dir }
    }

    fn events(&self) -> std::sync::mpsc::Receiver<Event> {
        let events = Client::new(&self.socket).subscribe().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for e in events {
                if tx.send(e).is_err() {
                    break;
                }
            }
        });
        rx
    }

    /// (utime + stime in seconds, RSS bytes) of the daemon.
    fn usage(&self) -> (f64, u64) {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap();
        let s = memorch_linux::process::parse_stat(&stat).unwrap();
        let _ = s;
        let rest: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split_whitespace().collect();
        let ticks: u64 = rest[11].parse::<u64>().unwrap() + rest[12].parse::<u64>().unwrap();
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        (ticks as f64 / 100.0, memorch_linux::parse::field_kib(&status, "VmRSS").unwrap())
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn app(sb: &mut Sandbox, class: &str, mb: u64, seed: u64) -> Option<u32> {
    let domain = format!("cgroup:{}", sb.path);
    let mut c = Command::new(env!("CARGO_BIN_EXE_memorch"));
    c.args([
        "spawn",
        "--domain",
        &domain,
        "--class",
        class,
        "--",
        env!("CARGO_BIN_EXE_memorch"),
        "app",
        "--anon-mb",
        &mb.to_string(),
        "--content",
        "random",
        "--seed",
        &seed.to_string(),
    ]);
    c.stdout(Stdio::piped()).stdin(Stdio::null());
    let child = sb.spawn(&mut c).ok()?;
    let pid = child.id();
    let mut line = String::new();
    BufReader::new(child.stdout.take()?).read_line(&mut line).ok()?;
    line.starts_with("ready").then_some(pid)
}

fn median(mut v: Vec<f64>) -> String {
    if v.is_empty() {
        return "no samples".into();
    }
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    format!("median {:.2} (min {:.2}, max {:.2}, n={})", v[v.len() / 2], v[0], v[v.len() - 1], v.len())
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    if !testkit::sandbox_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();

    // 1. Trigger wake-up → kill sent, lmkd and memorch, over the zram each sets up: filling
    // apps make the group thrash against zram until PSI fires.
    for preset in ["lmkd", "memorch"] {
        let mut sb = Sandbox::create(&testkit::unique_name("memorch-bench-kill"), Some(256 * MIB)).unwrap();
        let d = Daemon::start(&format!("cgroup:{}", sb.path), preset, "");
        let rx = d.events();
        let mut lat = Vec::new();
        let t0 = Instant::now();
        let mut seed = 0;
        while lat.len() < 8 && t0.elapsed() < Duration::from_secs(60) {
            seed += 1;
            let _ = app(&mut sb, "cached", 40, seed);
            while let Ok(Event::Action(a)) = rx.try_recv() {
                if std::env::var("MEMORCH_BENCH_DEBUG").is_ok() && a.action.kind.name() != "nothing" {
                    eprintln!(
                        "{} {} {} snap {} decided {} act {:?}",
                        a.action.kind.name(),
                        a.cause,
                        a.done,
                        a.snapshot_done_us,
                        a.decided_us,
                        a.wake_to_act_us
                    );
                }
                if !a.killed().is_empty() && a.cause == "pressure" {
                    lat.push(a.wake_to_act_us.unwrap_or(0) as f64 / 1000.0);
                }
            }
        }
        println!("{preset:<8} PSI wake-up → kill sent, ms: {}", median(lat));
        drop(d);
        sb.destroy().unwrap();
    }

    // 2. Idle: CPU and RSS over a quiet minute, default config, a domain with a few apps.
    let idle_s: u64 = std::env::var("MEMORCH_BENCH_IDLE_S").ok().and_then(|v| v.parse().ok()).unwrap_or(60);
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-bench-idle"), Some(1 << 30)).unwrap();
    for i in 0..10 {
        app(&mut sb, "cached", 8, 100 + i);
    }
    let d = Daemon::start(&format!("cgroup:{}", sb.path), "memorch", "[manage]\nzram = false\n");
    std::thread::sleep(Duration::from_secs(2)); // past start-up
    let (cpu0, _) = d.usage();
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_secs(idle_s));
    let (cpu1, rss) = d.usage();
    let pct = (cpu1 - cpu0) / t0.elapsed().as_secs_f64() * 100.0;
    println!("memorch  idle CPU over {idle_s} s: {pct:.3} % of a core ({:.2} s CPU)", cpu1 - cpu0);
    println!("memorch  RSS: {:.1} MiB", rss as f64 / MIB as f64);
    drop(d);
    sb.destroy().unwrap();
}
