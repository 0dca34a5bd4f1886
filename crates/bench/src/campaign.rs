//! A campaign: a scenario under every manager asked for, repeated, alternating managers run by run, each on a fresh
//! device; then `results.json` and `report.html`. What `memorch bench` does; the binary only parses arguments and
//! prints. Each repeat starts one manager further down the list ([`run_order`]), so no manager always runs first.

use crate::conditions::{AppGroups, Launcher, SwapDisk};
use crate::driver::{self, RunConfig};
use crate::peers::{is_peer, PEERS};
use crate::report::{self, Summary};
use crate::results::{RunResult, Visit};
use crate::scenario::{Scenario, IDLE};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

pub struct Campaign {
    /// Scaled to the device's RAM already.
    pub scenario: Scenario,
    pub managers: Vec<String>,
    pub repeat: u64,
    pub seed: u64,
    /// Where results go; made absolute before anything else.
    pub out: PathBuf,
    /// The memorch binary.
    pub exe: PathBuf,
    /// How often the presets' daemons look.
    pub daemon_loop: crate::managed::DaemonLoop,
    /// What the launcher tells the manager, and how apps are grouped.
    pub launcher: Launcher,
    pub app_groups: AppGroups,
    pub swap_disk: SwapDisk,
}

/// What the user sees while a campaign runs.
pub trait Progress {
    /// Data is being generated (once per scenario version).
    fn prepare(&self, what: &str);
    /// Run `n` of `total` starts: `steps` visits and idle steps.
    fn run_started(&self, n: usize, total: usize, manager: &str, rep: u64, steps: usize);
    fn step(&self, step: usize, steps: usize, what: &str);
    fn run_finished(&self, r: &RunResult);
    /// Something to show at once (a failed visit and why).
    fn note(&self, msg: &str);
}

pub struct Outcome {
    pub runs: Vec<RunResult>,
    pub summaries: Vec<Summary>,
    pub results_json: PathBuf,
    pub report_html: PathBuf,
    /// Failed visits over all runs.
    pub failed_visits: usize,
    /// Why the campaign stopped before its last run, if it did (an interrupt is not this).
    pub stopped: Option<String>,
}

/// Check a manager list: `kernel`, a preset spec (`memorch`, `memorch:ahead=off`) or a peer, each optionally
/// `+nokswapd` (its device without background reclaim) and `+scopes` (its apps each in a group of the device's making).
pub fn check_managers(managers: &[String]) -> Result<(), String> {
    for m in managers.iter().map(|m| crate::device::split_manager(m).0) {
        if is_peer(m) {
            continue;
        }
        if let Err(e) = memorch_daemon::preset_file::load(m) {
            let peers = PEERS.map(|p| p.0).join(", ");
            return Err(if m.contains(':') {
                format!("manager '{m}': {e}")
            } else {
                format!("unknown manager '{m}': {e}, or a peer ({peers})")
            });
        }
    }
    Ok(())
}

/// What every run of a bench shares.
struct Setting<'a> {
    scenario: &'a Scenario,
    work: &'a Path,
    logs: &'a Path,
    /// The synthetic apps' files installed under `work`.
    installed: usize,
    lxcfs: Option<&'a memorch_linux::lxcfs::Lxcfs>,
}

/// Before run `n`: the scenario's data and the synthetic apps' files dropped from the page cache (data_cache.rs), so
/// its first launches read them from storage whatever the run before left cached. A failure to drop the apps' files
/// stops the bench.
fn drop_caches(set: &Setting, n: usize, progress: &dyn Progress) -> Result<(), String> {
    if !set.scenario.prepare.is_empty() {
        match crate::data_cache::drop_cached(&set.scenario.data_dir()) {
            Ok(d) if n == 1 => progress.note(&format!("the scenario's data ({} files) is dropped from the page cache before each run, so that every run's first launches read it from storage ({} MiB were cached now)", d.files, d.cached_bytes >> 20)),
            Ok(_) => {}
            Err(e) => progress.note(&format!("could not drop the scenario's data from the page cache ({}): {e}; this run's first launches may find it cached", set.scenario.data_dir().display())),
        }
    }
    if set.installed > 0 {
        match crate::data_cache::drop_cached(set.work) {
            Ok(d) if n == 1 => progress.note(&format!("the apps' files ({} files) are dropped from the page cache before each run, so that every run's first launches read them from storage and its device is charged for their pages ({} MiB were cached now)", d.files, d.cached_bytes >> 20)),
            Ok(_) => {}
            Err(e) => return Err(format!("could not drop the apps' files from the page cache ({}): {e}", set.work.display())),
        }
    }
    Ok(())
}

impl Campaign {
    pub fn run(mut self, stop: &AtomicBool, progress: &dyn Progress) -> Result<Outcome, String> {
        check_managers(&self.managers)?;
        self.out = std::path::absolute(&self.out).map_err(|e| format!("--out {}: {e}", self.out.display()))?;
        let (work, logs) = (self.out.join("work"), self.out.join("logs"));
        for d in [&work, &logs] {
            std::fs::create_dir_all(d).map_err(|e| format!("creating {}: {e}", d.display()))?;
        }
        // zram and swap are machine-wide: queue behind tests and other benches.
        let _lock =
            memorch_linux::lock::FileLock::acquire(memorch_linux::lock::WHOLE_RUN_LOCK).map_err(|e| e.to_string())?;
        // A bench or test killed before its clean-up left its device: remove it first.
        for r in memorch_linux::recovery::recover_all(&memorch_linux::SysRoot::live()) {
            progress.note(&r.unwrap_or_else(|e| format!("could not undo: {e}")));
        }
        let scenario = crate::prepare::scenario(&self.scenario, &self.out, &|m| progress.prepare(m))?;
        // Peers read /proc/meminfo: lxcfs makes it the device's.
        let lxcfs = match self.managers.iter().any(|m| is_peer(crate::device::split_manager(m).0)) {
            true => Some(
                memorch_linux::lxcfs::Lxcfs::start()
                    .map_err(|e| format!("peers (earlyoom, nohang) need lxcfs: {e}"))?,
            ),
            false => None,
        };
        // Nothing half-written is left behind: up to a few GiB of files.
        let installed = crate::prepare::install_synthetic_files(&scenario, &work, stop, &|m| progress.prepare(m))
            .inspect_err(|_| {
                let _ = std::fs::remove_dir_all(&work);
            })?;
        let warm_up = match scenario.has_real_programs() {
            // As above: no runs, so none of the apps' files is kept.
            true => self.warm_up(&scenario, &work, &logs, stop, progress, lxcfs.as_ref()).inspect_err(|_| {
                let _ = std::fs::remove_dir_all(&work);
                let _ = std::fs::remove_dir_all(own_run_root());
            })?,
            false => Vec::new(),
        };
        let setting = Setting { scenario: &scenario, work: &work, logs: &logs, installed, lxcfs: lxcfs.as_ref() };
        let (runs, stopped) = self.all_runs(&setting, stop, progress);
        let _ = std::fs::remove_dir_all(own_run_root());
        self.write(&scenario, runs, &warm_up, stopped, &work)
    }

    /// Every run, alternating managers; the runs done, and why the bench stopped early if it did.
    fn all_runs(&self, set: &Setting, stop: &AtomicBool, progress: &dyn Progress) -> (Vec<RunResult>, Option<String>) {
        let total = self.repeat as usize * self.managers.len();
        let mut runs = Vec::new();
        for (rep, m) in run_order(&self.managers, self.repeat) {
            let n = runs.len() + 1;
            progress.run_started(n, total, m, rep, set.scenario.visit_order(self.seed + rep).len());
            let run_dir = own_run_root().join(n.to_string());
            let log_dir = set.logs.join(format!("{n:02}-{}", m.replace([':', ',', '=', '/'], "_")));
            let cfg = RunConfig {
                scenario: set.scenario,
                manager: m,
                seed: self.seed + rep,
                exe: &self.exe,
                daemon_loop: self.daemon_loop,
                launcher: self.launcher,
                app_groups: self.app_groups,
                swap_disk: self.swap_disk,
                work_dir: set.work,
                log_dir: &log_dir,
                run_dir: &run_dir,
                stop,
                progress: &|i, steps, what| progress.step(i, steps, what),
                note: &|msg| progress.note(msg),
                lxcfs: set.lxcfs,
            };
            if let Err(e) = drop_caches(set, n, progress) {
                return (runs, Some(format!("run {n} ({m}): {e}")));
            }
            let r = match driver::run(&cfg) {
                Ok(r) => r,
                Err(e) => return (runs, Some(format!("run {n} ({m}) could not run: {e}"))),
            };
            progress.run_finished(&r);
            let (interrupted, aborted) = (r.interrupted, r.aborted.clone());
            runs.push(r);
            if let Some(e) = aborted {
                return (runs, Some(format!("run {n} ({m}): {e}")));
            }
            if interrupted || stop.load(Ordering::Relaxed) {
                break;
            }
        }
        (runs, None)
    }

    /// Each real program launched once before the first run, so that every run finds the programs' own files cached
    /// alike ([`driver::warm_up`]); what each launch took is said and kept in results.json. A launch that fails here is
    /// said and does not stop the bench: the runs report their own.
    fn warm_up(
        &self,
        scenario: &Scenario,
        work: &Path,
        logs: &Path,
        stop: &AtomicBool,
        progress: &dyn Progress,
        lxcfs: Option<&memorch_linux::lxcfs::Lxcfs>,
    ) -> Result<Vec<Visit>, String> {
        let programs = scenario.apps.iter().filter(|a| !a.command.is_empty()).count();
        progress.prepare(&format!(
            "warming up: each of the {programs} real programs launched once, alone and unmeasured, so that the first run finds the programs' own files cached as every later run does"
        ));
        let run_dir = own_run_root().join("warm-up");
        let cfg = RunConfig {
            scenario,
            manager: "kernel",
            seed: self.seed,
            exe: &self.exe,
            daemon_loop: self.daemon_loop,
            launcher: self.launcher,
            app_groups: self.app_groups,
            swap_disk: self.swap_disk,
            work_dir: work,
            log_dir: &logs.join("00-warm-up"),
            run_dir: &run_dir,
            stop,
            progress: &|_, _, _| {},
            note: &|msg| progress.note(msg),
            lxcfs,
        };
        let launched = driver::warm_up(&cfg)
            .map_err(|e| format!("warming up (each real program launched once before the runs): {e}"))?;
        let said: Vec<String> = launched
            .iter()
            .map(|v| match &v.error {
                None => format!("{} {:.0} ms", v.app, v.latency_ms),
                Some(e) => format!("{} FAILED ({e})", v.app),
            })
            .collect();
        progress.note(&format!("warmed up: {}", said.join(", ")));
        Ok(launched)
    }

    /// results.json and report.html; the app files go, the logs stay.
    fn write(
        &self,
        scenario: &Scenario,
        runs: Vec<RunResult>,
        warm_up: &[Visit],
        stopped: Option<String>,
        work: &Path,
    ) -> Result<Outcome, String> {
        let summaries = report::summarize(&runs);
        let json = serde_json::json!({
            "scenario": scenario.name,
            "description": scenario.description,
            "ram_mb": scenario.ram_mb,
            "seed": self.seed,
            "repeat": self.repeat,
            "managers": self.managers,
            "daemon_loop": self.daemon_loop,
            "launcher": self.launcher,
            "app_groups": self.app_groups,
            "swap_disk": self.swap_disk,
            "stopped": stopped,
            "warm_up": warm_up,
            "summaries": summaries,
            "runs": runs,
        });
        let results_json = self.out.join("results.json");
        let report_html = self.out.join("report.html");
        let text = serde_json::to_string_pretty(&json).map_err(|e| e.to_string())?;
        std::fs::write(&results_json, text).map_err(|e| format!("writing {}: {e}", results_json.display()))?;
        let html = crate::html::report(&scenario.name, &scenario.description, &summaries, &runs, stopped.as_deref());
        std::fs::write(&report_html, html).map_err(|e| format!("writing {}: {e}", report_html.display()))?;
        let _ = std::fs::remove_dir_all(work);
        let failed_visits = runs.iter().map(RunResult::failed).sum();
        Ok(Outcome { runs, summaries, results_json, report_html, failed_visits, stopped })
    }
}

/// The runs of a campaign, in order: each repeat runs every manager once, starting one manager further down the list
/// than the repeat before (`a,b,c` then `b,c,a`), so no manager always takes a bench's first run, which differs.
pub fn run_order(managers: &[String], repeat: u64) -> Vec<(u64, &String)> {
    let n = managers.len();
    (0..repeat).flat_map(|rep| (0..n).map(move |i| (rep, &managers[(i + rep as usize) % n]))).collect()
}

/// Where runs keep their `{run}` directories: short paths (Unix sockets allow 107 bytes).
pub const RUN_ROOT: &str = memorch_linux::recovery::BENCH_RUN_ROOT;

/// This bench's directory under [`RUN_ROOT`], named by its `owner::tag` (recovery.rs removes it if the bench dies).
fn own_run_root() -> std::path::PathBuf {
    Path::new(RUN_ROOT).join(memorch_linux::owner::tag())
}

/// The number of app visits in a visit order (idle steps are not visits).
pub fn visit_count(order: &[String]) -> usize {
    order.iter().filter(|v| *v != IDLE).count()
}

#[cfg(test)]
#[path = "campaign_tests.rs"]
mod tests;
