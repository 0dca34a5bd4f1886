//! Helpers for tests that need the kernel's facilities: run, skip with a printed reason, or,
//! under `MEMORCH_REQUIRE_KERNEL=1` (as CI sets it), fail when a facility is missing.

/// Whether a kernel facility is usable. `Err(reason)` means missing: the test should return
/// early when this gives `false`; it panics instead when the facility is required.
pub fn facility(name: &str, check: Result<(), String>) -> bool {
    match check {
        Ok(()) => true,
        Err(reason) => {
            if std::env::var("MEMORCH_REQUIRE_KERNEL").is_ok_and(|v| v == "1") {
                panic!("{name} is required (MEMORCH_REQUIRE_KERNEL=1) but missing: {reason}");
            }
            eprintln!("SKIP: {name} is not available here: {reason}");
            false
        }
    }
}

/// Root and cgroups: what every live sandbox test needs.
pub fn sandbox_facility() -> bool {
    let check = if unsafe { libc::geteuid() } != 0 {
        Err("tests that make cgroups run as root".to_string())
    } else {
        crate::cgroup::mounts(&crate::SysRoot::live()).map(|_| ()).map_err(|e| e.to_string())
    };
    facility("cgroup sandbox", check)
}

/// A name unique to this test process and call, for sandboxes and files.
pub fn unique_name(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!("{prefix}-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

/// Poll `cond` until it holds or `timeout` passes; the condition, not a fixed sleep, decides.
pub fn wait_for(timeout: std::time::Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        if cond() {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// The lock that tests touching machine-wide state (zram, swap, KSM) hold for their whole
/// run, so parallel test threads and binaries queue. Distinct from the short lock the
/// actuators take for each change, so a test holding this one never deadlocks with them.
pub const TEST_LOCK: &str = "/run/lock/memorch-test.lock";

pub fn machine_test_lock() -> crate::lock::FileLock {
    let lock = crate::lock::FileLock::acquire(TEST_LOCK).expect("take the test lock");
    recover_stale();
    lock
}

/// Undo what killed test or bench processes left (zram set-ups, sandboxes): their guards
/// never ran. Call with the test lock held.
pub fn recover_stale() {
    for r in crate::recovery::recover_all(&crate::SysRoot::live()) {
        match r {
            Ok(done) => eprintln!("memorch: {done}"),
            Err(e) => eprintln!("memorch: could not undo: {e}"),
        }
    }
}

/// Whether no swap is active: a test that needs the daemon to set up its own zram cannot
/// run while other swap is on (the daemon rightly uses what is there), and must not turn
/// off what it did not make. Skips with a reason (also under MEMORCH_REQUIRE_KERNEL: swap
/// is a state of the machine, not a missing facility). Call with the test lock held.
pub fn no_foreign_swap() -> bool {
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    let active: Vec<&str> = swaps.lines().skip(1).filter_map(|l| l.split_whitespace().next()).collect();
    if active.is_empty() {
        return true;
    }
    eprintln!("SKIP: swap that memorch did not set up is active ({}): this test needs a machine without swap", active.join(", "));
    false
}

/// zram (module loaded, control interface present).
pub fn zram_facility() -> bool {
    let root = crate::SysRoot::live();
    let ok = root.path("/sys/class/zram-control").exists() || !crate::zram::device_names(&root).is_empty();
    facility("zram", if ok { Ok(()) } else { Err("the zram module is not loaded (modprobe zram)".into()) }) && sandbox_facility()
}

/// KSM with per-process merging (PR_SET_MEMORY_MERGE, /proc/PID/ksm_stat).
pub fn ksm_facility() -> bool {
    let ok = std::path::Path::new(crate::ksm::KSM_DIR).is_dir() && std::path::Path::new("/proc/self/ksm_stat").exists();
    facility("ksm", if ok { Ok(()) } else { Err("no /sys/kernel/mm/ksm or /proc/self/ksm_stat (CONFIG_KSM, Linux 6.4+)".into()) }) && sandbox_facility()
}

/// Per-group PSI and freezing: the v2 hierarchy.
pub fn cgroup_v2_facility() -> bool {
    let ok = crate::cgroup::mounts(&crate::SysRoot::live()).map(|ms| ms.iter().any(|m| m.is_v2())).unwrap_or(false);
    facility("cgroup v2", if ok { Ok(()) } else { Err("no cgroup2 mount".into()) }) && sandbox_facility()
}

/// The device view for peers: lxcfs and FUSE, and the peers themselves (Debian's lxcfs,
/// earlyoom and nohang, which scripts/setup installs).
pub fn peers_facility() -> bool {
    let missing: Vec<&str> = ["lxcfs", "earlyoom", "nohang"].into_iter().filter(|p| crate::lxcfs::on_path(p).is_none()).collect();
    let check = if !missing.is_empty() {
        Err(format!("{} not installed (sudo ./scripts/setup installs them)", missing.join(", ")))
    } else if !std::path::Path::new("/dev/fuse").exists() {
        Err("no /dev/fuse for lxcfs".into())
    } else {
        Ok(())
    };
    facility("peers (lxcfs, earlyoom, nohang)", check) && zram_facility()
}
