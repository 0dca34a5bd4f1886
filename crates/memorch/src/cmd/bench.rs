//! `memorch bench`: every manager on the same scenario, side by side.

use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};
use memorch_bench::campaign::{self, Campaign, Progress};
use memorch_bench::managed::DaemonLoop;
use memorch_bench::report;
use memorch_bench::results::RunResult;
use memorch_bench::scenario::Scenario;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Run a scenario on a fresh virtual device under each manager in turn (alternating, run by
/// run), and compare: visits hot/warm/cold/failed and their latency, apps kept alive, frame
/// times while in front, free memory after idle, kills and by whom, refaults, pressure stall,
/// compression, and the manager's own CPU and memory.
///
/// Managers: `kernel` (no manager), every preset (`memorch presets`), a preset with a step
/// left out or a key changed (`memorch:home=off`, `memorch:swap.zram_pct=25`: `memorch
/// presets show NAME` prints them), a preset file of your own (`file:PATH`), the papers' baselines (`android-4.4`,
/// `swam-zram`, `swam-nand`, `swam-zram-nand`, `meego-mmc`, `meego-zram`, `meego-zram-mmc`),
/// and the peers `earlyoom` and `nohang` (Debian's packages, run unmodified inside the
/// device's namespace with lxcfs showing them the device's memory; scripts/setup installs
/// all of them). Any of them `+nokswapd` runs on a device without its background reclaimer
/// (kswapd off, as in the refault study); `+scopes` on a device that starts each app in a
/// group of its own, as systemd's scopes and Android's per-app groups do (memorch then
/// squeezes apps it did not start in their groups, their coldest pages first).
///
/// Every run starts alike: a scenario with real programs first launches each of them once,
/// unmeasured ("warming up"), so that the programs' own files are cached for the first run as
/// for every later one; the scenario's data and the synthetic apps' files are dropped from the
/// page cache before each run, so every run's first launches read them from storage.
///
/// It exits non-zero if any visit failed or a run could not run, after writing its results;
/// each failure's output is printed and kept under OUT/logs/.
///
/// Examples:
///   memorch bench                                   quick, every manager
///   memorch bench --managers kernel,lmkd,memorch --repeat 3
///   memorch bench --scenario realapps --managers kernel,earlyoom,memorch
///   memorch bench --managers memorch,memorch:home=off,memorch:idle=off --repeat 3
///   memorch bench --managers memorch,file:mine.toml --repeat 3
///   memorch bench --scenario mos26 --managers android-4.4,mos --repeat 3
///   memorch bench --scenario refault --managers kernel,kernel+nokswapd --repeat 3
///   memorch bench --scenario realapps --managers memorch,memorch:app_groups=false+scopes
///   memorch bench --scenario my.toml --ram 1024 --out results/
///   memorch bench --scenario realapps --ksm --managers memorch,memorch:ksm=off
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// A built-in scenario (quick, mos26, thesis, thesis-ksm, swam40, sessions, trim, refault, meego, realapps) or a TOML
    /// file (docs/bench.md).
    #[arg(long, default_value = "quick")]
    scenario: String,
    /// Comma-separated managers.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "kernel,lmk-classic,compcache,thesis,lmkd,mos,swam,earlyoom,nohang,memorch"
    )]
    managers: Vec<String>,
    /// The device's RAM in MiB (app sizes scale with it); the scenario's by default.
    #[arg(long, value_parser = clap::value_parser!(u64).range(64..=1 << 20))]
    ram: Option<u64>,
    /// Start every app with KSM merging on, whatever the scenario says, as a launcher that
    /// opts its apps in would (Android's zygote may: `memorch spawn --ksm`). Only a manager
    /// that runs KSM merges anything; compare `KSM saved` and `ksmd CPU`.
    #[arg(long)]
    ksm: bool,
    /// Runs of each manager (medians and spreads are reported).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=100))]
    repeat: u64,
    /// Seed of the visit order and page contents; the scenario's by default.
    #[arg(long)]
    seed: Option<u64>,
    /// Where results.json, report.html and logs/ go (default: bench-out/SCENARIO-TIME in the
    /// working directory).
    #[arg(long)]
    out: Option<PathBuf>,
    /// How often the presets' daemons look: `fast` (a tick every 250 ms, a full snapshot
    /// every second, so a scenario's minutes-long day is followed switch by switch) or
    /// `shipped` (the defaults a device runs, `memorch config --defaults`: what the daemon
    /// costs there).
    #[arg(long, default_value = "fast")]
    daemon_loop: DaemonLoop,
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_interrupt(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

pub fn run(a: Args) -> Result<()> {
    let base = Scenario::load(&a.scenario).map_err(|e| anyhow::anyhow!(e))?;
    // Managers split on ',' by clap: rejoin a variant's own key=value list.
    let managers = rejoin_variants(&a.managers);
    campaign::check_managers(&managers).map_err(|e| anyhow::anyhow!(e))?;
    anyhow::ensure!(unsafe { libc::geteuid() } == 0, "memorch bench makes cgroups and zram devices: run it as root");
    let mut scenario = base.scaled(a.ram.unwrap_or(base.ram_mb));
    scenario.ksm |= a.ksm;
    let seed = a.seed.unwrap_or(scenario.seed);
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let out = a.out.unwrap_or_else(|| PathBuf::from(format!("bench-out/{}-{stamp}", scenario.name)));
    // Ctrl-C ends the current visit, then everything is torn down as usual. Apps and the
    // daemon can die at any moment (that is what is measured): writing to them must give
    // EPIPE, not a SIGPIPE that would end the bench.
    // SAFETY: the handler only stores to an atomic; SIG_IGN is a plain disposition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        libc::signal(libc::SIGINT, on_interrupt as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_interrupt as *const () as libc::sighandler_t);
    }
    let order = scenario.visit_order(seed);
    eprintln!(
        "memorch bench: scenario {} ({} MiB device, {} apps{}, {} visits), {} runs -> {}",
        scenario.name,
        scenario.ram_mb,
        scenario.apps.len(),
        if scenario.ksm { " opted in to KSM" } else { "" },
        campaign::visit_count(&order),
        a.repeat as usize * managers.len(),
        std::path::absolute(&out).unwrap_or(out.clone()).display()
    );
    let progress = Shown::new(a.repeat as usize * managers.len() * order.len());
    let c = Campaign {
        scenario,
        managers,
        repeat: a.repeat,
        seed,
        out,
        exe: std::env::current_exe()?,
        daemon_loop: a.daemon_loop,
    };
    let outcome = c.run(&STOP, &progress).map_err(|e| anyhow::anyhow!(e))?;
    progress.done();
    print!("{}", report::table(&outcome.summaries));
    println!("\nresults: {} and {}", outcome.results_json.display(), outcome.report_html.display());
    if STOP.load(Ordering::Relaxed) {
        eprintln!("interrupted: devices torn down; the results so far are above");
    }
    if let Some(why) = &outcome.stopped {
        anyhow::bail!("the bench stopped early: {why}");
    }
    anyhow::ensure!(
        outcome.failed_visits == 0,
        "{} visits failed (their errors are above; logs in {}): these figures are not a clean comparison",
        outcome.failed_visits,
        outcome.results_json.with_file_name("logs").display()
    );
    Ok(())
}

/// `memorch:home=off,idle=off` arrives as `memorch:home=off` and `idle=off`: an item with no
/// ':' but an '=' continues the variant before it.
fn rejoin_variants(items: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for m in items.iter().map(|m| m.trim()).filter(|m| !m.is_empty()) {
        match out.last_mut() {
            Some(last) if !m.contains(':') && m.contains('=') && last.contains(':') => {
                last.push(',');
                last.push_str(m);
            }
            // A preset file by its absolute path: the daemon starts in another directory.
            _ => out.push(match m.strip_prefix("file:").map(std::path::absolute) {
                Some(Ok(path)) => format!("file:{}", path.display()),
                _ => m.to_string(),
            }),
        }
    }
    out
}

/// Progress on a terminal: a bar over every step of every run, with the run, the visit and
/// an ETA; plain lines when not a terminal (a log, CI).
struct Shown {
    bar: Option<ProgressBar>,
    run: Mutex<String>,
}

impl Shown {
    fn new(total_steps: usize) -> Shown {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = ProgressBar::new(total_steps as u64);
            b.set_style(
                ProgressStyle::with_template("{bar:30.cyan/blue} {pos}/{len} steps, ETA {eta} | {msg}")
                    .expect("a valid template")
                    .progress_chars("=> "),
            );
            b
        });
        Shown { bar, run: Mutex::new(String::new()) }
    }

    fn say(&self, line: &str) {
        match &self.bar {
            Some(b) => b.println(line),
            None => eprintln!("{line}"),
        }
    }

    fn done(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl Progress for Shown {
    fn prepare(&self, what: &str) {
        self.say(&format!("preparing: {what}"));
    }

    fn run_started(&self, n: usize, total: usize, manager: &str, rep: u64, steps: usize) {
        let label = format!("[{n}/{total}] {manager} (repeat {})", rep + 1);
        if self.bar.is_none() {
            eprintln!("{label}: {steps} steps");
        }
        *self.run.lock().expect("progress") = label;
    }

    fn step(&self, step: usize, steps: usize, what: &str) {
        let run = self.run.lock().expect("progress").clone();
        match &self.bar {
            Some(b) => {
                b.set_message(format!("{run} step {}/{steps}: {what}", step + 1));
                b.inc(1);
            }
            // A line every tenth of a run, so a log shows progress without a line a visit.
            None if step.is_multiple_of((steps / 10).max(1)) => eprintln!("{run}: step {}/{steps}", step + 1),
            None => {}
        }
    }

    fn run_finished(&self, r: &RunResult) {
        let run = self.run.lock().expect("progress").clone();
        let failed = if r.failed() > 0 { format!(", {} FAILED", r.failed()) } else { String::new() };
        self.say(&format!(
            "{run}: {} visits served{failed} in {:.0} s, {} kills",
            r.served(),
            r.duration_s,
            r.kills.len()
        ));
    }

    fn note(&self, msg: &str) {
        self.say(&format!("memorch bench: {msg}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_split_by_clap_are_rejoined() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            rejoin_variants(&v(&["kernel", "memorch:home=off", "idle=off", "lmkd"])),
            v(&["kernel", "memorch:home=off,idle=off", "lmkd"])
        );
        assert_eq!(rejoin_variants(&v(&["memorch", "earlyoom"])), v(&["memorch", "earlyoom"]));
        assert_eq!(
            rejoin_variants(&v(&["home=off"])),
            v(&["home=off"]),
            "nothing to join to: left for the check to refuse"
        );
    }
}
