//! The two text shapes the kernel uses for counters: `Key: 123 kB` (meminfo, status, smaps_rollup) and `key 123`
//! (vmstat, memory.stat). One parser each, shared by every reader.

/// Iterate `key value` pairs of a `key value [unit]` file, the value in the file's own unit. Lines that do not parse
/// are skipped: kernels add fields, and readers look up what they need.
pub fn pairs(text: &str) -> impl Iterator<Item = (&str, u64)> {
    text.lines().filter_map(|line| {
        let mut it = line.split_whitespace();
        let key = it.next()?.trim_end_matches(':');
        let value = it.next()?.parse().ok()?;
        Some((key, value))
    })
}

/// Look up one key of a `key value` file.
pub fn field(text: &str, key: &str) -> Option<u64> {
    pairs(text).find(|(k, _)| *k == key).map(|(_, v)| v)
}

/// Look up one key of a `Key: N kB` file, in bytes.
pub fn field_kib(text: &str, key: &str) -> Option<u64> {
    field(text, key).map(|kib| kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_shapes_and_skips_junk() {
        let text = "MemTotal:       24681316 kB\nnot a line\nNoUnit: 7\ncache 4096\n";
        assert_eq!(field_kib(text, "MemTotal"), Some(24681316 * 1024));
        assert_eq!(field(text, "NoUnit"), Some(7));
        assert_eq!(field(text, "cache"), Some(4096));
        assert_eq!(field(text, "missing"), None);
    }
}
