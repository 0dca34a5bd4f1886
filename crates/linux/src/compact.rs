//! Per-process compaction with `process_madvise` (Android's app compaction, the thesis's per-process comp-cache, SWAM's
//! OOM cleaner).
//!
//! `MADV_PAGEOUT` reclaims the pages now: anonymous pages go to swap (zram), clean file pages are dropped. `MADV_COLD`
//! only moves them to the inactive list, to go first when the kernel needs memory: the gentler choice for file pages
//! while memory is not yet short. The kernel skips pages another process also maps, so shared code stays.

use crate::error::{Error, Result};
use crate::maps::{self, Vma, VmaKind};
use crate::parse::field_kib;
use crate::root::SysRoot;
use crate::target::Target;
use serde::Serialize;
use std::os::unix::fs::FileExt;
use std::time::Instant;

/// Which pages to compact: the engine's own type (anon to swap; private file mappings, shared objects included,
/// dropped; shared objects no other process maps; all).
pub use memorch_core::engine::CompactScope;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Advice {
    /// Reclaim now.
    Pageout,
    /// Deactivate: reclaim these first when the kernel needs memory.
    Cold,
    /// Read swapped-out pages back into the swap cache (a touch is then a minor fault). With `max_pages`, [`plan`]
    /// names the pages in swap, not the resident ones: how `readback.rs` finds what to read back (through
    /// `/proc/PID/mem`, since pages left in the swap cache are the next reclaim's first victims; no caller sends this
    /// advice itself).
    WillNeed,
}

impl Advice {
    fn code(self) -> i32 {
        match self {
            Advice::Pageout => libc::MADV_PAGEOUT,
            Advice::Cold => libc::MADV_COLD,
            Advice::WillNeed => libc::MADV_WILLNEED,
        }
    }
}

/// An address range in the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    pub start: u64,
    pub len: u64,
}

/// Memory of a process as `/proc/PID/status` gives it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Resident {
    pub anon_bytes: u64,
    pub file_bytes: u64,
    pub shmem_bytes: u64,
    pub swap_bytes: u64,
}

impl Resident {
    pub fn rss_bytes(&self) -> u64 {
        self.anon_bytes + self.file_bytes + self.shmem_bytes
    }

    pub fn read(root: &SysRoot, pid: u32) -> Result<Resident> {
        let text = root.read(format!("/proc/{pid}/status"))?;
        Ok(Resident {
            anon_bytes: field_kib(&text, "RssAnon").unwrap_or(0),
            file_bytes: field_kib(&text, "RssFile").unwrap_or(0),
            shmem_bytes: field_kib(&text, "RssShmem").unwrap_or(0),
            swap_bytes: field_kib(&text, "VmSwap").unwrap_or(0),
        })
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct CompactReport {
    pub pid: u32,
    pub name: String,
    pub scope: CompactScope,
    pub advice: Advice,
    pub dry_run: bool,
    pub vmas: usize,
    pub ranges: usize,
    pub calls: usize,
    /// Bytes of address space the kernel was asked to advise.
    pub advised_bytes: u64,
    pub before: Resident,
    /// `None` on a dry run, or when the process exited mid-way.
    pub after: Option<Resident>,
    /// Resident bytes that left the process (before − after RSS).
    pub moved_bytes: u64,
    pub elapsed_us: u64,
    /// The process exited while we worked: we stopped cleanly.
    pub exited: bool,
}

/// Most iovecs one `process_madvise` call takes (UIO_MAXIOV).
const MAX_IOV: usize = 1024;
/// Bytes per call: the kernel stops at MAX_RW_COUNT (~2 GiB); stay well below.
const MAX_CALL_BYTES: u64 = 1 << 30;

/// Pagemap bits (Documentation/admin-guide/mm/pagemap.rst): the page is in RAM; in swap.
const PRESENT: u64 = 1 << 63;
pub const SWAPPED: u64 = 1 << 62;

/// The mappings `scope` names.
fn vmas_of(root: &SysRoot, pid: u32, scope: CompactScope) -> Result<Vec<Vma>> {
    let vmas: Vec<Vma> = match scope {
        CompactScope::SharedObjects => maps::read_smaps(root, pid)?
            .into_iter()
            .filter(|s| s.vma.kind() == VmaKind::SharedObject && s.rss_bytes > 0 && s.shared_bytes == 0)
            .map(|s| s.vma)
            .collect(),
        _ => maps::read(root, pid)?
            .into_iter()
            .filter(|v| {
                matches!(
                    (scope, v.kind()),
                    (CompactScope::Anon | CompactScope::All, VmaKind::Anon)
                        | (CompactScope::File | CompactScope::All, VmaKind::File | VmaKind::SharedObject)
                )
            })
            .collect(),
    };
    Ok(vmas)
}

/// The ranges to advise for `scope`; with `max_pages`, only pages the advice acts on (resident ones; swapped-out ones
/// to read back), at most that many.
pub fn plan(
    root: &SysRoot,
    pid: u32,
    scope: CompactScope,
    advice: Advice,
    max_pages: Option<u64>,
) -> Result<(usize, Vec<Range>)> {
    let vmas = vmas_of(root, pid, scope)?;
    let ranges = match max_pages {
        None => vmas.iter().map(|v| Range { start: v.start, len: v.len() }).collect(),
        Some(n) => {
            let want = if advice == Advice::WillNeed { SWAPPED } else { PRESENT };
            page_runs(root, pid, spans(&vmas), |e| e & want != 0, n)?
        }
    };
    Ok((vmas.len(), ranges))
}

/// The runs of `ranges` (pages in swap, as [`plan`] names them for a read-back) whose pages are in any swap area but
/// the one of kernel type number `swap_type` (zram's): the pages a read-back finds on storage.
pub fn runs_outside_swap_area(root: &SysRoot, pid: u32, ranges: &[Range], swap_type: u32) -> Result<Vec<Range>> {
    page_runs(
        root,
        pid,
        ranges.iter().map(|r| (r.start, r.start + r.len)),
        |e| e & SWAPPED != 0 && swap_type_of(e) != swap_type,
        u64::MAX,
    )
}

/// The address spans of `vmas`, as [`page_runs`] walks them.
fn spans(vmas: &[Vma]) -> impl Iterator<Item = (u64, u64)> + '_ {
    vmas.iter().map(|v| (v.start, v.end))
}

/// The swap type of a swapped page's pagemap entry (bits 0-4).
pub fn swap_type_of(entry: u64) -> u32 {
    (entry & 0x1f) as u32
}

/// Runs of pages in `spans` (start, end addresses) whose pagemap entry `want`s (resident, swapped, in one swap area),
/// at most `max_pages` pages in all. Small steps must move resident pages, or they move nothing; a read-back must name
/// swapped pages, or it walks whole mappings for nothing.
fn page_runs(
    root: &SysRoot,
    pid: u32,
    spans: impl Iterator<Item = (u64, u64)>,
    want: impl Fn(u64) -> bool,
    max_pages: u64,
) -> Result<Vec<Range>> {
    let page = root.page_size;
    let path = root.path(format!("/proc/{pid}/pagemap"));
    let f = std::fs::File::open(&path).map_err(|e| Error::io(&path, e))?;
    let mut out: Vec<Range> = Vec::new();
    let mut left = max_pages;
    let mut buf = vec![0u8; 512 * 8];
    'spans: for (start, end) in spans {
        let mut addr = start;
        while addr < end {
            let n = ((end - addr) / page).min(512) as usize;
            let got = f.read_at(&mut buf[..n * 8], addr / page * 8).map_err(|e| Error::io(&path, e))?;
            if got == 0 {
                break;
            }
            for (i, e) in buf[..got].chunks_exact(8).enumerate() {
                if left == 0 {
                    break 'spans;
                }
                if !want(u64::from_le_bytes(e.try_into().expect("8 bytes"))) {
                    continue;
                }
                let a = addr + i as u64 * page;
                match out.last_mut() {
                    Some(r) if r.start + r.len == a => r.len += page,
                    _ => out.push(Range { start: a, len: page }),
                }
                left -= 1;
            }
            addr += (got / 8) as u64 * page;
        }
    }
    Ok(out)
}

/// The iovecs of one `process_madvise` call: from `ranges[0]` (of which `skip` bytes are done), at most [`MAX_IOV`]
/// ranges and [`MAX_CALL_BYTES`].
fn next_call(ranges: &[Range], skip: u64, iov: &mut Vec<libc::iovec>) {
    iov.clear();
    let mut bytes = 0u64;
    for (k, r) in ranges.iter().enumerate() {
        if iov.len() == MAX_IOV || bytes >= MAX_CALL_BYTES {
            break;
        }
        let off = if k == 0 { skip } else { 0 };
        let len = (r.len - off).min(MAX_CALL_BYTES - bytes);
        iov.push(libc::iovec { iov_base: (r.start + off) as *mut libc::c_void, iov_len: len as usize });
        bytes += len;
    }
}

/// Compact `target`. Stops cleanly if the process exits mid-way.
pub fn compact(
    root: &SysRoot,
    target: &Target,
    scope: CompactScope,
    advice: Advice,
    max_pages: Option<u64>,
    dry_run: bool,
) -> Result<CompactReport> {
    let pid = target.pid;
    let t0 = Instant::now();
    let before = Resident::read(root, pid)?;
    let (vmas, ranges) = plan(root, pid, scope, advice, max_pages)?;
    let mut report = CompactReport {
        pid,
        name: target.name.clone(),
        scope,
        advice,
        dry_run,
        vmas,
        ranges: ranges.len(),
        calls: 0,
        advised_bytes: 0,
        before,
        after: None,
        moved_bytes: 0,
        elapsed_us: 0,
        exited: false,
    };
    if dry_run {
        report.advised_bytes = ranges.iter().map(|r| r.len).sum();
        return Ok(report);
    }
    let done = advise(target, &ranges, advice)?;
    (report.calls, report.advised_bytes, report.exited) = (done.calls, done.advised_bytes, done.exited);
    report.elapsed_us = t0.elapsed().as_micros() as u64;
    match Resident::read(root, pid) {
        Ok(after) => {
            report.moved_bytes = before.rss_bytes().saturating_sub(after.rss_bytes());
            report.after = Some(after);
        }
        Err(e) if e.is_not_found() => report.exited = true,
        Err(e) => return Err(e),
    }
    Ok(report)
}

/// What [`advise`] did: its calls, the bytes the kernel took advice for, whether the process exited meanwhile.
#[derive(Debug, Clone, Copy, Default)]
pub struct Advised {
    pub calls: usize,
    pub advised_bytes: u64,
    pub exited: bool,
}

/// `process_madvise` `ranges` of `target` with `advice`, as many ranges a call as the kernel takes. A range unmapped
/// (or that cannot be advised) since it was read is skipped; stops cleanly if the process exits.
pub fn advise(target: &Target, ranges: &[Range], advice: Advice) -> Result<Advised> {
    let pid = target.pid;
    let mut report = Advised::default();
    let mut i = 0; // first range not yet advised
    let mut skip = 0u64; // bytes of ranges[i] already advised
    let mut iov: Vec<libc::iovec> = Vec::with_capacity(MAX_IOV);
    while i < ranges.len() {
        next_call(&ranges[i..], skip, &mut iov);
        report.calls += 1;
        match target.pidfd.madvise(&iov, advice.code()) {
            Ok(n) if n > 0 => {
                report.advised_bytes += n as u64;
                // Advance past what the kernel did.
                let mut n = n as u64 + skip;
                while i < ranges.len() && n >= ranges[i].len {
                    n -= ranges[i].len;
                    i += 1;
                }
                skip = n;
            }
            Ok(_) => (i, skip) = (i + 1, 0),
            Err(e) => match e.raw_os_error() {
                Some(libc::ESRCH) => {
                    report.exited = true;
                    break;
                }
                // The range was unmapped, or cannot be advised (locked, PFN-mapped), since we read the maps; or the
                // process is exiting. Skip the range unless it is gone.
                Some(libc::ENOMEM) | Some(libc::EINVAL) => {
                    if target.pidfd.wait_exit(std::time::Duration::ZERO) {
                        report.exited = true;
                        break;
                    }
                    (i, skip) = (i + 1, 0);
                }
                _ => return Err(Error::io(format!("/proc/{pid} (process_madvise)"), e)),
            },
        }
    }
    Ok(report)
}
