//! The virtual device behaves like a device (issue 12): its keeper reclaims in the background
//! below a low watermark, as kswapd does, so free memory leads the OOM point; a bare memcg
//! sits at its limit with nothing free.

mod common;
use common::*;
use memorch_bench::device::Device;
use memorch_linux::testkit;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

fn read_u64(p: &std::path::Path) -> u64 {
    std::fs::read_to_string(p).unwrap().trim().parse().unwrap()
}

/// Start a synthetic app of `anon_mb` in a device and wait for its ready line.
fn fill(device: &Device, anon_mb: u64) -> std::process::Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_memorch"));
    cmd.args(["app", "--name", "filler", "--anon-mb", &anon_mb.to_string(), "--content", "mixed"]).stdout(Stdio::piped()).stdin(Stdio::piped());
    let mut child = device.spawn(cmd, true).expect("app starts");
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap()).read_line(&mut line).unwrap();
    assert!(line.starts_with("ready "), "{line:?}");
    child
}

#[test]
fn the_device_keeps_free_memory_above_its_low_watermark_as_kswapd_does() {
    if !testkit::zram_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    let device = Device::create(&testkit::unique_name("memorch-kswapd"), 128 * MIB, 96 * MIB, "lz4").expect("device");
    let keeper = device.keeper.as_ref().expect("a v1 memory group has a keeper");
    let v1 = device.sandbox.v1_memory.clone().unwrap();
    // More than its RAM: the rest must go to zram.
    let mut app = fill(&device, 160);
    let free = || read_u64(&v1.join("memory.limit_in_bytes")).saturating_sub(read_u64(&v1.join("memory.usage_in_bytes")));
    // At rest, the keeper brings free memory back over the low watermark (an allocation
    // past the limit only reclaims what it needs: free stays near zero without it).
    assert!(testkit::wait_for(Duration::from_secs(10), || free() >= keeper.watermarks.low_bytes), "free {} never reached the low watermark {}", free(), keeper.watermarks.low_bytes);
    assert!(keeper.stats.wakeups.load(Relaxed) > 0 && keeper.stats.reclaimed_bytes.load(Relaxed) >= keeper.watermarks.high_bytes - keeper.watermarks.low_bytes, "the keeper reclaimed: {:?}", keeper.stats);
    let _ = app.kill();
    let _ = app.wait();
    drop(device);

    // The same fill in a bare memcg of the same size: nothing keeps a reserve.
    let mut sb = memorch_linux::sandbox::Sandbox::create(&testkit::unique_name("memorch-nokswapd"), Some(128 * MIB)).unwrap();
    let zram = memorch_linux::zram::ZramGuard::setup(&memorch_linux::SysRoot::live(), 96 * MIB, Some("lz4"), 100).unwrap();
    let app = start_app(&mut sb, &["--name", "filler", "--anon-mb", "160", "--content", "mixed"]);
    let pid = app.id();
    let v1 = sb.v1_memory.clone().unwrap();
    let bare_free = read_u64(&v1.join("memory.limit_in_bytes")).saturating_sub(read_u64(&v1.join("memory.usage_in_bytes")));
    assert!(bare_free < 128 * MIB / 100, "a bare memcg past its limit keeps nothing free: {bare_free} (pid {pid})");
    drop(sb);
    drop(zram);
}

/// lmkd as AOSP runs it: its PSI trigger starts polling, and on a device that keeps a reserve
/// (free memory and stall come before the OOM point) it kills cached apps one at a time before
/// the memcg's OOM killer does; the foreground app lives.
#[test]
fn lmkd_polled_after_its_trigger_kills_before_the_oom_killer() {
    if !testkit::zram_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    let mut device = Device::create(&testkit::unique_name("memorch-lmkd"), 192 * MIB, 64 * MIB, "lz4").expect("device");
    let v1 = device.sandbox.v1_memory.clone().unwrap();
    // The bench's fast loop: a full look every second (polls use the last one's apps).
    let cfg = std::env::temp_dir().join(format!("{}.toml", testkit::unique_name("memorch-cfg")));
    std::fs::write(&cfg, "[loop]\ntick_ms = 250\nfull_snapshot_ms = 1000\n").unwrap();
    let d = DaemonGuard::start(&["--domain", &device.domain(), "--preset", "lmkd", "--config", cfg.to_str().unwrap()]);
    let fg = spawn_app(&mut device.sandbox, &["--class", "foreground"], &["--anon-mb", "24", "--content", "mixed", "--name", "fg-app"]).id();
    // Cached apps, one after another, far more than RAM and zram hold.
    for i in 0..9 {
        spawn_app(&mut device.sandbox, &["--class", "cached"], &["--anon-mb", "48", "--content", "mixed", "--seed", &(i + 20).to_string()]);
    }
    let st = d.status();
    let c = &st["data"]["counters"];
    let kills: u64 = c["kills"].as_object().map_or(0, |k| k.values().filter_map(|v| v.as_u64()).sum());
    let oom = std::fs::read_to_string(v1.join("memory.oom_control")).unwrap();
    let kernel_kills: u64 = oom.lines().find_map(|l| l.strip_prefix("oom_kill ")).unwrap().trim().parse().unwrap();
    assert!(c["pressure_events"].as_u64().unwrap() > 0 && c["polls"].as_u64().unwrap() > 0, "a trigger, then polls: {c}\n{}", d.log());
    assert!(kills > 0, "the load needs kills: {c}\n{}", d.log());
    assert_eq!(kernel_kills, 0, "lmkd killed before the OOM killer ({kills} kills)\n{}", d.log());
    assert!(alive(fg), "the foreground app lives");
    drop(d);
    let _ = std::fs::remove_file(cfg);
}
