//! Peers: the low-memory daemons people run today, run unmodified (Debian's packages, their default settings) inside
//! the device's namespace, where `/proc` shows only the device's processes and lxcfs's `/proc/meminfo` the device's
//! memory. Like memorch's daemon they are not charged to the device's RAM.

use crate::device::Device;
use crate::peers::PEERS;
use memorch_linux::{process, SysRoot};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// How long a peer may take to start watching.
const START_TIMEOUT: Duration = Duration::from_secs(30);

pub struct Peer {
    name: String,
    child: Child,
    log: std::path::PathBuf,
    /// Times it exited and was started again, as its service's Restart=always does.
    pub restarts: u32,
}

impl Peer {
    pub fn start(name: &str, device: &Device, log: &Path) -> Result<Peer, String> {
        if device.ns_init_pid().is_none() {
            return Err(format!("{name} runs only inside a device namespace"));
        }
        let child = launch(name, device, log)?;
        let mut p = Peer { name: name.into(), child, log: log.into(), restarts: 0 };
        let (_, _, started) = PEERS.iter().find(|(n, _, _)| *n == name).expect("launched");
        let up = memorch_linux::wait::wait_for(START_TIMEOUT, || {
            std::fs::read_to_string(log).is_ok_and(|t| t.contains(started))
                || p.child.try_wait().ok().flatten().is_some()
        });
        if !up || p.child.try_wait().ok().flatten().is_some() {
            let text = std::fs::read_to_string(log).unwrap_or_default();
            return Err(format!("{name} did not start watching within {START_TIMEOUT:?}; its output: {}", text.trim()));
        }
        Ok(p)
    }

    /// Start it again if it exited (its Debian unit says Restart=always). Call often: the device is unmanaged until
    /// then.
    pub fn supervise(&mut self, device: &Device) {
        if self.child.try_wait().ok().flatten().is_none() {
            return;
        }
        if let Ok(child) = launch(&self.name, device, &self.log) {
            self.child = child;
            self.restarts += 1;
        }
    }

    /// What the peer cost so far (its current instance, if restarted).
    pub fn usage(&self) -> process::Usage {
        process::usage(&SysRoot::live(), self.child.id()).unwrap_or_default()
    }
}

/// Start a peer in the device's namespace, its output appended to `log`.
fn launch(name: &str, device: &Device, log: &Path) -> Result<Child, String> {
    let (_, argv, _) = PEERS.iter().find(|(n, _, _)| *n == name).ok_or_else(|| format!("unknown peer '{name}'"))?;
    let exe = memorch_linux::which::on_path(argv[0])
        .ok_or_else(|| format!("{name} is not installed: apt-get install {name} (scripts/setup does)"))?;
    let mut cmd = Command::new(exe);
    cmd.args(&argv[1..]);
    let out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| format!("{}: {e}", log.display()))?;
    cmd.stdin(Stdio::null()).stdout(out.try_clone().map_err(|e| e.to_string())?).stderr(out);
    let child = device.spawn(cmd, false).map_err(|e| e.to_string())?;
    Ok(child)
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
