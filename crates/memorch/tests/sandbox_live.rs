//! `memorch sandbox`: a virtual device made, used, listed and destroyed by hand.

mod common;
use common::*;
use memorch_linux::testkit;

#[test]
fn sandbox_create_exec_list_destroy() {
    if !testkit::zram_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap();
    let name = testkit::unique_name("memorch-sbx");
    let out = ok(&["sandbox", "create", &name, "--ram", "128", "--zram", "64"]);
    assert!(out.contains("128.0 MiB RAM") && out.contains("zram"), "{out}");
    assert!(fails(&["sandbox", "create", &name, "--ram", "128"]).contains("exists"));
    let path = ok(&["sandbox", "list", "--path", &name]).trim().to_string();
    assert!(path.ends_with(&name));
    // exec: the command runs inside the device's groups.
    let cg = ok(&["sandbox", "exec", &name, "--", "cat", "/proc/self/cgroup"]);
    assert!(cg.lines().any(|l| l.contains(":memory:") && l.ends_with(&path)), "{cg}");
    let limit = std::fs::read_to_string(format!("/sys/fs/cgroup/memory{path}/memory.limit_in_bytes")).unwrap();
    assert!(limit.trim().parse::<u64>().unwrap() <= 128 * MIB);
    assert!(ok(&["sandbox", "list"]).contains(&name));
    assert_ne!(std::fs::read_to_string("/proc/swaps").unwrap(), swaps, "its zram is swap");
    assert!(ok(&["sandbox", "destroy", &name]).contains("destroyed"));
    assert!(!std::path::Path::new(&format!("/sys/fs/cgroup/memory{path}")).exists());
    assert!(!std::path::Path::new(&format!("/sys/fs/cgroup/unified{path}")).exists());
    assert_eq!(std::fs::read_to_string("/proc/swaps").unwrap(), swaps, "zram removed");
    assert!(fails(&["sandbox", "destroy", &name]).contains("no sandbox"));
    assert!(!std::path::Path::new(&format!("/run/memorch/sandboxes/{name}.log")).exists(), "no log left");
}
