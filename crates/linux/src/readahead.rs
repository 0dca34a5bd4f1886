//! Swap read-ahead: `/proc/sys/vm/page-cluster`, machine-wide. A fault on a swapped-out
//! page reads 2^N neighbouring slots of the same swap device with it (mm/swap_state.c
//! `swap_cluster_readahead`; the VMA-based read-ahead sizes its window from the same
//! value). The kernel's default is 3 (eight pages); Android writes 0 at boot for zram, where
//! a page costs as much read alone as in a cluster; the kernel refuses more than 31.
//!
//! Why a memory manager cares: on realapps half of memorch's warm-return pages come from
//! storage swap files, where a cluster is one read instead of many (docs/results.md, "Swap
//! read-ahead off, as Android sets it for zram, and longer"). [`set_page_cluster`] sets it
//! for as long as the daemon runs and puts back what it found (setting.rs).

use crate::error::{Error, Result};
use crate::root::SysRoot;
use crate::setting::SettingGuard;

pub const PAGE_CLUSTER: &str = "/proc/sys/vm/page-cluster";

/// The largest value the kernel takes (mm/swap.c `page_cluster_max`, Linux 6.1+).
pub const MAX_PAGE_CLUSTER: u32 = 31;

/// The machine's swap read-ahead: 2^N pages a fault.
pub fn page_cluster(root: &SysRoot) -> Result<u32> {
    let text = root.read(PAGE_CLUSTER)?;
    text.trim()
        .parse()
        .map_err(|_| Error::parse(root.path(PAGE_CLUSTER), "a number of pages as a power of two", text.trim()))
}

/// `vm.page-cluster` set to `value` while the guard lives, put back on drop.
pub fn set_page_cluster(root: &SysRoot, value: u32) -> Result<SettingGuard> {
    if value > MAX_PAGE_CLUSTER {
        return Err(Error::Refused(format!("swap read-ahead of 2^{value} pages: vm.page-cluster takes 0 to {MAX_PAGE_CLUSTER} (0: one page a fault; 3, the kernel's: eight)")));
    }
    let previous = page_cluster(root)?;
    SettingGuard::replace(root, PAGE_CLUSTER, previous.to_string(), &value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_ahead_is_set_within_the_kernels_range_and_put_back() {
        let dir = crate::testkit::TempDir::new("memorch-page-cluster");
        let root = SysRoot::at(dir.0.clone());
        std::fs::create_dir_all(dir.0.join("proc/sys/vm")).unwrap();
        let file = dir.0.join("proc/sys/vm/page-cluster");
        std::fs::write(&file, "3\n").unwrap();
        assert_eq!(page_cluster(&root).unwrap(), 3);
        let err = set_page_cluster(&root, 32).unwrap_err().to_string();
        assert!(err.contains("0 to 31"), "{err}");
        assert_eq!(page_cluster(&root).unwrap(), 3, "a refused value changes nothing");
        {
            let g = set_page_cluster(&root, 5).unwrap();
            assert_eq!((page_cluster(&root).unwrap(), g.previous()), (5, "3"));
        }
        assert_eq!(page_cluster(&root).unwrap(), 3);
        std::fs::write(&file, "eight\n").unwrap();
        assert!(set_page_cluster(&root, 0).unwrap_err().to_string().contains("eight"));
    }
}
