//! For tests only: whether the kernel's facilities a test needs are here (run, skip with a
//! printed reason, or, under `MEMORCH_REQUIRE_KERNEL=1` as CI sets it, fail), and the
//! whole-run lock with recovery first. What production code needs of the same kind lives in
//! its own modules (wait.rs, unique.rs, which.rs, lock.rs, recovery.rs).

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

// Re-exported for the tests, which use them everywhere.
pub use crate::unique::unique_name;
pub use crate::wait::wait_for;

/// The whole-run lock ([`crate::lock::WHOLE_RUN_LOCK`]), taken for a test's whole run, with
/// what dead processes left undone first.
pub fn machine_test_lock() -> crate::lock::FileLock {
    let lock = crate::lock::FileLock::acquire(crate::lock::WHOLE_RUN_LOCK).expect("take the whole-run lock");
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

/// Anonymous folios of `size_kb` (multi-size THP, Linux 6.8+; folios.rs).
pub fn folio_facility(size_kb: u32) -> bool {
    let root = crate::SysRoot::live();
    let check = crate::folios::policy(&root, size_kb).map(|_| ()).map_err(|e| e.to_string());
    facility(&format!("anonymous folios of {size_kb} kB"), check) && sandbox_facility()
}

/// Per-group PSI and freezing: the v2 hierarchy.
pub fn cgroup_v2_facility() -> bool {
    let ok = crate::cgroup::mounts(&crate::SysRoot::live()).map(|ms| ms.iter().any(|m| m.is_v2())).unwrap_or(false);
    facility("cgroup v2", if ok { Ok(()) } else { Err("no cgroup2 mount".into()) }) && sandbox_facility()
}

/// The device view for peers: lxcfs and FUSE, and the peers themselves (Debian's lxcfs,
/// earlyoom and nohang, which scripts/setup installs).
pub fn peers_facility() -> bool {
    let missing: Vec<&str> = ["lxcfs", "earlyoom", "nohang"].into_iter().filter(|p| crate::which::on_path(p).is_none()).collect();
    let check = if !missing.is_empty() {
        Err(format!("{} not installed (sudo ./scripts/setup installs them)", missing.join(", ")))
    } else if !std::path::Path::new("/dev/fuse").exists() {
        Err("no /dev/fuse for lxcfs".into())
    } else {
        Ok(())
    };
    facility("peers (lxcfs, earlyoom, nohang)", check) && zram_facility()
}

/// What a test or bench could leave on the machine: active swap (by device or file name),
/// cgroups below this process's own, memorch's lxcfs instances. Tests compare what is *new*
/// after with before, never the whole state: the kernel is shared, and swap that another
/// process (another session, CI on the same host) turns on or off meanwhile is not theirs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leftovers(pub std::collections::BTreeSet<String>);

impl Leftovers {
    pub fn now() -> Leftovers {
        let mut set = std::collections::BTreeSet::new();
        let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
        // Name and size: a device another process let go of and a test's bench then took is new.
        set.extend(swaps.lines().skip(1).map(|l| l.split_whitespace().take(3).collect::<Vec<_>>()).filter(|f| f.len() == 3).map(|f| format!("swap {} {} KiB", f[0], f[2])));
        set.extend(crate::sandbox::child_groups().into_iter().map(|g| format!("cgroup {g}")));
        let lxcfs = std::fs::read_dir(crate::lxcfs::LXCFS_DIR).into_iter().flatten().flatten();
        set.extend(lxcfs.map(|e| format!("lxcfs {}", e.file_name().to_string_lossy())));
        Leftovers(set)
    }

    /// What is here now and was not in `before`.
    pub fn new_since(&self, before: &Leftovers) -> Vec<String> {
        self.0.difference(&before.0).cloned().collect()
    }

    /// The swap that is on now and was not in `before`.
    pub fn new_swap_since(&self, before: &Leftovers) -> Vec<String> {
        self.new_since(before).into_iter().filter(|s| s.starts_with("swap ")).collect()
    }
}

/// A directory under the temporary directory, removed with what is in it on drop, also when
/// the test fails (a panicking test once left its libraries in a /tmp that CI shares).
#[derive(Debug)]
pub struct TempDir(pub std::path::PathBuf);

impl TempDir {
    pub fn new(prefix: &str) -> TempDir {
        let d = std::env::temp_dir().join(unique_name(prefix));
        std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("create {}: {e}", d.display()));
        TempDir(d)
    }
}

impl std::ops::Deref for TempDir {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
