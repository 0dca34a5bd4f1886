//! Two memorch daemons, each in a container of its own (a device: its own PID and mount
//! namespace, lxcfs's `/proc/meminfo` and `/proc/swaps` over its memory group), each with its
//! swap: neither ever undoes the other's, nor does anything on the host, until its owner is
//! shown dead; and a dead one's swap never comes off into its full group.

mod common;
use common::*;
use memorch_linux::{cgroup, testkit, SysRoot};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

/// A device made with `memorch sandbox create`, destroyed on drop.
struct Device {
    name: String,
    path: String,
}

impl Device {
    fn create(ram_mib: u32) -> Device {
        let name = testkit::unique_name("memorch-ct");
        ok(&["sandbox", "create", &name, "--ram", &ram_mib.to_string()]);
        let path = ok(&["sandbox", "list", "--path", &name]).trim().to_string();
        Device { name, path }
    }

    /// `memorch sandbox exec NAME -- ARGS`, with its output to `log`.
    fn exec(&self, args: &[&str], log: &Path) -> Child {
        let log = std::fs::File::create(log).unwrap();
        memorch()
            .args(["sandbox", "exec", &self.name, "--", env!("CARGO_BIN_EXE_memorch")])
            .args(args)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap()
    }

    /// Host pids of the device's processes named `comm` whose first argument is `arg`.
    fn pids_named(&self, comm: &str, arg: &str) -> Vec<u32> {
        let dirs = cgroup::locate(&SysRoot::live(), &self.path).unwrap();
        let pids = cgroup::pids(&dirs).unwrap_or_default();
        let has_arg = |p: &u32| {
            let argv = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
            argv.split(|b| *b == 0).nth(1) == Some(arg.as_bytes())
        };
        let named = |p: &u32| std::fs::read_to_string(format!("/proc/{p}/comm")).is_ok_and(|c| c.trim() == comm);
        pids.into_iter().filter(|p| named(p) && has_arg(p)).collect()
    }

    fn oom_kills(&self) -> u64 {
        let dirs = cgroup::locate(&SysRoot::live(), &self.path).unwrap();
        cgroup::read_memory(&dirs, u64::MAX).unwrap().1.oom_kills.expect("the group counts OOM kills")
    }

    fn swapped(&self) -> u64 {
        let dirs = cgroup::locate(&SysRoot::live(), &self.path).unwrap();
        cgroup::read_memory(&dirs, u64::MAX).unwrap().0.swap_used_bytes
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        let _ = memorch().args(["sandbox", "destroy", &self.name]).output();
    }
}

/// A daemon inside a device: the `sandbox exec` that waits for it, its host pid, its files.
struct Contained {
    exec: Child,
    pid: u32,
    dir: PathBuf,
}

impl Contained {
    fn start(dev: &Device, preset: &str, dir: &Path) -> Contained {
        std::fs::create_dir_all(dir).unwrap();
        let cfg = dir.join("memorch.toml");
        let swap_dir = dir.join("swap");
        std::fs::write(&cfg, format!("[loop]\ntick_ms = 200\n[manage]\nswap_file_dir = \"{}\"\n", swap_dir.display()))
            .unwrap();
        let domain = format!("cgroup:{}", dev.path);
        let (socket, state) = (dir.join("ctl.sock"), dir.join("state"));
        let args = [
            "run",
            "--domain",
            &domain,
            "--preset",
            preset,
            "--config",
            cfg.to_str().unwrap(),
            "--socket",
            socket.to_str().unwrap(),
            "--state-dir",
            state.to_str().unwrap(),
        ];
        let mut exec = dev.exec(&args, &dir.join("daemon.log"));
        let up = testkit::wait_for(Duration::from_secs(20), || {
            std::os::unix::net::UnixStream::connect(&socket).is_ok() || exec.try_wait().unwrap().is_some()
        });
        let log = std::fs::read_to_string(dir.join("daemon.log")).unwrap_or_default();
        assert!(up && exec.try_wait().unwrap().is_none(), "the daemon in {} did not come up: {log}", dev.name);
        let pids = dev.pids_named("memorchd", "--domain");
        assert_eq!(pids.len(), 1, "one daemon in {}: {pids:?}", dev.name);
        Contained { exec, pid: pids[0], dir: dir.to_path_buf() }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("daemon.log")).unwrap_or_default()
    }

    fn signal(&mut self, sig: i32) {
        // SAFETY: signalling the daemon this test started, by its host pid.
        unsafe { libc::kill(self.pid as i32, sig) };
        let _ = self.exec.wait();
    }

    /// Its swap files on now, by the directory it makes them in.
    fn swap_files_on(&self) -> Vec<String> {
        let swaps = std::fs::read_to_string("/proc/swaps").unwrap();
        let dir = self.dir.join("swap");
        swaps.lines().filter(|l| l.starts_with(&*dir.to_string_lossy())).map(String::from).collect()
    }
}

impl Drop for Contained {
    fn drop(&mut self) {
        if self.exec.try_wait().ok().flatten().is_none() {
            self.signal(libc::SIGTERM);
        }
    }
}

/// The machine-wide state a daemon could change: swap devices (name and size: what they hold
/// moves with the apps), records, KSM settings.
fn machine_state() -> String {
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap();
    let mut s: String =
        swaps.lines().map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" ") + "\n").collect();
    for kind in ["swapfile", "ksm"] {
        let dir = Path::new(memorch_linux::records::RECORD_ROOT).join(kind);
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        s += &format!("{kind}: {names:?}\n");
    }
    for f in ["run", "pages_to_scan", "sleep_millisecs"] {
        s += &std::fs::read_to_string(format!("/sys/kernel/mm/ksm/{f}")).unwrap_or_default();
    }
    s
}

fn zram_on() -> Vec<String> {
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap();
    swaps.lines().filter(|l| l.starts_with("/dev/zram")).map(String::from).collect()
}

/// What a daemon left on when the test fails half-way is put back once the devices are gone.
struct RecoverAtEnd;

impl Drop for RecoverAtEnd {
    fn drop(&mut self) {
        testkit::recover_stale();
    }
}

#[test]
fn daemons_in_containers_undo_only_their_own_and_a_dead_ones_swap_never_ooms_its_group() {
    if !testkit::peers_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    if !testkit::no_foreign_swap() {
        return;
    }
    let before = testkit::Leftovers::now();
    let _recover = RecoverAtEnd;
    let tmp = testkit::TempDir::new("memorch-containers");
    // B first: with no swap on yet it sets up its zram (and an MMC swap file); then A, a file.
    let b_dev = Device::create(256);
    let mut b = Contained::start(&b_dev, "meego-zram-mmc", &tmp.0.join("b"));
    assert_eq!(zram_on().len(), 1, "B set up its zram: {}", b.log());
    assert_eq!(b.swap_files_on().len(), 1, "B added its swap file: {}", b.log());
    let a_dev = Device::create(192);
    let mut a = Contained::start(&a_dev, "meego-mmc", &tmp.0.join("a"));
    assert_eq!(a.swap_files_on().len(), 1, "A added its swap file: {}", a.log());
    // A's apps fill its group past its RAM: some of their pages go to swap.
    let app_logs: Vec<PathBuf> = (0..2).map(|i| tmp.0.join(format!("app{i}.log"))).collect();
    let _apps: Vec<Child> = app_logs
        .iter()
        .enumerate()
        .map(|(i, log)| a_dev.exec(&["app", "--anon-mb", "100", "--content", "text", "--seed", &i.to_string()], log))
        .collect();
    let ready = |log: &PathBuf| std::fs::read_to_string(log).is_ok_and(|t| t.contains("ready "));
    assert!(testkit::wait_for(Duration::from_secs(30), || app_logs.iter().all(ready)), "A's apps started");
    assert!(a_dev.swapped() >= 4 * MIB, "A's group swapped: {} bytes", a_dev.swapped());
    let a_apps = a_dev.pids_named("memorch", "app");
    assert_eq!(a_apps.len(), 2, "A's apps run inside: {a_apps:?}");

    // A dry run on the host changes nothing, and finds nothing of theirs to undo.
    let machine = machine_state();
    let host = Device::create(128);
    let domain = format!("cgroup:{}", host.path);
    let local = tmp.0.join("host.toml");
    std::fs::write(&local, "[manage]\nzram = false\nksm = false\nswap_files = false\n").unwrap();
    let host_args = ["--config", local.to_str().unwrap(), "--domain", &domain, "--preset", "kernel"];
    let mut dry = DaemonGuard::start(&[&host_args[..], &["--dry-run"]].concat());
    dry.stop();
    assert_eq!(machine_state(), machine, "a dry run on the host changed the machine: {}", dry.log());
    assert!(!dry.log().contains("would"), "nothing of live daemons is up for recovery: {}", dry.log());

    // SIGTERM of B puts back all of its changes and none of A's.
    b.signal(libc::SIGTERM);
    assert!(b.log().contains("everything memorch changed is put back"), "{}", b.log());
    assert_eq!((zram_on(), b.swap_files_on()), (Vec::new(), Vec::new()), "B's zram and file are gone");
    assert_eq!(a.swap_files_on().len(), 1, "A's file stays on");

    // SIGKILL of A, and a third start: it recovers A's swap without an OOM kill in A's group.
    a.signal(libc::SIGKILL);
    let mut third = DaemonGuard::start(&host_args);
    let said = third.log();
    assert!(said.contains(&*a.dir.join("swap").to_string_lossy()), "the third start recovered A's file: {said}");
    assert_eq!(a_dev.oom_kills(), 0, "no OOM kill in A's group: {said}");
    assert_eq!(a_dev.pids_named("memorch", "app"), a_apps, "A's apps run on");
    third.stop();
    drop((a_dev, b_dev, host));
    testkit::recover_stale();
    assert_eq!(a.swap_files_on(), Vec::<String>::new(), "A's file is gone once its apps are");
    assert_eq!(testkit::Leftovers::now().new_since(&before), Vec::<String>::new(), "nothing left on");
}
