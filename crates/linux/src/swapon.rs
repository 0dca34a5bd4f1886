//! Making a device or file into swap and back: the swap header (what `mkswap` writes), `swapon(2)` with a priority,
//! `swapoff(2)`. Shared by zram and swap files.

use crate::error::{Error, Result};
use std::ffi::CString;
use std::io::{Seek, SeekFrom, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

// <linux/swap.h>: not in the libc crate.
const SWAP_FLAG_PREFER: i32 = 0x8000;
const SWAP_FLAG_PRIO_MASK: i32 = 0x7fff;
const SWAP_FLAG_PRIO_SHIFT: i32 = 0;

/// Write a version-1 swap header (`SWAPSPACE2`) at the start of a device or file of `size_bytes`, as mkswap does: last
/// usable page, no bad pages, no label.
pub fn write_header(path: &Path, size_bytes: u64, page_size: u64) -> Result<()> {
    let pages = size_bytes / page_size;
    if pages < 10 {
        return Err(Error::Refused(format!(
            "{}: {size_bytes} bytes is too small for swap (at least 10 pages)",
            path.display()
        )));
    }
    let mut page = vec![0u8; page_size as usize];
    // struct swap_header.info: bootbits[1024], version, last_page, nr_badpages, uuid, label…
    page[1024..1028].copy_from_slice(&1u32.to_ne_bytes());
    page[1028..1032].copy_from_slice(&((pages - 1).min(u32::MAX as u64) as u32).to_ne_bytes());
    let magic = b"SWAPSPACE2";
    let at = page_size as usize - magic.len();
    page[at..].copy_from_slice(magic);
    let mut f = std::fs::OpenOptions::new().write(true).open(path).map_err(|e| Error::io(path, e))?;
    f.seek(SeekFrom::Start(0)).map_err(|e| Error::io(path, e))?;
    f.write_all(&page).map_err(|e| Error::io(path, e))?;
    f.sync_all().map_err(|e| Error::io(path, e))
}

/// `path` for a system call.
pub(crate) fn cpath(path: &Path) -> Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| Error::Refused(format!("{}: NUL in path", path.display())))
}

/// Enable swap on `path` at `priority` (higher is used first; 0..=32767).
pub fn swapon(path: &Path, priority: i32) -> Result<()> {
    let c = cpath(path)?;
    let flags = SWAP_FLAG_PREFER | ((priority.clamp(0, 32767) << SWAP_FLAG_PRIO_SHIFT) & SWAP_FLAG_PRIO_MASK);
    // SAFETY: a valid C path and flags.
    if unsafe { libc::swapon(c.as_ptr(), flags) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(Error::Other {
            what: format!("swapon {}", path.display()),
            detail: match e.raw_os_error() {
                Some(libc::EINVAL) => format!("{e} (the filesystem cannot hold swap files: use --dir on ext4 or xfs)"),
                Some(libc::EBUSY) => format!("{e} (already in use as swap)"),
                Some(libc::EPERM) => format!("{e} (needs root, or the swap device limit is reached)"),
                _ => e.to_string(),
            },
        });
    }
    Ok(())
}

/// Swap `path` off if the kernel has it on; whether it had. Asked of the kernel itself (EINVAL: not an active swap
/// area), not of `/proc/swaps`, which a container's lxcfs makes up.
pub fn swapoff_if_active(path: &Path) -> Result<bool> {
    match sys_swapoff(path)? {
        Ok(()) => Ok(true),
        Err(e) if matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOENT)) => Ok(false),
        Err(e) => Err(swapoff_error(path, e)),
    }
}

/// Disable swap on `path`; its pages are read back into RAM first, which can take a while and fails if they no longer
/// fit.
pub fn swapoff(path: &Path) -> Result<()> {
    sys_swapoff(path)?.map_err(|e| swapoff_error(path, e))
}

/// `swapoff(2)`: the outer error is a path that cannot be one, the inner the kernel's answer.
fn sys_swapoff(path: &Path) -> Result<std::io::Result<()>> {
    let c = cpath(path)?;
    // SAFETY: a valid C path.
    Ok(match unsafe { libc::swapoff(c.as_ptr()) } {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    })
}

fn swapoff_error(path: &Path, e: std::io::Error) -> Error {
    let detail = match e.raw_os_error() {
        Some(libc::ENOMEM) => format!("{e} (its pages do not fit in RAM: free memory, then retry)"),
        _ => e.to_string(),
    };
    Error::Other { what: format!("swapoff {}", path.display()), detail }
}
