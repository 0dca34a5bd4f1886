//! `/proc/swaps`: the machine's active swap devices.

use crate::error::{Error, Result};
use crate::root::SysRoot;
use memorch_core::{SwapDevice, SwapState};

pub fn read(root: &SysRoot) -> Result<SwapState> {
    let text = root.read("/proc/swaps")?;
    parse(&text).map_err(|line| Error::parse(root.path("/proc/swaps"), "a swap line", line))
}

/// Parse `/proc/swaps` (sizes in KiB). The path is the first field; a path with spaces is written with `\040`, which we
/// turn back.
pub fn parse(text: &str) -> Result<SwapState, String> {
    let mut devices = Vec::new();
    for line in text.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 5 {
            return Err(line.to_string());
        }
        let num = |s: &str| s.parse::<u64>().map_err(|_| line.to_string());
        devices.push(SwapDevice {
            path: f[0].replace("\\040", " "),
            kind: f[1].to_string(),
            size_bytes: num(f[2])? * 1024,
            used_bytes: num(f[3])? * 1024,
            priority: f[4].parse().map_err(|_| line.to_string())?,
        });
    }
    let total_bytes = devices.iter().map(|d| d.size_bytes).sum();
    let used_bytes = devices.iter().map(|d| d.used_bytes).sum();
    Ok(SwapState { devices, total_bytes, used_bytes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_devices_and_sums() {
        let text = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/zram0                              partition\t1048572\t\t1024\t\t100\n/var/swap\\040file file 2048 0 -2\n";
        let s = parse(text).unwrap();
        assert_eq!(s.devices.len(), 2);
        assert_eq!(s.devices[0].path, "/dev/zram0");
        assert_eq!(s.devices[0].priority, 100);
        assert_eq!(s.devices[1].path, "/var/swap file");
        assert_eq!(s.devices[1].priority, -2);
        assert_eq!(s.total_bytes, (1048572 + 2048) * 1024);
        assert_eq!(s.used_bytes, 1024 * 1024);
    }

    #[test]
    fn header_only_is_no_swap() {
        let s = parse("Filename\tType\tSize\tUsed\tPriority\n").unwrap();
        assert!(s.devices.is_empty());
        assert_eq!(s.total_bytes, 0);
    }

    #[test]
    fn short_line_is_an_error() {
        assert!(parse("h\n/dev/x partition 1\n").is_err());
    }
}
