//! `memorch zram` and `memorch swapfile` on the live kernel: set up, then put back exactly.

mod common;
use common::*;
use memorch_linux::testkit;
use std::path::{Path, PathBuf};

fn swaps() -> String {
    std::fs::read_to_string("/proc/swaps").unwrap()
}

fn zram_state(dev: &str) -> (String, String) {
    let r = |f: &str| std::fs::read_to_string(format!("/sys/block/{dev}/{f}")).unwrap();
    (r("disksize"), r("comp_algorithm"))
}

fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    v.sort();
    v
}

/// `memorch zram teardown` on drop, also when the test fails half-way.
struct ZramTeardown;

impl Drop for ZramTeardown {
    fn drop(&mut self) {
        let _ = run(&["zram", "teardown"]);
    }
}

#[test]
fn zram_setup_then_teardown_restores_the_device() {
    if !testkit::zram_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    let swaps_before = swaps();
    let zram0_before = zram_state("zram0");
    let out = ok(&["zram", "setup", "--size", "128", "--algorithm", "lz4", "--priority", "77"]);
    let _teardown = ZramTeardown;
    assert!(out.contains("set up as swap"), "{out}");
    let s = swaps();
    let line = s.lines().find(|l| l.starts_with("/dev/zram") && !swaps_before.contains(l)).expect("a new zram swap");
    assert!(line.trim_end().ends_with("77"), "priority 77: {line}");
    let dev = line.split_whitespace().next().unwrap().trim_start_matches("/dev/").to_string();
    assert_eq!(zram_state(&dev).0.trim(), (128u64 << 20).to_string());
    assert!(zram_state(&dev).1.contains("[lz4]"));
    let status = ok(&["zram", "status"]);
    assert!(status.contains("set up by memorch"), "{status}");
    ok(&["zram", "teardown"]);
    assert_eq!(swaps(), swaps_before);
    assert_eq!(zram_state("zram0"), zram0_before, "zram0 back as it was, algorithm included");
    // Nothing left to undo.
    assert!(ok(&["zram", "teardown"]).contains("nothing to tear down"));
}

#[test]
fn zram_setup_hot_adds_when_zram0_is_busy_and_leaves_zram0_alone() {
    if !testkit::zram_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    // Someone else's zram0: set up by hand, not by memorch.
    let zram0 = Path::new("/sys/block/zram0");
    if std::fs::read_to_string(zram0.join("disksize")).unwrap().trim() != "0" {
        eprintln!("SKIP: zram0 is already in use on this machine");
        return;
    }
    std::fs::write(zram0.join("disksize"), (64u64 << 20).to_string()).unwrap();
    struct ResetZram0;
    impl Drop for ResetZram0 {
        fn drop(&mut self) {
            std::fs::write("/sys/block/zram0/reset", "1").unwrap();
        }
    }
    let _reset = ResetZram0;
    let before = zram_state("zram0");
    let out = ok(&["zram", "setup", "--size", "64"]);
    assert!(out.contains("hot-added"), "{out}");
    let dev = out.split_whitespace().nth(1).unwrap().trim_end_matches(':').to_string();
    assert_ne!(dev, "zram0");
    assert!(Path::new("/sys/block").join(&dev).exists());
    let down = ok(&["zram", "teardown"]);
    assert!(down.contains("hot-removed"), "{down}");
    assert!(!Path::new("/sys/block").join(&dev).exists(), "{dev} was hot-removed");
    assert_eq!(zram_state("zram0"), before, "zram0 untouched");
}

#[test]
fn zram_setup_rejects_unknown_algorithms_and_changes_nothing() {
    if !testkit::zram_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    let swaps_before = swaps();
    let zram0 = zram_state("zram0");
    let err = fails(&["zram", "setup", "--size", "64", "--algorithm", "zpaq"]);
    assert!(err.contains("'zpaq' is not offered") && err.contains("lz4"), "{err}");
    assert_eq!(swaps(), swaps_before);
    assert_eq!(zram_state("zram0"), zram0);
}

#[test]
fn swapfile_add_then_remove_leaves_swaps_and_directory_as_they_were() {
    if !testkit::sandbox_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    let dir = std::env::temp_dir().join(testkit::unique_name("memorch-swapdir"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("unrelated.txt"), "keep me").unwrap();
    let (swaps_before, files_before) = (swaps(), listing(&dir));
    let d = dir.to_str().unwrap();
    let out = ok(&["swapfile", "add", "--size", "32", "--dir", d, "--priority", "5"]);
    let path = out.split_whitespace().nth(2).unwrap().to_string();
    assert!(swaps().contains(&path), "{path} is active swap");
    let list = json(&["swapfile", "list", "--dir", d, "--json"]);
    let entry = list.as_array().unwrap().iter().find(|f| f["path"] == path.as_str()).expect("listed");
    assert_eq!(entry["priority"], 5);
    assert_eq!(entry["size_bytes"].as_u64().unwrap(), (32 << 20) - 4096, "the header page is not swap");
    // Idle removal removes it: nothing is swapped to it.
    let out = ok(&["swapfile", "remove", "--idle", "--dir", d]);
    assert!(out.contains(&path), "{out}");
    assert_eq!(swaps(), swaps_before);
    assert_eq!(listing(&dir), files_before);
    // Files memorch did not make are refused.
    let err = fails(&["swapfile", "remove", dir.join("unrelated.txt").to_str().unwrap()]);
    assert!(err.contains("was not made by memorch"), "{err}");
    assert!(dir.join("unrelated.txt").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--json` of a command that fails part-way still lists what it had done.
#[test]
fn a_removal_that_fails_part_way_still_says_in_json_what_it_removed() {
    let dir = testkit::TempDir::new("memorch-swapdir-json");
    let d = dir.0.to_str().unwrap();
    std::fs::write(dir.0.join("memorch-swap-0.swap"), "left over").unwrap();
    // Named as memorch's, but a directory: its removal fails, after the first file's.
    std::fs::create_dir_all(dir.0.join("memorch-swap-1.swap").join("inside")).unwrap();
    let out = run(&["swapfile", "remove", "--all", "--json", "--dir", d]);
    assert_eq!(out.status.code(), Some(1), "the second removal fails");
    let said: serde_json::Value = serde_json::from_slice(&out.stdout).expect("what was done, as JSON");
    let removed: Vec<&str> = said.as_array().unwrap().iter().filter_map(|r| r["removed"].as_str()).collect();
    assert_eq!(removed, [dir.0.join("memorch-swap-0.swap").to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("memorch-swap-1.swap"), "the error names the file");
}

/// A small tmpfs mounted for the test, unmounted on drop.
struct SmallFs(PathBuf);

impl SmallFs {
    fn mount(mib: u64) -> SmallFs {
        let dir = std::env::temp_dir().join(testkit::unique_name("memorch-smallfs"));
        std::fs::create_dir_all(&dir).unwrap();
        let c = |s: &str| std::ffi::CString::new(s).unwrap();
        let (src, target, fstype, opts) =
            (c("memorch-test"), c(dir.to_str().unwrap()), c("tmpfs"), c(&format!("size={mib}m")));
        // SAFETY: mounting a tmpfs on a directory we just made.
        let r = unsafe { libc::mount(src.as_ptr(), target.as_ptr(), fstype.as_ptr(), 0, opts.as_ptr().cast()) };
        assert_eq!(r, 0, "mount tmpfs: {}", std::io::Error::last_os_error());
        SmallFs(dir)
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let c = std::ffi::CString::new(self.0.to_str().unwrap()).unwrap();
        unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) };
        let _ = std::fs::remove_dir(&self.0);
    }
}

#[test]
fn swapfile_on_a_full_disk_errors_clearly_and_leaves_nothing() {
    if !testkit::sandbox_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    let fs = SmallFs::mount(8);
    let swaps_before = swaps();
    let err = fails(&["swapfile", "add", "--size", "64", "--dir", fs.0.to_str().unwrap()]);
    assert!(err.contains("no space on") && err.contains("64 MiB") && err.contains("--size"), "{err}");
    assert!(listing(&fs.0).is_empty(), "left behind: {:?}", listing(&fs.0));
    assert_eq!(swaps(), swaps_before);
}
