//! Helpers shared by the binary's live tests.
#![allow(dead_code)]

pub mod bus;
#[allow(unused_imports)]
pub use bus::PrivateBus;

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
    assert!(
        out.status.success(),
        "memorch {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
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
    let path = sb.path.clone();
    spawn_app_in(sb, &path, spawn_flags, app_args)
}

/// [`spawn_app`] into the cgroup `path`, the sandbox's or one below it (the sandbox still
/// kills it when it goes).
pub fn spawn_app_in<'a>(sb: &'a mut Sandbox, path: &str, spawn_flags: &[&str], app_args: &[&str]) -> &'a mut Child {
    let mut cmd = memorch();
    let domain = format!("cgroup:{path}");
    cmd.args(["spawn", "--domain", &domain])
        .args(spawn_flags)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_memorch"))
        .arg("app")
        .args(app_args);
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

/// A `memorch run` for a test: started with args, stopped (SIGTERM, then SIGKILL) on drop.
pub struct DaemonGuard {
    pub child: Child,
    pub socket: std::path::PathBuf,
    pub state_dir: std::path::PathBuf,
    pub stderr_path: std::path::PathBuf,
}

impl DaemonGuard {
    pub fn start(args: &[&str]) -> DaemonGuard {
        DaemonGuard::start_with_env(args, &[])
    }

    /// With these variables in its environment besides the test's.
    pub fn start_with_env(args: &[&str], env: &[(&str, &str)]) -> DaemonGuard {
        DaemonGuard::start_binary(std::path::Path::new(env!("CARGO_BIN_EXE_memorch")), args, env)
    }

    /// `EXE run ARGS`, with these variables in its environment besides the test's.
    pub fn start_binary(exe: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> DaemonGuard {
        let name = memorch_linux::testkit::unique_name("memorch-daemon");
        let dir = std::env::temp_dir().join(&name);
        std::fs::create_dir_all(&dir).unwrap();
        let socket = dir.join("ctl.sock");
        let state_dir = dir.join("state");
        let stderr_path = dir.join("daemon.log");
        let child = Command::new(exe)
            .arg("run")
            .args(["--socket", socket.to_str().unwrap(), "--state-dir", state_dir.to_str().unwrap()])
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr_path).unwrap())
            .spawn()
            .expect("memorch run starts");
        let mut d = DaemonGuard { child, socket, state_dir, stderr_path };
        let up = memorch_linux::testkit::wait_for(std::time::Duration::from_secs(20), || {
            std::os::unix::net::UnixStream::connect(&d.socket).is_ok() || d.child.try_wait().unwrap().is_some()
        });
        assert!(up && d.child.try_wait().unwrap().is_none(), "daemon did not come up: {}", d.log());
        d
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }

    pub fn client(&self) -> memorch_protocol::Client {
        memorch_protocol::Client::new(&self.socket)
    }

    /// One request, its answer as JSON (`ok`, `data`, `error`).
    pub fn request(&self, req: &memorch_protocol::Request) -> serde_json::Value {
        let a = self.client().request(req).unwrap_or_else(|e| panic!("{req:?}: {e}"));
        serde_json::to_value(a).unwrap()
    }

    pub fn status(&self) -> serde_json::Value {
        self.request(&memorch_protocol::Request::Status {})
    }

    /// Follow the events stream: each event arrives on the returned channel, as JSON.
    pub fn events(&self) -> std::sync::mpsc::Receiver<serde_json::Value> {
        let events = self.client().subscribe().expect("subscribe");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for e in events {
                if tx.send(serde_json::to_value(e).unwrap()).is_err() {
                    break;
                }
            }
        });
        rx
    }

    /// SIGTERM, and how long it took to exit.
    pub fn stop(&mut self) -> std::time::Duration {
        let t0 = std::time::Instant::now();
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
        t0.elapsed()
    }
}

impl Drop for DaemonGuard {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
            let done = memorch_linux::testkit::wait_for(std::time::Duration::from_secs(10), || {
                self.child.try_wait().ok().flatten().is_some()
            });
            if !done {
                let _ = self.child.kill();
                let _ = self.child.wait();
            }
        }
        if let Some(d) = self.socket.parent() {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// Actions from an events stream, gathered until `until` holds or the timeout passes.
pub fn collect_events(
    rx: &std::sync::mpsc::Receiver<serde_json::Value>,
    timeout: std::time::Duration,
    mut until: impl FnMut(&[serde_json::Value]) -> bool,
) -> Vec<serde_json::Value> {
    let deadline = std::time::Instant::now() + timeout;
    let mut out = Vec::new();
    while std::time::Instant::now() < deadline && !until(&out) {
        if let Ok(v) = rx.recv_timeout(std::time::Duration::from_millis(100)) {
            out.push(v);
        }
    }
    out
}
