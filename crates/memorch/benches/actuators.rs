//! Actuator figures on the live kernel: compaction throughput into zram (lz4 and lzo-rle,
//! a 512 MiB child), a heap read back from zram, the daemon's read-back of a heap from a
//! storage swap file and from zram with its pages asked for at once first and without
//! (as `prefetch_whole`'s read-back does), and kill-to-memory-regained latency (512 MiB), each repeated.
//!
//!     sudo cargo bench -p memorch --bench actuators
//!
//! Prints medians and ranges. Needs root, cgroups and zram; restores everything it changes.

use memorch_bench::content::{self, PageKind};
use memorch_linux::compact::{self, Advice, CompactScope};
use memorch_linux::{
    readback, sandbox::Sandbox, snapshot, target, testkit, zram::ZramGuard, Domain, DomainSpec, SysRoot,
};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;
const APP_MB: u64 = 512;
const REPEAT: usize = 3;

/// Start `memorch ARGS…` in the sandbox and wait for the app's `ready` line: its pid.
fn start_ready(sb: &mut Sandbox, args: &[&str]) -> u32 {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_memorch"));
    cmd.args(args).stdout(Stdio::piped()).stdin(Stdio::null());
    let child = sb.spawn(&mut cmd).unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    assert!(line.starts_with("ready"), "{line}");
    child.id()
}

/// A sandbox with one 512 MiB text app in it, ready.
fn app_in_sandbox(root: &SysRoot) -> (Sandbox, Domain, u32) {
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-bench-act"), Some(2 << 30)).unwrap();
    let pid = start_ready(&mut sb, &["app", "--anon-mb", &APP_MB.to_string(), "--content", "text"]);
    let domain = Domain::open(root, &DomainSpec::Cgroup(sb.path.clone())).unwrap();
    (sb, domain, pid)
}

/// A heap of `APP_MB` in this process, paged out to swap and touched back a page at a time,
/// as a return does: microseconds a 4 kB page. Here and not in a `memorch app` child: those
/// keep their heaps in small pages (`MADV_NOHUGEPAGE`, bench app.rs), as phone apps did.
fn read_back_us_a_page() -> f64 {
    let len = (APP_MB * MIB) as usize;
    let align = 2 << 20;
    // SAFETY: a fresh private anonymous mapping, checked, unmapped below.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len + align,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    assert_ne!(base, libc::MAP_FAILED, "mmap");
    // SAFETY: `len` bytes from the first 2 MiB boundary lie inside the mapping of `len + align`.
    let heap = unsafe { std::slice::from_raw_parts_mut(((base as usize + align - 1) & !(align - 1)) as *mut u8, len) };
    // The text content of the child's heap above (bench content.rs), so zram compresses alike.
    for (i, page) in heap.chunks_mut(4096).enumerate() {
        content::fill(page, PageKind::Text, 1, i as u64);
    }
    // SAFETY: our own mapping.
    assert_eq!(unsafe { libc::madvise(heap.as_mut_ptr().cast(), len, libc::MADV_PAGEOUT) }, 0, "MADV_PAGEOUT");
    let t0 = Instant::now();
    let sum: u64 = heap.iter().step_by(4096).map(|&b| u64::from(unsafe { std::ptr::read_volatile(&b) })).sum();
    let us = t0.elapsed().as_secs_f64() * 1e6 / (len / 4096) as f64;
    std::hint::black_box(sum);
    // SAFETY: the mapping made above.
    unsafe { libc::munmap(base, len + align) };
    us
}

/// What [`read_back_us`] pages out and reads back.
const READ_BACK_MB: u64 = 256;

/// A [`READ_BACK_MB`] text-heap app paged out in 64 kB pieces in a shuffled order (as the
/// kernel's reclaim and many squeezes leave an app's pages in a swap file, not in address
/// order), then read back whole by the daemon's read-back (`readback.rs`), `ahead` or not:
/// µs a 4 kB page, each of `REPEAT` rounds. A first round is not counted: pages paged out
/// the first time stay in the swap cache until written, and a read-back then finds them in
/// RAM; later ones keep their swap slots and are dropped at once.
fn read_back_us(root: &SysRoot, ahead: readback::Ahead) -> Vec<f64> {
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-bench-readback"), Some(2 << 30)).unwrap();
    let pid = start_ready(&mut sb, &["app", "--anon-mb", &READ_BACK_MB.to_string(), "--content", "text"]);
    let domain = Domain::open(root, &DomainSpec::Cgroup(sb.path.clone())).unwrap();
    let t = target::check(root, pid, &domain).unwrap();
    let (_, heap) = compact::plan(root, pid, CompactScope::Anon, Advice::Pageout, None).unwrap();
    let mut pieces: Vec<compact::Range> = heap
        .iter()
        .flat_map(|r| {
            (r.start..r.start + r.len)
                .step_by(64 << 10)
                .map(move |a| compact::Range { start: a, len: (64 << 10).min(r.start + r.len - a) })
        })
        .collect();
    // A fixed shuffle (Fisher-Yates by the bench's own mixer), so every run lays the file
    // out alike.
    for i in (1..pieces.len()).rev() {
        pieces.swap(i, (content::splitmix(i as u64) % (i as u64 + 1)) as usize);
    }
    let us: Vec<f64> = (0..=REPEAT)
        .filter_map(|round| {
            compact::advise(&t, &pieces, Advice::Pageout).unwrap();
            let r = readback::read_back(root, &t, u64::MAX, ahead).unwrap();
            assert!(r.back_bytes >= READ_BACK_MB * MIB * 8 / 10, "read back only {} bytes", r.back_bytes);
            (round > 0).then(|| r.elapsed_us as f64 / (r.back_bytes / 4096) as f64)
        })
        .collect();
    sb.destroy().unwrap();
    us
}

fn summary(mut v: Vec<f64>) -> String {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    format!("median {:>7.1}  (min {:.1}, max {:.1}, n={})", v[v.len() / 2], v[0], v[v.len() - 1], v.len())
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo bench -- --list`
    }
    if !testkit::zram_facility() {
        return;
    }
    let root = SysRoot::live();
    let _lock = testkit::machine_test_lock();
    println!("memorch actuator bench: {APP_MB} MiB text-heap child, {REPEAT} runs each\n");

    for alg in ["lz4", "lzo-rle"] {
        let zram = ZramGuard::setup(&root, 2 << 30, Some(alg), 100).unwrap();
        let mut rates = Vec::new();
        let mut ratio = Vec::new();
        for _ in 0..REPEAT {
            let (sb, domain, pid) = app_in_sandbox(&root);
            let t = target::check(&root, pid, &domain).unwrap();
            let r = compact::compact(&root, &t, CompactScope::Anon, Advice::Pageout, None, false).unwrap();
            rates.push(r.moved_bytes as f64 / r.elapsed_us as f64);
            let z = snapshot::cheap(&root, &domain).unwrap();
            if let Some(d) = z.zram.get().and_then(|z| z.devices.iter().find(|d| d.name == zram.setup.device)) {
                ratio.push(d.compression_ratio.unwrap_or(0.0));
            }
            sb.destroy().unwrap();
        }
        println!("compact --anon into zram ({alg:<7}) MB/s on one core: {}", summary(rates));
        println!("  compression ratio (orig/compr)            : {}", summary(ratio));
        drop(zram);
    }

    println!();
    {
        let _zram = ZramGuard::setup(&root, 2 << 30, Some("lz4"), 100).unwrap();
        let us = (0..REPEAT).map(|_| read_back_us_a_page()).collect();
        println!("{APP_MB} MiB heap read back from zram (lz4), µs a 4 kB page: {}", summary(us));
    }

    // The daemon's read-back, from a storage swap file alone and from zram alone.
    println!();
    {
        let dir = testkit::TempDir::new("memorch-bench-readback");
        let _file = memorch_linux::swapfile::SwapFileGuard::add(&root, &dir.0, (READ_BACK_MB + 64) * MIB, 10).unwrap();
        for ahead in [readback::Ahead::Nothing, readback::Ahead::All] {
            let how = if ahead == readback::Ahead::All { "asked at once first" } else { "touched a page at a time" };
            println!(
                "{READ_BACK_MB} MiB read back from a storage swap file, µs a 4 kB page, {how:<24}: {}",
                summary(read_back_us(&root, ahead))
            );
        }
    }
    {
        let _zram = ZramGuard::setup(&root, 2 << 30, Some("lz4"), 100).unwrap();
        for ahead in [readback::Ahead::Nothing, readback::Ahead::All] {
            let how = if ahead == readback::Ahead::All { "asked at once first" } else { "touched a page at a time" };
            println!(
                "{READ_BACK_MB} MiB read back from zram (lz4), µs a 4 kB page, {how:<24}: {}",
                summary(read_back_us(&root, ahead))
            );
        }
    }

    println!();
    for mrelease in [true, false] {
        let mut regained = Vec::new();
        let mut exit = Vec::new();
        for _ in 0..REPEAT {
            let (sb, domain, pid) = app_in_sandbox(&root);
            let t = target::check(&root, pid, &domain).unwrap();
            let used = snapshot::cheap(&root, &domain).unwrap().memory.used_bytes;
            let t0 = Instant::now();
            t.pidfd.send_signal(libc::SIGKILL).unwrap();
            if mrelease {
                t.pidfd.mrelease();
            }
            // Regained: the domain's usage fell by 90 % of the app.
            let target_used = used - APP_MB * MIB * 9 / 10;
            let ok = testkit::wait_for(Duration::from_secs(5), || {
                snapshot::cheap(&root, &domain).unwrap().memory.used_bytes <= target_used
            });
            let t_regained = t0.elapsed();
            assert!(ok, "memory did not come back");
            t.pidfd.wait_exit(Duration::from_secs(5));
            exit.push(t0.elapsed().as_secs_f64() * 1e3);
            regained.push(t_regained.as_secs_f64() * 1e3);
            sb.destroy().unwrap();
        }
        let how = if mrelease { "with process_mrelease" } else { "SIGKILL only        " };
        println!("kill → 90 % of {APP_MB} MiB regained, ms ({how}): {}", summary(regained));
        println!("kill → exit seen on the pidfd, ms ({how}): {}", summary(exit));
    }
}
