//! A process that holds memorch's guards (zram, a swap file, KSM settings) is killed with
//! SIGKILL and left a zombie: its guards never run. The next start's recovery must put the
//! machine back anyway, and say so.

use memorch_linux::ksm::{KsmGuard, KsmSettings};
use memorch_linux::swapfile::SwapFileGuard;
use memorch_linux::zram::ZramGuard;
use memorch_linux::{recovery, testkit, SysRoot};
use std::time::Duration;

/// Runs only as the child the test below starts (this test binary again, with
/// MEMORCH_HOLD_GUARDS set): take the guards, say so, wait to be killed.
#[test]
fn hold_guards_until_killed() {
    let Ok(dir) = std::env::var("MEMORCH_HOLD_GUARDS") else { return };
    let root = SysRoot::live();
    let _zram = ZramGuard::setup(&root, 16 << 20, Some("lz4"), 100).expect("zram");
    let _swap = SwapFileGuard::add(&root, std::path::Path::new(&dir), 8 << 20, 5).expect("swap file");
    let _ksm = KsmGuard::tune(&root, &KsmSettings { run: Some(1), pages_to_scan: Some(4321), sleep_ms: Some(77) })
        .expect("ksm");
    println!("held");
    loop {
        std::thread::sleep(Duration::from_secs(60));
    }
}

fn ksm_settings() -> (String, String, String) {
    let k = |f: &str| std::fs::read_to_string(format!("/sys/kernel/mm/ksm/{f}")).unwrap().trim().to_string();
    (k("run"), k("pages_to_scan"), k("sleep_millisecs"))
}

#[test]
fn what_a_killed_owner_left_is_put_back_even_while_it_is_a_zombie() {
    if !testkit::zram_facility() || !testkit::ksm_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    let before = testkit::Leftovers::now();
    let ksm_before = ksm_settings();
    let dir = std::env::temp_dir().join(testkit::unique_name("memorch-held-swap"));
    let mut child = testkit::start_holder("hold_guards_until_killed", "MEMORCH_HOLD_GUARDS", &dir);
    let swaps_held = std::fs::read_to_string("/proc/swaps").unwrap();
    assert!(swaps_held.contains("zram") && swaps_held.contains("memorch-swap-"), "{swaps_held}");
    assert_eq!(ksm_settings().1, "4321");
    // SIGKILL, and no wait(): it stays a zombie, its pid still in /proc.
    child.kill().unwrap();
    let pid = child.id();
    assert!(testkit::wait_for(Duration::from_secs(10), || std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.contains(") Z "))));
    // A dry run's start: what would be put back, and nothing put back.
    let would: Vec<String> = recovery::report_all(&SysRoot::live()).into_iter().map(|r| r.unwrap()).collect();
    for what in ["would remove swap file", "would put back zram", "would put KSM back"] {
        assert!(would.iter().any(|s| s.starts_with(what)), "{what}: {would:?}");
    }
    assert_eq!(std::fs::read_to_string("/proc/swaps").unwrap(), swaps_held, "a report swaps nothing off");
    assert_eq!(ksm_settings().1, "4321", "a report puts nothing back");
    let done = recovery::recover_all(&SysRoot::live());
    let said: Vec<String> = done.iter().map(|r| r.clone().unwrap_or_else(|e| panic!("recovery failed: {e}"))).collect();
    assert!(said.iter().any(|s| s.contains("swap file")), "{said:?}");
    assert!(said.iter().any(|s| s.contains("zram")), "{said:?}");
    assert!(said.iter().any(|s| s.contains("KSM")), "{said:?}");
    assert_eq!(testkit::Leftovers::now().new_since(&before), Vec::<String>::new(), "no swap left");
    assert_eq!(ksm_settings(), ksm_before, "KSM as it was");
    assert!(!std::fs::read_dir(&dir).map(|d| d.count() > 0).unwrap_or(false), "the swap file is deleted");
    assert!(recovery::recover_all(&SysRoot::live()).is_empty(), "nothing is undone twice");
    child.wait().unwrap();
    let _ = std::fs::remove_dir_all(dir);
}
