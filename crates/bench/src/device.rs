//! A virtual device (docs/design.md, "The bench"): a sandbox cgroup with the device's RAM as its limit, a v2 group at
//! the same path for PSI, and zram as its swap. A keeper (keeper.rs) lowers the limit by zram's pool as it grows (a v1
//! memcg is not charged for it) and reclaims in the background below a low watermark, as kswapd does on a phone. Its
//! processes run in a PID and mount namespace (memorch-linux namespace.rs) whose `/proc` shows only them and, with
//! lxcfs, the device's memory: peers run there unmodified.

use crate::keeper::Keeper;
use memorch_linux::lxcfs::Lxcfs;
use memorch_linux::namespace::{DeviceNamespace, View};
use memorch_linux::sandbox::Sandbox;
use memorch_linux::zram::ZramGuard;
use memorch_linux::SysRoot;
use std::path::Path;
use std::process::{Child, Command};

/// What a manager name may ask of its device beyond the manager: `MANAGER+nokswapd` runs it on a device without the
/// background reclaimer (the refault study's "kswapd off"); `MANAGER+scopes` on a device that starts each app in a
/// group of its own, as systemd's scopes and Android's per-app groups do (the manager finds apps it did not start
/// there).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceOptions {
    pub background_reclaim: bool,
    pub app_scopes: bool,
}

impl Default for DeviceOptions {
    /// The device as the scenarios describe it: background reclaim on, apps in the device's group.
    fn default() -> Self {
        DeviceOptions { background_reclaim: true, app_scopes: false }
    }
}

/// The suffix that turns the device's background reclaimer off.
pub const NO_KSWAPD: &str = "+nokswapd";
/// The suffix that gives each app a group of the device's own making.
pub const SCOPES: &str = "+scopes";

/// A manager name split into the manager itself and its device's options (suffixes in any order).
pub fn split_manager(name: &str) -> (&str, DeviceOptions) {
    let mut opts = DeviceOptions::default();
    let mut rest = name;
    loop {
        if let Some(m) = rest.strip_suffix(NO_KSWAPD) {
            opts.background_reclaim = false;
            rest = m;
        } else if let Some(m) = rest.strip_suffix(SCOPES) {
            opts.app_scopes = true;
            rest = m;
        } else {
            return (rest, opts);
        }
    }
}

pub struct Device {
    // Drop order matters: the keeper stops, then the sandbox kills its apps, then zram goes.
    pub keeper: Option<Keeper>,
    ns: Option<DeviceNamespace>,
    pub sandbox: Sandbox,
    pub zram: Option<ZramGuard>,
    pub ram_bytes: u64,
}

impl Device {
    pub fn create(name: &str, ram_bytes: u64, zram_bytes: u64, algorithm: &str) -> Result<Device, String> {
        Self::create_with(name, ram_bytes, zram_bytes, algorithm, DeviceOptions::default())
    }

    pub fn create_with(
        name: &str,
        ram_bytes: u64,
        zram_bytes: u64,
        algorithm: &str,
        opts: DeviceOptions,
    ) -> Result<Device, String> {
        let root = SysRoot::live();
        let sandbox = Sandbox::create(name, Some(ram_bytes)).map_err(|e| e.to_string())?;
        let zram = if zram_bytes > 0 {
            Some(ZramGuard::setup(&root, zram_bytes, Some(algorithm), 100).map_err(|e| e.to_string())?)
        } else {
            None
        };
        let mut d = Device { keeper: None, ns: None, sandbox, zram, ram_bytes };
        if let Some(v1) = &d.sandbox.v1_memory {
            let mm_stat =
                d.zram.as_ref().map(|z| std::path::PathBuf::from(format!("/sys/block/{}/mm_stat", z.setup.device)));
            d.keeper = Some(Keeper::start(v1, d.sandbox.v2.as_deref(), ram_bytes, mm_stat, opts.background_reclaim));
        }
        Ok(d)
    }

    /// Give the device its namespace; `exe` is memorch (its init is `memorch sandbox ns-init`). Without lxcfs,
    /// `/proc/meminfo` inside stays the machine's.
    pub fn enter_namespace(&mut self, exe: &Path, lxcfs: Option<&Lxcfs>) -> Result<(), String> {
        let pressure = self.sandbox.v2.as_ref().map(|d| d.join("memory.pressure")).filter(|p| p.exists());
        let view = View { lxcfs_proc: lxcfs.map(|l| l.proc_dir()), pressure };
        let mut init = Command::new(exe);
        init.args(["sandbox", "ns-init"]);
        if let Some(p) = &view.lxcfs_proc {
            init.arg("--lxcfs-proc").arg(p);
        }
        if let Some(p) = &view.pressure {
            init.arg("--pressure").arg(p);
        }
        // lxcfs describes the memory cgroup of the namespace's init: the device's.
        self.sandbox.prepare(&mut init);
        self.ns = Some(DeviceNamespace::create(init).map_err(|e| e.to_string())?);
        Ok(())
    }

    pub fn ns_init_pid(&self) -> Option<u32> {
        self.ns.as_ref().map(|n| n.init_pid())
    }

    /// Start a process in the device: in its namespace if it has one, and charged to its RAM if `charged` (apps are; a
    /// manager, like a phone's, is not counted against it).
    pub fn spawn(&self, mut cmd: Command, charged: bool) -> Result<Child, String> {
        if charged {
            self.sandbox.prepare(&mut cmd);
        }
        match &self.ns {
            Some(ns) => ns.spawn(cmd).map_err(|e| e.to_string()),
            None => cmd.spawn().map_err(|e| format!("start {:?}: {e}", cmd.get_program())),
        }
    }

    /// A group of the device's own making for one launch of an app, below the device's in every hierarchy (as systemd
    /// makes a scope): the domain to start it in. It stays, empty, once the app is gone, and goes with the device.
    pub fn app_scope(&self, app: &str, launch: usize) -> Result<String, String> {
        let name = format!("{app}-{launch}.scope");
        for d in self.sandbox.dirs() {
            let g = d.join(&name);
            std::fs::create_dir(&g).map_err(|e| format!("{}: {e}", g.display()))?;
        }
        Ok(format!("cgroup:{}/{name}", self.sandbox.path))
    }

    pub fn domain(&self) -> String {
        format!("cgroup:{}", self.sandbox.path)
    }

    /// Pages read from and written to its zram so far (its swap-ins and swap-outs).
    pub fn zram_io(&self) -> Option<(u64, u64)> {
        self.zram.as_ref().and_then(|z| memorch_linux::zram_stats::io_pages(&SysRoot::live(), &z.setup.device).ok())
    }

    /// CPU time used by everything in the device so far (its apps, and a peer that runs inside it), in µs: `usage_usec`
    /// of the v2 group's `cpu.stat`, which v2 keeps for every group whether or not the cpu controller is on.
    pub fn cpu_us(&self) -> Option<u64> {
        let text = std::fs::read_to_string(self.sandbox.v2.as_ref()?.join("cpu.stat")).ok()?;
        text.lines().find_map(|l| l.strip_prefix("usage_usec ")).and_then(|v| v.trim().parse().ok())
    }
}

/// The swap a manager's device gets: the preset's own set-up (none for `lmk-classic`, …), or for a peer the scenario's
/// (the device as shipped).
pub fn swap_of(scenario: &crate::scenario::Scenario, manager: &str) -> Result<(Option<f64>, String), String> {
    if crate::peers::is_peer(manager) {
        return Ok((Some(scenario.zram_pct), scenario.zram_algorithm.clone()));
    }
    let preset = memorch_daemon::preset_file::load(manager)?;
    Ok((preset.swap.zram_pct, preset.swap.zram_algorithm))
}

impl Drop for Device {
    fn drop(&mut self) {
        self.keeper.take();
        // Its processes go with the namespace, before the sandbox and zram.
        self.ns.take();
    }
}

/// Where `memorch sandbox` keeps a record of each device it made.
pub const RECORD_DIR: &str = "/run/memorch/sandboxes";

/// A device made by `memorch sandbox create`, kept by a keeper process until destroyed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DeviceRecord {
    pub name: String,
    /// The cgroup path: `--domain cgroup:PATH`.
    pub path: String,
    pub ram_bytes: u64,
    pub zram_device: Option<String>,
    pub keeper_pid: u32,
    /// Init of the device's PID namespace, which `sandbox exec` enters.
    #[serde(default)]
    pub ns_init_pid: Option<u32>,
    /// Whether `/proc/meminfo` inside is the device's (lxcfs ran).
    #[serde(default)]
    pub meminfo_virtual: bool,
}

impl DeviceRecord {
    pub fn file(name: &str) -> std::path::PathBuf {
        std::path::Path::new(RECORD_DIR).join(format!("{name}.json"))
    }

    pub fn load(name: &str) -> Result<DeviceRecord, String> {
        let p = Self::file(name);
        let text =
            std::fs::read_to_string(&p).map_err(|_| format!("no sandbox '{name}' (see 'memorch sandbox list')"))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))
    }

    pub fn all() -> Vec<DeviceRecord> {
        let mut v: Vec<DeviceRecord> = std::fs::read_dir(RECORD_DIR)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| std::fs::read_to_string(e.path()).ok())
            .filter_map(|t| serde_json::from_str(&t).ok())
            .collect();
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manager_name_keeps_its_device_options_apart_in_any_order() {
        assert_eq!(split_manager("memorch"), ("memorch", DeviceOptions::default()));
        assert_eq!(
            split_manager("kernel+nokswapd"),
            ("kernel", DeviceOptions { background_reclaim: false, app_scopes: false })
        );
        let both = DeviceOptions { background_reclaim: false, app_scopes: true };
        assert_eq!(split_manager("memorch:app_groups=false+scopes+nokswapd"), ("memorch:app_groups=false", both));
        assert_eq!(split_manager("memorch:app_groups=false+nokswapd+scopes"), ("memorch:app_groups=false", both));
    }
}
