//! Which swap area is zram, by the kernel's own number for it: the pagemap names a swapped page's area by type, which
//! `/proc/swaps` does not show. A read-back asking ahead needs it to leave zram's pages to the touch (decompressing in
//! the caller costs less than asking).

use crate::compact;
use crate::error::{Error, Result};
use crate::root::SysRoot;
use std::os::unix::fs::FileExt;

/// The swap type number (the pagemap's bits 0-4 of a swapped page) of the highest-priority swap area with room, found
/// by paging out one page of this process's own and reading its pagemap entry: zram's, when zram is the
/// highest-priority area (the caller checks that first: `SwapState::above_zram_priority` names none above it). `None`
/// if the page did not go to swap (no swap, or none with room). The page is unmapped afterwards, freeing its slot.
pub fn probe_zram_type(root: &SysRoot) -> Result<Option<u32>> {
    let page = root.page_size as usize;
    // SAFETY: a fresh private anonymous mapping of one page, ours alone, unmapped below.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            page,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if addr == libc::MAP_FAILED {
        return Err(Error::io("mmap (a page to probe swap with)", std::io::Error::last_os_error()));
    }
    let probe = || -> Result<Option<u32>> {
        // A page that is not all one byte value: zram stores same-filled pages without compressing them, but in its
        // slots all the same; written, so it exists to page out. SAFETY: `addr` is a writable mapping of `page` bytes.
        let bytes = unsafe { std::slice::from_raw_parts_mut(addr as *mut u8, page) };
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (i % 251) as u8;
        }
        // The daemon locks its memory (mlockall): a locked page is never paged out. SAFETY: munlock and madvise of our
        // own mapping.
        unsafe {
            libc::munlock(addr, page);
            if libc::madvise(addr, page, libc::MADV_PAGEOUT) != 0 {
                return Err(Error::io("madvise(MADV_PAGEOUT) of a probe page", std::io::Error::last_os_error()));
            }
        }
        let path = root.path("/proc/self/pagemap");
        let f = std::fs::File::open(&path).map_err(|e| Error::io(&path, e))?;
        let mut e = [0u8; 8];
        f.read_exact_at(&mut e, addr as u64 / root.page_size * 8).map_err(|e| Error::io(&path, e))?;
        let entry = u64::from_le_bytes(e);
        Ok((entry & compact::SWAPPED != 0).then(|| compact::swap_type_of(entry)))
    };
    let found = probe();
    // SAFETY: the mapping made above, not used after this.
    unsafe { libc::munmap(addr, page) };
    found
}
