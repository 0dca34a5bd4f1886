//! What the daemon sets up on the machine at start (zram as its preset asks, PSI triggers, its own priority and locked
//! memory) and puts back at the end, and what a memorch that died left behind, put back before anything else.

use crate::config::Config;
use crate::executor::Executor;
use memorch_core::engine::Preset;
use memorch_linux::events::{PsiTrigger, StallKind};
use memorch_linux::recovery::Adopted;
use memorch_linux::zram::ZramGuard;
use memorch_linux::{snapshot, Domain, SysRoot};

/// Undo what memorch processes that died left (their guards never ran), and say so; take over the swap whose pages
/// would not fit back. In a dry run, say only what would be done.
pub fn recover(root: &SysRoot, dry_run: bool) -> Adopted {
    let found =
        if dry_run { memorch_linux::recovery::report_all(root) } else { memorch_linux::recovery::recover_all(root) };
    for r in found {
        match r {
            Ok(done) => tracing::warn!("{done}"),
            Err(e) => tracing::error!(error = %e, "could not undo what a memorch process that died left"),
        }
    }
    if dry_run {
        return Adopted::default();
    }
    let adopted = memorch_linux::recovery::adopt_left(root);
    for g in &adopted.swap_files {
        tracing::warn!(file = %g.path.display(), "took over a swap file a memorch that died left on: removed once it holds nothing, or at the end");
    }
    for z in &adopted.zram {
        tracing::warn!(device = %z.setup.device, "took over a zram a memorch that died left on: put back at the end");
    }
    adopted
}

/// Thaw the domain's app groups that a memorch that died left frozen: an app must never stay frozen with nobody to thaw
/// it. Not in a dry run (which changes nothing).
pub fn thaw_left_frozen(domain: &Domain, dry_run: bool) {
    if dry_run {
        return;
    }
    let (done, failed) = memorch_linux::appgroup::thaw_all(domain);
    for d in done {
        tracing::warn!(group = %d, "thawed an app group a memorch that died left frozen");
    }
    for f in failed {
        tracing::error!(error = %f, "could not thaw an app group left frozen");
    }
}

/// PSI triggers on the domain's pressure file: a preset that detects by PSI (lmkd, SWAM) arms its own thresholds (the
/// partial stall of a low-RAM device where the domain is one), every other one the config's.
pub fn arm_triggers(domain: &Domain, cfg: &Config, preset: &Preset) -> Vec<crate::triggers::Trigger> {
    let Some(psi) = &domain.psi_file else { return Vec::new() };
    let (some_us, full_us, w) = match &preset.detection {
        memorch_core::engine::preset::Detection::Psi(l) => {
            let total =
                snapshot::memory_and_pressure(&SysRoot::live(), domain).map_or(u64::MAX, |(m, _, _)| m.total_bytes);
            (l.partial_stall_us(total), l.psi_complete_stall_us, l.psi_window_us)
        }
        _ => (cfg.loop_.psi_some_stall_ms * 1000, cfg.loop_.psi_full_stall_ms * 1000, cfg.loop_.psi_window_ms * 1000),
    };
    let mut out = Vec::new();
    for (kind, stall) in [(StallKind::Some, some_us), (StallKind::Full, full_us)] {
        match PsiTrigger::open(psi, kind, stall, w) {
            Ok(t) => {
                tracing::info!(file = %psi.display(), kind = ?kind, stall_us = t.stall_us, window_us = t.window_us, "PSI trigger armed");
                out.push(crate::triggers::Trigger::new(t));
            }
            Err(e) => tracing::warn!(error = %e, "no PSI trigger: the daemon will only wake on its timer"),
        }
    }
    out
}

/// Make the daemon the subreaper of what it starts: what a hook leaves running after it ends becomes the daemon's
/// child, for `Notifier` to end (a hook's `setsid cmd &` included).
pub fn adopt_orphans() {
    // SAFETY: prctl on this process.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) } != 0 {
        tracing::warn!(error = %std::io::Error::last_os_error(), "not the subreaper of its hooks: what they leave in a session of their own may outlive them");
    }
}

/// The daemon's priority: when memory is short the CPUs are busy reclaiming, and a kill must not wait its turn.
pub fn prioritise(cfg: &Config) {
    // On the main thread before any other starts: the threads it starts inherit it.
    if let Err(e) = memorch_linux::priority::set(cfg.loop_.nice) {
        tracing::warn!(nice = cfg.loop_.nice, error = %e, "could not set the daemon's priority");
    }
}

/// Lock the daemon's memory, so a kill never waits for a page fault when memory is short, once start-up is over: its
/// start-up code is dropped first, and only pages the running loop touches are locked (as it touches them).
pub fn lock_memory(cfg: &Config) {
    if !cfg.loop_.lock_memory {
        return;
    }
    let dropped = memorch_linux::events::drop_startup_pages();
    memorch_linux::events::bound_heap();
    match memorch_linux::events::lock_memory() {
        Ok(()) => tracing::debug!(dropped_bytes = dropped, "memory locked"),
        Err(e) => {
            tracing::warn!(error = %e, "memory not locked: the daemon may stall on page faults when memory is short")
        }
    }
}

/// zram as the preset asks, when the domain has no swap and the config lets memorch manage it; changes nothing in a dry
/// run.
pub fn setup_zram(cfg: &Config, root: &SysRoot, domain: &Domain, preset: &Preset) -> Result<Option<ZramGuard>, String> {
    let Some(pct) = preset.swap.zram_pct else { return Ok(None) };
    if !cfg.manage.zram {
        return Ok(None);
    }
    let swaps = memorch_linux::swaps::read(root).map_err(|e| e.to_string())?;
    if swaps.total_bytes > 0 {
        tracing::info!(swap_bytes = swaps.total_bytes, "swap exists: using it, changing nothing");
        return Ok(None);
    }
    let total = snapshot::cheap(root, domain).map_err(|e| e.to_string())?.memory.total_bytes;
    let size = (total as f64 * pct / 100.0) as u64;
    if cfg.dry_run {
        tracing::info!(size, algorithm = %preset.swap.zram_algorithm, "dry-run: would set up zram");
        return Ok(None);
    }
    let g = ZramGuard::setup(root, size, Some(&preset.swap.zram_algorithm), 100)
        .map_err(|e| format!("zram set-up for preset {}: {e}", preset.name))?;
    tracing::info!(device = %g.setup.device, size, algorithm = %g.setup.algorithm, "zram set up as swap");
    Ok(Some(g))
}

/// The rest of a preset's swap set-up: a fixed storage swap below zram (SWAM's NAND-swap and MeeGo's MMC baselines),
/// where the domain has no storage swap yet and the config lets memorch add swap files; and the domain's swappiness.
/// Nothing in a dry run.
pub fn setup_swap_extras(cfg: &Config, root: &SysRoot, domain: &Domain, preset: &Preset) -> Result<SwapExtras, String> {
    let mut extras = SwapExtras::default();
    let p = &preset.swap;
    if cfg.dry_run {
        if p.storage_pct.is_some() || p.swappiness.is_some() {
            tracing::info!(storage_pct = ?p.storage_pct, swappiness = ?p.swappiness, "dry-run: would set up storage swap and swappiness");
        }
        return Ok(extras);
    }
    if let Some(pct) = p.storage_pct.filter(|_| cfg.manage.swap_files) {
        let snap = snapshot::cheap(root, domain).map_err(|e| e.to_string())?;
        if snap.swap.devices.iter().any(|d| d.kind == "file") {
            tracing::info!("storage swap exists: using it, adding none");
        } else {
            let size = (snap.memory.total_bytes as f64 * pct / 100.0) as u64 & !4095;
            let g = memorch_linux::swapfile::SwapFileGuard::add(
                root,
                &cfg.manage.swap_file_dir,
                size,
                memorch_linux::swapfile::DEFAULT_PRIORITY,
            )
            .map_err(|e| format!("storage swap for preset {}: {e}", preset.name))?;
            tracing::info!(file = %g.path.display(), size, "storage swap set up below zram");
            extras.storage = Some(g);
        }
    }
    if let Some(v) = p.swappiness {
        match domain.cgroup.as_ref().map(|d| memorch_linux::cgroup::SwappinessGuard::set(d, v)) {
            Some(Ok(g)) => {
                tracing::info!(swappiness = v, "domain swappiness set");
                extras.swappiness = Some(g);
            }
            Some(Err(e)) => tracing::warn!(error = %e, "swappiness not set"),
            None => tracing::warn!(
                swappiness = v,
                "swappiness of the system domain is the machine's vm.swappiness: set it yourself; left as it is"
            ),
        }
    }
    Ok(extras)
}

/// What `setup_swap_extras` set up, put back on drop (and by `shutdown`, which says how).
#[derive(Debug, Default)]
pub struct SwapExtras {
    pub storage: Option<memorch_linux::swapfile::SwapFileGuard>,
    pub swappiness: Option<memorch_linux::cgroup::SwappinessGuard>,
}

/// What `setup_zram` and `setup_swap_extras` set up, for `shutdown` to put back.
pub struct Setup {
    /// Its own zram and any it took over.
    pub zram: Vec<memorch_linux::zram::ZramGuard>,
    pub swap_extras: SwapExtras,
}

/// Put back what memorch changed: frozen apps, swap files, KSM settings, zram; and say exactly what was put back and
/// what could not be.
pub fn shutdown(exec: &mut Executor, domain: &Domain, mut setup: Setup) {
    let (mut done, mut failed) = exec.thaw_all();
    let (more_done, more_failed) = exec.actuators.put_back();
    done.extend(more_done);
    failed.extend(more_failed);
    // The loop looks for empty app groups once a full snapshot's period: those emptied since the last look go now.
    let emptied = memorch_linux::appgroup::remove_empty(domain);
    if emptied > 0 {
        tracing::info!(emptied, "removed the domain's empty app groups");
    }
    if let Some(mut g) = setup.swap_extras.storage.take() {
        match g.remove_if_room(&SysRoot::live()) {
            Ok(()) => done.push(format!("removed its storage swap {}", g.path.display())),
            Err(e) => failed.push(format!("storage swap {}: {e}", g.path.display())),
        }
    }
    if setup.swap_extras.swappiness.take().is_some() {
        done.push("put the domain's swappiness back".into());
    }
    for mut z in std::mem::take(&mut setup.zram) {
        match z.teardown_if_room() {
            Ok(()) => done.push(format!("removed its zram {}", z.setup.device)),
            Err(e) => failed.push(format!("zram {}: {e}", z.setup.device)),
        }
    }
    if !failed.is_empty() {
        tracing::error!(put_back = ?done, not_put_back = ?failed, "stopped, but not everything memorch changed could be put back");
    } else if done.is_empty() {
        tracing::info!("stopped; memorch had changed nothing machine-wide");
    } else {
        tracing::info!(put_back = ?done, "stopped; everything memorch changed is put back");
    }
}
