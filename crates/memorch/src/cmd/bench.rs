//! `memorch bench`: every manager on the same scenario, side by side.

use anyhow::{Context, Result};
use memorch_bench::driver::{self, RunConfig};
use memorch_bench::peer::{is_peer, PEERS};
use memorch_bench::report;
use memorch_bench::scenario::Scenario;
use memorch_core::engine::preset::NAMES;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

/// Run a scenario on a fresh virtual device under each manager in turn (alternating, run by
/// run), and compare: visits hot/warm/cold and their latency, apps kept alive, frame times
/// while in front, free memory after idle, kills and by whom, refaults, pressure stall,
/// compression, and the manager's own CPU and memory.
///
/// Managers: `kernel` (no manager), every preset (`memorch presets`), and the peers
/// `earlyoom` and `nohang` (Debian's packages, run unmodified inside the device's namespace
/// with lxcfs showing them the device's memory; scripts/setup installs all three).
///
/// Examples:
///   memorch bench                                   quick, every manager
///   memorch bench --managers kernel,lmkd,memorch --repeat 3
///   memorch bench --scenario mos26 --managers lmkd,earlyoom,memorch --repeat 2
///   memorch bench --scenario my.toml --ram 1024 --out results/
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// A built-in scenario (quick, mos26, thesis, swam40, sessions) or a TOML file
    /// (docs/bench.md).
    #[arg(long, default_value = "quick")]
    scenario: String,
    /// Comma-separated managers.
    #[arg(long, value_delimiter = ',', default_value = "kernel,lmk-classic,compcache,thesis,lmkd,mos,swam,earlyoom,nohang,memorch")]
    managers: Vec<String>,
    /// The device's RAM in MiB (app sizes scale with it); the scenario's by default.
    #[arg(long)]
    ram: Option<u64>,
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=100))]
    repeat: u64,
    /// Seed of the visit order and page contents; the scenario's by default.
    #[arg(long)]
    seed: Option<u64>,
    /// Where results.json and report.html go (default: bench-out/SCENARIO-TIME).
    #[arg(long)]
    out: Option<PathBuf>,
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_interrupt(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

pub fn run(a: Args) -> Result<()> {
    let base = Scenario::load(&a.scenario).map_err(|e| anyhow::anyhow!(e))?;
    for m in &a.managers {
        anyhow::ensure!(
            NAMES.contains(&m.as_str()) || is_peer(m),
            "unknown manager '{m}': use kernel, a preset ({}) or a peer ({})",
            NAMES.join(", "),
            PEERS.map(|p| p.0).join(", ")
        );
    }
    if let Some(r) = a.ram {
        anyhow::ensure!(r >= 64, "--ram {r}: a device needs at least 64 MiB");
    }
    anyhow::ensure!(unsafe { libc::geteuid() } == 0, "memorch bench makes cgroups and zram devices: run it as root");
    let scenario = base.scaled(a.ram.unwrap_or(base.ram_mb));
    let seed = a.seed.unwrap_or(scenario.seed);
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let out = a.out.unwrap_or_else(|| PathBuf::from(format!("bench-out/{}-{stamp}", scenario.name)));
    let work = out.join("work");
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    let exe = std::env::current_exe().context("finding the memorch binary")?;
    // Ctrl-C ends the current visit, then everything is torn down as usual. Apps and the
    // daemon can die at any moment (that is what is measured): writing to them must give
    // EPIPE, not a SIGPIPE that would end the bench.
    // SAFETY: the handler only stores to an atomic; SIG_IGN is a plain disposition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        libc::signal(libc::SIGINT, on_interrupt as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_interrupt as *const () as libc::sighandler_t);
    }
    // zram and swap are machine-wide: queue behind tests and other benches.
    let _lock = memorch_linux::lock::FileLock::acquire(memorch_linux::testkit::TEST_LOCK)?;
    // A bench or test killed before its clean-up left its device: remove it first.
    memorch_linux::testkit::recover_stale();
    // Peers read /proc/meminfo: lxcfs makes it the device's.
    let lxcfs = if a.managers.iter().any(|m| is_peer(m)) {
        Some(memorch_linux::lxcfs::Lxcfs::start().context("peers (earlyoom, nohang) need lxcfs")?)
    } else {
        None
    };
    let tty = std::io::stderr().is_terminal();
    let total = a.repeat as usize * a.managers.len();
    eprintln!("memorch bench: scenario {} ({} MiB device, {} apps, {} visits), {} runs -> {}", scenario.name, scenario.ram_mb, scenario.apps.len(), scenario.visit_order(seed).iter().filter(|v| *v != memorch_bench::scenario::IDLE).count(), total, out.display());
    let mut runs = Vec::new();
    let mut n = 0;
    'all: for rep in 0..a.repeat {
        for m in &a.managers {
            n += 1;
            let prefix = format!("[{n}/{total}]");
            let progress = |msg: &str| {
                if tty {
                    eprint!("\r\x1b[K{prefix} {msg}");
                }
            };
            if !tty {
                eprintln!("{prefix} {m} (run {} of {})", rep + 1, a.repeat);
            }
            let cfg = RunConfig { scenario: &scenario, manager: m, seed: seed + rep, exe: &exe, work_dir: &work, stop: &STOP, progress: &progress, lxcfs: lxcfs.as_ref() };
            let r = driver::run(&cfg).map_err(|e| anyhow::anyhow!(e)).with_context(|| format!("run {n}: {m}"))?;
            if tty {
                eprintln!("\r\x1b[K{prefix} {m}: {} visits in {:.0} s, {} kills", r.visits.len(), r.duration_s, r.kills.len());
            }
            let stop = r.interrupted;
            runs.push(r);
            if stop || STOP.load(Ordering::Relaxed) {
                eprintln!("interrupted: devices torn down; results so far follow");
                break 'all;
            }
        }
    }
    let sums = report::summarize(&runs);
    let json = serde_json::json!({
        "scenario": scenario.name,
        "ram_mb": scenario.ram_mb,
        "seed": seed,
        "repeat": a.repeat,
        "summaries": sums,
        "runs": runs,
    });
    std::fs::write(out.join("results.json"), serde_json::to_string_pretty(&json)?).with_context(|| format!("writing {}", out.join("results.json").display()))?;
    std::fs::write(out.join("report.html"), memorch_bench::html::report(&scenario.name, &sums, &runs)).with_context(|| format!("writing {}", out.join("report.html").display()))?;
    let _ = std::fs::remove_dir_all(&work);
    print!("{}", report::table(&sums));
    println!("\nresults: {} and {}", out.join("results.json").display(), out.join("report.html").display());
    Ok(())
}
