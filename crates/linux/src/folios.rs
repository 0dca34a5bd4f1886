//! The size of the folios the kernel gives anonymous memory at a fault: multi-size THP
//! (Linux 6.8+), one policy file a size, `/sys/kernel/mm/transparent_hugepage/hugepages-<N>kB/enabled`.
//!
//! Why a memory manager cares: since Linux 6.12 a large folio swapped out to a synchronous
//! device (zram) is read back whole in one fault ("mm: support large folios swap-in for sync io
//! devices"), where small pages take a fault each. On these machines a heap read back from
//! lz4 zram cost 2.0 µs a page in 64 kB folios against 5.0 µs in 4 kB pages (`cargo bench -p
//! memorch --bench actuators`, docs/performance.md). The price: a fault fills the whole folio,
//! so a sparse heap holds more, and a return that touches one page of a folio reads all 16.
//!
//! The setting is machine-wide: [`FolioGuard`] records what it replaces before it changes it
//! and puts it back on drop; what a dead owner left is put back as every setting is
//! (setting.rs).

use crate::error::{Error, Result};
use crate::root::SysRoot;
use serde::Deserialize;

pub const THP_DIR: &str = "/sys/kernel/mm/transparent_hugepage";

/// The words a size's policy file takes.
pub const POLICIES: [&str; 4] = ["always", "inherit", "madvise", "never"];

fn policy_file(size_kb: u32) -> String {
    format!("{THP_DIR}/hugepages-{size_kb}kB/enabled")
}

/// The folio sizes this kernel can give anonymous memory, in kB, smallest first (empty
/// before Linux 6.8, or without transparent huge pages). A size with no `enabled` file is
/// for shmem only (8 kB on x86: anonymous memory has no order-1 folios).
pub fn sizes(root: &SysRoot) -> Vec<u32> {
    let mut out: Vec<u32> = std::fs::read_dir(root.path(THP_DIR))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_prefix("hugepages-")?.strip_suffix("kB")?.parse().ok())
        .filter(|kb| root.path(policy_file(*kb)).exists())
        .collect();
    out.sort_unstable();
    out
}

/// Why large folios are not read back whole on this boot, if they are not: the kernel reads
/// a swapped-out large folio back in small pages once zswap has been enabled since boot, even
/// if it is off again (mm/memory.c `alloc_swap_folio` falls back while
/// `!zswap_never_enabled()`, a switch that only a reboot resets). Told by zswap's `enabled`
/// parameter, or by pages it stored or loaded since boot (`zswpout`, `zswpin` in
/// `/proc/vmstat`). Measured here: after one run of `scripts/zswap-probe.py` a 16 MiB heap in
/// 64 kB folios came back a page a fault.
pub fn whole_swapin_blocked(root: &SysRoot) -> Option<String> {
    let enabled = root.read("/sys/module/zswap/parameters/enabled").is_ok_and(|t| t.trim() == "Y");
    let used: u64 = root
        .read("/proc/vmstat")
        .map(|t| crate::parse::pairs(&t).filter(|(k, _)| matches!(*k, "zswpout" | "zswpin")).map(|(_, v)| v).sum())
        .unwrap_or(0);
    (enabled || used > 0).then(|| {
        format!("zswap has been on since boot (enabled: {enabled}, {used} pages stored or loaded): the kernel reads large folios back a page at a time until the next reboot")
    })
}

/// The policy of one size: the word in brackets (`always [inherit] madvise never`).
pub fn policy(root: &SysRoot, size_kb: u32) -> Result<String> {
    let path = policy_file(size_kb);
    let text = root.read(&path).map_err(|e| {
        if e.is_not_found() {
            Error::Other {
                what: format!("anonymous folios of {size_kb} kB"),
                detail: format!(
                    "{} is missing: this kernel offers {:?} kB (multi-size THP needs Linux 6.8+ with CONFIG_TRANSPARENT_HUGEPAGE); choose one of them, or leave swap.anon_folio_kb unset",
                    root.path(&path).display(),
                    sizes(root)
                ),
            }
        } else {
            e
        }
    })?;
    parse_policy(&text)
        .map(str::to_string)
        .ok_or_else(|| Error::parse(root.path(&path), "a policy in brackets", text.trim()))
}

fn parse_policy(text: &str) -> Option<&str> {
    text.split_whitespace().find_map(|w| w.strip_prefix('[')?.strip_suffix(']'))
}

fn check_policy(policy: &str) -> Result<()> {
    if !POLICIES.contains(&policy) {
        return Err(Error::Refused(format!("anonymous folio policy '{policy}': must be one of {POLICIES:?}")));
    }
    Ok(())
}

/// One size's policy, put back on drop (setting.rs records what it replaces before it
/// changes anything, so that a dead owner's change is put back too).
#[derive(Debug)]
pub struct FolioGuard {
    pub size_kb: u32,
    /// The policy file's guard: what it replaced, and putting it back.
    pub setting: crate::setting::SettingGuard,
}

impl FolioGuard {
    /// Give anonymous memory folios of `size_kb` with `policy` (`always`: at every fault
    /// where the range fits one).
    pub fn set(root: &SysRoot, size_kb: u32, policy: &str) -> Result<FolioGuard> {
        check_policy(policy)?;
        let previous = self::policy(root, size_kb)?;
        let setting = crate::setting::SettingGuard::replace(root, &policy_file(size_kb), previous, policy)?;
        Ok(FolioGuard { size_kb, setting })
    }
}

/// Records of the folio guard as it was before setting.rs (kind `folios`, a size and its
/// policy before): a daemon of that version that died since boot may have left one, and a
/// newer start must still put that policy back. `/run` is cleared at boot, so these go away
/// with the machines that ran it.
const OLDER_RECORD_KIND: &str = "folios";

#[derive(Debug, Deserialize)]
struct OlderRecord {
    size_kb: u32,
    previous: String,
}

/// Put back the folio policies that dead owners of the version before setting.rs replaced
/// (recovery.rs; what newer owners left, setting.rs puts back the same way).
pub fn recover_stale_older(root: &SysRoot) -> Vec<std::result::Result<String, String>> {
    crate::setting::recover_records(root, OLDER_RECORD_KIND, |r: OlderRecord| crate::setting::Replaced {
        path: policy_file(r.size_kb),
        previous: r.previous,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_folios_come_back_whole_only_while_zswap_was_never_used_since_boot() {
        let dir = crate::testkit::TempDir::new("memorch-zswap-seen");
        let root = SysRoot::at(dir.0.clone());
        let write = |enabled: &str, zswpout: u64| {
            std::fs::create_dir_all(dir.0.join("sys/module/zswap/parameters")).unwrap();
            std::fs::create_dir_all(dir.0.join("proc")).unwrap();
            std::fs::write(dir.0.join("sys/module/zswap/parameters/enabled"), format!("{enabled}\n")).unwrap();
            std::fs::write(dir.0.join("proc/vmstat"), format!("pswpin 5\nzswpin 0\nzswpout {zswpout}\nzswpwb 0\n"))
                .unwrap();
        };
        write("N", 0);
        assert_eq!(whole_swapin_blocked(&root), None, "never used: whole");
        write("Y", 0);
        assert!(whole_swapin_blocked(&root).is_some_and(|w| w.contains("enabled: true")), "on now");
        write("N", 12);
        let why = whole_swapin_blocked(&root).expect("off again, but used since boot");
        assert!(why.contains("12 pages") && why.contains("reboot"), "{why}");
    }

    #[test]
    fn the_policy_is_the_word_in_brackets() {
        assert_eq!(parse_policy("always inherit madvise [never]\n"), Some("never"));
        assert_eq!(parse_policy("always [inherit] madvise never"), Some("inherit"));
        assert_eq!(parse_policy("always inherit madvise never"), None);
    }
}
