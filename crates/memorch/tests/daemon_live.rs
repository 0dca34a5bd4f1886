//! `memorch run` on live sandbox domains: the ladder under a growing load, a launch met in one
//! batch, dry runs that change nothing, a clean SIGTERM, and a socket that survives garbage.

mod common;
use common::*;
use memorch_core::Class;
use memorch_linux::{sandbox::Sandbox, testkit};
use memorch_protocol::Request;
use serde_json::Value;
use std::time::Duration;

fn kind(v: &Value) -> &str {
    v["action"].as_str().unwrap_or("")
}

fn done_actions(evs: &[Value]) -> Vec<&Value> {
    evs.iter().filter(|v| v["event"] == "action" && v["done"] == true).collect()
}

/// A config file and the swap-file directory it names: both removed on drop, also when the
/// test fails.
struct TempConfig {
    path: std::path::PathBuf,
    swap_dir: std::path::PathBuf,
}

impl std::ops::Deref for TempConfig {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.path
    }
}

impl AsRef<std::path::Path> for TempConfig {
    fn as_ref(&self) -> &std::path::Path {
        &self.path
    }
}

impl Drop for TempConfig {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        let _ = std::fs::remove_dir_all(&self.swap_dir);
    }
}

/// A config with a fast loop, swap files (if any) in a temp dir, and `extra`.
fn fast_config(extra: &str) -> TempConfig {
    loop_config(1000, extra)
}

/// A config with a tick of 200 ms, a full look every `full_ms`, swap files (if any) in a
/// temp dir, and `extra`.
fn loop_config(full_ms: u64, extra: &str) -> TempConfig {
    let p = std::env::temp_dir().join(format!("{}.toml", testkit::unique_name("memorch-cfg")));
    let dir = std::env::temp_dir().join(testkit::unique_name("memorch-swapfiles"));
    let swap_dir = format!("swap_file_dir = \"{}\"\n", dir.display());
    let extra = if extra.contains("[manage]\n") {
        extra.replace("[manage]\n", &format!("[manage]\n{swap_dir}"))
    } else {
        format!("{extra}[manage]\n{swap_dir}")
    };
    std::fs::write(&p, format!("[loop]\ntick_ms = 200\nfull_snapshot_ms = {full_ms}\n{extra}")).unwrap();
    TempConfig { path: p, swap_dir: dir }
}

#[test]
fn memorch_compresses_before_it_kills_and_spares_the_foreground() {
    if !testkit::zram_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    if !testkit::no_foreign_swap() {
        return;
    }
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-ladder"), Some(384 * MIB)).unwrap();
    let cfg = fast_config("");
    // No storage swap files: zram alone must run out (a grown swap file can absorb the whole
    // load, and then no kill is due; seen once in CI).
    let d = DaemonGuard::start(&[
        "--config",
        cfg.to_str().unwrap(),
        "--domain",
        &format!("cgroup:{}", sb.path),
        "--preset",
        "memorch:swap_files=off",
    ]);
    let rx = d.events();
    let fg =
        spawn_app(&mut sb, &["--class", "foreground"], &["--anon-mb", "48", "--content", "mixed", "--name", "fg-app"])
            .id();
    let mut cached = Vec::new();
    for i in 0..9 {
        // Incompressible-heavy apps: zram cannot absorb them all, so kills must come.
        let seed = (i + 10).to_string();
        let c = spawn_app(
            &mut sb,
            &["--class", "cached"],
            &["--anon-mb", "56", "--content", if i % 2 == 0 { "mixed" } else { "random" }, "--seed", &seed],
        )
        .id();
        cached.push(c);
    }
    let evs = collect_events(&rx, Duration::from_secs(30), |e| done_actions(e).iter().any(|a| kind(a) == "kill"));
    let acts = done_actions(&evs);
    let first_compact = acts.iter().position(|a| kind(a) == "compact");
    let first_kill = acts.iter().position(|a| kind(a) == "kill");
    assert!(
        first_kill.is_some(),
        "the load needs kills; saw {:?}\n{}",
        acts.iter().map(|a| kind(a)).collect::<Vec<_>>(),
        d.log()
    );
    assert!(
        first_compact.is_some_and(|c| c < first_kill.unwrap()),
        "compress before kill: {:?}",
        acts.iter().map(|a| kind(a)).collect::<Vec<_>>()
    );
    for k in acts.iter().filter(|a| kind(a) == "kill") {
        for v in k["victims"].as_array().unwrap() {
            assert_ne!(v["class"], "foreground", "{k}");
            assert!(cached.contains(&(v["pid"].as_u64().unwrap() as u32)));
        }
    }
    assert!(alive(fg), "the foreground app survives");
    // The squeezes were timed on the daemon's thread, which compresses: the cost model's CPU a
    // page into zram, as `ctl status` shows it.
    let costs = d.status()["data"]["device_costs"].clone();
    assert!(costs["zram_cpu_us"].as_f64().is_some_and(|us| us > 0.0), "a squeeze into zram priced: {costs}");
    drop(d);
    drop(cfg);
}

#[test]
fn a_launch_larger_than_free_memory_is_met_in_one_batch() {
    if !testkit::zram_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-launch"), Some(512 * MIB)).unwrap();
    let cfg = fast_config("[manage]\nzram = false\n");
    // No storage swap files: a file sized to the launch would cover it, and no kill is due.
    let d = DaemonGuard::start(&[
        "--config",
        cfg.to_str().unwrap(),
        "--domain",
        &format!("cgroup:{}", sb.path),
        "--preset",
        "memorch:swap_files=off",
    ]);
    let mut cached = Vec::new();
    for i in 0..6 {
        cached.push(
            spawn_app(
                &mut sb,
                &["--class", "cached"],
                &["--anon-mb", "64", "--content", "random", "--seed", &i.to_string()],
            )
            .id(),
        );
    }
    let rx = d.events();
    let ans = d.request(&Request::Launch { app: "big-game".into(), expect_mb: Some(300) });
    assert_eq!(ans["ok"], true, "{ans}");
    // What the launch decided, and anything after it for a few seconds.
    let evs = collect_events(&rx, Duration::from_secs(4), |_| false);
    let kills: Vec<&Value> = done_actions(&evs).into_iter().filter(|a| kind(a) == "kill").collect();
    assert_eq!(kills.len(), 1, "one batch, not a kill per pressure event: {kills:?}\n{}", d.log());
    let victims = kills[0]["victims"].as_array().unwrap();
    assert!(victims.len() >= 2, "300 MB needs several 64 MB apps at once: {}", kills[0]);
    assert_eq!(kills[0]["reason"]["step"], "before_launch");
    let gone = victims.iter().filter(|v| !alive(v["pid"].as_u64().unwrap() as u32)).count();
    assert!(
        testkit::wait_for(Duration::from_secs(5), || victims.iter().all(|v| !alive(v["pid"].as_u64().unwrap() as u32))),
        "{gone} gone"
    );
    drop(d);
    drop(cfg);
}

/// memorch (`ahead.launch_waits = false`, as shipped) answers a launch at once and secures its
/// room right after, beside the app's start (a launcher that waits adds up to 0.4 s to each
/// large launch); where the launcher waits (MOS's order) it answers once it has acted.
#[test]
fn a_launch_is_answered_at_once_or_after_acting_as_the_preset_says() {
    if !testkit::zram_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    for (preset, waits) in [("memorch", false), ("memorch:ahead.launch_waits=true", true)] {
        let mut sb = Sandbox::create(&testkit::unique_name("memorch-answer"), Some(512 * MIB)).unwrap();
        let cfg = fast_config("[manage]\nzram = false\n");
        let d = DaemonGuard::start(&[
            "--config",
            cfg.to_str().unwrap(),
            "--domain",
            &format!("cgroup:{}", sb.path),
            "--preset",
            preset,
        ]);
        for i in 0..6 {
            spawn_app(
                &mut sb,
                &["--class", "cached"],
                &["--anon-mb", "64", "--content", "random", "--seed", &i.to_string()],
            );
        }
        let rx = d.events();
        let ans = d.request(&Request::Launch { app: "big-game".into(), expect_mb: Some(300) });
        assert_eq!(ans["ok"], true, "{preset}: {ans}");
        assert_eq!(
            ans["data"]["decided"], waits,
            "{preset}: decided before the answer only where the launcher waits: {ans}"
        );
        // Secured by compression and kills, or by a storage swap file sized to it.
        let secures = |a: &Value| {
            a["reason"]["step"] == "before_launch"
                || (a["reason"]["step"] == "adaptive_swap"
                    && a["reason"]["text"].as_str().is_some_and(|t| t.contains("launching 'big-game'")))
        };
        let evs = collect_events(&rx, Duration::from_secs(4), |e| done_actions(e).iter().any(|a| secures(a)));
        assert!(
            done_actions(&evs).iter().any(|a| secures(a)),
            "{preset}: the launch is secured either way: {evs:?}\n{}",
            d.log()
        );
        drop(d);
        drop(cfg);
    }
}

#[test]
fn dry_run_changes_nothing() {
    if !testkit::zram_facility() || !testkit::ksm_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    let swaps = testkit::Leftovers::now();
    let ksm = std::fs::read_to_string("/sys/kernel/mm/ksm/run").unwrap();
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-dry"), Some(256 * MIB)).unwrap();
    let mut pids = Vec::new();
    for i in 0..4 {
        pids.push(
            spawn_app(
                &mut sb,
                &["--class", "cached", "--ksm"],
                &["--anon-mb", "56", "--content", "text", "--seed", &i.to_string()],
            )
            .id(),
        );
    }
    let swap_before: Vec<u64> = pids.iter().map(|&p| status_kib(p, "VmSwap")).collect();
    let cfg = fast_config("");
    let d = DaemonGuard::start(&[
        "--config",
        cfg.to_str().unwrap(),
        "--domain",
        &format!("cgroup:{}", sb.path),
        "--dry-run",
    ]);
    let rx = d.events();
    assert_eq!(d.request(&Request::Screen { on: false })["ok"], true);
    assert_eq!(d.request(&Request::Launch { app: "big".into(), expect_mb: Some(200) })["ok"], true);
    let evs = collect_events(&rx, Duration::from_secs(3), |_| false);
    let proposed: Vec<&Value> = evs.iter().filter(|v| v["event"] == "action" && v["action"] != "nothing").collect();
    assert!(!proposed.is_empty(), "the dry run should have had things to do: {evs:?}");
    assert!(proposed.iter().all(|v| v["done"] == false && v["dry_run"] == true));
    assert!(d.log().contains("dry-run: would"), "{}", d.log());
    assert!(pids.iter().all(|&p| alive(p)), "no process killed");
    assert_eq!(pids.iter().map(|&p| status_kib(p, "VmSwap")).collect::<Vec<_>>(), swap_before, "nothing compacted");
    assert_eq!(testkit::Leftovers::now().new_swap_since(&swaps), Vec::<String>::new(), "no zram set up");
    assert_eq!(std::fs::read_to_string("/sys/kernel/mm/ksm/run").unwrap(), ksm);
    drop(d);
    drop(cfg);
}

#[test]
fn memorch_run_becomes_memorchd_and_runs_in_process_without_it() {
    let sb = Sandbox::create(&testkit::unique_name("memorch-exec"), Some(64 * MIB)).unwrap();
    let domain = format!("cgroup:{}", sb.path);
    let cfg = fast_config("");
    let args = ["--config", cfg.to_str().unwrap(), "--domain", &domain, "--dry-run"];
    let exe_of = |d: &DaemonGuard| std::fs::read_link(format!("/proc/{}/exe", d.child.id())).unwrap();
    // Beside memorchd (as cargo builds and installs them), `memorch run` is memorchd, in
    // the same process.
    let d = DaemonGuard::start(&args);
    assert_eq!(exe_of(&d), std::fs::canonicalize(env!("CARGO_BIN_EXE_memorchd")).unwrap());
    assert_eq!(d.status()["ok"], true, "{}", d.log());
    drop(d);
    // Alone, it runs the daemon itself.
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(testkit::unique_name("memorch-alone"));
    std::fs::create_dir_all(&dir).unwrap();
    let alone = dir.join("memorch");
    std::fs::hard_link(env!("CARGO_BIN_EXE_memorch"), &alone)
        .or_else(|_| std::fs::copy(env!("CARGO_BIN_EXE_memorch"), &alone).map(drop))
        .unwrap();
    let d = DaemonGuard::start_binary(&alone, &args, &[]);
    assert_eq!(exe_of(&d), alone);
    assert_eq!(d.status()["ok"], true, "{}", d.log());
    drop(d);
    std::fs::remove_dir_all(&dir).unwrap();
    drop(cfg);
}

#[test]
fn sigterm_stops_within_two_seconds_and_restores_zram_and_ksm() {
    if !testkit::zram_facility() || !testkit::ksm_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    if !testkit::no_foreign_swap() {
        return;
    }
    let swaps = testkit::Leftovers::now();
    let ksm = |f: &str| std::fs::read_to_string(format!("/sys/kernel/mm/ksm/{f}")).unwrap();
    let (run0, pages0, sleep0) = (ksm("run"), ksm("pages_to_scan"), ksm("sleep_millisecs"));
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-term"), Some(256 * MIB)).unwrap();
    for i in 0..2 {
        spawn_app(
            &mut sb,
            &["--class", "cached", "--ksm"],
            &["--anon-mb", "8", "--content", "text", "--seed", &i.to_string()],
        );
    }
    let cfg = fast_config("");
    let mut d = DaemonGuard::start(&[
        "--config",
        cfg.to_str().unwrap(),
        "--domain",
        &format!("cgroup:{}", sb.path),
        "--preset",
        "memorch",
    ]);
    assert!(!testkit::Leftovers::now().new_swap_since(&swaps).is_empty(), "the daemon set up zram");
    let rx = d.events();
    assert_eq!(d.request(&Request::Screen { on: false })["ok"], true);
    let evs = collect_events(&rx, Duration::from_secs(5), |e| done_actions(e).iter().any(|a| kind(a) == "ksm"));
    assert!(done_actions(&evs).iter().any(|a| kind(a) == "ksm"), "idle with sibling mergeable apps: KSM runs: {evs:?}");
    assert_eq!(ksm("run").trim(), "1");
    let took = d.stop();
    assert!(took <= Duration::from_secs(2), "SIGTERM took {took:?}");
    assert_eq!(testkit::Leftovers::now().new_swap_since(&swaps), Vec::<String>::new(), "zram removed");
    assert_eq!(
        (ksm("run"), ksm("pages_to_scan"), ksm("sleep_millisecs")),
        (run0, pages0, sleep0),
        "KSM settings restored"
    );
    let log = d.log();
    assert!(
        log.contains("everything memorch changed is put back")
            && log.contains("put KSM back")
            && log.contains("removed its zram"),
        "{log}"
    );
    drop(cfg);
}

#[test]
fn after_a_sigkill_the_next_start_puts_the_machine_back_and_says_so() {
    if !testkit::zram_facility() || !testkit::ksm_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    if !testkit::no_foreign_swap() {
        return;
    }
    let swaps = testkit::Leftovers::now();
    let ksm = |f: &str| std::fs::read_to_string(format!("/sys/kernel/mm/ksm/{f}")).unwrap();
    let ksm_before = (ksm("run"), ksm("pages_to_scan"), ksm("sleep_millisecs"));
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-crash"), Some(256 * MIB)).unwrap();
    for i in 0..2 {
        spawn_app(
            &mut sb,
            &["--class", "cached", "--ksm"],
            &["--anon-mb", "8", "--content", "text", "--seed", &i.to_string()],
        );
    }
    let cfg = fast_config("");
    let domain = format!("cgroup:{}", sb.path);
    let mut d = DaemonGuard::start(&["--config", cfg.to_str().unwrap(), "--domain", &domain]);
    let rx = d.events();
    assert_eq!(d.request(&Request::Screen { on: false })["ok"], true);
    let evs = collect_events(&rx, Duration::from_secs(5), |e| done_actions(e).iter().any(|a| kind(a) == "ksm"));
    assert!(done_actions(&evs).iter().any(|a| kind(a) == "ksm"), "KSM runs at idle: {evs:?}");
    assert!(!testkit::Leftovers::now().new_swap_since(&swaps).is_empty(), "the daemon set up zram");
    // No destructor runs after SIGKILL: zram and KSM stay as the daemon set them…
    d.child.kill().unwrap();
    d.child.wait().unwrap();
    assert!(!testkit::Leftovers::now().new_swap_since(&swaps).is_empty());
    assert_eq!(ksm("run").trim(), "1");
    // A dry run only says what it would put back…
    let mut dry = DaemonGuard::start(&["--config", cfg.to_str().unwrap(), "--domain", &domain, "--dry-run"]);
    let log = dry.log();
    assert!(log.contains("would put back zram") && log.contains("would put KSM back"), "{log}");
    assert!(!testkit::Leftovers::now().new_swap_since(&swaps).is_empty(), "a dry run swaps nothing off");
    assert_eq!(ksm("run").trim(), "1", "nor puts KSM back");
    dry.stop();
    // …the next armed memorch puts them back before anything else, and says so.
    let local = fast_config("[manage]\nzram = false\nksm = false\nswap_files = false\n");
    let mut next = DaemonGuard::start(&["--config", local.to_str().unwrap(), "--domain", &domain]);
    let log = next.log();
    assert!(log.contains("put back zram") && log.contains("put KSM back"), "{log}");
    assert_eq!(
        testkit::Leftovers::now().new_swap_since(&swaps),
        Vec::<String>::new(),
        "its zram is gone, so the new daemon did not take it for the machine's swap"
    );
    assert_eq!((ksm("run"), ksm("pages_to_scan"), ksm("sleep_millisecs")), ksm_before, "KSM as it was");
    next.stop();
    assert!(next.log().contains("memorch had changed nothing machine-wide"), "{}", next.log());
    drop(cfg);
}

#[test]
fn thousands_of_malformed_lines_leave_the_daemon_answering() {
    if !testkit::sandbox_facility() {
        return;
    }
    use std::io::{Read, Write};
    let sb = Sandbox::create(&testkit::unique_name("memorch-fuzz"), Some(128 * MIB)).unwrap();
    let mut d = DaemonGuard::start(&["--domain", &format!("cgroup:{}", sb.path), "--dry-run"]);
    let mut seed = 0x1234_5678_u64;
    let mut next = || {
        seed = memorch_bench::content::splitmix(seed);
        seed
    };
    // Requests as clients write them, then broken: wrong types, missing fields, values out
    // of range, unknown fields; and lines that are not requests at all.
    let line = |r: Request| r.line().trim_end().to_string();
    let templates: Vec<String> = vec![
        line(Request::state(7, Class::Cached)).replace(":7,", ":\"x\","),
        line(Request::Launch { app: "a".into(), expect_mb: Some(5) }).replace(":5", ":-5"),
        line(Request::Explain { pid: 3 }).replace(",\"pid\":3", ""),
        line(Request::Screen { on: true }).replace("true", "\"maybe\""),
        line(Request::state(u32::MAX, Class::Foreground)),
        line(Request::Launched { app: String::new(), pid: 1, ms: 1, cold: true }),
        line(Request::Home {}).replace('}', ",\"x\":[1,2,{\"y\":null}]}"),
        "{".into(),
        "}".into(),
        "[]".into(),
        "null".into(),
        "\"home\"".into(),
    ];
    for round in 0..20 {
        let mut s = std::os::unix::net::UnixStream::connect(&d.socket).unwrap();
        let mut blob = Vec::new();
        for i in 0..250 {
            match next() % 4 {
                0 => blob.extend((0..next() % 200).map(|_| (next() % 256) as u8)),
                1 => blob.extend_from_slice(templates[(next() % templates.len() as u64) as usize].as_bytes()),
                2 if i % 50 == 0 => blob.extend(std::iter::repeat_n(b'{', 40_000)),
                _ => blob.extend_from_slice(
                    line(Request::State {
                        pid: (next() % 100_000) as u32,
                        class: ["cached", "bogus", ""][(next() % 3) as usize].into(),
                    })
                    .as_bytes(),
                ),
            }
            blob.push(b'\n');
        }
        if round % 3 == 0 {
            blob.truncate(blob.len() / 2); // hang up mid-line
        }
        let _ = s.write_all(&blob);
        s.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
        let mut sink = vec![0u8; 1 << 20];
        let _ = s.read(&mut sink);
    }
    assert!(d.child.try_wait().unwrap().is_none(), "the daemon is alive: {}", d.log());
    let st = d.status();
    assert_eq!(st["ok"], true, "{st}");
    // Every connection was read until the daemon cut it (16 bad requests in a row): how many
    // more it counted depends on how the bytes arrived, so only the floor is asserted.
    assert!(
        st["data"]["counters"]["bad_requests"].as_u64().unwrap() >= 20 * memorch_daemon::server::MAX_BAD_LINES as u64,
        "{st}"
    );
}

#[test]
fn config_errors_name_the_key_and_line_and_defaults_round_trip() {
    let defaults = ok(&["config", "--defaults"]);
    let f = std::env::temp_dir().join(format!("{}.toml", testkit::unique_name("memorch-defaults")));
    std::fs::write(&f, &defaults).unwrap();
    assert!(ok(&["config", "--check", f.to_str().unwrap()]).contains("ok (preset memorch"));
    std::fs::write(&f, "preset = \"memorch\"\n[loop]\ntick_ms = 99999999\n").unwrap();
    let err = fails(&["config", "--check", f.to_str().unwrap()]);
    assert!(err.contains("line 3") && err.contains("loop.tick_ms"), "{err}");
    let err = fails(&["run", "--config", f.to_str().unwrap()]);
    assert!(err.contains("line 3"), "{err}");
    std::fs::remove_file(f).unwrap();
}

#[test]
fn sighup_keeps_the_old_config_when_the_new_one_is_bad() {
    if !testkit::sandbox_facility() {
        return;
    }
    let sb = Sandbox::create(&testkit::unique_name("memorch-hup"), Some(128 * MIB)).unwrap();
    let cfg = fast_config("");
    let d = DaemonGuard::start(&[
        "--config",
        cfg.to_str().unwrap(),
        "--domain",
        &format!("cgroup:{}", sb.path),
        "--dry-run",
    ]);
    assert_eq!(d.status()["data"]["preset"], "memorch");
    let hup = || unsafe { libc::kill(d.child.id() as i32, libc::SIGHUP) };
    // A bad file: rejected, the daemon goes on with the old config.
    std::fs::write(&cfg, "preset = \"nonsense\"\n").unwrap();
    hup();
    assert!(testkit::wait_for(Duration::from_secs(5), || d.log().contains("new config rejected")), "{}", d.log());
    let st = d.status();
    assert_eq!(st["data"]["preset"], "memorch", "{st}");
    // A good one: applied.
    std::fs::write(&cfg, "preset = \"lmkd\"\n[loop]\ntick_ms = 200\n").unwrap();
    hup();
    assert!(testkit::wait_for(Duration::from_secs(5), || d.status()["data"]["preset"] == "lmkd"), "{}", d.log());
    drop(d);
    drop(cfg);
}

#[test]
fn ctl_speaks_to_the_daemon() {
    if !testkit::sandbox_facility() {
        return;
    }
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-ctl"), Some(256 * MIB)).unwrap();
    let pid = spawn_app(&mut sb, &["--class", "cached"], &["--anon-mb", "8", "--name", "ctl-app"]).id();
    let d = DaemonGuard::start(&["--domain", &format!("cgroup:{}", sb.path), "--dry-run"]);
    let sock = d.socket.to_str().unwrap().to_string();
    let ctl = |args: &[&str]| {
        let mut a = vec!["ctl", "--socket", sock.as_str()];
        a.extend_from_slice(args);
        ok(&a)
    };
    let status: Value = serde_json::from_str(&ctl(&["--json", "status"])).unwrap();
    assert_eq!(status["dry_run"], true);
    assert!(status["apps"].as_u64().unwrap() >= 1, "{status}");
    let text = ctl(&["status"]);
    assert!(text.contains(&format!("preset memorch on cgroup:{}", sb.path)) && text.contains("dry run"), "{text}");
    assert!(text.lines().count() <= 12 && text.contains("available"), "one screen, for people: {text}");
    let ex: Value = serde_json::from_str(&ctl(&["--json", "explain", &pid.to_string()])).unwrap();
    // Its identity: the name it runs under and a hash of its arguments and group.
    assert!(ex["app"].as_str().unwrap().starts_with("ctl-app#"), "{ex}");
    assert_eq!(ex["class"], "cached");
    assert_eq!(ex["kill_rank"], 1, "the only cached app dies first: {ex}");
    let text = ctl(&["explain", &pid.to_string()]);
    assert!(text.starts_with("ctl-app#") && text.contains("1 of 1 in the kill order"), "for people: {text}");
    assert_eq!(ctl(&["state", &pid.to_string(), "empty"]).trim(), "ok");
    assert_eq!(ctl(&["launched", "ctl-app", "--pid", &pid.to_string(), "--ms", "700", "--cold"]).trim(), "ok");
    assert_eq!(ctl(&["home"]).trim(), "ok");
    assert!(ctl(&["metrics"]).contains("# TYPE memorch_decisions_total counter"));
    let err = fails(&["ctl", "--socket", &sock, "explain", "1"]);
    assert!(err.contains("memorch refused") && err.contains("not in domain"), "{err}");
    let err = fails(&["ctl", "--socket", "/nonexistent/memorch.sock", "status"]);
    assert!(err.contains("is memorch running"), "{err}");
    let state_dir = d.state_dir.clone();
    drop(d);
    assert!(!state_dir.exists(), "a dry run writes no state: {}", state_dir.display());
}

/// A dry-run daemon on `sb` with a full look a minute (reports fall between two), once it has
/// seen its `apps`; with its config, which must outlive it.
fn daemon_looking_each_minute(sb: &Sandbox, apps: u64) -> (DaemonGuard, TempConfig) {
    daemon_each_minute(sb, apps, &["--dry-run"], "")
}

/// [`daemon_looking_each_minute`] with these arguments and config lines instead of a dry run.
fn daemon_each_minute(sb: &Sandbox, apps: u64, args: &[&str], extra: &str) -> (DaemonGuard, TempConfig) {
    let cfg = loop_config(60_000, extra);
    let domain = format!("cgroup:{}", sb.path);
    let mut all = vec!["--config", cfg.to_str().unwrap(), "--domain", &domain];
    all.extend_from_slice(args);
    let d = DaemonGuard::start(&all);
    assert!(
        testkit::wait_for(Duration::from_secs(10), || d.status()["data"]["apps"].as_u64() == Some(apps)),
        "{}",
        d.log()
    );
    (d, cfg)
}

/// One of the daemon's counters (`status`).
fn counter(d: &DaemonGuard, k: &str) -> u64 {
    d.status()["data"]["counters"][k].as_u64().unwrap_or_else(|| panic!("counter {k}"))
}

/// A switch as a launcher reports it: `pid` to `class`, then home (decided before the answer).
fn switch(d: &DaemonGuard, pid: u32, class: &str) {
    assert_eq!(d.request(&Request::State { pid, class: class.into() })["ok"], true);
    assert_eq!(d.request(&Request::Home {})["ok"], true);
}

/// A sandbox of 256 MiB with two apps of 8 MiB: one in front, one cached (their pids).
fn front_and_cached(name: &str) -> (Sandbox, u32, u32) {
    let mut sb = Sandbox::create(&testkit::unique_name(name), Some(256 * MIB)).unwrap();
    let front = spawn_app(&mut sb, &["--class", "foreground"], &["--anon-mb", "8"]).id();
    let cached = spawn_app(&mut sb, &["--class", "cached"], &["--anon-mb", "8"]).id();
    (sb, front, cached)
}

/// Reports of what the user did, with memory plentiful, are decided on the last full look's
/// apps, with no walk of the processes; a report of an app that look did not see takes a full
/// look, which then sees it.
#[test]
fn reports_with_memory_plentiful_are_decided_on_the_last_full_look() {
    if !testkit::sandbox_facility() {
        return;
    }
    let (mut sb, front, cached) = front_and_cached("memorch-reuse");
    let (d, _cfg) = daemon_looking_each_minute(&sb, 2);
    let (full, reused) = (counter(&d, "full_snapshots"), counter(&d, "reused_looks"));
    switch(&d, front, "previous");
    assert_eq!(counter(&d, "reused_looks"), reused + 1, "the switch was decided on the last look: {}", d.log());
    assert_eq!(counter(&d, "full_snapshots"), full, "without a walk of the processes: {}", d.log());
    switch(&d, cached, "foreground");
    assert_eq!(counter(&d, "reused_looks"), reused + 2, "{}", d.log());
    // A launch that finished of an app the last look did not see: a full look, at the next tick.
    let new = spawn_app(&mut sb, &["--class", "foreground"], &["--anon-mb", "8"]).id();
    assert_eq!(d.request(&Request::Launched { app: "new-app".into(), pid: new, ms: 100, cold: true })["ok"], true);
    assert!(
        testkit::wait_for(Duration::from_secs(5), || counter(&d, "full_snapshots") > full),
        "a full look for an app not seen: {}",
        d.log()
    );
    assert_eq!(d.status()["data"]["apps"].as_u64(), Some(3), "which sees it: {}", d.log());
    let ex = d.request(&Request::Explain { pid: new });
    assert_eq!(ex["data"]["app"], "new-app", "under the launcher's name: {ex}");
}

/// A light look leaves out an app that exited since the last full look, a zombie not yet
/// reaped included: the pidfds the daemon holds of the last full look's processes say so, in
/// one poll for all of them.
#[test]
fn a_light_look_leaves_out_an_app_that_exited_since_the_last_full_look() {
    if !testkit::sandbox_facility() {
        return;
    }
    let (sb, front, gone) = front_and_cached("memorch-light-gone");
    let (d, _cfg) = daemon_looking_each_minute(&sb, 2);
    // The test started it and does not reap it: it stays a zombie.
    memorch_linux::pidfd::Pidfd::open(gone).unwrap().send_signal(libc::SIGKILL).unwrap();
    assert!(testkit::wait_for(Duration::from_secs(5), || !alive(gone)), "the app did not exit");
    assert!(std::fs::read_to_string(format!("/proc/{gone}/stat")).is_ok(), "a zombie, not yet reaped");
    switched_on_a_light_look(&d, front, 1, "without the app gone");
}

/// `front` switched away, decided on a light look (no walk of the processes), after which the
/// daemon counts `apps` apps (`what` they are).
fn switched_on_a_light_look(d: &DaemonGuard, front: u32, apps: u64, what: &str) {
    let reused = counter(d, "reused_looks");
    switch(d, front, "previous");
    assert_eq!(counter(d, "reused_looks"), reused + 1, "decided on a light look: {}", d.log());
    assert_eq!(d.status()["data"]["apps"].as_u64(), Some(apps), "{what}: {}", d.log());
}

/// A pid the kernel reused since the last full look is the new process in the light looks
/// after the next full look: the pidfd held of the process that exited is let go and the new
/// one opened, or the new app would be left out of every light look as the old one gone. The
/// reuse is made on demand: the old process reaped, a new one started at its pid (clone3).
#[test]
fn a_pid_reused_is_the_new_process_in_the_light_looks_after_the_next_full_look() {
    if !testkit::sandbox_facility() {
        return;
    }
    let (mut sb, front, old) = front_and_cached("memorch-pid-reuse");
    let (d, _cfg) = daemon_looking_each_minute(&sb, 2);
    let mut child = sb.take_child(old).expect("the sandbox started it");
    child.kill().unwrap();
    child.wait().unwrap();
    let domain = format!("cgroup:{}", sb.path);
    let exe = env!("CARGO_BIN_EXE_memorch");
    let reborn = testkit::spawn_at_pid(
        old,
        &[exe, "spawn", "--domain", &domain, "--class", "cached", "--", exe, "app", "--anon-mb", "8"],
    );
    if !testkit::facility(
        "a process started at a chosen pid (clone3 set_tid)",
        reborn.as_ref().map(|_| ()).map_err(|e| e.clone()),
    ) {
        return;
    }
    let reborn = reborn.unwrap();
    assert_eq!(reborn.pid, old);
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(&reborn.stdout), &mut line).unwrap();
    assert!(line.starts_with("ready "), "the app at the reused pid did not get ready: {line:?}");
    // A launch intent takes a full look, which finds the pid alive again.
    let full = counter(&d, "full_snapshots");
    assert_eq!(d.request(&Request::Launch { app: "reborn".into(), expect_mb: None })["ok"], true);
    assert!(
        testkit::wait_for(Duration::from_secs(5), || counter(&d, "full_snapshots") > full),
        "a full look for the launch: {}",
        d.log()
    );
    switched_on_a_light_look(&d, front, 2, "the app at the reused pid among them");
}

/// Each return a launcher reports counts toward the app's popularity (`fronts` in the learned
/// statistics, half of its chance of a return): the daemon's view has the app in front when
/// the engine hears of the switch, and the return must count all the same.
#[test]
fn each_return_a_launcher_reports_counts_toward_the_apps_popularity() {
    if !testkit::sandbox_facility() {
        return;
    }
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-fronts"), Some(256 * MIB)).unwrap();
    let maps = spawn_app(&mut sb, &["--class", "foreground"], &["--anon-mb", "8", "--name", "maps"]).id();
    let mail = spawn_app(&mut sb, &["--class", "cached"], &["--anon-mb", "8", "--name", "mail"]).id();
    // Armed (a dry run writes no statistics), with nothing machine-wide to manage.
    let (mut d, _cfg) = daemon_each_minute(&sb, 2, &[], "[manage]\nzram = false\nksm = false\nswap_files = false\n");
    let front = |app: &str, pid: u32, launched: bool| {
        if launched {
            // Named as a launcher names it: what its statistics are kept under.
            assert_eq!(d.request(&Request::Launched { app: app.into(), pid, ms: 100, cold: true })["ok"], true);
        }
        // Decided alone, at the next tick, as a visit longer than a tick is (realapps: 1.5 s).
        let before = counter(&d, "decisions");
        assert_eq!(d.request(&Request::State { pid, class: "foreground".into() })["ok"], true);
        assert!(testkit::wait_for(Duration::from_secs(5), || counter(&d, "decisions") > before), "{}", d.log());
    };
    front("maps", maps, true);
    // mail launched, then each app returned to in turn, each switch told as a launcher tells it.
    for (away, back, name, launched) in [
        (maps, mail, "mail", true),
        (mail, maps, "maps", false),
        (maps, mail, "mail", false),
        (mail, maps, "maps", false),
    ] {
        switch(&d, away, "previous");
        front(name, back, launched);
    }
    // Home: decided before the answer, with the last switch.
    assert_eq!(d.request(&Request::Home {})["ok"], true);
    d.stop();
    let file = d.state_dir.join("app-stats.json");
    let stats: Value =
        serde_json::from_slice(&std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))).unwrap();
    let fronts = |app: &str| stats["stats"]["apps"][app]["fronts"].as_u64();
    // A launch each, and the returns: two to maps, one to mail.
    assert_eq!((fronts("maps"), fronts("mail")), (Some(3), Some(2)), "{stats:#}\n{}", d.log());
}

/// With memory short, the same report takes a full look: the figures a step acts on are fresh.
#[test]
fn a_report_with_memory_short_takes_a_full_look() {
    if !testkit::sandbox_facility() {
        return;
    }
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-reuse-short"), Some(96 * MIB)).unwrap();
    // 80 of 96 MiB: available under the 30 % at which a decision is worth taking at once.
    let front = spawn_app(&mut sb, &["--class", "foreground"], &["--anon-mb", "80"]).id();
    let (d, _cfg) = daemon_looking_each_minute(&sb, 1);
    let (full, reused) = (counter(&d, "full_snapshots"), counter(&d, "reused_looks"));
    switch(&d, front, "previous");
    assert_eq!(counter(&d, "reused_looks"), reused, "no light look with memory short: {}", d.log());
    assert!(counter(&d, "full_snapshots") > full, "{}", d.log());
}

#[test]
fn under_pressure_unshared_shared_objects_go_first() {
    if !testkit::zram_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    if !testkit::no_foreign_swap() {
        return;
    }
    let dir = testkit::TempDir::new("memorch-so");
    // Room for all three apps at first: the pressure must come when every library is mapped
    // (an app met while it still loads has none to drop yet; CI saw exactly that).
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-so"), Some(512 * MIB)).unwrap();
    // The daemon first: it sets up the zram the apps will press into. `memorch` has SWAM's
    // order off by measurement (docs/results.md): switched on here. A high low band (40 %)
    // puts available memory under it with the limit still above what is used: file pages
    // count as available, and the kernel must not drop the libraries itself.
    let cfg = fast_config("");
    let d = DaemonGuard::start(&[
        "--config",
        cfg.to_str().unwrap(),
        "--domain",
        &format!("cgroup:{}", sb.path),
        "--preset",
        "memorch:so_first=on,detection.low_available_frac=0.4",
    ]);
    let rx = d.events();
    let mut apps = Vec::new();
    let mut libs = Vec::new();
    for i in 0..3 {
        // A library only this app maps: what SWAM's OOM cleaner drops first.
        let lib = dir.join(format!("libapp{i}.so"));
        let pid = spawn_app(
            &mut sb,
            &["--class", "cached"],
            &[
                "--anon-mb",
                "70",
                "--content",
                "text",
                "--seed",
                &i.to_string(),
                "--file",
                lib.to_str().unwrap(),
                "--file-mb",
                "16",
            ],
        )
        .id();
        apps.push(pid);
        libs.push(lib.to_str().unwrap().to_string());
    }
    // Now the pressure: the limit 24 MiB above what is used.
    let usage_file = sb
        .v1_memory
        .clone()
        .map(|d| d.join("memory.usage_in_bytes"))
        .unwrap_or_else(|| sb.v2.clone().unwrap().join("memory.current"));
    let usage: u64 = std::fs::read_to_string(&usage_file).unwrap().trim().parse().unwrap();
    sb.set_limit(usage + 24 * MIB).unwrap();
    let evs = collect_events(&rx, Duration::from_secs(20), |e| {
        done_actions(e).iter().any(|a| a["scope"] == "shared_objects")
    });
    let so: Vec<&Value> = done_actions(&evs).into_iter().filter(|a| a["scope"] == "shared_objects").collect();
    assert!(
        !so.is_empty(),
        "no shared-object compaction: {:?}\n{}",
        done_actions(&evs)
            .iter()
            .map(|a| (kind(a), a["scope"].clone(), a["reason"]["fields"].clone()))
            .collect::<Vec<_>>(),
        d.log()
    );
    let pid = so[0]["pid"].as_u64().unwrap() as u32;
    let i = apps.iter().position(|&p| p == pid).expect("one of the apps");
    // Before any anonymous step of this app.
    let first_for_pid = done_actions(&evs).into_iter().find(|a| a["action"] == "compact" && a["pid"] == pid).unwrap();
    assert_eq!(first_for_pid["scope"], "shared_objects", "shared objects first");
    // Measured apart from the daemon: what of the library is resident now.
    let lib_rss: u64 = memorch_linux::maps::read_smaps(&memorch_linux::SysRoot::live(), pid)
        .unwrap()
        .iter()
        .filter(|s| s.vma.path == libs[i])
        .map(|s| s.rss_bytes)
        .sum();
    assert!(lib_rss <= 4 * MIB, "its library pages were dropped: {} resident of 16 MiB", lib_rss / MIB);
    drop(d);
    drop(sb);
    drop(dir);
    drop(cfg);
}

/// No launcher talks to the daemon; something else (as Android's activity manager does)
/// rewrites the apps' oom_score_adj on a switch. The daemon infers the switch and runs its
/// home step, which nothing told it about.
#[test]
fn a_switch_seen_only_in_oom_score_adj_runs_the_home_step() {
    if !testkit::zram_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    if !testkit::no_foreign_swap() {
        return;
    }
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-infer"), Some(192 * MIB)).unwrap();
    let cfg = fast_config("");
    // A launch threshold above what stays free here, so the home step has work to do.
    let d = DaemonGuard::start(&[
        "--config",
        cfg.to_str().unwrap(),
        "--domain",
        &format!("cgroup:{}", sb.path),
        "--preset",
        "memorch:ahead.threshold_frac=0.3",
    ]);
    let rx = d.events();
    let front = spawn_app(
        &mut sb,
        &["--class", "foreground"],
        &["--anon-mb", "40", "--content", "mixed", "--file-mb", "8", "--file", "/tmp/memorch-infer-front.bin"],
    )
    .id();
    let mut cached = Vec::new();
    for i in 0..4 {
        cached.push(
            spawn_app(
                &mut sb,
                &["--class", "cached"],
                &["--anon-mb", "34", "--content", "mixed", "--seed", &i.to_string()],
            )
            .id(),
        );
    }
    // The daemon has looked at all of them: it knows who is where.
    assert!(
        testkit::wait_for(Duration::from_secs(10), || d.status()["data"]["apps"].as_u64() == Some(5)),
        "{}",
        d.log()
    );
    // The switch, as an activity manager writes it: a cached app to the front, the front
    // app to previous. Nothing is said on the socket.
    std::fs::write(format!("/proc/{}/oom_score_adj", cached[0]), "0").unwrap();
    std::fs::write(format!("/proc/{front}/oom_score_adj"), "700").unwrap();
    let evs =
        collect_events(&rx, Duration::from_secs(10), |e| done_actions(e).iter().any(|a| a["reason"]["step"] == "home"));
    let home: Vec<&Value> = done_actions(&evs).into_iter().filter(|a| a["reason"]["step"] == "home").collect();
    assert!(
        !home.is_empty(),
        "the home step ran on an inferred switch: {:?}\n{}",
        done_actions(&evs).iter().map(|a| a["reason"]["text"].clone()).collect::<Vec<_>>(),
        d.log()
    );
    assert!(
        home.iter().all(|a| a["pid"].as_u64() != Some(cached[0] as u64)),
        "never the app now in front ({}): {:?}\n{}",
        cached[0],
        home,
        d.log()
    );
    drop(d);
    drop(cfg);
    let _ = std::fs::remove_file("/tmp/memorch-infer-front.bin");
}

/// A `memorch app` in an app group, in front, that the test talks to on its stdin.
struct Talking {
    pid: u32,
    stdin: std::process::ChildStdin,
    out: std::io::BufReader<std::process::ChildStdout>,
}

impl Talking {
    fn start(sb: &mut Sandbox) -> Talking {
        use std::io::BufRead;
        let mut cmd = memorch();
        cmd.args(["spawn", "--domain", &format!("cgroup:{}", sb.path), "--app-group", "--class", "foreground", "--"]);
        cmd.args([env!("CARGO_BIN_EXE_memorch"), "app", "--anon-mb", "64", "--content", "text", "--working-set", "1"]);
        cmd.stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped());
        let child = sb.spawn(&mut cmd).expect("spawn starts");
        let mut out = std::io::BufReader::new(child.stdout.take().expect("piped"));
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        assert!(line.starts_with("ready "), "app did not get ready: {line:?}");
        // The sandbox keeps the child, and kills it when it is destroyed.
        Talking { pid: child.id(), stdin: child.stdin.take().expect("piped"), out }
    }

    /// Touch all of its heap, then leave the front (no frames drawn, no page touched until
    /// the next resume); the pages that took a read from swap (major faults).
    fn resume(&mut self) -> u64 {
        use std::io::{BufRead, Write};
        writeln!(self.stdin, "resume").unwrap();
        let mut line = String::new();
        while !line.starts_with("resumed") {
            line.clear();
            assert!(self.out.read_line(&mut line).unwrap() > 0, "the app answers its resume");
        }
        let faults = line
            .split_whitespace()
            .find_map(|w| w.strip_prefix("major_faults="))
            .expect("major_faults in the answer")
            .parse()
            .unwrap();
        writeln!(self.stdin, "back").unwrap();
        let mut frames = String::new();
        assert!(
            self.out.read_line(&mut frames).unwrap() > 0 && frames.starts_with("frames"),
            "the app leaves the front: {frames:?}"
        );
        faults
    }
}

/// `memorch` as shipped (`whole` on): the app in front is read back whole, a piece a decision
/// once it has been in front a moment, so touching its heap then reads nothing from zram.
#[test]
fn the_app_in_front_is_read_back_whole_a_piece_a_decision() {
    read_back_in_front("memorch");
}

/// Compress a talking app's 64 MiB heap into zram, measure the major faults a touch of it
/// takes, compress it again, start the daemon with `preset` (which sees the app in front),
/// wait until the app's swap is nearly all back, and require a touch to take a tenth of them.
fn read_back_in_front(preset: &str) {
    if !testkit::zram_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    if !testkit::no_foreign_swap() {
        return;
    }
    let _zram = memorch_linux::zram::ZramGuard::setup(&memorch_linux::SysRoot::live(), 256 * MIB, Some("lz4"), 100)
        .expect("zram swap for the test");
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-prefetch"), Some(512 * MIB)).unwrap();
    let mut app = Talking::start(&mut sb);
    let pid = app.pid;
    let domain = format!("cgroup:{}", sb.path);
    let to_zram = |what: &str| {
        ok(&["compact", &pid.to_string(), "--anon", "--domain", &domain]);
        assert!(status_kib(pid, "VmSwap") >= 48 * MIB, "{what}: most of the 64 MiB heap in zram");
    };
    // Without a read-back, touching the heap reads it back page by page (or cluster by cluster).
    to_zram("before the touch without a daemon");
    let unaided = app.resume();
    assert!(unaided >= 100, "touching a heap in zram takes major faults: {unaided}");
    to_zram("before the daemon");
    let cfg = fast_config("[manage]\nzram = false\nswap_files = false\nksm = false\n");
    let d = DaemonGuard::start(&["--config", cfg.to_str().unwrap(), "--domain", &domain, "--preset", preset]);
    assert!(
        testkit::wait_for(Duration::from_secs(15), || status_kib(pid, "VmSwap") < 4 * MIB),
        "{preset}: the daemon read the app in front back ({} bytes still in swap): {}",
        status_kib(pid, "VmSwap"),
        d.log()
    );
    let aided = app.resume();
    assert!(
        aided * 10 <= unaided,
        "{preset}: after the read-back {aided} major faults, against {unaided} without it: {}",
        d.log()
    );
    drop(d);
    drop(cfg);
    sb.destroy().unwrap();
}

/// Set a directory's times `secs` in the past.
fn age_dir(dir: &std::path::Path, secs: i64) {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    let t = libc::timespec { tv_sec: now - secs, tv_nsec: 0 };
    let path = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(
        unsafe { libc::utimensat(libc::AT_FDCWD, path.as_ptr(), [t, t].as_ptr(), 0) },
        0,
        "aging {}",
        dir.display()
    );
}

/// The loop removes the domain's empty app groups once a full snapshot's period; those
/// emptied since its last look go when the daemon stops. A group an app is still in stays,
/// and so does one made too recently for its process to have moved in (appgroup.rs `SETTLE`).
#[test]
fn stopping_removes_the_empty_app_groups_and_keeps_the_others() {
    if !testkit::sandbox_facility() {
        return;
    }
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-groups"), Some(256 * MIB)).unwrap();
    let cfg = fast_config("[manage]\nzram = false\nswap_files = false\nksm = false\n");
    // The loop looks once a minute here: what goes during this test goes by the stop's look.
    let text = std::fs::read_to_string(&*cfg).unwrap();
    assert!(text.contains("full_snapshot_ms = 1000"), "fast_config's period, to lengthen: {text}");
    std::fs::write(&*cfg, text.replace("full_snapshot_ms = 1000", "full_snapshot_ms = 60000")).unwrap();
    let domain_spec = format!("cgroup:{}", sb.path);
    let mut d =
        DaemonGuard::start(&["--config", cfg.to_str().unwrap(), "--domain", &domain_spec, "--preset", "memorch"]);
    let root = memorch_linux::SysRoot::live();
    let domain = memorch_linux::Domain::open(&root, &memorch_linux::DomainSpec::Cgroup(sb.path.clone())).unwrap();
    // Three apps in groups of their own. The first two exit (reaped: no zombie stays listed
    // in a v1 group); the first's group is old enough to go; the second's counts as just made
    // (its clock set ahead, however slow this machine is); the third app lives on in an old
    // group.
    let mut groups = Vec::new();
    for (i, exits, age_s) in [(0, true, 60), (1, true, -60), (2, false, 60)] {
        let app = spawn_app(&mut sb, &["--app-group", "--class", "cached"], &["--anon-mb", "4"]);
        let g = memorch_linux::appgroup::of_process(&root, app.id(), &domain).expect("the app is in its own group");
        if exits {
            app.kill().unwrap();
            app.wait().unwrap();
            let procs = g.memory.join("cgroup.procs");
            assert!(
                testkit::wait_for(Duration::from_secs(5), || std::fs::read_to_string(&procs)
                    .is_ok_and(|t| t.trim().is_empty())),
                "app {i} left its group"
            );
        }
        let dirs: Vec<std::path::PathBuf> = std::iter::once(g.memory).chain(g.v2).collect();
        dirs.iter().for_each(|dir| age_dir(dir, age_s));
        groups.push(dirs);
    }
    assert!(groups[0].iter().all(|dir| dir.is_dir()), "the loop has not looked yet: {}", d.log());
    d.stop();
    assert!(groups[0].iter().all(|dir| !dir.exists()), "the emptied group is removed at the stop: {}", d.log());
    assert!(d.log().contains("removed the domain's empty app groups"), "and the log says so: {}", d.log());
    assert!(groups[1].iter().all(|dir| dir.is_dir()), "a group made a moment ago stays");
    assert!(groups[2].iter().all(|dir| dir.is_dir()), "the group an app is still in stays");
    sb.destroy().unwrap();
}
