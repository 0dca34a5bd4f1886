//! One bench of `memorch bench` (the command's or a scoreboard cell's): Ctrl-C stops it cleanly, its progress is shown
//! and its table printed.

use super::bench_progress::Shown;
use anyhow::Result;
use memorch_bench::campaign::{self, Campaign};
use memorch_bench::conditions::{AppGroups, Launcher, SwapDisk};
use memorch_bench::managed::DaemonLoop;
use memorch_bench::report;
use memorch_bench::scenario::Scenario;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

pub static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_interrupt(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// What one bench needs beyond its scenario.
pub struct Bench {
    pub managers: Vec<String>,
    pub repeat: u64,
    pub seed: Option<u64>,
    pub out: PathBuf,
    pub daemon_loop: DaemonLoop,
    pub launcher: Launcher,
    pub app_groups: AppGroups,
    pub swap_disk: SwapDisk,
    pub json: bool,
}

/// Ctrl-C and SIGTERM end the current visit, then everything is torn down as usual. Apps and the daemon can die at any
/// moment (that is what is measured): writing to them must give EPIPE, not a SIGPIPE that would end the bench.
pub fn stop_on_signals() {
    // SAFETY: the handler only stores to an atomic; SIG_IGN is a plain disposition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        libc::signal(libc::SIGINT, on_interrupt as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_interrupt as *const () as libc::sighandler_t);
    }
}

/// One scenario under every manager: its progress shown, its table printed.
pub fn bench(scenario: Scenario, b: &Bench) -> Result<campaign::Outcome> {
    let seed = b.seed.unwrap_or(scenario.seed);
    let order = scenario.visit_order(seed);
    eprintln!(
        "memorch bench: scenario {} ({} MiB device, {} apps{}, {} visits, launcher {}, app groups {}, swap disk {}), {} runs -> {}",
        scenario.name,
        scenario.ram_mb,
        scenario.apps.len(),
        if scenario.ksm { " opted in to KSM" } else { "" },
        campaign::visit_count(&order),
        b.launcher,
        b.app_groups,
        b.swap_disk,
        b.repeat as usize * b.managers.len(),
        std::path::absolute(&b.out).unwrap_or(b.out.clone()).display()
    );
    let progress = Shown::new(b.repeat as usize * b.managers.len() * order.len());
    let c = Campaign {
        scenario,
        managers: b.managers.clone(),
        repeat: b.repeat,
        seed,
        out: b.out.clone(),
        exe: std::env::current_exe()?,
        daemon_loop: b.daemon_loop,
        launcher: b.launcher,
        app_groups: b.app_groups,
        swap_disk: b.swap_disk,
    };
    let outcome = c.run(&STOP, &progress).map_err(|e| anyhow::anyhow!(e))?;
    progress.done();
    if b.json {
        let doc = serde_json::json!({"summaries": outcome.summaries, "results": outcome.results_json, "report": outcome.report_html});
        super::print_json(&doc)?;
    } else {
        print!("{}", report::table(&outcome.summaries));
        println!("\nresults: {} and {}", outcome.results_json.display(), outcome.report_html.display());
    }
    if STOP.load(Ordering::Relaxed) {
        eprintln!("interrupted: devices torn down; the results so far are above");
    }
    Ok(outcome)
}
