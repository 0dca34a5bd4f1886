//! zram written back to storage from user space: an app's pages in zram moved to a storage
//! swap file, so that zram's pool (RAM, at the compression ratio) shrinks by what they took.
//!
//! Android and ChromeOS do this in the kernel: zram's `backing_dev` and `writeback` write
//! idle pages to a file, page by page, without reading them into a process. This kernel has
//! no zram writeback (`CONFIG_ZRAM_WRITEBACK` off, kernel-notes.md), so it is done with what
//! it has: the pages are read back into the app through `/proc/PID/mem` (readback.rs; a page
//! read from zram leaves zram at once, `swap_free`), then paged out again with
//! `process_madvise(MADV_PAGEOUT)` into a file enabled above zram in priority, which the
//! kernel fills first. A piece at a time, so that what is read back holds at most a piece of
//! RAM before it goes out again. The pages go out in address order, so the file holds them in
//! that order and swap read-ahead finds an app's neighbouring pages next to each other.
//!
//! Only the pages in zram are moved: the pagemap names each swapped page's swap area by the
//! kernel's type number, which `/proc/swaps` does not show. [`probe_zram_type`] finds zram's:
//! a page of this process paged out lands in the highest-priority swap area with room.

use crate::compact::{self, Advice, Range, Resident};
use crate::error::{Error, Result};
use crate::readback;
use crate::root::SysRoot;
use crate::target::Target;
use serde::Serialize;
use std::os::unix::fs::FileExt;
use std::time::Instant;

/// The swap type number (the pagemap's bits 0-4 of a swapped page) of the highest-priority
/// swap area with room, found by paging out one page of this process's own and reading its
/// pagemap entry: zram's, when zram is the highest-priority area (the caller checks that
/// first: `SwapState::above_zram_priority` names none above it). `None` if the page did not go
/// to swap (no swap, or none with room). The page is unmapped afterwards, freeing its slot.
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
        // A page that is not all one byte value: zram stores same-filled pages without
        // compressing them, but in its slots all the same; written, so it exists to page out.
        // SAFETY: `addr` is a writable mapping of `page` bytes.
        let bytes = unsafe { std::slice::from_raw_parts_mut(addr as *mut u8, page) };
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (i % 251) as u8;
        }
        // The daemon locks its memory (mlockall): a locked page is never paged out.
        // SAFETY: munlock and madvise of our own mapping.
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

#[derive(Debug, Clone, Serialize)]
pub struct WritebackReport {
    pub pid: u32,
    pub name: String,
    /// Runs of the app's pages in zram named by the pagemap, and their bytes.
    pub ranges: usize,
    pub asked_bytes: u64,
    /// Bytes read back from zram.
    pub read_bytes: u64,
    /// Bytes the kernel took `MADV_PAGEOUT` for (resident again after the read, so paged out
    /// to the highest-priority area: the caller's file).
    pub advised_bytes: u64,
    /// Resident bytes that left the process again (before − after RSS, over the whole move).
    pub moved_bytes: u64,
    pub before: Resident,
    pub after: Option<Resident>,
    pub elapsed_us: u64,
    pub exited: bool,
}

/// Move up to `max_pages` of `target`'s pages that are in the swap area of type `zram_type`
/// to the highest-priority swap area (the caller enables a file there first), `piece_pages`
/// at a time: read back, then paged out. Stops cleanly if the process exits mid-way.
pub fn write_back(
    root: &SysRoot,
    target: &Target,
    zram_type: u32,
    max_pages: u64,
    piece_pages: u64,
) -> Result<WritebackReport> {
    let pid = target.pid;
    let t0 = Instant::now();
    let before = Resident::read(root, pid)?;
    let ranges = compact::runs_in_swap_area(root, pid, zram_type, max_pages)?;
    let mut report = WritebackReport {
        pid,
        name: target.name.clone(),
        ranges: ranges.len(),
        asked_bytes: ranges.iter().map(|r| r.len).sum(),
        read_bytes: 0,
        advised_bytes: 0,
        moved_bytes: 0,
        before,
        after: None,
        elapsed_us: 0,
        exited: false,
    };
    let Some(mem) = readback::open_mem(root, target)? else {
        report.exited = true;
        return Ok(report);
    };
    let mut buf = vec![0u8; readback::CHUNK];
    for piece in pieces(&ranges, piece_pages.max(1) * root.page_size) {
        let (read, exited) = readback::read_ranges(&mem, target, &piece, &mut buf);
        report.read_bytes += read;
        if exited {
            report.exited = true;
            break;
        }
        let done = compact::advise(target, &piece, Advice::Pageout)?;
        report.advised_bytes += done.advised_bytes;
        if done.exited {
            report.exited = true;
            break;
        }
    }
    report.elapsed_us = t0.elapsed().as_micros() as u64;
    match Resident::read(root, pid) {
        Ok(after) => {
            report.moved_bytes =
                (before.rss_bytes() + report.read_bytes).saturating_sub(after.rss_bytes()).min(report.read_bytes);
            report.after = Some(after);
        }
        Err(e) if e.is_not_found() => report.exited = true,
        Err(e) => return Err(e),
    }
    Ok(report)
}

/// `ranges` cut into pieces of at most `piece_bytes` each, in order (a range longer than a
/// piece is split).
fn pieces(ranges: &[Range], piece_bytes: u64) -> Vec<Vec<Range>> {
    let mut out: Vec<Vec<Range>> = Vec::new();
    let mut cur: Vec<Range> = Vec::new();
    let mut cur_bytes = 0;
    for r in ranges {
        let mut r = *r;
        while r.len > 0 {
            let take = r.len.min(piece_bytes - cur_bytes);
            cur.push(Range { start: r.start, len: take });
            cur_bytes += take;
            r = Range { start: r.start + take, len: r.len - take };
            if cur_bytes == piece_bytes {
                out.push(std::mem::take(&mut cur));
                cur_bytes = 0;
            }
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_split_runs_and_keep_their_order() {
        let r = |start, len| Range { start, len };
        let p = pieces(&[r(0, 3), r(10, 1), r(20, 5)], 4);
        assert_eq!(p, vec![vec![r(0, 3), r(10, 1)], vec![r(20, 4)], vec![r(24, 1)]]);
        let total: u64 = p.iter().flatten().map(|x| x.len).sum();
        assert_eq!(total, 9);
        assert!(pieces(&[], 4).is_empty());
    }
}
