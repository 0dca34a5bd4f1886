//! `memorch status` on the live kernel: a sandbox domain and the whole machine.

mod common;
use common::*;
use memorch_linux::{sandbox::Sandbox, testkit};
use serde_json::Value;

fn json(args: &[&str]) -> Value {
    let out = run(args);
    assert!(out.status.success(), "memorch {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("status --json prints JSON")
}

#[test]
fn sandbox_domain_shows_its_process_limit_and_own_pressure() {
    if !testkit::sandbox_facility() {
        return;
    }
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-status"), Some(512 * MIB)).unwrap();
    let pid = start_app(&mut sb, &["--anon-mb", "150", "--content", "text", "--name", "status-app"]).id();
    let domain = format!("cgroup:{}", sb.path);
    let v = json(&["status", "--domain", &domain, "--json"]);

    assert_eq!(v["schema"], "memorch.status/1");
    assert_eq!(v["domain"], domain);
    assert_eq!(v["memory"]["total_bytes"], 512 * MIB, "the domain's limit");
    assert_eq!(v["memory"]["limited"], true);
    let psi_source = v["psi"]["source"].as_str().expect("the group has PSI");
    assert!(
        psi_source.ends_with(&format!("{}/memory.pressure", sb.path)),
        "PSI must be the group's own, got {psi_source}"
    );
    assert_ne!(psi_source, "/proc/pressure/memory");

    let procs = v["processes"].as_array().unwrap();
    let p = procs.iter().find(|p| p["pid"] == pid).expect("the app is listed");
    assert_eq!(p["name"], "status-app");
    let rss = p["rss_anon_bytes"].as_u64().unwrap()
        + p["rss_file_bytes"].as_u64().unwrap()
        + p["rss_shmem_bytes"].as_u64().unwrap();
    let truth = status_kib(pid, "VmRSS");
    let diff = rss.abs_diff(truth) as f64 / truth as f64;
    assert!(diff < 0.10, "RSS {rss} vs /proc/{pid}/status {truth}");
    assert!(rss >= 150 * MIB, "the app filled 150 MiB, RSS is {rss}");
    assert!(procs.iter().all(|p| p["pid"] != std::process::id()), "the test itself is outside the domain");
    sb.destroy().unwrap();
}

#[test]
fn whole_machine_lists_processes_and_memory() {
    let v = json(&["status", "--json"]);
    assert_eq!(v["domain"], "system");
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let total = memorch_linux::parse::field_kib(&meminfo, "MemTotal").unwrap();
    assert_eq!(v["memory"]["total_bytes"], total);
    assert_eq!(v["memory"]["limited"], false);
    let procs = v["processes"].as_array().unwrap();
    let me = std::process::id();
    assert!(procs.iter().any(|p| p["pid"] == me), "the test process is on the machine");
    assert!(procs.iter().all(|p| p["class"].is_string() && p["age_ms"].is_u64()));
    // Listed in kill order: never a more important class after a less important one.
    let rank = |p: &Value| memorch_core::Class::from_name(p["class"].as_str().unwrap()).unwrap();
    assert!(procs.windows(2).all(|w| rank(&w[0]) >= rank(&w[1])));
}

#[test]
fn top_limits_the_table() {
    let v = json(&["status", "--json", "--top", "1"]);
    assert_eq!(v["processes"].as_array().unwrap().len(), 1);
    let out = run(&["status", "--top", "2"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("processes: "), "{text}");
    assert!(text.contains("more (--top N to show more)"), "{text}");
}

#[test]
fn bad_domains_say_what_is_wrong() {
    let out = run(&["status", "--domain", "docker:/x"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("unknown domain 'docker:/x'") && err.contains("cgroup:PATH"), "{err}");

    let out = run(&["status", "--domain", "cgroup:/memorch-no-such-group-here"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("/memorch-no-such-group-here exists in no mounted cgroup hierarchy"), "{err}");
}
