//! The daemon of a memorch preset for one run: started with its own config, socket and
//! state, followed on its events stream (to tell its kills from the kernel's), told what the
//! user does, and stopped at the end of the run.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub struct ManagedDaemon {
    child: Child,
    socket: PathBuf,
    victims: Arc<Mutex<BTreeSet<u32>>>,
    pub log: PathBuf,
}

impl ManagedDaemon {
    /// `memorch run --preset SPEC --domain DOMAIN`, its files in `dir`, its log in `log`.
    pub fn start(exe: &Path, preset: &str, domain: &str, dir: &Path, log: &Path) -> Result<ManagedDaemon, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let cfg = dir.join("memorch.toml");
        let swap_dir = dir.join("swap");
        std::fs::write(&cfg, format!("[loop]\ntick_ms = 250\nfull_snapshot_ms = 1000\n[manage]\nzram = false\nswap_file_dir = \"{}\"\n", swap_dir.display())).map_err(|e| e.to_string())?;
        let socket = dir.join("ctl.sock");
        let mut cmd = Command::new(exe);
        // The daemon must not outlive the run, even if the bench is killed outright.
        // SAFETY: prctl in the child between fork and exec.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
        let child = cmd
            .arg("run")
            .arg("--config")
            .arg(&cfg)
            .args(["--preset", preset, "--domain", domain])
            .arg("--socket")
            .arg(&socket)
            .arg("--state-dir")
            .arg(dir.join("state"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?)
            .spawn()
            .map_err(|e| format!("starting memorch run: {e}"))?;
        let mut d = ManagedDaemon { child, socket, victims: Arc::new(Mutex::new(BTreeSet::new())), log: log.to_path_buf() };
        let up = memorch_linux::testkit::wait_for(Duration::from_secs(20), || UnixStream::connect(&d.socket).is_ok() || d.child.try_wait().ok().flatten().is_some());
        if !up || d.child.try_wait().ok().flatten().is_some() {
            let text = std::fs::read_to_string(log).unwrap_or_default();
            return Err(format!("memorch run --preset {preset} did not come up; its log ({}) ends: {}", log.display(), text.lines().last().unwrap_or("(empty)")));
        }
        d.follow_kills()?;
        Ok(d)
    }

    /// Follow its kills, to tell them from the kernel's.
    fn follow_kills(&mut self) -> Result<(), String> {
        let mut s = UnixStream::connect(&self.socket).map_err(|e| e.to_string())?;
        writeln!(s, "{{\"cmd\":\"events\"}}").map_err(|e| e.to_string())?;
        let victims = self.victims.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(s).lines().map_while(Result::ok) {
                let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else { continue };
                if v["action"] == "kill" && v["done"] == true {
                    for x in v["victims"].as_array().into_iter().flatten() {
                        if let Some(p) = x["pid"].as_u64() {
                            victims.lock().expect("victims").insert(p as u32);
                        }
                    }
                }
            }
        });
        Ok(())
    }

    /// The pids it has killed so far.
    pub fn victims(&self) -> BTreeSet<u32> {
        self.victims.lock().expect("victims").clone()
    }

    pub fn request(&self, req: serde_json::Value) -> serde_json::Value {
        let Ok(mut s) = UnixStream::connect(&self.socket) else { return serde_json::Value::Null };
        let _ = s.set_read_timeout(Some(Duration::from_secs(30)));
        if writeln!(s, "{req}").is_err() {
            return serde_json::Value::Null;
        }
        let mut line = String::new();
        let _ = BufReader::new(s).read_line(&mut line);
        serde_json::from_str(&line).unwrap_or(serde_json::Value::Null)
    }

    /// (CPU seconds, RSS bytes) of the daemon.
    pub fn usage(&self) -> (f64, u64) {
        let st = self.request(serde_json::json!({"cmd": "status"}));
        (st["data"]["cpu_seconds"].as_f64().unwrap_or(0.0), st["data"]["rss_bytes"].as_u64().unwrap_or(0))
    }
}

impl Drop for ManagedDaemon {
    fn drop(&mut self) {
        // SAFETY: signalling the daemon this run started.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
