//! Every actuator's --dry-run says what it would do and changes nothing.

mod common;
use common::*;
use memorch_linux::{sandbox::Sandbox, testkit};

#[test]
fn machine_wide_dry_runs_change_nothing() {
    if !testkit::zram_facility() || !testkit::ksm_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    let read = |p: &str| std::fs::read_to_string(p).unwrap();
    let (swaps, before) =
        (testkit::Leftovers::now(), (read("/sys/block/zram0/disksize"), read("/sys/kernel/mm/ksm/pages_to_scan")));
    let out = ok(&["zram", "setup", "--size", "64", "--algorithm", "lz4", "--dry-run"]);
    assert!(out.starts_with("would set up zram") && out.contains("lz4"), "{out}");
    assert!(fails(&["zram", "setup", "--size", "64", "--algorithm", "zpaq", "--dry-run"]).contains("not offered"));
    let dir = std::env::temp_dir().join(testkit::unique_name("memorch-dry-swap"));
    let out = ok(&["swapfile", "add", "--size", "16", "--dir", dir.to_str().unwrap(), "--dry-run"]);
    assert!(out.contains("would add swap file") && out.contains("memorch-swap-0.swap"), "{out}");
    assert!(!dir.exists(), "a dry run makes no directory");
    let out = ok(&["ksm", "tune", "--pages-to-scan", "777", "--dry-run"]);
    assert!(out.contains("would set pages_to_scan") && out.contains("→ 777"), "{out}");
    assert!(fails(&["ksm", "tune", "--run", "9", "--dry-run"]).contains("ksm run 9"));
    assert_eq!(testkit::Leftovers::now().new_swap_since(&swaps), Vec::<String>::new());
    assert_eq!((read("/sys/block/zram0/disksize"), read("/sys/kernel/mm/ksm/pages_to_scan")), before);
}

#[test]
fn freeze_dry_run_checks_and_changes_nothing() {
    if !testkit::cgroup_v2_facility() {
        return;
    }
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-dry-freeze"), Some(64 * MIB)).unwrap();
    start_app(&mut sb, &["--anon-mb", "4"]);
    let out = ok(&["freeze", &sb.path, "--dry-run"]);
    assert!(out.contains("would freeze"), "{out}");
    let events = std::fs::read_to_string(sb.v2.as_ref().unwrap().join("cgroup.events")).unwrap();
    assert!(events.contains("frozen 0"), "{events}");
    assert!(fails(&["freeze", "/", "--dry-run"]).contains("root cgroup"));
}
