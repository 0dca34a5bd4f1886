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

/// A light look's check of which processes of the last full look are still alive, for the
/// 12 processes of a `realapps` device: each one's `/proc/PID/stat` read, against one poll
/// over a pidfd of each (what the daemon does).
#[divan::bench]
fn liveness_12_processes_stat(b: Bencher) {
    let Some((sb, domain)) = sandbox_with(12) else { return };
    let root = SysRoot::live();
    let pids = domain.pids(&root).unwrap();
    b.bench(|| {
        pids.iter().filter(|&&p| memorch_linux::process::read_stat(&root, p).is_ok_and(|s| s.state != 'Z')).count()
    });
    sb.destroy().unwrap();
}

#[divan::bench]
fn liveness_12_processes_pidfd_poll(b: Bencher) {
    let Some((sb, domain)) = sandbox_with(12) else { return };
    let root = SysRoot::live();
    let fds: Vec<_> =
        domain.pids(&root).unwrap().into_iter().map(|p| memorch_linux::pidfd::Pidfd::open(p).unwrap()).collect();
    let refs: Vec<_> = fds.iter().collect();
    b.bench(|| memorch_linux::pidfd::which_exited(&refs).unwrap().iter().filter(|&&gone| !gone).count());
    sb.destroy().unwrap();
}

/// A light look's cheap snapshot, KSM's figures taken from the last look rather than read.
#[divan::bench]
fn cheap_cgroup_ksm_given(b: Bencher) {
    let Some((sb, domain)) = sandbox_with(1) else { return };
    let root = SysRoot::live();
    let ksm = snapshot::cheap(&root, &domain).unwrap().ksm;
    b.bench(|| snapshot::cheap_with_ksm(&root, &domain, ksm.clone()).unwrap());
    sb.destroy().unwrap();
}
