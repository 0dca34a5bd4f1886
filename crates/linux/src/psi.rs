//! Pressure stall information: `/proc/pressure/memory` or a v2 group's `memory.pressure`.

use crate::error::{Error, Result};
use crate::root::SysRoot;
use memorch_core::{Facility, Psi, PsiLine};
use std::path::{Path, PathBuf};

/// The machine-wide PSI file.
pub fn system_file(root: &SysRoot) -> PathBuf {
    root.path("/proc/pressure/memory")
}

/// Read a PSI file. A missing file is a missing facility, with the reason.
pub fn read(path: &Path) -> Facility<Psi> {
    match read_required(path) {
        Ok(psi) => Facility::Available(psi),
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => Facility::unavailable(
            format!("{} is missing: the kernel has no PSI (CONFIG_PSI, or psi=0 on its command line)", path.display()),
        ),
        // The kernel refuses reads with EOPNOTSUPP when PSI is built in but switched off.
        Err(e) => Facility::unavailable(e.to_string()),
    }
}

/// Read a PSI file that must be there (the daemon's trigger source).
pub fn read_required(path: &Path) -> Result<Psi> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let (some, full) = parse(&text).ok_or_else(|| Error::parse(path, "PSI lines", text.trim()))?;
    Ok(Psi { source: path.display().to_string(), some, full })
}

/// Parse `some avg10=.. avg60=.. avg300=.. total=..` and the `full` line.
pub fn parse(text: &str) -> Option<(PsiLine, PsiLine)> {
    let mut some = None;
    let mut full = None;
    for line in text.lines() {
        let mut it = line.split_whitespace();
        let slot = match it.next()? {
            "some" => &mut some,
            "full" => &mut full,
            _ => continue,
        };
        let mut l = PsiLine::default();
        for kv in it {
            let (k, v) = kv.split_once('=')?;
            match k {
                "avg10" => l.avg10 = v.parse().ok()?,
                "avg60" => l.avg60 = v.parse().ok()?,
                "avg300" => l.avg300 = v.parse().ok()?,
                "total" => l.total_us = v.parse().ok()?,
                _ => {}
            }
        }
        *slot = Some(l);
    }
    // Old kernels have no `full` line for the root group; treat it as no stall.
    Some((some?, full.unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_lines() {
        let text =
            "some avg10=1.50 avg60=0.20 avg300=0.00 total=12345\nfull avg10=0.10 avg60=0.00 avg300=0.00 total=99\n";
        let (some, full) = parse(text).unwrap();
        assert_eq!(some.avg10, 1.5);
        assert_eq!(some.total_us, 12345);
        assert_eq!(full.avg10, 0.1);
        assert_eq!(full.total_us, 99);
    }

    #[test]
    fn rejects_garbage() {
        assert!(parse("hello").is_none());
        assert!(parse("some avg10=x").is_none());
    }
}
