//! `memorch sandbox`: a virtual device made, used, listed and destroyed by hand.

mod common;
use common::*;
use memorch_linux::testkit;

/// `memorch sandbox destroy NAME` on drop, also when the test fails half-way.
struct Destroy<'a>(&'a str);

impl Drop for Destroy<'_> {
    fn drop(&mut self) {
        let _ = run(&["sandbox", "destroy", self.0]);
    }
}

#[test]
fn sandbox_create_exec_list_destroy() {
    if !testkit::zram_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    let swaps = testkit::Leftovers::now();
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let other_swap = memorch_linux::parse::field_kib(&meminfo, "SwapTotal").unwrap();
    let name = testkit::unique_name("memorch-sbx");
    let out = ok(&["sandbox", "create", &name, "--ram", "128", "--zram", "64"]);
    let _destroy = Destroy(&name);
    assert!(out.contains("128.0 MiB RAM") && out.contains("zram"), "{out}");
    assert!(fails(&["sandbox", "create", &name, "--ram", "128"]).contains("exists"));
    let path = ok(&["sandbox", "list", "--path", &name]).trim().to_string();
    assert!(path.ends_with(&name));
    // exec: the command runs inside the device's groups.
    let cg = ok(&["sandbox", "exec", &name, "--", "cat", "/proc/self/cgroup"]);
    assert!(cg.lines().any(|l| l.contains(":memory:") && l.ends_with(&path)), "{cg}");
    let limit = std::fs::read_to_string(format!("/sys/fs/cgroup/memory{path}/memory.limit_in_bytes")).unwrap();
    assert!(limit.trim().parse::<u64>().unwrap() <= 128 * MIB);
    // Inside, /proc is the device's: only its own processes (its init, the shell, ls), and
    // with lxcfs its RAM as MemTotal (the balloon may have lowered it, never raised it).
    let procs = ok(&["sandbox", "exec", &name, "--", "sh", "-c", "ls /proc | grep -c '^[0-9]'"]);
    assert!(procs.trim().parse::<u32>().unwrap() <= 4, "the machine's processes are hidden: {procs}");
    if testkit::peers_facility() {
        let mi = ok(&["sandbox", "exec", &name, "--", "cat", "/proc/meminfo"]);
        let total = memorch_linux::parse::field_kib(&mi, "MemTotal").unwrap();
        assert!((32 * MIB..=128 * MIB).contains(&total), "MemTotal is the device's: {mi}");
        let swap = memorch_linux::parse::field_kib(&mi, "SwapTotal").unwrap();
        // lxcfs counts the machine's other swap in too (a daemon's in another container).
        assert_eq!(swap, 64 * MIB - 4096 + other_swap, "SwapTotal is its zram (less the swap header page)");
    }
    let st = run(&["sandbox", "exec", &name, "--", "sh", "-c", "exit 7"]);
    assert_eq!(st.status.code(), Some(7), "exec passes the command's status on");
    // Inside, the working directory is the caller's: a relative program and relative files
    // name what they name outside (joining the device's mount namespace once moved them to /).
    let here = std::env::temp_dir().join(testkit::unique_name("memorch-sbx-cwd"));
    std::fs::create_dir_all(&here).unwrap();
    std::fs::write(here.join("data.txt"), "found\n").unwrap();
    std::fs::write(here.join("prog.sh"), "#!/bin/sh\ncat data.txt\npwd\n").unwrap();
    std::fs::set_permissions(here.join("prog.sh"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = memorch().args(["sandbox", "exec", &name, "--", "./prog.sh"]).current_dir(&here).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("found\n") && text.trim_end().ends_with(here.to_str().unwrap()), "{text}");
    std::fs::remove_dir_all(here).unwrap();
    assert!(ok(&["sandbox", "list"]).contains(&name));
    assert!(!testkit::Leftovers::now().new_swap_since(&swaps).is_empty(), "its zram is swap");
    assert!(ok(&["sandbox", "destroy", &name]).contains("destroyed"));
    assert!(!std::path::Path::new(&format!("/sys/fs/cgroup/memory{path}")).exists());
    assert!(!std::path::Path::new(&format!("/sys/fs/cgroup/unified{path}")).exists());
    assert_eq!(testkit::Leftovers::now().new_swap_since(&swaps), Vec::<String>::new(), "zram removed");
    assert!(fails(&["sandbox", "destroy", &name]).contains("no sandbox"));
    assert!(!std::path::Path::new(&format!("/run/memorch/sandboxes/{name}.log")).exists(), "no log left");
    let lxcfs_left: Vec<String> =
        testkit::Leftovers::now().new_since(&swaps).into_iter().filter(|l| l.starts_with("lxcfs ")).collect();
    assert_eq!(lxcfs_left, Vec::<String>::new(), "its lxcfs stopped and its mount point removed");
}
