//! For tests only: whether the kernel's facilities a test needs are here (run, skip with a printed reason, or, under
//! `MEMORCH_REQUIRE_KERNEL=1` as CI sets it, fail), and the whole-run lock with recovery first. What production code
//! needs of the same kind lives in its own modules (wait.rs, unique.rs, which.rs, lock.rs, recovery.rs).

/// Whether a kernel facility is usable. `Err(reason)` means missing: the test should return early when this gives
/// `false`; it panics instead when the facility is required.
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

/// The whole-run lock ([`crate::lock::WHOLE_RUN_LOCK`]), taken for a test's whole run, with what dead processes left
/// undone first.
pub fn machine_test_lock() -> crate::lock::FileLock {
    let lock = crate::lock::FileLock::acquire(crate::lock::WHOLE_RUN_LOCK).expect("take the whole-run lock");
    recover_stale();
    lock
}

/// Undo what killed test or bench processes left (zram set-ups, sandboxes): their guards never ran. Call with the test
/// lock held.
pub fn recover_stale() {
    for r in crate::recovery::recover_all(&crate::SysRoot::live()) {
        match r {
            Ok(done) => eprintln!("memorch: {done}"),
            Err(e) => eprintln!("memorch: could not undo: {e}"),
        }
    }
}

/// Whether no swap is active: a test that needs the daemon to set up its own zram cannot run while other swap is on
/// (the daemon rightly uses what is there), and must not turn off what it did not make. Skips with a reason (also under
/// MEMORCH_REQUIRE_KERNEL: swap is a state of the machine, not a missing facility). Call with the test lock held.
pub fn no_foreign_swap() -> bool {
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    let active: Vec<&str> = swaps.lines().skip(1).filter_map(|l| l.split_whitespace().next()).collect();
    if active.is_empty() {
        return true;
    }
    eprintln!(
        "SKIP: swap that memorch did not set up is active ({}): this test needs a machine without swap",
        active.join(", ")
    );
    false
}

/// zram (module loaded, control interface present).
pub fn zram_facility() -> bool {
    let root = crate::SysRoot::live();
    let ok = root.path("/sys/class/zram-control").exists() || !crate::zram_stats::device_names(&root).is_empty();
    facility("zram", if ok { Ok(()) } else { Err("the zram module is not loaded (modprobe zram)".into()) })
        && sandbox_facility()
}

/// KSM with per-process merging (PR_SET_MEMORY_MERGE, /proc/PID/ksm_stat).
pub fn ksm_facility() -> bool {
    let ok = std::path::Path::new(crate::ksm::KSM_DIR).is_dir() && std::path::Path::new("/proc/self/ksm_stat").exists();
    facility(
        "ksm",
        if ok { Ok(()) } else { Err("no /sys/kernel/mm/ksm or /proc/self/ksm_stat (CONFIG_KSM, Linux 6.4+)".into()) },
    ) && sandbox_facility()
}

/// A slow disk (slow_disk.rs): loop devices, util-linux's losetup and e2fsprogs' mkfs.ext4.
pub fn slow_disk_facility() -> bool {
    let check =
        programs_and_node(&["losetup", "mkfs.ext4"], "util-linux, e2fsprogs", "/dev/loop-control", "modprobe loop");
    facility("slow disk (loop devices)", check) && sandbox_facility()
}

/// Per-group PSI and freezing: the v2 hierarchy.
pub fn cgroup_v2_facility() -> bool {
    let ok = crate::cgroup::mounts(&crate::SysRoot::live()).map(|ms| ms.iter().any(|m| m.is_v2())).unwrap_or(false);
    facility("cgroup v2", if ok { Ok(()) } else { Err("no cgroup2 mount".into()) }) && sandbox_facility()
}

/// The device view for peers: lxcfs and FUSE, and the peers themselves (Debian's lxcfs, earlyoom and nohang, which
/// scripts/setup installs).
pub fn peers_facility() -> bool {
    let check = programs_and_node(
        &["lxcfs", "earlyoom", "nohang"],
        "sudo ./scripts/setup installs them",
        "/dev/fuse",
        "lxcfs needs FUSE",
    );
    facility("peers (lxcfs, earlyoom, nohang)", check) && zram_facility()
}

/// The programs on PATH and the device node there, or what is missing and how to get it.
fn programs_and_node(programs: &[&str], install: &str, node: &str, node_hint: &str) -> Result<(), String> {
    let missing: Vec<&str> = programs.iter().copied().filter(|p| crate::which::on_path(p).is_none()).collect();
    if !missing.is_empty() {
        Err(format!("{} not installed ({install})", missing.join(", ")))
    } else if !std::path::Path::new(node).exists() {
        Err(format!("no {node} ({node_hint})"))
    } else {
        Ok(())
    }
}

/// Start this test binary again running only `test`, with `var` set to `value` (a child that takes guards, prints
/// `held` and waits to be killed), and wait for that line.
pub fn start_holder(test: &str, var: &str, value: &std::path::Path) -> std::process::Child {
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    let mut child = Command::new(std::env::current_exe().expect("the test binary"))
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(var, value)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the test binary starts again");
    let out = std::io::BufReader::new(child.stdout.take().expect("piped"));
    assert!(out.lines().map_while(Result::ok).any(|l| l.contains("held")), "{test} took its guards");
    child
}

/// What a test or bench could leave on the machine: active swap (by device or file name), cgroups below this process's
/// own, memorch's lxcfs instances. Tests compare what is *new* after with before: the kernel is shared, and swap that
/// another process turns on or off meanwhile is not theirs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leftovers(pub std::collections::BTreeSet<String>);

impl Leftovers {
    pub fn now() -> Leftovers {
        let mut set = std::collections::BTreeSet::new();
        let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
        // Name and size: a device another process let go of and a test's bench then took is new.
        set.extend(
            swaps
                .lines()
                .skip(1)
                .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>())
                .filter(|f| f.len() == 3)
                .map(|f| format!("swap {} {} KiB", f[0], f[2])),
        );
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

/// A directory under the temporary directory, removed with what is in it on drop, also when the test fails (a panicking
/// test once left its libraries in a /tmp that CI shares).
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

/// A process a test started at a pid it chose ([`spawn_at_pid`]), its stdout a pipe: killed and reaped on drop, also
/// when the test fails.
#[derive(Debug)]
pub struct AtPid {
    pub pid: u32,
    pub stdout: std::fs::File,
}

impl Drop for AtPid {
    fn drop(&mut self) {
        // SAFETY: our own child, not yet reaped (only this drop reaps it): the pid is still its.
        unsafe {
            libc::kill(self.pid as i32, libc::SIGKILL);
            libc::waitpid(self.pid as i32, std::ptr::null_mut(), 0);
        }
    }
}

/// `struct clone_args` of clone3(2), up to `set_tid` (`CLONE_ARGS_SIZE_VER1`).
#[repr(C)]
#[derive(Default)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
    set_tid: u64,
    set_tid_size: u64,
}

/// Start `argv` (its program an absolute path) as a child with pid `pid`, as the kernel would if it reused that pid:
/// clone3(2) with `set_tid` (Linux 5.5; root in the initial pid namespace). `pid` must be free: its last process exited
/// and reaped. No test can otherwise make the kernel reuse a pid when it needs to. `Err` says why not (the kernel,
/// privileges, or the pid taken meanwhile).
pub fn spawn_at_pid(pid: u32, argv: &[&str]) -> Result<AtPid, String> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStringExt;
    use std::os::unix::io::FromRawFd;
    let cstring = |b: Vec<u8>| CString::new(b).map_err(|e| format!("argument or environment with a NUL byte: {e}"));
    let args: Vec<CString> = argv.iter().map(|a| cstring(a.as_bytes().to_vec())).collect::<Result<_, _>>()?;
    let env: Vec<CString> = std::env::vars_os()
        .map(|(k, v)| {
            let mut kv = k.into_vec();
            kv.push(b'=');
            kv.extend(v.into_vec());
            cstring(kv)
        })
        .collect::<Result<_, _>>()?;
    let Some(program) = args.first() else { return Err("no program to start".into()) };
    // Built before the clone: the child may only call what is async-signal-safe.
    let argv_ptrs: Vec<*const libc::c_char> =
        args.iter().map(|a| a.as_ptr()).chain(std::iter::once(std::ptr::null())).collect();
    let env_ptrs: Vec<*const libc::c_char> =
        env.iter().map(|e| e.as_ptr()).chain(std::iter::once(std::ptr::null())).collect();
    let mut fds = [0; 2];
    // SAFETY: fds has room for the two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(format!("pipe2: {}", std::io::Error::last_os_error()));
    }
    let tid = [pid as libc::pid_t];
    let ca = CloneArgs {
        exit_signal: libc::SIGCHLD as u64,
        set_tid: tid.as_ptr() as u64,
        set_tid_size: 1,
        ..Default::default()
    };
    // SAFETY: like fork(2) (no CLONE_VM, no stack): the child only duplicates the pipe onto its stdout and execs, both
    // async-signal-safe, with memory prepared before the clone.
    let r = unsafe { libc::syscall(libc::SYS_clone3, &ca as *const CloneArgs, std::mem::size_of::<CloneArgs>()) };
    if r == 0 {
        unsafe {
            libc::dup2(fds[1], 1);
            libc::execve(program.as_ptr(), argv_ptrs.as_ptr(), env_ptrs.as_ptr());
            libc::_exit(127);
        }
    }
    let err = std::io::Error::last_os_error();
    // SAFETY: both descriptors are ours; the read end is handed to the File, once.
    unsafe { libc::close(fds[1]) };
    let stdout = unsafe { std::fs::File::from_raw_fd(fds[0]) };
    if r < 0 {
        drop(stdout);
        return Err(format!("clone3 with set_tid {pid}: {err}"));
    }
    Ok(AtPid { pid: r as u32, stdout })
}
