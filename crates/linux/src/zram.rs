//! zram: compressed RAM block devices used as swap. Reading their state (`mm_stat`), and
//! setting one up and tearing it down so that the device is left exactly as it was.

use crate::error::{Error, Result};
use crate::lock::FileLock;
use crate::root::SysRoot;
use crate::{swapon, swaps};
use memorch_core::{Facility, SwapState, ZramDevice, ZramState};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Names of all zram devices the kernel has (`zram0`, `zram1`, …), set up or not.
pub fn device_names(root: &SysRoot) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root.path("/sys/block"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.strip_prefix("zram").is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())))
        .collect();
    names.sort_by_key(|n| n[4..].parse::<u32>().unwrap_or(u32::MAX));
    names
}

/// The state of every set-up zram device. Not available when the module is not loaded or
/// no device has a size.
pub fn read(root: &SysRoot, swaps: &SwapState) -> Facility<ZramState> {
    let names = device_names(root);
    if names.is_empty() {
        return Facility::unavailable("no zram devices: the zram module is not loaded (modprobe zram)");
    }
    let mut devices = Vec::new();
    for name in &names {
        match read_device(root, name, swaps) {
            Ok(Some(dev)) => devices.push(dev),
            Ok(None) => {}
            Err(e) => return Facility::unavailable(e.to_string()),
        }
    }
    if devices.is_empty() {
        return Facility::unavailable(format!(
            "no zram device is set up ({} present, all with disksize 0): run 'memorch zram setup'",
            names.join(", ")
        ));
    }
    Facility::Available(ZramState { devices })
}

fn sys(name: &str, file: &str) -> PathBuf {
    PathBuf::from(format!("/sys/block/{name}/{file}"))
}

/// One device, or `None` when it is not set up (disksize 0).
pub fn read_device(root: &SysRoot, name: &str, swaps: &SwapState) -> Result<Option<ZramDevice>> {
    let disksize = root.read_u64(sys(name, "disksize"))?;
    if disksize == 0 {
        return Ok(None);
    }
    let mm_path = sys(name, "mm_stat");
    let text = root.read(&mm_path)?;
    let cols: Vec<u64> = text.split_whitespace().map(|c| c.parse().unwrap_or(0)).collect();
    if cols.len() < 8 {
        return Err(Error::parse(root.path(&mm_path), "mm_stat columns", text.trim()));
    }
    let algorithm = current_algorithm(&root.read(sys(name, "comp_algorithm")).unwrap_or_default());
    let dev_path = format!("/dev/{name}");
    Ok(Some(
        ZramDevice {
            name: name.to_string(),
            disksize_bytes: disksize,
            algorithm,
            orig_data_bytes: cols[0],
            compr_data_bytes: cols[1],
            mem_used_bytes: cols[2],
            mem_limit_bytes: cols[3],
            mem_used_max_bytes: cols[4],
            // same_pages, pages_compacted and huge_pages are page counts in mm_stat.
            same_pages: cols[5],
            pages_compacted: cols[6],
            huge_pages: cols[7],
            compression_ratio: None,
            effective_ratio: None,
            is_swap: swaps.devices.iter().any(|d| d.path == dev_path),
        }
        .with_ratios(),
    ))
}

/// The selected algorithm in `comp_algorithm` (`lzo [lz4] zstd` → `lz4`).
/// Pages read from and written to a zram device since it was set up (its block-layer
/// `stat`: sectors of 512 bytes). For a swap device these are swap-ins and swap-outs.
pub fn io_pages(root: &SysRoot, name: &str) -> Result<(u64, u64)> {
    let path = root.path(format!("/sys/block/{name}/stat"));
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    parse_io_pages(&text, root.page_size).ok_or_else(|| Error::parse(&path, "block stat fields", text.trim()))
}

fn parse_io_pages(text: &str, page_size: u64) -> Option<(u64, u64)> {
    let f: Vec<u64> = text.split_whitespace().map(|w| w.parse().ok()).collect::<Option<_>>()?;
    // Fields 3 and 7: sectors read, sectors written.
    Some((f.get(2)? * 512 / page_size, f.get(6)? * 512 / page_size))
}

pub fn current_algorithm(text: &str) -> String {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
        .unwrap_or("")
        .to_string()
}

/// The algorithms this kernel's zram offers.
pub fn available_algorithms(text: &str) -> Vec<String> {
    text.split_whitespace().map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string()).collect()
}

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

/// What `setup` did, enough to undo it exactly. Kept in the run directory so that
/// `memorch zram teardown` in another process can undo it too.
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
    /// The process whose guard undoes it when it ends (a test, the daemon, the bench);
    /// `None` for `memorch zram setup`, which lasts until `memorch zram teardown`. A record
    /// whose owner died without undoing it is stale: `recover_stale` tears it down.
    #[serde(default)]
    pub owner_pid: Option<u32>,
    /// The owner's start time, so that a reused pid is not taken for it.
    #[serde(default)]
    pub owner_start_ticks: Option<u64>,
}

impl ZramSetup {
    pub fn owner(&self) -> Option<crate::owner::Owner> {
        self.owner_pid.map(|pid| crate::owner::Owner { pid, start_ticks: self.owner_start_ticks })
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

/// What `setup` would do, changing nothing: the device it would use (`None` = it would
/// hot-add one). Checks the algorithm and size as `setup` does.
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

/// Set up a zram swap device: pick a free one (hot-add if zram0 is busy), set the algorithm
/// and size, write a swap header, enable it at `priority`. On any failure, what was done is
/// undone before the error returns.
pub fn setup(root: &SysRoot, size_bytes: u64, algorithm: Option<&str>, priority: i32) -> Result<ZramSetup> {
    setup_owned(root, size_bytes, algorithm, priority, None)
}

/// `setup`, recorded with its `owner` (if any) once the device is chosen and before it is
/// configured, so that a crash at any later point leaves a record to undo it by.
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
    let dev = dev_path(&rec.device);
    let active = swaps::read(root)?.devices.iter().any(|d| Path::new(&d.path) == dev);
    if active {
        swapon::swapoff(&root.path(&dev))?;
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
    /// Set up, and record it with this process as owner, so that if the process dies
    /// without its destructors (SIGKILL), the next start can undo it (`recover_stale`).
    pub fn setup(root: &SysRoot, size_bytes: u64, algorithm: Option<&str>, priority: i32) -> Result<ZramGuard> {
        let rec = setup_owned(root, size_bytes, algorithm, priority, Some(crate::owner::Owner::me()))?;
        Ok(ZramGuard { setup: rec, root: root.clone(), torn_down: false })
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

/// Tear down zram set-ups whose owning process is gone (it was killed before its guard
/// could). Returns the devices put back.
pub fn recover_stale(root: &SysRoot) -> Vec<std::result::Result<String, String>> {
    let mut done = Vec::new();
    let records = match records() {
        Ok(r) => r,
        Err(e) => return vec![Err(e.to_string())],
    };
    for rec in records {
        // A zombie owner is dead (its guard will never run); a reused pid is another process.
        let Some(owner) = rec.owner() else { continue };
        if owner.is_me() || owner.alive(root) {
            continue;
        }
        match teardown(root, &rec) {
            Ok(()) => {
                let _ = forget_record(&rec);
                done.push(Ok(format!(
                    "put back {}, left set up by a memorch process that died (pid {})",
                    rec.device, owner.pid
                )));
            }
            Err(e) => done.push(Err(format!(
                "{} left set up by a memorch process that died (pid {}): {e}",
                rec.device, owner.pid
            ))),
        }
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_stat_sectors_become_pages() {
        let text = "     120        0      960       5      240        0     1920       9        0       14       14        0        0        0        0        0        0\n";
        assert_eq!(parse_io_pages(text, 4096), Some((120, 240)));
        assert_eq!(parse_io_pages("1 2", 4096), None);
    }

    #[test]
    fn algorithm_in_brackets() {
        assert_eq!(current_algorithm("[lzo-rle] lzo lz4 \n"), "lzo-rle");
        assert_eq!(current_algorithm("lzo [lz4]"), "lz4");
        assert_eq!(available_algorithms("[lzo-rle] lzo lz4"), vec!["lzo-rle", "lzo", "lz4"]);
    }

    #[test]
    fn sizes_in_mib_or_percent() {
        assert_eq!(ZramSize::parse("512"), Some(ZramSize::Bytes(512 << 20)));
        assert_eq!(ZramSize::parse("25%").unwrap().bytes(1000), 250);
        assert_eq!(ZramSize::parse("0"), None);
        assert_eq!(ZramSize::parse("-5%"), None);
        assert_eq!(ZramSize::parse("lots"), None);
        assert_eq!(ZramSize::parse("17592186044417"), None, "no silent wrap to a 1 MiB device");
    }
}
