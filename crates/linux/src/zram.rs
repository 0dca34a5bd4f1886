//! zram: compressed RAM block devices used as swap, set up and torn down so that the device is left exactly as it was
//! (reading their state is zram_stats.rs).

use crate::error::{Error, Result};
use crate::lock::FileLock;
use crate::root::SysRoot;
use crate::zram_stats::{available_algorithms, current_algorithm, device_names, sys};
use crate::{swapon, swaps};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// How big a zram device to make.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ZramSize {
    Bytes(u64),
    /// A share of the machine's RAM (the papers use 15–25 %; Tizen 50 %).
    PercentOfRam(f64),
}

impl ZramSize {
    /// `512` (MiB) or `25%`.
    pub fn parse(s: &str) -> Option<ZramSize> {
        match s.strip_suffix('%') {
            Some(p) => p.trim().parse().ok().filter(|p: &f64| *p > 0.0 && *p <= 400.0).map(ZramSize::PercentOfRam),
            // MiB, checked: `<< 20` of a huge number would wrap to a tiny device.
            None => s
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|mb| *mb > 0)
                .and_then(|mb| mb.checked_mul(1 << 20))
                .filter(|b| *b <= 1 << 50)
                .map(ZramSize::Bytes),
        }
    }

    pub fn bytes(self, ram_bytes: u64) -> u64 {
        match self {
            ZramSize::Bytes(b) => b,
            ZramSize::PercentOfRam(p) => (ram_bytes as f64 * p / 100.0) as u64,
        }
    }
}

/// What `setup` did, enough to undo it exactly. Kept in the run directory so that `memorch zram teardown` in another
/// process can undo it too.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZramSetup {
    pub device: String,
    /// The device was hot-added for us, and is hot-removed on teardown.
    pub hot_added: bool,
    /// The algorithm selected before (a reset returns the device to the kernel's default).
    pub previous_algorithm: String,
    pub algorithm: String,
    pub disksize_bytes: u64,
    pub priority: i32,
    /// The process whose guard undoes it when it ends (a test, the daemon, the bench); `None` for `memorch zram setup`,
    /// which lasts until `memorch zram teardown`. A record whose owner died without undoing it is stale:
    /// `recover_stale` tears it down.
    #[serde(default)]
    pub owner_pid: Option<u32>,
    /// The owner's start time, so that a reused pid is not taken for it.
    #[serde(default)]
    pub owner_start_ticks: Option<u64>,
    /// The owner's PID namespace (`owner.rs`).
    #[serde(default)]
    pub owner_pid_ns: Option<u64>,
}

impl ZramSetup {
    /// Whether it has an owner (`memorch zram setup` has none) that is gone: a zombie owner is dead (its guard will
    /// never run); a reused pid is another process.
    fn owner_died(&self, root: &SysRoot) -> bool {
        self.owner().is_some_and(|o| !o.is_me() && !o.alive(root))
    }

    pub fn owner(&self) -> Option<crate::owner::Owner> {
        self.owner_pid.map(|pid| crate::owner::Owner {
            pid,
            start_ticks: self.owner_start_ticks,
            pid_ns: self.owner_pid_ns,
        })
    }
}

/// Where set-up records live: `/run` is cleared at boot, as zram devices are.
pub const RECORD_DIR: &str = "/run/memorch/zram";

fn dev_path(name: &str) -> PathBuf {
    PathBuf::from(format!("/dev/{name}"))
}

fn write_sys(root: &SysRoot, name: &str, file: &str, value: &str) -> Result<()> {
    let p = root.path(sys(name, file));
    std::fs::write(&p, value).map_err(|e| {
        let hint = match e.raw_os_error() {
            Some(libc::EBUSY) => " (device busy: it is in use; run 'memorch zram teardown' or swapoff it first)",
            Some(libc::EINVAL) if file == "comp_algorithm" => " (this kernel's zram does not offer that algorithm)",
            _ => "",
        };
        Error::Other { what: format!("zram: {}", p.display()), detail: format!("{e}{hint}") }
    })
}

/// A device with disksize 0 that nobody uses, if there is one.
fn unused_device(root: &SysRoot) -> Option<String> {
    device_names(root).into_iter().find(|name| root.read_u64(sys(name, "disksize")).unwrap_or(1) == 0)
}

/// What `setup` would do, changing nothing: the device it would use (`None` = it would hot-add one). Checks the
/// algorithm and size as `setup` does.
pub fn plan(root: &SysRoot, size_bytes: u64, algorithm: Option<&str>) -> Result<Option<String>> {
    if !root.path("/sys/class/zram-control").exists() && device_names(root).is_empty() {
        return Err(Error::Refused("zram is not available: the zram module is not loaded (modprobe zram)".into()));
    }
    if size_bytes < 16 * root.page_size {
        return Err(Error::Refused(format!("zram size {size_bytes} bytes is too small")));
    }
    if let (Some(alg), Some(dev)) = (algorithm, device_names(root).first()) {
        let offered = available_algorithms(&root.read(sys(dev, "comp_algorithm"))?);
        if !offered.iter().any(|a| a == alg) {
            return Err(Error::Refused(format!(
                "zram algorithm '{alg}' is not offered by this kernel (offered: {})",
                offered.join(", ")
            )));
        }
    }
    Ok(unused_device(root))
}

/// A device with disksize 0 that nobody uses, hot-adding one if all are busy.
fn free_device(root: &SysRoot) -> Result<(String, bool)> {
    if let Some(name) = unused_device(root) {
        return Ok((name, false));
    }
    let p = root.path("/sys/class/zram-control/hot_add");
    let id = std::fs::read_to_string(&p).map_err(|e| Error::Other {
        what: "zram: every device is busy and no new one could be added".into(),
        detail: format!("{}: {e} (is the zram module loaded? modprobe zram)", p.display()),
    })?;
    Ok((format!("zram{}", id.trim()), true))
}

/// Set up a zram swap device: pick a free one (hot-add if zram0 is busy), set the algorithm and size, write a swap
/// header, enable it at `priority`. On any failure, what was done is undone before the error returns.
pub fn setup(root: &SysRoot, size_bytes: u64, algorithm: Option<&str>, priority: i32) -> Result<ZramSetup> {
    setup_owned(root, size_bytes, algorithm, priority, None)
}

/// `setup`, recorded with its `owner` (if any) once the device is chosen and before it is configured, so that a crash
/// at any later point leaves a record to undo it by.
fn setup_owned(
    root: &SysRoot,
    size_bytes: u64,
    algorithm: Option<&str>,
    priority: i32,
    owner: Option<crate::owner::Owner>,
) -> Result<ZramSetup> {
    // The same checks as a dry run, before anything changes.
    plan(root, size_bytes, algorithm)?;
    let _lock = FileLock::acquire(crate::lock::MACHINE_LOCK)?;
    let (device, hot_added) = free_device(root)?;
    let previous_algorithm = current_algorithm(&root.read(sys(&device, "comp_algorithm")).unwrap_or_default());
    let mut rec = ZramSetup {
        device: device.clone(),
        hot_added,
        previous_algorithm: previous_algorithm.clone(),
        algorithm: previous_algorithm.clone(),
        disksize_bytes: size_bytes,
        priority,
        owner_pid: owner.map(|o| o.pid),
        owner_start_ticks: owner.and_then(|o| o.start_ticks),
        owner_pid_ns: owner.and_then(|o| o.pid_ns),
    };
    if owner.is_some() && root.is_live() {
        if let Err(e) = save_record(&rec) {
            let _ = teardown_device(root, &rec);
            return Err(e);
        }
    }
    let result = (|| {
        if let Some(alg) = algorithm {
            write_sys(root, &device, "comp_algorithm", alg)?;
            rec.algorithm = alg.to_string();
        }
        write_sys(root, &device, "disksize", &size_bytes.to_string())?;
        let dev = root.path(dev_path(&device));
        swapon::write_header(&dev, size_bytes, root.page_size)?;
        swapon::swapon(&dev, priority)
    })();
    match result {
        Ok(()) => Ok(rec),
        Err(e) => {
            if teardown_device(root, &rec).is_ok() && owner.is_some() && root.is_live() {
                let _ = forget_record(&rec);
            }
            Err(e)
        }
    }
}

/// Undo a setup: swapoff, reset, restore the algorithm, hot-remove what was hot-added.
pub fn teardown(root: &SysRoot, rec: &ZramSetup) -> Result<()> {
    let _lock = FileLock::acquire(crate::lock::MACHINE_LOCK)?;
    teardown_device(root, rec)
}

fn teardown_device(root: &SysRoot, rec: &ZramSetup) -> Result<()> {
    // Asked of the kernel, not of `/proc/swaps`: lxcfs makes that up in a container, and a device enabled in a mount
    // namespace that has ended is listed there by another path.
    if root.is_live() {
        swapon::swapoff_if_active(&dev_path(&rec.device))?;
    } else if swaps::read(root)?.devices.iter().any(|d| Path::new(&d.path) == dev_path(&rec.device)) {
        swapon::swapoff(&root.path(dev_path(&rec.device)))?;
    }
    write_sys(root, &rec.device, "reset", "1")?;
    let now = current_algorithm(&root.read(sys(&rec.device, "comp_algorithm")).unwrap_or_default());
    if !rec.previous_algorithm.is_empty() && now != rec.previous_algorithm {
        write_sys(root, &rec.device, "comp_algorithm", &rec.previous_algorithm)?;
    }
    if rec.hot_added {
        let id = rec.device.trim_start_matches("zram");
        let p = root.path("/sys/class/zram-control/hot_remove");
        std::fs::write(&p, id).map_err(|e| Error::io(&p, e))?;
    }
    Ok(())
}

/// Records of devices memorch set up and has not torn down.
pub fn records() -> Result<Vec<ZramSetup>> {
    let mut out = Vec::new();
    let dir = Path::new(RECORD_DIR);
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(out) };
    for e in entries.flatten() {
        let p = e.path();
        let text = std::fs::read_to_string(&p).map_err(|e| Error::io(&p, e))?;
        let rec: ZramSetup = serde_json::from_str(&text).map_err(|e| {
            Error::parse(&p, "a zram set-up record", format!("{e}; remove the file if the device was reset by hand"))
        })?;
        out.push(rec);
    }
    out.sort_by(|a, b| a.device.cmp(&b.device));
    Ok(out)
}

pub fn save_record(rec: &ZramSetup) -> Result<()> {
    crate::state::write_json_atomic(&Path::new(RECORD_DIR).join(format!("{}.json", rec.device)), rec)
}

pub fn forget_record(rec: &ZramSetup) -> Result<()> {
    let p = Path::new(RECORD_DIR).join(format!("{}.json", rec.device));
    match std::fs::remove_file(&p) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(&p, e)),
        _ => Ok(()),
    }
}

/// A zram set-up undone on drop (tests, the daemon).
#[derive(Debug)]
pub struct ZramGuard {
    pub setup: ZramSetup,
    root: SysRoot,
    torn_down: bool,
}

impl ZramGuard {
    /// Set up, and record it with this process as owner, so that if the process dies without its destructors (SIGKILL),
    /// the next start can undo it (`recover_stale`).
    pub fn setup(root: &SysRoot, size_bytes: u64, algorithm: Option<&str>, priority: i32) -> Result<ZramGuard> {
        let rec = setup_owned(root, size_bytes, algorithm, priority, Some(crate::owner::Owner::me()))?;
        Ok(ZramGuard { setup: rec, root: root.clone(), torn_down: false })
    }

    /// Tear it down now if its pages fit back in memory (swap_room.rs); else leave it set up and recorded, for the next
    /// memorch start to take over or put back, and say why.
    pub fn teardown_if_room(&mut self) -> Result<()> {
        if let Err(why) = crate::swap_room::check(&self.root, &dev_path(&self.setup.device)) {
            self.torn_down = true;
            return Err(Error::Refused(format!(
                "left on: {why}; the next memorch start takes it over or puts it back once its pages fit"
            )));
        }
        self.teardown_now()
    }

    /// Tear it down now (drop does it too, but cannot say how it went).
    pub fn teardown_now(&mut self) -> Result<()> {
        if !self.torn_down {
            teardown(&self.root, &self.setup)?;
            self.torn_down = true;
            if self.root.is_live() {
                let _ = forget_record(&self.setup);
            }
        }
        Ok(())
    }
}

impl Drop for ZramGuard {
    fn drop(&mut self) {
        if let Err(e) = self.teardown_now() {
            eprintln!("memorch: zram {}: teardown failed: {e}", self.setup.device);
        }
    }
}

/// Tear down zram set-ups whose owning process is gone (it was killed before its guard could), each only if its pages
/// fit back in memory (swap_room.rs); the others stay, for a daemon to take over ([`adopt_stale`]) or a later start.
/// Returns what was put back, or why not (without `undo`, what it would do).
pub fn recover_stale(root: &SysRoot, undo: bool) -> Vec<std::result::Result<String, String>> {
    let records = match records() {
        Ok(r) => r,
        Err(e) => return vec![Err(e.to_string())],
    };
    let mut done = Vec::new();
    for rec in records.into_iter().filter(|r| r.owner_died(root)) {
        let left = format!(
            "{}, left set up by a memorch process that died (pid {})",
            rec.device,
            rec.owner_pid.unwrap_or_default()
        );
        done.push(match (crate::swap_room::check(root, &dev_path(&rec.device)), undo) {
            (Err(why), _) => Err(format!("{left}, {} on: {why}", if undo { "stays" } else { "would stay" })),
            (Ok(()), false) => Ok(format!("would put back {left}")),
            (Ok(()), true) => teardown(root, &rec)
                .map(|()| {
                    let _ = forget_record(&rec);
                    format!("put back {left}")
                })
                .map_err(|e| format!("{left}: {e}")),
        });
    }
    done
}

/// Take over the set-ups whose owners died and that recovery left: each is recorded as this process's and torn down by
/// its guard.
pub fn adopt_stale(root: &SysRoot) -> Vec<ZramGuard> {
    let Ok(_lock) = FileLock::acquire(crate::lock::MACHINE_LOCK) else { return Vec::new() };
    let mut out = Vec::new();
    for mut rec in records().unwrap_or_default().into_iter().filter(|r| r.owner_died(root)) {
        let me = crate::owner::Owner::me();
        (rec.owner_pid, rec.owner_start_ticks, rec.owner_pid_ns) = (Some(me.pid), me.start_ticks, me.pid_ns);
        if save_record(&rec).is_ok() {
            out.push(ZramGuard { setup: rec, root: root.clone(), torn_down: false });
        }
    }
    out
}

#[cfg(test)]
#[path = "zram_tests.rs"]
mod tests;
