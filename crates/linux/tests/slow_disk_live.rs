//! The slow disk under the bench's storage swap (`memorch bench --swap-disk emmc`): a loop
//! device throttled for this process's block-I/O group holds a swap file, writes to it go no
//! faster than asked, and everything it made is gone after its guard, or after a recovery
//! when its owner was killed.

use memorch_linux::slow_disk::{SlowDisk, Speed};
use memorch_linux::swapfile::SwapFileGuard;
use memorch_linux::{recovery, testkit, SysRoot};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::Instant;

const HOLDER: &str = "MEMORCH_TEST_SLOW_DISK_HOLDER";
/// Slow enough that 8 MiB takes seconds: 2 MiB/s written.
const SLOW: Speed = Speed { read_bps: 4 << 20, write_bps: 2 << 20, read_iops: 100_000, write_iops: 100_000 };

fn mounted(at: &Path) -> bool {
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
    mounts.lines().any(|l| l.split_whitespace().nth(1) == Some(&*at.to_string_lossy()))
}

/// `bytes` written past the page cache (O_DIRECT: in this process's block-I/O group).
fn write_direct(path: &Path, bytes: usize) {
    let mut f = std::fs::OpenOptions::new().create(true).write(true).custom_flags(libc::O_DIRECT).open(path).unwrap();
    let buf = vec![7u8; (1 << 20) + 4096];
    let off = buf.as_ptr().align_offset(4096);
    for _ in 0..bytes >> 20 {
        f.write_all(&buf[off..off + (1 << 20)]).unwrap();
    }
}

#[test]
fn a_slow_disk_holds_swap_is_throttled_and_leaves_nothing() {
    if !testkit::slow_disk_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    let before = testkit::Leftovers::now();
    let dir = testkit::TempDir::new("memorch-slow-disk");
    let (image, mount) = (dir.join("disk.img"), dir.join("swap"));
    let disk = SlowDisk::create(&image, &mount, 512 << 20, SLOW).expect("a slow disk");
    let device = disk.device().to_path_buf();
    assert!(mounted(&mount), "mounted at {}", mount.display());
    let mut swap = SwapFileGuard::add(&SysRoot::live(), &mount, 16 << 20, 5).expect("a swap file on the slow disk");
    assert!(std::fs::read_to_string("/proc/swaps").unwrap().contains(&*swap.path.to_string_lossy()));
    swap.remove_now().expect("swapped off and removed");
    // 8 MiB at 2 MiB/s: at least 3 s however fast this machine's disk (a floor, not a limit).
    let t = Instant::now();
    write_direct(&mount.join("probe"), 8 << 20);
    let took = t.elapsed().as_secs_f64();
    assert!(took >= 2.5, "8 MiB written in {took:.2} s: not throttled to 2 MiB/s");
    drop(disk);
    assert!(!mounted(&mount), "unmounted");
    assert!(!image.exists(), "its file removed");
    let name = device.file_name().unwrap().to_string_lossy().into_owned();
    assert!(!Path::new(&format!("/sys/block/{name}/loop/backing_file")).exists(), "{name} detached");
    assert_eq!(testkit::Leftovers::now().new_since(&before), Vec::<String>::new());
}

/// Run by the next test as a child: a slow disk made, then killed while holding it.
#[test]
fn slow_disk_holder() {
    let Some(dir) = std::env::var_os(HOLDER) else { return };
    let dir = Path::new(&dir);
    let _disk = SlowDisk::create(&dir.join("disk.img"), &dir.join("swap"), 64 << 20, SLOW).expect("a slow disk");
    println!("held");
    std::thread::sleep(std::time::Duration::from_secs(600));
}

#[test]
fn a_killed_owners_slow_disk_is_removed_by_recovery() {
    if !testkit::slow_disk_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    let dir = testkit::TempDir::new("memorch-slow-disk-killed");
    let mut holder = testkit::start_holder("slow_disk_holder", HOLDER, &dir);
    let mount = dir.join("swap");
    assert!(mounted(&mount), "the holder's disk is mounted");
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert!(mounted(&mount), "a killed owner's guard never ran");
    let said = recovery::recover_all(&SysRoot::live());
    assert!(said.iter().any(|r| r.as_ref().is_ok_and(|s| s.contains("removed the slow disk"))), "{said:?}");
    assert!(!mounted(&mount), "unmounted by recovery");
    assert!(!dir.join("disk.img").exists(), "its file removed");
}
