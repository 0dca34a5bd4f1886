//! Reading an app's swapped-out pages back into its own page tables, as its own touch would, ahead of its return
//! (ASAP's prepaging at app switch).
//!
//! The pages are read through `/proc/PID/mem`: each read faults the page in *in the target* (the kernel's swap-in path,
//! `do_swap_page`), which maps it with its accessed bit set, so the kernel's LRU treats it as a page the app used just
//! now. `process_madvise(MADV_WILLNEED)` only puts pages in the swap cache, unmapped and on the inactive list: the
//! first pages the next reclaim drops. Only pages the pagemap shows in swap are read, a run at a time; nothing is
//! written. Every private mapping is looked at, file-backed ones too: a written page of a private file mapping (a
//! loader's relocations, a JVM's class archive) is anonymous memory that goes to swap like the heap.
//!
//! Pages on storage swap are asked for all at once first ([`Ahead`]): `MADV_WILLNEED` queues every read before any
//! completes, where a touch waits for each (`cargo bench -p memorch --bench actuators`: 2.6 against 7.9 µs a page).
//! From zram, which decompresses in the caller, asking first costs more (4.0 against 3.5 µs), so it is skipped there.
//!
//! The file is opened before the target's pidfd is checked again, so the memory read is the memory of the process the
//! pidfd names (an open `/proc/PID/mem` holds that process's mm; a pid reused before the open would show as the pidfd's
//! process having exited).

use crate::compact::{self, Advice, CompactScope, Range, Resident};
use crate::error::{Error, Result};
use crate::root::SysRoot;
use crate::target::Target;
use serde::Serialize;
use std::os::unix::fs::FileExt;
use std::time::Instant;

/// Bytes one read asks for: a run of swapped pages is read in pieces of this size, into one buffer the daemon keeps
/// small (its memory is locked).
pub const CHUNK: usize = 64 << 10;

/// Which of the pages to read back are asked for all at once before they are touched (the module's doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ahead {
    /// None: each touch reads its page.
    Nothing,
    /// All of them, where it is not known which swap area holds which (a storage file holds some of them, and zram's
    /// type number was never probed).
    All,
    /// Those in any swap area but the one of this kernel type number (zram's): the pages on storage.
    OutsideArea(u32),
}

#[derive(Debug, Clone, Serialize)]
pub struct ReadBackReport {
    pub pid: u32,
    pub name: String,
    /// Runs of swapped pages named by the pagemap, and their bytes.
    pub ranges: usize,
    pub asked_bytes: u64,
    /// Bytes the reads returned (a range unmapped since the pagemap was read returns less).
    pub read_bytes: u64,
    /// Bytes asked for at once before the touch ([`Ahead`]): pages on storage swap.
    pub ahead_bytes: u64,
    pub before: Resident,
    pub after: Option<Resident>,
    /// Swap the process no longer uses: what came back (before − after `VmSwap`).
    pub back_bytes: u64,
    pub elapsed_us: u64,
    pub exited: bool,
}

/// Read up to `max_pages` of `target`'s swapped-out pages (of its private mappings: anonymous memory and its own copies
/// of file pages) back into its page tables, those `ahead` names asked for at once first. Stops cleanly if the process
/// exits mid-way.
pub fn read_back(root: &SysRoot, target: &Target, max_pages: u64, ahead: Ahead) -> Result<ReadBackReport> {
    let pid = target.pid;
    let t0 = Instant::now();
    let before = Resident::read(root, pid)?;
    let (_, ranges) = compact::plan(root, pid, CompactScope::All, Advice::WillNeed, Some(max_pages))?;
    let mut report = ReadBackReport {
        pid,
        name: target.name.clone(),
        ranges: ranges.len(),
        asked_bytes: ranges.iter().map(|r| r.len).sum(),
        read_bytes: 0,
        ahead_bytes: 0,
        before,
        after: None,
        back_bytes: 0,
        elapsed_us: 0,
        exited: false,
    };
    let Some(mem) = open_mem(root, target)? else {
        report.exited = true;
        return Ok(report);
    };
    let outside;
    let on_storage: &[Range] = match ahead {
        Ahead::Nothing => &[],
        Ahead::All => &ranges,
        Ahead::OutsideArea(zram_type) => match compact::runs_outside_swap_area(root, pid, &ranges, zram_type) {
            Ok(runs) => {
                outside = runs;
                &outside
            }
            Err(e) if e.is_not_found() => &[], // gone: the touch below finds it so
            Err(e) => return Err(e),
        },
    };
    if !on_storage.is_empty() {
        let asked = compact::advise(target, on_storage, Advice::WillNeed)?;
        report.ahead_bytes = asked.advised_bytes;
        if asked.exited {
            report.exited = true;
            report.elapsed_us = t0.elapsed().as_micros() as u64;
            return Ok(report);
        }
    }
    let mut buf = vec![0u8; CHUNK];
    (report.read_bytes, report.exited) = read_ranges(&mem, target, &ranges, &mut buf);
    report.elapsed_us = t0.elapsed().as_micros() as u64;
    match Resident::read(root, pid) {
        Ok(after) => {
            report.back_bytes = before.swap_bytes.saturating_sub(after.swap_bytes);
            report.after = Some(after);
        }
        Err(e) if e.is_not_found() => report.exited = true,
        Err(e) => return Err(e),
    }
    Ok(report)
}

/// `target`'s `/proc/PID/mem`, opened before its pidfd is checked again (the module's doc); `None` if the process is
/// gone.
pub fn open_mem(root: &SysRoot, target: &Target) -> Result<Option<std::fs::File>> {
    let path = root.path(format!("/proc/{}/mem", target.pid));
    let mem = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ESRCH) => return Ok(None),
        Err(e) => return Err(Error::io(&path, e)),
    };
    if target.pidfd.wait_exit(std::time::Duration::ZERO) {
        return Ok(None);
    }
    Ok(Some(mem))
}

/// Read `ranges` of `target` through its `mem` (each read faults the pages in, in the target), `buf` at a time: the
/// bytes the reads returned, and whether the process exited. A range that went away since it was named ends its
/// reading.
pub fn read_ranges(mem: &std::fs::File, target: &Target, ranges: &[Range], buf: &mut [u8]) -> (u64, bool) {
    let mut read = 0;
    for r in ranges {
        let mut at = r.start;
        while at < r.start + r.len {
            let n = ((r.start + r.len - at) as usize).min(buf.len());
            match mem.read_at(&mut buf[..n], at) {
                Ok(0) => break,
                Ok(got) => {
                    read += got as u64;
                    at += got as u64;
                }
                // EIO/EFAULT: the range went away since the pagemap was read; ESRCH and an exited pidfd: the process is
                // gone.
                Err(_) if target.pidfd.wait_exit(std::time::Duration::ZERO) => return (read, true),
                Err(_) => break,
            }
        }
    }
    (read, false)
}
