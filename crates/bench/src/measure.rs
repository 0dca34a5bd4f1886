//! What a run measured of its device and manager: counters read at its start and again at its end (refaults, faults,
//! stall, zram's traffic, CPU of the device, the manager, ksmd and the rest of the machine), into the run's result.

use crate::device::Device;
use crate::managed::ManagedDaemon;
use crate::peer::Peer;
use crate::results::{DeviceInfo, RunResult};
use memorch_core::Snapshot;
use memorch_linux::cpustat::MachineCpu;
use memorch_linux::SysRoot;
use std::sync::atomic::Ordering::Relaxed;

/// zram's compression ratio counts only with this many pages written: fewer say nothing of it.
const RATIO_MIN_PAGES: u64 = 256;

/// The counters at the run's start.
pub struct Start {
    pub snap: Snapshot,
    zram_io: Option<(u64, u64)>,
    device_cpu_us: Option<u64>,
    ksmd_us: Option<u64>,
    machine_cpu: Option<MachineCpu>,
    machine_reclaim: Option<(u64, u64)>,
}

impl Start {
    pub fn read(root: &SysRoot, device: &Device, snap: Snapshot) -> Start {
        Start {
            snap,
            zram_io: device.zram_io(),
            device_cpu_us: device.cpu_us(),
            ksmd_us: memorch_linux::ksm::ksmd_cpu_us(root),
            machine_cpu: memorch_linux::cpustat::read(root).ok(),
            machine_reclaim: memorch_linux::vmstat::refaults_and_evictions(root),
        }
    }
}

/// Refaults, faults, stall and direct reclaims between the start and `after`; the keeper's own failures are not the
/// apps' (it charges past the limit to reclaim).
pub fn counters(r: &mut RunResult, start: &Start, after: &Snapshot, device: &Device) {
    let (c0, c1) = (&start.snap.counters, &after.counters);
    let delta = |a: Option<u64>, b: Option<u64>| b.unwrap_or(0).saturating_sub(a.unwrap_or(0));
    let psi =
        |s: &Snapshot| s.psi.get().map_or((0.0, 0.0), |p| (p.some.total_us as f64 / 1e6, p.full.total_us as f64 / 1e6));
    let ((s0, f0), (s1, f1)) = (psi(&start.snap), psi(after));
    r.refault_anon_pages = delta(c0.refault_anon_pages, c1.refault_anon_pages);
    r.refault_file_pages = delta(c0.refault_file_pages, c1.refault_file_pages);
    r.refault_pages = r.refault_anon_pages + r.refault_file_pages;
    r.major_faults = delta(c0.major_faults, c1.major_faults);
    let reclaim = memorch_linux::vmstat::refaults_and_evictions(&SysRoot::live()).zip(start.machine_reclaim);
    r.refaults_per_eviction = reclaim
        .map(|((f1, e1), (f0, e0))| (f1.saturating_sub(f0), e1.saturating_sub(e0)))
        .filter(|(_, evicted)| *evicted > 0)
        .map(|(refaulted, evicted)| refaulted as f64 / evicted as f64);
    (r.psi_some_s, r.psi_full_s) = (s1 - s0, f1 - f0);
    let keeper = device.keeper.as_ref().map(|k| &k.stats);
    let keeper_failcnt = keeper.map_or(0, |k| k.own_failcnt.load(Relaxed));
    r.direct_reclaims =
        c1.direct_reclaims.map(|n| n.saturating_sub(c0.direct_reclaims.unwrap_or(0)).saturating_sub(keeper_failcnt));
    if let Some(k) = keeper {
        r.background_reclaimed_bytes = k.reclaimed_bytes.load(Relaxed);
        r.background_reclaim_wakeups = k.wakeups.load(Relaxed);
        r.background_reclaim_stall_s = k.in_psi.load(Relaxed).then(|| k.stall_us.load(Relaxed) as f64 / 1e6);
    }
}

/// zram's traffic and compression ratio over the run.
pub fn zram(r: &mut RunResult, start: &Start, after: &Snapshot, device: &Device) {
    let swap_io =
        device.zram_io().zip(start.zram_io).map(|((r1, w1), (r0, w0))| (r1.saturating_sub(r0), w1.saturating_sub(w0)));
    let ratio = device.zram.as_ref().and_then(|z| {
        after
            .zram
            .get()
            .and_then(|st| st.devices.iter().find(|d| d.name == z.setup.device))
            .and_then(|d| d.compression_ratio)
    });
    r.swap_in_pages = swap_io.map(|io| io.0);
    r.swap_out_pages = swap_io.map(|io| io.1);
    r.refault_ratio = swap_io.filter(|io| io.1 > 0).map(|io| r.refault_anon_pages as f64 / io.1 as f64);
    r.zram_ratio = ratio.filter(|_| swap_io.is_some_and(|io| io.1 >= RATIO_MIN_PAGES));
}

/// CPU over the run: the device's, the manager's (a peer runs inside the device, memorch's daemon outside), ksmd's, and
/// the rest of the shared machine's, with what the host stole.
pub fn cpu(r: &mut RunResult, root: &SysRoot, start: &Start, device: &Device, manager: Manager) {
    let usage = match manager {
        Manager::Daemon(d) => d.usage(),
        Manager::Peer(p) => p.usage(),
        Manager::Kernel => Default::default(),
    };
    r.device_cpu_s = device.cpu_us().zip(start.device_cpu_us).map(|(c1, c0)| c1.saturating_sub(c0) as f64 / 1e6);
    let machine = memorch_linux::cpustat::read(root).ok().zip(start.machine_cpu);
    r.steal_s = machine.map(|(m1, m0)| m1.steal_us.saturating_sub(m0.steal_us) as f64 / 1e6);
    let daemon_cpu_s = if matches!(manager, Manager::Daemon(_)) { usage.cpu_us as f64 / 1e6 } else { 0.0 };
    r.other_cpu_s = machine
        .zip(r.device_cpu_s)
        .map(|((m1, m0), dev)| (m1.busy_us.saturating_sub(m0.busy_us) as f64 / 1e6 - dev - daemon_cpu_s).max(0.0));
    r.ksmd_cpu_s =
        memorch_linux::ksm::ksmd_cpu_us(root).zip(start.ksmd_us).map(|(a, b)| a.saturating_sub(b) as f64 / 1e6);
    r.manager_cpu_s = usage.cpu_us as f64 / 1e6;
    r.manager_rss_bytes = usage.rss_bytes;
    r.manager_pss_bytes = usage.pss_bytes;
    if let Manager::Peer(p) = manager {
        r.manager_restarts = p.restarts;
    }
    if let Manager::Daemon(d) = manager {
        let status = d.status();
        r.trim_freed_bytes = status.as_ref().map_or(0, |s| s.counters.trim_freed_bytes);
        r.manager_reclaims = status.as_ref().and_then(|s| s.counters.actions.get("reclaim").copied()).unwrap_or(0);
        r.device_costs = status.map(|s| s.device_costs);
    }
}

/// The run's manager, as its figures are read.
#[derive(Clone, Copy)]
pub enum Manager<'a> {
    Kernel,
    Daemon(&'a ManagedDaemon),
    Peer(&'a Peer),
}

/// The device as the run had it, read while the manager still runs (a daemon puts the machine's read-ahead back as it
/// stops).
pub fn device_info(root: &SysRoot, device: &Device, ksm_opt_in: bool) -> DeviceInfo {
    DeviceInfo {
        ram_bytes: device.ram_bytes,
        zram_bytes: device.zram.as_ref().map_or(0, |z| z.setup.disksize_bytes),
        zram_algorithm: device.zram.as_ref().map_or(String::new(), |z| z.setup.algorithm.clone()),
        ksm_opt_in,
        swap_read_ahead_pages: memorch_linux::readahead::page_cluster(root)
            .ok()
            .map(|n| 1 << n.min(memorch_linux::readahead::MAX_PAGE_CLUSTER)),
    }
}
