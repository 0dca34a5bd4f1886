//! Sizes and durations for people. Programs get bytes in `--json`.

/// `1536` → `1.5 KiB`.
pub fn bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// `Some(b)` as bytes, `None` as `-`.
pub fn opt_bytes(b: Option<u64>) -> String {
    b.map_or_else(|| "-".to_string(), bytes)
}

/// `Some(n)` as a count, `None` as `-`.
pub fn opt_count(n: Option<u64>) -> String {
    n.map_or_else(|| "-".to_string(), |n| n.to_string())
}

/// `90061000` ms → `1d1h`, `61000` → `1m1s`.
pub fn age(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{}s", s / 60, s % 60),
        3600..=86399 => format!("{}h{}m", s / 3600, s % 3600 / 60),
        _ => format!("{}d{}h", s / 86400, s % 86400 / 3600),
    }
}

/// KSM's global state in one line, for `status` and `ksm status`.
pub fn ksm_line(k: &memorch_core::KsmState) -> String {
    let state = ["stopped", "running", "unmerging"].get(k.run as usize).unwrap_or(&"?");
    let profit = k.general_profit_bytes.map_or("-".into(), |p| {
        if p < 0 {
            format!("-{}", bytes(p.unsigned_abs()))
        } else {
            bytes(p as u64)
        }
    });
    format!(
        "{state} (pages_to_scan {}, sleep {} ms): sharing {} pages in {} shared, saves {}; unshared {}, volatile {}; full scans {}; profit {profit}",
        k.pages_to_scan, k.sleep_ms, k.pages_sharing, k.pages_shared, bytes(k.saved_bytes), k.pages_unshared, k.pages_volatile, k.full_scans
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_ages() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(512 << 20), "512.0 MiB");
        assert_eq!(opt_bytes(None), "-");
        assert_eq!(age(59_000), "59s");
        assert_eq!(age(61_000), "1m1s");
        assert_eq!(age(90_061_000), "1d1h");
    }
}
