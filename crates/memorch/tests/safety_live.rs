//! What a hostile client, a reload or bad input must never do (issue "Never hurt what it
//! does not manage"): turn a dry run live, grow the daemon without bound or lock root out,
//! teach it launch costs, make it kill a namespace's init, or make the CLI panic.

mod common;
use common::*;
use memorch_linux::sandbox::Sandbox;
use memorch_linux::testkit;
use memorch_protocol::Request;
use serde_json::Value;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The unprivileged uid the hostile clients run as.
const NOBODY: u32 = 65534;

/// python3 (scripts/setup installs it) as `nobody`, running `script` with `args`.
fn as_nobody(script: &str, args: &[&str]) -> Command {
    let mut c = Command::new("/usr/bin/python3");
    c.arg("-c").arg(script).args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::null());
    as_nobody_too(&mut c);
    c
}

/// `c` run as `nobody`, with no supplementary groups.
fn as_nobody_too(c: &mut Command) {
    // SAFETY: setgid/setuid between fork and exec.
    unsafe {
        c.pre_exec(|| {
            if libc::setgroups(0, std::ptr::null()) != 0 || libc::setgid(NOBODY) != 0 || libc::setuid(NOBODY) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

fn python_facility() -> bool {
    testkit::facility(
        "python3",
        if std::path::Path::new("/usr/bin/python3").exists() {
            Ok(())
        } else {
            Err("/usr/bin/python3 is missing (scripts/setup installs it)".into())
        },
    )
}

/// A daemon in dry run on a sandbox, its socket reachable by any uid (its directory too).
fn dry_daemon(sb: &Sandbox, extra: &[&str]) -> DaemonGuard {
    let mut args = vec!["--dry-run", "--domain"];
    let domain = format!("cgroup:{}", sb.path);
    args.push(&domain);
    args.extend_from_slice(extra);
    let d = DaemonGuard::start(&args);
    let dir = d.socket.parent().unwrap();
    std::fs::set_permissions(dir, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    d
}

fn rss_kib(pid: u32) -> u64 {
    status_kib(pid, "VmRSS") / 1024
}

#[test]
fn a_reload_keeps_the_command_line_and_never_arms_a_dry_run() {
    if !testkit::sandbox_facility() {
        return;
    }
    let sb = Sandbox::create(&testkit::unique_name("memorch-hup"), Some(128 * MIB)).unwrap();
    let cfg = std::env::temp_dir().join(testkit::unique_name("memorch-good")).with_extension("toml");
    std::fs::write(&cfg, "preset = \"lmkd\"\ndry_run = false\n[loop]\ntick_ms = 500\n").unwrap();
    let d = dry_daemon(&sb, &["--config", cfg.to_str().unwrap(), "--preset", "mos"]);
    let status = |d: &DaemonGuard| d.status()["data"].clone();
    assert_eq!((status(&d)["preset"].clone(), status(&d)["dry_run"].clone()), (Value::from("mos"), Value::from(true)));
    // The file now says something else too: the change is applied and logged.
    std::fs::write(&cfg, "preset = \"lmkd\"\ndry_run = false\n[loop]\ntick_ms = 750\n").unwrap();
    unsafe { libc::kill(d.child.id() as i32, libc::SIGHUP) };
    assert!(testkit::wait_for(Duration::from_secs(10), || d.log().contains("config reloaded")), "{}", d.log());
    let s = status(&d);
    assert_eq!(s["preset"], "mos", "--preset stays on top of the file: {s}");
    assert_eq!(s["dry_run"], true, "a reload never arms a dry run: {s}");
    let log = d.log();
    assert!(log.contains("dry_run stays on"), "{log}");
    assert!(log.contains("loop.tick_ms") && log.contains("750"), "every effective change is logged: {log}");
    drop(d);
    let _ = std::fs::remove_file(cfg);
}

/// How a flood of bad requests from unprivileged clients goes: the daemon's RSS at the
/// start, its peak during the flood, and after; and whether root was answered throughout.
#[test]
fn a_flood_from_any_uid_keeps_the_daemon_small_and_root_served() {
    if !testkit::sandbox_facility() || !python_facility() {
        return;
    }
    let sb = Sandbox::create(&testkit::unique_name("memorch-flood"), Some(128 * MIB)).unwrap();
    let d = dry_daemon(&sb, &[]);
    let pid = d.child.id();
    let before = rss_kib(pid);
    const FLOOD: &str = "import socket, sys, time\ns = socket.socket(socket.AF_UNIX)\ns.connect(sys.argv[1])\nend = time.time() + float(sys.argv[2])\ntry:\n    while time.time() < end:\n        s.sendall(b'x\\n' * 4096)\nexcept OSError:\n    pass\n";
    let sock = d.socket.to_str().unwrap().to_string();
    let mut flood: Vec<Child> = (0..20).map(|_| as_nobody(FLOOD, &[&sock, "8"]).spawn().unwrap()).collect();
    let t0 = Instant::now();
    let mut peak = before;
    let mut root_answers = 0;
    while t0.elapsed() < Duration::from_secs(6) {
        peak = peak.max(rss_kib(pid));
        let st = d.status();
        assert_eq!(st["ok"], true, "root is served during the flood: {st}");
        root_answers += 1;
        std::thread::sleep(Duration::from_millis(50));
    }
    for c in &mut flood {
        let _ = c.kill();
        let _ = c.wait();
    }
    let after = rss_kib(pid);
    eprintln!("daemon RSS under a flood of 20 clients of uid {NOBODY}: before {before} KiB, peak {peak} KiB, after {after} KiB; root answered {root_answers} times");
    assert!(peak <= 8 * 1024, "the daemon stays within 8 MiB: peak {peak} KiB");
    assert_eq!(d.status()["ok"], true);
}

#[test]
fn idle_connections_of_one_uid_do_not_lock_root_out() {
    if !testkit::sandbox_facility() || !python_facility() {
        return;
    }
    let sb = Sandbox::create(&testkit::unique_name("memorch-idle"), Some(128 * MIB)).unwrap();
    let d = dry_daemon(&sb, &[]);
    const HOLD: &str = "import socket, sys, time\nss = []\nrefused = 0\nfor i in range(64):\n    s = socket.socket(socket.AF_UNIX)\n    s.connect(sys.argv[1])\n    ss.append(s)\ntime.sleep(0.5)\nfor s in ss:\n    s.setblocking(False)\n    try:\n        if s.recv(200).startswith(b'{\"ok\":false'):\n            refused += 1\n    except BlockingIOError:\n        pass\nprint(refused, flush=True)\ntime.sleep(30)\n";
    let mut holder = as_nobody(HOLD, &[d.socket.to_str().unwrap()]).spawn().unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(holder.stdout.take().unwrap()), &mut line).unwrap();
    let refused: usize = line.trim().parse().unwrap();
    assert!(refused >= 64 - 4, "one uid holds at most a few connections: {refused} of 64 refused");
    let st = d.status();
    assert_eq!(st["ok"], true, "root still gets in: {st}");
    let _ = holder.kill();
    let _ = holder.wait();
}

#[test]
fn only_root_and_controllers_teach_launch_costs() {
    if !testkit::sandbox_facility() || !python_facility() {
        return;
    }
    let sb = Sandbox::create(&testkit::unique_name("memorch-teach"), Some(128 * MIB)).unwrap();
    let d = dry_daemon(&sb, &[]);
    const TEACH: &str = "import json, os, socket, sys\ns = socket.socket(socket.AF_UNIX)\ns.connect(sys.argv[1])\ns.sendall((json.dumps({'cmd': 'launched', 'app': 'maps', 'pid': os.getpid(), 'ms': 1, 'cold': True}) + '\\n').encode())\nprint(s.makefile().readline().strip(), flush=True)\n";
    let out = as_nobody(TEACH, &[d.socket.to_str().unwrap()]).output().unwrap();
    let answer: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {:?}", String::from_utf8_lossy(&out.stdout)));
    assert_eq!(answer["ok"], false, "{answer}");
    assert!(answer["error"].as_str().unwrap().contains("may not send launch"), "{answer}");
}

#[test]
fn a_namespace_init_is_never_killed() {
    if !testkit::sandbox_facility() {
        return;
    }
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-nsinit"), Some(128 * MIB)).unwrap();
    // `unshare --fork` makes its child pid 1 of a new PID namespace.
    let mut cmd = Command::new("unshare");
    cmd.args(["--pid", "--fork", "sleep", "300"]).stdin(Stdio::null()).stdout(Stdio::null());
    let holder = sb.spawn(&mut cmd).unwrap().id();
    let found = testkit::wait_for(Duration::from_secs(10), || {
        std::fs::read_to_string(format!("/proc/{holder}/task/{holder}/children")).is_ok_and(|c| !c.trim().is_empty())
    });
    assert!(found, "unshare forked its namespace's init");
    let init: u32 =
        std::fs::read_to_string(format!("/proc/{holder}/task/{holder}/children")).unwrap().trim().parse().unwrap();
    let domain = format!("cgroup:{}", sb.path);
    let err = fails(&["kill", &init.to_string(), "--domain", &domain]);
    assert!(err.contains("init of a PID namespace"), "{err}");
    assert!(alive(init));
    let d = dry_daemon(&sb, &[]);
    let explain = Request::Explain { pid: init };
    assert!(testkit::wait_for(Duration::from_secs(10), || d.request(&explain)["ok"] == true));
    let e = d.request(&explain);
    assert_eq!(e["data"]["protected"], true, "never a victim: {e}");
}

#[test]
fn bad_sizes_and_durations_are_errors_not_panics() {
    // Each failed with a panic (exit 101) or did something else than asked before.
    let nbsp = ok(&["reclaim", "--bytes", "64M\u{a0}", "--dry-run"]);
    assert!(nbsp.contains("would reclaim 64.0 MiB"), "a no-break space after the unit is space: {nbsp}");
    for (args, want) in [
        (vec!["reclaim", "--bytes", "64é", "--dry-run"], "not a size"),
        (vec!["freeze", "/x", "--timeout", "1e300"], "give from"),
        (vec!["status", "--watch", "1e300"], "give from"),
        (vec!["swapfile", "add", "--size", "17592186044417", "--dry-run"], "1 PiB"),
        (vec!["zram", "setup", "--size", "17592186044417", "--dry-run"], "not a size"),
        (vec!["run", "--preset", "memorch:bogus=1", "--dry-run"], "neither a step"),
    ] {
        let out = run(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(if args[0] == "run" { 1 } else { 2 }), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// A small filesystem of the test's own (a 64 MiB tmpfs), unmounted on drop.
struct SmallFs(std::path::PathBuf);

impl SmallFs {
    fn mount() -> SmallFs {
        let dir = std::env::temp_dir().join(testkit::unique_name("memorch-smallfs"));
        std::fs::create_dir_all(&dir).unwrap();
        let st =
            Command::new("mount").args(["-t", "tmpfs", "-o", "size=64m", "memorch-test"]).arg(&dir).status().unwrap();
        assert!(st.success(), "mount a tmpfs");
        SmallFs(dir)
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

#[test]
fn a_swap_file_that_would_fill_its_filesystem_is_refused_before_writing() {
    if !testkit::sandbox_facility() {
        return;
    }
    let fs = SmallFs::mount();
    // 40 of 64 MiB fit, but would leave the filesystem nearly full: refused before a block
    // is written (it used to be allocated, then fail at swapon, after filling the disk).
    let err = fails(&["swapfile", "add", "--size", "40", "--dir", fs.0.to_str().unwrap()]);
    assert!(err.contains("no space") && err.contains("must stay free"), "{err}");
    assert_eq!(std::fs::read_dir(&fs.0).unwrap().count(), 0, "not a file made");
}

#[test]
fn run_by_a_user_other_than_root_is_refused_with_why_before_anything_is_touched() {
    let dir = std::env::temp_dir().join(testkit::unique_name("memorch-nonroot"));
    let (sock, state) = (dir.join("ctl.sock"), dir.join("state"));
    let mut c = memorch();
    c.args(["run", "--domain", "system", "--socket"]).arg(&sock).arg("--state-dir").arg(&state);
    as_nobody_too(&mut c);
    let out = c.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("run it as root") && err.contains("--dry-run"), "{err}");
    assert!(!dir.exists(), "nothing made: not the socket's directory, not the state dir");
}

#[test]
fn config_check_refuses_an_empty_socket() {
    let cfg = std::env::temp_dir().join(testkit::unique_name("memorch-empty-socket")).with_extension("toml");
    std::fs::write(&cfg, "socket = \"\"\n").unwrap();
    let err = fails(&["config", "--check", cfg.to_str().unwrap()]);
    assert!(err.contains("socket") && err.contains("line 1"), "{err}");
    std::fs::remove_file(cfg).unwrap();
}

/// A victim the activity manager brought back to the front between the decision and the kill
/// (its `oom_score_adj` lowered) is spared; one still as the decision saw it is killed.
#[test]
fn a_victim_brought_back_to_the_front_since_the_decision_is_spared() {
    use memorch_daemon::executor::Actuators;
    if !testkit::sandbox_facility() {
        return;
    }
    let root = memorch_linux::SysRoot::live();
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-spare"), Some(256 * MIB)).unwrap();
    let pid = sb.spawn(Command::new("sleep").arg("600")).unwrap().id();
    std::fs::write(format!("/proc/{pid}/oom_score_adj"), "900").unwrap();
    let domain = memorch_linux::Domain::open(&root, &memorch_linux::DomainSpec::Cgroup(sb.path.clone())).unwrap();
    let mut live = memorch_daemon::executor::live::Live::new(root, domain, std::env::temp_dir());
    // Decided on as cached (900); in front now (0): spared, and it says why.
    std::fs::write(format!("/proc/{pid}/oom_score_adj"), "0").unwrap();
    let e = live.kill(pid, "test", Some(900)).err().expect("spared");
    assert!(e.contains("came back to the front"), "{e}");
    assert!(alive(pid));
    // Decided on as it is now: killed.
    let k = live.kill(pid, "test", Some(0)).expect("killed");
    assert!(k.pidfd.as_ref().unwrap().wait_exit(Duration::from_secs(5)));
}
