//! The cgroup layouts apps live in on real systems, built below a sandbox domain: a systemd
//! desktop session (apps in `app-….scope`s and an `app-….slice`, services in `session.slice`)
//! and Android's per-app groups (`uid_N/pid_M`). memorch names the apps as their system does,
//! squeezes each through the group the system gave it, leaves a service the config protects
//! alone, and puts every group's own limit and swappiness back.

mod common;
use common::*;
use memorch_linux::zram::ZramGuard;
use memorch_linux::{sandbox::Sandbox, testkit, SysRoot};
use memorch_protocol::Request;
use std::process::Stdio;
use std::time::Duration;

/// Each group's own limit, as its system set it (put back after every squeeze).
const OWN_LIMIT: u64 = 900 << 20;

const SESSION: &str = "user.slice/user-1000.slice/user@1000.service";

/// Where each app runs, below the domain, and what a user calls it.
fn layout() -> [(String, &'static str); 4] {
    [
        (format!("{SESSION}/app.slice/app-gnome-firefox-4242.scope"), "firefox"),
        (format!("{SESSION}/app.slice/app-org.gnome.Terminal.slice/vte-spawn-0f3a.scope"), "org.gnome.Terminal"),
        ("uid_10123/pid_4567".to_string(), "com.example.mail"),
        (format!("{SESSION}/session.slice/pipewire.service"), "pipewire"),
    ]
}

/// `memorch app` started by `memorch spawn` in the group `below` the sandbox's, run as
/// `program` (a link to memorch: its command name) with `argv0` (Android's package).
fn start(sb: &mut Sandbox, below: &str, program: &std::path::Path, argv0: &str) -> u32 {
    let exec = format!("exec -a '{argv0}' '{}' app --anon-mb 64 --content text", program.display());
    let mut cmd = memorch();
    cmd.args(["spawn", "--domain", &format!("cgroup:{}/{below}", sb.path), "--class", "empty", "--"])
        .args(["bash", "-c", &exec])
        .stdout(Stdio::piped())
        .stdin(Stdio::null());
    let child = sb.spawn(&mut cmd).expect("spawn starts");
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut line).unwrap();
    assert!(line.starts_with("ready "), "app did not get ready: {line:?}");
    child.id()
}

/// The groups' own v1 limit and swappiness, as the system set them.
fn own_settings(v1: &std::path::Path, below: &str) -> (String, String) {
    let read = |f: &str| std::fs::read_to_string(v1.join(below).join(f)).unwrap().trim().to_string();
    (read("memory.limit_in_bytes"), read("memory.swappiness"))
}

#[test]
fn desktop_and_android_apps_are_named_squeezed_in_their_own_groups_and_protected_services_left_alone() {
    if !testkit::zram_facility() {
        return;
    }
    let _lock = testkit::machine_test_lock();
    let _zram = ZramGuard::setup(&SysRoot::live(), 1 << 30, Some("lz4"), 100).expect("zram swap for the test");
    let mut sb = Sandbox::create(&testkit::unique_name("memorch-layouts"), Some(1 << 30)).unwrap();
    let Some(v1) = sb.v1_memory.clone() else {
        assert!(std::env::var("MEMORCH_REQUIRE_KERNEL").as_deref() != Ok("1"), "no v1 memory hierarchy here");
        eprintln!("SKIP: no v1 memory hierarchy for the sandbox: a group's own limit is a v1 file here");
        return;
    };
    let dir = testkit::TempDir::new("memorch-layouts");
    let pipewire = dir.join("pipewire");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_memorch"), &pipewire).unwrap();
    let mut pids = Vec::new();
    for (below, name) in layout() {
        for d in sb.dirs().collect::<Vec<_>>() {
            std::fs::create_dir_all(d.join(&below)).unwrap();
        }
        std::fs::write(v1.join(&below).join("memory.limit_in_bytes"), OWN_LIMIT.to_string()).unwrap();
        std::fs::write(v1.join(&below).join("memory.swappiness"), "30").unwrap();
        let program = if name == "pipewire" { pipewire.clone() } else { env!("CARGO_BIN_EXE_memorch").into() };
        pids.push(start(&mut sb, &below, &program, name));
    }
    let domain = format!("cgroup:{}", sb.path);
    let status = json(&["status", "--domain", &domain, "--json"]);
    for ((_, name), pid) in layout().iter().zip(&pids) {
        let p = status["processes"].as_array().unwrap().iter().find(|p| p["pid"] == *pid).expect("listed");
        assert_eq!(p["app"], *name, "status names the app as its system does: {p}");
    }
    let text = ok(&["status", "--domain", &domain]);
    assert!(text.contains("org.gnome.Terminal") && text.contains("com.example.mail"), "{text}");

    let cfg = dir.join("memorch.toml");
    let local = format!("[loop]\ntick_ms = 100\nfull_snapshot_ms = 300\n[manage]\nzram = false\nswap_files = false\nksm = false\nswap_file_dir = \"{}\"\n[apps]\nprotected = [\"pipewire\"]\n", dir.join("swap").display());
    std::fs::write(&cfg, local).unwrap();
    let mut d = DaemonGuard::start(&["--config", cfg.to_str().unwrap(), "--domain", &domain, "--preset", "thesis"]);
    let rx = d.events();
    // Screen off: the thesis's idle step compresses whole empty apps, each through its own group.
    assert_eq!(d.request(&Request::Screen { on: false })["ok"], true);
    let squeezed = |evs: &[serde_json::Value], pid: u32| {
        evs.iter().any(|e| e["action"] == "compact" && e["pid"] == pid && e["done"] == true)
    };
    let evs = collect_events(&rx, Duration::from_secs(30), |e| pids[..3].iter().all(|&p| squeezed(e, p)));
    for ((below, name), pid) in layout().iter().zip(&pids).take(3) {
        let e = evs.iter().find(|e| e["action"] == "compact" && e["pid"] == *pid);
        let result = e.map(|e| e["result"].as_str().unwrap_or_default().to_string()).unwrap_or_default();
        assert!(
            result.contains("squeezed") && result.contains(below.rsplit('/').next().unwrap()),
            "{name} squeezed through its group: {e:?}\n{}",
            d.log()
        );
        assert_eq!(
            own_settings(&v1, below),
            (OWN_LIMIT.to_string(), "30".into()),
            "{name}'s group as the system set it"
        );
    }
    assert!(!evs.iter().any(|e| e["pid"] == pids[3]), "the protected service is never acted on: {evs:?}");
    assert_eq!(status_kib(pids[3], "VmSwap"), 0, "nor swapped by memorch");
    d.stop();
    for (below, name) in layout() {
        assert_eq!(own_settings(&v1, &below), (OWN_LIMIT.to_string(), "30".into()), "{name}'s group after the stop");
    }
    sb.destroy().unwrap();
}
