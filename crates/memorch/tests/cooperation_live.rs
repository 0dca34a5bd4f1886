//! Cooperation with apps (issue 14) on live sandbox domains: the cached-app freezer, trim
//! notices before harm, the pre-kill hook and margins.

mod common;
use common::*;
use memorch_core::Class;
use memorch_linux::{appgroup, sandbox::Sandbox, testkit, Domain, DomainSpec, SysRoot};
use memorch_protocol::Request;
use std::time::Duration;

/// A config with a fast loop that leaves zram, swap files and KSM alone (nothing machine-wide).
fn local_config(extra: &str) -> testkit::TempDir {
    let dir = testkit::TempDir::new("memorch-coop");
    std::fs::write(dir.join("memorch.toml"), format!("[loop]\ntick_ms = 100\nfull_snapshot_ms = 300\n[manage]\nzram = false\nswap_files = false\nksm = false\nswap_file_dir = \"{}\"\n{extra}", dir.join("swap").display())).unwrap();
    dir
}

/// The v2 directory of the app group `pid` is in (`memorch spawn --app-group`).
fn group_dir(sb: &Sandbox, pid: u32) -> std::path::PathBuf {
    let root = SysRoot::live();
    let domain = Domain::open(&root, &DomainSpec::Cgroup(sb.path.clone())).unwrap();
    appgroup::of_process(&root, pid, &domain)
        .and_then(|g| g.v2_dir())
        .expect("the app is in an app group with a v2 group")
}

/// A process in the sandbox whose memory grows by 4 MiB every 200 ms up to `cap_mb` (then it
/// holds it): pressure that comes gradually, as apps fill memory, not in one leap that only
/// the kernel's OOM killer could meet.
fn grower(sb: &mut Sandbox, cap_mb: u64) -> u32 {
    let code = format!("import time\nb = []\nwhile len(b) * 4 < {cap_mb}:\n    b.append(b'x' * (4 << 20))\n    time.sleep(0.2)\ntime.sleep(3600)\n");
    sb.spawn(std::process::Command::new("python3").args(["-c", &code]).stdin(std::process::Stdio::null()))
        .expect("python3 starts")
        .id()
}

fn frozen(dir: &std::path::Path) -> bool {
    std::fs::read_to_string(dir.join("cgroup.events")).unwrap_or_default().lines().any(|l| l.trim() == "frozen 1")
}

#[test]
fn a_cached_app_is_frozen_after_the_set_time_thawed_before_its_visit_and_never_left_frozen() {
    if !testkit::sandbox_facility() {
        return;
    }
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-freeze"), Some(256 * MIB)).unwrap();
    let cfg = local_config("");
    let cfg_path = cfg.join("memorch.toml");
    let domain = format!("cgroup:{}", sb.path);
    let args =
        ["--config", cfg_path.to_str().unwrap(), "--domain", &domain, "--preset", "memorch:freeze_after_ms=1000"];
    let mut d = DaemonGuard::start(&args);
    let app = spawn_app(&mut sb, &["--app-group", "--class", "cached"], &["--anon-mb", "16"]).id();
    let fg = spawn_app(&mut sb, &["--app-group", "--class", "foreground"], &["--anon-mb", "16"]).id();
    let (app_dir, fg_dir) = (group_dir(&sb, app), group_dir(&sb, fg));
    assert!(testkit::wait_for(Duration::from_secs(10), || frozen(&app_dir)), "the cached app was frozen: {}", d.log());
    assert!(!frozen(&fg_dir), "the foreground app is never frozen");
    // Brought back by a launcher: thawed by the time the launcher hears back.
    let a = d.request(&Request::state(app, Class::Foreground));
    assert_eq!(a["ok"], true, "{a}");
    assert!(!frozen(&app_dir), "thawed before the answer to 'state foreground'");
    // Cached again: frozen again; then the daemon stops, and nothing stays frozen.
    assert_eq!(d.request(&Request::state(app, Class::Cached))["ok"], true);
    assert!(testkit::wait_for(Duration::from_secs(10), || frozen(&app_dir)), "frozen again: {}", d.log());
    d.stop();
    assert!(!frozen(&app_dir), "thawed when memorch stops: {}", d.log());
    // A memorch that dies outright leaves it frozen; the next one thaws it before it answers.
    let mut d = DaemonGuard::start(&args);
    assert!(testkit::wait_for(Duration::from_secs(10), || frozen(&app_dir)), "frozen again: {}", d.log());
    let _ = d.child.kill();
    let _ = d.child.wait();
    assert!(frozen(&app_dir), "a daemon killed outright thaws nothing");
    let d = DaemonGuard::start(&[
        "--config",
        cfg_path.to_str().unwrap(),
        "--domain",
        &domain,
        "--preset",
        "memorch:freeze=off",
    ]);
    assert!(!frozen(&app_dir), "the next daemon thawed what the dead one left frozen: {}", d.log());
    assert!(d.log().contains("left frozen"), "and said so: {}", d.log());
    // A kill needs no thaw: SIGKILL reaches a frozen app (cgroup-v2.rst).
    std::fs::write(fg_dir.join("cgroup.freeze"), "1").unwrap();
    assert!(testkit::wait_for(Duration::from_secs(5), || frozen(&fg_dir)));
    unsafe { libc::kill(fg as i32, libc::SIGKILL) };
    assert!(testkit::wait_for(Duration::from_secs(5), || !alive(fg)), "a frozen app killed is gone");
    drop(d);
    sb.destroy().unwrap();
}

/// Memory grows towards the compression margin; an app that listens is told first (on the
/// socket, and GLib's own `gdbus` hears the freedesktop signal on a private system bus),
/// drops its cache, and memorch counts what came back: nothing compressed or killed first.
#[test]
fn a_listening_app_is_told_to_trim_before_anything_is_compressed_or_killed() {
    if !testkit::sandbox_facility() {
        return;
    }
    let Some(bus) = PrivateBus::start() else { return };
    // gdbus follows the name as GLib's GMemoryMonitor does (a proxy for the owner's signals).
    let mut monitor = std::process::Command::new("gdbus")
        .args([
            "monitor",
            "--address",
            &bus.address,
            "--dest",
            "org.freedesktop.LowMemoryMonitor",
            "--object-path",
            "/org/freedesktop/LowMemoryMonitor",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("gdbus monitor starts");
    let heard = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    {
        let (out, heard) = (monitor.stdout.take().unwrap(), heard.clone());
        std::thread::spawn(move || {
            use std::io::BufRead;
            for l in std::io::BufReader::new(out).lines().map_while(Result::ok) {
                heard.lock().unwrap().push_str(&(l + "\n"));
            }
        });
    }
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-trim"), Some(256 * MIB)).unwrap();
    let cfg = local_config("[notify]\ndbus = \"on\"\n");
    let cfg_path = cfg.join("memorch.toml");
    let domain = format!("cgroup:{}", sb.path);
    let d = DaemonGuard::start_with_env(
        &["--config", cfg_path.to_str().unwrap(), "--domain", &domain, "--preset", "memorch:trim=on"],
        &[("DBUS_SYSTEM_BUS_ADDRESS", &bus.address)],
    );
    let rx = d.events();
    let sock = d.socket.to_str().unwrap().to_string();
    let listener =
        spawn_app(&mut sb, &["--class", "cached"], &["--anon-mb", "8", "--cache-mb", "64", "--trim-socket", &sock])
            .id();
    // The margins the daemon serves are the ones it acts on: 12 % and 5 % of the domain.
    let m = d.request(&Request::Margins {});
    assert_eq!(m["data"]["moderate_kib"].as_u64(), Some(256 * 1024 * 12 / 100), "{m}");
    assert_eq!(m["data"]["critical_kib"].as_u64(), Some((256.0 * 1024.0 * 0.05) as u64), "{m}");
    let text = ok(&["ctl", "--socket", &sock, "margins"]);
    assert!(
        text.contains("moderate      30.7 MiB") && text.contains("critical      12.8 MiB"),
        "memorch ctl margins says them: {text}"
    );
    // 72 MiB of the listener and up to 150 of the grower: past the moderate margin (46 MiB
    // available) but short of the kill margin (13 MiB) whatever the listener does.
    grower(&mut sb, 150);
    let evs = collect_events(&rx, Duration::from_secs(30), |e| e.iter().any(|v| v["event"] == "trim"));
    let first = |f: &dyn Fn(&serde_json::Value) -> bool| evs.iter().position(&f);
    let trim = first(&|v| v["event"] == "trim")
        .unwrap_or_else(|| panic!("a trim notice came as memory grew: {evs:?}\n{}", d.log()));
    let harm = first(&|v| {
        v["event"] == "action" && v["done"] == true && matches!(v["action"].as_str(), Some("compact" | "kill"))
    });
    assert!(harm.is_none_or(|h| trim < h), "the notice came before any compression or kill: {evs:?}");
    assert!(alive(listener), "the listener was not killed");
    // It dropped its 64 MiB cache; memorch measured it.
    assert!(
        testkit::wait_for(Duration::from_secs(10), || d.status()["data"]["counters"]["trim_freed_bytes"]
            .as_u64()
            .unwrap_or(0)
            >= 48 * MIB),
        "what the app gave back is counted: {}\n{}",
        d.status(),
        d.log()
    );
    assert!(
        testkit::wait_for(Duration::from_secs(5), || heard
            .lock()
            .unwrap()
            .contains("org.freedesktop.LowMemoryMonitor.LowMemoryWarning (byte ")),
        "gdbus heard the freedesktop signal: {:?}\n{}",
        heard.lock().unwrap(),
        d.log()
    );
    let _ = monitor.kill();
    let _ = monitor.wait();
    drop(d);
    drop(bus);
    sb.destroy().unwrap();
}

/// A pre-kill hook that hangs holds a kill back no longer than its bound, is told which app
/// and why, and is killed; the victim's end is told with why and what came back.
#[test]
fn a_hanging_pre_kill_hook_delays_a_kill_by_no_more_than_its_bound() {
    if !testkit::sandbox_facility() {
        return;
    }
    // With swap on (another test's zram), memorch would rightly compress the victim instead.
    let _lock = testkit::machine_test_lock();
    if !testkit::no_foreign_swap() {
        return;
    }
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-hook"), Some(192 * MIB)).unwrap();
    let out = testkit::TempDir::new("memorch-hook-out");
    let (told, niced) = (out.join("told"), out.join("niced"));
    let hook = format!(
        "echo \"$MEMORCH_PID $MEMORCH_APP $MEMORCH_CLASS $MEMORCH_REASON\" >> {}; nice > {}; sleep 61 & setsid sleep 62 & exec sleep 60",
        told.display(),
        niced.display()
    );
    let cfg = local_config(&format!("[notify]\ndbus = \"off\"\npre_kill = '{hook}'\npre_kill_wait_ms = 300\n"));
    let cfg_path = cfg.join("memorch.toml");
    let domain = format!("cgroup:{}", sb.path);
    let d = DaemonGuard::start(&[
        "--config",
        cfg_path.to_str().unwrap(),
        "--domain",
        &domain,
        "--preset",
        "memorch:freeze=off",
    ]);
    let rx = d.events();
    let victim = spawn_app(&mut sb, &["--class", "cached"], &["--anon-mb", "48"]).id();
    // 48 MiB of the victim and up to 170 of the grower do not fit in 192: memorch kills the
    // cached victim at its critical margin (9.6 MiB available), long before the kernel would.
    grower(&mut sb, 170);
    let evs = collect_events(&rx, Duration::from_secs(40), |e| e.iter().any(|v| v["event"] == "victim_gone"));
    let pre = evs
        .iter()
        .find(|v| v["event"] == "pre_kill")
        .unwrap_or_else(|| panic!("a kill was announced: {evs:?}\n{}", d.log()));
    assert_eq!(pre["pid"].as_u64(), Some(victim as u64), "the cached app is the one to go: {pre}");
    assert_eq!(pre["wait_ms"].as_u64(), Some(300));
    let kill = evs
        .iter()
        .find(|v| v["event"] == "action" && v["action"] == "kill" && v["done"] == true)
        .expect("the kill went ahead");
    let waited_ms =
        kill["wake_to_act_us"].as_u64().unwrap() as f64 / 1000.0 - kill["decided_us"].as_u64().unwrap() as f64 / 1000.0;
    assert!(waited_ms >= 300.0, "the kill waited for the hook: {waited_ms} ms");
    // Its bound, with room for a loaded machine to spawn and reap the hook.
    assert!(waited_ms < 300.0 + 250.0, "no longer than its bound: {waited_ms} ms");
    let text = std::fs::read_to_string(&told).unwrap_or_default();
    assert!(
        text.starts_with(&format!("{victim} ")) && text.contains("cached"),
        "the hook was told which app and why: {text:?}"
    );
    let gone = evs.iter().find(|v| v["event"] == "victim_gone").expect("the victim's end was told");
    assert!(
        !gone["reason"].as_str().unwrap_or("").is_empty() && gone["regained_bytes"].as_u64().is_some(),
        "with why and what came back: {gone}"
    );
    assert_eq!(
        std::fs::read_to_string(&niced).unwrap_or_default().trim(),
        "0",
        "at the apps' priority, not the daemon's"
    );
    // The hook past its bound was killed, its sleeps with it (in the background, and in a
    // session of its own too).
    let running = |cmd: &str| {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .any(|e| std::fs::read_to_string(e.path().join("cmdline")).is_ok_and(|c| c == cmd))
    };
    assert!(
        testkit::wait_for(Duration::from_secs(5), || ["60", "61", "62"]
            .iter()
            .all(|s| !running(&format!("sleep\x00{s}\x00")))),
        "no hook left running"
    );
    drop(d);
    sb.destroy().unwrap();
}
