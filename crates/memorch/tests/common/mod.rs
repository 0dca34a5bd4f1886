//! Helpers shared by the binary's live tests.
#![allow(dead_code)]

use memorch_linux::sandbox::Sandbox;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};

pub const MIB: u64 = 1 << 20;

/// The memorch binary under test.
pub fn memorch() -> Command {
    Command::new(env!("CARGO_BIN_EXE_memorch"))
}

/// Run memorch with args and return its output.
pub fn run(args: &[&str]) -> Output {
    memorch().args(args).output().expect("memorch runs")
}

/// Start `memorch app ARGS` in the sandbox and wait for its ready line (no sleeping).
pub fn start_app<'a>(sb: &'a mut Sandbox, args: &[&str]) -> &'a mut Child {
    let mut cmd = memorch();
    cmd.arg("app").args(args).stdout(Stdio::piped()).stdin(Stdio::null());
    let child = sb.spawn(&mut cmd).expect("app starts");
    let mut line = String::new();
    let mut out = BufReader::new(child.stdout.take().expect("piped"));
    out.read_line(&mut line).expect("read ready line");
    assert!(line.starts_with("ready "), "app did not get ready: {line:?}");
    child
}

/// A field of `/proc/PID/status` in bytes.
pub fn status_kib(pid: u32, key: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    memorch_linux::parse::field_kib(&text, key).unwrap_or_else(|| panic!("{key} in /proc/{pid}/status"))
}

/// Run memorch, require success, return stdout.
pub fn ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(out.status.success(), "memorch {args:?} failed: {}{}", String::from_utf8_lossy(&out.stderr), String::from_utf8_lossy(&out.stdout));
    String::from_utf8(out.stdout).unwrap()
}

/// Run memorch, require failure with exit 1, return stderr.
pub fn fails(args: &[&str]) -> String {
    let out = run(args);
    assert_eq!(out.status.code(), Some(1), "memorch {args:?} should fail: {}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8(out.stderr).unwrap()
}

/// Run memorch with --json, parse the output.
pub fn json(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&ok(args)).expect("JSON output")
}

/// Start a `memorch app` in the sandbox via `memorch spawn` with extra spawn flags.
pub fn spawn_app<'a>(sb: &'a mut Sandbox, spawn_flags: &[&str], app_args: &[&str]) -> &'a mut Child {
    let mut cmd = memorch();
    let domain = format!("cgroup:{}", sb.path);
    cmd.args(["spawn", "--domain", &domain]).args(spawn_flags).arg("--").arg(env!("CARGO_BIN_EXE_memorch")).arg("app").args(app_args);
    cmd.stdout(Stdio::piped()).stdin(Stdio::null());
    let child = sb.spawn(&mut cmd).expect("spawn starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("piped")).read_line(&mut line).expect("read ready line");
    assert!(line.starts_with("ready "), "app did not get ready: {line:?}");
    child
}

/// Whether a process is still alive (not exited, not a zombie).
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| memorch_linux::process::parse_stat(&s))
        .is_some_and(|s| s.state != 'Z' && s.state != 'X')
}
