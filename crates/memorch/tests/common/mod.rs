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
