//! Whether one of memorch's swap files is active is asked of the kernel, not of
//! `/proc/swaps`: in a container lxcfs makes that file up (it lists no swap), and a file taken
//! for inactive was never swapped off, so its removal failed and it stayed on the machine.

use memorch_linux::swapfile::{self, SwapFileGuard};
use memorch_linux::{swapon, testkit, SysRoot};

#[test]
fn an_active_swap_file_is_found_active_by_the_kernel_whatever_proc_swaps_says() {
    if !testkit::zram_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    let before = testkit::Leftovers::now();
    let dir = testkit::TempDir::new("memorch-swap-kernel-view");
    let mut guard = SwapFileGuard::add(&SysRoot::live(), &dir.join("swap"), 8 << 20, 5).expect("swap file");
    let path = guard.path.clone();
    // What a container sees: lxcfs's /proc/swaps, with no swap in it.
    let view = testkit::TempDir::new("memorch-lxcfs-view");
    std::fs::create_dir_all(view.join("proc")).unwrap();
    std::fs::write(view.join("proc/swaps"), "Filename\tType\tSize\tUsed\tPriority\n").unwrap();
    let seen = swapfile::list(&SysRoot::at(view.to_path_buf()), &dir.join("swap")).unwrap();
    assert!(seen.iter().all(|f| !f.active), "as the container sees it, nothing is active: {seen:?}");
    // The kernel knows better: it was on, and is off once asked.
    assert!(swapon::swapoff_if_active(&path).unwrap(), "the kernel had it on");
    assert!(!std::fs::read_to_string("/proc/swaps").unwrap().contains(&*path.to_string_lossy()));
    assert!(!swapon::swapoff_if_active(&path).unwrap(), "and now has it off");
    guard.remove_now().expect("an inactive file is deleted");
    assert!(!path.exists());
    assert_eq!(testkit::Leftovers::now().new_since(&before), Vec::<String>::new());
}
