//! The daemon of a memorch preset for one run: started with its own config, socket and state, followed on its events
//! stream (to tell its kills from the kernel's, and which apps it compacted), told what the user does, and stopped at
//! the end of the run.

use memorch_daemon::config::Config;
use memorch_protocol::{Client, Event, Request};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub struct ManagedDaemon {
    child: Child,
    client: Client,
    victims: Arc<Mutex<BTreeSet<u32>>>,
    /// Pids whose anonymous pages it moved out since they were last asked about.
    compacted: Arc<Mutex<BTreeSet<u32>>>,
    pub log: std::path::PathBuf,
}

/// How often the daemon of a bench run looks: the bench's fast loop, or what memorch ships.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DaemonLoop {
    /// A tick every 250 ms and a full snapshot every second: a scenario packs a user's hour into minutes, and inference
    /// must see each switch.
    Fast,
    /// The shipped defaults (`memorch config --defaults`): what the daemon costs on a device.
    Shipped,
}

impl std::str::FromStr for DaemonLoop {
    type Err = String;
    fn from_str(s: &str) -> Result<DaemonLoop, String> {
        match s {
            "fast" => Ok(DaemonLoop::Fast),
            "shipped" => Ok(DaemonLoop::Shipped),
            _ => Err(format!(
                "'{s}' is not a daemon loop: fast (the bench's, 250 ms) or shipped (the defaults a device runs)"
            )),
        }
    }
}

/// The daemon's config for a bench run: its loop, the device's zram left to the bench, swap files in the run's own
/// directory.
fn config(dir: &Path, looping: DaemonLoop) -> Config {
    let mut c = Config::default();
    if looping == DaemonLoop::Fast {
        c.loop_.tick_ms = 250;
        c.loop_.full_snapshot_ms = 1000;
    }
    c.manage.zram = false;
    c.manage.swap_file_dir = dir.join("swap");
    // The device's kswapd (kswapd.rs) is in the device's groups, as a phone's native daemons are on the phone:
    // protected, as a device maker protects those.
    c.apps.protected.push(crate::kswapd::NAME.to_string());
    c
}

impl ManagedDaemon {
    /// `memorch run --preset SPEC --domain DOMAIN` on `looping`'s loop, its files in `dir`, its log in `log`.
    pub fn start(
        exe: &Path,
        preset: &str,
        looping: DaemonLoop,
        domain: &str,
        dir: &Path,
        log: &Path,
    ) -> Result<ManagedDaemon, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let cfg = dir.join("memorch.toml");
        std::fs::write(&cfg, toml::to_string(&config(dir, looping)).map_err(|e| e.to_string())?)
            .map_err(|e| format!("{}: {e}", cfg.display()))?;
        let socket = dir.join("ctl.sock");
        let mut cmd = Command::new(exe);
        // The daemon must not outlive the run, even if the bench is killed outright. SAFETY: prctl in the child between
        // fork and exec.
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
        let mut d = ManagedDaemon {
            child,
            client: Client::new(&socket),
            victims: Arc::new(Mutex::new(BTreeSet::new())),
            compacted: Arc::new(Mutex::new(BTreeSet::new())),
            log: log.to_path_buf(),
        };
        let up = memorch_linux::wait::wait_for(Duration::from_secs(20), || {
            d.client.reachable() || d.child.try_wait().ok().flatten().is_some()
        });
        if !up || d.child.try_wait().ok().flatten().is_some() {
            let text = std::fs::read_to_string(log).unwrap_or_default();
            return Err(format!(
                "memorch run --preset {preset} did not come up; its log ({}) ends: {}",
                log.display(),
                text.lines().last().unwrap_or("(empty)")
            ));
        }
        d.follow()?;
        Ok(d)
    }

    /// Follow its kills (to tell them from the kernel's) and its compactions.
    fn follow(&mut self) -> Result<(), String> {
        let events = self.client.subscribe().map_err(|e| e.to_string())?;
        let (victims, compacted) = (self.victims.clone(), self.compacted.clone());
        std::thread::spawn(move || {
            for e in events {
                if let Event::Action(a) = e {
                    victims.lock().expect("victims").extend(a.killed());
                    compacted.lock().expect("compacted").extend(a.compacted_anon());
                }
            }
        });
        Ok(())
    }

    /// Whether it moved anonymous pages of `pid` out since this was last asked of `pid`.
    pub fn take_compacted(&self, pid: u32) -> bool {
        self.compacted.lock().expect("compacted").remove(&pid)
    }

    /// The pids it has killed so far.
    pub fn victims(&self) -> BTreeSet<u32> {
        self.victims.lock().expect("victims").clone()
    }

    /// Tell it something; a daemon that died or refused is not the run's concern here (its log says why, and the run's
    /// figures show what it did not do).
    pub fn tell(&self, req: &Request) {
        let _ = self.client.request(req);
    }

    /// Its control socket (apps that listen for trim notices connect there).
    pub fn socket(&self) -> &Path {
        self.client.socket()
    }

    /// Its status now (counters), if it answers.
    pub fn status(&self) -> Option<memorch_protocol::Status> {
        self.client.status().ok()
    }

    /// What the daemon cost so far.
    pub fn usage(&self) -> memorch_linux::process::Usage {
        memorch_linux::process::usage(&memorch_linux::SysRoot::live(), self.child.id()).unwrap_or_default()
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
