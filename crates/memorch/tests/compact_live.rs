//! `memorch compact` on the live kernel: anonymous pages into real zram, file pages dropped,
//! small steps bounded, refusals.

mod common;
use common::*;
use memorch_linux::zram::ZramGuard;
use memorch_linux::{sandbox::Sandbox, testkit, SysRoot};

fn zram_swap() -> ZramGuard {
    ZramGuard::setup(&SysRoot::live(), 1 << 30, Some("lz4"), 100).expect("zram swap for the test")
}

/// What `zram` holds: its pages' own size (`mm_stat`'s first column), bytes.
fn zram_orig(zram: &ZramGuard) -> u64 {
    let stat = std::fs::read_to_string(format!("/sys/block/{}/mm_stat", zram.setup.device)).unwrap();
    stat.split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn anon_compaction_puts_nearly_all_of_a_text_heap_into_zram() {
    if !testkit::zram_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    let _zram = zram_swap();
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-compact-anon"), Some(1 << 30)).unwrap();
    let pid = start_app(&mut sb, &["--anon-mb", "200", "--content", "text"]).id();
    let domain = format!("cgroup:{}", sb.path);
    let r = json(&["compact", &pid.to_string(), "--anon", "--domain", &domain, "--json"]);
    let heap = 200 * MIB;
    let swap = status_kib(pid, "VmSwap");
    assert!(swap as f64 >= 0.9 * heap as f64, "only {swap} of {heap} bytes went to zram: {r}");
    assert!(r["moved_bytes"].as_u64().unwrap() as f64 >= 0.9 * heap as f64, "{r}");
    assert_eq!(r["exited"], false);
    let orig = zram_orig(&_zram);
    assert!(orig as f64 >= 0.85 * heap as f64, "zram holds {orig} bytes");
}

#[test]
fn max_pages_moves_at_most_that_many_pages() {
    if !testkit::zram_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    let _zram = zram_swap();
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-compact-step"), Some(1 << 30)).unwrap();
    let pid = start_app(&mut sb, &["--anon-mb", "32", "--content", "text"]).id();
    let swap_before = status_kib(pid, "VmSwap");
    let anon_before = status_kib(pid, "RssAnon");
    ok(&["compact", &pid.to_string(), "--max-pages", "32"]);
    let moved_to_swap = status_kib(pid, "VmSwap") - swap_before;
    let left_rss = anon_before.saturating_sub(status_kib(pid, "RssAnon"));
    assert!(moved_to_swap <= 32 * 4096, "moved {moved_to_swap} bytes for 32 pages");
    assert!(moved_to_swap >= 4096, "a step must move resident pages, moved {moved_to_swap}");
    assert!(left_rss <= 32 * 4096, "RSS fell by {left_rss}");
    // A second step moves other pages: the step picks resident ones.
    ok(&["compact", &pid.to_string(), "--max-pages", "32"]);
    assert!(status_kib(pid, "VmSwap") - swap_before > moved_to_swap);
}

#[test]
fn file_compaction_drops_file_backed_rss() {
    if !testkit::sandbox_facility() {
        return;
    }
    let dir = testkit::TempDir::new("memorch-test");
    let file = dir.join("app-code.bin");
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-compact-file"), Some(1 << 30)).unwrap();
    let pid = start_app(&mut sb, &["--anon-mb", "4", "--file", file.to_str().unwrap(), "--file-mb", "64"]).id();
    let before = status_kib(pid, "RssFile");
    assert!(before >= 64 * MIB, "the app mapped 64 MiB of its file, RssFile {before}");
    // Dry run first: nothing moves.
    let out = ok(&["compact", &pid.to_string(), "--file", "--dry-run"]);
    assert!(out.contains("would compact"), "{out}");
    assert!(status_kib(pid, "RssFile") >= before - MIB, "a dry run changed RSS");
    ok(&["compact", &pid.to_string(), "--file"]);
    let after = status_kib(pid, "RssFile");
    assert!(after + 60 * MIB <= before, "RssFile {before} → {after}");
    drop(sb);
    drop(dir);
}

#[test]
fn refuses_processes_outside_the_domain_and_protected_ones() {
    if !testkit::sandbox_facility() {
        return;
    }
    let mut a = Sandbox::create(&testkit::unique_name("memorch-compact-a"), Some(256 * MIB)).unwrap();
    let b = Sandbox::create(&testkit::unique_name("memorch-compact-b"), Some(256 * MIB)).unwrap();
    let pid = start_app(&mut a, &["--anon-mb", "8"]).id();
    let rss = status_kib(pid, "VmRSS");
    let err = fails(&["compact", &pid.to_string(), "--domain", &format!("cgroup:{}", b.path)]);
    assert!(err.contains(&format!("refusing pid {pid}")) && err.contains("not in domain"), "{err}");
    assert!(status_kib(pid, "VmRSS") >= rss - MIB, "a refused compaction moved pages");
    let err = fails(&["compact", "1"]);
    assert!(err.contains("init"), "{err}");
    let err = fails(&["compact", &std::process::id().to_string()]);
    assert!(err.contains("ancestors"), "{err}");
    let err = fails(&["compact", "4000000"]);
    assert!(err.contains("no process 4000000"), "{err}");
}

/// `memorch readback`: a heap compressed into zram comes back into the process, mapped (its
/// RSS rises by what its swap falls), and `--max-pages` bounds it.
#[test]
fn readback_brings_a_heap_in_zram_back_into_the_process() {
    if !testkit::zram_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    let _zram = zram_swap();
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-readback"), Some(1 << 30)).unwrap();
    let pid = start_app(&mut sb, &["--anon-mb", "64", "--content", "text"]).id();
    let domain = format!("cgroup:{}", sb.path);
    ok(&["compact", &pid.to_string(), "--anon", "--domain", &domain]);
    let swapped = status_kib(pid, "VmSwap");
    assert!(swapped >= 56 * MIB, "most of the 64 MiB heap in zram: {swapped}");
    let rss = status_kib(pid, "RssAnon");
    // A bounded step: at most 1024 pages back.
    let r = json(&["readback", &pid.to_string(), "--max-pages", "1024", "--domain", &domain, "--json"]);
    let back = swapped - status_kib(pid, "VmSwap");
    assert!((512 * 4096..=1024 * 4096).contains(&back), "{back} bytes back for 1024 pages: {r}");
    // The rest, mapped in the process: its resident anonymous memory grows by what came back.
    let r = json(&["readback", &pid.to_string(), "--domain", &domain, "--json"]);
    assert!(status_kib(pid, "VmSwap") <= 4 * MIB, "swap left {}: {r}", status_kib(pid, "VmSwap"));
    assert!(status_kib(pid, "RssAnon") >= rss + 56 * MIB, "RSS {} from {rss}: {r}", status_kib(pid, "RssAnon"));
    assert_eq!(r["exited"], false);
    // Outside its domain, refused.
    let err = fails(&["readback", &pid.to_string(), "--domain", "cgroup:/nonexistent-memorch-domain"]);
    assert!(err.contains("nonexistent-memorch-domain"), "{err}");
}

/// `memorch readback` reaches the process's own copies of file pages too: a library it maps
/// privately and wrote (as a loader relocates one, or a JVM its class archive) is anonymous
/// memory that goes to swap, and reading only anonymous mappings left it there.
#[test]
fn readback_brings_back_the_written_pages_of_a_privately_mapped_file() {
    if !testkit::zram_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    let _zram = zram_swap();
    let dir = testkit::TempDir::new("memorch-readback-so");
    let so = dir.join("libcow.so");
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-readback-so"), Some(1 << 30)).unwrap();
    let pid = start_app(&mut sb, &["--anon-mb", "4", "--so", so.to_str().unwrap(), "--so-mb", "32"]).id();
    let domain = format!("cgroup:{}", sb.path);
    // The library's written pages, and only they, out to zram.
    ok(&["compact", &pid.to_string(), "--so", "--domain", &domain]);
    let swapped = status_kib(pid, "VmSwap");
    assert!(swapped >= 24 * MIB, "most of the 32 MiB library in zram: {swapped}");
    let r = json(&["readback", &pid.to_string(), "--domain", &domain, "--json"]);
    assert!(r["asked_bytes"].as_u64().unwrap() >= swapped * 9 / 10, "the library's pages in swap were found: {r}");
    assert!(status_kib(pid, "VmSwap") <= 2 * MIB, "swap left {}: {r}", status_kib(pid, "VmSwap"));
}

/// An unlikely app's squeeze to a storage file of its own (the cost model's choice):
/// the file is made to the squeeze's size one above zram in priority, and takes the pages
/// zram would have. Removing it (the engine asks once it holds little,
/// `swap.cold_drop_below`) reads what it still holds back into its app, which lives on; a
/// file not of this daemon's squeezes is left alone. A squeeze that cannot be done leaves no
/// file behind.
#[test]
fn a_squeeze_to_storage_fills_a_file_of_its_own_above_zram_whose_removal_reads_its_pages_back() {
    use memorch_core::engine::CompactScope;
    use memorch_daemon::executor::{live::Live, Actuators, Squeeze};
    use memorch_linux::{Domain, DomainSpec};
    if !testkit::zram_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    let zram = zram_swap();
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-squeeze-storage"), Some(1 << 30)).unwrap();
    let pid = spawn_app(&mut sb, &["--app-group", "--class", "cached"], &["--anon-mb", "64", "--content", "text"]).id();
    let mut child = sb.take_child(pid).expect("the app is the sandbox's child");
    let root = SysRoot::live();
    let domain = Domain::open(&root, &DomainSpec::Cgroup(sb.path.clone())).unwrap();
    let dir = testkit::TempDir::new("memorch-squeeze-storage");
    let swap_dir = dir.join("swap");
    let mut live = Live::new(root.clone(), domain, swap_dir.clone());
    let ours = |path: &str| -> Option<(u64, u64, i32)> {
        let swaps = memorch_linux::swaps::read(&root).unwrap();
        swaps.devices.into_iter().find(|d| d.path == path).map(|d| (d.size_bytes, d.used_bytes, d.priority))
    };

    let gone = Squeeze { pid: 4_000_000, app: "gone", scope: CompactScope::Anon, max_pages: Some(256) };
    let refused = live.compact_to_storage(gone);
    assert!(refused.as_ref().is_err_and(|e| e.contains("4000000")), "{refused:?}");
    assert!(
        live.swap_files().is_empty() && std::fs::read_dir(&swap_dir).map_or(true, |d| d.count() == 0),
        "no file left for a squeeze not done"
    );

    let zram_before = zram_orig(&zram);
    let asked = 32 * MIB;
    let (what, moved) = live
        .compact_to_storage(Squeeze { pid, app: "cold", scope: CompactScope::Anon, max_pages: Some(asked / 4096) })
        .expect("squeeze to storage");
    let files = live.swap_files();
    assert_eq!(files.len(), 1, "one file of its own: {what}");
    let (size, used, priority) = ours(&files[0]).unwrap_or_else(|| panic!("{} is not active swap: {what}", files[0]));
    assert_eq!(priority, zram.setup.priority + 1, "one above zram: {what}");
    assert!(size >= asked && size <= asked + 2 * MIB, "sized to the squeeze: {size}");
    assert!(moved as f64 >= 0.8 * asked as f64, "asked {asked}, moved {moved}: {what}");
    assert!(used as f64 >= 0.8 * asked as f64, "the file holds {used} of the {moved} bytes moved: {what}");
    // Most of it, not all: in one run of six here zram took 8.3 MiB of the 32 (the kernel's
    // swap allocator may finish a cluster it had begun on zram before it turns to the file).
    assert!(zram_orig(&zram) - zram_before < asked / 2, "zram took {} bytes of it", zram_orig(&zram) - zram_before);

    let foreign = live.swap_drop_cold("/nonexistent/memorch-swap-9.swap");
    assert!(
        foreign.as_ref().is_err_and(|e| e.contains("/nonexistent/memorch-swap-9.swap")) && ours(&files[0]).is_some(),
        "not ours: refused, ours stays: {foreign:?}"
    );
    let swapped = status_kib(pid, "VmSwap");
    let dropped = live.swap_drop_cold(&files[0]).expect("the file goes, its pages read back");
    assert!(dropped.contains(&files[0]), "{dropped}");
    assert!(
        ours(&files[0]).is_none() && !std::path::Path::new(&files[0]).exists(),
        "swapped off and deleted: {dropped}"
    );
    assert!(live.swap_files().is_empty());
    let back = swapped.saturating_sub(status_kib(pid, "VmSwap"));
    assert!(back as f64 >= 0.8 * used as f64, "the file held {used} bytes, {back} came back to the app: {dropped}");
    assert!(child.try_wait().unwrap().is_none(), "its app lives on");
    child.kill().unwrap();
    child.wait().unwrap();
    drop(sb);
}

/// A process not in a group of its own is squeezed with process_madvise, and the pages it
/// sends to a storage file stay in the swap cache, charged to the domain, until the kernel
/// reclaims them again (measured: 0 of 128 MiB freed in 2 s). The
/// squeeze frees them at once, as a squeeze to zram does: what it moved is memory the domain
/// has back when it returns, which is what the engine counts.
#[test]
fn a_squeeze_of_a_process_to_storage_frees_what_it_moves_at_once() {
    use memorch_core::engine::CompactScope;
    use memorch_daemon::executor::{live::Live, Actuators, Squeeze};
    use memorch_linux::{snapshot, Domain, DomainSpec};
    if !testkit::zram_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    let _zram = zram_swap();
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-squeeze-storage-freed"), Some(1 << 30)).unwrap();
    let pid = start_app(&mut sb, &["--anon-mb", "64", "--content", "text"]).id();
    let root = SysRoot::live();
    let domain = Domain::open(&root, &DomainSpec::Cgroup(sb.path.clone())).unwrap();
    let used = || snapshot::cheap(&root, &domain).unwrap().memory.used_bytes;
    let dir = testkit::TempDir::new("memorch-squeeze-storage-freed");
    let mut live =
        Live::new(root.clone(), Domain::open(&root, &DomainSpec::Cgroup(sb.path.clone())).unwrap(), dir.join("swap"));
    let asked = 32 * MIB;
    let before = used();
    let (what, moved) = live
        .compact_to_storage(Squeeze { pid, app: "plain", scope: CompactScope::Anon, max_pages: Some(asked / 4096) })
        .expect("squeeze to storage");
    let freed = before.saturating_sub(used());
    assert_eq!(live.swap_files().len(), 1, "to a file of its own: {what}");
    assert!(moved as f64 >= 0.8 * asked as f64, "asked {asked}, moved {moved}: {what}");
    assert!(
        freed as f64 >= 0.8 * moved as f64,
        "moved {moved} bytes out of the process but the domain's use fell by {freed}: {what}"
    );
    assert!(what.contains("swap cache"), "says what it freed: {what}");
    drop(sb);
    for f in live.swap_files() {
        live.swap_drop_cold(&f).ok();
    }
}

/// The groups below the sandbox's that a test makes as the system would (a systemd scope per
/// app), in every hierarchy the sandbox has; they go with the sandbox.
fn system_group(sb: &Sandbox, name: &str) -> Vec<std::path::PathBuf> {
    sb.dirs()
        .map(|d| {
            let g = d.join(name);
            std::fs::create_dir(&g).unwrap_or_else(|e| panic!("{}: {e}", g.display()));
            g
        })
        .collect()
}

/// An app the system started in a group of its own (a systemd scope, not memorch's
/// `app-PID`) is squeezed there, the kernel's LRU choosing, and the group's own limit and
/// swappiness are put back; in a group it shares with another app it is squeezed alone by
/// process_madvise. memorch does not freeze it, and neither removes nor thaws a group of
/// the system's whose name looks like its own (`app-…`), where it does its own.
#[test]
fn an_app_in_a_group_the_system_made_is_squeezed_there_and_the_group_left_as_it_was() {
    use memorch_core::engine::CompactScope;
    use memorch_daemon::executor::{live::Live, Actuators};
    use memorch_linux::{appgroup, freeze, Domain, DomainSpec};
    if !testkit::zram_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    let _zram = zram_swap();
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-system-group"), Some(1 << 30)).unwrap();
    let Some(v1) = sb.v1_memory.clone() else {
        assert!(
            std::env::var("MEMORCH_REQUIRE_KERNEL").as_deref() != Ok("1"),
            "no v1 memory hierarchy: a group's own limit and swappiness are v1 files here"
        );
        eprintln!("SKIP: no v1 memory hierarchy for the sandbox");
        return;
    };
    system_group(&sb, "chat.scope");
    let own_limit = 768 * MIB;
    std::fs::write(v1.join("chat.scope/memory.limit_in_bytes"), own_limit.to_string()).unwrap();
    std::fs::write(v1.join("chat.scope/memory.swappiness"), "30").unwrap();
    let scope = |name: &str| format!("{}/{name}", sb.path);
    let (chat_scope, shared_scope) = (scope("chat.scope"), scope("shared.scope"));
    let chat =
        spawn_app_in(&mut sb, &chat_scope, &["--class", "cached"], &["--anon-mb", "96", "--content", "text"]).id();
    system_group(&sb, "shared.scope");
    let shared: Vec<u32> = (0..2)
        .map(|_| {
            spawn_app_in(&mut sb, &shared_scope, &["--class", "cached"], &["--anon-mb", "48", "--content", "text"]).id()
        })
        .collect();
    let root = SysRoot::live();
    let domain = || Domain::open(&root, &DomainSpec::Cgroup(sb.path.clone())).unwrap();
    let dir = testkit::TempDir::new("memorch-system-group");
    let mut live = Live::new(root.clone(), domain(), dir.join("swap"));

    let asked = 32 * MIB;
    let swap_before = status_kib(chat, "VmSwap");
    let (what, moved) = live
        .compact(chat, "chat", CompactScope::Anon, Some(asked / 4096))
        .expect("squeeze of the app in its own scope");
    assert!(what.contains("squeezed") && what.contains("chat.scope"), "squeezed in the group the system made: {what}");
    let swapped = status_kib(chat, "VmSwap") - swap_before;
    assert!(
        moved as f64 >= 0.8 * asked as f64 && moved <= asked + 4 * MIB,
        "asked {asked} bytes, moved {moved}: {what}"
    );
    assert!(swapped as f64 >= 0.8 * asked as f64, "asked {asked} bytes, {swapped} went to zram: {what}");
    let read = |f: &str| std::fs::read_to_string(v1.join("chat.scope").join(f)).unwrap().trim().to_string();
    assert_eq!(read("memory.limit_in_bytes"), own_limit.to_string(), "the group's own limit is put back");
    assert_eq!(read("memory.swappiness"), "30", "the group's own swappiness is put back");
    let frozen = live.set_frozen(chat, true);
    assert!(
        frozen.as_ref().is_err_and(|e| e.contains("the system made")),
        "a group of the system's is not frozen: {frozen:?}"
    );

    let (what, _) = live
        .compact(shared[0], "one of two", CompactScope::Anon, Some(asked / 4096))
        .expect("squeeze of an app in a shared group");
    assert!(
        what.starts_with("compacted"),
        "an app that shares its group is squeezed alone, by process_madvise: {what}"
    );
    assert!(appgroup::of_process(&root, shared[0], &domain()).is_none(), "a group of two apps is neither's own");

    // Empty groups, one named as memorch names its own and one as systemd names a scope,
    // made long enough ago to be removed; and the same two frozen.
    let [mine, systemds] = ["app-4000001", "app-firefox-1234.scope"].map(|n| system_group(&sb, n));
    let long_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    for g in mine.iter().chain(&systemds) {
        std::fs::File::open(g)
            .and_then(|f| f.set_modified(long_ago))
            .unwrap_or_else(|e| panic!("{}: {e}", g.display()));
    }
    assert!(appgroup::remove_empty(&domain()) >= 1, "memorch removes its own empty group");
    assert!(mine.iter().all(|g| !g.exists()), "its own empty group is removed");
    assert!(systemds.iter().all(|g| g.exists()), "an empty group of the system's is not removed, whatever its name");
    let [mine, systemds] = ["app-4000002", "app-firefox-5678.scope"].map(|n| system_group(&sb, n));
    let v2 = |gs: &[std::path::PathBuf]| gs.iter().find(|g| g.join("cgroup.freeze").exists()).cloned();
    if let (Some(mine), Some(systemds)) = (v2(&mine), v2(&systemds)) {
        for g in [&mine, &systemds] {
            std::fs::write(g.join("cgroup.freeze"), "1").unwrap();
        }
        let (thawed, failed) = appgroup::thaw_all(&domain());
        assert!(failed.is_empty(), "{failed:?}");
        assert!(
            !freeze::is_frozen(&mine) && thawed.iter().any(|t| t.contains("app-4000002")),
            "memorch thaws its own group left frozen: {thawed:?}"
        );
        assert!(freeze::is_frozen(&systemds), "a group the system froze stays frozen: {thawed:?}");
        std::fs::write(systemds.join("cgroup.freeze"), "0").unwrap();
    }
    drop(sb);
}

/// 48 MiB of `pid`'s heap into zram, then 24 MiB into a storage file of its own above zram
/// (made by `live`): the sizes differ, so what is asked for at once tells which pages were.
/// What it has in swap then.
fn split_between_zram_and_storage(live: &mut memorch_daemon::executor::live::Live, pid: u32) -> u64 {
    use memorch_core::engine::CompactScope;
    use memorch_daemon::executor::{Actuators, Squeeze};
    live.compact(pid, "app", CompactScope::Anon, Some(48 * MIB / 4096)).expect("squeeze into zram");
    live.compact_to_storage(Squeeze { pid, app: "app", scope: CompactScope::Anon, max_pages: Some(24 * MIB / 4096) })
        .expect("squeeze to storage");
    let swapped = status_kib(pid, "VmSwap");
    assert!(swapped >= 64 * MIB, "72 MiB asked into swap, {swapped} there");
    swapped
}

/// A read-back that asks ahead (the preset's `prefetch_whole`): a read-back of an app with pages both in zram and on a storage
/// file asks for the storage pages at once (the device then reads them together) and leaves
/// the zram pages to the touch, which decompresses them as fast; every page comes back
/// mapped either way. Without it nothing is asked ahead; `memorch readback --ahead` asks for
/// all of them.
#[test]
fn a_read_back_asks_for_its_pages_on_storage_at_once_and_not_for_those_in_zram() {
    use memorch_core::engine::CompactScope;
    use memorch_daemon::executor::{live::Live, Actuators, Squeeze};
    use memorch_linux::{Domain, DomainSpec};
    if !testkit::zram_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    let _zram = zram_swap();
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-ahead"), Some(1 << 30)).unwrap();
    let pid = start_app(&mut sb, &["--anon-mb", "96", "--content", "text"]).id();
    let plain_pid = start_app(&mut sb, &["--anon-mb", "48", "--content", "text"]).id();
    let root = SysRoot::live();
    let open = || Domain::open(&root, &DomainSpec::Cgroup(sb.path.clone())).unwrap();
    let dir = testkit::TempDir::new("memorch-ahead");
    let mut live = Live::new(root.clone(), open(), dir.join("swap"));
    live.set_read_back_ahead(true);

    let swapped = split_between_zram_and_storage(&mut live, pid);
    let rss = status_kib(pid, "RssAnon");
    let (what, read) = live.prefetch(pid, "app", u64::MAX).expect("read-back");
    let ahead: u64 = what
        .split(" of them from storage")
        .next()
        .and_then(|s| s.rsplit('(').next())
        .and_then(|n| n.parse().ok())
        .filter(|_| what.contains(" of them from storage"))
        .unwrap_or_else(|| panic!("no bytes asked at once in: {what}"));
    assert!(what.contains("of them from storage asked at once"), "{what}");
    assert!(
        (20 * MIB..=28 * MIB).contains(&ahead),
        "the 24 MiB on storage asked at once, not zram's 48: {ahead} ({what})"
    );
    assert!(read >= swapped * 9 / 10, "read {read} of {swapped}: {what}");
    assert!(status_kib(pid, "VmSwap") <= 4 * MIB, "swap left {}: {what}", status_kib(pid, "VmSwap"));
    assert!(
        status_kib(pid, "RssAnon") >= rss + 64 * MIB,
        "mapped in the process: RSS {} from {rss} ({what})",
        status_kib(pid, "RssAnon")
    );

    // Without the parameter, nothing is asked at once, and the pages still come back.
    let mut plain = Live::new(root.clone(), open(), dir.join("swap-plain"));
    plain.compact(plain_pid, "plain", CompactScope::Anon, Some(16 * MIB / 4096)).expect("squeeze into zram");
    plain
        .compact_to_storage(Squeeze {
            pid: plain_pid,
            app: "plain",
            scope: CompactScope::Anon,
            max_pages: Some(16 * MIB / 4096),
        })
        .expect("squeeze to storage");
    let (what, _) = plain.prefetch(plain_pid, "plain", u64::MAX).expect("read-back");
    assert!(!what.contains("asked at once"), "{what}");
    assert!(status_kib(plain_pid, "VmSwap") <= 4 * MIB, "swap left {}: {what}", status_kib(plain_pid, "VmSwap"));

    // The command: with --ahead every page in swap is asked for first, zram's too.
    let domain = format!("cgroup:{}", sb.path);
    plain.compact(plain_pid, "plain", CompactScope::Anon, Some(16 * MIB / 4096)).expect("squeeze into zram");
    let in_swap = status_kib(plain_pid, "VmSwap");
    let r = json(&["readback", &plain_pid.to_string(), "--ahead", "--domain", &domain, "--json"]);
    let asked = r["ahead_bytes"].as_u64().unwrap();
    assert!(asked >= in_swap * 9 / 10, "asked {asked} of {in_swap} at once: {r}");
    assert!(status_kib(plain_pid, "VmSwap") <= 4 * MIB, "swap left {}: {r}", status_kib(plain_pid, "VmSwap"));
    drop(sb);
    for mut l in [live, plain] {
        let (_, failed) = l.put_back();
        assert!(failed.is_empty(), "{failed:?}");
    }
}
