//! What zram shows of itself: its devices, each one's `disksize`, `mm_stat` and `io_stat`, and its compressors
//! (`/sys/block/zramN/`). Setting zram up and taking it down is zram.rs.

use crate::error::{Error, Result};
use crate::root::SysRoot;
use memorch_core::{Facility, SwapState, ZramDevice, ZramState};
use std::path::PathBuf;

/// Names of all zram devices the kernel has (`zram0`, `zram1`, …), set up or not. Names of all zram devices the kernel
/// has (`zram0`, `zram1`, …), set up or not.
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

/// The state of every set-up zram device. Not available when the module is not loaded or no device has a size.
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

pub(crate) fn sys(name: &str, file: &str) -> PathBuf {
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

/// The selected algorithm in `comp_algorithm` (`lzo [lz4] zstd` → `lz4`). Pages read from and written to a zram device
/// since it was set up (its block-layer `stat`: sectors of 512 bytes). For a swap device these are swap-ins and
/// swap-outs.
pub fn io_pages(root: &SysRoot, name: &str) -> Result<(u64, u64)> {
    let path = root.path(format!("/sys/block/{name}/stat"));
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    parse_io_pages(&text, root.page_size).ok_or_else(|| Error::parse(&path, "block stat fields", text.trim()))
}

pub(crate) fn parse_io_pages(text: &str, page_size: u64) -> Option<(u64, u64)> {
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
