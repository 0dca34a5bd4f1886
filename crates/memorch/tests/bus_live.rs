//! The freedesktop low-memory-monitor's name on a private system bus: memorch connects only
//! while trim notices are on, lets go when a reload turns them off, and never takes the name
//! from another owner (low-memory-monitor, or a second memorch).

mod common;
use common::*;
use memorch_linux::{sandbox::Sandbox, testkit};
use std::time::Duration;

const NAME: &str = "org.freedesktop.LowMemoryMonitor";

#[test]
fn the_bus_name_is_held_only_while_trim_notices_are_on_and_never_taken_from_another_owner() {
    if !testkit::sandbox_facility() {
        return;
    }
    let Some(bus) = PrivateBus::start() else { return };
    let sb = Sandbox::create(&testkit::unique_name("memorch-bus"), Some(128 * MIB)).unwrap();
    let dir = testkit::TempDir::new("memorch-bus-cfg");
    let cfg = dir.join("memorch.toml");
    let write = |preset: &str| {
        let local = format!(
            "[manage]\nzram = false\nswap_files = false\nksm = false\nswap_file_dir = \"{}\"\n",
            dir.join("swap").display()
        );
        std::fs::write(&cfg, format!("preset = \"{preset}\"\n{local}")).unwrap();
    };
    let domain = format!("cgroup:{}", sb.path);
    let args = ["--config", cfg.to_str().unwrap(), "--domain", &domain];
    let env = [("DBUS_SYSTEM_BUS_ADDRESS", bus.address.as_str())];
    // Notices off, as in every shipped preset: not even a connection (dbus = "auto").
    write("memorch");
    let d = DaemonGuard::start_with_env(&args, &env);
    assert_eq!(bus.clients(), 0, "with trim notices off memorch stays off the bus: {}", d.log());
    drop(d);
    // On: it owns the name. A reload that turns them off releases it and disconnects.
    write("memorch:trim=on");
    let d = DaemonGuard::start_with_env(&args, &env);
    assert!(bus.has_owner(NAME), "with trim notices on memorch owns {NAME}: {}", d.log());
    write("memorch");
    unsafe { libc::kill(d.child.id() as i32, libc::SIGHUP) };
    assert!(
        testkit::wait_for(Duration::from_secs(10), || !bus.has_owner(NAME) && bus.clients() == 0),
        "a reload that turns notices off lets the name go: {}",
        d.log()
    );
    assert!(d.log().contains("released"), "and says so: {}", d.log());
    drop(d);
    // Another owner (as low-memory-monitor would be): memorch says so once and stays off.
    let other = zbus::blocking::connection::Builder::address(bus.address.as_str())
        .and_then(|b| b.name(NAME))
        .and_then(|b| b.build())
        .expect("the test owns the name");
    write("memorch:trim=on");
    let d = DaemonGuard::start_with_env(&args, &env);
    unsafe { libc::kill(d.child.id() as i32, libc::SIGHUP) };
    assert!(
        testkit::wait_for(Duration::from_secs(10), || d.log().contains("config reloaded")),
        "reloaded: {}",
        d.log()
    );
    let owner = bus.call("GetNameOwner", &[NAME]);
    assert!(owner.contains(other.unique_name().unwrap().as_str()), "the name stays its owner's: {owner}");
    assert_eq!(bus.clients(), 1, "memorch is not on the bus beside the owner: {}", d.log());
    assert_eq!(d.log().matches("owned by another process").count(), 1, "said once: {}", d.log());
    drop(d);
    drop(other);
    sb.destroy().unwrap();
}

/// A bus that accepts and never answers holds the daemon's start no longer than its bound.
#[test]
fn a_bus_that_never_answers_does_not_hold_the_daemon() {
    if !testkit::sandbox_facility() {
        return;
    }
    let sb = Sandbox::create(&testkit::unique_name("memorch-mute-bus"), Some(128 * MIB)).unwrap();
    let dir = testkit::TempDir::new("memorch-mute-bus");
    let listener = std::os::unix::net::UnixListener::bind(dir.join("bus")).unwrap();
    let held = std::thread::spawn(move || listener.accept().map(|(conn, _)| conn));
    let cfg = dir.join("memorch.toml");
    let local = format!("preset = \"memorch:trim=on\"\n[manage]\nzram = false\nswap_files = false\nksm = false\nswap_file_dir = \"{}\"\n", dir.join("swap").display());
    std::fs::write(&cfg, local).unwrap();
    let domain = format!("cgroup:{}", sb.path);
    let address = format!("unix:path={}", dir.join("bus").display());
    let d = DaemonGuard::start_with_env(
        &["--config", cfg.to_str().unwrap(), "--domain", &domain],
        &[("DBUS_SYSTEM_BUS_ADDRESS", &address)],
    );
    assert!(d.log().contains("no answer within"), "it gave up on the bus and said so: {}", d.log());
    assert_eq!(d.status()["ok"], true, "and runs");
    drop(d);
    drop(held.join());
    sb.destroy().unwrap();
}
