//! Storage swap files, added and removed on demand (SWAM's adaptive swap, slow path). memorch only ever touches files
//! it made: their names are `memorch-swap-N.swap`.

use crate::error::{Error, Result};
use crate::lock::FileLock;
use crate::root::SysRoot;
use crate::{swapon, swaps};
use serde::Serialize;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

pub const DEFAULT_DIR: &str = "/var/lib/memorch/swap";
/// Below zram's default (100), so zram fills first.
pub const DEFAULT_PRIORITY: i32 = 10;

/// Whether a path names a swap file memorch made.
pub fn is_ours(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix("memorch-swap-"))
        .and_then(|n| n.strip_suffix(".swap"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SwapFile {
    pub path: PathBuf,
    pub size_bytes: u64,
    pub used_bytes: u64,
    pub priority: Option<i32>,
    /// Enabled as swap now.
    pub active: bool,
}

/// memorch's swap files: the active ones from `/proc/swaps`, and inactive leftovers in `dir`.
pub fn list(root: &SysRoot, dir: &Path) -> Result<Vec<SwapFile>> {
    let mut out: Vec<SwapFile> = swaps::read(root)?
        .devices
        .into_iter()
        .filter(|d| is_ours(Path::new(&d.path)))
        .map(|d| SwapFile {
            path: d.path.into(),
            size_bytes: d.size_bytes,
            used_bytes: d.used_bytes,
            priority: Some(d.priority),
            active: true,
        })
        .collect();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if is_ours(&p) && !out.iter().any(|s| s.path == p) {
                let size = e.metadata().map(|m| m.len()).unwrap_or(0);
                out.push(SwapFile { path: p, size_bytes: size, used_bytes: 0, priority: None, active: false });
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// What `add` would create, changing nothing: the file's path; the same no-space error.
pub fn plan(dir: &Path, size_bytes: u64) -> Result<PathBuf> {
    check_space(dir, size_bytes)?;
    next_path(dir)
}

/// Free space a swap file must leave on its filesystem: a full disk breaks everything else on the machine, and swap is
/// the last thing worth that.
pub fn reserve_bytes(fs_bytes: u64) -> u64 {
    (fs_bytes / 20).max(256 << 20)
}

/// Refuse a size the filesystem under `dir` cannot hold with its reserve left free, before any block is written.
fn check_space(dir: &Path, size_bytes: u64) -> Result<()> {
    if size_bytes < 40 * 4096 {
        return Err(Error::Refused(format!("a swap file of {size_bytes} bytes is too small: give at least 1 MiB")));
    }
    let existing = dir.ancestors().find(|d| d.exists()).unwrap_or(Path::new("/"));
    if let Some((free, total)) = statvfs_space(existing) {
        if size_bytes.saturating_add(reserve_bytes(total)) > free {
            return Err(no_space(dir, size_bytes));
        }
    }
    Ok(())
}

/// The first unused `memorch-swap-N.swap` in `dir`.
fn next_path(dir: &Path) -> Result<PathBuf> {
    (0..10_000)
        .map(|n| dir.join(format!("memorch-swap-{n}.swap")))
        .find(|p| !p.exists())
        .ok_or_else(|| Error::Refused(format!("{}: 10000 swap files already; remove some", dir.display())))
}

/// Create, fill, format and enable a swap file of `size_bytes` in `dir`. A full disk or a filesystem that cannot hold
/// swap gives a clear error and leaves nothing behind. The directory is made absolute: `/proc/swaps` names files by
/// absolute path.
pub fn add(root: &SysRoot, dir: &Path, size_bytes: u64, priority: i32) -> Result<PathBuf> {
    add_inner(root, dir, size_bytes, priority, false)
}

fn add_inner(root: &SysRoot, dir: &Path, size_bytes: u64, priority: i32, record: bool) -> Result<PathBuf> {
    let dir = &std::path::absolute(dir).map_err(|e| Error::io(dir, e))?;
    check_space(dir, size_bytes)?;
    let _lock = FileLock::acquire(crate::lock::MACHINE_LOCK)?;
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let path = next_path(dir)?;
    let key = path.to_string_lossy().into_owned();
    if record {
        // Before the file exists: a crash from here on leaves a record to undo it by.
        crate::records::save(RECORD_KIND, &key, &path)?;
    }
    let result = (|| {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        allocate(&f, &path, dir, size_bytes)?;
        drop(f);
        swapon::write_header(&path, size_bytes, root.page_size)?;
        swapon::swapon(&path, priority)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&path);
        if record {
            let _ = crate::records::forget(RECORD_KIND, &key);
        }
        return Err(e);
    }
    Ok(path)
}

/// Give the file real blocks (swap cannot have holes): fallocate, else write zeros.
fn allocate(f: &std::fs::File, path: &Path, dir: &Path, size_bytes: u64) -> Result<()> {
    // SAFETY: fallocate on an fd we own.
    let r = unsafe { libc::fallocate(f.as_raw_fd(), 0, 0, size_bytes as libc::off_t) };
    if r == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::ENOSPC) => Err(no_space(dir, size_bytes)),
        Some(libc::EOPNOTSUPP) => {
            use std::io::Write;
            let mut w = std::io::BufWriter::new(f);
            let zeros = vec![0u8; 1 << 20];
            let mut left = size_bytes;
            while left > 0 {
                let n = left.min(zeros.len() as u64) as usize;
                w.write_all(&zeros[..n]).map_err(|e| {
                    if e.raw_os_error() == Some(libc::ENOSPC) {
                        no_space(dir, size_bytes)
                    } else {
                        Error::io(path, e)
                    }
                })?;
                left -= n as u64;
            }
            w.flush().map_err(|e| Error::io(path, e))
        }
        _ => Err(Error::io(path, e)),
    }
}

fn no_space(dir: &Path, size_bytes: u64) -> Error {
    let existing = dir.ancestors().find(|d| d.exists()).unwrap_or(Path::new("/"));
    let free = statvfs_space(existing)
        .map(|(b, t)| format!("{} MiB free, of which {} MiB must stay free", b >> 20, reserve_bytes(t) >> 20))
        .unwrap_or_else(|| "free space unknown".into());
    Error::Refused(format!(
        "no space on {} for a {} MiB swap file ({free}): give a smaller --size or another --dir",
        dir.display(),
        size_bytes >> 20
    ))
}

/// (free bytes for unprivileged use, total bytes) of the filesystem holding `dir`.
fn statvfs_space(dir: &Path) -> Option<(u64, u64)> {
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).ok()?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: valid path and out-struct.
    (unsafe { libc::statvfs(c.as_ptr(), &mut st) } == 0).then(|| (st.f_bavail * st.f_frsize, st.f_blocks * st.f_frsize))
}

/// Disable (if active) and delete one of memorch's swap files.
pub fn remove(path: &Path) -> Result<()> {
    if !is_ours(path) {
        return Err(Error::Refused(format!(
            "{} was not made by memorch (its files are named memorch-swap-N.swap); remove it with swapoff and rm",
            path.display()
        )));
    }
    let _lock = FileLock::acquire(crate::lock::MACHINE_LOCK)?;
    let active = swapon::swapoff_if_active(path)?;
    match std::fs::remove_file(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && active => Ok(()),
        Err(e) => Err(Error::io(path, e)),
        Ok(()) => Ok(()),
    }
}

/// Records of swap files a guard owns (records.rs).
const RECORD_KIND: &str = "swapfile";

/// A swap file removed on drop (tests, the daemon). Recorded with its owner before it is made: if the owner dies
/// without dropping it, [`recover_stale`] removes it.
#[derive(Debug)]
pub struct SwapFileGuard {
    pub path: PathBuf,
    removed: bool,
}

impl SwapFileGuard {
    pub fn add(root: &SysRoot, dir: &Path, size_bytes: u64, priority: i32) -> Result<SwapFileGuard> {
        Ok(SwapFileGuard { path: add_inner(root, dir, size_bytes, priority, true)?, removed: false })
    }

    /// Remove it now (drop does it too, but cannot say how it went).
    pub fn remove_now(&mut self) -> Result<()> {
        if !self.removed {
            remove(&self.path)?;
            self.removed = true;
            let _ = crate::records::forget(RECORD_KIND, &self.path.to_string_lossy());
        }
        Ok(())
    }

    /// Remove it now if its pages fit back in memory (swap_room.rs); else leave it on and recorded, for the next
    /// memorch start to take over or remove, and say why.
    pub fn remove_if_room(&mut self, root: &SysRoot) -> Result<()> {
        if let Err(why) = crate::swap_room::check(root, &self.path) {
            self.removed = true;
            return Err(Error::Refused(format!(
                "left on: {why}; the next memorch start takes it over or removes it once its pages fit"
            )));
        }
        self.remove_now()
    }
}

impl Drop for SwapFileGuard {
    fn drop(&mut self) {
        if let Err(e) = self.remove_now() {
            eprintln!("memorch: swap file {}: removal failed: {e}", self.path.display());
        }
    }
}

/// Remove the swap files of guards whose owners died (SIGKILL, a crash), each only if its pages fit back in memory
/// (swap_room.rs); the others stay on, recorded, for a daemon to take over ([`adopt_stale`]) or a later start to
/// remove. Returns what was removed, or why not (without `undo`, what it would do, changing nothing).
pub fn recover_stale(root: &SysRoot, undo: bool) -> Vec<std::result::Result<String, String>> {
    let mut out = Vec::new();
    for (rec, change) in crate::records::stale::<PathBuf>(root, RECORD_KIND) {
        let path = match change {
            Ok(path) => path,
            Err(e) => {
                out.push(Err(format!("{}: {e}", rec.display())));
                continue;
            }
        };
        if undo && !path.exists() {
            crate::records::remove(&rec);
            continue;
        }
        let left = format!("swap file {}, left by a memorch process that died", path.display());
        out.push(match (crate::swap_room::check(root, &path), undo) {
            (Err(why), _) => Err(format!("{left}, {} on: {why}", if undo { "stays" } else { "would stay" })),
            (Ok(()), false) => Ok(format!("would remove {left}")),
            (Ok(()), true) => remove(&path)
                .map(|()| crate::records::remove(&rec))
                .map(|()| format!("removed {left}"))
                .map_err(|e| format!("{left}: {e}")),
        });
    }
    out
}

/// Take over the swap files whose owners died and that recovery left on: each is recorded as this process's and removed
/// by its guard (a daemon's, once it holds nothing or at its end).
pub fn adopt_stale(root: &SysRoot) -> Vec<SwapFileGuard> {
    let Ok(_lock) = FileLock::acquire(crate::lock::MACHINE_LOCK) else { return Vec::new() };
    let mut out = Vec::new();
    for (_, change) in crate::records::stale::<PathBuf>(root, RECORD_KIND) {
        let Ok(path) = change else { continue };
        if path.exists() && crate::records::save(RECORD_KIND, &path.to_string_lossy(), &path).is_ok() {
            out.push(SwapFileGuard { path, removed: false });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_our_names() {
        assert!(is_ours(Path::new("/var/lib/memorch/swap/memorch-swap-0.swap")));
        assert!(is_ours(Path::new("memorch-swap-12.swap")));
        assert!(!is_ours(Path::new("/swapfile")));
        assert!(!is_ours(Path::new("/x/memorch-swap-.swap")));
        assert!(!is_ours(Path::new("/x/memorch-swap-1.swap.bak")));
    }
}
