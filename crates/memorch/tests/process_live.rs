//! `memorch spawn`, `ksm`, `kill`, `reclaim`, `freeze`/`thaw` on the live kernel, in sandboxes.

mod common;
use common::*;
use memorch_linux::ksm::{KsmGuard, KsmSettings};
use memorch_linux::{sandbox::Sandbox, testkit, SysRoot};
use std::time::Duration;

fn ksm_merging(pid: u32) -> u64 {
    // The reader the daemon weighs KSM's trial by (apps.rs).
    memorch_linux::process::ksm_merging_pages(&SysRoot::live(), pid).expect("ksm_merging_pages")
}

#[test]
fn spawn_ksm_children_with_identical_content_get_merged() {
    if !testkit::ksm_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-ksm"), Some(512 * MIB)).unwrap();
    let app = ["--anon-mb", "16", "--content", "text", "--seed", "7"];
    let a = spawn_app(&mut sb, &["--ksm", "--class", "cached"], &app).id();
    let b = spawn_app(&mut sb, &["--ksm", "--class", "cached"], &app).id();
    let plain = spawn_app(&mut sb, &[], &app).id();
    assert_eq!(std::fs::read_to_string(format!("/proc/{a}/oom_score_adj")).unwrap().trim(), "900");
    let stat = std::fs::read_to_string(format!("/proc/{a}/ksm_stat")).unwrap();
    assert!(stat.contains("ksm_merge_any: yes"), "{stat}");
    let _ksm =
        KsmGuard::tune(&SysRoot::live(), &KsmSettings { run: Some(1), pages_to_scan: Some(20_000), sleep_ms: Some(5) })
            .unwrap();
    let pages = 16 * MIB / 4096;
    let merged =
        testkit::wait_for(Duration::from_secs(60), || ksm_merging(a) > pages / 2 && ksm_merging(b) > pages / 2);
    assert!(merged, "ksmd merged only {} and {} of {pages} pages", ksm_merging(a), ksm_merging(b));
    assert_eq!(ksm_merging(plain), 0, "a process not spawned with --ksm is not merged");
    let v = json(&["ksm", "status", "--domain", &format!("cgroup:{}", sb.path), "--json"]);
    let listed: Vec<u64> = v["processes"].as_array().unwrap().iter().map(|p| p["pid"].as_u64().unwrap()).collect();
    assert!(listed.contains(&(a as u64)) && listed.contains(&(b as u64)) && !listed.contains(&(plain as u64)), "{v}");
}

#[test]
fn ksm_tune_validates_before_writing() {
    if !testkit::ksm_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    let run = || std::fs::read_to_string("/sys/kernel/mm/ksm/run").unwrap();
    let pages = || std::fs::read_to_string("/sys/kernel/mm/ksm/pages_to_scan").unwrap();
    let (run0, pages0) = (run(), pages());
    let err = fails(&["ksm", "tune", "--run", "7", "--pages-to-scan", "123"]);
    assert!(err.contains("ksm run 7"), "{err}");
    assert_eq!((run(), pages()), (run0.clone(), pages0.clone()), "nothing half-applied");
    let out = ok(&["ksm", "tune", "--pages-to-scan", "123"]);
    assert_eq!(pages().trim(), "123");
    let restore = out.split("to restore: ").nth(1).unwrap().trim().to_string();
    let args: Vec<&str> = restore.split_whitespace().skip(1).collect();
    ok(&args);
    assert_eq!(pages(), pages0);
}

#[test]
fn kill_returns_a_512_mib_process_memory() {
    if !testkit::sandbox_facility() {
        return;
    }
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-kill"), Some(1 << 30)).unwrap();
    let pid = start_app(&mut sb, &["--anon-mb", "512", "--content", "text"]).id();
    let domain = format!("cgroup:{}", sb.path);
    let before =
        json(&["status", "--domain", &domain, "--json", "--top", "0"])["memory"]["used_bytes"].as_u64().unwrap();
    let r = json(&["kill", &pid.to_string(), "--domain", &domain, "--reason", "test", "--json"]);
    assert_eq!(r["exited"], true, "{r}");
    assert!(!alive(pid));
    assert!(r["regained_bytes"].as_u64().unwrap() >= 480 * MIB, "{r}");
    let after =
        json(&["status", "--domain", &domain, "--json", "--top", "0"])["memory"]["used_bytes"].as_u64().unwrap();
    assert!(before - after >= 480 * MIB, "domain used {before} → {after}");
}

#[test]
fn refused_kills_leave_the_process_alive() {
    if !testkit::sandbox_facility() {
        return;
    }
    let mut a = Sandbox::create(&testkit::unique_name("memorch-kill-a"), Some(256 * MIB)).unwrap();
    let b = Sandbox::create(&testkit::unique_name("memorch-kill-b"), Some(256 * MIB)).unwrap();
    let pid = start_app(&mut a, &["--anon-mb", "4"]).id();
    let err = fails(&["kill", &pid.to_string(), "--domain", &format!("cgroup:{}", b.path)]);
    assert!(err.contains("not in domain"), "{err}");
    let out = ok(&["kill", &pid.to_string(), "--dry-run"]);
    assert!(out.contains("would kill"), "{out}");
    assert!(alive(pid), "a refused or dry-run kill killed");
    assert!(fails(&["kill", "1"]).contains("init"));
}

#[test]
fn reclaim_on_a_v1_domain_frees_memory_and_restores_the_limit() {
    if !testkit::sandbox_facility() {
        return;
    }
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-reclaim"), Some(512 * MIB)).unwrap();
    let dir = testkit::TempDir::new("memorch-reclaim-file");
    let file = dir.join("data.bin");
    start_app(&mut sb, &["--anon-mb", "4", "--file", file.to_str().unwrap(), "--file-mb", "64"]);
    let limit_file = sb.v1_memory.clone().or(sb.v2.clone()).unwrap();
    let limit_name =
        if limit_file.join("memory.limit_in_bytes").exists() { "memory.limit_in_bytes" } else { "memory.max" };
    let limit = || std::fs::read_to_string(limit_file.join(limit_name)).unwrap();
    let limit_before = limit();
    let r = json(&["reclaim", "--domain", &format!("cgroup:{}", sb.path), "--bytes", "32M", "--json"]);
    assert!(r["reclaimed_bytes"].as_u64().unwrap() >= 16 * MIB, "{r}");
    assert_eq!(limit(), limit_before, "the limit is restored");
    drop(sb);
    drop(dir);
}

#[test]
fn freeze_and_thaw_a_sandbox() {
    if !testkit::cgroup_v2_facility() {
        return;
    }
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-freeze"), Some(256 * MIB)).unwrap();
    start_app(&mut sb, &["--anon-mb", "4"]);
    let events = || std::fs::read_to_string(sb.v2.as_ref().unwrap().join("cgroup.events")).unwrap();
    ok(&["freeze", &sb.path]);
    assert!(events().contains("frozen 1"), "{}", events());
    ok(&["thaw", &sb.path]);
    assert!(events().contains("frozen 0"), "{}", events());
    assert!(fails(&["freeze", "/"]).contains("root cgroup"));
}
