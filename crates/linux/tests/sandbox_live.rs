//! A sandbox whose creator was killed with SIGKILL is removed by the next start's recovery,
//! also when the creator ran in another cgroup than the recovering process (an earlier
//! session's, a bench killed by a restart): its sandbox lies below v2 parents memorch made for
//! it, not below the recovering process's own group.

use memorch_linux::sandbox::{self, Sandbox};
use memorch_linux::{cgroup, testkit, SysRoot};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// Runs only as the child the test below starts (this test binary again, with
/// MEMORCH_SANDBOX_ELSEWHERE set): once moved to another group, make a sandbox, say where,
/// wait to be killed.
#[test]
fn hold_a_sandbox_until_killed() {
    if std::env::var("MEMORCH_SANDBOX_ELSEWHERE").is_err() {
        return;
    }
    let mut go = String::new();
    std::io::stdin().read_line(&mut go).unwrap();
    let sb = Sandbox::create(&testkit::unique_name("memorch-held-sandbox"), Some(16 << 20)).expect("sandbox");
    // On a line of its own: libtest has written "test NAME ... " without a newline before it.
    println!("\nsandbox held at {}", sb.path);
    loop {
        std::thread::sleep(std::time::Duration::from_secs(60));
    }
}

/// A v1 memory group of the test's own, below its group and in v1 alone (so that the v2 path
/// of a group below it is missing and memorch makes its parents), removed on drop.
struct V1Group(PathBuf);

impl Drop for V1Group {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

#[test]
fn a_dead_creators_sandbox_in_another_group_is_removed_with_the_parents_made_for_it() {
    if !testkit::sandbox_facility() {
        return;
    }
    let root = SysRoot::live();
    let mounts = cgroup::mounts(&root).unwrap();
    let (Some(v1), Some(v2)) =
        (mounts.iter().find(|m| m.has_v1_controller("memory")), mounts.iter().find(|m| m.is_v2()))
    else {
        // Through the facility helper: a skip here, a failure under MEMORCH_REQUIRE_KERNEL=1.
        testkit::facility(
            "hybrid cgroups",
            Err("no v1 memory and v2 hierarchy side by side: memorch makes no v2 parents".into()),
        );
        return;
    };
    let _lock = testkit::machine_test_lock();
    let own = cgroup::process_cgroup_path(&root, "self").unwrap();
    let elsewhere = format!("{own}/{}", testkit::unique_name("memorch-elsewhere"));
    let group = V1Group(v1.dir_of(&elsewhere).unwrap());
    std::fs::create_dir(&group.0).unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["hold_a_sandbox_until_killed", "--exact", "--nocapture", "--test-threads=1"])
        .env("MEMORCH_SANDBOX_ELSEWHERE", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::fs::write(group.0.join("cgroup.procs"), child.id().to_string()).unwrap();
    writeln!(child.stdin.take().unwrap(), "go").unwrap();
    let out = BufReader::new(child.stdout.take().unwrap());
    let held = out
        .lines()
        .map_while(Result::ok)
        .find_map(|l| l.strip_prefix("sandbox held at ").map(str::to_string))
        .expect("the child made its sandbox");
    let (held_v1, held_v2, parent_v2) =
        (v1.dir_of(&held).unwrap(), v2.dir_of(&held).unwrap(), v2.dir_of(&elsewhere).unwrap());
    assert!(held.starts_with(&elsewhere) && held_v1.is_dir() && held_v2.is_dir(), "{held}");
    child.kill().unwrap();
    child.wait().unwrap();

    let removed = sandbox::remove_stale(true);
    assert!(removed.contains(&held), "the sandbox below the other group is found: {removed:?}");
    assert!(!held_v1.exists() && !held_v2.exists(), "both of its directories are gone: {held}");
    assert!(!parent_v2.exists(), "the v2 parent made for it is gone: {}", parent_v2.display());
    assert!(sandbox::remove_stale(true).iter().all(|p| p != &held), "nothing is removed twice");
}
