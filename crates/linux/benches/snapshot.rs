//! Cost of a snapshot: cheap (memory, PSI, swap, zram, KSM) and full (plus every process),
//! on the whole machine and on a sandbox domain with 200 processes.
//!
//!     cargo bench -p memorch-linux --bench snapshot
//!
//! Needs root and cgroups for the sandbox benches (skipped with a message otherwise).

use divan::Bencher;
use memorch_linux::{sandbox::Sandbox, snapshot, testkit, Domain, DomainSpec, SysRoot};
use std::process::{Command, Stdio};

fn main() {
    divan::main();
}

#[divan::bench]
fn cheap_system(b: Bencher) {
    let root = SysRoot::live();
    let domain = Domain::open(&root, &DomainSpec::System).unwrap();
    b.bench(|| snapshot::cheap(&root, &domain).unwrap());
}

#[divan::bench]
fn full_system(b: Bencher) {
    let root = SysRoot::live();
    let domain = Domain::open(&root, &DomainSpec::System).unwrap();
    b.bench(|| snapshot::full(&root, &domain).unwrap());
}

/// A sandbox holding `n` processes, each a small program with its own pages.
fn sandbox_with(n: usize) -> Option<(Sandbox, Domain)> {
    if !testkit::sandbox_facility() {
        return None;
    }
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-bench-snap"), Some(2 << 30)).unwrap();
    for _ in 0..n {
        sb.spawn(Command::new("sleep").arg("600").stdin(Stdio::null())).unwrap();
    }
    let root = SysRoot::live();
    let domain = Domain::open(&root, &DomainSpec::Cgroup(sb.path.clone())).unwrap();
    assert!(testkit::wait_for(std::time::Duration::from_secs(10), || domain.pids(&root).unwrap().len() == n));
    Some((sb, domain))
}

#[divan::bench]
fn cheap_cgroup(b: Bencher) {
    let Some((sb, domain)) = sandbox_with(1) else { return };
    let root = SysRoot::live();
    b.bench(|| snapshot::cheap(&root, &domain).unwrap());
    sb.destroy().unwrap();
}

#[divan::bench]
fn full_cgroup_200_processes(b: Bencher) {
    let Some((sb, domain)) = sandbox_with(200) else { return };
    let root = SysRoot::live();
    b.bench(|| {
        let s = snapshot::full(&root, &domain).unwrap();
        assert_eq!(s.processes.as_ref().unwrap().len(), 200);
        s
    });
    sb.destroy().unwrap();
}
