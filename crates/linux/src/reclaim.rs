//! Asking the kernel to reclaim N bytes from a domain now (MOS phase 1, Tizen's squeeze):
//! - v2: `memory.reclaim`;
//! - v1: a brief lowering of `memory.limit_in_bytes` to usage − N. The kernel reclaims inside that write and sets the
//!   new limit only once usage fits under it, so no process is OOM-killed by it; the old limit is restored at once,
//!   also on error or panic (a guard);
//! - `system`: file-page compaction of cached apps, least important first.

use crate::cgroup::MemorySource;
use crate::compact::{self, Advice, CompactScope};
use crate::domain::Domain;
use crate::error::{Error, Result};
use crate::root::SysRoot;
use crate::{snapshot, target};
use memorch_core::Class;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// v2 `memory.reclaim`.
    MemoryReclaim,
    /// v1: lower the limit briefly, then restore it.
    V1Limit,
    /// `system`: file pages of cached apps with process_madvise.
    CachedAppFiles,
}

#[derive(Debug, Clone, Serialize)]
pub struct ReclaimReport {
    pub domain: String,
    pub method: Method,
    pub requested_bytes: u64,
    /// Fall in the domain's used memory.
    pub reclaimed_bytes: u64,
    pub used_before_bytes: u64,
    pub used_after_bytes: u64,
    pub elapsed_us: u64,
    pub dry_run: bool,
    /// Why less than asked came back, if it did.
    pub note: Option<String>,
}

/// A v1 memory limit, restored on drop.
struct LimitGuard {
    file: PathBuf,
    old: String,
}

impl LimitGuard {
    fn lower(file: &Path, to: u64) -> Result<(LimitGuard, std::io::Result<()>)> {
        let old = std::fs::read_to_string(file).map_err(|e| Error::io(file, e))?.trim().to_string();
        let guard = LimitGuard { file: file.to_path_buf(), old };
        let r = std::fs::write(file, to.to_string());
        Ok((guard, r))
    }
}

impl Drop for LimitGuard {
    fn drop(&mut self) {
        if let Err(e) = std::fs::write(&self.file, &self.old) {
            eprintln!("memorch: restoring {} to {} failed: {e}", self.file.display(), self.old);
        }
    }
}

pub fn reclaim(root: &SysRoot, domain: &Domain, bytes: u64, dry_run: bool) -> Result<ReclaimReport> {
    if bytes == 0 {
        return Err(Error::Refused("reclaim --bytes 0: give how much to reclaim".into()));
    }
    let before = snapshot::cheap(root, domain)?.memory.used_bytes;
    let method = match domain.cgroup.as_ref().map(|d| d.memory_source()) {
        None => Method::CachedAppFiles,
        Some(Some(MemorySource::V2(_))) => Method::MemoryReclaim,
        Some(Some(MemorySource::V1(_))) => Method::V1Limit,
        Some(None) => {
            return Err(Error::Refused(format!("domain {} has no memory accounting to reclaim from", domain.spec)))
        }
    };
    let mut report = ReclaimReport {
        domain: domain.spec.to_string(),
        method,
        requested_bytes: bytes,
        reclaimed_bytes: 0,
        used_before_bytes: before,
        used_after_bytes: before,
        elapsed_us: 0,
        dry_run,
        note: None,
    };
    if dry_run {
        return Ok(report);
    }
    let t0 = Instant::now();
    report.note = match domain.cgroup.as_ref().and_then(|d| d.memory_source()) {
        Some(source) => reclaim_group(&source, before, bytes, root.page_size * 256)?,
        None => compact_cached_files(root, domain, bytes)?,
    };
    report.elapsed_us = t0.elapsed().as_micros() as u64;
    report.used_after_bytes = snapshot::cheap(root, domain)?.memory.used_bytes;
    report.reclaimed_bytes = before.saturating_sub(report.used_after_bytes);
    Ok(report)
}

/// Make the kernel reclaim `bytes` from the memory group `source` now, in its LRU order: v2 `memory.reclaim`; v1 its
/// limit lowered to `usage` − `bytes` (at least `floor`) and the limit it had put back at once. Returns why less than
/// asked may have come back, if the kernel said so.
pub(crate) fn reclaim_group(source: &MemorySource, usage: u64, bytes: u64, floor: u64) -> Result<Option<String>> {
    match source {
        MemorySource::V2(dir) => {
            let f = dir.join("memory.reclaim");
            match std::fs::write(&f, bytes.to_string()) {
                Ok(()) => Ok(None),
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => {
                    Ok(Some("the kernel could not reclaim it all (memory.reclaim: EAGAIN)".into()))
                }
                Err(e) => Err(Error::io(f, e)),
            }
        }
        MemorySource::V1(dir) => {
            let file = dir.join("memory.limit_in_bytes");
            let (guard, r) = LimitGuard::lower(&file, usage.saturating_sub(bytes).max(floor))?;
            drop(guard);
            match r {
                Ok(()) => Ok(None),
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => Ok(Some("the kernel could not get usage under the lowered limit (nothing more reclaimable: no swap, or pages in use)".into())),
                Err(e) => Err(Error::io(file, e)),
            }
        }
    }
}

/// Bytes of the domain's memory held in the swap cache (`swapcached` in its group's memory.stat; `None` for the
/// `system` domain or a kernel that does not count it). A page paged out to a storage swap device stays there,
/// charged, until the kernel reclaims it again; one paged out to zram is freed at once.
pub fn swap_cached_bytes(domain: &Domain) -> Option<u64> {
    let (dir, key) = match domain.cgroup.as_ref()?.memory_source()? {
        MemorySource::V1(dir) => (dir, "total_swapcached"),
        MemorySource::V2(dir) => (dir, "swapcached"),
    };
    let stat = std::fs::read_to_string(dir.join("memory.stat")).ok()?;
    crate::parse::field(&stat, key)
}

/// Free what a squeeze left in the domain's swap cache: `cached_before` is [`swap_cached_bytes`] before it, `moved`
/// what left its processes (the most that is freed). Without this a squeeze to a storage file frees nothing until the
/// next reclaim, though the engine counts it freed. `Ok(None)`: nothing worth a reclaim (under 1 MiB) was left.
pub fn free_swap_cache_left(
    root: &SysRoot,
    domain: &Domain,
    cached_before: Option<u64>,
    moved: u64,
) -> Result<Option<ReclaimReport>> {
    let (Some(before), Some(after)) = (cached_before, swap_cached_bytes(domain)) else { return Ok(None) };
    let left = after.saturating_sub(before).min(moved);
    if left < 1 << 20 {
        return Ok(None);
    }
    reclaim(root, domain, left, false).map(Some)
}

/// Page out file pages of cached and empty apps, least important first, until `bytes`.
fn compact_cached_files(root: &SysRoot, domain: &Domain, bytes: u64) -> Result<Option<String>> {
    let snap = snapshot::full(root, domain)?;
    let mut got = 0;
    let mut victims = 0;
    for p in snap.processes.unwrap_or_default().iter().filter(|p| p.class >= Class::Cached) {
        if got >= bytes {
            break;
        }
        let Ok(t) = target::check(root, p.pid, domain) else { continue };
        if let Ok(r) = compact::compact(root, &t, CompactScope::File, Advice::Pageout, None, false) {
            got += r.moved_bytes;
            victims += 1;
        }
    }
    Ok(match victims {
        0 => Some("no cached or empty app to compact (classes come from oom_score_adj ≥ 900)".into()),
        _ if got < bytes => {
            Some(format!("{victims} cached apps gave {} MiB of file pages; no more to take", got >> 20))
        }
        _ => None,
    })
}
