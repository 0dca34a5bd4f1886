//! A memorch that dies with a limited group's pages on its swap file: what starts next must
//! not force them back into the full group (the kernel would OOM-kill its apps), but leave
//! the file on, and a daemon takes it over and removes it once the pages are gone.

mod common;
use common::*;
use memorch_linux::swapfile::SwapFileGuard;
use memorch_linux::{recovery, sandbox::Sandbox, testkit, SysRoot};
use std::time::Duration;

/// Runs only as the child the test below starts (this test binary again, with
/// MEMORCH_HOLD_SWAP_FILE set): add a swap file as a daemon does, say so, wait to be killed.
#[test]
fn hold_a_swap_file_until_killed() {
    let Ok(dir) = std::env::var("MEMORCH_HOLD_SWAP_FILE") else { return };
    let _swap = SwapFileGuard::add(&SysRoot::live(), std::path::Path::new(&dir), 256 * MIB, 5).expect("swap file");
    println!("held");
    loop {
        std::thread::sleep(Duration::from_secs(60));
    }
}

/// The group's bytes on swap and the OOM kills in it (v1 or v2).
fn swapped_and_killed(path: &str) -> (u64, u64) {
    let root = SysRoot::live();
    let dirs = memorch_linux::cgroup::locate(&root, path).unwrap();
    let (mem, counters) = memorch_linux::cgroup::read_memory(&dirs, u64::MAX).unwrap();
    (mem.swap_used_bytes, counters.oom_kills.expect("the group counts OOM kills"))
}

/// The child that holds the swap file; killed on drop if the test fails first, and what it
/// left put back.
struct Holder(std::process::Child);

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
        testkit::recover_stale();
    }
}

fn held_swap_file(dir: &std::path::Path) -> Holder {
    Holder(testkit::start_holder("hold_a_swap_file_until_killed", "MEMORCH_HOLD_SWAP_FILE", dir))
}

fn swap_file_on(dir: &std::path::Path) -> bool {
    std::fs::read_to_string("/proc/swaps").unwrap().contains(&*dir.to_string_lossy())
}

#[test]
fn a_restart_after_a_crash_keeps_a_full_groups_pages_on_swap_and_takes_them_over() {
    if !testkit::sandbox_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    if !testkit::no_foreign_swap() {
        return;
    }
    let before = testkit::Leftovers::now();
    let dir = testkit::TempDir::new("memorch-crashed-swap");
    let mut holder = held_swap_file(&dir.0);
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-restart"), Some(96 * MIB)).unwrap();
    for seed in ["1", "2"] {
        start_app(&mut sb, &["--anon-mb", "64", "--content", "text", "--seed", seed]);
    }
    let swapped = testkit::wait_for(Duration::from_secs(20), || swapped_and_killed(&sb.path).0 >= 24 * MIB);
    assert!(swapped, "the group's pages went to the swap file");
    // SIGKILL: its guard never runs, the file stays on with the group's pages.
    holder.0.kill().unwrap();
    holder.0.wait().unwrap();
    let root = SysRoot::live();
    let would = recovery::report_all(&root);
    assert!(
        would.iter().any(|r| r.as_ref().is_err_and(|e| e.contains("would stay on") && e.contains(&sb.path))),
        "a dry run says the file would stay on, and whose pages keep it: {would:?}"
    );
    let done = recovery::recover_all(&root);
    assert!(done.iter().any(|r| r.as_ref().is_err_and(|e| e.contains("stays on"))), "{done:?}");
    assert!(swap_file_on(&dir.0), "the file is still on");
    assert_eq!(swapped_and_killed(&sb.path).1, 0, "no app of the group was killed");
    assert_eq!(sb.pids().unwrap().len(), 2, "both apps run");
    // A daemon that starts takes it over; stopped while the pages still do not fit, it leaves
    // it on again for the next start.
    let cfg = dir.0.join("memorch.toml");
    std::fs::write(&cfg, "[manage]\nzram = false\nksm = false\nswap_files = false\n").unwrap();
    let domain = format!("cgroup:{}", sb.path);
    let args = ["--config", cfg.to_str().unwrap(), "--domain", &domain, "--preset", "kernel"];
    let mut d = DaemonGuard::start(&args);
    assert!(d.log().contains("took over a swap file"), "{}", d.log());
    d.stop();
    assert!(d.log().contains("left on"), "{}", d.log());
    assert!(swap_file_on(&dir.0));
    assert_eq!(swapped_and_killed(&sb.path).1, 0, "no app of the group was killed");
    // Once the apps are gone the pages are too: the next start removes the file.
    sb.destroy().unwrap();
    let done = recovery::recover_all(&root);
    assert!(done.iter().any(|r| r.as_ref().is_ok_and(|s| s.starts_with("removed swap file"))), "{done:?}");
    assert_eq!(testkit::Leftovers::now().new_since(&before), Vec::<String>::new(), "nothing left on");
}
