//! Readers against files recorded on a development machine (Linux 6.18, hybrid cgroups): a
//! 256 MiB v1 memcg sandbox with its v2 twin, a 300 MiB app inside pushed partly into a
//! 512 MiB lzo-rle zram swap. The expected values are those files' own numbers.

use memorch_core::{Class, Facility};
use memorch_linux::{snapshot, Domain, DomainSpec, SysRoot};

const SANDBOX: &str = "/process_api/10bfcc470b6cd6626a1ebf3e14b0bc4d/memorch-fixture";
const APP_PID: u32 = 4268;

fn root() -> SysRoot {
    SysRoot::at(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/hybrid-sandbox"))
}

#[test]
fn cgroup_domain_combines_v1_memory_and_v2_pressure() {
    let root = root();
    let domain = Domain::open(&root, &DomainSpec::Cgroup(SANDBOX.into())).unwrap();
    let snap = snapshot::full(&root, &domain).unwrap();
    let m = &snap.memory;
    assert_eq!(m.total_bytes, 256 << 20, "the v1 limit, below the machine's RAM");
    assert!(m.limited);
    assert_eq!(m.used_bytes, 268_296_192);
    assert_eq!(m.free_bytes, (256 << 20) - 268_296_192);
    assert!(m.swap_used_bytes > 0, "the app was pushed into zram");
    let psi = snap.psi.get().expect("v2 group has memory.pressure");
    assert!(psi.source.ends_with(&format!("unified{SANDBOX}/memory.pressure")), "{}", psi.source);
    assert!(snap.counters.refault_anon_pages.is_some());
    assert_eq!(snap.counters.swap_in_pages, None, "v1 memcgs do not count swap-ins");
    assert_eq!(snap.counters.oom_kills, Some(0));

    let procs = snap.processes.unwrap();
    assert_eq!(procs.len(), 1);
    let p = &procs[0];
    assert_eq!(p.pid, APP_PID);
    assert_eq!(p.name, "fixture-app");
    assert_eq!(p.class, Class::Foreground);
    assert_eq!(p.swap_bytes, 46172 * 1024);
    assert!(p.rss_anon_bytes > 200 << 20);
    assert!(p.pss_bytes.is_some());
    assert_eq!(p.ksm_merging_pages, Some(0));
}

#[test]
fn zram_swap_and_ksm_from_sysfs() {
    let root = root();
    let domain = Domain::open(&root, &DomainSpec::System).unwrap();
    let snap = snapshot::cheap(&root, &domain).unwrap();
    assert!(snap.processes.is_none(), "cheap snapshots read no process");
    assert_eq!(snap.swap.devices.len(), 1);
    assert_eq!(snap.swap.devices[0].path, "/dev/zram0");
    assert_eq!(snap.swap.devices[0].priority, 100);
    let zram = snap.zram.get().expect("zram0 was set up");
    let z = &zram.devices[0];
    assert_eq!(z.name, "zram0");
    assert_eq!(z.algorithm, "lzo-rle");
    assert_eq!(z.disksize_bytes, 512 << 20);
    assert_eq!(z.orig_data_bytes, 44_507_136);
    assert_eq!(z.compr_data_bytes, 25_902_296);
    assert_eq!(z.same_pages, 306);
    assert_eq!(z.huge_pages, 1254);
    assert!(z.is_swap);
    let r = z.compression_ratio.unwrap();
    assert!((r - 44_507_136.0 / 25_902_296.0).abs() < 1e-9);
    match &snap.ksm {
        Facility::Available(k) => {
            assert_eq!(k.run, 0);
            assert_eq!(k.pages_to_scan, 100);
        }
        Facility::Unavailable { reason } => panic!("ksm: {reason}"),
    }
    assert!(!snap.memory.limited);
    assert!(snap.memory.total_bytes > 20 << 30);
}

#[test]
fn system_domain_lists_the_recorded_process() {
    let root = root();
    let domain = Domain::open(&root, &DomainSpec::System).unwrap();
    let snap = snapshot::full(&root, &domain).unwrap();
    let pids: Vec<u32> = snap.processes.unwrap().iter().map(|p| p.pid).collect();
    assert_eq!(pids, vec![APP_PID]);
}

#[test]
fn missing_cgroup_names_the_path_and_the_hierarchies() {
    let root = root();
    let err = Domain::open(&root, &DomainSpec::Cgroup("/no/such/group".into())).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("/no/such/group"), "{msg}");
    assert!(msg.contains("memory") && msg.contains("unified"), "{msg}");
}

#[test]
fn missing_facilities_are_unavailable_not_errors() {
    // A tree with meminfo and friends but no zram, KSM or PSI files.
    let dir = std::env::temp_dir().join(format!("memorch-bare-{}", std::process::id()));
    let src = root();
    for f in ["/proc/meminfo", "/proc/vmstat", "/proc/swaps", "/proc/uptime", "/proc/self/mountinfo"] {
        let to = dir.join(f.trim_start_matches('/'));
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(src.path(f), &to).unwrap();
    }
    let bare = SysRoot::at(&dir);
    let domain = Domain::open(&bare, &DomainSpec::System).unwrap();
    let snap = snapshot::cheap(&bare, &domain).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    for (name, f) in [
        ("zram", matches!(&snap.zram, Facility::Unavailable { reason } if reason.contains("modprobe zram"))),
        ("ksm", matches!(&snap.ksm, Facility::Unavailable { reason } if reason.contains("CONFIG_KSM"))),
        ("psi", matches!(&snap.psi, Facility::Unavailable { reason } if reason.contains("PSI"))),
    ] {
        assert!(f, "{name} should be unavailable with a reason: {snap:?}");
    }
}
