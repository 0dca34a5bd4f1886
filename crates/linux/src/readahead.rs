//! Swap read-ahead: `/proc/sys/vm/page-cluster`, machine-wide. A fault on a swapped-out page reads 2^N neighbouring
//! slots of the same swap device with it (mm/swap_state.c `swap_cluster_readahead`; the VMA-based read-ahead sizes its
//! window from the same value). The kernel's default is 3 (eight pages); Android writes 0 at boot for zram, where a
//! page costs as much read alone as in a cluster; the kernel refuses more than 31.
//!
//! The bench records it with each run: it sets how much a warm return reads a fault.

use crate::error::{Error, Result};
use crate::root::SysRoot;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_ahead_is_read_as_the_kernel_writes_it() {
        let dir = crate::testkit::TempDir::new("memorch-page-cluster");
        let root = SysRoot::at(dir.0.clone());
        std::fs::create_dir_all(dir.0.join("proc/sys/vm")).unwrap();
        let file = dir.0.join("proc/sys/vm/page-cluster");
        std::fs::write(&file, "3\n").unwrap();
        assert_eq!(page_cluster(&root).unwrap(), 3);
        std::fs::write(&file, "eight\n").unwrap();
        assert!(page_cluster(&root).unwrap_err().to_string().contains("eight"));
    }
}
