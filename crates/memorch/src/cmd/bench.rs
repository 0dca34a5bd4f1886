//! `memorch bench`: every manager on the same scenario, side by side.

use super::{bench_run, scoreboard};
use anyhow::Result;
use memorch_bench::campaign;
use memorch_bench::conditions::{AppGroups, Launcher, SwapDisk};
use memorch_bench::managed::DaemonLoop;
use memorch_bench::scenario::Scenario;
use std::path::PathBuf;

const DEFAULT_MANAGERS: [&str; 10] =
    ["kernel", "lmk-classic", "compcache", "thesis", "lmkd", "mos", "swam", "earlyoom", "nohang", "memorch"];

/// Run a scenario on a fresh virtual device under each manager in turn (alternating, run by
/// run), and compare: visits hot/warm/cold/failed and their latency, apps kept alive, frame
/// times while in front, free memory after idle, kills and by whom, refaults, pressure stall,
/// compression, and the manager's own CPU and memory.
///
/// Managers: `kernel` (no manager), every preset (`memorch presets`), a preset with a step
/// left out or a key changed (`memorch:ahead=off`, `memorch:swap.zram_pct=25`: `memorch
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
///   memorch bench --managers memorch,memorch:ahead=off,memorch:idle=off --repeat 3
///   memorch bench --managers memorch,file:mine.toml --repeat 3
///   memorch bench --scenario mos26 --managers android-4.4,mos --repeat 3
///   memorch bench --scenario refault --managers kernel,kernel+nokswapd --repeat 3
///   memorch bench --scenario realapps --managers memorch,memorch:app_groups=false+scopes
///   memorch bench --scenario my.toml --ram 1024 --out results/
///   memorch bench --scenario realapps --ksm --managers memorch,memorch:ksm=off
///   memorch bench --scenario realapps --launcher silent --app-groups none --ram 1536
///   memorch bench --scoreboard --out scoreboard/          about 4 h; resumes where it stopped
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// A built-in scenario (quick, mos26, thesis, thesis-fish, thesis-ksm, swam40, sessions, trim, refault, meego,
    /// realapps) or a TOML file (docs/bench.md) [default: quick].
    #[arg(long)]
    scenario: Option<String>,
    /// Comma-separated managers [default: kernel,lmk-classic,compcache,thesis,lmkd,mos,swam, earlyoom,nohang,memorch;
    /// with --scoreboard kernel,earlyoom,lmkd,memorch].
    #[arg(long, value_delimiter = ',')]
    managers: Option<Vec<String>>,
    /// The device's RAM in MiB (app sizes scale with it); the scenario's by default.
    #[arg(long, value_parser = clap::value_parser!(u64).range(64..=1 << 20))]
    ram: Option<u64>,
    /// Start every app with KSM merging on, whatever the scenario says, as a launcher that opts its apps in would
    /// (Android's zygote may: `memorch spawn --ksm`). Only a manager that runs KSM merges anything; compare `KSM saved`
    /// and `ksmd CPU`.
    #[arg(long)]
    ksm: bool,
    /// Runs of each manager (medians and spreads are reported); repeat N runs seed + N [default: 1; with --scoreboard
    /// 3].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=100))]
    repeat: Option<u64>,
    /// Seed of the visit order and page contents; the scenario's by default (with --scoreboard 60, a seed no preset was
    /// tuned on).
    #[arg(long)]
    seed: Option<u64>,
    /// Where results.json, report.html and logs/ go (default: bench-out/SCENARIO-TIME in the working directory; with
    /// --scoreboard bench-out/scoreboard).
    #[arg(long)]
    out: Option<PathBuf>,
    /// How often the presets' daemons look: `fast` (a tick every 250 ms, a full snapshot every second, so a scenario's
    /// minutes-long day is followed switch by switch) or `shipped` (the defaults a device runs, `memorch config
    /// --defaults`: what the daemon costs there).
    #[arg(long, default_value = "fast")]
    daemon_loop: DaemonLoop,
    /// What the device's launcher tells memorch: `full` (each app's class, launch intents and launch times over
    /// memorch's socket, as a phone's activity manager that speaks memorch's protocol) or `silent` (only each app's
    /// `oom_score_adj`, as on ordinary Linux: the daemon infers the rest).
    #[arg(long, default_value = "full", conflicts_with = "scoreboard")]
    launcher: Launcher,
    /// How apps are grouped: `own` (a memory group each, where the manager's preset asks for one) or `none` (all in the
    /// device's one group, as on a desktop without per-app scopes).
    #[arg(long, default_value = "own", conflicts_with = "scoreboard")]
    app_groups: AppGroups,
    /// The disk under the presets' storage swap files: `machine` (this machine's, where the run's files are) or `emmc`
    /// (a loop device throttled to a phone's eMMC flash: 250 MB/s read, 100 MB/s written, 8,000 and 3,000 operations a
    /// second; needs losetup and mkfs.ext4, and a block-I/O cgroup controller).
    #[arg(long, default_value = "machine", conflicts_with = "scoreboard")]
    swap_disk: SwapDisk,
    /// Run the scoreboard instead of one scenario: `realapps` with the full launcher and groups of their own,
    /// `realapps` silent with one group, at 1536 MiB (a mild shortage) likewise, `quick`, and `swam40` at 2048 MiB;
    /// each cell in OUT/CELL/, then OUT/scoreboard.md with the candidate's (the last manager's) ratios to the best
    /// other. A cell already complete in OUT is kept, so a stopped scoreboard resumes. About 4 h.
    #[arg(long, conflicts_with_all = ["scenario", "ram", "ksm"])]
    scoreboard: bool,
    /// At the end, print the managers' summaries and where the files are as JSON, not the table (progress still goes to
    /// stderr).
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> Result<()> {
    let default = if a.scoreboard { &scoreboard::MANAGERS[..] } else { &DEFAULT_MANAGERS[..] };
    let listed = a.managers.unwrap_or_else(|| default.iter().map(|m| m.to_string()).collect());
    // Managers split on ',' by clap: rejoin a variant's own key=value list.
    let managers = rejoin_variants(&listed);
    campaign::check_managers(&managers).map_err(|e| anyhow::anyhow!(e))?;
    anyhow::ensure!(unsafe { libc::geteuid() } == 0, "memorch bench makes cgroups and zram devices: run it as root");
    bench_run::stop_on_signals();
    let scenario = match a.scoreboard {
        true => None,
        false => {
            let base = Scenario::load(a.scenario.as_deref().unwrap_or("quick")).map_err(|e| anyhow::anyhow!(e))?;
            let mut s = base.scaled(a.ram.unwrap_or(base.ram_mb));
            s.ksm |= a.ksm;
            Some(s)
        }
    };
    let out = a.out.unwrap_or_else(|| match &scenario {
        Some(s) => {
            let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
            PathBuf::from(format!("bench-out/{}-{stamp}", s.name))
        }
        None => PathBuf::from("bench-out/scoreboard"),
    });
    let b = bench_run::Bench {
        managers,
        repeat: a.repeat.unwrap_or(if a.scoreboard { 3 } else { 1 }),
        seed: a.seed,
        out,
        daemon_loop: a.daemon_loop,
        launcher: a.launcher,
        app_groups: a.app_groups,
        swap_disk: a.swap_disk,
        json: a.json,
    };
    let Some(scenario) = scenario else { return scoreboard::run(b) };
    let outcome = bench_run::bench(scenario, &b)?;
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

/// `memorch:ahead=off,idle=off` arrives as `memorch:ahead=off` and `idle=off`: an item with no ':' but an '=' continues
/// the variant before it.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_split_by_clap_are_rejoined() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            rejoin_variants(&v(&["kernel", "memorch:ahead=off", "idle=off", "lmkd"])),
            v(&["kernel", "memorch:ahead=off,idle=off", "lmkd"])
        );
        assert_eq!(rejoin_variants(&v(&["memorch", "earlyoom"])), v(&["memorch", "earlyoom"]));
        assert_eq!(
            rejoin_variants(&v(&["ahead=off"])),
            v(&["ahead=off"]),
            "nothing to join to: left for the check to refuse"
        );
    }
}
