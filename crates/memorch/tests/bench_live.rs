//! `memorch bench` end to end on the live kernel: a short run of two managers finishes,
//! reports, and leaves no sandbox, zram or process behind, also when interrupted.

mod common;
use common::*;
use memorch_linux::testkit::{self, Leftovers};
use std::time::Duration;

/// The two tests compare the machine before and after: they take turns.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A small device that overfills: four synthetic apps, one real program (python3, which
/// nohang's package brings), and an idle step.
const MIXED: &str = r#"
name = "mixed"
ram_mb = 256
zram_pct = 50
use_ms = 200
[visits]
sequence = ["a", "py", "b", "(idle)", "c", "a", "py", "d", "b", "c"]
idle_ms = 1000
[[apps]]
name = "a"
anon_mb = 70
[[apps]]
name = "b"
anon_mb = 70
[[apps]]
name = "c"
anon_mb = 70
[[apps]]
name = "d"
anon_mb = 70
[[apps]]
name = "py"
anon_mb = 40
command = ["python3", "-c", "import os, sys\nd = [os.urandom(1024) * 4 for _ in range(10240)]\nprint('up', flush=True)\nwhile sys.stdin.readline():\n    print('drawn', sum(len(x) for x in d[::64]), flush=True)\n"]
ready = "line:up"
resume = "line:draw"
"#;

#[test]
fn peers_real_programs_idle_and_frames() {
    if !testkit::peers_facility() {
        return;
    }
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let before = Leftovers::now();
    let out = std::env::temp_dir().join(testkit::unique_name("memorch-bench-peers"));
    std::fs::create_dir_all(&out).unwrap();
    let scenario = out.join("mixed.toml");
    std::fs::write(&scenario, MIXED).unwrap();
    let args = [
        "bench",
        "--scenario",
        scenario.to_str().unwrap(),
        "--managers",
        "earlyoom,nohang",
        "--out",
        out.to_str().unwrap(),
    ];
    let done = run(&args);
    let (o, err) = (String::from_utf8_lossy(&done.stdout), String::from_utf8_lossy(&done.stderr));
    assert!(o.contains("earlyoom") && o.contains("nohang") && o.contains("jank%"), "{o}{err}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let mut failed_visits = 0;
    for r in v["runs"].as_array().unwrap() {
        let m = r["manager"].as_str().unwrap();
        let visits = r["visits"].as_array().unwrap();
        assert_eq!(visits.len(), 9, "{m}: every app visit measured, the idle step is not a visit");
        // A peer may kill the app in front (earlyoom does on a device this small, when it is
        // the largest): that visit fails, and the bench says so. Any other failure is the
        // harness's own.
        let killed_in_front = |app: &serde_json::Value| {
            r["kills"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| k["app"] == *app && k["by"] == m && k["class"] == "foreground")
        };
        for x in visits.iter().filter(|x| x["kind"] == "failed") {
            assert!(
                killed_in_front(&x["app"]),
                "{m}: a visit failed that its manager did not kill in front: {x}\n{o}{err}"
            );
            failed_visits += 1;
        }
        let py: Vec<&serde_json::Value> = visits.iter().filter(|x| x["app"] == "py").collect();
        assert_eq!(py[0]["kind"], "cold", "{m}: the real program launched");
        assert!(py[0]["latency_ms"].as_f64().unwrap() > 0.0);
        assert!(
            py[1]["kind"] != "failed" || killed_in_front(&py[1]["app"]),
            "{m}: the real program resumed or relaunched: {py:?}"
        );
        assert!(visits.iter().any(|x| x["frames"].as_u64().unwrap() > 0), "{m}: apps in front draw frames");
        assert_eq!(r["idle_available_bytes"].as_array().unwrap().len(), 1, "{m}: free memory measured after idle");
        assert!(r["manager_rss_bytes"].as_u64().unwrap() > 0, "{m}: the peer's own cost measured");
        for k in r["kills"].as_array().unwrap() {
            assert!(k["by"] == m || k["by"] == "kernel", "{m}: a kill by {}", k["by"]);
        }
    }
    // The bench exits non-zero exactly when a visit failed (then its figures are no clean
    // comparison); a failed exit with every visit served would be an error of its own.
    assert_eq!(
        done.status.success(),
        failed_visits == 0,
        "exit status against {failed_visits} failed visits: {o}{err}"
    );
    assert_eq!(Leftovers::now().new_since(&before), Vec::<String>::new(), "no swap, cgroup or lxcfs left");
    std::fs::remove_dir_all(out).unwrap();
}

/// The bench as a user runs it: from some working directory, with a relative scenario file,
/// a relative --out, and a real program that reads a file named relative to its scenario.
/// Every visit must be served (the README's command once served none and printed zeros).
#[test]
fn from_another_directory_with_relative_paths_every_visit_is_served() {
    if !testkit::zram_facility() {
        return;
    }
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let cwd = std::env::temp_dir().join(testkit::unique_name("memorch-bench-cwd"));
    std::fs::create_dir_all(cwd.join("mine")).unwrap();
    std::fs::write(cwd.join("mine/words.txt"), "hello\n").unwrap();
    std::fs::write(
        cwd.join("mine/tiny.toml"),
        "name = \"tiny\"\nram_mb = 128\nuse_ms = 100\n[visits]\nsequence = [\"a\", \"sh\", \"a\", \"sh\"]\n[[apps]]\nname = \"a\"\nanon_mb = 16\nfile_mb = 4\n[[apps]]\nname = \"sh\"\nanon_mb = 1\ncommand = [\"sh\", \"-c\", \"cat {assets}/words.txt; while read l; do echo \\\"$l\\\"; done\"]\nready = \"line:hello\"\nresume = \"line:back\"\n",
    )
    .unwrap();
    let out = memorch()
        .args(["bench", "--scenario", "mine/tiny.toml", "--managers", "kernel", "--out", "rel-out"])
        .current_dir(&cwd)
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(cwd.join("rel-out/results.json")).unwrap()).unwrap();
    let visits = v["runs"][0]["visits"].as_array().unwrap();
    assert_eq!(visits.len(), 4);
    assert!(visits.iter().all(|x| x["kind"] != "failed"), "every visit served: {visits:?}");
    assert_eq!(visits.iter().filter(|x| x["kind"] == "cold").count(), 2, "both apps launched: {visits:?}");
    assert!(stdout.contains("hot/warm/cold/failed") && stdout.contains("/0 "), "{stdout}");
    // Before the first run the real program (only it) was launched once, unmeasured, so that
    // the first run finds its files cached as later runs do; the user is told.
    let warm_up = v["warm_up"].as_array().unwrap();
    assert_eq!(
        warm_up.iter().map(|x| (x["app"].as_str().unwrap(), x["kind"].as_str().unwrap())).collect::<Vec<_>>(),
        [("sh", "cold")],
        "{warm_up:?}"
    );
    assert!(stderr.contains("warmed up: sh "), "{stderr}");
    assert!(cwd.join("rel-out/logs/00-warm-up").is_dir(), "the warm-up's logs kept: {stderr}");
    assert!(cwd.join("rel-out/logs").is_dir(), "logs kept beside the results");
    std::fs::remove_dir_all(cwd).unwrap();
}

#[test]
fn quick_bench_runs_reports_and_cleans_up() {
    if !testkit::zram_facility() {
        return;
    }
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let before = Leftovers::now();
    let out = std::env::temp_dir().join(testkit::unique_name("memorch-bench-out"));
    // A smaller device keeps the test short; sizes scale with it. Each run records the
    // machine's swap read-ahead.
    let page_cluster = memorch_linux::readahead::page_cluster(&memorch_linux::SysRoot::live()).unwrap();
    let managers = "kernel,memorch,memorch:ahead=off";
    let o =
        ok(&["bench", "--scenario", "quick", "--managers", managers, "--ram", "256", "--out", out.to_str().unwrap()]);
    assert!(o.contains("hot/warm/cold") && o.contains("kernel") && o.contains("memorch"), "{o}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    let read_ahead: Vec<u64> = runs.iter().map(|r| r["device"]["swap_read_ahead_pages"].as_u64().unwrap()).collect();
    assert_eq!(read_ahead, [1 << page_cluster; 3], "the read-ahead each run had");
    for r in runs {
        assert_eq!(r["visits"].as_array().unwrap().len(), 22, "every visit measured");
        assert!(r["visits"].as_array().unwrap().iter().any(|x| x["kind"] == "cold"));
        assert_eq!(r["interrupted"], false);
        assert!(r["swap_out_pages"].as_u64().is_some(), "both managers' devices have zram: its traffic is measured");
        // The machine is shared: what else ran on it during the run is measured beside it.
        assert!(
            r["steal_s"].as_f64().is_some_and(|s| s >= 0.0) && r["other_cpu_s"].as_f64().is_some_and(|s| s >= 0.0),
            "{}",
            r["manager"]
        );
        // Bringing an app back to the front (the daemon's answer, or the bench's own write of
        // oom_score_adj for a peer) is timed, as part of the return's latency.
        for x in r["visits"].as_array().unwrap().iter().filter(|x| x["kind"] == "hot" || x["kind"] == "warm") {
            let front_us = x["to_front_us"].as_u64().unwrap_or(0);
            assert!(
                front_us > 0 && front_us as f64 <= x["latency_ms"].as_f64().unwrap() * 1000.0,
                "{}: {x}",
                r["manager"]
            );
        }
    }
    assert!(
        runs.iter().any(|r| r["swap_out_pages"].as_u64().unwrap() > 0 && r["swap_in_pages"].as_u64().unwrap() > 0),
        "an overfilled device swaps out and back in"
    );
    assert_eq!(runs[1]["manager"], "memorch");
    assert!(runs[1]["manager_rss_bytes"].as_u64().unwrap() > 0, "the daemon's own cost is measured");
    assert_eq!(v["summaries"].as_array().unwrap().len(), 3);
    assert!(!out.join("work").exists(), "app files removed");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert_eq!(html.matches("<svg").count(), 4, "four charts");
    // Each manager has its row, named after its colour swatch.
    assert!(html.contains("</span>memorch</td>") && html.contains("</span>kernel</td>"), "{html}");
    assert_eq!(Leftovers::now().new_since(&before), Vec::<String>::new(), "no swap or cgroup left");
    std::fs::remove_dir_all(out).unwrap();
}

#[test]
fn interrupted_bench_tears_everything_down() {
    if !testkit::zram_facility() {
        return;
    }
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // The bench holds the whole-run lock for its whole run: wait for whoever holds it now
    // (another bench, a test), so that the 120 s below time the set-up, not the queue.
    drop(testkit::machine_test_lock());
    let before = Leftovers::now();
    let out = std::env::temp_dir().join(testkit::unique_name("memorch-bench-int"));
    let mut child = memorch()
        .args(["bench", "--managers", "memorch", "--ram", "256", "--out", out.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until its device exists, then Ctrl-C.
    let started = testkit::wait_for(Duration::from_secs(120), || !Leftovers::now().new_swap_since(&before).is_empty());
    assert!(started, "the bench set up its device");
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let done = testkit::wait_for(Duration::from_secs(60), || child.try_wait().unwrap().is_some());
    assert!(done, "the bench stops after an interrupt");
    assert!(child.wait().unwrap().success(), "an interrupt is a clean end");
    assert_eq!(Leftovers::now().new_since(&before), Vec::<String>::new(), "no swap or cgroup left after Ctrl-C");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(v["runs"][0]["interrupted"], true);
    std::fs::remove_dir_all(out).unwrap();
}

#[test]
fn a_killed_bench_is_cleaned_up_at_the_next_start() {
    if !testkit::zram_facility() {
        return;
    }
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // The bench holds the whole-run lock for its whole run: wait for whoever holds it now
    // (another bench, a test), so that the 120 s below time the set-up, not the queue.
    drop(testkit::machine_test_lock());
    let before = Leftovers::now();
    let out = std::env::temp_dir().join(testkit::unique_name("memorch-bench-kill"));
    let mut child = memorch()
        .args(["bench", "--managers", "memorch", "--ram", "256", "--out", out.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = testkit::wait_for(Duration::from_secs(120), || !Leftovers::now().new_swap_since(&before).is_empty());
    assert!(started, "the bench set up its device");
    // No destructor runs after SIGKILL: the device stays behind…
    let _ = child.kill();
    let _ = child.wait();
    assert!(!Leftovers::now().new_swap_since(&before).is_empty(), "a killed bench leaves its device");
    // …its daemon dies with it (PR_SET_PDEATHSIG)…
    let cmdline_has = |needle: &str| {
        std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
            std::fs::read(e.path().join("cmdline")).is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
        })
    };
    let daemon_gone =
        testkit::wait_for(Duration::from_secs(15), || !cmdline_has(&format!("{}/work/daemon-", out.display())));
    assert!(daemon_gone, "the bench's daemon outlived it");
    // …and the next start (any test or bench, under the lock) puts the machine back.
    let _lock = testkit::machine_test_lock();
    assert_eq!(Leftovers::now().new_since(&before), Vec::<String>::new(), "stale device recovered");
    let _ = std::fs::remove_dir_all(out);
}
